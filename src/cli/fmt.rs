//! `strata fmt` as clap read it: the engine formats, this says what it
//! did, with Terraform's exit codes (0 all formatted or rewritten, 3 with
//! `--check` when a file would change, 1 on error).

use super::printer;
use crate::diag::Sources;
use crate::engine::FmtOptions;
use std::path::Path;
use std::process::ExitCode;

pub fn command(a: super::args::FmtArgs) -> ExitCode {
    let opts = FmtOptions {
        check: a.check,
        recursive: a.recursive,
        list: !a.no_list,
        write: !a.no_write,
        diff: a.diff,
    };
    if a.path == Path::new("-") {
        return stdin();
    }
    let mut sources = Sources::default();
    let found = match crate::engine::fmt(&a.path, &opts, &mut sources) {
        Ok(found) => found,
        Err(e) => return failed(&e),
    };
    for f in &found.changed {
        if opts.list {
            printer::line(&f.path.display().to_string());
        }
        if let Some(diff) = &f.diff {
            printer::out(diff);
        }
    }
    if let Some(e) = &found.stopped {
        return failed(e);
    }
    if !found.invalid.is_empty() {
        printer::diagnostics(&found.invalid, &sources);
        return ExitCode::from(1);
    }
    match opts.check && !found.changed.is_empty() {
        true => ExitCode::from(3),
        false => ExitCode::SUCCESS,
    }
}

fn failed(why: &str) -> ExitCode {
    printer::say(&format!("Error: {why}"));
    ExitCode::from(1)
}

/// `fmt -`: the text on stdin, formatted, to stdout.
fn stdin() -> ExitCode {
    let text = match std::io::read_to_string(std::io::stdin()) {
        Ok(t) => t,
        Err(e) => return failed(&format!("cannot read stdin: {e}")),
    };
    let mut sources = Sources::default();
    match crate::engine::fmt_text(&text, &mut sources) {
        Ok(formatted) => {
            printer::out(&formatted);
            ExitCode::SUCCESS
        }
        Err(d) => {
            printer::diagnostics(&d, &sources);
            ExitCode::from(1)
        }
    }
}
