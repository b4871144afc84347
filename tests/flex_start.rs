//! GKE's flex-start capacity (the Dynamic Workload Scheduler's VMs) as a
//! rung of a pool's placement ladder, through the sandbox: the pool made
//! as GKE requires a flex-start pool (no Spot, no reservation, no
//! auto-repair, any zone), priced from a team's price list, its VMs
//! waiting where GKE has no capacity — placed when it comes within
//! `wait_for_gpus`, failed over to the next rung when it does not.

mod common;

use common::sandbox::{start, Sandbox};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// A GCP-then-AWS cluster whose pool `h100` tries flex-start first.
fn flex_first(root: &Path, name: &str, wait: &str) -> PathBuf {
    let placement = format!(
        r#"      order         = ["gcp", "aws"]
      capacity      = ["flex_start", "on_demand"]
      max_run       = "24h"
      wait_for_gpus = "{wait}""#
    );
    let blocks = r#"  prices = "prices.csv"
  cloud "gcp" {
    project = "acme-ml"
    region  = "us-central1"
  }
  cloud "aws" {
    region = "us-east-1"
  }"#;
    let spec = common::gpu_cluster(name, r#"["gcp", "aws"]"#, &placement, blocks);
    let work = common::spec_dir(root, name, &spec);
    // No public catalog lists flex-start prices: the team's list does.
    let prices = "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice,FlexStartPrice\na3-highgpu-8g,H100,8,us-central1,,,25.00\n";
    std::fs::write(work.join("prices.csv"), prices).expect("prices");
    work
}

fn flex_short(sb: &Sandbox) {
    sb.short(r#"{"cloud":"gcp","region":"us-central1","capacity":"flex_start","available":false}"#);
}

fn chosen(p: &Json) -> (String, String) {
    let s = |k: &str| p["chosen"][k].as_str().unwrap_or("").to_string();
    (s("cloud"), s("capacity"))
}

fn empty_second_plan(sb: &Sandbox, work: &Path) {
    let (code, out) = sb.strata(work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan is empty:\n{out}");
}

#[test]
fn a_flex_start_pool_is_made_as_gke_requires_and_priced_from_the_teams_list() {
    let dir = common::scratch("flex", "made");
    let sb = start(&dir.join("sandbox"));
    let work = flex_first(&dir, "flexa", "30s");
    let (code, out) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 0, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("gcp us-central1 flex-start"), "{out}");
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "flexa.h100");
    assert_eq!(chosen(&p), ("gcp".into(), "flex_start".into()), "{p}");
    assert!(p["chosen"]["first_gpu_after"].as_f64().is_some(), "{p}");
    let pool = sb.gke_node_pool("flexa", "h100");
    assert_eq!(pool["config"]["flexStart"], true, "{pool}");
    assert_ne!(pool["config"]["spot"], true, "{pool}");
    assert_eq!(
        pool["config"]["reservationAffinity"]["consumeReservationType"], "NO_RESERVATION",
        "{pool}"
    );
    assert_eq!(pool["management"]["autoRepair"], false, "{pool}");
    assert_eq!(pool["autoscaling"]["locationPolicy"], "ANY", "{pool}");
    assert_eq!(pool["config"]["maxRunDuration"], "86400s", "{pool}");
    empty_second_plan(&sb, &work);
    // The cost table prices the nodes as the team's list says: 2 nodes at
    // $25.00 an hour.
    let (code, out) = sb.strata(&work, &["cost", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let cost: Json = serde_json::from_str(&out).expect("cost JSON");
    let pool = cost["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["capacity"] == "flex_start")
        .unwrap_or_else(|| panic!("a flex-start pool in {cost}"));
    assert_eq!(pool["node_hour"].as_f64(), Some(25.0), "{pool}");
    assert_eq!(pool["nodes"]["desired"], 2, "{pool}");
    assert!(
        pool["price_source"]
            .as_str()
            .is_some_and(|s| s.starts_with("prices.csv:")),
        "{pool}"
    );
}

#[test]
fn flex_start_vms_wait_for_capacity_and_come_when_it_does() {
    let dir = common::scratch("flex", "waits");
    let sb = start(&dir.join("sandbox"));
    flex_short(&sb);
    let work = flex_first(&dir, "flexw", "60s");
    // GKE finds the capacity four seconds into the wait.
    let (code, out) = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(std::time::Duration::from_secs(4));
            sb.plenty();
        });
        sb.strata(&work, &["apply", "--auto-approve"])
    });
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "flexw.h100");
    assert_eq!(chosen(&p), ("gcp".into(), "flex_start".into()), "{p}");
    assert!(p["failed"].as_array().is_none_or(|f| f.is_empty()), "{p}");
    let first = p["chosen"]["first_gpu_after"].as_f64().unwrap_or(0.0);
    assert!(first >= 4.0, "the nodes came after the wait: {p}");
    empty_second_plan(&sb, &work);
}

#[test]
fn flex_start_without_capacity_in_time_fails_over_to_the_next_rung() {
    let dir = common::scratch("flex", "over");
    let sb = start(&dir.join("sandbox"));
    flex_short(&sb);
    let work = flex_first(&dir, "flexo", "6s");
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "flexo.h100");
    assert_eq!(chosen(&p), ("gcp".into(), "on_demand".into()), "{p}");
    let failed: Vec<(String, String)> = p["failed"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or("").to_string();
            (s("cloud"), s("capacity"))
        })
        .collect();
    assert_eq!(failed, vec![("gcp".into(), "flex_start".into())], "{p}");
    // The pool is GKE's on-demand pool now, made again without flex-start.
    let pool = sb.gke_node_pool("flexo", "h100");
    assert_ne!(pool["config"]["flexStart"], true, "{pool}");
    empty_second_plan(&sb, &work);
}

#[test]
fn flex_start_on_clouds_without_it_is_an_error_at_its_line() {
    let dir = common::scratch("flex", "nowhere");
    let placement = r#"      capacity = ["flex_start"]"#;
    let blocks = r#"  cloud "aws" {
    region = "us-east-1"
  }"#;
    let spec = common::gpu_cluster("flexn", r#"["aws"]"#, placement, blocks);
    let work = common::spec_dir(&dir, "flexn", &spec);
    let (code, out) = common::run::strata_in(&work, &["validate"]);
    assert_eq!(code, 1, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("Capacity type not offered"), "{out}");
    assert!(
        flat.contains("\"flex_start\" is a capacity type of gcp only"),
        "{out}"
    );
    assert!(flat.contains("cluster.hcl:"), "{out}");
}

#[test]
fn a_flex_start_run_longer_than_seven_days_is_an_error_at_its_line() {
    let dir = common::scratch("flex", "long");
    let blocks = r#"  cloud "gcp" {
    project = "acme-ml"
    region  = "us-central1"
  }"#;
    for (placement, says) in [
        (
            "      capacity = [\"flex_start\"]\n      max_run  = \"200h\"",
            "A flex-start node runs at most seven days",
        ),
        (
            "      capacity = [\"spot\"]\n      max_run  = \"24h\"",
            "the placement's capacity lists no \"flex_start\"",
        ),
    ] {
        let spec = common::gpu_cluster("flexl", r#"["gcp"]"#, placement, blocks);
        let work = common::spec_dir(&dir, "flexl", &spec);
        let (code, out) = common::run::strata_in(&work, &["validate"]);
        assert_eq!(code, 1, "{out}");
        let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("Invalid max_run") && flat.contains(says),
            "{out}"
        );
        assert!(flat.contains("cluster.hcl:"), "{out}");
    }
}

/// Without `order`, clouds go cheapest first by their first priced rung:
/// GCP's unpriced flex-start rung (no price list here) does not send GCP
/// behind AWS's dearer on-demand.
#[test]
fn an_unpriced_flex_start_rung_keeps_its_cloud_in_price_order() {
    let dir = common::scratch("flex", "order");
    let sb = start(&dir.join("sandbox"));
    let placement = r#"      capacity = ["flex_start", "on_demand"]"#;
    let blocks = r#"  cloud "aws" {
    region = "us-east-1"
  }
  cloud "gcp" {
    project = "acme-ml"
    region  = "us-central1"
  }"#;
    let spec = common::gpu_cluster("flexr", r#"["aws", "gcp"]"#, placement, blocks);
    let work = common::spec_dir(&dir, "flexr", &spec);
    let (code, plan) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 0, "{plan}");
    let places: Vec<&str> = plan
        .lines()
        .filter(|l| {
            // The numbered candidates: `  → 1. gcp …`, `    2. aws …`.
            let t = l.trim_start().trim_start_matches('→').trim_start();
            let n = t.split('.').next().unwrap_or_default();
            !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())
        })
        .collect();
    let first = places.first().copied().unwrap_or_default();
    assert!(
        first.contains('→') && first.contains("gcp us-central1 flex-start"),
        "{plan}"
    );
    let gcp_on_demand = places
        .iter()
        .position(|l| l.contains("gcp us-central1 on-demand"));
    let aws_on_demand = places
        .iter()
        .position(|l| l.contains("aws us-east-1 on-demand"));
    assert!(gcp_on_demand < aws_on_demand, "{plan}");
}
