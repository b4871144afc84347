//! What the cloud acceptance tests share: scratch folders, running the
//! binary, and the faults they inject into the stand-ins.

#![allow(dead_code)] // each test file uses its own part

pub mod moto;
pub mod multikueue;
pub mod run;
pub mod sandbox;

use std::path::PathBuf;
use std::process::Command;
use strata_standin::Injection;

/// The fault mix the reliability tests converge through: 20 % throttled,
/// 5 % 500/503, 3 % connections reset, 5 % slowed by up to 300 ms, 3 % of
/// answers lost after the server acted; seeded
/// from STRATA_FAULT_SEED, else the clock (printed either way).
pub fn faults() -> strata_standin::faults::Faults {
    let seed = std::env::var("STRATA_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(7, |d| d.as_nanos() as u64)
        });
    eprintln!("fault seed: {seed} (STRATA_FAULT_SEED repeats)");
    strata_standin::faults::Faults {
        throttle: 0.20,
        server_error: 0.05,
        reset: 0.03,
        slow: 0.05,
        lost: 0.03,
        slow_by: std::time::Duration::from_millis(300),
        seed,
    }
}

/// Asserts that every kind of fault struck at least once.
pub fn assert_faults_struck(counts: &strata_standin::faults::Counts) {
    use std::sync::atomic::Ordering::Relaxed;
    let summary = counts.summary();
    eprintln!("faults: {summary}");
    assert!(counts.throttled.load(Relaxed) > 0, "{summary}");
    assert!(counts.server_errors.load(Relaxed) > 0, "{summary}");
    assert!(counts.resets.load(Relaxed) > 0, "{summary}");
    assert!(counts.slowed.load(Relaxed) > 0, "{summary}");
    assert!(counts.lost.load(Relaxed) > 0, "{summary}");
}

/// A fresh folder for one test.
pub fn scratch(cloud: &str, tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-{cloud}-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

/// Runs a prepared `strata` command: its exit code and all it printed.
pub fn output(mut c: Command) -> (i32, String) {
    let r = run::ran(&mut c);
    (r.code, r.both())
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
/// capacity kind, how far the shortage reaches (`shortage`: "in zone
/// us-central1-a") and the cloud's code, the half-made object is recorded
/// tainted, and the next apply replaces it. `run` runs strata with the
/// test's variables.
pub fn replace_through_a_stockout(
    run: &dyn Fn(&[&str]) -> (i32, String),
    code: &str,
    shortage: &str,
) {
    let (status, out) = run(&["plan"]);
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains("must be replaced") && out.contains("forces replacement"),
        "{out}"
    );
    let (status, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(status, 1, "{out}");
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        out.contains(&format!("lack of capacity {shortage}")) && out.contains(code),
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

/// Of the progress lines of `prefix`'s instances, never two begun
/// (`begun`) before the first is done (`done`); `count` begun in all.
/// Where a cloud writes such objects one at a time, the apply waits its
/// turn itself rather than begin and be refused.
pub fn one_at_a_time(out: &str, prefix: &str, (begun, done): (&str, &str), count: usize) {
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with(prefix)).collect();
    let mut open = 0;
    for l in &lines {
        if l.contains(begun) {
            open += 1;
            assert_eq!(open, 1, "two begun at once:\n{}", lines.join("\n"));
        } else if l.contains(done) {
            open -= 1;
        }
    }
    assert_eq!(
        lines.iter().filter(|l| l.contains(begun)).count(),
        count,
        "{out}"
    );
}

/// The pool's placement record (`cluster.pool`) in `work`'s state.
pub fn placement(work: &std::path::Path, pool: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(work.join("terraform.tfstate")).expect("state");
    let state: serde_json::Value = serde_json::from_str(&text).expect("state JSON");
    state["placements"][pool].clone()
}

/// A directory `root/name` holding `cluster.hcl` with `spec`.
pub fn spec_dir(root: &std::path::Path, name: &str, spec: &str) -> PathBuf {
    let work = root.join(name);
    std::fs::create_dir_all(&work).expect("work");
    std::fs::write(work.join("cluster.hcl"), spec).expect("spec");
    work
}

/// A cluster on `clouds` whose pool `h100` wants 2 nodes, placed by
/// `placement` (the block's body) in the clouds `blocks` configure.
pub fn gpu_cluster(name: &str, clouds: &str, placement: &str, blocks: &str) -> String {
    format!(
        r#"
cluster "{name}" {{
  clouds             = {clouds}
  kubernetes_version = "1.31"
  network {{
    cidr = "10.40.0.0/16"
  }}
  gpu_operator {{
    version        = "v25.3.1"
    driver_version = "570.124.06"
    cuda_version   = "12.8"
    mig_strategy   = "single"
  }}
  node_pool "h100" {{
    gpu           = "H100"
    gpus_per_node = 8
    min_nodes     = 0
    max_nodes     = 4
    nodes         = 2
    labels        = {{ workload = "training" }}
    placement {{
{placement}
    }}
  }}
{blocks}
}}
"#
    )
}
