//! What the cloud acceptance tests share: scratch folders, running the
//! binary, and the faults they inject into the stand-ins.

#![allow(dead_code)] // each test file uses its own part

pub mod moto;

use std::path::PathBuf;
use std::process::Command;
use strata_standin::Injection;

/// A fresh folder for one test.
pub fn scratch(cloud: &str, tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-{cloud}-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

/// Runs a prepared `strata` command: its exit code and all it printed.
pub fn output(mut c: Command) -> (i32, String) {
    let out = c.output().expect("strata runs");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// A JSON error answer for the next `times` requests matching all of
/// `matching`, with `Retry-After` when given.
pub fn fault(
    matching: &[&str],
    times: u32,
    status: u16,
    retry_after: Option<&str>,
    body: &str,
) -> Injection {
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    if let Some(r) = retry_after {
        headers.push(("retry-after".into(), r.into()));
    }
    Injection {
        matching: matching.iter().map(|m| m.to_string()).collect(),
        times,
        status,
        headers,
        body: body.to_string(),
    }
}

/// A replacement whose first create finds no capacity (`code`, injected
/// by the caller): the plan says what forces it, the apply fails with the
/// capacity kind and the cloud's code, the half-made object is recorded
/// tainted, and the next apply replaces it. `run` runs strata with the
/// test's variables.
pub fn replace_through_a_stockout(run: &dyn Fn(&[&str]) -> (i32, String), code: &str) {
    let (status, out) = run(&["plan"]);
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains("must be replaced") && out.contains("forces replacement"),
        "{out}"
    );
    let (status, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("lack of capacity") && out.contains(code),
        "{out}"
    );
    let (status, out) = run(&["plan"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("is tainted, so must be replaced"), "{out}");
    let (status, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    let (status, out) = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(status, 0, "{out}");
}
