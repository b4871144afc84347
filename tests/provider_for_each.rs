//! OpenTofu 1.9's provider `for_each` (issue 45): one instance of an
//! aliased configuration per element, chosen per resource instance (and
//! per module instance through `providers`) by a key expression. No
//! OpenTofu binary is here: strata is held to OpenTofu's source
//! (`configs/provider.go`, `configs/resource.go` `decodeProviderConfigRef`
//! and `InstanceValidation`, `tofu/eval_provider.go`,
//! `tofu/node_resource_abstract_instance.go`, `states/statefile/version4.go`).
//! The test provider keeps its objects in the store its configuration
//! names, so each instance's objects land in that instance's directory.

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;

#[path = "common/lab.rs"]
mod lab;
use lab::{errors_said, Lab, HEADER};

use serde_json::Value as Json;
use std::path::Path;

const CONFIG: &str = r#"
variable "regions" {
  type    = list(string)
  default = ["east", "west"]
}

variable "provider_regions" {
  type    = list(string)
  default = ["east", "west"]
}

locals {
  stores = { for r in var.provider_regions : r => "./store-${r}" }
}

provider "stratatest" {
  alias    = "by_region"
  for_each = local.stores
  store    = each.value
}

resource "stratatest_object" "o" {
  for_each = toset(var.regions)
  provider = stratatest.by_region[each.key]
  name     = "obj-${each.key}"
}

module "m" {
  source    = "./m"
  for_each  = toset(var.regions)
  providers = { stratatest = stratatest.by_region[each.key] }
  name      = "mod-${each.key}"
}

resource "stratatest_object" "plain" {
  name = "plain"
}
"#;

const CHILD: &str = r#"
terraform {
  required_providers {
    stratatest = { source = "registry.strata.test/strata/stratatest" }
  }
}

variable "name" {}

resource "stratatest_object" "x" {
  name = var.name
}
"#;

fn ready(lab: &Lab, tag: &str, body: &str) -> std::path::PathBuf {
    let dir = lab.work_with(tag, &format!("{HEADER}\n{body}"));
    std::fs::create_dir_all(dir.join("m")).unwrap();
    std::fs::write(dir.join("m/main.tf"), CHILD).unwrap();
    lab.ok("strata", &dir, &["init", "-no-color"]);
    dir
}

/// The object files in store directory `name`, sorted.
fn stored(dir: &Path, name: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir.join(name))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn state(dir: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(dir.join("terraform.tfstate")).unwrap()).unwrap()
}

/// Each resource's `provider` and its instances' `(index_key, provider)`.
fn providers_recorded(s: &Json) -> Vec<(String, Json, Vec<(Json, Json)>)> {
    s["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let name = format!(
                "{}{}.{}",
                r["module"]
                    .as_str()
                    .map(|m| format!("{m}."))
                    .unwrap_or_default(),
                r["type"].as_str().unwrap(),
                r["name"].as_str().unwrap()
            );
            let instances = r["instances"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| (i["index_key"].clone(), i["provider"].clone()))
                .collect();
            (name, r["provider"].clone(), instances)
        })
        .collect()
}

const SOURCE: &str = "provider[\"registry.strata.test/strata/stratatest\"]";

#[test]
fn each_instance_works_through_its_own_provider_instance() {
    let lab = Lab::new("provider-for-each");
    let dir = ready(&lab, "each", CONFIG);
    lab.ok("strata", &dir, &["apply", "-no-color", "-auto-approve"]);
    assert_eq!(
        stored(&dir, "store-east"),
        ["mod-east-1.json", "obj-east-1.json"]
    );
    assert_eq!(
        stored(&dir, "store-west"),
        ["mod-west-1.json", "obj-west-1.json"]
    );
    assert_eq!(stored(&dir, "store"), ["plain-1.json"]);

    // OpenTofu's state: a keyed object names its provider instance, and
    // its resource then has no `provider` of its own.
    let keyed = |k: &str| Json::String(format!("{SOURCE}.by_region[\"{k}\"]"));
    let recorded = providers_recorded(&state(&dir));
    let find = |n: &str| {
        recorded
            .iter()
            .find(|(name, ..)| name == n)
            .unwrap()
            .clone()
    };
    let o = find("stratatest_object.o");
    assert_eq!(o.1, Json::Null, "{recorded:?}");
    assert_eq!(
        o.2,
        [
            ("east".into(), keyed("east")),
            ("west".into(), keyed("west"))
        ]
    );
    let west = find("module.m[\"west\"].stratatest_object.x");
    assert_eq!(
        (west.1, west.2),
        (Json::Null, vec![(Json::Null, keyed("west"))])
    );
    let plain = find("stratatest_object.plain");
    assert_eq!(plain.1, Json::String(SOURCE.into()));
    assert_eq!(plain.2, [(Json::Null, Json::Null)]);

    // Read back through the same instances: nothing to do.
    let plan = lab.ok("strata", &dir, &["plan", "-no-color", "-detailed-exitcode"]);
    assert!(plan.contains("No changes."), "{plan}");

    // An element gone from the resources but kept by the provider: its
    // objects are destroyed where they are.
    let one = "-var=regions=[\"east\"]";
    let out = lab.ok(
        "strata",
        &dir,
        &["apply", "-no-color", "-auto-approve", one],
    );
    assert!(out.contains("0 added, 0 changed, 2 destroyed"), "{out}");
    assert!(stored(&dir, "store-west").is_empty());
    assert_eq!(stored(&dir, "store-east").len(), 2);

    // A saved plan applies through the same instances.
    let two = "-var=regions=[\"east\",\"west\"]";
    lab.ok(
        "strata",
        &dir,
        &["plan", "-no-color", "-out=saved.plan", two],
    );
    lab.ok("strata", &dir, &["apply", "-no-color", "saved.plan"]);
    assert_eq!(
        stored(&dir, "store-west"),
        ["mod-west-1.json", "obj-west-1.json"]
    );
}

#[test]
fn an_element_removed_while_its_objects_remain_is_refused() {
    let lab = Lab::new("provider-for-each-gone");
    let dir = ready(&lab, "gone", CONFIG);
    lab.ok("strata", &dir, &["apply", "-no-color", "-auto-approve"]);
    let before = std::fs::read(dir.join("terraform.tfstate")).unwrap();
    // Both lists lose "west": the objects made through that instance
    // cannot be destroyed without it.
    let args = [
        "apply",
        "-no-color",
        "-auto-approve",
        "-var=regions=[\"east\"]",
        "-var=provider_regions=[\"east\"]",
    ];
    let (code, out, err) = lab.run("strata", &dir, &args);
    assert_eq!(code, 1, "{out}{err}");
    let said = errors_said(&err);
    assert_eq!(
        said.iter()
            .filter(|(s, _)| s == "Provider instance not present")
            .count(),
        2,
        "{err}"
    );
    assert!(
        err.contains("stratatest_object.o[\"west\"] its original provider instance at"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(dir.join("terraform.tfstate")).unwrap(),
        before
    );
    assert_eq!(stored(&dir, "store-west").len(), 2, "nothing was deleted");
}

#[test]
fn misused_instance_keys_are_errors_at_their_lines() {
    let lab = Lab::new("provider-for-each-errors");
    let cases: [(&str, &str, &str); 7] = [
        (
            "provider \"stratatest\" {\n  for_each = toset([\"a\"])\n}\n",
            "validate",
            "Alias required when using \"for_each\"",
        ),
        (
            "resource \"stratatest_object\" \"a\" {\n  provider = stratatest[0]\n  name = \"a\"\n}\n",
            "validate",
            "Invalid provider configuration reference",
        ),
        (
            "resource \"stratatest_object\" \"a\" {\n  provider = stratatest.by_region\n  name = \"a\"\n}\n",
            "validate",
            "Invalid resource provider configuration",
        ),
        (
            "resource \"stratatest_object\" \"a\" {\n  provider = stratatest.single[\"a\"]\n  name = \"a\"\n}\n",
            "validate",
            "Invalid resource provider configuration",
        ),
        (
            "module \"m\" {\n  source = \"./m\"\n  providers = { stratatest.x[\"a\"] = stratatest.by_region[\"east\"] }\n  name = \"a\"\n}\n",
            "validate",
            "Invalid module provider configuration",
        ),
        (
            "resource \"stratatest_object\" \"a\" {\n  provider = stratatest.by_region[\"nope\"]\n  name = \"a\"\n}\n",
            "plan",
            "Invalid provider instance key",
        ),
        (
            "resource \"stratatest_object\" \"k\" {\n  name = \"k\"\n}\nresource \"stratatest_object\" \"a\" {\n  provider = stratatest.by_region[stratatest_object.k.id]\n  name = \"a\"\n}\n",
            "plan",
            "Invalid provider instance key",
        ),
    ];
    let base = r#"
provider "stratatest" {
  alias    = "by_region"
  for_each = toset(["east", "west"])
  store    = "./store-${each.key}"
}

provider "stratatest" {
  alias = "single"
  store = "./store"
}
"#;
    for (n, (body, command, want)) in cases.iter().enumerate() {
        let dir = lab.work_with(&format!("case{n}"), &format!("{HEADER}\n{base}\n{body}"));
        std::fs::create_dir_all(dir.join("m")).unwrap();
        std::fs::write(dir.join("m/main.tf"), CHILD).unwrap();
        // A block OpenTofu cannot decode fails init already.
        let _ = lab.run("strata", &dir, &["init", "-no-color"]);
        let (code, out, err) = lab.run("strata", &dir, &[command, "-no-color"]);
        assert_eq!(code, 1, "case {n}: {out}{err}");
        let said = errors_said(&err);
        assert!(
            said.iter().any(|(s, line)| s == want && !line.is_empty()),
            "case {n}: want {want:?} at a line, got {said:?}\n{err}"
        );
    }
}

#[test]
fn a_resource_sharing_its_providers_for_each_is_warned_of() {
    let lab = Lab::new("provider-for-each-warning");
    let body = r#"
variable "regions" {
  type    = set(string)
  default = ["east"]
}

provider "stratatest" {
  alias    = "by_region"
  for_each = var.regions
  store    = "./store-${each.key}"
}

resource "stratatest_object" "o" {
  for_each = var.regions
  provider = stratatest.by_region[each.key]
  name     = each.key
}
"#;
    let dir = ready(&lab, "warned", body);
    let (code, out, err) = lab.run("strata", &dir, &["validate", "-no-color"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("Success! The configuration is valid, but there were some validation warnings as shown above."),
        "{out}"
    );
    // Terraform's validate says warnings on stdout, above its verdict.
    assert!(
        out.contains("Warning: Provider configuration for_each matches resource")
            && out.contains("strata apply -destroy -target=stratatest_object.o"),
        "{out}{err}"
    );
    let json = lab.ok("strata", &dir, &["validate", "-json"]);
    let doc: Json = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (doc["valid"].clone(), doc["warning_count"].clone()),
        (Json::Bool(true), 1.into())
    );
    // With a plan, the same warning; a superset in the provider's for_each
    // is no warning.
    let plan = lab.ok("strata", &dir, &["plan", "-no-color"]);
    assert!(
        plan.contains("Provider configuration for_each matches resource"),
        "{plan}"
    );
    let apart = body.replace(
        "for_each = var.regions\n  store",
        "for_each = setunion(var.regions, [\"west\"])\n  store",
    );
    std::fs::write(dir.join("main.tf"), format!("{HEADER}\n{apart}")).unwrap();
    let out = lab.ok("strata", &dir, &["validate", "-no-color"]);
    assert_eq!(out.trim(), "Success! The configuration is valid.");
}
