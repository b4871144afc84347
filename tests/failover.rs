//! Capacity failover of placed node pools, through the sandbox: shortages
//! set on its control endpoint, in both the forms clouds use (the create
//! refused; the pool made, then failing), on each cloud, and strata moving
//! the pool's nodes zone → capacity type → cloud under the price cap. After
//! each run: the placement and every failed place in state, a second plan
//! empty (placement is sticky), the clouds holding exactly the pools
//! state records, and the time to the placement's first GPU.

mod common;

use common::sandbox::{start, Sandbox};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// A three-cloud cluster whose pool `h100` wants 2 nodes placed as
/// `placement` says.
fn spec(name: &str, placement: &str) -> String {
    let placement = format!("      wait_for_gpus = \"30s\"\n{placement}");
    let clouds = r#"  cloud "aws" {
    region = "us-east-1"
  }
  cloud "gcp" {
    project = "acme-ml"
    region  = "us-central1"
  }
  cloud "azure" {
    subscription_id = "00000000-0000-0000-0000-000000000000"
    location        = "eastus"
  }"#;
    common::gpu_cluster(name, r#"["aws", "gcp", "azure"]"#, &placement, clouds)
}

fn workdir(root: &Path, name: &str, placement: &str) -> PathBuf {
    common::spec_dir(root, name, &spec(name, placement))
}

/// `(cloud, capacity, zone)` of each failure recorded.
fn failures(p: &Json) -> Vec<(String, String, String)> {
    p["failed"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or("").to_string();
            (s("cloud"), s("capacity"), s("zone"))
        })
        .collect()
}

/// Sleeps until `secs` seconds after the RFC 3339 moment `from`.
fn wait_past(from: &str, secs: u64) {
    let from = time::OffsetDateTime::parse(from, &time::format_description::well_known::Rfc3339)
        .expect("a moment");
    let end = from + time::Duration::seconds(secs as i64 + 1);
    let left = end - time::OffsetDateTime::now_utc();
    if left.is_positive() {
        std::thread::sleep(std::time::Duration::from_secs_f64(left.as_seconds_f64()));
    }
}

/// The lines an apply printed about its attempts, in order.
fn attempts(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with("Placement of") && !l.contains("on the first of these"))
        .filter(|l| !l.contains(": first GPU after"))
        .collect()
}

/// What every run must leave: a second plan with nothing to do, and each
/// cloud holding the one pool state records (a failed attempt neither
/// doubled nor orphaned).
fn settled(sb: &Sandbox, work: &Path, name: &str) {
    let (code, out) = sb.strata(work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan is empty:\n{out}");
    assert!(out.contains("(where they are"), "{out}");
    assert_eq!(
        sb.eks_node_groups("us-east-1", name),
        vec!["h100".to_string()]
    );
    assert_eq!(sb.gke_node_pools(name), vec!["h100".to_string()]);
    assert_eq!(
        sb.aks_agent_pools(name, name),
        vec!["h100".to_string(), "system".to_string()]
    );
    let (code, list) = sb.strata(work, &["state", "list"]);
    assert_eq!(code, 0, "{list}");
    for pool in [
        format!("module.{name}_aws.aws_eks_node_group.pool[\"h100\"]"),
        format!("module.{name}_gcp.google_container_node_pool.pool[\"h100\"]"),
        format!("module.{name}_azure.azurerm_kubernetes_cluster_node_pool.pool[\"h100\"]"),
    ] {
        assert_eq!(list.lines().filter(|l| *l == pool).count(), 1, "{list}");
    }
}

#[test]
fn pools_fail_over_through_zones_capacity_types_and_clouds() {
    let dir = common::scratch("failover", "sandbox");
    let sb = start(&dir.join("sandbox"));

    // 1. Cheapest first (AWS spot). AWS has no spot capacity in the
    // region, found after create zone by zone (EKS's CREATE_FAILED with
    // the zone in its health issue); GCP refuses zone a at once. The
    // nodes land on GCP spot without that zone.
    sb.short(r#"{"cloud":"aws","region":"us-east-1","capacity":"spot","form":"after_create","available":false}"#);
    sb.short(r#"{"cloud":"gcp","region":"us-central1","zone":"us-central1-a","capacity":"spot","form":"refused","available":false}"#);
    let work = workdir(
        &dir,
        "zones",
        r#"      capacity               = ["spot", "on_demand"]
      max_price_per_gpu_hour = 6.0"#,
    );
    let (code, plan) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 0, "{plan}");
    assert!(
        plan.contains("→ 1. aws us-east-1 spot")
            && plan.contains(
                "skipped aws us-east-1 on-demand: $6.88 per GPU-hour, over the cap of $6.00"
            ),
        "the plan lists the candidates and what the cap rules out:\n{plan}"
    );
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let said = attempts(&out);
    let expected = [
        "aws us-east-1 spot (p5.48xlarge) had no capacity in zone us-east-1a",
        "trying aws us-east-1 spot without us-east-1a",
        "had no capacity in zone us-east-1b",
        "trying aws us-east-1 spot without us-east-1a, us-east-1b",
        "had no capacity in zone us-east-1c",
        "trying gcp us-central1 spot",
        "gcp us-central1 spot (a3-highgpu-8g) had no capacity in zone us-central1-a",
        "trying gcp us-central1 spot without us-central1-a",
    ];
    assert_eq!(said.len(), expected.len(), "{said:#?}\n{out}");
    for (line, want) in said.iter().zip(expected) {
        assert!(line.contains(want), "{line:?} says {want:?}:\n{out}");
    }
    assert!(out.contains("InsufficientInstanceCapacity"), "{out}");
    let p = common::placement(&work, "zones.h100");
    assert_eq!(p["chosen"]["cloud"], "gcp", "{p}");
    // Time to first GPU: from the placement's request to a node of the
    // pool offering allocatable GPUs (the stand-in's nodes offer theirs
    // 1.5 s after they join).
    let first = p["chosen"]["first_gpu_after"].as_f64().unwrap_or(0.0);
    assert!((1.5..60.0).contains(&first), "{p}");
    assert_eq!(p["chosen"]["ready_gpus"], 16, "2 × a3-highgpu-8g: {p}");
    assert!(
        out.contains(&format!("Placement of zones.h100: first GPU after {first:.1}s on gcp us-central1 spot (16 GPUs allocatable on 2 nodes).")),
        "{out}"
    );
    assert_eq!(
        p["chosen"]["without_zones"],
        serde_json::json!(["us-central1-a"])
    );
    assert_eq!(
        failures(&p),
        [
            ("aws", "spot", "us-east-1a"),
            ("aws", "spot", "us-east-1b"),
            ("aws", "spot", "us-east-1c"),
            ("gcp", "spot", "us-central1-a"),
        ]
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
    settled(&sb, &work, "zones");
    sb.plenty();

    // 2. An order of clouds, on-demand only: GCP's quota runs out after
    // the pool is made, Azure refuses the size in the region, AWS refuses
    // one zone; the nodes land on AWS without it.
    sb.short(r#"{"cloud":"gcp","region":"us-central1","form":"after_create","available":false}"#);
    sb.short(r#"{"cloud":"azure","region":"eastus","form":"refused","available":false}"#);
    sb.short(r#"{"cloud":"aws","region":"us-east-1","zone":"us-east-1a","form":"refused","available":false}"#);
    let work = workdir(
        &dir,
        "clouds",
        r#"      order    = ["gcp", "azure", "aws"]
      capacity = ["on_demand"]"#,
    );
    let (code, json) = sb.strata(&work, &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{json}");
    let plan: Json = serde_json::from_str(&json).expect("plan JSON");
    let placed = &plan["placements"][0];
    let clouds: Vec<&str> = placed["candidates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["cloud"].as_str())
        .collect();
    assert_eq!(clouds, ["gcp", "azure", "aws"], "{placed}");
    assert_eq!(
        (placed["chosen"].as_u64(), placed["nodes"].as_u64()),
        (Some(0), Some(2))
    );
    // Applied from a saved plan: the first round is the plan as saved.
    let (code, out) = sb.strata(&work, &["plan", "--out", "tfplan"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = sb.strata(&work, &["apply", "tfplan"]);
    assert_eq!(code, 0, "{out}");
    let said = attempts(&out).join("\n");
    for want in [
        "gcp us-central1 on-demand (a3-highgpu-8g) had no capacity in region us-central1",
        "trying azure eastus on-demand",
        "azure eastus on-demand (Standard_ND96isr_H100_v5) had no capacity in region eastus",
        "trying aws us-east-1 on-demand",
        "aws us-east-1 on-demand (p5.48xlarge) had no capacity in zone us-east-1a",
        "trying aws us-east-1 on-demand without us-east-1a",
    ] {
        assert!(said.contains(want), "{want:?}:\n{said}\n{out}");
    }
    assert!(
        out.contains("QUOTA_EXCEEDED") && out.contains("AllocationFailed"),
        "{out}"
    );
    let p = common::placement(&work, "clouds.h100");
    assert_eq!(p["chosen"]["cloud"], "aws", "{p}");
    assert_eq!(p["chosen"]["capacity"], "on_demand", "{p}");
    settled(&sb, &work, "clouds");
    sb.plenty();

    // 3. Capacity type within a cloud, then sticky placement, the end of
    // a cool-down, and --replace-placement.
    sb.short(r#"{"cloud":"azure","region":"eastus","capacity":"spot","form":"after_create","available":false}"#);
    let work = workdir(
        &dir,
        "kinds",
        r#"      order     = ["azure", "gcp", "aws"]
      capacity  = ["spot", "on_demand"]
      cool_down = "20s""#,
    );
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let said = attempts(&out).join("\n");
    assert!(
        said.contains("azure eastus spot (Standard_ND96isr_H100_v5) had no capacity")
            && said.contains("trying azure eastus on-demand"),
        "{said}\n{out}"
    );
    let p = common::placement(&work, "kinds.h100");
    assert_eq!(
        (&p["chosen"]["cloud"], &p["chosen"]["capacity"]),
        (&serde_json::json!("azure"), &serde_json::json!("on_demand")),
        "{p}"
    );
    settled(&sb, &work, "kinds");
    sb.plenty();
    let (code, out) = sb.strata(&work, &["plan", "--replace-placement", "a100"]);
    assert_eq!(code, 1, "an unknown pool is an error:\n{out}");
    assert!(
        out.contains("No placed node pool \"a100\"") && out.contains("kinds.h100"),
        "{out}"
    );
    // Past the cool-down, counted from the failure.
    let failed_at = p["failed"][0]["at_time"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    wait_past(&failed_at, 20);
    let (code, out) = sb.strata(&work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "the cool-down over, the nodes move back:\n{out}");
    assert!(
        out.contains("→ 1. azure eastus spot")
            && out.contains("a better place's cool-down ended; moves from azure eastus on-demand"),
        "{out}"
    );
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "kinds.h100");
    assert_eq!(p["chosen"]["capacity"], "spot", "{p}");
    assert!(failures(&p).is_empty(), "expired failures are dropped: {p}");
    settled(&sb, &work, "kinds");
    let (code, out) = sb.strata(
        &work,
        &[
            "plan",
            "--detailed-exitcode",
            "--replace-placement",
            "kinds.h100",
        ],
    );
    assert_eq!(code, 0, "already on the first candidate:\n{out}");
}

/// The crash harness for failover: `apply` killed (`kill -9`) at moments
/// that land in different rounds of the same failover (a create in
/// flight, a failure being recorded, the next round's plan, the wait for
/// GPUs); the next `apply` resumes it. The pool ends where an unbroken run
/// puts it, the failures seen before the kill are still recorded, and
/// every cloud holds exactly the pools state records: none made twice,
/// none orphaned.
#[test]
fn kill_9_mid_failover_resumes_without_duplicates_or_orphans() {
    let dir = common::scratch("failover", "crash");
    let sb = short_for_a_failover(&dir);
    for (i, after_ms) in [600u64, 1500, 2600, 3800, 5200].into_iter().enumerate() {
        let name = format!("crash{i}");
        let pool = format!("{name}.h100");
        let work = spot_then_on_demand(&dir, &name);
        let mut child = sb
            .quiet(&work, &["apply", "--auto-approve"])
            .spawn()
            .expect("apply starts");
        std::thread::sleep(std::time::Duration::from_millis(after_ms));
        let _ = child.kill();
        let _ = child.wait();
        let before = match work.join("terraform.tfstate").exists() {
            true => failures(&common::placement(&work, &pool)),
            false => Vec::new(),
        };
        let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
        assert_eq!(code, 0, "resumed after {after_ms} ms:\n{out}");
        let p = common::placement(&work, &pool);
        assert_eq!(
            (&p["chosen"]["cloud"], &p["chosen"]["capacity"]),
            (&serde_json::json!("gcp"), &serde_json::json!("spot")),
            "killed after {after_ms} ms: {p}"
        );
        assert_eq!(
            p["chosen"]["without_zones"],
            serde_json::json!(["us-central1-a"]),
            "{p}"
        );
        let after = failures(&p);
        for f in &before {
            assert!(
                after.contains(f),
                "{f:?} recorded before the kill is kept: {p}"
            );
        }
        assert!(
            p["chosen"]["first_gpu_after"].as_f64().is_some(),
            "the first GPU is timed even when the kill came first: {p}"
        );
        settled(&sb, &work, &name);
    }
}

/// A sandbox where AWS spot fails after create in every zone and GCP
/// spot is refused in us-central1-a: a failover of several rounds that
/// ends on GCP spot without that zone.
fn short_for_a_failover(dir: &Path) -> Sandbox {
    let sb = start(&dir.join("sandbox"));
    sb.short(r#"{"cloud":"aws","region":"us-east-1","capacity":"spot","form":"after_create","available":false}"#);
    sb.short(r#"{"cloud":"gcp","region":"us-central1","zone":"us-central1-a","capacity":"spot","form":"refused","available":false}"#);
    sb
}

/// A cluster `name` whose pool tries spot, then on-demand, under $6.
fn spot_then_on_demand(dir: &Path, name: &str) -> PathBuf {
    workdir(
        dir,
        name,
        r#"      capacity               = ["spot", "on_demand"]
      max_price_per_gpu_hour = 6.0"#,
    )
}

/// Ctrl-C mid-failover (issue 40): the round in flight finishes, no
/// further round starts, the state (placements included) is written and
/// the lock let go, exit 1; the next apply takes no lock over and ends
/// where an uninterrupted one does, with nothing doubled or orphaned.
#[test]
fn an_interrupted_failover_stops_between_rounds_and_resumes() {
    let dir = common::scratch("failover", "interrupt");
    let sb = short_for_a_failover(&dir);
    let mut stopped = 0;
    for (i, after_ms) in [600u64, 2600, 5200].into_iter().enumerate() {
        let name = format!("stop{i}");
        let pool = format!("{name}.h100");
        let work = spot_then_on_demand(&dir, &name);
        let child = sb
            .command(&work, &["apply", "--auto-approve"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("apply starts");
        std::thread::sleep(std::time::Duration::from_millis(after_ms));
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        let out = child.wait_with_output().expect("apply ends");
        let said = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(0) {
            // It had finished before the signal came.
            settled(&sb, &work, &name);
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(said.contains("Interrupt received"), "{said}");
        stopped += 1;
        assert!(
            !work.join("terraform.tfstate.journal").exists(),
            "the state was written whole: {said}"
        );
        let before = match work.join("terraform.tfstate").exists() {
            true => failures(&common::placement(&work, &pool)),
            false => Vec::new(),
        };
        let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
        assert_eq!(code, 0, "resumed after {after_ms} ms:\n{out}");
        assert!(
            !out.contains("no longer running"),
            "the interrupted run let its lock go:\n{out}"
        );
        let p = common::placement(&work, &pool);
        assert_eq!(
            (&p["chosen"]["cloud"], &p["chosen"]["capacity"]),
            (&serde_json::json!("gcp"), &serde_json::json!("spot")),
            "interrupted after {after_ms} ms: {p}"
        );
        let after = failures(&p);
        for f in &before {
            assert!(
                after.contains(f),
                "{f:?} recorded before the stop is kept: {p}"
            );
        }
        settled(&sb, &work, &name);
    }
    // A run that had finished before its signal tests nothing here.
    assert!(stopped >= 2, "only {stopped} of 3 runs were stopped midway");
}

/// `apply -json` through a failover of several rounds: every line on
/// stdout is one of the machine-readable UI's messages (a script parses
/// them all), the rounds' reports said as `log` messages and the next
/// round's changes as `planned_change`s.
#[test]
fn a_failover_under_json_says_every_round_as_ui_messages() {
    let dir = common::scratch("failover", "json");
    let sb = short_for_a_failover(&dir);
    let work = spot_then_on_demand(&dir, "json");
    let out = sb
        .command(&work, &["apply", "-auto-approve", "-json"])
        .output()
        .expect("apply runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let said = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{said}");
    let messages: Vec<Json> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?} in\n{said}")))
        .collect();
    let of = |kind: &str| messages.iter().filter(|m| m["type"] == kind).count();
    let logs: Vec<&str> = messages
        .iter()
        .filter(|m| m["type"] == "log")
        .filter_map(|m| m["@message"].as_str())
        .collect();
    assert!(
        logs.iter().any(|m| m.contains(": trying ")),
        "the next round's placement is said: {logs:?}"
    );
    assert!(
        of("planned_change") > 0 && of("apply_complete") > 0,
        "{said}"
    );
    settled(&sb, &work, "json");
}

/// Region before cloud: a cloud block listing `regions` has a cluster in
/// each, and a pool that finds no capacity anywhere in the first region
/// goes to the next region of the same cloud before another cloud. A
/// region then dropped from the list is deleted where it is (its provider
/// configuration kept from state for that), and the pool moves on.
#[test]
fn a_further_region_comes_before_the_next_cloud_and_a_dropped_one_is_deleted_there() {
    let dir = common::scratch("failover", "regions");
    let sb = start(&dir.join("sandbox"));
    sb.short(r#"{"cloud":"aws","region":"us-east-1","form":"refused","available":false}"#);
    let spec_with = |regions: &str| {
        spec(
            "reg",
            r#"      order    = ["aws", "gcp"]
      capacity = ["spot", "on_demand"]"#,
        )
        .replace(
            r#"clouds             = ["aws", "gcp", "azure"]"#,
            r#"clouds             = ["aws", "gcp"]"#,
        )
        .replace(r#"region = "us-east-1""#, &format!("regions = {regions}"))
    };
    let work = dir.join("reg");
    std::fs::create_dir_all(&work).expect("work");
    let write =
        |regions: &str| std::fs::write(work.join("cluster.hcl"), spec_with(regions)).expect("spec");
    write(r#"["us-east-1", "us-west-2"]"#);

    let (code, out) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 0, "{out}");
    let order: Vec<usize> = [
        "1. aws us-east-1 spot",
        "2. aws us-east-1 on-demand",
        "3. aws us-west-2 spot",
        "4. aws us-west-2 on-demand",
        "5. gcp us-central1 spot",
    ]
    .iter()
    .map(|c| out.find(c).unwrap_or_else(|| panic!("{c} in:\n{out}")))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{out}");
    assert!(
        out.contains("module.reg_aws_us_west_2.aws_eks_cluster.this will be created"),
        "{out}"
    );

    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "reg.h100");
    assert_eq!(
        (
            &p["chosen"]["cloud"],
            &p["chosen"]["region"],
            &p["chosen"]["capacity"]
        ),
        (
            &Json::from("aws"),
            &Json::from("us-west-2"),
            &Json::from("spot")
        ),
        "{p}"
    );
    let failed = failures(&p);
    assert_eq!(failed.len(), 6, "each zone with each capacity type: {p}");
    assert!(
        failed
            .iter()
            .all(|(cloud, _, zone)| cloud == "aws" && zone.starts_with("us-east-1")),
        "{p}"
    );
    assert_eq!(
        attempts(&out).last().copied(),
        Some("Placement of reg.h100: trying aws us-west-2 spot (p5.48xlarge, $1.59 per GPU-hour)."),
        "{out}"
    );
    assert!(p["chosen"]["first_gpu_after"].as_f64().is_some(), "{p}");
    let (code, out) = sb.strata(&work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan is empty:\n{out}");
    assert_eq!(
        sb.eks_clusters("us-west-2"),
        vec!["reg-us-west-2".to_string()]
    );
    assert_eq!(
        sb.eks_node_groups("us-west-2", "reg-us-west-2"),
        vec!["h100".to_string()]
    );

    write(r#"["us-east-1"]"#);
    let (code, out) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("module.reg_aws_us_west_2.aws_eks_cluster.this will be destroyed"),
        "{out}"
    );
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "reg.h100");
    assert_eq!(
        (&p["chosen"]["cloud"], &p["chosen"]["capacity"]),
        (&Json::from("gcp"), &Json::from("spot")),
        "us-east-1 is still cooling down: {p}"
    );
    assert!(
        sb.eks_clusters("us-west-2").is_empty(),
        "deleted in us-west-2"
    );
    let (code, list) = sb.strata(&work, &["state", "list"]);
    assert_eq!(code, 0, "{list}");
    assert!(!list.contains("reg_aws_us_west_2"), "{list}");
    let (code, out) = sb.strata(&work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan is empty:\n{out}");
}

/// The failure no API reports: the pool made and its nodes joining, but
/// no GPU of theirs ever allocatable. Only the watch of the cluster's
/// nodes finds it; after `wait_for_gpus` the place has failed like any
/// shortage and the nodes move on.
#[test]
fn nodes_whose_gpus_never_come_fail_over_after_wait_for_gpus() {
    let dir = common::scratch("failover", "no-gpus");
    let sb = start(&dir.join("sandbox"));
    sb.short(r#"{"cloud":"aws","region":"us-east-1","form":"no_gpus","available":false}"#);
    let work = workdir(
        &dir,
        "nogpu",
        r#"      order    = ["aws", "gcp", "azure"]
      capacity = ["on_demand"]"#,
    );
    let text = std::fs::read_to_string(work.join("cluster.hcl")).expect("spec");
    let text = text.replace(r#"wait_for_gpus = "30s""#, r#"wait_for_gpus = "6s""#);
    std::fs::write(work.join("cluster.hcl"), text).expect("spec");
    let started = std::time::Instant::now();
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(6),
        "the apply waited for GPUs first"
    );
    let p = common::placement(&work, "nogpu.h100");
    assert_eq!(
        (&p["chosen"]["cloud"], &p["chosen"]["capacity"]),
        (&Json::from("gcp"), &Json::from("on_demand")),
        "{p}"
    );
    assert_eq!(
        failures(&p),
        vec![("aws".to_string(), "on_demand".to_string(), String::new())],
        "{p}"
    );
    assert!(
        p["failed"][0]["reason"]
            .as_str()
            .is_some_and(|r| r
                .contains("no node of the pool offered an allocatable nvidia.com/gpu within 6s")),
        "{p}"
    );
    assert!(p["chosen"]["first_gpu_after"].as_f64().is_some(), "{p}");
    assert_eq!(p["chosen"]["ready_gpus"], 16, "{p}");
    settled(&sb, &work, "nogpu");
    // `strata cost` and the drift report show where the nodes run and
    // their time to first GPU; drift with the GPUs offered now.
    let first = p["chosen"]["first_gpu_after"].as_f64().unwrap_or_default();
    let line = "nogpu.h100: 2 × 8×H100 on gcp us-central1 on-demand (a3-highgpu-8g) since ";
    let (code, out) = sb.strata(&work, &["cost"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(line), "{out}");
    assert!(
        out.contains(&format!(
            "first GPU after {first:.1}s, 16 GPUs allocatable when placed"
        )),
        "{out}"
    );
    let (code, out) = sb.strata(&work, &["drift"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "first GPU after {first:.1}s, 16 GPUs allocatable now"
        )),
        "{out}"
    );
    let (code, out) = sb.strata(&work, &["drift", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let report: Json = serde_json::from_str(&out).expect("drift JSON");
    let placed = &report["placements"][0];
    assert_eq!(placed["ready_gpus_now"], 16, "{out}");
    assert_eq!(
        placed["placed"]["first_gpu_after"],
        Json::from(first),
        "{out}"
    );
}

/// README's failover demo as written: `examples/failover` copied, the
/// shortage README posts, then plan, apply and cost. The nodes land where
/// README's comment says, and the plan shows what it says it shows.
#[test]
fn the_readme_failover_demo_does_what_it_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    let demo = readme
        .split("A failover, shown:")
        .nth(1)
        .and_then(|rest| rest.split("```sh").nth(1))
        .and_then(|block| block.split("```").next())
        .expect("README's failover demo");
    let shortage = demo
        .split("-d '")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .expect("the shortage README posts");
    assert!(demo.contains("cp examples/failover/cluster.hcl"), "{demo}");
    assert!(demo.contains("the nodes land on us-west-2 spot"), "{demo}");

    let dir = common::scratch("failover", "readme");
    let sb = start(&dir.join("sandbox"));
    let work = dir.join("failover");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::copy(
        root.join("examples/failover/cluster.hcl"),
        work.join("cluster.hcl"),
    )
    .expect("the example");
    let (code, out) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 0, "{out}");
    for skipped in [
        "skipped aws us-east-1 on-demand: $6.88 per GPU-hour, over the cap of $6.00",
        "skipped azure eastus on-demand: $12.29 per GPU-hour, over the cap of $6.00",
    ] {
        assert!(out.contains(skipped), "{skipped}:\n{out}");
    }
    sb.short(shortage);
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "train.h100");
    assert_eq!(
        (&p["chosen"]["region"], &p["chosen"]["capacity"]),
        (&Json::from("us-west-2"), &Json::from("spot")),
        "{p}"
    );
    let (code, out) = sb.strata(&work, &["cost"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("train.h100: 2 × 8×H100 on aws us-west-2 spot (p5.48xlarge) since "),
        "{out}"
    );
    sb.plenty();
    let (code, out) = sb.strata(&work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "placement is sticky once capacity is back:\n{out}");
}

/// Nowhere with capacity: the apply fails saying so, and from then on the
/// wanted nodes are a pending change, not "No changes": `plan
/// -detailed-exitcode` exits 2 saying which pool runs nowhere, and so does
/// `strata drift`, in words and in the PR comment's markdown.
#[test]
fn nodes_placed_nowhere_are_a_pending_change() {
    let dir = common::scratch("failover", "nowhere");
    let sb = start(&dir.join("sandbox"));
    sb.short(r#"{"cloud":"aws","region":"us-east-1","form":"refused","available":false}"#);
    sb.short(r#"{"cloud":"gcp","region":"us-central1","form":"refused","available":false}"#);
    sb.short(r#"{"cloud":"azure","region":"eastus","form":"refused","available":false}"#);
    let work = workdir(
        &dir,
        "nowhere",
        r#"      order    = ["aws", "gcp", "azure"]
      capacity = ["on_demand"]"#,
    );
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("has no place with capacity"), "{out}");
    // GKE's quota refusal names no code, only words: still a shortage.
    assert!(
        out.contains(
            "gcp us-central1 on-demand (a3-highgpu-8g) had no capacity in region us-central1."
        ),
        "{out}"
    );
    let (code, out) = sb.strata(&work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "the wanted nodes are a change:\n{out}");
    assert!(!out.contains("No changes."), "{out}");
    assert!(
        out.contains("Node pool nowhere.h100 wants 2 node(s) and has no place with capacity"),
        "{out}"
    );
    let (code, out) = sb.strata(&work, &["plan", "--format", "markdown"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("has no place with capacity"), "{out}");
    assert!(!out.contains("no changes"), "{out}");
    let (code, out) = sb.strata(&work, &["drift"]);
    assert_eq!(code, 2, "drift reports it:\n{out}");
    assert!(out.contains("Unplaced node pools:"), "{out}");
    assert!(
        out.contains("nowhere.h100: 2 × 8×H100 wanted, running nowhere"),
        "{out}"
    );
}

/// The plan's candidate lines, each with its placement score.
fn scored(plan: &str) -> Vec<&str> {
    plan.lines()
        .filter(|l| l.contains("/GPU-h  score") || l.contains("unpriced  score"))
        .collect()
}

/// An apply that goes where the plan said at once: no place tried and
/// found short.
fn applies_meeting_no_shortage(sb: &Sandbox, work: &Path) {
    let (code, out) = sb.strata(work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        attempts(&out),
        Vec::<&str>::new(),
        "nothing was tried and failed:\n{out}"
    );
}

/// A pool that sets `min_score` asks the clouds' placement scores before
/// anything is tried. AWS scores its spot capacity in us-east-1 at 1 (the
/// sandbox scores a region short of it so; GCP's advice gives 9 where it
/// has capacity): the plan shows the score and
/// puts that place after every other, so the apply goes straight to the
/// next one, meeting no shortage; the place is still listed, to be tried
/// when nothing else is left.
#[test]
fn a_low_placement_score_is_tried_after_the_others() {
    let dir = common::scratch("failover", "scores");
    let sb = start(&dir.join("sandbox"));
    sb.short(r#"{"cloud":"aws","region":"us-east-1","capacity":"spot","form":"after_create","available":false}"#);
    let work = workdir(
        &dir,
        "scored",
        r#"      capacity               = ["spot", "on_demand"]
      max_price_per_gpu_hour = 6.0
      min_score              = 5"#,
    );
    let (code, plan) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 0, "{plan}");
    let listed = scored(&plan);
    assert!(
        listed
            .first()
            .is_some_and(|l| l.contains("→ 1. gcp us-central1 spot") && l.contains("score  9")),
        "GCP's capacity advice scores its spot place 9; the cheapest place left first:\n{plan}"
    );
    assert!(
        listed.iter().any(|l| l.contains("aws us-east-1 spot")
            && l.contains("score  1, under min_score 5: tried after the others")),
        "{plan}"
    );
    applies_meeting_no_shortage(&sb, &work);
    assert_eq!(
        common::placement(&work, "scored.h100")["chosen"]["cloud"],
        "gcp"
    );
    let (code, out) = sb.strata(&work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "placement stays where it went:\n{out}");
}

/// The same through Azure's Spot Placement Score, whose `Low` is 2 on the
/// one scale: with the clouds in the spec's order, Azure's spot place
/// goes after every other and the nodes go to its on-demand one, with no
/// shortage met.
#[test]
fn azures_low_spot_score_is_tried_after_the_others() {
    let dir = common::scratch("failover", "azure-scores");
    let sb = start(&dir.join("sandbox"));
    sb.short(r#"{"cloud":"azure","region":"eastus","capacity":"spot","form":"after_create","available":false}"#);
    let work = workdir(
        &dir,
        "azscored",
        r#"      order     = ["azure", "aws", "gcp"]
      capacity  = ["spot", "on_demand"]
      min_score = 5"#,
    );
    let (code, plan) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 0, "{plan}");
    let listed = scored(&plan);
    assert!(
        listed
            .first()
            .is_some_and(|l| l.contains("→ 1. azure eastus on-demand")),
        "{plan}"
    );
    assert!(
        listed
            .last()
            .is_some_and(|l| l.contains("azure eastus spot")
                && l.contains("score  2, under min_score 5: tried after the others")),
        "{plan}"
    );
    applies_meeting_no_shortage(&sb, &work);
    let p = common::placement(&work, "azscored.h100");
    assert_eq!(
        (
            p["chosen"]["cloud"].as_str(),
            p["chosen"]["capacity"].as_str()
        ),
        (Some("azure"), Some("on_demand")),
        "{p}"
    );
}
