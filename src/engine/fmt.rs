//! `strata fmt`: the files of a folder (or stdin) put in Terraform's
//! canonical layout by the language's formatter, listed, shown as diffs or
//! rewritten, as Terraform's `fmt` does.

use crate::diag::{Diags, Sources};
use crate::fmt::{format_source, unified_diff};
use std::path::{Path, PathBuf};

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

/// What `fmt` found, file by file.
#[derive(Default)]
pub struct Formatted {
    /// The files not in the canonical layout, in the order read (with
    /// the change as a unified diff when `-diff` asked for it).
    pub changed: Vec<Reformatted>,
    /// What did not parse (left as it is: the layout rules assume valid
    /// HCL).
    pub invalid: Diags,
    /// What stopped it after `changed` (a file that could not be read or
    /// written).
    pub stopped: Option<String>,
}

pub struct Reformatted {
    pub path: PathBuf,
    pub diff: Option<String>,
}

/// `strata fmt [--check] [--recursive] PATH`: each file read, held to the
/// canonical layout and, unless `check`, rewritten. Fails only when
/// `path` cannot be listed.
pub fn fmt(path: &Path, opts: &FmtOptions, sources: &mut Sources) -> Result<Formatted, String> {
    let mut found = Formatted::default();
    for f in files(path, opts.recursive)? {
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) => {
                found.stopped = Some(format!("{}: {e}", f.display()));
                return Ok(found);
            }
        };
        let id = sources.add(f.display().to_string(), text.clone());
        if let Err(d) = crate::syntax::parse_body(id, &text) {
            found.invalid.push(d);
            continue;
        }
        let formatted = format_source(&text);
        if formatted == text {
            continue;
        }
        let diff = opts.diff.then(|| unified_diff(&f, &text, &formatted));
        if opts.write && !opts.check {
            if let Err(e) = write_atomically(&f, &formatted) {
                found.stopped = Some(format!("{}: {e}", f.display()));
            }
        }
        found.changed.push(Reformatted { path: f, diff });
        if found.stopped.is_some() {
            break;
        }
    }
    Ok(found)
}

/// `fmt -`: `text` in the canonical layout, or why it cannot be.
pub fn fmt_text(text: &str, sources: &mut Sources) -> Result<String, Diags> {
    let id = sources.add("<stdin>".to_string(), text.to_string());
    crate::syntax::parse_body(id, text)?;
    Ok(format_source(text))
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
