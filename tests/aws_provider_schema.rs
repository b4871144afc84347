//! Every native AWS type held to the real AWS provider's schema (5.100.0,
//! from this machine's filesystem mirror), so that a state strata writes is
//! one the provider reads, and a directory can go back to Terraform: for
//! what strata supports, the same schema version, attribute names and
//! types, block nesting modes and item counts. What strata leaves out of a
//! type is allowed; what it has must be the provider's.

use serde_json::Value as Json;
use std::path::{Path, PathBuf};

#[path = "common/oracle.rs"]
mod oracle;
use oracle::{ok, require_terraform};

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
const NOT_YET: &[&str] = &[
    // A group's inline rules are an attribute of the provider's written as
    // blocks; strata keeps them as blocks, whose required ports the plan
    // checks. Same stored shape (a set of the same objects).
    "aws_security_group.ingress:",
    "aws_security_group.egress:",
];

const NEEDS_AWS: &str = r#"
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = "5.100.0" }
  }
}
"#;

fn schemas(tool: &str, dir: &Path) -> Json {
    let text = ok(tool, dir, &["providers", "schema", "-json"]);
    let all: Json = serde_json::from_str(&text).expect("schema JSON");
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

#[test]
fn every_native_aws_type_has_the_providers_schema() {
    let Some(mirror) = mirror() else {
        eprintln!("SKIPPED: no AWS provider mirror here");
        return;
    };
    if !require_terraform("every_native_aws_type_has_the_providers_schema") {
        return;
    }
    let d = std::env::temp_dir().join(format!("strata-aws-schema-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    std::fs::write(d.join("main.tf"), NEEDS_AWS).expect("config");
    // Terraform reads the provider from the mirror, as a CLI configuration
    // would name it; strata answers from its native driver, with no init.
    let tf = d.join("terraform");
    std::fs::create_dir_all(&tf).expect("terraform dir");
    std::fs::write(tf.join("main.tf"), NEEDS_AWS).expect("config");
    let rc = d.join("cli.tfrc");
    std::fs::write(
        &rc,
        format!(
            "provider_installation {{\n  filesystem_mirror {{\n    path = {:?}\n  }}\n}}\n",
            mirror.display().to_string()
        ),
    )
    .expect("cli config");
    let env = [("TF_CLI_CONFIG_FILE", rc.as_os_str())];
    let (code, _, err) = oracle::run_tool(
        "terraform",
        &tf,
        &["init", "-input=false", "-no-color"],
        &env,
    );
    assert_eq!(code, 0, "terraform init from the mirror: {err}");
    let (code, text, err) =
        oracle::run_tool("terraform", &tf, &["providers", "schema", "-json"], &env);
    assert_eq!(code, 0, "{err}");
    let all: Json = serde_json::from_str(&text).expect("schema JSON");
    let theirs = &all["provider_schemas"]["registry.terraform.io/hashicorp/aws"];
    let ours = schemas("strata", &d);
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
    let _ = std::fs::remove_dir_all(&d);
}
