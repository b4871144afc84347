//! `strata console --json` against Terraform 1.11 as the oracle.
//!
//! `stored_corpus_matches` replays tests/oracle/corpus.jsonl, which
//! tests/oracle/gen.py produced from `terraform console`; it needs no
//! Terraform. `live_terraform_agrees` regenerates the corpus with the
//! `terraform` on PATH and compares strata with that, so the stored file can
//! never drift from what Terraform really says; without Terraform it says so
//! and is skipped.

#[path = "common/oracle.rs"]
mod oracle;
use oracle::require_terraform;
use serde_json::Value as Json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Expressions where strata knowingly differs, each with the reason.
const KNOWN_DIVERGENCES: &[(&str, &str)] = &[
    (
        "base64gzip(\"hello world hello world hello world\")",
        "with repeats, Go's compressor picks other (equally valid) matches than ours; the data round-trips",
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `strata console --json` over `exprs`, in `config` (as the working
/// directory, PATH ".") when given, else with no configuration.
fn run_console(exprs: &[String], config: Option<&Path>) -> Vec<Json> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.args(["console", "--json"]);
    if let Some(dir) = config {
        cmd.arg(".").current_dir(dir);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("strata runs");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for e in exprs {
            writeln!(stdin, "{e}").expect("write");
        }
    }
    let out = child.wait_with_output().expect("strata finishes");
    assert!(
        out.status.success(),
        "console --json exits 0 even when lines fail"
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("every output line is JSON"))
        .collect()
}

/// Compares one oracle record with strata's answer; `None` when they agree.
fn disagreement(want: &Json, got: &Json) -> Option<String> {
    let want_err = want.get("error").is_some();
    let got_err = got.get("error").is_some();
    // The corpus is Terraform's jsonencode of each value, which fails on
    // an infinity (JSON has none); Terraform's console prints it as
    // `+Inf`, and so does strata's `console --json`, as its text.
    let infinite =
        matches!(got["value"].as_str(), Some("+Inf" | "-Inf")) && got["type"] == "number";
    if want_err && infinite {
        return None;
    }
    if want_err || got_err {
        return (want_err != got_err).then(|| format!("error expected: {want_err}, got: {got}"));
    }
    for flag in ["unknown", "sensitive"] {
        let w = want.get(flag).and_then(Json::as_bool).unwrap_or(false);
        let g = got.get(flag).and_then(Json::as_bool).unwrap_or(false);
        if w != g {
            return Some(format!("{flag}: want {w}, got {g}"));
        }
        if w {
            return (want["type"] != got["type"])
                .then(|| format!("type: want {}, got {}", want["type"], got["type"]));
        }
    }
    let want_value: Json = serde_json::from_str(want["value"].as_str().unwrap_or("null"))
        .expect("oracle value is JSON");
    if want_value != got["value"] {
        return Some(format!("value: want {want_value}, got {}", got["value"]));
    }
    if want["type"] != got["type"] {
        return Some(format!("type: want {}, got {}", want["type"], got["type"]));
    }
    None
}

fn check_corpus(path: &Path, config: Option<&Path>) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(path).expect("corpus readable");
    let records: Vec<Json> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("corpus line"))
        .collect();
    let exprs: Vec<String> = records
        .iter()
        .map(|r| r["expr"].as_str().expect("expr").to_string())
        .collect();
    let answers = run_console(&exprs, config);
    assert_eq!(answers.len(), records.len(), "one answer per expression");
    let mut failures = Vec::new();
    for (rec, got) in records.iter().zip(&answers) {
        let expr = rec["expr"].as_str().unwrap_or_default();
        if let Some(why) = disagreement(rec, got) {
            if !KNOWN_DIVERGENCES.iter().any(|(e, _)| *e == expr) {
                failures.push(format!("{expr}\n    {why}"));
            }
        }
    }
    (records.len(), failures)
}

/// Fails the test listing every disagreement.
fn assert_agrees(what: &str, (n, failures): (usize, Vec<String>)) {
    assert!(
        failures.is_empty(),
        "{} of {n} {what} differ from Terraform:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn stored_corpus_matches() {
    let result = check_corpus(&root().join("tests/oracle/corpus.jsonl"), None);
    assert!(
        result.0 >= 1000,
        "the corpus holds a thousand expressions, found {}",
        result.0
    );
    assert_agrees("expressions", result);
}

/// Heredocs, template directives, file functions and variables need a
/// configuration on disk: tests/oracle/config is evaluated in place.
#[test]
fn stored_config_corpus_matches() {
    let dir = root().join("tests/oracle/config");
    let result = check_corpus(&dir.join("corpus.jsonl"), Some(&dir));
    assert!(result.0 >= 30, "found {}", result.0);
    assert_agrees("configuration expressions", result);
}

/// Runs the oracle generator against the installed terraform (in `config`
/// when given) and compares strata with what it wrote.
fn live(config: Option<&Path>) -> (usize, Vec<String>) {
    let out = std::env::temp_dir().join(format!(
        "strata-oracle-{}-{}.jsonl",
        if config.is_some() { "config" } else { "empty" },
        std::process::id()
    ));
    let mut cmd = Command::new("python3");
    cmd.arg(root().join("tests/oracle/gen.py"))
        .args(["--jobs", "4", "--out"])
        .arg(&out);
    if let Some(dir) = config {
        cmd.arg("--config").arg(dir);
    }
    let status = cmd.status().expect("python3 runs the oracle generator");
    assert!(status.success(), "oracle generator failed");
    let result = check_corpus(&out, config);
    let _ = std::fs::remove_file(&out);
    result
}

#[test]
fn live_terraform_agrees() {
    if !require_terraform("live_terraform_agrees") {
        return;
    }
    assert_agrees("expressions (live)", live(None));
    assert_agrees(
        "configuration expressions (live)",
        live(Some(&root().join("tests/oracle/config"))),
    );
}
