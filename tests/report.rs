//! `strata report` over a month of drift runs on the sandbox: a daily
//! drift cron (each run at its day through `STRATA_NOW`), a pool that
//! moves from AWS spot to GCP spot halfway, one instance interrupted as
//! EC2 records it, two of its GCP VMs preempted
//! and one deleted by a scale-down as GCP records them, and the report's
//! figures held to the script's — GPU-hours, their cost at each place's
//! price, the preemption rate, the move's time to first GPU in its three
//! parts — in the three formats; a drift run killed with SIGKILL or
//! interrupted with Ctrl-C loses no
//! earlier history.

mod common;

use common::sandbox::{start, Sandbox};
use serde_json::Value as Json;
use std::path::Path;
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

/// Two clouds; the pool's `nodes` nodes of 8 H100s, placed on the clouds
/// of `order` and the capacity types of `capacity` in turn.
fn spec(order: &str, capacity: &str, nodes: u32) -> String {
    let placement = format!(
        "      wait_for_gpus = \"30s\"\n      order         = {order}\n      capacity      = {capacity}"
    );
    let clouds = "  cloud \"aws\" {\n    region = \"us-east-1\"\n  }\n  cloud \"gcp\" {\n    project = \"acme-ml\"\n    region  = \"us-central1\"\n  }";
    let text = common::gpu_cluster("rep", r#"["aws", "gcp"]"#, &placement, clouds);
    text.replace("nodes         = 2", &format!("nodes         = {nodes}"))
        .replace(
            "max_nodes     = 4",
            &format!("max_nodes     = {}", if nodes < 2 { nodes } else { 4 }),
        )
}

/// Now, to the second: the first day of a scripted month.
fn day_zero() -> OffsetDateTime {
    OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .expect("whole seconds")
}

/// A drift run at `now`, which must succeed.
fn drift_at(sb: &Sandbox, work: &Path, now: OffsetDateTime) {
    let (code, out) = strata_at(sb, work, now, &["drift"]);
    assert_eq!(code, 0, "{}:\n{out}", stamp(now));
}

fn stamp(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).expect("a time")
}

/// `strata ARGS` at the moment `now`.
fn strata_at(sb: &Sandbox, work: &Path, now: OffsetDateTime, args: &[&str]) -> (i32, String) {
    let mut c = sb.command(work, args);
    c.env("STRATA_NOW", stamp(now));
    common::output(c)
}

/// What a GPU-hour costs on `cloud`'s `capacity` candidate, in
/// millionths of a dollar, as the plan prices it.
fn gpu_hour_micros(sb: &Sandbox, work: &Path, (cloud, capacity): (&str, &str)) -> u64 {
    let (code, out) = sb.strata(work, &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let plan: Json = serde_json::from_str(&out).expect("plan JSON");
    let price = plan["placements"][0]["candidates"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["cloud"] == cloud && c["capacity"] == capacity)
        .and_then(|c| c["gpu_hour"].as_str())
        .unwrap_or_else(|| panic!("a {cloud} price in {out}"))
        .to_string();
    micros(&price)
}

fn micros(decimal: &str) -> u64 {
    let (whole, frac) = decimal.split_once('.').unwrap_or((decimal, ""));
    let whole: u64 = whole.parse().expect("dollars");
    let frac: u64 = format!("{frac:0<6}").parse().expect("millionths");
    whole * 1_000_000 + frac
}

fn row<'a>(report: &'a Json, cloud: &str) -> &'a Json {
    report["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["cloud"] == cloud)
        .unwrap_or_else(|| panic!("a {cloud} row in {report}"))
}

fn history_lines(work: &Path) -> Vec<String> {
    std::fs::read_to_string(work.join("terraform.tfstate.history"))
        .expect("the history beside the state")
        .lines()
        .map(str::to_string)
        .collect()
}

/// Applies, then takes in what the clouds filled in after (an Elastic
/// IP's association once its NAT gateway exists), so that a drift run
/// finds none.
fn apply(sb: &Sandbox, work: &Path, more: &[&str]) {
    let applying = [&["apply", "--auto-approve"][..], more].concat();
    for args in [&applying[..], &["refresh"]] {
        let (code, out) = sb.strata(work, args);
        assert_eq!(code, 0, "{args:?}:\n{out}");
    }
}

#[test]
fn a_month_of_drift_runs_gives_the_scripts_figures_in_three_formats() {
    let dir = common::scratch("report", "month");
    let sb = start(&dir.join("sandbox"));
    let spot_first = r#"["spot", "on_demand"]"#;
    let work = common::spec_dir(&dir, "rep", &spec(r#"["aws", "gcp"]"#, spot_first, 2));
    apply(&sb, &work, &[]);
    let aws_price = gpu_hour_micros(&sb, &work, ("aws", "spot"));
    let t0 = day_zero();
    let day = |d: i64| t0 + Duration::days(d);
    let drift_on = |d: i64| drift_at(&sb, &work, day(d));
    // EC2 interrupts a Spot Instance on day 5; a training run sends 12 GB
    // out through the cluster's NAT gateway on day 8.
    (0..6).for_each(drift_on);
    sb.preempt("aws", "h100", 1, &stamp(day(5) + Duration::hours(12)));
    (6..9).for_each(drift_on);
    sb.egress("aws", 12_000_000_000, &stamp(day(8) + Duration::hours(3)));
    (9..15).for_each(drift_on);
    // Halfway, GCP goes first and the placement is made again: the nodes
    // move there.
    let moved = spec(r#"["gcp", "aws"]"#, spot_first, 2);
    std::fs::write(work.join("cluster.hcl"), moved).expect("spec");
    apply(&sb, &work, &["--replace-placement", "rep.h100"]);
    let placed = common::placement(&work, "rep.h100")["chosen"].clone();
    assert_eq!(
        (&placed["cloud"], &placed["capacity"]),
        (&Json::from("gcp"), &Json::from("spot")),
        "{placed}"
    );
    let gcp_price = gpu_hour_micros(&sb, &work, ("gcp", "spot"));
    // GCP preempts a VM on days 19 and 24; on day 27 the pool's ceiling
    // drops to one node, its group deleting the other.
    // A training run sends 40 GB out through GCP's Cloud NAT on days 17
    // and 22; what it sends after the period is not counted.
    (15..18).for_each(drift_on);
    sb.egress("gcp", 25_000_000_000, &stamp(day(17) + Duration::hours(3)));
    (18..20).for_each(drift_on);
    sb.preempt("gcp", "h100", 1, &stamp(day(19) + Duration::hours(12)));
    (20..23).for_each(drift_on);
    sb.egress("gcp", 15_000_000_000, &stamp(day(22) + Duration::hours(3)));
    (23..25).for_each(drift_on);
    sb.preempt("gcp", "h100", 1, &stamp(day(24) + Duration::hours(12)));
    (25..28).for_each(drift_on);
    sb.set_clock(&stamp(day(27) + Duration::hours(1)));
    let shrunk = spec(r#"["gcp", "aws"]"#, spot_first, 1);
    std::fs::write(work.join("cluster.hcl"), shrunk).expect("spec");
    apply(&sb, &work, &[]);
    (28..30).for_each(drift_on);
    sb.egress("gcp", 99, &stamp(day(30) + Duration::hours(1)));
    drift_on(30);
    assert_eq!(history_lines(&work).len(), 31, "one line per drift run");

    let period = ["--since", &stamp(t0), "--until", &stamp(day(30))].map(str::to_string);
    let report_as = |format: &str| {
        let mut args: Vec<&str> = vec!["report", "--format", format];
        args.extend(period.iter().map(String::as_str));
        let (code, out) = sb.strata(&work, &args);
        assert_eq!(code, 0, "{out}");
        out
    };
    let json_text = report_as("json");
    let report: Json = serde_json::from_str(&json_text).expect("report JSON");
    assert_eq!(report["observations"], 30, "{report}");
    assert_eq!(report["longest_gap_hours"], 24.0, "{report}");
    // AWS: 16 GPUs for 15 days. GCP: 16 for 13 days, then 8 for 2.
    let aws_hours = 16 * 15 * 24;
    let gcp_hours = 16 * 13 * 24 + 8 * 2 * 24;
    for (cloud, price, hours) in [("aws", aws_price, aws_hours), ("gcp", gcp_price, gcp_hours)] {
        let r = row(&report, cloud);
        assert_eq!(r["gpu_hours"], hours as f64, "{r}");
        let cost = micros(r["cost_usd"].as_str().expect("a cost"));
        assert_eq!(cost, price * hours, "{cloud}: {r}");
    }
    // One interrupted of one stopped, as EC2 recorded it.
    let aws = row(&report, "aws");
    assert_eq!(aws["preemption_rate"], 1.0, "{aws}");
    let per_1000 = 1000.0 / aws_hours as f64;
    assert_eq!(aws["preemptions_per_1000_gpu_hours"], per_1000, "{aws}");
    // A daily cron outlasts the hour EC2 shows a terminated instance for:
    // the figure says what it may miss.
    let why = aws["why"]["preemption_rate"].as_str().unwrap_or_default();
    assert!(
        why.contains("about an hour") && why.contains("24.0 h"),
        "{aws}"
    );
    // Two preempted of three stopped, as GCP recorded them.
    let gcp = row(&report, "gcp");
    assert_eq!(gcp["preemption_rate"], 2.0 / 3.0, "{gcp}");
    assert_eq!(
        gcp["preemptions_per_1000_gpu_hours"],
        2000.0 / gcp_hours as f64,
        "{gcp}"
    );
    assert!(gcp["why"]["preemption_rate"].is_null(), "{gcp}");
    // Egress as each cloud metered it: Cloud Monitoring's and CloudWatch's.
    assert_eq!(gcp["egress_bytes"], 40_000_000_000u64, "{gcp}");
    assert_eq!(aws["egress_bytes"], 12_000_000_000u64, "{aws}");
    assert!(aws["why"]["egress_bytes"].is_null(), "{aws}");
    // The move's time to first GPU is the one state measured, in three
    // parts that add up to it; AWS's placement was made before the period.
    let first = placed["first_gpu_after"].as_f64().expect("measured");
    assert_eq!(gcp["time_to_first_gpu_seconds"], first, "{gcp}");
    let parts = &gcp["time_to_first_gpu_segments"];
    let sum: f64 = ["pool_creation", "node_join", "gpu_ready"]
        .iter()
        .map(|p| parts[p].as_f64().unwrap_or_else(|| panic!("{p} in {gcp}")))
        .sum();
    assert!((sum - first).abs() < 0.3, "{parts} adds up to {first}");
    assert!(parts["gpu_ready"].as_f64() > Some(1.0), "{parts}");

    let human = report_as("human");
    let markdown = report_as("markdown");
    let aws_cost = row(&report, "aws")["cost_usd"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let dollars = aws_cost.split('.').next().unwrap_or("").to_string();
    for text in [&human, &markdown] {
        assert!(text.contains("aws us-east-1"), "{text}");
        assert!(text.contains("gcp us-central1"), "{text}");
        assert!(text.contains("5760.0"), "{text}");
        assert!(text.contains("66.7 %"), "{text}");
        let flat = text.replace([' ', '\u{2009}'], "");
        assert!(flat.contains(&dollars), "{dollars} in {text}");
        assert!(text.contains("40.0 GB"), "{text}");
        assert!(text.contains("12.0 GB"), "{text}");
    }
    assert!(
        markdown.contains("| aws us-east-1 | rep.h100 | spot | 5760.0 |"),
        "{markdown}"
    );

    // A drift run killed midway leaves the history it found, and the
    // next run adds to it.
    let before = history_lines(&work);
    let mut child = sb.command(&work, &["drift"]);
    child.env("STRATA_NOW", stamp(day(31)));
    let mut child = child
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("drift starts");
    let wait = 300 + u64::from(std::process::id() % 2500);
    std::thread::sleep(std::time::Duration::from_millis(wait));
    let _ = child.kill();
    let _ = child.wait();
    let after = history_lines(&work);
    assert!(
        after.starts_with(&before),
        "killed after {wait} ms: the earlier history is intact"
    );
    assert_eq!(report_as("json"), json_text, "and reports the same");
    let (code, out) = strata_at(&sb, &work, day(32), &["drift"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(history_lines(&work).len(), after.len() + 1);

    // Ctrl-C midway: the run ends with its line written whole or not at
    // all, and lets go of the state's lock, so the next run goes on.
    let before = history_lines(&work);
    let mut child = sb.command(&work, &["drift"]);
    child.env("STRATA_NOW", stamp(day(33)));
    let mut child = child
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("drift starts");
    std::thread::sleep(std::time::Duration::from_millis(wait));
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let _ = child.wait();
    let after = history_lines(&work);
    assert!(
        after.starts_with(&before) && after.len() <= before.len() + 1,
        "interrupted after {wait} ms: the history is what it was, or one whole line more"
    );
    for line in &after {
        serde_json::from_str::<Json>(line).expect("each line whole");
    }
    let (code, out) = strata_at(&sb, &work, day(34), &["drift"]);
    assert_eq!(code, 0, "the lock was let go:\n{out}");
    assert_eq!(history_lines(&work).len(), after.len() + 1);
}

/// Azure's own record, read as the driver reads it: an eviction as
/// Resource Health annotates it (through Resource Graph) and bytes out as
/// Azure Monitor meters the cluster's outbound load balancer.
#[test]
fn azure_evictions_and_egress_come_from_resource_health_and_azure_monitor() {
    let dir = common::scratch("report", "azure");
    let sb = start(&dir.join("sandbox"));
    let placement =
        "      wait_for_gpus = \"30s\"\n      capacity      = [\"spot\", \"on_demand\"]";
    let blocks = "  cloud \"azure\" {\n    subscription_id = \"00000000-0000-0000-0000-000000000000\"\n    location        = \"eastus\"\n  }";
    let text = common::gpu_cluster("az", "[\"azure\"]", placement, blocks);
    let work = common::spec_dir(&dir, "az", &text);
    apply(&sb, &work, &[]);
    let t0 = day_zero();
    let day = |d: i64| t0 + Duration::days(d);
    let drift_on = |d: i64| drift_at(&sb, &work, day(d));
    (0..2).for_each(drift_on);
    sb.preempt("azure", "h100", 1, &stamp(day(1) + Duration::hours(6)));
    drift_on(2);
    sb.egress("azure", 7_000_000_000, &stamp(day(2) + Duration::hours(2)));
    (3..5).for_each(drift_on);
    // Sent after the period: not counted.
    sb.egress("azure", 5, &stamp(day(5) + Duration::hours(1)));

    let period = ["--since", &stamp(t0), "--until", &stamp(day(4))];
    let (code, out) = sb.strata(
        &work,
        &[&["report", "--format", "json"][..], &period].concat(),
    );
    assert_eq!(code, 0, "{out}");
    let report: Json = serde_json::from_str(&out).expect("report JSON");
    let azure = row(&report, "azure");
    assert_eq!(azure["preemption_rate"], 1.0, "{azure}");
    let why = azure["why"]["preemption_rate"].as_str().unwrap_or_default();
    assert!(
        why.contains("scale-down"),
        "the figure says what it leaves out: {azure}"
    );
    assert_eq!(azure["egress_bytes"], 7_000_000_000u64, "{azure}");
    assert!(azure["why"]["egress_bytes"].is_null(), "{azure}");
    let (code, markdown) = sb.strata(
        &work,
        &[&["report", "--format", "markdown"][..], &period].concat(),
    );
    assert_eq!(code, 0, "{markdown}");
    assert!(
        markdown.contains("azure eastus") && markdown.contains("7.0 GB"),
        "{markdown}"
    );
}
