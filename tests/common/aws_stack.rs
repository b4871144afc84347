//! A stack of 60 AWS objects for the reliability tests (crash harness and
//! fault injection), and an inventory of what moto holds, taken through
//! the AWS SDK straight from moto (not through the proxy), to compare with
//! what the state says: zero duplicates, zero orphans.

use crate::common::moto::Moto;
use std::collections::{BTreeMap, BTreeSet};

/// Two cells, each a VPC with an internet gateway, a route table, eight
/// subnets associated with it, three security groups with an ingress rule
/// each; four IAM roles with an inline policy; two launch templates.
pub const STACK: &str = r#"
variable "cells" {
  type    = number
  default = 2
}

resource "aws_vpc" "cell" {
  count      = var.cells
  cidr_block = "10.${100 + count.index}.0.0/16"
  tags       = { Name = "cell-${count.index}" }
}

resource "aws_internet_gateway" "cell" {
  count  = var.cells
  vpc_id = aws_vpc.cell[count.index].id
}

resource "aws_route_table" "cell" {
  count  = var.cells
  vpc_id = aws_vpc.cell[count.index].id
  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.cell[count.index].id
  }
}

resource "aws_subnet" "nodes" {
  count      = var.cells * 8
  vpc_id     = aws_vpc.cell[floor(count.index / 8)].id
  cidr_block = "10.${100 + floor(count.index / 8)}.${count.index % 8 * 16}.0/20"
  tags       = { Name = "nodes-${count.index}" }
}

resource "aws_route_table_association" "nodes" {
  count          = var.cells * 8
  subnet_id      = aws_subnet.nodes[count.index].id
  route_table_id = aws_route_table.cell[floor(count.index / 8)].id
}

resource "aws_security_group" "pool" {
  count  = var.cells * 3
  name   = "pool-${count.index}"
  vpc_id = aws_vpc.cell[floor(count.index / 3)].id
}

resource "aws_vpc_security_group_ingress_rule" "ssh" {
  count             = var.cells * 3
  security_group_id = aws_security_group.pool[count.index].id
  ip_protocol       = "tcp"
  from_port         = 22
  to_port           = 22
  cidr_ipv4         = "10.0.0.0/8"
}

resource "aws_iam_role" "pool" {
  count = 4
  name  = "pool-${count.index}"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Principal = { Service = "ec2.amazonaws.com" }, Action = "sts:AssumeRole" }]
  })
}

resource "aws_iam_role_policy" "pool" {
  count = 4
  name  = "read-models"
  role  = aws_iam_role.pool[count.index].name
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = "s3:GetObject", Resource = "*" }]
  })
}

resource "aws_launch_template" "pool" {
  count                  = 2
  name                   = "pool-${count.index}"
  vpc_security_group_ids = [aws_security_group.pool[count.index].id]
}
"#;

/// Objects in the stack.
pub const OBJECTS: usize = 60;

/// Resource type → ids, as the cloud has them.
pub type Inventory = BTreeMap<String, BTreeSet<String>>;

fn tagged() -> aws_sdk_ec2::types::Filter {
    aws_sdk_ec2::types::Filter::builder()
        .name("tag-key")
        .values("strata:address")
        .build()
}

/// Everything of the stack's types that moto holds: tagged EC2 objects,
/// the associations of their route tables, the ingress rules of their
/// security groups, every IAM role with its inline policies (`role:name`,
/// Terraform's id). Read straight from moto, past the proxy and its faults.
pub fn inventory(m: &Moto) -> Inventory {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let conf = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .endpoint_url(&m.direct)
            .region(aws_config::Region::new("us-east-1"))
            .credentials_provider(aws_sdk_ec2::config::Credentials::new(
                "testing", "testing", None, None, "test",
            ))
            .load()
            .await;
        let ec2 = aws_sdk_ec2::Client::new(&conf);
        let iam = aws_sdk_iam::Client::new(&conf);
        let mut inv = Inventory::new();
        let mut add = |t: &str, id: Option<&str>| {
            if let Some(id) = id {
                inv.entry(t.to_string()).or_default().insert(id.to_string());
            }
        };
        let vpcs = ec2
            .describe_vpcs()
            .filters(tagged())
            .send()
            .await
            .expect("vpcs");
        for v in vpcs.vpcs() {
            add("aws_vpc", v.vpc_id());
        }
        let igws = ec2
            .describe_internet_gateways()
            .filters(tagged())
            .send()
            .await
            .expect("igws");
        for g in igws.internet_gateways() {
            add("aws_internet_gateway", g.internet_gateway_id());
        }
        let tables = ec2
            .describe_route_tables()
            .filters(tagged())
            .send()
            .await
            .expect("route tables");
        for t in tables.route_tables() {
            add("aws_route_table", t.route_table_id());
            for a in t.associations() {
                if a.main() != Some(true) {
                    add(
                        "aws_route_table_association",
                        a.route_table_association_id(),
                    );
                }
            }
        }
        let subnets = ec2
            .describe_subnets()
            .filters(tagged())
            .send()
            .await
            .expect("subnets");
        for s in subnets.subnets() {
            add("aws_subnet", s.subnet_id());
        }
        let groups = ec2
            .describe_security_groups()
            .filters(tagged())
            .send()
            .await
            .expect("security groups");
        for g in groups.security_groups() {
            add("aws_security_group", g.group_id());
            let Some(id) = g.group_id() else { continue };
            let rules = ec2
                .describe_security_group_rules()
                .filters(
                    aws_sdk_ec2::types::Filter::builder()
                        .name("group-id")
                        .values(id)
                        .build(),
                )
                .send()
                .await
                .expect("rules");
            for r in rules.security_group_rules() {
                if r.is_egress() != Some(true) {
                    add(
                        "aws_vpc_security_group_ingress_rule",
                        r.security_group_rule_id(),
                    );
                }
            }
        }
        let templates = ec2
            .describe_launch_templates()
            .filters(tagged())
            .send()
            .await
            .expect("launch templates");
        for t in templates.launch_templates() {
            add("aws_launch_template", t.launch_template_id());
        }
        let roles = iam.list_roles().send().await.expect("roles");
        for r in roles.roles() {
            let name = r.role_name();
            add("aws_iam_role", Some(name));
            let policies = iam
                .list_role_policies()
                .role_name(name)
                .send()
                .await
                .expect("role policies");
            for p in policies.policy_names() {
                add("aws_iam_role_policy", Some(&format!("{name}:{p}")));
            }
        }
        inv
    })
}

/// The state of the configuration in `dir`, as `strata state pull`
/// prints it; it must load.
pub fn pulled(dir: &std::path::Path) -> String {
    let out = crate::common::run::strata(dir)
        .args(["state", "pull"])
        .output()
        .expect("state pull");
    assert!(
        out.status.success(),
        "the state does not load: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What a state document says exists, in the same shape.
pub fn in_state(state_json: &str) -> Inventory {
    let v: serde_json::Value = serde_json::from_str(state_json).expect("state JSON");
    let mut inv = Inventory::new();
    for r in v["resources"].as_array().into_iter().flatten() {
        if r["mode"] != "managed" {
            continue;
        }
        let t = r["type"].as_str().unwrap_or_default().to_string();
        for i in r["instances"].as_array().into_iter().flatten() {
            if let Some(id) = i["attributes"]["id"].as_str() {
                inv.entry(t.clone()).or_default().insert(id.to_string());
            }
        }
    }
    inv
}

/// Objects counted across types.
pub fn count(inv: &Inventory) -> usize {
    inv.values().map(BTreeSet::len).sum()
}
