//! The real AWS provider (5.100.0, from this machine's filesystem mirror)
//! beside strata. Every native AWS type is held to its schema, so that a
//! state strata writes is one the provider reads, and a directory can go
//! back to Terraform: for what strata supports, the same schema version,
//! attribute names and types, block nesting modes and item counts. What
//! strata leaves out of a type is allowed; what it has must be the
//! provider's. And what strata does through the provider as a plugin
//! (configuration generated on import) is what Terraform does with it.

use serde_json::Value as Json;
use std::path::{Path, PathBuf};

#[path = "common/aws_mirror.rs"]
mod aws_mirror;
#[path = "common/moto.rs"]
#[allow(dead_code)]
mod moto;
#[path = "common/oracle.rs"]
mod oracle;
use aws_mirror::mirror;
use oracle::require_terraform;

/// Differences not closed yet, by the start of their line, each with why.
/// The test fails on any other difference, and on one of these once it is
/// gone (take it off the list then).
const NOT_YET: &[&str] = &[];

const NEEDS_AWS: &str = r#"
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = "5.100.0" }
  }
}
"#;

/// The AWS provider's part of `providers schema -json`.
fn aws_schemas(text: &str) -> Json {
    let all: Json = serde_json::from_str(text).expect("schema JSON");
    all["provider_schemas"]["registry.terraform.io/hashicorp/aws"].clone()
}

/// Where strata's block differs from the provider's, one line each.
fn differences(path: &str, ours: &Json, theirs: &Json, out: &mut Vec<String>) {
    let empty = serde_json::Map::new();
    let field = |b: &Json, k: &str| b[k].as_object().cloned().unwrap_or_else(|| empty.clone());
    let (their_attrs, their_blocks) = (field(theirs, "attributes"), field(theirs, "block_types"));
    for (name, a) in field(ours, "attributes") {
        match their_attrs.get(&name) {
            None if their_blocks.contains_key(&name) => out.push(format!(
                "{path}.{name}: an attribute here, a block in the provider"
            )),
            None => out.push(format!("{path}.{name}: the provider has no such attribute")),
            Some(t) if t["type"] != a["type"] => out.push(format!(
                "{path}.{name}: type {} here, {} in the provider",
                a["type"], t["type"]
            )),
            Some(_) => {}
        }
    }
    for (name, b) in field(ours, "block_types") {
        let Some(t) = their_blocks.get(&name) else {
            let what = match their_attrs.get(&name) {
                Some(a) => format!("an attribute of type {} in the provider", a["type"]),
                None => "the provider has no such block".into(),
            };
            out.push(format!("{path}.{name}: a block here, {what}"));
            continue;
        };
        for key in ["nesting_mode", "min_items", "max_items"] {
            if b[key] != t[key] {
                out.push(format!(
                    "{path}.{name}: {key} {} here, {} in the provider",
                    b[key], t[key]
                ));
            }
        }
        differences(&format!("{path}.{name}"), &b["block"], &t["block"], out);
    }
}

/// A scratch directory and a CLI configuration that installs the AWS
/// provider from the mirror, for a test that runs Terraform with it;
/// `None` (said) where the mirror or Terraform is missing outside CI.
struct Lab {
    dir: PathBuf,
    rc: PathBuf,
}

impl Lab {
    fn new(test: &str) -> Option<Lab> {
        let Some(mirror) = mirror() else {
            eprintln!("SKIPPED {test}: no AWS provider mirror here");
            return None;
        };
        if !require_terraform(test) {
            return None;
        }
        let dir = std::env::temp_dir().join(format!("strata-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        let rc = dir.join("cli.tfrc");
        let text = format!(
            "provider_installation {{\n  filesystem_mirror {{\n    path = {:?}\n  }}\n}}\n",
            mirror.display().to_string()
        );
        std::fs::write(&rc, text).expect("cli config");
        Some(Lab { dir, rc })
    }

    /// `tool ARGS` in the folder `sub` (made, holding `config`).
    fn folder(&self, sub: &str, config: &str) -> PathBuf {
        let at = self.dir.join(sub);
        std::fs::create_dir_all(&at).expect("folder");
        std::fs::write(at.join("main.tf"), config).expect("config");
        at
    }

    /// The environment for both tools on moto at `url`: strata's native
    /// driver takes the endpoint from `AWS_ENDPOINT_URL`, Terraform's
    /// provider from its `endpoints` block.
    fn moto_env<'a>(&'a self, url: &'a str) -> [(&'static str, &'a std::ffi::OsStr); 4] {
        [
            ("TF_CLI_CONFIG_FILE", self.rc.as_os_str()),
            ("AWS_ENDPOINT_URL", url.as_ref()),
            ("AWS_ACCESS_KEY_ID", "testing".as_ref()),
            ("AWS_SECRET_ACCESS_KEY", "testing".as_ref()),
        ]
    }

    fn ok(&self, tool: &str, at: &Path, args: &[&str]) -> String {
        let env = [("TF_CLI_CONFIG_FILE", self.rc.as_os_str())];
        let (code, out, err) = oracle::run_tool(tool, at, args, &env);
        assert_eq!(code, 0, "{tool} {args:?}: {err}");
        out
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[test]
fn every_native_aws_type_has_the_providers_schema() {
    let Some(lab) = Lab::new("every_native_aws_type_has_the_providers_schema") else {
        return;
    };
    // Terraform reads the provider from the mirror, as a CLI configuration
    // would name it; strata answers from its native driver, with no init.
    let tf = lab.folder("terraform", NEEDS_AWS);
    lab.ok("terraform", &tf, &["init", "-input=false", "-no-color"]);
    let schema = ["providers", "schema", "-json"];
    let theirs = &aws_schemas(&lab.ok("terraform", &tf, &schema));
    let ours = aws_schemas(&lab.ok("strata", &lab.folder("strata", NEEDS_AWS), &schema));
    let mut out = Vec::new();
    let mut compared = 0;
    let kinds = [
        "resource_schemas",
        "data_source_schemas",
        "ephemeral_resource_schemas",
    ];
    for kind in kinds {
        let Some(types) = ours[kind].as_object() else {
            continue;
        };
        for (t, s) in types {
            compared += 1;
            let Some(p) = theirs[kind].get(t) else {
                out.push(format!("{t}: the provider has no such type"));
                continue;
            };
            if s["version"] != p["version"] {
                out.push(format!(
                    "{t}: schema version {} here, {} in the provider",
                    s["version"], p["version"]
                ));
            }
            differences(t, &s["block"], &p["block"], &mut out);
        }
    }
    assert!(compared >= 25, "only {compared} native types compared");
    let known = |line: &String| NOT_YET.iter().any(|k| line.starts_with(k));
    let new: Vec<&String> = out.iter().filter(|l| !known(l)).collect();
    assert!(
        new.is_empty(),
        "native AWS schemas that are not the provider's:\n{}",
        new.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    let closed: Vec<&&str> = NOT_YET
        .iter()
        .filter(|k| !out.iter().any(|l| l.starts_with(**k)))
        .collect();
    assert!(
        closed.is_empty(),
        "no longer different, take off NOT_YET: {closed:?}"
    );
}

/// A policy document with what trips a renderer up (empty condition values
/// and principal identifiers, several conditions and principals, `not_*`
/// lists, a wildcard principal, a Deny), rendered by strata's native data
/// source and by the AWS provider: the same JSON text. A condition dropped
/// would widen who may assume a role.
const POLICY: &str = r#"
data "aws_iam_policy_document" "p" {
  statement {
    sid     = "Web"
    actions = ["sts:AssumeRoleWithWebIdentity"]
    principals {
      type        = "Federated"
      identifiers = ["arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com"]
    }
    principals {
      type        = "AWS"
      identifiers = []
    }
    condition {
      test     = "StringLike"
      variable = "token.actions.githubusercontent.com:sub"
      values   = []
    }
    condition {
      test     = "StringEquals"
      variable = "token.actions.githubusercontent.com:aud"
      values   = ["sts.amazonaws.com", "other"]
    }
  }
  statement {
    effect        = "Deny"
    not_actions   = ["s3:GetObject", "s3:ListBucket"]
    not_resources = ["arn:aws:s3:::b/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
  }
}

output "json" {
  value = data.aws_iam_policy_document.p.json
}
"#;

/// The provider offline: it reads a policy document without calling AWS.
/// strata's native driver needs only the region for that.
const OFFLINE_AWS: &str = r#"
provider "aws" {
  region                      = "us-east-1"
  access_key                  = "x"
  secret_key                  = "y"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
}
"#;

fn provider_of(tool: &str) -> &'static str {
    match tool {
        "terraform" => OFFLINE_AWS,
        _ => "provider \"aws\" {\n  region = \"us-east-1\"\n}\n",
    }
}

#[test]
fn the_policy_document_is_the_providers_text() {
    let Some(lab) = Lab::new("the_policy_document_is_the_providers_text") else {
        return;
    };
    let mut outputs = Vec::new();
    for tool in ["terraform", "strata"] {
        let at = lab.folder(tool, &format!("{NEEDS_AWS}{}{POLICY}", provider_of(tool)));
        if tool == "terraform" {
            lab.ok(tool, &at, &["init", "-input=false", "-no-color"]);
        }
        lab.ok(tool, &at, &["apply", "-auto-approve", "-no-color"]);
        outputs.push(lab.ok(tool, &at, &["output", "-raw", "json"]));
    }
    assert_eq!(
        outputs[0], outputs[1],
        "the provider's (left) and strata's (right)"
    );
}

/// The provider against moto, each service's endpoint the proxy's.
fn moto_provider(url: &str) -> String {
    let endpoints: String = ["ec2", "eks", "iam", "s3", "sts"]
        .iter()
        .map(|s| format!("    {s} = {url:?}\n"))
        .collect();
    format!(
        r#"
provider "aws" {{
  region                      = "us-east-1"
  access_key                  = "testing"
  secret_key                  = "testing"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  s3_use_path_style           = true
  endpoints {{
{endpoints}  }}
}}
"#
    )
}

/// `plan -generate-config-out` through the real provider, beside
/// Terraform, with `AWS_CA_BUNDLE` set as on this machine: strata gave the
/// provider process a second ConfigureProvider (which the AWS provider
/// fails when that variable is set), wrote `id` and `""` where Terraform
/// writes nothing and null, wrote a policy as a string, hid an imported
/// object's attributes, and, when one generated block failed validation,
/// showed no plan and said its import target had no configuration.
/// Now: the same file, the same partial plan, the same exit code.
#[test]
fn generate_config_out_through_the_provider_is_terraforms() {
    let Some(lab) = Lab::new("generate_config_out_through_the_provider_is_terraforms") else {
        return;
    };
    let moto = moto::moto();
    let provider = moto_provider(&moto.url);
    let bundle = std::ffi::OsString::from("/etc/ssl/certs/ca-certificates.crt");
    let env = [
        ("TF_CLI_CONFIG_FILE", lab.rc.as_os_str()),
        ("AWS_CA_BUNDLE", bundle.as_os_str()),
    ];
    let seed = lab.folder("seed", &format!("{NEEDS_AWS}{provider}{SEEDED}"));
    for args in [&["init", "-input=false"][..], &["apply", "-auto-approve"]] {
        let (code, _, err) = oracle::run_tool("terraform", &seed, args, &env);
        assert_eq!(code, 0, "seeding: {err}");
    }
    let vpc = lab.ok("terraform", &seed, &["output", "-raw", "vpc"]);
    let imports = format!(
        "{NEEDS_AWS}{provider}
import {{
  to = aws_iam_role.nodes
  id = \"gpu-nodes\"
}}

import {{
  to = aws_s3_bucket.ckpt
  id = \"ckpt-bucket\"
}}

import {{
  to = aws_vpc.main
  id = {vpc:?}
}}
"
    );
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let at = lab.folder(tool, &imports);
        let (code, _, err) = oracle::run_tool(tool, &at, &["init", "-input=false"], &env);
        assert_eq!(code, 0, "{tool} init: {err}");
        let plan = ["plan", "-no-color", "-generate-config-out=gen.tf"];
        let (code, out, err) = oracle::run_tool(tool, &at, &plan, &env);
        // moto's VPC reads back with an IPv6 netmask of 0, which the
        // provider then refuses in the configuration written from it.
        assert_eq!(code, 1, "{tool}:\n{out}\n{err}");
        assert!(
            err.contains("all of `ipv6_ipam_pool_id,ipv6_netmask_length` must be"),
            "{tool}: {err}"
        );
        let out = out.replace("Terraform", "strata");
        // From the plan on: the lines before it say what was read, in
        // the order each tool read it.
        let plan = out
            .find("\nstrata planned the following actions")
            .map(|at| out[at..].to_string())
            .unwrap_or_else(|| panic!("{tool} shows no partial plan:\n{out}"));
        let text = std::fs::read_to_string(at.join("gen.tf"))
            .expect("gen.tf")
            .replace("Terraform", "strata");
        // Terraform writes the blocks in the order its imports finished.
        let mut blocks: Vec<String> = text.split("\n\n").map(|b| b.trim().to_string()).collect();
        blocks.sort();
        seen.push((blocks, plan));
    }
    assert_eq!(
        seen[1].0, seen[0].0,
        "strata's gen.tf (left), Terraform's (right)"
    );
    assert_eq!(
        seen[1].1, seen[0].1,
        "strata's plan (left), Terraform's (right)"
    );
}

/// What the import trial adopts, made by Terraform through the provider.
const SEEDED: &str = r#"
resource "aws_iam_role" "nodes" {
  name        = "gpu-nodes"
  description = "GPU $${x} nodes"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "ec2.amazonaws.com" }
      Action    = "sts:AssumeRole"
      Condition = { StringEquals = { "aws:x" = ["a", "b"] } }
    }]
  })
  tags = { team = "ml" }
}

resource "aws_s3_bucket" "ckpt" {
  bucket = "ckpt-bucket"
}

resource "aws_vpc" "main" {
  cidr_block = "10.1.0.0/16"
}

output "vpc" {
  value = aws_vpc.main.id
}
"#;

/// Every native AWS data source read beside the provider's, on the same
/// inputs against the same moto (issue 40 item 23): what each attribute
/// strata has says is what the provider says. strata reads through its
/// native driver (the endpoint from `AWS_ENDPOINT_URL`), Terraform through
/// the provider (its `endpoints` block).
#[test]
fn native_data_sources_read_as_the_provider_reads_them() {
    let Some(lab) = Lab::new("native_data_sources_read_as_the_provider_reads_them") else {
        return;
    };
    let moto = moto::moto();
    let reads = r#"
data "aws_availability_zones" "all" {
  state = "available"
}

data "aws_caller_identity" "me" {}

# moto gives every image its start time: the provider breaks a tie in
# creation date by Go's unstable sort, so the filter leaves one image.
data "aws_ami" "amazon" {
  most_recent = true
  owners      = ["amazon"]
  name_regex  = "^amzn"
  filter {
    name   = "architecture"
    values = ["x86_64"]
  }
  filter {
    name   = "name"
    values = ["amzn-ami-hvm-2017.09.*-gp2"]
  }
}

output "zones" {
  value = data.aws_availability_zones.all
}

output "me" {
  value = data.aws_caller_identity.me
}

output "ami" {
  value = {
    for k in ["id", "image_id", "name", "owner_id", "creation_date", "architecture"] :
    k => data.aws_ami.amazon[k]
  }
}
"#;
    let env = lab.moto_env(&moto.url);
    let mut outputs = Vec::new();
    for tool in ["terraform", "strata"] {
        let provider = match tool {
            "terraform" => moto_provider(&moto.url),
            _ => "provider \"aws\" {\n  region = \"us-east-1\"\n}\n".to_string(),
        };
        let at = lab.folder(tool, &format!("{NEEDS_AWS}{provider}{reads}"));
        if tool == "terraform" {
            let (code, _, err) = oracle::run_tool(tool, &at, &["init", "-input=false"], &env);
            assert_eq!(code, 0, "terraform init: {err}");
        }
        let (code, out, err) = oracle::run_tool(tool, &at, &["apply", "-auto-approve"], &env);
        assert_eq!(code, 0, "{tool}:\n{out}\n{err}");
        let (code, out, err) = oracle::run_tool(tool, &at, &["output", "-json"], &env);
        assert_eq!(code, 0, "{tool}: {err}");
        let all: Json = serde_json::from_str(&out).expect("output JSON");
        let values: Vec<(String, Json)> = ["zones", "me", "ami"]
            .iter()
            .map(|k| (k.to_string(), all[k]["value"].clone()))
            .collect();
        outputs.push(values);
    }
    // What strata has of each is the provider's; the provider has more.
    for ((name, theirs), (_, ours)) in outputs[0].iter().zip(&outputs[1]) {
        let ours = ours.as_object().cloned().unwrap_or_default();
        assert!(!ours.is_empty(), "{name}: strata read nothing");
        for (k, v) in ours {
            assert_eq!(
                &theirs[&k], &v,
                "{name}.{k}: the provider's (left), strata's (right)"
            );
        }
    }
}

/// A security group's inline rule without its ports, beside the provider:
/// both refuse it at validate. (As an attribute written as blocks the
/// rules' arguments are all optional to the schema; the driver checks
/// what the provider requires, or the rule would be dropped unmade.)
#[test]
fn a_rule_without_its_ports_is_refused_as_the_provider_refuses_it() {
    let Some(lab) = Lab::new("a_rule_without_its_ports_is_refused_as_the_provider_refuses_it")
    else {
        return;
    };
    let group = r#"
resource "aws_security_group" "g" {
  name = "g"
  ingress {
    protocol    = "tcp"
    to_port     = 443
    cidr_blocks = ["10.0.0.0/8"]
  }
}
"#;
    for tool in ["terraform", "strata"] {
        let at = lab.folder(tool, &format!("{NEEDS_AWS}{}{group}", provider_of(tool)));
        let env = [("TF_CLI_CONFIG_FILE", lab.rc.as_os_str())];
        if tool == "terraform" {
            lab.ok(tool, &at, &["init", "-input=false", "-no-color"]);
        }
        let (code, out, err) = oracle::run_tool(tool, &at, &["validate", "-no-color"], &env);
        assert_eq!(code, 1, "{tool}:\n{out}\n{err}");
        for says in ["Missing required argument", "from_port\" is required"] {
            assert!(err.contains(says), "{tool} does not say {says}: {err}");
        }
    }
}

/// The way back to Terraform (issue 40 item 7): objects strata made
/// through its native driver on moto, in a directory whose state the
/// provider then reads, plan with no changes under Terraform — the state
/// strata wrote is the provider's own.
#[test]
fn the_provider_reads_what_strata_wrote_with_no_changes() {
    let Some(lab) = Lab::new("the_provider_reads_what_strata_wrote_with_no_changes") else {
        return;
    };
    let moto = moto::moto();
    let objects = r#"
resource "aws_vpc" "main" {
  cidr_block = "10.7.0.0/16"
  tags       = { Name = "back-to-terraform" }
}

resource "aws_subnet" "a" {
  vpc_id            = aws_vpc.main.id
  cidr_block        = "10.7.1.0/24"
  availability_zone = "us-east-1a"
}

resource "aws_security_group" "nodes" {
  name   = "nodes"
  vpc_id = aws_vpc.main.id
  ingress {
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["10.7.0.0/16"]
  }
  egress {
    from_port   = 0
    to_port     = 0
    protocol    = "-1"
    cidr_blocks = ["0.0.0.0/0"]
  }
}

resource "aws_iam_role" "nodes" {
  name = "back-nodes"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "ec2.amazonaws.com" }
      Action    = "sts:AssumeRole"
    }]
  })
}
"#;
    let at = strata_applied(&lab, &moto, "shared", objects);
    terraform_takes_it_back(&lab, &moto, &at, objects);
}

/// Applies `objects` with strata's native driver on `moto`: the directory.
fn strata_applied(lab: &Lab, moto: &moto::Moto, tag: &str, objects: &str) -> PathBuf {
    let env = lab.moto_env(&moto.url);
    let native = "provider \"aws\" {\n  region = \"us-east-1\"\n}\n";
    let at = lab.folder(tag, &format!("{NEEDS_AWS}{native}{objects}"));
    let (code, out, err) = oracle::run_tool("strata", &at, &["apply", "-auto-approve"], &env);
    assert_eq!(code, 0, "strata:\n{out}\n{err}");
    at
}

/// Terraform and the provider plan what strata made in `at` with no
/// changes.
fn terraform_takes_it_back(lab: &Lab, moto: &moto::Moto, at: &Path, objects: &str) {
    let env = lab.moto_env(&moto.url);
    // Terraform's provider reaches moto by its endpoints block, and is
    // told to leave strata's ownership tags alone (as README says to do
    // when going back), which strata puts on what it makes to find it
    // after a crash.
    let provider = moto_provider(&moto.url).replace(
        "  s3_use_path_style           = true\n",
        "  s3_use_path_style           = true\n  ignore_tags {\n    key_prefixes = [\"strata:\"]\n  }\n",
    );
    std::fs::write(
        at.join("main.tf"),
        format!("{NEEDS_AWS}{provider}{objects}"),
    )
    .expect("config");
    let (code, _, err) = oracle::run_tool("terraform", &at, &["init", "-input=false"], &env);
    assert_eq!(code, 0, "terraform init: {err}");
    let args = ["plan", "-no-color", "-detailed-exitcode"];
    let (code, out, err) = oracle::run_tool("terraform", &at, &args, &env);
    assert_eq!(
        code, 0,
        "Terraform would change what strata made:\n{out}\n{err}"
    );
}

/// Every other native AWS type the same way: the network a GPU cluster
/// sits in (NAT, routes, rule resources, a launch template), a bucket with
/// versioning, IAM (inline and attached policies, an instance profile, an
/// OIDC provider), an EKS cluster with a node group and an add-on.
#[test]
fn every_native_type_goes_back_to_terraform_with_no_changes() {
    let Some(lab) = Lab::new("every_native_type_goes_back_to_terraform_with_no_changes") else {
        return;
    };
    // The provider's own state of the same configuration, on a moto of its
    // own: what strata records of each object must have its shape.
    let theirs = moto::moto();
    let env = lab.moto_env(&theirs.url);
    let at = lab.folder(
        "provider",
        &format!("{NEEDS_AWS}{}{EVERY_TYPE}", moto_provider(&theirs.url)),
    );
    lab.ok("terraform", &at, &["init", "-input=false"]);
    let (code, out, err) = oracle::run_tool("terraform", &at, &["apply", "-auto-approve"], &env);
    assert_eq!(code, 0, "terraform:\n{out}\n{err}");
    // moto through the proxy is a cloud the provider plans no changes on
    // after its own apply (moto's inventions corrected), so a change
    // planned below is strata's.
    let args = ["plan", "-no-color", "-detailed-exitcode"];
    let (code, out, err) = oracle::run_tool("terraform", &at, &args, &env);
    assert_eq!(code, 0, "Terraform after its own apply:\n{out}\n{err}");
    let ours = moto::moto();
    let back = strata_applied(&lab, &ours, "every", EVERY_TYPE);
    let read = |dir: &Path| -> Json {
        let text = std::fs::read_to_string(dir.join("terraform.tfstate")).expect("state");
        serde_json::from_str(&text).expect("state JSON")
    };
    let mut found = Vec::new();
    shape_differences(&read(&back), &read(&at), &mut found);
    assert!(
        found.is_empty(),
        "what strata recorded is not shaped as the provider records it (strata's, then the provider's):\n{}",
        found.join("\n")
    );
    terraform_takes_it_back(&lab, &ours, &back, EVERY_TYPE);
}

/// Where two states of the same configuration on two clouds differ in
/// kind rather than in the identifiers each cloud made up: null against a
/// value, an empty collection against a full one, another length, another
/// boolean or number, an empty string against text.
fn shape_differences(ours: &Json, theirs: &Json, out: &mut Vec<String>) {
    let objects = |state: &Json| -> std::collections::BTreeMap<String, Json> {
        let mut by_addr = std::collections::BTreeMap::new();
        for r in state["resources"].as_array().into_iter().flatten() {
            let addr = format!(
                "{}.{}",
                r["type"].as_str().unwrap_or(""),
                r["name"].as_str().unwrap_or("")
            );
            if let Some(i) = r["instances"].get(0) {
                by_addr.insert(addr, i["attributes"].clone());
            }
        }
        by_addr
    };
    let (ours, theirs) = (objects(ours), objects(theirs));
    for (addr, theirs) in &theirs {
        match ours.get(addr) {
            None => out.push(format!("{addr}: not recorded")),
            Some(o) => shape_of(addr, o, theirs, out),
        }
    }
}

fn shape_of(path: &str, ours: &Json, theirs: &Json, out: &mut Vec<String>) {
    let empty = |v: &Json| match v {
        Json::Array(a) => a.is_empty(),
        Json::Object(o) => o.is_empty(),
        Json::String(s) => s.is_empty(),
        _ => false,
    };
    match (ours, theirs) {
        (Json::Object(o), Json::Object(t)) => {
            // What strata leaves out of a type is allowed (the provider
            // reads it as null and refreshes it); what it has is compared.
            for (k, ov) in o {
                let tv = t.get(k).unwrap_or(&Json::Null);
                shape_of(&format!("{path}.{k}"), ov, tv, out);
            }
        }
        (Json::Array(o), Json::Array(t)) if o.len() == t.len() => {
            for (i, (ov, tv)) in o.iter().zip(t).enumerate() {
                shape_of(&format!("{path}[{i}]"), ov, tv, out);
            }
        }
        (Json::String(_), Json::String(_)) if empty(ours) == empty(theirs) => {}
        (o, t) if o == t => {}
        // The legacy plugin SDK records a field its read sets from
        // nothing as its zero value, where strata records null; the
        // provider reads the two alike and plans no change (below).
        (Json::Null, Json::String(z)) if z.is_empty() => {}
        (Json::Null, Json::Number(z)) if z.as_f64() == Some(0.0) => {}
        (Json::Null, Json::Bool(false)) => {}
        (Json::Number(_) | Json::Bool(_), _) | (_, Json::Number(_) | Json::Bool(_)) => {
            out.push(format!("{path}: {o} / {t}", o = ours, t = theirs))
        }
        _ => out.push(format!("{path}: {} / {}", brief(ours), brief(theirs))),
    }
}

fn brief(v: &Json) -> String {
    let text = v.to_string();
    match text.len() > 60 {
        true => format!("{}…", &text[..60]),
        false => text,
    }
}

const EVERY_TYPE: &str = r#"
resource "aws_vpc" "main" {
  cidr_block           = "10.9.0.0/16"
  enable_dns_hostnames = true
}

resource "aws_subnet" "public" {
  vpc_id                  = aws_vpc.main.id
  cidr_block              = "10.9.0.0/24"
  availability_zone       = "us-east-1a"
  map_public_ip_on_launch = true
}

resource "aws_subnet" "private" {
  vpc_id            = aws_vpc.main.id
  cidr_block        = "10.9.16.0/20"
  availability_zone = "us-east-1b"
}

resource "aws_internet_gateway" "gw" {
  vpc_id = aws_vpc.main.id
}

resource "aws_eip" "nat" {
  domain = "vpc"
}

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
  route_table_id = aws_route_table.private.id
}

resource "aws_security_group" "nodes" {
  name   = "gpu-nodes"
  vpc_id = aws_vpc.main.id
}

resource "aws_vpc_security_group_ingress_rule" "https" {
  security_group_id = aws_security_group.nodes.id
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
  cidr_ipv4         = "10.9.0.0/16"
  tags              = { Name = "https" }
}

resource "aws_vpc_security_group_egress_rule" "all" {
  security_group_id = aws_security_group.nodes.id
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_launch_template" "gpu" {
  name                   = "gpu-nodes"
  vpc_security_group_ids = [aws_security_group.nodes.id]
  update_default_version = true
  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      volume_size = 200
      volume_type = "gp3"
    }
  }
  metadata_options {
    http_tokens                 = "required"
    http_put_response_hop_limit = 2
  }
}

resource "aws_s3_bucket" "checkpoints" {
  bucket = "back-checkpoints"
  tags   = { team = "ml" }
}

resource "aws_s3_bucket_versioning" "checkpoints" {
  bucket = aws_s3_bucket.checkpoints.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_iam_role" "cluster" {
  name = "back-cluster"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Principal = { Service = "eks.amazonaws.com" }, Action = "sts:AssumeRole" }]
  })
}

resource "aws_iam_role_policy_attachment" "cluster" {
  role       = aws_iam_role.cluster.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
}

resource "aws_iam_role" "nodes" {
  name = "back-nodes"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Principal = { Service = "ec2.amazonaws.com" }, Action = "sts:AssumeRole" }]
  })
}

resource "aws_iam_role_policy" "nodes" {
  name = "checkpoints"
  role = aws_iam_role.nodes.id
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = ["s3:GetObject", "s3:PutObject"], Resource = "${aws_s3_bucket.checkpoints.arn}/*" }]
  })
}

resource "aws_iam_instance_profile" "nodes" {
  name = "back-nodes"
  role = aws_iam_role.nodes.name
}

resource "aws_iam_openid_connect_provider" "cluster" {
  url             = "https://oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF"
  client_id_list  = ["sts.amazonaws.com"]
  thumbprint_list = ["9e99a48a9960b14926bb7f3b02e22da2b0ab7280"]
}

resource "aws_eks_cluster" "train" {
  name     = "back-train"
  role_arn = aws_iam_role.cluster.arn
  version  = "1.31"
  tags     = { team = "ml" }
  vpc_config {
    subnet_ids = [aws_subnet.public.id, aws_subnet.private.id]
  }
}

resource "aws_eks_node_group" "gpu" {
  cluster_name    = aws_eks_cluster.train.name
  node_group_name = "h100"
  node_role_arn   = aws_iam_role.nodes.arn
  subnet_ids      = [aws_subnet.private.id]
  instance_types  = ["p5.48xlarge"]
  ami_type        = "AL2023_x86_64_NVIDIA"
  capacity_type   = "SPOT"
  labels          = { workload = "training" }
  taint {
    key    = "nvidia.com/gpu"
    value  = "present"
    effect = "NO_SCHEDULE"
  }
  scaling_config {
    desired_size = 1
    min_size     = 0
    max_size     = 4
  }
  launch_template {
    name    = aws_launch_template.gpu.name
    version = aws_launch_template.gpu.latest_version
  }
}

resource "aws_eks_addon" "cni" {
  cluster_name  = aws_eks_cluster.train.name
  addon_name    = "vpc-cni"
  addon_version = "v1.19.0-eksbuild.1"
}
"#;
