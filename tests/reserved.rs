//! Capacity held ahead as a placement's first candidates, through the
//! sandbox: an On-Demand Capacity Reservation and a Capacity Block for ML
//! made in the proxy's EC2 API as a user makes them (create; offerings and
//! purchase), named by a pool's `reserved` block. The plan puts the nodes
//! there before the spot and on-demand ladder and says it is paid for; the
//! launch template targets the reservation; a block not begun is passed
//! over, and one nearing its end is left for the next place in time.

mod common;

use common::sandbox::{start, Sandbox};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

const REGION: &str = "us-east-1";

/// A cluster on AWS and GCP whose pool `h100` wants 2 nodes, with
/// `reserved` (blocks) in its placement, spot first.
fn spec(name: &str, reserved: &str) -> String {
    format!(
        r#"
cluster "{name}" {{
  clouds             = ["aws", "gcp"]
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
    placement {{
      order         = ["aws", "gcp"]
      capacity      = ["spot", "on_demand"]
      wait_for_gpus = "30s"
{reserved}
    }}
  }}
  cloud "aws" {{
    region = "{REGION}"
  }}
  cloud "gcp" {{
    project = "acme-ml"
    region  = "us-central1"
  }}
}}
"#
    )
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
    let (status, xml) = sb.ec2(
        REGION,
        &format!("Action=CreateCapacityReservation&InstanceType=p5.48xlarge&InstancePlatform=Linux%2FUNIX&AvailabilityZone={zone}&InstanceCount={count}"),
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
        "    nodes         = 2\n",
        "    nodes         = 2\n    labels        = { team = \"ml\" }\n",
        1,
    );
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
