//! `strata fmt` against `terraform fmt`.
//!
//! tests/fmt_expected/ holds what `terraform fmt` (1.11.4) made of each
//! input in tests/fmt/; the stored comparison always runs, and when
//! `terraform` is on PATH the expected files are made again live.

#[path = "common/oracle.rs"]
mod oracle;
use oracle::require_terraform;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn inputs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("tests/fmt"))
        .expect("tests/fmt exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    assert!(v.len() >= 8, "a set of fmt inputs");
    v
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-fmt-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Runs a formatter command on a copy of `input` and returns the result.
fn format_copy(cmd: &str, args: &[&str], input: &Path, dir: &Path) -> Vec<u8> {
    let copy = dir.join(input.file_name().expect("name"));
    std::fs::copy(input, &copy).expect("copy");
    let status = Command::new(cmd)
        .args(args)
        .arg(&copy)
        .stdout(Stdio::null())
        .status()
        .expect("formatter runs");
    assert!(status.success(), "{cmd} failed on {}", input.display());
    std::fs::read(&copy).expect("read back")
}

fn strata() -> &'static str {
    env!("CARGO_BIN_EXE_strata")
}

#[test]
fn matches_stored_terraform_output() {
    let dir = scratch("stored");
    for input in inputs() {
        let name = input.file_name().expect("name");
        let want =
            std::fs::read(root().join("tests/fmt_expected").join(name)).expect("expected file");
        let got = format_copy(strata(), &["fmt"], &input, &dir);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
            "strata fmt differs from terraform fmt on {}",
            input.display()
        );
    }
}

#[test]
fn matches_live_terraform() {
    if !require_terraform("matches_live_terraform") {
        return;
    }
    let dir = scratch("live");
    for input in inputs() {
        let want = format_copy("terraform", &["fmt"], &input, &dir);
        let got = format_copy(strata(), &["fmt"], &input, &dir);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
            "{}",
            input.display()
        );
    }
}

#[test]
fn formatting_is_idempotent() {
    for input in inputs() {
        let text = std::fs::read_to_string(&input).expect("read");
        let once = strata::fmt::format_source(&text);
        assert_eq!(
            strata::fmt::format_source(&once),
            once,
            "{}",
            input.display()
        );
    }
}

#[test]
fn check_exits_3_and_changes_nothing() {
    let dir = scratch("check");
    let file = dir.join("main.tf");
    std::fs::write(&file, "locals {\na=1\n}\n").expect("write");
    let out = Command::new(strata())
        .args(["fmt", "--check"])
        .arg(&dir)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("main.tf"),
        "names the file"
    );
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        "locals {\na=1\n}\n",
        "--check writes nothing"
    );
    let out = Command::new(strata())
        .arg("fmt")
        .arg(&dir)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let out = Command::new(strata())
        .args(["fmt", "--check"])
        .arg(&dir)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "formatted now");
}

#[test]
fn invalid_syntax_is_an_error_and_file_untouched() {
    let dir = scratch("bad");
    let file = dir.join("bad.tf");
    std::fs::write(&file, "locals {\n  a = [1,\n").expect("write");
    let out = Command::new(strata())
        .arg("fmt")
        .arg(&file)
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("bad.tf:"),
        "points at the file"
    );
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        "locals {\n  a = [1,\n"
    );
}
