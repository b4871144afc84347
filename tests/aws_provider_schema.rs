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

#[path = "common/moto.rs"]
#[allow(dead_code)]
mod moto;
#[path = "common/oracle.rs"]
mod oracle;
use oracle::require_terraform;

/// Where Terraform's layout of the provider is: `STRATA_AWS_PROVIDER_MIRROR`,
/// else the image's. Under CI=true it must be there.
fn mirror() -> Option<PathBuf> {
    let dir = std::env::var("STRATA_AWS_PROVIDER_MIRROR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from("/opt/tf-plugins"));
    let found = dir
        .join("registry.terraform.io/hashicorp/aws/5.100.0")
        .is_dir();
    assert!(
        found || std::env::var("CI").as_deref() != Ok("true"),
        "the AWS provider 5.100.0 is not at {} (set STRATA_AWS_PROVIDER_MIRROR); under CI=true the native schemas must be compared with it",
        dir.display()
    );
    found.then_some(dir)
}

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
    for kind in ["resource_schemas", "data_source_schemas"] {
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
    let endpoints: String = ["ec2", "iam", "s3", "sts"]
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
    let env = lab.moto_env(&moto.url);
    let native = "provider \"aws\" {\n  region = \"us-east-1\"\n}\n";
    let at = lab.folder("shared", &format!("{NEEDS_AWS}{native}{objects}"));
    let (code, out, err) = oracle::run_tool("strata", &at, &["apply", "-auto-approve"], &env);
    assert_eq!(code, 0, "strata:\n{out}\n{err}");
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
