//! The parser against Terraform's, case by case: each line of
//! `tests/oracle/syntax/cases.txt` (`⏎` standing for a newline) goes in a
//! `locals` block, and `strata validate` must pass or fail where
//! `terraform validate` does. `expected.txt` holds Terraform 1.11's
//! verdicts; the live test asks Terraform again (and with
//! STRATA_UPDATE_RECORDS=1 rewrites them).

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;
use oracle::{require_terraform, terraform};
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn oracle() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/syntax")
}

fn cases() -> Vec<String> {
    let text = std::fs::read_to_string(oracle().join("cases.txt")).expect("cases.txt");
    text.lines().map(|l| l.replace('⏎', "\n")).collect()
}

fn stored() -> Vec<String> {
    std::fs::read_to_string(oracle().join("expected.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A scratch directory per case holding `locals { CASE }`.
fn stage(tag: &str, i: usize, case: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-syntax-{}-{tag}-{i}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    std::fs::write(d.join("main.tf"), format!("locals {{\n  {case}\n}}\n")).expect("write");
    d
}

fn verdict(ok: bool) -> String {
    if ok { "valid" } else { "invalid" }.to_string()
}

fn verdicts(tag: &str, validate: impl Fn(&Path) -> bool) -> Vec<String> {
    cases()
        .iter()
        .enumerate()
        .map(|(i, case)| {
            let d = stage(tag, i, case);
            let v = verdict(validate(&d));
            let _ = std::fs::remove_dir_all(&d);
            v
        })
        .collect()
}

fn disagreements(want: &[String], got: &[String]) -> Vec<String> {
    cases()
        .iter()
        .zip(want.iter().zip(got))
        .filter(|(_, (w, g))| w != g)
        .map(|(c, (w, g))| format!("{c:?}: terraform {w}, strata {g}"))
        .collect()
}

#[test]
fn strata_agrees_with_terraforms_stored_verdicts() {
    let want = stored();
    assert!(
        cases().len() >= 100,
        "cases.txt holds {} cases",
        cases().len()
    );
    assert_eq!(
        want.len(),
        cases().len(),
        "expected.txt is stale: run the live test with STRATA_UPDATE_RECORDS=1"
    );
    let got = verdicts("strata", |d| {
        run::strata(d)
            .arg("validate")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    let bad = disagreements(&want, &got);
    assert!(
        bad.is_empty(),
        "{} cases disagree:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn stored_verdicts_are_terraforms() {
    if !require_terraform("stored_verdicts_are_terraforms") {
        return;
    }
    let live = verdicts("terraform", |d| {
        terraform(d, &["validate", "-no-color"]).status.success()
    });
    if std::env::var_os("STRATA_UPDATE_RECORDS").is_some() {
        std::fs::write(oracle().join("expected.txt"), live.join("\n") + "\n").expect("write");
    }
    let bad = disagreements(&live, &stored());
    assert!(
        bad.is_empty(),
        "stored verdicts are stale:\n{}",
        bad.join("\n")
    );
}
