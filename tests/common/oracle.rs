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

/// The program a tool name runs: strata's binary as built, or `tool`.
pub fn program(tool: &str) -> &str {
    match tool {
        "strata" => env!("CARGO_BIN_EXE_strata"),
        other => other,
    }
}

/// One tool's run (`strata`, this build's binary, or `terraform`) of
/// `args` in `dir` with `env`: exit code, stdout, stderr. Never
/// interactive, never phoning home (strata ignores both settings).
pub fn run_tool(
    tool: &str,
    dir: &Path,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> (i32, String, String) {
    let out = Command::new(program(tool))
        .args(args)
        .envs(env.iter().copied())
        .env("TF_IN_AUTOMATION", "1")
        .env("CHECKPOINT_DISABLE", "1")
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// [`run`] with `input` written to the tool's stdin (a pipe, closed
/// after it).
pub fn run_piped(tool: &str, dir: &Path, args: &[&str], input: &str) -> (i32, String, String) {
    let mut child = Command::new(program(tool))
        .args(args)
        .env("CHECKPOINT_DISABLE", "1")
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let mut stdin = child.stdin.take().expect("stdin");
    std::io::Write::write_all(&mut stdin, input.as_bytes()).expect("stdin written");
    drop(stdin);
    let out = child.wait_with_output().expect("ends");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// [`run_tool`] with the environment as it is.
pub fn run(tool: &str, dir: &Path, args: &[&str]) -> (i32, String, String) {
    run_tool(tool, dir, args, &[])
}

/// [`run`], which must succeed: its stdout.
pub fn ok(tool: &str, dir: &Path, args: &[&str]) -> String {
    let (code, out, err) = run(tool, dir, args);
    assert_eq!(code, 0, "{tool} {args:?}:\n{out}\n{err}");
    out
}

/// Reads `child`'s stdout until it asks for confirmation ("Enter a
/// value"): an apply there holds the state's lock. What it said so far.
pub fn until_asked(child: &mut std::process::Child) -> String {
    use std::io::Read;
    let mut seen = String::new();
    if let Some(out) = child.stdout.as_mut() {
        let mut buf = [0u8; 4096];
        while !seen.contains("Enter a value") {
            let n = out.read(&mut buf).expect("the child's output");
            assert!(n > 0, "it ended before asking: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
    seen
}
