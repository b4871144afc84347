//! `import` blocks beyond one static address: `for_each` (Terraform 1.7)
//! beside Terraform 1.11 on the same files — the objects planned for
//! import, their ids, the apply, the empty plan after, and Terraform's
//! errors for a duplicate target and for `provider` on a configured
//! target; and import blocks inside child modules (Terraform 1.16, which
//! the 1.11 on this machine refuses, so held to the 1.16 semantics
//! written in hashicorp/terraform#38352: `to` inside the module, once per
//! module instance, its expressions evaluated there).

#[path = "common/oracle.rs"]
mod oracle;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn dir(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-imports-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    dir
}

/// Each change a saved plan holds: address, actions, the id imported.
fn changes(tool: &str, dir: &Path) -> BTreeSet<String> {
    oracle::ok(tool, dir, &["plan", "-no-color", "-out=tfplan"]);
    let shown = oracle::ok(tool, dir, &["show", "-json", "tfplan"]);
    let doc: serde_json::Value = serde_json::from_str(&shown).expect("plan JSON");
    doc["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{} {} {}",
                c["address"], c["change"]["actions"], c["change"]["importing"]["id"]
            )
        })
        .collect()
}

/// The id of every object a state holds, by address.
fn ids(tool: &str, dir: &Path) -> BTreeSet<String> {
    let shown = oracle::ok(tool, dir, &["show", "-json"]);
    let doc: serde_json::Value = serde_json::from_str(&shown).expect("state JSON");
    let mut out = BTreeSet::new();
    let mut modules = vec![doc["values"]["root_module"].clone()];
    while let Some(m) = modules.pop() {
        for r in m["resources"].as_array().into_iter().flatten() {
            out.insert(format!("{} {}", r["address"], r["values"]["id"]));
        }
        modules.extend(m["child_modules"].as_array().into_iter().flatten().cloned());
    }
    out
}

const FOR_EACH: &str = r#"
variable "ids" {
  default = { a = "id-a", b = "id-b" }
}

import {
  for_each = var.ids
  to       = terraform_data.d[each.key]
  id       = each.value
}

resource "terraform_data" "d" {
  for_each = var.ids
}

import {
  for_each = ["x", "y"]
  to       = terraform_data.l[each.key]
  id       = "list-${each.value}"
}

resource "terraform_data" "l" {
  count = 2
}
"#;

/// Map and list `for_each`: the same four imports planned with the same
/// ids, applied, and nothing left to do after, in both tools.
#[test]
fn for_each_imports_are_terraforms() {
    if !oracle::require_terraform("for_each_imports_are_terraforms") {
        return;
    }
    let [s, t] = ["strata", "terraform"].map(|tool| {
        let d = dir(&format!("each-{tool}"), &[("main.tf", FOR_EACH)]);
        if tool == "terraform" {
            oracle::ok(tool, &d, &["init", "-no-color"]);
        }
        let planned = changes(tool, &d);
        oracle::ok(tool, &d, &["apply", "-no-color", "tfplan"]);
        let after = changes(tool, &d);
        (planned, ids(tool, &d), after)
    });
    assert_eq!(s.0, t.0);
    assert_eq!(s.0.len(), 4, "{:#?}", s.0);
    assert!(
        s.0.iter()
            .any(|c| c.contains("terraform_data.l[1]") && c.contains("\"list-y\"")),
        "{:#?}",
        s.0
    );
    assert_eq!(s.1, t.1);
    assert_eq!(s.2, t.2);
    assert!(s.2.iter().all(|c| c.contains("[\"no-op\"]")), "{:#?}", s.2);
}

/// A second block for one object, and `provider` on a block whose
/// target is configured: Terraform's errors, exit 1, nothing imported.
#[test]
fn a_duplicate_target_and_a_provider_argument_are_terraforms_errors() {
    if !oracle::require_terraform("a_duplicate_target_and_a_provider") {
        return;
    }
    let cases = [
        (
            "Duplicate import configuration for \"terraform_data.d\"",
            "import {\n  to = terraform_data.d\n  id = \"a\"\n}\n\nimport {\n  to = terraform_data.d\n  id = \"b\"\n}\n\nresource \"terraform_data\" \"d\" {}\n",
        ),
        (
            "Invalid import provider argument",
            "provider \"terraform\" {\n  alias = \"x\"\n}\n\nimport {\n  to       = terraform_data.d\n  id       = \"a\"\n  provider = terraform.x\n}\n\nresource \"terraform_data\" \"d\" {}\n",
        ),
    ];
    for (i, (summary, text)) in cases.iter().enumerate() {
        for tool in ["strata", "terraform"] {
            let d = dir(&format!("bad{i}-{tool}"), &[("main.tf", text)]);
            // Terraform refuses these while it reads the configuration,
            // init too.
            let (code, out, err) = oracle::run(tool, &d, &["plan", "-no-color"]);
            let said = format!("{out}{err}")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            assert_eq!(code, 1, "{tool}: {said}");
            assert!(said.contains(summary), "{tool}: {said}");
            assert!(!d.join("terraform.tfstate").exists() || tool == "terraform");
        }
    }
}

const CHILD: &str = r#"
variable "n" {}

locals {
  names = { a = "x-${var.n}", b = "y-${var.n}" }
}

import {
  to = terraform_data.x
  id = "id-${var.n}"
}

resource "terraform_data" "x" {}

import {
  for_each = local.names
  to       = terraform_data.each[each.key]
  id       = each.value
}

resource "terraform_data" "each" {
  for_each = local.names
}

output "id" {
  value = terraform_data.x.id
}
"#;

const PARENT: &str = r#"
module "m" {
  source = "./m"
  count  = 2
  n      = count.index
}

output "ids" {
  value = module.m[*].id
}
"#;

/// Import blocks in a module called twice: each instance imports its own
/// objects with its own ids (its variable, a local, `for_each`), the
/// apply keeps those ids, and the next plan is empty. Terraform 1.11
/// refuses the blocks ("only allowed in the root module"), which strata
/// used to ignore without a word.
#[test]
fn import_blocks_in_a_child_module_import_once_per_instance() {
    let d = dir("child", &[("main.tf", PARENT), ("m/main.tf", CHILD)]);
    let planned = changes("strata", &d);
    let want: BTreeSet<String> = [
        "\"module.m[0].terraform_data.x\" [\"no-op\"] \"id-0\"",
        "\"module.m[1].terraform_data.x\" [\"no-op\"] \"id-1\"",
        "\"module.m[0].terraform_data.each[\\\"a\\\"]\" [\"no-op\"] \"x-0\"",
        "\"module.m[0].terraform_data.each[\\\"b\\\"]\" [\"no-op\"] \"y-0\"",
        "\"module.m[1].terraform_data.each[\\\"a\\\"]\" [\"no-op\"] \"x-1\"",
        "\"module.m[1].terraform_data.each[\\\"b\\\"]\" [\"no-op\"] \"y-1\"",
    ]
    .map(str::to_string)
    .into();
    assert_eq!(planned, want);
    let applied = oracle::ok("strata", &d, &["apply", "-no-color", "tfplan"]);
    assert!(applied.contains("6 imported"), "{applied}");
    let held = ids("strata", &d);
    assert!(
        held.contains("\"module.m[1].terraform_data.each[\\\"b\\\"]\" \"y-1\""),
        "{held:#?}"
    );
    let out = oracle::ok("strata", &d, &["output", "-json", "ids"]);
    assert_eq!(
        out.split_whitespace().collect::<String>(),
        "[\"id-0\",\"id-1\"]"
    );
    let after = changes("strata", &d);
    assert!(
        after
            .iter()
            .all(|c| c.contains("[\"no-op\"]") && c.ends_with("null")),
        "{after:#?}"
    );
    if oracle::require_terraform("import_blocks_in_a_child_module") {
        let t = dir(
            "child-terraform",
            &[("main.tf", PARENT), ("m/main.tf", CHILD)],
        );
        let (code, out, err) = oracle::run("terraform", &t, &["init", "-no-color"]);
        assert_eq!(code, 1, "{out}{err}");
        assert!(
            format!("{out}{err}").contains("Import blocks are only allowed in"),
            "{out}{err}"
        );
    }
}
