//! `strata graph` against `terraform graph` on the same configurations.
//! tests/graph/CASE.dot holds what Terraform 1.11.4 printed for
//! tests/graph/CASE/; when `terraform` is on PATH it is asked again.

#[path = "common/oracle.rs"]
mod oracle;
use oracle::require_terraform;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/graph")
}

fn cases() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root())
        .expect("tests/graph")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    assert!(v.len() >= 4, "graph cases: {v:?}");
    v
}

fn strata_graph(dir: &Path) -> String {
    graph_with(dir, &[])
}

/// `strata graph ARGS DIR`'s output, which must succeed.
fn graph_with(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("graph")
        .args(args)
        .arg(dir)
        .output()
        .expect("strata runs");
    assert!(
        out.status.success(),
        "strata graph failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn matches_stored_terraform_graphs() {
    for case in cases() {
        let want =
            std::fs::read_to_string(root().join(format!("{case}.dot"))).expect("expected DOT");
        assert_eq!(strata_graph(&root().join(&case)), want, "case {case}");
    }
}

#[test]
fn matches_live_terraform_graphs() {
    if !require_terraform("matches_live_terraform_graphs") {
        return;
    }
    for case in cases() {
        // terraform needs `init` (offline: local modules, builtin provider)
        // in a copy, so the repository stays clean.
        let work = std::env::temp_dir().join(format!("strata-graph-{case}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&work);
        copy_dir(&root().join(&case), &work);
        let init = Command::new("terraform")
            .args(["init", "-backend=false", "-input=false", "-no-color"])
            .current_dir(&work)
            .output()
            .expect("terraform init");
        assert!(
            init.status.success(),
            "terraform init: {}",
            String::from_utf8_lossy(&init.stderr)
        );
        let tf = Command::new("terraform")
            .arg("graph")
            .current_dir(&work)
            .output()
            .expect("terraform graph");
        assert!(tf.status.success());
        assert_eq!(
            strata_graph(&root().join(&case)),
            String::from_utf8_lossy(&tf.stdout),
            "case {case}"
        );
        let _ = std::fs::remove_dir_all(&work);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from)
        .expect("read")
        .filter_map(Result::ok)
    {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).expect("copy");
        }
    }
}

fn strata_mermaid(dir: &Path) -> String {
    graph_with(dir, &["-format=mermaid"])
}

/// `-format=mermaid` (Terraform 1.15) draws the same graph as the DOT that
/// matches Terraform's: the same nodes under the same modules, the same
/// edges, as a Mermaid flowchart.
#[test]
fn mermaid_draws_the_same_graph() {
    let want = "flowchart LR
  n0[\"terraform_data.after\"]
  n1[\"terraform_data.first\"]
  subgraph m1[\"module.m\"]
    n2[\"terraform_data.inner\"]
    n3[\"terraform_data.inner2\"]
  end
  n0 --> n3
  n2 --> n1
  n3 --> n2
";
    assert_eq!(strata_mermaid(&root().join("module_depends")), want);
    for case in cases() {
        let dot = std::fs::read_to_string(root().join(format!("{case}.dot"))).expect("DOT");
        let mermaid = strata_mermaid(&root().join(&case));
        let count =
            |text: &str, pattern: &str| text.lines().filter(|l| l.contains(pattern)).count();
        assert_eq!(
            count(&dot, "\" -> \""),
            count(&mermaid, " --> "),
            "edges of {case}"
        );
        // Subgraphs are written `subgraph mN["module.x"]` too.
        let nodes = count(&mermaid, "[\"") - count(&mermaid, "subgraph ");
        assert_eq!(count(&dot, "[label="), nodes, "nodes of {case}");
    }
}
