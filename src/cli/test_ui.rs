//! `strata test -json`: a test's steps as Terraform's machine-readable UI
//! tells them (Terraform 1.11's `test -json`, read from its output here):
//! `test_abstract` with every file's runs, `test_file` and `test_run`
//! messages as each starts and ends, each run's diagnostics tagged with
//! `@testfile` and `@testrun`, and `test_summary` at the end. Part of
//! the printer: it writes to the terminal.
#![allow(clippy::print_stdout)]

use crate::diag::{Diags, Sources};
use crate::engine::{TestStep, TestTally};
use serde_json::json;

fn say(level: &str, message: &str, kind: &str, fields: serde_json::Value) {
    println!("{}", crate::ui::line(level, message, kind, fields));
}

/// One step's messages.
pub fn step(step: &TestStep<'_>, sources: &Sources) {
    match step {
        TestStep::Found(files) => {
            let runs: usize = files.iter().map(|(_, r)| r.len()).sum();
            let plural = |n: usize, one: &str, many: &str| match n {
                1 => format!("1 {one}"),
                n => format!("{n} {many}"),
            };
            let abstract_: serde_json::Map<String, serde_json::Value> =
                files.iter().map(|(f, r)| (f.clone(), json!(r))).collect();
            let message = format!(
                "Found {} and {}",
                plural(files.len(), "file", "files"),
                plural(runs, "run block", "run blocks")
            );
            say(
                "info",
                &message,
                "test_abstract",
                json!({"test_abstract": abstract_}),
            );
        }
        TestStep::FileBegins(file) => file_message(
            file,
            "in progress",
            json!({"path": file, "progress": "starting"}),
        ),
        TestStep::RunBegins { file, name } => {
            let fields = json!({"@testfile": file, "@testrun": name, "test_run": {"path": file, "run": name, "progress": "starting", "elapsed": 0}});
            say(
                "info",
                &format!("  {name:?}... in progress"),
                "test_run",
                fields,
            );
        }
        TestStep::Run {
            file,
            name,
            status,
            diags,
            ..
        } => {
            let fields = json!({"@testfile": file, "@testrun": name, "test_run": {"path": file, "run": name, "progress": "complete", "status": status.json()}});
            say(
                "info",
                &format!("  {name:?}... {}", status.word()),
                "test_run",
                fields,
            );
            tagged(diags, sources, file, Some(name));
        }
        TestStep::TearingDown(file) => file_message(
            file,
            "tearing down",
            json!({"path": file, "progress": "teardown"}),
        ),
        TestStep::RunTearingDown { file, name } => {
            let fields = json!({"@testfile": file, "@testrun": name, "test_run": {"path": file, "run": name, "progress": "teardown", "elapsed": 0}});
            say(
                "info",
                &format!("  {name:?}... tearing down"),
                "test_run",
                fields,
            );
        }
        TestStep::FileDiags(file, diags) => tagged(diags, sources, file, None),
        TestStep::FileDone(file, status) => file_message(
            file,
            status.word(),
            json!({"path": file, "progress": "complete", "status": status.json()}),
        ),
    }
}

fn file_message(file: &str, said: &str, test_file: serde_json::Value) {
    let fields = json!({"@testfile": file, "test_file": test_file});
    say("info", &format!("{file}... {said}"), "test_file", fields);
}

/// Each diagnostic as a `diagnostic` message of the file (and run).
fn tagged(diags: &Diags, sources: &Sources, file: &str, run: Option<&str>) {
    for d in &diags.0 {
        let (level, word) = match d.warning {
            true => ("warn", "Warning"),
            false => ("error", "Error"),
        };
        let mut fields = json!({"@testfile": file, "diagnostic": d.to_json(sources)});
        if let Some(run) = run {
            fields["@testrun"] = json!(run);
        }
        say(
            level,
            &format!("{word}: {}", d.summary),
            "diagnostic",
            fields,
        );
    }
}

/// The closing `test_summary`.
pub fn summary(t: &TestTally, message: &str) {
    let status = match (t.errored + t.files_failed, t.failed, t.interrupted) {
        (_, _, true) | (1.., _, _) => "error",
        (0, 1.., false) => "fail",
        _ => "pass",
    };
    let fields = json!({"test_summary": {"status": status, "passed": t.passed, "failed": t.failed, "errored": t.errored + t.files_failed, "skipped": t.skipped}});
    say("info", message, "test_summary", fields);
}
