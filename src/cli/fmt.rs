//! `strata fmt`: the files of a folder (or stdin) put in Terraform's
//! canonical layout by the language's formatter, listed, shown as diffs or
//! rewritten, as Terraform's `fmt` does.

use super::printer;
use crate::diag::{Diags, Sources};
use crate::fmt::{format_source, unified_diff};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn files(path: &Path, recursive: bool) -> Result<Vec<PathBuf>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with('.'))
        })
        .collect();
    entries.sort();
    let mut out = Vec::new();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if p.is_dir() && recursive {
            out.extend(files(&p, true)?);
        } else if p.is_file()
            && (name.ends_with(".tf") || name.ends_with(".hcl") || name.ends_with(".tfvars"))
        {
            // `./main.tf` is named `main.tf`, as Terraform names it.
            out.push(p.strip_prefix(".").map(Path::to_path_buf).unwrap_or(p));
        }
    }
    Ok(out)
}

/// What `fmt` was asked, in Terraform's terms.
pub struct FmtOptions {
    /// Exit 3 when a file is not formatted, writing nothing.
    pub check: bool,
    pub recursive: bool,
    /// Name each file that is not formatted (`-list`, on by default).
    pub list: bool,
    /// Rewrite each such file (`-write`, on by default; off with -check).
    pub write: bool,
    /// Show each change as a unified diff (`-diff`).
    pub diff: bool,
}

/// `strata fmt` as clap read it.
pub fn command(a: super::args::FmtArgs) -> ExitCode {
    let opts = FmtOptions {
        check: a.check,
        recursive: a.recursive,
        list: !a.no_list,
        write: !a.no_write,
        diff: a.diff,
    };
    run(&a.path, &opts)
}

/// `strata fmt [--check] [--recursive] PATH`: exit 0 when all is
/// formatted (or was rewritten), 3 with `--check` when a file would
/// change, 1 on error.
pub fn run(path: &Path, opts: &FmtOptions) -> ExitCode {
    if path == Path::new("-") {
        return stdin();
    }
    let list = match files(path, opts.recursive) {
        Ok(l) => l,
        Err(e) => {
            printer::say(&format!("Error: {e}"));
            return ExitCode::from(1);
        }
    };
    let mut sources = Sources::default();
    let mut diags = Diags::default();
    let mut changed = false;
    for f in list {
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) => {
                printer::say(&format!("Error: {}: {e}", f.display()));
                return ExitCode::from(1);
            }
        };
        // Never rewrite what does not parse: the layout rules assume valid HCL.
        let id = sources.add(f.display().to_string(), text.clone());
        if let Err(d) = crate::syntax::parse_body(id, &text) {
            diags.push(d);
            continue;
        }
        let formatted = format_source(&text);
        if formatted == text {
            continue;
        }
        changed = true;
        if opts.list {
            printer::line(&f.display().to_string());
        }
        if opts.diff {
            printer::out(&unified_diff(&f, &text, &formatted));
        }
        if opts.write && !opts.check {
            if let Err(e) = write_atomically(&f, &formatted) {
                printer::say(&format!("Error: {}: {e}", f.display()));
                return ExitCode::from(1);
            }
        }
    }
    if !diags.is_empty() {
        printer::diagnostics(&diags, &sources);
        return ExitCode::from(1);
    }
    if opts.check && changed {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

/// `fmt -`: the text on stdin, formatted, to stdout.
fn stdin() -> ExitCode {
    let text = match std::io::read_to_string(std::io::stdin()) {
        Ok(t) => t,
        Err(e) => {
            printer::say(&format!("Error: cannot read stdin: {e}"));
            return ExitCode::from(1);
        }
    };
    let mut sources = Sources::default();
    let id = sources.add("<stdin>".to_string(), text.clone());
    if let Err(d) = crate::syntax::parse_body(id, &text) {
        printer::diagnostics(&Diags::from(d), &sources);
        return ExitCode::from(1);
    }
    printer::out(&format_source(&text));
    ExitCode::SUCCESS
}

/// A formatted file replaces the original only once fully written.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension(format!(
        "{}.strata-fmt.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    std::fs::write(&tmp, text)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path)
}
