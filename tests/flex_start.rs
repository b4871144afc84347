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

/// A GCP-and-AWS cluster `name` with `placement` and `more` blocks, and
/// the team's price list (no public catalog lists flex-start prices)
/// pricing a3-highgpu-8g at `prices` (`Price,SpotPrice,FlexStartPrice`).
fn gcp_and_aws(root: &Path, name: &str, (placement, more): (&str, &str), prices: &str) -> PathBuf {
    let blocks = format!(
        r#"  prices = "prices.csv"
{more}
  cloud "gcp" {{
    project = "acme-ml"
    region  = "us-central1"
  }}
  cloud "aws" {{
    region = "us-east-1"
  }}"#
    );
    let spec = common::gpu_cluster(name, r#"["gcp", "aws"]"#, placement, &blocks);
    let work = common::spec_dir(root, name, &spec);
    let list = format!("InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice,FlexStartPrice\na3-highgpu-8g,H100,8,us-central1,{prices}\n");
    std::fs::write(work.join("prices.csv"), list).expect("prices");
    work
}

/// A GCP-then-AWS cluster whose pool `h100` tries flex-start first.
fn flex_first(root: &Path, name: &str, wait: &str) -> PathBuf {
    let placement = format!(
        r#"      order         = ["gcp", "aws"]
      capacity      = ["flex_start", "on_demand"]
      max_run       = "24h"
      wait_for_gpus = "{wait}""#
    );
    gcp_and_aws(root, name, (&placement, ""), ",,25.00")
}

fn flex_short(sb: &Sandbox) {
    sb.short(r#"{"cloud":"gcp","region":"us-central1","capacity":"flex_start","available":false}"#);
}

fn chosen(p: &Json) -> (String, String) {
    let s = |k: &str| p["chosen"][k].as_str().unwrap_or("").to_string();
    (s("cloud"), s("capacity"))
}

/// `cloud capacity` of each place in a list of them.
fn places(list: &Json) -> Vec<String> {
    let text = |p: &Json, k: &str| p[k].as_str().unwrap_or("").to_string();
    list.as_array()
        .into_iter()
        .flatten()
        .map(|p| format!("{} {}", text(p, "cloud"), text(p, "capacity")))
        .collect()
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

/// GKE's queued provisioning as the ladder's last resort: spot is tried
/// on GCP and then AWS (both short here), and only then the queued pool,
/// though GCP comes first — a queued pool never fails to place, so it
/// goes after every other place. It is made as GKE requires (flex-start
/// VMs, no nodes until a job asks, nothing repaired or upgraded under a
/// job, GKE's queued taint and label), placed at once with no GPU to wait
/// for, and the cluster's Kueue asks for a job's nodes through a
/// ProvisioningRequest of GKE's class before it admits the job.
#[test]
fn a_queued_pool_is_the_last_resort_made_empty_and_its_jobs_wait_for_provisioning() {
    let dir = common::scratch("flex", "queued");
    let sb = start(&dir.join("sandbox"));
    for cloud in [
        r#""cloud":"gcp","region":"us-central1""#,
        r#""cloud":"aws","region":"us-east-1""#,
    ] {
        sb.short(&format!(
            r#"{{{cloud},"capacity":"spot","form":"refused","available":false}}"#
        ));
    }
    let placement = r#"      order         = ["gcp", "aws"]
      capacity      = ["spot", "queued"]
      wait_for_gpus = "20s""#;
    let runtime = "  runtime {\n    queue \"training\" {\n      namespaces = [\"ml\"]\n    }\n  }";
    let work = gcp_and_aws(&dir, "qd", (placement, runtime), "88.00,30.00,25.00");
    let (code, out) = sb.strata(&work, &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let plan: Json = serde_json::from_str(&out).expect("plan JSON");
    let order = places(&plan["placements"][0]["candidates"]);
    assert_eq!(order, ["gcp spot", "aws spot", "gcp queued"], "{out}");

    let began = std::time::Instant::now();
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "qd.h100");
    assert_eq!(chosen(&p), ("gcp".into(), "queued".into()), "{p}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("on gcp us-central1 queued; its nodes come as Kueue admits jobs"),
        "{out}"
    );
    assert!(
        p["chosen"]["first_gpu_after"].is_null(),
        "no GPU to wait for: {p}"
    );
    let mut failed = places(&p["failed"]);
    // AWS's spot failed zone by zone.
    failed.dedup();
    assert_eq!(failed, ["gcp spot", "aws spot"], "{p}");
    assert!(
        began.elapsed() < std::time::Duration::from_secs(20 * 3),
        "the queued place was not waited on for a GPU: {:?}",
        began.elapsed()
    );

    let pool = sb.gke_node_pool("qd", "h100");
    assert_eq!(pool["queuedProvisioning"]["enabled"], true, "{pool}");
    assert_eq!(pool["config"]["flexStart"], true, "{pool}");
    assert_eq!(
        pool["autoscaling"]["totalMinNodeCount"]
            .as_u64()
            .unwrap_or(0),
        0,
        "{pool}"
    );
    assert_eq!(pool["initialNodeCount"].as_u64().unwrap_or(0), 0, "{pool}");
    assert_eq!(pool["management"]["autoRepair"], false, "{pool}");
    assert_eq!(pool["management"]["autoUpgrade"], false, "{pool}");
    assert_eq!(
        pool["config"]["labels"]["cloud.google.com/gke-queued"], "true",
        "{pool}"
    );
    // The plan afterwards is empty: GKE's own taint is written, and the
    // placement is not watched for a GPU again.
    empty_second_plan(&sb, &work);
    let (code, out) = sb.strata(&work, &["drift"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("qd.h100: 8×H100 on gcp us-central1 queued"),
        "{out}"
    );

    let state: Json = serde_json::from_str(
        &std::fs::read_to_string(work.join("terraform.tfstate")).expect("state"),
    )
    .expect("state JSON");
    let manifest = |name: &str| -> Json {
        let found = state["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| {
                r["type"] == "kubernetes_manifest"
                    && r["name"] == name
                    && r["module"].as_str().is_some_and(|m| m.contains("gcp"))
            });
        found
            .and_then(|r| r["instances"][0]["attributes"]["manifest"]["value"].as_object())
            .map(|m| Json::Object(m.clone()))
            .unwrap_or_else(|| panic!("the GCP cluster's {name} in the state"))
    };
    let config = manifest("provisioning_config");
    assert_eq!(
        config["spec"]["provisioningClassName"], "queued-provisioning.gke.io",
        "{config}"
    );
    let check = manifest("provisioning_check");
    assert_eq!(
        check["spec"]["controllerName"], "kueue.x-k8s.io/provisioning-request",
        "{check}"
    );
    assert_eq!(
        check["spec"]["parameters"]["name"], config["metadata"]["name"],
        "{check}"
    );
    let queue = manifest("cluster_queue");
    assert_eq!(
        queue["spec"]["admissionChecksStrategy"]["admissionChecks"],
        serde_json::json!([{"name": check["metadata"]["name"], "onFlavors": ["h100"]}]),
        "{queue}"
    );
    let flavor = manifest("flavor");
    let tolerated = flavor["spec"]["tolerations"]
        .as_array()
        .into_iter()
        .flatten();
    assert!(
        tolerated
            .clone()
            .any(|t| t["key"] == "cloud.google.com/gke-queued"),
        "{flavor}"
    );
}

#[test]
fn queued_before_another_capacity_type_is_an_error_at_its_line() {
    let dir = common::scratch("flex", "queued-first");
    let placement = r#"      capacity = ["queued", "spot"]"#;
    let blocks = r#"  cloud "gcp" {
    project = "acme-ml"
    region  = "us-central1"
  }"#;
    let spec = common::gpu_cluster("qf", r#"["gcp"]"#, placement, blocks);
    let work = common::spec_dir(&dir, "qf", &spec);
    let (code, out) = common::run::strata_in(&work, &["validate"]);
    assert_eq!(code, 1, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("Invalid capacity") && flat.contains("list it last"),
        "{out}"
    );
    assert!(flat.contains("cluster.hcl:"), "{out}");
}
