//! Capacity held ahead as a placement's first candidates, through the
//! sandbox: an On-Demand Capacity Reservation and a Capacity Block for ML
//! made in the proxy's EC2 API as a user makes them (create; offerings and
//! purchase), named by a pool's `reserved` block. The plan puts the nodes
//! there before the spot and on-demand ladder and says it is paid for; the
//! launch template targets the reservation; a block not begun is passed
//! over, and one nearing its end is left for the next place in time.

#[path = "common/aws_mirror.rs"]
mod aws_mirror;
mod common;
#[path = "common/oracle.rs"]
mod oracle;

use common::sandbox::{start, Sandbox};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

const REGION: &str = "us-east-1";

/// A cluster on AWS and GCP, with `reserved` (blocks) in its placement,
/// spot first.
fn spec(name: &str, reserved: &str) -> String {
    let placement = format!("      order         = [\"aws\", \"gcp\"]\n      capacity      = [\"spot\", \"on_demand\"]\n      wait_for_gpus = \"30s\"\n{reserved}");
    let blocks = format!("  cloud \"aws\" {{\n    region = \"{REGION}\"\n  }}\n  cloud \"gcp\" {{\n    project = \"acme-ml\"\n    region  = \"us-central1\"\n  }}");
    common::gpu_cluster(name, "[\"aws\", \"gcp\"]", &placement, &blocks)
}

fn workdir(root: &Path, name: &str, reserved: &str) -> PathBuf {
    common::spec_dir(root, name, &spec(name, reserved))
}

/// The text of the first `<tag>` in `xml`.
fn xml_field<'x>(xml: &'x str, tag: &str) -> Option<&'x str> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(&xml[start..end])
}

/// The latest version of launch template `name`, as EC2 answers.
fn launch_template(sb: &Sandbox, name: &str) -> String {
    let (status, xml) = sb.ec2(
        REGION,
        &format!("Action=DescribeLaunchTemplateVersions&LaunchTemplateName={name}&LaunchTemplateVersion.1=%24Latest"),
    );
    assert_eq!(status, 200, "{xml}");
    xml
}

fn reserve(sb: &Sandbox, zone: &str, count: u32) -> String {
    reserve_of(sb, "p5.48xlarge", zone, count)
}

fn reserve_of(sb: &Sandbox, instance_type: &str, zone: &str, count: u32) -> String {
    let (status, xml) = sb.ec2(
        REGION,
        &format!("Action=CreateCapacityReservation&InstanceType={instance_type}&InstancePlatform=Linux%2FUNIX&AvailabilityZone={zone}&InstanceCount={count}"),
    );
    assert_eq!(status, 200, "{xml}");
    xml_field(&xml, "capacityReservationId")
        .expect("an id")
        .to_string()
}

/// An On-Demand Capacity Reservation named by the pool is its first
/// place: the plan shows it committed, with what the cloud says of it; the
/// apply puts both nodes there (launch template targeting it, the node
/// group on-demand in its zone only) and records it; the next plan is
/// empty. One too small for the pool is passed over, saying why.
#[test]
fn a_capacity_reservation_is_used_before_the_ladder() {
    let dir = common::scratch("reserved", "odcr");
    let sb = start(&dir.join("sandbox"));
    let small = reserve(&sb, "us-east-1a", 1);
    let id = reserve(&sb, "us-east-1b", 2);
    let work = workdir(
        &dir,
        "held",
        &format!("      reserved \"aws\" {{\n        id = \"{small}\"\n      }}\n      reserved \"aws\" {{\n        id = \"{id}\"\n      }}"),
    );
    let (code, plan) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 0, "{plan}");
    let chosen = plan.lines().find(|l| l.contains('→')).unwrap_or_default();
    assert!(
        chosen.contains(&format!("1. aws us-east-1 reserved {id}")) && chosen.contains("committed"),
        "{plan}"
    );
    let row = plan
        .lines()
        .find(|l| l.contains("aws_eks_node_group.pool[\"h100\"]") && l.contains(" · "))
        .unwrap_or_default();
    assert!(
        row.contains("reserved (committed)") && row.contains("$0.00"),
        "the nodes on it cost nothing more: {row}\n{plan}"
    );
    assert!(
        plan.contains(&format!(
            "reserved {id} until cancelled: all 2 instances used"
        )),
        "{plan}"
    );
    assert!(
        plan.contains(&format!(
            "{id}: 2 × p5.48xlarge in us-east-1b, 2 free now, until cancelled"
        )),
        "{plan}"
    );
    assert!(
        plan.contains(&format!(
            "skipped aws us-east-1 reserved {small}: {small} holds 1 instances; the pool wants 2"
        )),
        "{plan}"
    );
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "held.h100");
    assert_eq!(p["chosen"]["capacity"], "reserved", "{p}");
    assert_eq!(
        p["chosen"]["reservation"].as_str(),
        Some(id.as_str()),
        "{p}"
    );
    let lt = launch_template(&sb, "held-h100");
    assert_eq!(
        xml_field(&lt, "capacityReservationId"),
        Some(id.as_str()),
        "{lt}"
    );
    assert_eq!(xml_field(&lt, "marketType"), None, "{lt}");
    let group = sb.eks_node_group(REGION, "held", "h100");
    assert_eq!(group["capacityType"], "ON_DEMAND", "{group}");
    assert_eq!(group["scalingConfig"]["desiredSize"], 2, "{group}");
    assert_eq!(
        group["subnets"].as_array().map(Vec::len),
        Some(1),
        "the reservation's zone only: {group}"
    );
    let (code, out) = sb.strata(&work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "nothing left to do:\n{out}");

    let (code, json) = sb.strata(&work, &["cost", "--format", "json"]);
    assert_eq!(code, 0, "{json}");
    let cost: Json = serde_json::from_str(&json).expect("cost JSON");
    let pool = cost["resources"]
        .as_array()
        .and_then(|p| p.iter().find(|p| !p["committed"].is_null()))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (
            pool["committed"]["id"].as_str(),
            pool["committed"]["kind"].as_str(),
            pool["committed"]["instances"].as_u64(),
            pool["committed"]["unused"].as_u64(),
            pool["node_hour"].as_f64(),
        ),
        (
            Some(id.as_str()),
            Some("reserved"),
            Some(2),
            Some(0),
            Some(0.0)
        ),
        "{json}"
    );
    assert_eq!(
        pool["prior"]["node_hour"].as_f64(),
        Some(0.0),
        "on the reservation before as now: no change in cost\n{json}"
    );
    let (code, md) = sb.strata(&work, &["cost", "--format", "markdown"]);
    assert_eq!(code, 0, "{md}");
    assert!(
        md.contains(&format!(
            "committed: reserved {id} until cancelled: all 2 instances used"
        )),
        "{md}"
    );

    // A reservation of another instance type is an error at its block.
    let other = sb.ec2(
        REGION,
        "Action=CreateCapacityReservation&InstanceType=p4d.24xlarge&InstancePlatform=Linux%2FUNIX&AvailabilityZone=us-east-1a&InstanceCount=2",
    );
    let other = xml_field(&other.1, "capacityReservationId")
        .expect("an id")
        .to_string();
    let wrong = workdir(
        &dir,
        "wrong",
        &format!("      reserved \"aws\" {{\n        id = \"{other}\"\n      }}"),
    );
    let (code, out) = sb.strata(&wrong, &["plan"]);
    assert_eq!(code, 1, "{out}");
    // The message as one line, however the terminal wraps it.
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        out.contains("Reserved capacity of another instance type")
            && out.contains(&format!(
                "{other} holds p4d.24xlarge instances; node_pool \"h100\" runs p5.48xlarge on aws us-east-1."
            )),
        "{out}"
    );
}

/// A Capacity Block bought through EC2's offerings: before it begins it
/// is passed over (the nodes go to spot meanwhile); once begun (the clock
/// moved on) the nodes move off spot onto it — launch template with the
/// `capacity-block` market and the block as target, node group
/// `CAPACITY_BLOCK`; within the hour before its end the plan leaves it
/// for the next place, so the block's nodes are gone before EC2 takes the
/// instances back.
#[test]
fn a_capacity_block_is_used_while_it_lasts() {
    let dir = common::scratch("reserved", "block");
    let sb = start(&dir.join("sandbox"));
    let (status, offers) = sb.ec2(
        REGION,
        "Action=DescribeCapacityBlockOfferings&InstanceType=p5.48xlarge&InstanceCount=2&CapacityDurationHours=24",
    );
    assert_eq!(status, 200, "{offers}");
    let offer = xml_field(&offers, "capacityBlockOfferingId").expect("an offering");
    let (status, bought) = sb.ec2(
        REGION,
        &format!("Action=PurchaseCapacityBlock&CapacityBlockOfferingId={offer}&InstancePlatform=Linux%2FUNIX"),
    );
    assert_eq!(status, 200, "{bought}");
    let id = xml_field(&bought, "capacityReservationId")
        .expect("an id")
        .to_string();
    let start_at = xml_field(&bought, "startDate")
        .expect("a start")
        .to_string();
    let end_at = xml_field(&bought, "endDate").expect("an end").to_string();
    let at = |t: &str, minutes: i64| {
        let t = time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339)
            .expect("a date");
        (t + time::Duration::minutes(minutes))
            .format(&time::format_description::well_known::Rfc3339)
            .expect("format")
    };
    let work = workdir(
        &dir,
        "block",
        &format!("      reserved \"aws\" {{\n        id = \"{id}\"\n      }}"),
    );

    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "skipped aws us-east-1 capacity-block {id}: {id} starts at {start_at}"
        )),
        "{out}"
    );
    assert_eq!(
        common::placement(&work, "block.h100")["chosen"]["capacity"],
        "spot"
    );

    let begun = at(&start_at, 60);
    sb.set_clock(&begun);
    let mut apply = sb.command(&work, &["apply", "--auto-approve"]);
    apply.env("STRATA_NOW", &begun);
    let (code, out) = common::output(apply);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "reserved capacity, paid for whether used or not; moves from aws us-east-1 spot"
        ),
        "the nodes move onto the block once it has begun:\n{out}"
    );
    let p = common::placement(&work, "block.h100");
    assert_eq!(p["chosen"]["capacity"], "capacity_block", "{p}");
    let lt = launch_template(&sb, "block-h100");
    assert_eq!(
        xml_field(&lt, "capacityReservationId"),
        Some(id.as_str()),
        "{lt}"
    );
    assert_eq!(xml_field(&lt, "marketType"), Some("capacity-block"), "{lt}");
    assert_eq!(xml_field(&lt, "instanceType"), Some("p5.48xlarge"), "{lt}");
    let group = sb.eks_node_group(REGION, "block", "h100");
    assert_eq!(group["capacityType"], "CAPACITY_BLOCK", "{group}");
    assert_eq!(group["scalingConfig"]["desiredSize"], 2, "{group}");

    // A change that makes a new launch template version: EKS takes the
    // block's node group's new version only at zero nodes (the stand-in
    // refuses it otherwise), so the driver scales it down and back.
    let before = sb.eks_node_group(REGION, "block", "h100")["launchTemplate"]["version"].clone();
    let spec_file = work.join("cluster.hcl");
    let text = std::fs::read_to_string(&spec_file).expect("spec");
    let labelled = text.replacen(
        "labels        = { workload = \"training\" }",
        "labels        = { workload = \"training\", team = \"ml\" }",
        1,
    );
    assert_ne!(labelled, text, "a label is added");
    std::fs::write(&spec_file, labelled).expect("spec");
    let mut apply = sb.command(&work, &["apply", "--auto-approve"]);
    apply.env("STRATA_NOW", &begun);
    let (code, out) = common::output(apply);
    assert_eq!(code, 0, "{out}");
    let group = sb.eks_node_group(REGION, "block", "h100");
    assert_ne!(
        group["launchTemplate"]["version"], before,
        "a new version: {group}"
    );
    assert_eq!(
        group["scalingConfig"]["desiredSize"], 2,
        "back to its nodes: {group}"
    );

    let ending = at(&end_at, -30);
    sb.set_clock(&ending);
    let mut plan = sb.command(&work, &["plan"]);
    plan.env("STRATA_NOW", &ending);
    let (code, out) = common::output(plan);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "{id} ends at {end_at}: nodes leave a Capacity Block an hour before its end"
        )) && out.contains(&format!("moves from aws us-east-1 capacity-block {id}")),
        "{out}"
    );
    let mut apply = sb.command(&work, &["apply", "--auto-approve"]);
    apply.env("STRATA_NOW", &ending);
    let (code, out) = common::output(apply);
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "block.h100");
    assert_ne!(p["chosen"]["capacity"], "capacity_block", "{p}");
    let group = sb.eks_node_group(REGION, "block", "h100");
    assert_ne!(
        group["capacityType"], "CAPACITY_BLOCK",
        "off the block: {group}"
    );
}

/// A Capacity Block bought through the AWS provider's own types (the
/// offering data source, the reservation resource), as a Terraform user
/// writes it.
const BUY_A_BLOCK: &str = r#"
provider "aws" {
  region = "us-east-1"
}

data "aws_ec2_capacity_block_offering" "h100" {
  instance_type           = "p5.48xlarge"
  instance_count          = 2
  capacity_duration_hours = 48
  start_date_range        = "2026-12-10T00:00:00Z"
  end_date_range          = "__END__"
}

resource "aws_ec2_capacity_block_reservation" "h100" {
  capacity_block_offering_id = data.aws_ec2_capacity_block_offering.h100.capacity_block_offering_id
  instance_platform          = "Linux/UNIX"
  tags = {
    team = "__TEAM__"
  }
}

output "block" {
  value = aws_ec2_capacity_block_reservation.h100.id
}

output "fee" {
  value = data.aws_ec2_capacity_block_offering.h100.upfront_fee
}
"#;

fn buy_config(work: &Path, end: &str, team: &str) {
    std::fs::create_dir_all(work).expect("work");
    let text = BUY_A_BLOCK
        .replace("__END__", end)
        .replace("__TEAM__", team);
    std::fs::write(work.join("main.tf"), text).expect("config");
}

fn described_block(sb: &Sandbox, id: &str) -> String {
    let (status, xml) = sb.ec2(
        REGION,
        &format!("Action=DescribeCapacityReservations&CapacityReservationId.1={id}"),
    );
    assert_eq!(status, 200, "{xml}");
    xml
}

/// The offering is found and bought (a purchase is final, so the plan
/// shows the fee before it); the block reads back with no changes; a tag
/// changes in place; and a destroy forgets the block and says why, for EC2
/// cannot cancel one: the block is still there, still scheduled, and the
/// state is empty. Terraform's provider prints "destroyed" for the same.
#[test]
fn a_bought_capacity_block_is_forgotten_not_destroyed() {
    let dir = common::scratch("reserved", "buy");
    let sb = start(&dir.join("sandbox"));
    sb.set_clock("2026-12-05T10:00:00Z");
    let work = dir.join("buy");

    // No offering ends that early: an error at the data source, nothing bought.
    buy_config(&work, "2026-12-11T00:00:00Z", "ml");
    let (code, out) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 1, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("no Capacity Block offering of p5.48xlarge matches")
            && out.contains("data.aws_ec2_capacity_block_offering.h100"),
        "{out}"
    );

    // Every start that ends by the 20th: one must be chosen.
    buy_config(&work, "2026-12-20T00:00:00Z", "ml");
    let (code, out) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 1, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("8 Capacity Block offerings of p5.48xlarge match (2026-12-10T11:30:00Z in us-east-1a for 3020.54 USD;")
            && flat.contains("narrow start_date_range and end_date_range to one"),
        "{out}"
    );

    buy_config(&work, "2026-12-12T12:00:00Z", "ml");
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 added"), "{out}");
    let (_, id) = sb.strata(&work, &["output", "-raw", "block"]);
    let (_, fee) = sb.strata(&work, &["output", "-raw", "fee"]);
    assert!(id.starts_with("cr-"), "{id}");
    assert_eq!(fee, format!("{:.2}", 31.464 * 2.0 * 48.0));
    let xml = described_block(&sb, &id);
    assert_eq!(xml_field(&xml, "reservationType"), Some("capacity-block"));
    assert_eq!(xml_field(&xml, "state"), Some("scheduled"));
    assert_eq!(xml_field(&xml, "startDate"), Some("2026-12-10T11:30:00Z"));
    assert!(xml.contains("<key>team</key><value>ml</value>"), "{xml}");
    assert!(
        xml.contains("<key>strata:address</key>"),
        "ownership tags: {xml}"
    );

    let (code, out) = sb.strata(&work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "the block reads back as written: {out}");

    buy_config(&work, "2026-12-12T12:00:00Z", "research");
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 added, 1 changed, 0 destroyed"), "{out}");
    assert!(
        described_block(&sb, &id).contains("<key>team</key><value>research</value>"),
        "the tag is changed in place"
    );

    let (code, out) = sb.strata(&work, &["plan", "-destroy", "-out", "gone.plan"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("aws_ec2_capacity_block_reservation.h100 will no longer be managed by strata, but will not be destroyed")
            && out.contains("its provider cannot delete it")
            && out.contains("a Capacity Block cannot be cancelled: EC2 keeps it, and bills it, until 2026-12-12T11:30:00Z")
            && !out.contains("will be destroyed"),
        "{out}"
    );
    let (code, json) = sb.strata(&work, &["show", "-json", "gone.plan"]);
    assert_eq!(code, 0, "{json}");
    let plan: Json = serde_json::from_str(&json).expect("plan JSON");
    let change = plan["resource_changes"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|c| c["type"] == "aws_ec2_capacity_block_reservation")
        })
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        change["change"]["actions"],
        serde_json::json!(["forget"]),
        "{json}"
    );
    assert_eq!(change["action_reason"], "forget_because_cannot_delete");

    let (code, out) = sb.strata(&work, &["apply", "gone.plan"]);
    assert_eq!(code, 0, "{out}");
    let (_, listed) = sb.strata(&work, &["state", "list"]);
    assert!(
        !listed.contains("aws_ec2_capacity_block_reservation"),
        "forgotten: {listed}"
    );
    let xml = described_block(&sb, &id);
    assert_eq!(
        xml_field(&xml, "state"),
        Some("scheduled"),
        "the block is still EC2's: {xml}"
    );

    // Taken back by import: EC2 does not say which offering it came from,
    // and that is no reason to buy another.
    let (code, out) = sb.strata(
        &work,
        &["import", "aws_ec2_capacity_block_reservation.h100", &id],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("0 added, 1 changed, 0 destroyed") && !out.contains("must be replaced"),
        "{out}"
    );
    let (code, out) = sb.strata(&work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
    let (_, listed) = sb.strata(&work, &["output", "-raw", "block"]);
    assert_eq!(listed, id);

    // Another offering is another purchase, and the old block stays.
    let later = BUY_A_BLOCK
        .replace("2026-12-10T00:00:00Z", "2026-12-14T00:00:00Z")
        .replace("__END__", "2026-12-16T12:00:00Z")
        .replace("__TEAM__", "research");
    std::fs::write(work.join("main.tf"), later).expect("config");
    let (code, out) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 0, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        out.contains("aws_ec2_capacity_block_reservation.h100 must be replaced")
            && flat.contains(
                "is replaced by a new one; the old one stays: a Capacity Block cannot be cancelled"
            ),
        "{out}"
    );
}

/// `strata` in `work` at `now`, by the sandbox's clock and strata's.
fn at(sb: &Sandbox, work: &Path, now: &str, args: &[&str]) -> (i32, String) {
    sb.set_clock(now);
    let mut c = sb.command(work, args);
    c.env("STRATA_NOW", now);
    common::output(c)
}

/// Every capacity reservation and block EC2 holds in the region, by id.
fn reservation_ids(sb: &Sandbox) -> Vec<String> {
    let (status, xml) = sb.ec2(REGION, "Action=DescribeCapacityReservations");
    assert_eq!(status, 200, "{xml}");
    xml.split("<capacityReservationId>")
        .skip(1)
        .filter_map(|rest| rest.split_once("</capacityReservationId>"))
        .map(|(id, _)| id.to_string())
        .collect()
}

/// A purchase is final: an apply killed with SIGKILL after EC2 made the
/// purchase and before strata heard of it has only the purchase's intent
/// in its journal; the next apply finds the block by its tags and records
/// it — one block bought, never two.
#[test]
fn a_purchase_killed_before_its_answer_is_found_not_bought_again() {
    let dir = common::scratch("reserved", "killed");
    let sb = start(&dir.join("sandbox"));
    let now = "2026-12-05T10:00:00Z";
    let block = "      capacity_block \"aws\" {\n        hours     = 48\n        starts    = \"2026-12-10T00:00:00Z\"\n        ends      = \"2026-12-12T12:00:00Z\"\n        max_price = 5000\n        purchase  = true\n      }";
    let work = workdir(&dir, "kill", block);
    sb.hold("PurchaseCapacityBlock");
    sb.set_clock(now);
    let mut apply = sb.command(&work, &["apply", "--auto-approve"]);
    apply
        .env("STRATA_NOW", now)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = apply.spawn().expect("apply starts");
    let started = std::time::Instant::now();
    while reservation_ids(&sb).is_empty() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(180),
            "the block was never bought"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let _ = child.kill();
    let _ = child.wait();
    sb.release();
    let bought = reservation_ids(&sb);
    assert_eq!(bought.len(), 1, "{bought:?}");

    let (code, out) = at(&sb, &work, now, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        reservation_ids(&sb),
        bought,
        "bought once, not again:\n{out}"
    );
    let addr = "module.kill_aws.aws_ec2_capacity_block_reservation.pool[\"h100\"]";
    let (_, shown) = at(&sb, &work, now, &["state", "show", addr]);
    assert!(shown.contains(&format!("\"{}\"", bought[0])), "{shown}");
    let (code, out) = at(&sb, &work, now, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "nothing left to do:\n{out}");
}

/// A pool's `capacity_block`: the plan finds the cheapest offering in
/// the window and shows it with its price, and buys nothing until the
/// spec says `purchase = true` (with the most it pays); an offering over
/// that price is not bought. Once bought, later plans keep the block
/// (no second purchase), the nodes wait on the ladder until it begins and
/// then move onto it; a spec that no longer buys it forgets the block,
/// which EC2 keeps to its end.
#[test]
fn a_capacity_block_is_found_and_bought_for_a_pool() {
    let dir = common::scratch("reserved", "find");
    let sb = start(&dir.join("sandbox"));
    let now = "2026-12-05T10:00:00Z";
    let block = |extra: &str| {
        format!("      capacity_block \"aws\" {{\n        hours     = 48\n        starts    = \"2026-12-10T00:00:00Z\"\n        ends      = \"2026-12-12T12:00:00Z\"\n{extra}      }}")
    };
    let work = workdir(&dir, "find", &block("        max_price = 5000\n"));
    let spec_file = work.join("cluster.hcl");
    let respec = |extra: &str| {
        let text = spec("find", &block(extra));
        std::fs::write(&spec_file, text).expect("spec");
    };

    let (code, out) = at(&sb, &work, now, &["plan"]);
    assert_eq!(code, 0, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("2 × p5.48xlarge from 2026-12-10T11:30:00Z to 2026-12-12T11:30:00Z in us-east-1a for $3 020.54 is offered, not bought: purchase = true buys it"),
        "{out}"
    );
    assert!(!out.contains("aws_ec2_capacity_block_reservation"), "{out}");

    respec("        max_price = 3000\n        purchase  = true\n");
    let (code, out) = at(&sb, &work, now, &["plan"]);
    assert_eq!(code, 0, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("no Capacity Block of 2 × p5.48xlarge for 48 hours between 2026-12-10T00:00:00Z and 2026-12-12T12:00:00Z within $3 000.00 (1 offered, all dearer)")
            && !out.contains("aws_ec2_capacity_block_reservation"),
        "{out}"
    );

    respec("        purchase  = true\n");
    let (code, out) = at(&sb, &work, now, &["plan"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Missing max_price") && out.contains("cluster.hcl"),
        "{out}"
    );

    respec("        max_price = 5000\n        purchase  = true\n");
    // The plan's cost shows the purchase once, apart from the hourly
    // figures, in every form.
    let (code, out) = at(&sb, &work, now, &["plan"]);
    assert_eq!(code, 0, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("Bought by this apply, once")
            && flat.contains("module.find_aws: Capacity Block")
            && flat.contains("in us-east-1a, $3 020.54"),
        "{out}"
    );
    let (code, out) = at(&sb, &work, now, &["cost", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let cost: Json = serde_json::from_str(&out).expect("cost JSON");
    assert_eq!(cost["purchases"][0]["amount"], 3020.54, "{out}");
    assert_eq!(cost["purchases"][0]["module"], "find_aws", "{out}");
    let (code, out) = at(&sb, &work, now, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("for $3 020.54 is bought by this apply (a purchase is final)")
            && out.contains("module.find_aws.aws_ec2_capacity_block_reservation.pool[\"h100\"]: Creation complete"),
        "{out}"
    );
    assert_eq!(
        common::placement(&work, "find.h100")["chosen"]["capacity"],
        "spot"
    );
    let (_, listed) = at(
        &sb,
        &work,
        now,
        &[
            "state",
            "show",
            "module.find_aws.aws_ec2_capacity_block_reservation.pool[\"h100\"]",
        ],
    );
    let id = listed
        .lines()
        .find_map(|l| {
            l.trim().strip_prefix("id").map(|v| {
                v.trim()
                    .trim_start_matches('=')
                    .trim()
                    .trim_matches('"')
                    .to_string()
            })
        })
        .expect("the block's id");
    assert!(id.starts_with("cr-"), "{listed}");

    // Bought once: the next plans keep it, and the nodes wait for it;
    // nothing is bought again.
    let (code, out) = at(&sb, &work, now, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("Bought by this apply"), "{out}");
    assert!(
        out.contains(&format!("{id} starts at 2026-12-10T11:30:00Z")),
        "{out}"
    );

    let begun = "2026-12-10T12:00:00Z";
    let (code, out) = at(&sb, &work, begun, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "find.h100");
    assert_eq!(p["chosen"]["capacity"], "capacity_block", "{p}");
    assert_eq!(p["chosen"]["reservation"], id.as_str(), "{p}");
    assert_eq!(
        sb.eks_node_group(REGION, "find", "h100")["capacityType"],
        "CAPACITY_BLOCK"
    );

    // No longer bought by the spec: forgotten, not destroyed.
    std::fs::write(&spec_file, spec("find", "")).expect("spec");
    let (code, out) = at(&sb, &work, begun, &["plan"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("module.find_aws.aws_ec2_capacity_block_reservation.pool[\"h100\"] will no longer be managed by strata, but will not be destroyed"),
        "{out}"
    );
}

/// An Azure cluster whose pool `h100` wants 2 nodes on demand, with
/// `reserved` in its placement.
fn azure_spec(name: &str, reserved: &str) -> String {
    let placement =
        format!("      capacity      = [\"on_demand\"]\n      wait_for_gpus = \"30s\"\n{reserved}");
    let blocks = "  cloud \"azure\" {\n    subscription_id = \"00000000-0000-0000-0000-000000000000\"\n    location        = \"eastus\"\n  }";
    common::gpu_cluster(name, "[\"azure\"]", &placement, blocks)
}

const CRG_API: &str = "api-version=2024-11-01";

/// A capacity reservation group in resource group `capacity`, made as a
/// user makes one; with a reservation of `size` when given.
fn reservation_group(sb: &Sandbox, name: &str, size: Option<&str>) -> String {
    sb.arm_put(
        "/subscriptions/{sub}/resourceGroups/capacity?api-version=2022-09-01",
        r#"{"location":"eastus"}"#,
    );
    let group = format!(
        "/subscriptions/{{sub}}/resourceGroups/capacity/providers/Microsoft.Compute/capacityReservationGroups/{name}"
    );
    sb.arm_put(
        &format!("{group}?{CRG_API}"),
        r#"{"location":"eastus","zones":["1"]}"#,
    );
    if let Some(size) = size {
        sb.arm_put(
            &format!("{group}/capacityReservations/h100?{CRG_API}"),
            &format!(
                r#"{{"location":"eastus","zones":["1"],"sku":{{"name":"{size}","capacity":2}}}}"#
            ),
        );
    }
    group.replace("{sub}", "00000000-0000-0000-0000-000000000000")
}

/// An Azure capacity reservation group named by the pool is its first
/// place: the plan reads the group's reservations of the pool's VM size;
/// the apply makes the pool in the group (AKS's
/// `capacityReservationGroupID`), in the reservations' zone, after giving
/// the cluster's identity Contributor on the group's resource group (AKS
/// refuses the pool without it). A group with no reservation in it —
/// which AKS would silently leave out — is refused at the block.
#[test]
fn an_azure_capacity_reservation_group_is_used_and_an_empty_one_refused() {
    let dir = common::scratch("reserved", "crg");
    let sb = start(&dir.join("sandbox"));
    let empty = reservation_group(&sb, "empty", None);
    let work = common::spec_dir(
        &dir,
        "crg",
        &azure_spec(
            "crg",
            &format!("      reserved \"azure\" {{\n        id = \"{empty}\"\n      }}"),
        ),
    );
    let (code, out) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 1, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("holds no capacity reservation of ")
            && flat.contains(": AKS would make node_pool \"h100\" without it, with only a warning")
            && out.contains("cluster.hcl:"),
        "{out}"
    );

    let other = reservation_group(&sb, "a100s", Some("Standard_ND96asr_v4"));
    std::fs::write(
        work.join("cluster.hcl"),
        azure_spec(
            "crg",
            &format!("      reserved \"azure\" {{\n        id = \"{other}\"\n      }}"),
        ),
    )
    .expect("spec");
    let (code, out) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Reserved capacity of another instance type"),
        "{out}"
    );

    let group = reservation_group(&sb, "h100s", Some("Standard_ND96isr_H100_v5"));
    std::fs::write(
        work.join("cluster.hcl"),
        azure_spec(
            "crg",
            &format!("      reserved \"azure\" {{\n        id = \"{group}\"\n      }}"),
        ),
    )
    .expect("spec");
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let row = out
        .lines()
        .find(|l| {
            l.contains("azurerm_kubernetes_cluster_node_pool.pool[\"h100\"]") && l.contains(" · ")
        })
        .unwrap_or_default();
    assert!(
        row.contains("reserved (committed)"),
        "priced as committed: {out}"
    );
    let p = common::placement(&work, "crg.h100");
    assert_eq!(p["chosen"]["capacity"], "reserved", "{p}");
    assert_eq!(p["chosen"]["reservation"], group.as_str(), "{p}");
    let (status, pool, _) = sb.arm(
        "GET",
        "/subscriptions/{sub}/resourceGroups/crg/providers/Microsoft.ContainerService/managedClusters/crg/agentPools/h100?api-version=2025-01-01",
        "",
    );
    assert_eq!(status, 200, "{pool}");
    let pool: Json = serde_json::from_str(&pool).expect("JSON");
    assert!(
        pool["properties"]["capacityReservationGroupID"]
            .as_str()
            .is_some_and(|g| g.eq_ignore_ascii_case(&group)),
        "{pool}"
    );
    assert_eq!(
        pool["properties"]["availabilityZones"],
        serde_json::json!(["1"]),
        "{pool}"
    );
    let (code, out) = sb.strata(&work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");

    // What AKS does that strata guards against, as the stand-in does it: a
    // group whose resource group the cluster's identity holds no role on
    // is refused, and an empty group is left out without an error.
    let pools = "/subscriptions/{sub}/resourceGroups/crg/providers/Microsoft.ContainerService/managedClusters/crg/agentPools";
    let body = |group: &str| {
        format!(
            r#"{{"properties":{{"vmSize":"Standard_ND96isr_H100_v5","count":1,"mode":"User","capacityReservationGroupID":"{group}"}}}}"#
        )
    };
    sb.arm_put(
        "/subscriptions/{sub}/resourceGroups/elsewhere?api-version=2022-09-01",
        r#"{"location":"eastus"}"#,
    );
    let unowned = group.replace("/capacity/", "/elsewhere/");
    sb.arm_put(
        &format!("{unowned}?{CRG_API}"),
        r#"{"location":"eastus","zones":["1"]}"#,
    );
    let (status, refused, _) = sb.arm(
        "PUT",
        &format!("{pools}/other?api-version=2025-01-01"),
        &body(&unowned),
    );
    assert_eq!(status, 403, "{refused}");
    assert!(refused.contains("LinkedAuthorizationFailed"), "{refused}");
    sb.arm_put(
        &format!("{pools}/bare?api-version=2025-01-01"),
        &body(&empty),
    );
    let (_, bare, _) = sb.arm("GET", &format!("{pools}/bare?api-version=2025-01-01"), "");
    assert!(
        !bare.contains("capacityReservationGroupID"),
        "AKS leaves an empty group out: {bare}"
    );
}

/// A GCP reservation named by the pool's placement, by its path: the plan
/// reads what it holds; the apply makes the GKE pool consume it by name
/// (`reservationAffinity` SPECIFIC_RESERVATION) in its zone only, and the
/// reservation counts the pool's VMs in use; the next plan is empty.
#[test]
fn a_gcp_reservation_is_consumed_by_name_in_its_zone() {
    let dir = common::scratch("reserved", "gcpres");
    let sb = start(&dir.join("sandbox"));
    let (status, made) = sb.compute(
        "POST",
        "projects/acme-ml/zones/us-central1-b/reservations",
        r#"{"name":"h100s","specificReservationRequired":true,"specificReservation":{"count":"2","instanceProperties":{"machineType":"a3-highgpu-8g"}}}"#,
    );
    assert_eq!(status, 200, "{made}");
    let id = "projects/acme-ml/zones/us-central1-b/reservations/h100s";
    let placement = format!("      capacity      = [\"spot\", \"on_demand\"]\n      wait_for_gpus = \"30s\"\n      reserved \"gcp\" {{\n        id = \"{id}\"\n      }}");
    let blocks = "  cloud \"gcp\" {\n    project = \"acme-ml\"\n    region  = \"us-central1\"\n  }";
    let work = common::spec_dir(
        &dir,
        "res",
        &common::gpu_cluster("res", "[\"gcp\"]", &placement, blocks),
    );
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "res.h100");
    assert_eq!(p["chosen"]["capacity"], "reserved", "{p}");
    assert_eq!(p["chosen"]["reservation"], id, "{p}");
    let pool = sb.gke_node_pool("res", "h100");
    let affinity = &pool["config"]["reservationAffinity"];
    assert_eq!(
        affinity["consumeReservationType"], "SPECIFIC_RESERVATION",
        "{pool}"
    );
    assert_eq!(affinity["values"], serde_json::json!(["h100s"]), "{pool}");
    assert_eq!(
        pool["locations"],
        serde_json::json!(["us-central1-b"]),
        "{pool}"
    );
    let (_, held) = sb.compute("GET", id, "");
    assert!(held.contains("\"inUseCount\":\"2\""), "{held}");
    let (code, out) = sb.strata(&work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
}

/// In a directory Terraform initialised and applied with the real AWS
/// provider 5.100.0 (which serves the types there, as a plugin): the
/// provider's apply of a Capacity Block against EC2's documented answer
/// leaves it tainted (it reports `created_date` and `instance_count`
/// unknown), and Terraform's next plan would replace it — buying a second
/// block. strata keeps it and says why; its destroy forgets it, and the
/// block is still EC2's.
#[test]
fn a_block_terraform_bought_is_kept_and_never_destroyed_by_strata() {
    if !oracle::require_terraform("a_block_terraform_bought_is_kept_and_never_destroyed_by_strata")
    {
        return;
    }
    let Some(mirror) = aws_mirror::mirror() else {
        return;
    };
    let dir = common::scratch("reserved", "tfblock");
    let sb = start(&dir.join("sandbox"));
    sb.set_clock("2026-12-05T10:00:00Z");
    let work = dir.join("tf");
    std::fs::create_dir_all(&work).expect("work");
    let tfrc = dir.join("tfrc");
    std::fs::write(
        &tfrc,
        format!(
            "provider_installation {{\n  filesystem_mirror {{ path = \"{}\" }}\n}}\n",
            mirror.display()
        ),
    )
    .expect("tfrc");
    let config = BUY_A_BLOCK
        .replace("__END__", "2026-12-12T12:00:00Z")
        .replace("__TEAM__", "ml")
        .replace(
            "provider \"aws\" {\n  region = \"us-east-1\"\n}",
            "terraform {\n  required_providers {\n    aws = { source = \"hashicorp/aws\", version = \"5.100.0\" }\n  }\n}\n\nprovider \"aws\" {\n  region                      = \"us-east-1\"\n  skip_credentials_validation = true\n  skip_requesting_account_id  = true\n  skip_metadata_api_check     = true\n}",
        );
    std::fs::write(work.join("main.tf"), config).expect("config");
    let terraform = |args: &[&str]| {
        let mut c = std::process::Command::new("terraform");
        c.args(args)
            .current_dir(&work)
            .envs(&sb.env)
            .env("TF_CLI_CONFIG_FILE", &tfrc)
            .env("TF_IN_AUTOMATION", "1");
        common::output(c)
    };
    let (code, out) = terraform(&["init", "-input=false", "-no-color"]);
    assert_eq!(code, 0, "{out}");
    let (_, out) = terraform(&["apply", "-auto-approve", "-no-color"]);
    let (code, listed) = terraform(&["state", "list"]);
    assert_eq!(code, 0, "{listed}");
    assert!(
        listed.contains("aws_ec2_capacity_block_reservation.h100"),
        "{out}"
    );
    let (_, shown) = terraform(&["show", "-json"]);
    let shown: Json = serde_json::from_str(shown.trim()).expect("show -json");
    let id = shown["values"]["root_module"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["type"] == "aws_ec2_capacity_block_reservation")
        .and_then(|r| r["values"]["id"].as_str())
        .expect("the block's id")
        .to_string();

    let strata = |args: &[&str]| {
        let mut c = sb.command(&work, args);
        c.env("TF_CLI_CONFIG_FILE", &tfrc);
        common::output(c)
    };
    let (code, out) = strata(&["plan"]);
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(code, 0, "{out}");
    assert!(
        !out.contains("must be replaced") && !out.contains("1 to add"),
        "{out}"
    );
    // Provider 5.100.0 leaves the block it bought tainted (see above):
    // kept, and said so.
    let state: Json = serde_json::from_str(
        &std::fs::read_to_string(work.join("terraform.tfstate")).expect("Terraform's state"),
    )
    .expect("state JSON");
    let block = state["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["type"] == "aws_ec2_capacity_block_reservation")
        .cloned()
        .unwrap_or_default();
    assert_eq!(block["instances"][0]["status"], "tainted", "{block}");
    assert!(
        flat.contains("is tainted, and kept rather than replaced by another"),
        "{out}"
    );
    let (code, out) = strata(&["destroy", "-auto-approve"]);
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("aws_ec2_capacity_block_reservation.h100 will no longer be managed by strata, but will not be destroyed")
            && flat.contains("a Capacity Block cannot be cancelled: EC2 keeps it, and bills it, until 2026-12-12T11:30:00Z"),
        "{out}"
    );
    let (_, listed) = terraform(&["state", "list"]);
    assert!(
        !listed.contains("aws_ec2_capacity_block_reservation"),
        "{listed}"
    );
    assert_eq!(
        xml_field(&described_block(&sb, &id), "state"),
        Some("scheduled"),
        "the block is still EC2's"
    );
}

/// A Capacity Reservation group made as EC2's guide makes one (a resource
/// group configured as a pool, taking Capacity Reservations only) holding
/// `reservations`: its ARN.
fn reservation_pool(sb: &Sandbox, name: &str, reservations: &[&str]) -> String {
    let config = r#"[{"Type": "AWS::EC2::CapacityReservationPool"}, {"Type": "AWS::ResourceGroups::Generic", "Parameters": [{"Name": "allowed-resource-types", "Values": ["AWS::EC2::CapacityReservation"]}]}]"#;
    let body = format!(r#"{{"Name": "{name}", "Configuration": {config}}}"#);
    let (status, made) = sb.resource_groups(REGION, "/groups", &body);
    assert_eq!(status, 200, "{made}");
    let made: Json = serde_json::from_str(&made).expect("JSON");
    let arn = made["Group"]["GroupArn"]
        .as_str()
        .expect("an ARN")
        .to_string();
    let arns: Vec<String> = reservations
        .iter()
        .map(|id| format!("\"arn:aws:ec2:{REGION}:123456789012:capacity-reservation/{id}\""))
        .collect();
    let body = format!(
        r#"{{"Group": "{arn}", "ResourceArns": [{}]}}"#,
        arns.join(", ")
    );
    let (status, added) = sb.resource_groups(REGION, "/group-resources", &body);
    assert_eq!(status, 200, "{added}");
    let added: Json = serde_json::from_str(&added).expect("JSON");
    assert_eq!(
        added["Succeeded"].as_array().map(Vec::len),
        Some(reservations.len()),
        "{added}"
    );
    arn
}

fn available(sb: &Sandbox, id: &str) -> u64 {
    let (status, xml) = sb.ec2(
        REGION,
        &format!("Action=DescribeCapacityReservations&CapacityReservationId.1={id}"),
    );
    assert_eq!(status, 200, "{xml}");
    xml_field(&xml, "availableInstanceCount")
        .and_then(|n| n.parse().ok())
        .expect("a count")
}

/// A Capacity Reservation group named by its ARN is a place as one
/// reservation is: its reservations of the pool's type summed in the
/// zone with the most room, the launch template targeting the group, the
/// node group in that zone, the instances in the group's reservations.
/// A group with none of the pool's type is refused at its block: EC2
/// would run the nodes On-Demand without a word.
#[test]
fn a_capacity_reservation_group_is_used_and_one_without_the_type_refused() {
    let dir = common::scratch("reserved", "crgroup");
    let sb = start(&dir.join("sandbox"));
    let (a, b) = (reserve(&sb, "us-east-1b", 1), reserve(&sb, "us-east-1b", 1));
    let elsewhere = reserve(&sb, "us-east-1a", 1);
    let arn = reservation_pool(&sb, "gpus", &[&a, &b, &elsewhere]);
    let block = format!("      reserved \"aws\" {{\n        id = \"{arn}\"\n      }}");
    let work = workdir(&dir, "grp", &block);
    let (code, plan) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 0, "{plan}");
    let chosen = plan.lines().find(|l| l.contains('→')).unwrap_or_default();
    assert!(
        chosen.contains(&format!("1. aws us-east-1 reserved {arn}"))
            && chosen.contains("committed"),
        "{plan}"
    );
    assert!(
        plan.contains(&format!("{arn}: 2 × p5.48xlarge in us-east-1b, 2 free now")),
        "{plan}"
    );
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let p = common::placement(&work, "grp.h100");
    assert_eq!(p["chosen"]["capacity"], "reserved", "{p}");
    assert_eq!(
        p["chosen"]["reservation"].as_str(),
        Some(arn.as_str()),
        "{p}"
    );
    let lt = launch_template(&sb, "grp-h100");
    assert_eq!(
        xml_field(&lt, "capacityReservationResourceGroupArn"),
        Some(arn.as_str()),
        "{lt}"
    );
    assert_eq!(xml_field(&lt, "capacityReservationId"), None, "{lt}");
    let group = sb.eks_node_group(REGION, "grp", "h100");
    assert_eq!(group["capacityType"], "ON_DEMAND", "{group}");
    assert_eq!(
        group["subnets"].as_array().map(Vec::len),
        Some(1),
        "{group}"
    );
    assert_eq!((available(&sb, &a), available(&sb, &b)), (0, 0));
    assert_eq!(available(&sb, &elsewhere), 1, "another zone's is not used");
    let (code, out) = sb.strata(&work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "nothing left to do:\n{out}");

    let other = reserve_of(&sb, "p4d.24xlarge", "us-east-1b", 2);
    let a100s = reservation_pool(&sb, "a100s", &[&other]);
    let block = format!("      reserved \"aws\" {{\n        id = \"{a100s}\"\n      }}");
    let work = workdir(&dir, "grq", &block);
    let (code, out) = sb.strata(&work, &["plan"]);
    assert_eq!(code, 1, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&format!("{a100s} holds no capacity reservation of p5.48xlarge: EC2 would launch node_pool \"h100\"'s instances On-Demand"))
            && out.contains("cluster.hcl:"),
        "{out}"
    );
}
