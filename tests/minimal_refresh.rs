//! `-minimal-refresh` (Terraform 1.17, hashicorp/terraform#38953): a plan
//! first made against the state as stored, then only the instances it
//! would change read back and planned again. On `local_file`s: with one
//! file's content changed in the configuration and another file deleted
//! outside strata, a full plan reads both and plans both; a minimal one
//! reads and plans only the changed one (the deletion it did not look at
//! is not seen), and with nothing changed it reads nothing at all.

#[path = "common/run.rs"]
mod run;

use run::strata_in;
use std::path::{Path, PathBuf};

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-minimal-refresh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

fn config(dir: &Path, a: &str) {
    let text = format!(
        "resource \"local_file\" \"a\" {{\n  filename = \"${{path.module}}/a\"\n  content  = \"{a}\"\n}}\n\nresource \"local_file\" \"b\" {{\n  filename = \"${{path.module}}/b\"\n  content  = \"b\"\n}}\n"
    );
    std::fs::write(dir.join("main.tf"), text).expect("config");
}

fn said(dir: &Path, args: &[&str]) -> (i32, Vec<String>) {
    let (code, out) = strata_in(dir, args);
    let lines = out
        .lines()
        .filter(|l| {
            l.contains("Refreshing state") || l.starts_with("  # ") || l.starts_with("Plan:")
        })
        .map(|l| l.split(" [id=").next().unwrap_or(l).to_string())
        .collect();
    (code, lines)
}

#[test]
fn only_what_would_change_is_read_back() {
    let dir = scratch();
    config(&dir, "a");
    assert_eq!(strata_in(&dir, &["init"]).0, 0);
    assert_eq!(strata_in(&dir, &["apply", "-auto-approve"]).0, 0);
    // Nothing changed: the minimal plan reads nothing.
    let (code, lines) = said(&dir, &["plan", "-minimal-refresh", "-detailed-exitcode"]);
    assert_eq!((code, lines), (0, Vec::<String>::new()));

    config(&dir, "a2");
    std::fs::remove_file(dir.join("b")).expect("deleted outside strata");
    let (code, full) = said(&dir, &["plan"]);
    assert_eq!(code, 0);
    for line in [
        "local_file.a: Refreshing state...",
        "  # local_file.b has been deleted",
        "  # local_file.b will be created",
        "Plan: 2 to add, 0 to change, 1 to destroy.",
    ] {
        assert!(full.iter().any(|l| l == line), "{line:?} in {full:?}");
    }
    let (code, minimal) = said(&dir, &["plan", "-minimal-refresh"]);
    assert_eq!(code, 0);
    assert_eq!(
        minimal,
        [
            "local_file.a: Refreshing state...",
            "  # local_file.a must be replaced",
            "Plan: 1 to add, 0 to change, 1 to destroy.",
        ]
    );
    // Applied the same way, it changes what it planned.
    let (code, out) = strata_in(&dir, &["apply", "-auto-approve", "-minimal-refresh"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(std::fs::read_to_string(dir.join("a")).expect("a"), "a2");
    assert!(!dir.join("b").exists(), "b was not looked at");
    // It reads what it must: with -refresh=false it is refused.
    let (code, out) = strata_in(&dir, &["plan", "-minimal-refresh", "-refresh=false"]);
    assert_eq!(code, 1, "{out}");
}
