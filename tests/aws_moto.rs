//! The AWS driver against the moto emulator, in the style of Terraform's
//! acceptance tests: apply a stack, plan again (empty), change things in
//! place and by replacement, undo a change made by hand with the SDK,
//! recreate what was deleted behind strata's back, destroy and list moto:
//! nothing of ours left. Error paths carry AWS's codes.
//!
//! Each test starts its own moto server on a free port on 127.0.0.1 (moto
//! keeps its state per server). `.ci/run` installs moto in a virtual
//! environment and sets `STRATA_MOTO_SERVER` to its `moto_server`.

mod common;

use std::path::Path;

use common::moto::{env_for, moto, Moto};

fn strata(dir: &Path, m: &Moto, args: &[&str]) -> (i32, String) {
    let mut c = common::run::strata(dir);
    c.args(args);
    env_for(&mut c, m);
    common::output(c)
}

/// SDK configuration for the same moto, for looking behind strata's back.
fn aws_conf(rt: &tokio::runtime::Runtime, m: &Moto, region: &'static str) -> aws_config::SdkConfig {
    rt.block_on(
        aws_config::defaults(aws_config::BehaviorVersion::latest())
            .endpoint_url(&m.url)
            .region(aws_config::Region::new(region))
            .credentials_provider(aws_sdk_ec2::config::Credentials::new(
                "testing", "testing", None, None, "test",
            ))
            .load(),
    )
}

/// SDK clients pointed at the same moto, for looking behind strata's back.
fn sdk(
    m: &Moto,
) -> (
    tokio::runtime::Runtime,
    aws_sdk_ec2::Client,
    aws_sdk_iam::Client,
) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let conf = aws_conf(&rt, m, "us-east-1");
    (
        rt,
        aws_sdk_ec2::Client::new(&conf),
        aws_sdk_iam::Client::new(&conf),
    )
}

/// Sets a tag on an EC2 object as someone outside strata would.
fn tag_by_hand(
    rt: &tokio::runtime::Runtime,
    ec2: &aws_sdk_ec2::Client,
    id: &str,
    key: &str,
    value: &str,
) {
    let tag = aws_sdk_ec2::types::Tag::builder()
        .key(key)
        .value(value)
        .build();
    rt.block_on(ec2.create_tags().resources(id).tags(tag).send())
        .expect("tag by hand");
}

/// A rule nobody configured: SSH from anywhere.
fn ssh_from_anywhere() -> aws_sdk_ec2::types::IpPermission {
    aws_sdk_ec2::types::IpPermission::builder()
        .ip_protocol("tcp")
        .from_port(22)
        .to_port(22)
        .ip_ranges(
            aws_sdk_ec2::types::IpRange::builder()
                .cidr_ip("0.0.0.0/0")
                .build(),
        )
        .build()
}

const STACK: &str = r#"
variable "public" {
  type    = bool
  default = false
}
variable "cidrs" {
  type    = list(string)
  default = ["10.40.0.0/20", "10.40.16.0/20"]
}

resource "aws_vpc" "main" {
  cidr_block           = "10.40.0.0/16"
  enable_dns_hostnames = true
  tags                 = { Name = "gpu-cluster", team = "ml" }
}

resource "aws_subnet" "nodes" {
  count                   = length(var.cidrs)
  vpc_id                  = aws_vpc.main.id
  cidr_block              = var.cidrs[count.index]
  availability_zone       = ["us-east-1a", "us-east-1b"][count.index]
  map_public_ip_on_launch = var.public
  tags                    = { Name = "nodes-${count.index}" }
}

resource "aws_internet_gateway" "gw" {
  vpc_id = aws_vpc.main.id
}

resource "aws_iam_role" "nodes" {
  name = "gpu-nodes"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Principal = { Service = "ec2.amazonaws.com" }, Action = "sts:AssumeRole" }]
  })
  tags = { team = "ml" }
}

resource "aws_iam_role_policy_attachment" "worker" {
  role       = aws_iam_role.nodes.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"
}

output "vpc_id" { value = aws_vpc.main.id }
output "subnets" { value = aws_subnet.nodes[*].id }
"#;

fn filter(name: &str, value: &str) -> aws_sdk_ec2::types::Filter {
    aws_sdk_ec2::types::Filter::builder()
        .name(name)
        .values(value)
        .build()
}

/// Our VPCs, by the ownership tag.
fn our_vpcs(
    rt: &tokio::runtime::Runtime,
    ec2: &aws_sdk_ec2::Client,
) -> Vec<aws_sdk_ec2::types::Vpc> {
    let out = rt
        .block_on(
            ec2.describe_vpcs()
                .filters(filter("tag-key", "strata:address"))
                .send(),
        )
        .expect("DescribeVpcs");
    out.vpcs().to_vec()
}

#[test]
fn a_network_and_iam_stack_round_trips_through_moto() {
    let m = moto();
    let d = common::scratch("aws", "stack");
    std::fs::write(d.join("main.tf"), STACK).expect("config");
    let (rt, ec2, iam) = sdk(&m);

    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Apply complete! Resources: 6 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan must be empty:\n{out}");

    // What strata made is in AWS as configured, tagged with its address.
    let vpcs = our_vpcs(&rt, &ec2);
    assert_eq!(vpcs.len(), 1);
    let vpc = &vpcs[0];
    assert_eq!(vpc.cidr_block(), Some("10.40.0.0/16"));
    let tag = |k: &str| {
        vpc.tags()
            .iter()
            .find(|t| t.key() == Some(k))
            .and_then(|t| t.value())
            .map(str::to_string)
    };
    assert_eq!(tag("strata:address").as_deref(), Some("aws_vpc.main"));
    assert_eq!(tag("Name").as_deref(), Some("gpu-cluster"));
    let vpc_id = vpc.vpc_id().expect("id").to_string();
    let role = rt
        .block_on(iam.get_role().role_name("gpu-nodes").send())
        .expect("role exists");
    assert!(role.role().is_some());
    let attached = rt
        .block_on(
            iam.list_attached_role_policies()
                .role_name("gpu-nodes")
                .send(),
        )
        .expect("attachments");
    assert_eq!(attached.attached_policies().len(), 1);

    // In place: map_public_ip_on_launch on both subnets.
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve", "--var", "public=true"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 added, 2 changed, 0 destroyed"), "{out}");
    let subnets = rt
        .block_on(
            ec2.describe_subnets()
                .filters(filter("vpc-id", &vpc_id))
                .send(),
        )
        .expect("subnets");
    assert!(subnets
        .subnets()
        .iter()
        .all(|s| s.map_public_ip_on_launch() == Some(true)));

    // A tag changed by hand comes back.
    tag_by_hand(&rt, &ec2, &vpc_id, "team", "someone-else");
    let (code, out) = strata(
        &d,
        &m,
        &["plan", "--detailed-exitcode", "--var", "public=true"],
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("has changed"), "drift is reported:\n{out}");
    assert!(
        out.contains(r#"~ "team" = "someone-else" -> "ml""#)
            || out.contains(r#"~ team = "someone-else" -> "ml""#),
        "{out}"
    );
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve", "--var", "public=true"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        our_vpcs(&rt, &ec2)[0]
            .tags()
            .iter()
            .find(|t| t.key() == Some("team"))
            .and_then(|t| t.value()),
        Some("ml")
    );

    // A new CIDR replaces the subnet; a subnet deleted by hand is recreated.
    let (code, out) = strata(
        &d,
        &m,
        &[
            "apply",
            "--auto-approve",
            "--var",
            "public=true",
            "--var",
            r#"cidrs=["10.40.0.0/20", "10.40.32.0/20"]"#,
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 added, 0 changed, 1 destroyed"), "{out}");
    let (code, out) = strata(
        &d,
        &m,
        &[
            "plan",
            "--detailed-exitcode",
            "--var",
            "public=true",
            "--var",
            r#"cidrs=["10.40.0.0/20", "10.40.32.0/20"]"#,
        ],
    );
    assert_eq!(code, 0, "{out}");

    // Destroy: nothing of ours is left in moto.
    let (code, out) = strata(
        &d,
        &m,
        &[
            "destroy",
            "--auto-approve",
            "--var",
            "public=true",
            "--var",
            r#"cidrs=["10.40.0.0/20", "10.40.32.0/20"]"#,
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Destroy complete! Resources: 6 destroyed."),
        "{out}"
    );
    assert!(our_vpcs(&rt, &ec2).is_empty());
    let left = rt
        .block_on(
            ec2.describe_subnets()
                .filters(filter("tag-key", "strata:address"))
                .send(),
        )
        .expect("subnets");
    assert!(left.subnets().is_empty());
    assert!(
        rt.block_on(iam.get_role().role_name("gpu-nodes").send())
            .is_err(),
        "the role is gone"
    );
}

#[test]
fn aws_errors_name_the_resource_and_the_code() {
    let m = moto();
    let d = common::scratch("aws", "errors");
    std::fs::write(
        d.join("main.tf"),
        r#"
resource "aws_vpc" "main" { cidr_block = "10.50.0.0/16" }
resource "aws_subnet" "outside" {
  vpc_id     = aws_vpc.main.id
  cidr_block = "192.168.0.0/24"
}
"#,
    )
    .expect("config");
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("aws_subnet.outside failed"), "{out}");
    assert!(out.contains("InvalidSubnet.Range"), "{out}");
    // The VPC was made and recorded; the failed subnet was not.
    let (_, list) = strata(&d, &m, &["state", "list"]);
    assert_eq!(list.trim(), "aws_vpc.main");

    // A name that is taken: IAM's EntityAlreadyExists.
    let (rt, ec2, iam) = sdk(&m);
    let trust = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
    rt.block_on(
        iam.create_role()
            .role_name("taken")
            .assume_role_policy_document(trust)
            .send(),
    )
    .expect("a role made by hand");
    std::fs::write(
        d.join("main.tf"),
        format!(
            r#"
resource "aws_vpc" "main" {{ cidr_block = "10.50.0.0/16" }}
resource "aws_iam_role" "r" {{
  name               = "taken"
  assume_role_policy = {trust:?}
}}
"#
        ),
    )
    .expect("config");
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("aws_iam_role.r failed"), "{out}");
    assert!(out.contains("EntityAlreadyExists"), "{out}");

    // Something made by hand inside the VPC: DeleteVpc's
    // DependencyViolation, and the VPC stays in the state.
    let vpc = our_vpcs(&rt, &ec2)[0].vpc_id().expect("id").to_string();
    rt.block_on(
        ec2.create_subnet()
            .vpc_id(&vpc)
            .cidr_block("10.50.1.0/24")
            .send(),
    )
    .expect("a subnet made by hand");
    std::fs::write(d.join("main.tf"), "").expect("config");
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("aws_vpc.main failed"), "{out}");
    assert!(out.contains("DependencyViolation"), "{out}");
    let (_, list) = strata(&d, &m, &["state", "list"]);
    assert_eq!(list.trim(), "aws_vpc.main", "not forgotten");

    // Not allowed: AccessDenied, as IAM says it.
    m.proxy.inject(strata_standin::Injection {
        matching: vec!["Action=CreateRole".into()],
        times: 1,
        status: 403,
        headers: vec![("content-type".into(), "text/xml".into())],
        body: r#"<ErrorResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>User: arn:aws:iam::123456789012:user/ci is not authorized to perform: iam:CreateRole</Message></Error><RequestId>injected</RequestId></ErrorResponse>"#.into(),
    });
    std::fs::write(
        d.join("main.tf"),
        format!(
            r#"
resource "aws_vpc" "main" {{ cidr_block = "10.50.0.0/16" }}
resource "aws_iam_role" "r" {{
  name               = "fresh"
  assume_role_policy = {trust:?}
}}
"#
        ),
    )
    .expect("config");
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("AccessDenied"), "{out}");
    assert!(out.contains("iam:CreateRole"), "{out}");

    // A cluster name in use: EKS's ResourceInUseException.
    let conf = aws_conf(&rt, &m, "us-east-1");
    let eks = aws_sdk_eks::Client::new(&conf);
    let role = "arn:aws:iam::123456789012:role/eks";
    rt.block_on(
        eks.create_cluster()
            .name("busy")
            .role_arn(role)
            .resources_vpc_config(aws_sdk_eks::types::VpcConfigRequest::builder().build())
            .send(),
    )
    .expect("a cluster made by hand");
    std::fs::write(
        d.join("main.tf"),
        format!(
            r#"
resource "aws_vpc" "main" {{ cidr_block = "10.50.0.0/16" }}
resource "aws_eks_cluster" "c" {{
  name     = "busy"
  role_arn = {role:?}
  vpc_config {{ subnet_ids = [] }}
}}
"#
        ),
    )
    .expect("config");
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("aws_eks_cluster.c failed"), "{out}");
    assert!(out.contains("ResourceInUseException"), "{out}");
}

const EKS: &str = r#"
variable "desired" {
  type    = number
  default = 1
}
variable "instance_type" {
  type    = string
  default = "p5.48xlarge"
}
variable "cni" {
  type    = string
  default = "v1.19.0-eksbuild.1"
}
# 0: no update_config block, EKS's own policy (moto 5.2.5 keeps an
# update_config only from UpdateNodegroupConfig, not from the create).
variable "unavailable" {
  type    = number
  default = 0
}

resource "aws_launch_template" "gpu" {
  name = "h100-nodes"
  metadata_options {
    http_tokens                 = "required"
    http_put_response_hop_limit = 2
  }
}

resource "aws_vpc" "main" { cidr_block = "10.60.0.0/16" }

resource "aws_subnet" "a" {
  vpc_id            = aws_vpc.main.id
  cidr_block        = "10.60.0.0/20"
  availability_zone = "us-east-1a"
}

resource "aws_subnet" "b" {
  vpc_id            = aws_vpc.main.id
  cidr_block        = "10.60.16.0/20"
  availability_zone = "us-east-1b"
}

resource "aws_iam_role" "cluster" {
  name = "eks-cluster"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Principal = { Service = "eks.amazonaws.com" }, Action = "sts:AssumeRole" }]
  })
}

resource "aws_iam_role" "nodes" {
  name = "eks-nodes"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Principal = { Service = "ec2.amazonaws.com" }, Action = "sts:AssumeRole" }]
  })
}

resource "aws_eks_cluster" "train" {
  name     = "train"
  role_arn = aws_iam_role.cluster.arn
  version  = "1.31"
  tags     = { team = "ml" }
  vpc_config {
    subnet_ids = [aws_subnet.a.id, aws_subnet.b.id]
  }
}

resource "aws_eks_node_group" "h100" {
  cluster_name    = aws_eks_cluster.train.name
  node_group_name = "h100"
  node_role_arn   = aws_iam_role.nodes.arn
  subnet_ids      = [aws_subnet.a.id, aws_subnet.b.id]
  instance_types  = [var.instance_type]
  ami_type        = "AL2023_x86_64_NVIDIA"
  capacity_type   = "SPOT"
  labels          = { workload = "training", "nvidia.com/gpu.product" = "H100" }
  taint {
    key    = "nvidia.com/gpu"
    value  = "present"
    effect = "NO_SCHEDULE"
  }
  scaling_config {
    desired_size = var.desired
    min_size     = 0
    max_size     = 4
  }
  launch_template {
    name    = aws_launch_template.gpu.name
    version = aws_launch_template.gpu.latest_version
  }
  dynamic "update_config" {
    for_each = var.unavailable > 0 ? [var.unavailable] : []
    content {
      max_unavailable = update_config.value
    }
  }
  tags = { team = "ml" }
}

resource "aws_eks_addon" "cni" {
  cluster_name                = aws_eks_cluster.train.name
  addon_name                  = "vpc-cni"
  addon_version               = var.cni
  resolve_conflicts_on_update = "OVERWRITE"
  configuration_values        = jsonencode({ env = { ENABLE_PREFIX_DELEGATION = "true" } })
}
"#;

#[test]
fn a_gpu_eks_stack_updates_in_place_and_replaces_what_cannot_change() {
    let m = moto();
    let d = common::scratch("aws", "eks");
    std::fs::write(d.join("main.tf"), EKS).expect("config");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let conf = aws_conf(&rt, &m, "us-east-1");
    let eks = aws_sdk_eks::Client::new(&conf);
    let group = |rt: &tokio::runtime::Runtime| {
        rt.block_on(
            eks.describe_nodegroup()
                .cluster_name("train")
                .nodegroup_name("h100")
                .send(),
        )
        .ok()
        .and_then(|o| o.nodegroup().cloned())
    };

    // moto makes clusters and node groups ACTIVE at once; the proxy
    // answers the first look at each with CREATING, as EKS does for
    // minutes, so the waiters must look again.
    m.proxy.inject(strata_standin::Injection::rest_json(
        "GET",
        "/clusters/train?",
        200,
        serde_json::json!({ "cluster": { "name": "train", "status": "CREATING" } }),
        1,
    ));
    m.proxy.inject(strata_standin::Injection::rest_json(
        "GET",
        "/clusters/train/node-groups/h100?",
        200,
        serde_json::json!({ "nodegroup": {
            "nodegroupName": "h100", "clusterName": "train", "status": "CREATING"
        }}),
        1,
    ));
    // moto never pages: here the first look at each EKS listing (the
    // sweep after a resent create lists by tags) is an empty page with a
    // token, and the second page must be asked for. Each create is resent:
    // its first attempt is answered 503.
    for path in [
        "/clusters?",
        "/clusters/train/node-groups?",
        "/clusters/train/addons?",
    ] {
        m.proxy.inject(strata_standin::Injection::rest_json(
            "POST",
            path,
            503,
            serde_json::json!({ "__type": "ServiceUnavailableException", "message": "injected" }),
            1,
        ));
    }
    for (path, field, name, token) in [
        ("/clusters?", "clusters", "train", "clusters-2"),
        (
            "/clusters/train/node-groups?",
            "nodegroups",
            "h100",
            "groups-2",
        ),
        ("/clusters/train/addons?", "addons", "vpc-cni", "addons-2"),
    ] {
        let mut second = strata_standin::Injection::rest_json(
            "GET",
            path,
            200,
            serde_json::json!({ field: [name] }),
            1,
        );
        second.matching.push(format!("nextToken={token}"));
        m.proxy.inject(second);
        m.proxy.inject(strata_standin::Injection::rest_json(
            "GET",
            path,
            200,
            serde_json::json!({ field: [], "nextToken": token }),
            1,
        ));
    }
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("9 added"), "{out}");
    assert_eq!(
        m.proxy.pending(),
        0,
        "the waiters saw CREATING first, and every listing's second page was read"
    );
    let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan must be empty:\n{out}");
    let ng = group(&rt).expect("the node group exists");
    assert_eq!(ng.instance_types(), ["p5.48xlarge"]);
    assert_eq!(
        ng.labels()
            .and_then(|l| l.get("workload"))
            .map(String::as_str),
        Some("training")
    );
    assert_eq!(ng.taints().len(), 1);
    assert_eq!(ng.scaling_config().and_then(|s| s.desired_size()), Some(1));
    assert_eq!(
        ng.launch_template().and_then(|l| l.name()),
        Some("h100-nodes")
    );

    // Scaling and the add-on's version change in place; the add-on
    // (EKS's asynchronous life, from the test proxy) is waited for.
    let (code, out) = strata(
        &d,
        &m,
        &[
            "apply",
            "--auto-approve",
            "--var",
            "desired=3",
            "--var",
            "cni=v1.19.2-eksbuild.1",
            "--var",
            "unavailable=2",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 added, 2 changed, 0 destroyed"), "{out}");
    assert_eq!(
        group(&rt).and_then(|g| g.scaling_config().and_then(|s| s.desired_size())),
        Some(3)
    );
    assert_eq!(
        group(&rt).and_then(|g| g.update_config().and_then(|u| u.max_unavailable())),
        Some(2)
    );
    let addon = rt
        .block_on(
            eks.describe_addon()
                .cluster_name("train")
                .addon_name("vpc-cni")
                .send(),
        )
        .expect("the add-on exists");
    assert_eq!(
        addon.addon().and_then(|a| a.addon_version()),
        Some("v1.19.2-eksbuild.1")
    );

    // A tag changed by hand on the cluster comes back (moto tags
    // clusters only).
    let cluster = |rt: &tokio::runtime::Runtime| {
        rt.block_on(eks.describe_cluster().name("train").send())
            .ok()
            .and_then(|o| o.cluster().cloned())
    };
    let arn = cluster(&rt)
        .and_then(|c| c.arn().map(str::to_string))
        .expect("arn");
    rt.block_on(
        eks.tag_resource()
            .resource_arn(&arn)
            .tags("team", "web")
            .send(),
    )
    .expect("tag by hand");
    let vars = [
        "--var",
        "desired=3",
        "--var",
        "cni=v1.19.2-eksbuild.1",
        "--var",
        "unavailable=2",
    ];
    let mut plan = vec!["plan", "--detailed-exitcode"];
    plan.extend(vars);
    let (code, out) = strata(&d, &m, &plan);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains(r#""team" = "web" -> "ml""#), "{out}");
    let mut apply = vec!["apply", "--auto-approve"];
    apply.extend(vars);
    let (code, out) = strata(&d, &m, &apply);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        cluster(&rt).and_then(|c| c.tags().and_then(|t| t.get("team").cloned())),
        Some("ml".to_string())
    );

    // The instance type cannot: the node group is replaced.
    let (code, out) = strata(
        &d,
        &m,
        &[
            "plan",
            "--var",
            "desired=3",
            "--var",
            "instance_type=p4d.24xlarge",
            "--var",
            "cni=v1.19.2-eksbuild.1",
            "--var",
            "unavailable=2",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("aws_eks_node_group.h100 must be replaced"),
        "{out}"
    );
    assert!(out.contains("# forces replacement"), "{out}");
    let (code, out) = strata(
        &d,
        &m,
        &[
            "apply",
            "--auto-approve",
            "--var",
            "desired=3",
            "--var",
            "instance_type=p4d.24xlarge",
            "--var",
            "cni=v1.19.2-eksbuild.1",
            "--var",
            "unavailable=2",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 added, 0 changed, 1 destroyed"), "{out}");
    assert_eq!(
        group(&rt).map(|g| g.instance_types().to_vec()),
        Some(vec!["p4d.24xlarge".to_string()])
    );

    // Destroy: no cluster is left.
    let (code, out) = strata(
        &d,
        &m,
        &[
            "destroy",
            "--auto-approve",
            "--var",
            "desired=3",
            "--var",
            "instance_type=p4d.24xlarge",
            "--var",
            "cni=v1.19.2-eksbuild.1",
            "--var",
            "unavailable=2",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let left = rt
        .block_on(eks.list_clusters().send())
        .expect("ListClusters");
    assert!(left.clusters().is_empty(), "{:?}", left.clusters());
    assert!(
        rt.block_on(
            eks.describe_addon()
                .cluster_name("train")
                .addon_name("vpc-cni")
                .send()
        )
        .is_err(),
        "the add-on is gone"
    );
}

#[test]
fn data_sources_place_subnets_and_name_the_account() {
    let m = moto();
    let d = common::scratch("aws", "data");
    std::fs::write(
        d.join("main.tf"),
        r#"
data "aws_availability_zones" "zones" { state = "available" }
data "aws_caller_identity" "me" {}

resource "aws_vpc" "main" { cidr_block = "10.70.0.0/16" }
resource "aws_subnet" "per_zone" {
  count             = 2
  vpc_id            = aws_vpc.main.id
  cidr_block        = cidrsubnet(aws_vpc.main.cidr_block, 4, count.index)
  availability_zone = data.aws_availability_zones.zones.names[count.index]
}

output "account" { value = data.aws_caller_identity.me.account_id }
output "zones" { value = aws_subnet.per_zone[*].availability_zone }
"#,
    )
    .expect("config");
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let (_, json) = strata(&d, &m, &["output", "--json"]);
    let o: serde_json::Value = serde_json::from_str(json.trim()).expect("outputs");
    assert_eq!(o["account"]["value"], "123456789012", "moto's account");
    assert_eq!(
        o["zones"]["value"],
        serde_json::json!(["us-east-1a", "us-east-1b"])
    );
    let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
}

const NETWORK: &str = r#"
variable "volume" {
  type    = number
  default = 200
}
variable "https_from" {
  type    = string
  default = "10.0.0.0/8"
}
variable "private_table" {
  type    = string
  default = "private"
}

resource "aws_vpc" "main" { cidr_block = "10.80.0.0/16" }

resource "aws_subnet" "public" {
  vpc_id     = aws_vpc.main.id
  cidr_block = "10.80.0.0/24"
}
resource "aws_subnet" "private" {
  vpc_id     = aws_vpc.main.id
  cidr_block = "10.80.16.0/20"
}

resource "aws_internet_gateway" "gw" { vpc_id = aws_vpc.main.id }
resource "aws_eip" "nat" { domain = "vpc" }
resource "aws_nat_gateway" "out" {
  subnet_id     = aws_subnet.public.id
  allocation_id = aws_eip.nat.id
  tags          = { Name = "nat" }
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.main.id
  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.gw.id
  }
}
resource "aws_route_table" "private" {
  vpc_id = aws_vpc.main.id
  route {
    cidr_block     = "0.0.0.0/0"
    nat_gateway_id = aws_nat_gateway.out.id
  }
}
resource "aws_route_table_association" "public" {
  subnet_id      = aws_subnet.public.id
  route_table_id = aws_route_table.public.id
}
resource "aws_route_table_association" "private" {
  subnet_id      = aws_subnet.private.id
  route_table_id = var.private_table == "private" ? aws_route_table.private.id : aws_route_table.public.id
}

# Egress inline; ingress from rule resources, which an SG without inline
# ingress blocks leaves alone (as in Terraform, the two styles do not mix
# in one direction).
resource "aws_security_group" "nodes" {
  name   = "gpu-nodes"
  vpc_id = aws_vpc.main.id
  egress {
    from_port   = 0
    to_port     = 0
    protocol    = "-1"
    cidr_blocks = ["0.0.0.0/0"]
  }
}
resource "aws_vpc_security_group_ingress_rule" "self" {
  security_group_id            = aws_security_group.nodes.id
  ip_protocol                  = "-1"
  # No description: moto 5.2.5 answers DescribeSecurityGroupRules with a
  # referenced group's rule without it (AWS keeps it).
  referenced_security_group_id = aws_security_group.nodes.id
}
resource "aws_vpc_security_group_ingress_rule" "https" {
  security_group_id = aws_security_group.nodes.id
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
  cidr_ipv4         = var.https_from
  tags              = { Name = "https" }
}

resource "aws_launch_template" "gpu" {
  name                   = "gpu-nodes"
  vpc_security_group_ids = [aws_security_group.nodes.id]
  update_default_version = true
  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      volume_size = var.volume
      volume_type = "gp3"
    }
  }
  metadata_options {
    http_tokens                 = "required"
    http_put_response_hop_limit = 2
  }
}
"#;

#[test]
fn the_private_network_and_node_template_round_trip() {
    let m = moto();
    let d = common::scratch("aws", "network");
    std::fs::write(d.join("main.tf"), NETWORK).expect("config");
    let (rt, ec2, _) = sdk(&m);

    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Resources: 14 added"), "{out}");
    let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan must be empty:\n{out}");

    // The private subnet routes out through the NAT gateway.
    let (_, shown) = strata(&d, &m, &["state", "pull"]);
    let state: serde_json::Value = serde_json::from_str(shown.trim()).expect("state JSON");
    let resources = state["resources"].as_array().expect("resources").clone();
    let attr = |addr: &str, name: &str| {
        resources
            .iter()
            .find(|r| {
                format!(
                    "{}.{}",
                    r["type"].as_str().unwrap_or(""),
                    r["name"].as_str().unwrap_or("")
                ) == addr
            })
            .map(|r| r["instances"][0]["attributes"][name].clone())
            .unwrap_or_else(|| panic!("{addr} not in state"))
    };
    let nat = attr("aws_nat_gateway.out", "id");
    let private_rt = attr("aws_route_table.private", "id");
    let tables = rt
        .block_on(
            ec2.describe_route_tables()
                .route_table_ids(private_rt.as_str().expect("id"))
                .send(),
        )
        .expect("DescribeRouteTables");
    let routes = tables.route_tables()[0].routes();
    assert!(
        routes
            .iter()
            .any(|r| r.destination_cidr_block() == Some("0.0.0.0/0")
                && r.nat_gateway_id() == nat.as_str()),
        "{routes:?}"
    );

    // The group holds exactly the configured rules: AWS's default
    // allow-all egress was replaced by the configured one, the separate
    // rule resource sits beside the inline ones.
    let sg = attr("aws_security_group.nodes", "id");
    let sg = sg.as_str().expect("id");
    let rules = rt
        .block_on(
            ec2.describe_security_group_rules()
                .filters(filter("group-id", sg))
                .send(),
        )
        .expect("rules");
    let ingress: Vec<_> = rules
        .security_group_rules()
        .iter()
        .filter(|r| r.is_egress() == Some(false))
        .collect();
    assert_eq!(ingress.len(), 2, "{ingress:?}");
    assert!(ingress.iter().any(|r| r.cidr_ipv4() == Some("10.0.0.0/8")));

    // In place: the rule's source, the template's volume (a new version
    // made the default), the private subnet's route table.
    let vars = [
        "--var",
        "volume=400",
        "--var",
        "https_from=10.80.0.0/16",
        "--var",
        "private_table=public",
    ];
    let mut args = vec!["apply", "--auto-approve"];
    args.extend(vars);
    let (code, out) = strata(&d, &m, &args);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 added, 3 changed, 0 destroyed"), "{out}");
    let lt = attr("aws_launch_template.gpu", "id");
    let versions = rt
        .block_on(
            ec2.describe_launch_templates()
                .launch_template_ids(lt.as_str().expect("id"))
                .send(),
        )
        .expect("templates");
    let t = &versions.launch_templates()[0];
    assert_eq!(t.latest_version_number(), Some(2));
    assert_eq!(t.default_version_number(), Some(2));
    let mut args = vec!["plan", "--detailed-exitcode"];
    args.extend(vars);
    let (code, out) = strata(&d, &m, &args);
    assert_eq!(code, 0, "converged:\n{out}");

    // A rule added by hand where the configuration manages the rules
    // (egress, inline) is undone; one added where it does not (ingress,
    // kept by separate rule resources) is only reported.
    let ssh = ssh_from_anywhere();
    rt.block_on(
        ec2.authorize_security_group_egress()
            .group_id(sg)
            .ip_permissions(ssh.clone())
            .send(),
    )
    .expect("egress rule by hand");
    rt.block_on(
        ec2.authorize_security_group_ingress()
            .group_id(sg)
            .ip_permissions(ssh)
            .send(),
    )
    .expect("ingress rule by hand");
    let (code, out) = strata(&d, &m, &args);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("aws_security_group.nodes will be updated in-place"),
        "{out}"
    );
    assert!(
        out.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{out}"
    );
    let mut apply = vec!["apply", "--auto-approve"];
    apply.extend(vars);
    let (code, out) = strata(&d, &m, &apply);
    assert_eq!(code, 0, "{out}");
    let rules = rt
        .block_on(
            ec2.describe_security_group_rules()
                .filters(filter("group-id", sg))
                .send(),
        )
        .expect("rules");
    let ports = |egress: bool| {
        let mut p: Vec<_> = rules
            .security_group_rules()
            .iter()
            .filter(|r| r.is_egress() == Some(egress))
            .map(|r| r.from_port())
            .collect();
        p.sort();
        p
    };
    assert_eq!(ports(true), vec![Some(-1)], "egress as configured");
    assert_eq!(
        ports(false),
        vec![Some(-1), Some(22), Some(443)],
        "ingress left alone"
    );

    // Destroy: nothing of ours left.
    let mut args = vec!["destroy", "--auto-approve"];
    args.extend(vars);
    let (code, out) = strata(&d, &m, &args);
    assert_eq!(code, 0, "{out}");
    assert!(our_vpcs(&rt, &ec2).is_empty());
    let nats = rt
        .block_on(ec2.describe_nat_gateways().send())
        .expect("NAT gateways");
    assert!(
        nats.nat_gateways()
            .iter()
            .all(|g| g.state() == Some(&aws_sdk_ec2::types::NatGatewayState::Deleted)),
        "{nats:?}"
    );
    let addresses = rt
        .block_on(ec2.describe_addresses().send())
        .expect("addresses");
    assert!(addresses.addresses().is_empty(), "{addresses:?}");
    let templates = rt
        .block_on(ec2.describe_launch_templates().send())
        .expect("templates");
    assert!(templates.launch_templates().is_empty());
}

const IAM: &str = r#"
variable "bucket_action" {
  type    = string
  default = "s3:GetObject"
}
variable "profile_role" {
  type    = string
  default = "a"
}

data "aws_iam_policy_document" "ec2_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ec2.amazonaws.com"]
    }
  }
}

data "aws_iam_policy_document" "read" {
  statement {
    sid       = "Read"
    actions   = [var.bucket_action, "s3:ListBucket"]
    resources = ["arn:aws:s3:::models", "arn:aws:s3:::models/*"]
  }
}

resource "aws_iam_role" "node" {
  for_each           = toset(["a", "b"])
  name               = "gpu-node-${each.key}"
  assume_role_policy = data.aws_iam_policy_document.ec2_assume.json
}

resource "aws_iam_role_policy" "read" {
  name   = "read-models"
  role   = aws_iam_role.node["a"].name
  policy = data.aws_iam_policy_document.read.json
}

resource "aws_iam_instance_profile" "node" {
  name = "gpu-node"
  role = aws_iam_role.node[var.profile_role].name
  tags = { team = "ml" }
}

resource "aws_iam_instance_profile" "spare" {
  name_prefix = "spare-"
}

resource "aws_iam_openid_connect_provider" "cluster" {
  url             = "https://oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF"
  client_id_list  = ["sts.amazonaws.com"]
  thumbprint_list = ["9e99a48a9960b14926bb7f3b02e22da2b0ab7280"]
}

output "policy" { value = data.aws_iam_policy_document.read.json }
"#;

#[test]
fn iam_for_nodes_and_pods_round_trips() {
    let m = moto();
    let d = common::scratch("aws", "iam");
    std::fs::write(d.join("main.tf"), IAM).expect("config");
    let (rt, _, iam) = sdk(&m);

    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Resources: 6 added"), "{out}");
    let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan must be empty:\n{out}");

    // The document is the provider's text: reverse-ordered actions.
    let (_, json) = strata(&d, &m, &["output", "--json"]);
    let o: serde_json::Value = serde_json::from_str(json.trim()).expect("outputs");
    let policy = o["policy"]["value"].as_str().expect("policy").to_string();
    assert!(
        policy.contains(
            "\"Action\": [\n        \"s3:ListBucket\",\n        \"s3:GetObject\"\n      ]"
        ),
        "{policy}"
    );
    let inline = rt
        .block_on(
            iam.get_role_policy()
                .role_name("gpu-node-a")
                .policy_name("read-models")
                .send(),
        )
        .expect("inline policy");
    assert!(inline.policy_document().contains("GetObject"));
    let oidc = rt
        .block_on(iam.list_open_id_connect_providers().send())
        .expect("OIDC providers");
    assert_eq!(oidc.open_id_connect_provider_list().len(), 1);
    let profiles = rt
        .block_on(iam.list_instance_profiles().send())
        .expect("profiles");
    assert!(
        profiles
            .instance_profiles()
            .iter()
            .any(|p| p.instance_profile_name().starts_with("spare-")),
        "a generated name with the prefix"
    );

    // In place: the inline policy's text, the profile's role.
    let vars = [
        "--var",
        "bucket_action=s3:PutObject",
        "--var",
        "profile_role=b",
    ];
    let mut args = vec!["apply", "--auto-approve"];
    args.extend(vars);
    let (code, out) = strata(&d, &m, &args);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 added, 2 changed, 0 destroyed"), "{out}");
    let profile = rt
        .block_on(
            iam.get_instance_profile()
                .instance_profile_name("gpu-node")
                .send(),
        )
        .expect("profile");
    let roles: Vec<_> = profile
        .instance_profile()
        .expect("profile")
        .roles()
        .iter()
        .map(|r| r.role_name().to_string())
        .collect();
    assert_eq!(roles, vec!["gpu-node-b".to_string()]);
    let mut plan = vec!["plan", "--detailed-exitcode"];
    plan.extend(vars);
    let (code, out) = strata(&d, &m, &plan);
    assert_eq!(code, 0, "converged:\n{out}");

    let mut destroy = vec!["destroy", "--auto-approve"];
    destroy.extend(vars);
    let (code, out) = strata(&d, &m, &destroy);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Resources: 6 destroyed"), "{out}");
    let roles = rt.block_on(iam.list_roles().send()).expect("roles");
    assert!(
        roles
            .roles()
            .iter()
            .all(|r| !r.role_name().starts_with("gpu-node")),
        "{roles:?}"
    );
    let profiles = rt
        .block_on(iam.list_instance_profiles().send())
        .expect("profiles");
    assert!(profiles.instance_profiles().is_empty());
    let oidc = rt
        .block_on(iam.list_open_id_connect_providers().send())
        .expect("OIDC providers");
    assert!(oidc.open_id_connect_provider_list().is_empty());
}

#[test]
fn the_provider_block_sets_region_and_endpoints() {
    let m = moto();
    let d = common::scratch("aws", "provider");
    std::fs::write(
        d.join("main.tf"),
        r#"
variable "endpoint" { type = string }
locals { region = "eu-west-1" }

provider "aws" {
  region = local.region
  endpoints {
    ec2 = var.endpoint
    sts = var.endpoint
  }
}

resource "aws_vpc" "main" { cidr_block = "10.90.0.0/16" }
data "aws_caller_identity" "me" {}
output "account" { value = data.aws_caller_identity.me.account_id }
"#,
    )
    .expect("config");
    // No AWS_ENDPOINT_URL, and AWS_REGION says otherwise: the block wins.
    let run = |args: &[&str]| {
        let mut c = common::run::strata(&d);
        c.args(args);
        env_for(&mut c, &m);
        c.env_remove("AWS_ENDPOINT_URL");
        common::output(c)
    };
    let var = format!("endpoint={}", m.url);
    let (code, out) = run(&["apply", "--auto-approve", "--var", &var]);
    assert_eq!(code, 0, "{out}");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let in_region = |region: &'static str| {
        let conf = aws_conf(&rt, &m, region);
        our_vpcs(&rt, &aws_sdk_ec2::Client::new(&conf)).len()
    };
    assert_eq!(in_region("eu-west-1"), 1, "made where the block says");
    assert_eq!(in_region("us-east-1"), 0);
    let (code, out) = run(&["plan", "--detailed-exitcode", "--var", &var]);
    assert_eq!(code, 0, "{out}");

    // A provider block that needs a resource, and a service it does not
    // know, are errors at their place in the file.
    std::fs::write(
        d.join("main.tf"),
        r#"
resource "aws_vpc" "main" { cidr_block = "10.90.0.0/16" }
provider "aws" {
  region = "eu-west-1"
  endpoints { s4 = "http://127.0.0.1:1" }
}
"#,
    )
    .expect("config");
    let (code, out) = run(&["plan"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Unsupported argument"), "{out}");
    assert!(out.contains("main.tf:5"), "{out}");
    std::fs::write(
        d.join("main.tf"),
        r#"
resource "aws_vpc" "main" { cidr_block = "10.90.0.0/16" }
provider "aws" {
  region = aws_vpc.main.id
}
"#,
    )
    .expect("config");
    let (code, out) = run(&["plan"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Provider configuration uses its own resource"),
        "{out}"
    );
    assert!(out.contains("main.tf:3"), "{out}");
}

#[test]
fn a_bucket_with_versioning_round_trips() {
    let m = moto();
    let d = common::scratch("aws", "s3");
    std::fs::write(
        d.join("main.tf"),
        r#"
variable "versioning" {
  type    = string
  default = "Enabled"
}
resource "aws_s3_bucket" "models" {
  bucket        = "strata-models"
  force_destroy = true
  tags          = { team = "ml" }
}
resource "aws_s3_bucket_versioning" "models" {
  bucket = aws_s3_bucket.models.id
  versioning_configuration { status = var.versioning }
}
"#,
    )
    .expect("config");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let conf = aws_conf(&rt, &m, "us-east-1");
    let s3 = aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(&conf)
            .force_path_style(true)
            .build(),
    );
    // moto never pages ListBuckets: its first look after the create (the
    // sweep for what a resent create left) is an empty page with a token
    // here. The create is resent: its first attempt is answered 503.
    m.proxy.inject(strata_standin::Injection {
        // The first PUT to the bucket is CreateBucket (tags and
        // versioning come after).
        matching: vec!["PUT /strata-models".to_string()],
        times: 1,
        status: 503,
        headers: vec![("content-type".into(), "application/xml".into())],
        body: "<Error><Code>ServiceUnavailable</Code><Message>injected</Message></Error>".into(),
    });
    let buckets = |inner: &str, token: &str| strata_standin::Injection {
        matching: vec!["GET /?x-id=ListBuckets".to_string()],
        times: 1,
        status: 200,
        headers: vec![("content-type".into(), "application/xml".into())],
        body: format!(
            r#"<ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Buckets>{inner}</Buckets>{token}</ListAllMyBucketsResult>"#
        ),
    };
    let mut second = buckets(
        "<Bucket><Name>strata-models</Name><CreationDate>2026-01-01T00:00:00.000Z</CreationDate></Bucket>",
        "",
    );
    second.matching.push("continuation-token=buckets-2".into());
    m.proxy.inject(second);
    m.proxy.inject(buckets(
        "",
        "<ContinuationToken>buckets-2</ContinuationToken>",
    ));

    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(m.proxy.pending(), 0, "ListBuckets' second page was read");
    let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan must be empty:\n{out}");
    let v = rt
        .block_on(s3.get_bucket_versioning().bucket("strata-models").send())
        .expect("versioning");
    assert_eq!(v.status().map(|s| s.as_str()), Some("Enabled"));

    // A tag changed by hand comes back; versioning suspends in place.
    let held = rt
        .block_on(s3.get_bucket_tagging().bucket("strata-models").send())
        .expect("tags");
    let changed: Vec<_> = held
        .tag_set()
        .iter()
        .map(|t| {
            let v = if t.key() == "team" { "web" } else { t.value() };
            aws_sdk_s3::types::Tag::builder()
                .key(t.key())
                .value(v)
                .build()
                .expect("tag")
        })
        .collect();
    rt.block_on(
        s3.put_bucket_tagging()
            .bucket("strata-models")
            .tagging(
                aws_sdk_s3::types::Tagging::builder()
                    .set_tag_set(Some(changed))
                    .build()
                    .expect("tagging"),
            )
            .send(),
    )
    .expect("tag by hand");
    let (code, out) = strata(
        &d,
        &m,
        &["apply", "--auto-approve", "--var", "versioning=Suspended"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 added, 2 changed, 0 destroyed"), "{out}");
    let tags = rt
        .block_on(s3.get_bucket_tagging().bucket("strata-models").send())
        .expect("tags");
    let team = tags.tag_set().iter().find(|t| t.key() == "team");
    assert_eq!(team.map(|t| t.value()), Some("ml"));
    assert!(
        tags.tag_set().iter().any(|t| t.key() == "strata:address"),
        "ownership tags survive a whole-set PutBucketTagging"
    );

    // force_destroy empties the bucket first.
    rt.block_on(
        s3.put_object()
            .bucket("strata-models")
            .key("llama/weights.bin")
            .body(aws_sdk_s3::primitives::ByteStream::from_static(b"w"))
            .send(),
    )
    .expect("object");
    let (code, out) = strata(
        &d,
        &m,
        &["destroy", "--auto-approve", "--var", "versioning=Suspended"],
    );
    assert_eq!(code, 0, "{out}");
    let left = rt.block_on(s3.list_buckets().send()).expect("buckets");
    assert!(left.buckets().is_empty(), "{left:?}");
}

#[test]
fn throttling_is_retried_and_refusals_are_explained() {
    let m = moto();
    let d = common::scratch("aws", "faults");
    std::fs::write(
        d.join("main.tf"),
        r#"
resource "aws_vpc" "main" { cidr_block = "10.95.0.0/16" }

resource "aws_subnet" "a" {
  vpc_id     = aws_vpc.main.id
  cidr_block = "10.95.0.0/20"
}
"#,
    )
    .expect("config");
    // Throttled twice: the SDK's retries (26 attempts, as the AWS provider makes) absorb it.
    m.proxy.inject(strata_standin::Injection::ec2_error(
        "CreateVpc",
        503,
        "RequestLimitExceeded",
        "Request limit exceeded.",
        2,
    ));
    // Refused: AWS's encoded reason is decoded through STS.
    m.proxy.inject(strata_standin::Injection::ec2_error(
        "CreateSubnet",
        403,
        "UnauthorizedOperation",
        "You are not authorized to perform this operation. Encoded authorization failure message: ENCODED-123",
        1,
    ));
    m.proxy.inject(strata_standin::Injection::query_result(
        "DecodeAuthorizationMessage",
        "https://sts.amazonaws.com/doc/2011-06-15/",
        r#"<DecodedMessage>{"allowed":false,"explicitDeny":true,"context":{"action":"ec2:CreateSubnet"}}</DecodedMessage>"#,
        1,
    ));
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(m.proxy.pending(), 0, "every injected answer was asked for");
    assert!(out.contains("aws_subnet.a failed"), "{out}");
    assert!(out.contains("UnauthorizedOperation"), "{out}");
    assert!(
        out.contains(r#"Decoded: {"allowed":false,"explicitDeny":true"#),
        "{out}"
    );
    assert!(
        out.contains("main.tf:4"),
        "the error points at the block:\n{out}"
    );
    let (_, list) = strata(&d, &m, &["state", "list"]);
    assert_eq!(list.trim(), "aws_vpc.main", "the throttled VPC was made");

    // No capacity: the node group's health says so, and the error is of
    // its own kind, with advice.
    std::fs::write(d.join("main.tf"), EKS).expect("config");
    m.proxy.inject(strata_standin::Injection::rest_json(
        "GET",
        "/clusters/train/node-groups/h100",
        200,
        serde_json::json!({ "nodegroup": {
            "nodegroupName": "h100",
            "clusterName": "train",
            "status": "CREATE_FAILED",
            "health": { "issues": [{
                "code": "AsgInstanceLaunchFailures",
                "message": "Could not launch Spot Instances. InsufficientInstanceCapacity - There is no Spot capacity available that matches your request.",
                "resourceIds": ["eks-h100"]
            }]}
        }}),
        1,
    ));
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("aws_eks_node_group.h100 failed"), "{out}");
    let joined = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(joined.contains("for lack of capacity in a zone"), "{out}");
    assert!(joined.contains("try other zones"), "{out}");
    // The node group EKS made is recorded, tainted, not orphaned: the next
    // plan replaces it, and then all is converged.
    let (_, list) = strata(&d, &m, &["state", "list"]);
    assert!(list.contains("aws_eks_node_group.h100"), "{list}");
    let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("aws_eks_node_group.h100 is tainted, so must be replaced"),
        "{out}"
    );
    assert!(
        out.contains("Plan: 1 to add, 0 to change, 1 to destroy."),
        "{out}"
    );
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn refresh_follows_describe_pages() {
    let m = moto();
    let d = common::scratch("aws", "pages");
    std::fs::write(
        d.join("main.tf"),
        r#"
resource "aws_vpc" "main" { cidr_block = "10.96.0.0/16" }
resource "aws_subnet" "s" {
  count             = 2
  vpc_id            = aws_vpc.main.id
  cidr_block        = cidrsubnet("10.96.0.0/16", 4, count.index)
  availability_zone = "us-east-1a"
}
"#,
    )
    .expect("config");
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let (_, shown) = strata(&d, &m, &["state", "pull"]);
    let state: serde_json::Value = serde_json::from_str(shown.trim()).expect("state");
    let subnets: Vec<serde_json::Value> = state["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter(|r| r["type"] == "aws_subnet")
        .flat_map(|r| r["instances"].as_array().cloned().unwrap_or_default())
        .map(|i| i["attributes"].clone())
        .collect();
    assert_eq!(subnets.len(), 2);
    // moto never pages; here DescribeSubnets answers one subnet per page.
    let page = |s: &serde_json::Value, next: Option<&str>| {
        let attr = |k: &str| s[k].as_str().unwrap_or_default().to_string();
        format!(
            r#"<DescribeSubnetsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>injected</requestId><subnetSet><item><subnetId>{}</subnetId><vpcId>{}</vpcId><cidrBlock>{}</cidrBlock><availabilityZone>{}</availabilityZone><mapPublicIpOnLaunch>false</mapPublicIpOnLaunch><ownerId>{}</ownerId><subnetArn>{}</subnetArn></item></subnetSet>{}</DescribeSubnetsResponse>"#,
            attr("id"),
            attr("vpc_id"),
            attr("cidr_block"),
            attr("availability_zone"),
            attr("owner_id"),
            attr("arn"),
            next.map(|t| format!("<nextToken>{t}</nextToken>"))
                .unwrap_or_default()
        )
    };
    let answer = |matching: Vec<&str>, body: String| strata_standin::Injection {
        matching: matching.into_iter().map(str::to_string).collect(),
        times: 1,
        status: 200,
        headers: vec![("content-type".into(), "text/xml".into())],
        body,
    };
    m.proxy.inject(answer(
        vec!["Action=DescribeSubnets", "NextToken=page2"],
        page(&subnets[1], None),
    ));
    m.proxy.inject(answer(
        vec!["Action=DescribeSubnets"],
        page(&subnets[0], Some("page2")),
    ));
    let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(m.proxy.pending(), 0, "both pages were asked for:\n{out}");
    assert_eq!(code, 0, "both subnets were found:\n{out}");
}

const DRIFT_STACK: &str = r#"
resource "aws_vpc" "main" {
  cidr_block = "10.50.0.0/16"
  tags       = { Name = "drift", team = "ml" }
}
resource "aws_subnet" "nodes" {
  count             = 2
  vpc_id            = aws_vpc.main.id
  cidr_block        = cidrsubnet("10.50.0.0/16", 4, count.index)
  availability_zone = "us-east-1a"
}
resource "aws_security_group" "nodes" {
  name   = "drift-nodes"
  vpc_id = aws_vpc.main.id
  egress {
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}
"#;

/// `strata drift` against moto: a tag, a security-group rule and a deleted
/// subnet, changed with the SDK, are each named with what changed; the
/// state is never written; `--ignore` leaves resources out; once an apply
/// puts things back there is no drift.
#[test]
fn drift_names_what_changed_outside_strata_and_writes_nothing() {
    let m = moto();
    let d = common::scratch("aws", "drift");
    std::fs::write(d.join("main.tf"), DRIFT_STACK).expect("config");
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = strata(&d, &m, &["drift"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("No drift."), "{out}");

    let (rt, ec2, _) = sdk(&m);
    let vpc_id = our_vpcs(&rt, &ec2)
        .iter()
        .find(|v| v.cidr_block() == Some("10.50.0.0/16"))
        .and_then(|v| v.vpc_id().map(str::to_string))
        .expect("the VPC");
    tag_by_hand(&rt, &ec2, &vpc_id, "team", "someone-else");
    let subnets = rt
        .block_on(
            ec2.describe_subnets()
                .filters(filter("vpc-id", &vpc_id))
                .send(),
        )
        .expect("subnets");
    let gone = subnets
        .subnets()
        .iter()
        .find(|s| s.cidr_block() == Some("10.50.16.0/20"))
        .and_then(|s| s.subnet_id())
        .expect("the second subnet")
        .to_string();
    rt.block_on(ec2.delete_subnet().subnet_id(&gone).send())
        .expect("delete by hand");
    let groups = rt
        .block_on(
            ec2.describe_security_groups()
                .filters(filter("group-name", "drift-nodes"))
                .send(),
        )
        .expect("groups");
    let sg = groups.security_groups()[0]
        .group_id()
        .expect("id")
        .to_string();
    let ssh = ssh_from_anywhere();
    rt.block_on(
        ec2.authorize_security_group_egress()
            .group_id(&sg)
            .ip_permissions(ssh)
            .send(),
    )
    .expect("egress rule by hand");

    let state = std::fs::read(d.join("terraform.tfstate")).expect("state");
    let (code, out) = strata(&d, &m, &["drift", "--format", "json"]);
    assert_eq!(code, 2, "{out}");
    let report: serde_json::Value = serde_json::from_str(
        out.lines()
            .find(|l| l.starts_with('{'))
            .expect("one JSON line"),
    )
    .expect("JSON");
    let entry = |addr: &str| {
        report["drift"]
            .as_array()
            .and_then(|a| a.iter().find(|e| e["address"] == addr))
            .unwrap_or_else(|| panic!("{addr} in {report}"))
            .clone()
    };
    let vpc = entry("aws_vpc.main");
    assert_eq!(vpc["action"], "update", "{vpc}");
    let tag = vpc["changed_attributes"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["path"] == r#"tags["team"]"#))
        .unwrap_or_else(|| panic!("the tag's path in {vpc}"));
    assert_eq!(tag["before"], "ml");
    assert_eq!(tag["after"], "someone-else");
    assert_eq!(entry("aws_subnet.nodes[1]")["action"], "delete");
    let rules = entry("aws_security_group.nodes");
    assert!(
        rules["changed_attributes"]
            .as_array()
            .is_some_and(|a| a.iter().any(|c| c["path"] == "egress")),
        "{rules}"
    );
    assert_eq!(report["summary"]["changed"], 2, "{report}");
    assert_eq!(report["summary"]["deleted"], 1, "{report}");
    assert_eq!(report["resource_drift"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        std::fs::read(d.join("terraform.tfstate")).expect("state"),
        state,
        "drift never writes the state"
    );

    let (code, out) = strata(
        &d,
        &m,
        &["drift", "--format", "markdown", "--ignore", "aws_subnet.*"],
    );
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("### strata drift: 2 changed, 0 deleted outside strata"),
        "{out}"
    );
    assert!(
        out.contains(r#"`tags["team"]`: `"ml"` → `"someone-else"`"#),
        "{out}"
    );
    assert!(!out.contains("aws_subnet.nodes[1]"), "ignored:\n{out}");

    // A refresh-only plan shows the drift and nothing to undo it; applied
    // (Terraform's spelling, then its `refresh` command) it records the
    // objects as they are and changes none of them.
    let (code, out) = strata(&d, &m, &["plan", "-refresh-only", "-detailed-exitcode"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("This is a refresh-only plan"), "{out}");
    assert!(!out.contains("will be updated in-place"), "{out}");
    assert!(!out.contains("Plan:"), "{out}");
    let (code, out) = strata(&d, &m, &["apply", "-refresh-only", "-auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let state = std::fs::read_to_string(d.join("terraform.tfstate")).expect("state");
    assert!(state.contains("someone-else"), "the tag as it is now");
    assert!(
        !state.contains(&gone),
        "the subnet deleted outside strata left the state"
    );
    let (code, out) = strata(&d, &m, &["refresh"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = strata(&d, &m, &["plan", "-refresh-only", "-detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Your infrastructure still matches the configuration."),
        "{out}"
    );
    let team = our_vpcs(&rt, &ec2)
        .iter()
        .find(|v| v.vpc_id() == Some(vpc_id.as_str()))
        .and_then(|v| v.tags().iter().find(|t| t.key() == Some("team")))
        .and_then(|t| t.value().map(str::to_string));
    assert_eq!(
        team.as_deref(),
        Some("someone-else"),
        "a refresh-only apply changes no object"
    );
    let (code, out) = strata(&d, &m, &["plan", "-detailed-exitcode"]);
    assert_eq!(
        code, 2,
        "the configuration still asks for the tag, the rules and the subnet:\n{out}"
    );
    assert!(out.contains("1 to add, 2 to change"), "{out}");

    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = strata(&d, &m, &["drift"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = strata(&d, &m, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
}
