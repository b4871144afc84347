//! Terraform 1.11 as the oracle: whether it is here, and running it.
//! Included by path (`#[path = "common/oracle.rs"]`) so the tests that
//! compare with Terraform do not link the cloud stand-ins.

#![allow(dead_code)] // each test file uses its own part

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Whether `terraform` is on PATH, for the test named `test`. Under
/// CI=true it must be: a comparison with Terraform fails there rather than
/// pass by skipping. Elsewhere a missing terraform is said on stderr.
pub fn require_terraform(test: &str) -> bool {
    let found = Command::new("terraform")
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found || std::env::var("CI").as_deref() != Ok("true"),
        "terraform is not on PATH; under CI=true {test} must compare with it, not skip"
    );
    if !found {
        eprintln!("SKIPPED {test}: terraform is not on PATH");
    }
    found
}

/// `terraform ARGS` in `dir`, never interactive, never phoning home.
pub fn terraform(dir: &Path, args: &[&str]) -> Output {
    Command::new("terraform")
        .args(args)
        .current_dir(dir)
        .env("TF_IN_AUTOMATION", "1")
        .env("CHECKPOINT_DISABLE", "1")
        .stdin(Stdio::null())
        .output()
        .expect("terraform runs")
}
