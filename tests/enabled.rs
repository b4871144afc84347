//! `lifecycle { enabled = EXPR }` on resources and module calls (OpenTofu
//! 1.11, issue 45), held to OpenTofu's documentation
//! (`website/docs/language/meta-arguments/enabled.mdx`, the RFC
//! `rfc/2025-07-22-conditional-enable.md`): no OpenTofu runs here, and
//! Terraform has no such argument. True: the single instance exists, with
//! no key; false: none, the resource (or module call) is null, and what
//! the state holds is destroyed ("delete_because_enabled_false");
//! unknown, null, sensitive or non-boolean values and `enabled` beside
//! `count` or `for_each` are refused at their line.

#[path = "common/run.rs"]
mod run;

use std::path::{Path, PathBuf};

fn scratch(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    run::tree(&format!("enabled-{tag}"), files)
}

fn strata(dir: &Path, args: &[&str]) -> run::Ran {
    run::ran(run::strata(dir).args(args))
}

const MODULE: &str = r#"resource "terraform_data" "inner" {
  input = "in"
}

output "o" {
  value = terraform_data.inner.output
}
"#;

const ROOT: &str = r#"variable "on" {
  type    = bool
  default = true
}

resource "terraform_data" "x" {
  input = "hello"

  lifecycle {
    enabled = var.on
  }
}

module "m" {
  source = "./mod"

  lifecycle {
    enabled = var.on
  }
}

output "x" {
  value = try(terraform_data.x.output, "none")
}

output "is_null" {
  value = terraform_data.x == null
}

output "m" {
  value = module.m != null ? module.m.o : "no module"
}
"#;

#[test]
fn an_enabled_block_is_one_instance_and_a_disabled_one_is_null() {
    let dir = scratch("on-off", &[("main.tf", ROOT), ("mod/main.tf", MODULE)]);
    let r = strata(&dir, &["init", "-no-color"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let r = strata(&dir, &["apply", "-auto-approve", "-no-color"]);
    assert_eq!(r.code, 0, "{}", r.both());
    for said in ["is_null = false", "m = \"in\"", "x = \"hello\""] {
        assert!(r.out.contains(said), "{said}: {}", r.out);
    }
    let r = strata(&dir, &["state", "list"]);
    assert_eq!(
        r.out.lines().collect::<Vec<_>>(),
        ["terraform_data.x", "module.m.terraform_data.inner"],
        "one instance each, with no key"
    );
    let off = ["-var", "on=false"];
    let r = strata(
        &dir,
        &[&["plan", "-no-color", "-out=off.plan"][..], &off].concat(),
    );
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.out.contains(
            "# terraform_data.x will be destroyed\n  # (because lifecycle.enabled is false)"
        ),
        "{}",
        r.out
    );
    let shown = strata(&dir, &["show", "-json", "off.plan"]);
    let plan: serde_json::Value = serde_json::from_str(&shown.out).unwrap();
    let reasons: Vec<&str> = plan["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["action_reason"].as_str())
        .collect();
    assert!(
        reasons.contains(&"delete_because_enabled_false"),
        "{reasons:?}"
    );
    let r = strata(&dir, &["apply", "-no-color", "off.plan"]);
    assert_eq!(r.code, 0, "{}", r.both());
    for said in ["is_null = true", "m = \"no module\"", "x = \"none\""] {
        assert!(r.out.contains(said), "{said}: {}", r.out);
    }
    let r = strata(&dir, &["state", "list"]);
    assert_eq!(r.out, "", "nothing is left");
    let r = strata(
        &dir,
        &[&["plan", "-no-color", "-detailed-exitcode"][..], &off].concat(),
    );
    assert_eq!(r.code, 0, "{}", r.both());
}

/// Each case's extra file, and the error it must give at its line.
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "resource \"terraform_data\" \"y\" {\n  count = 1\n\n  lifecycle {\n    enabled = true\n  }\n}\n",
        "Invalid combination of \"enabled\" and \"count\" or \"for_each\"",
        "bad.tf:5",
    ),
    (
        "resource \"terraform_data\" \"y\" {\n  lifecycle {\n    enabled = terraform_data.x.id == \"\"\n  }\n}\n",
        "Invalid enabled argument",
        "bad.tf:3",
    ),
    (
        "resource \"terraform_data\" \"y\" {\n  lifecycle {\n    enabled = null\n  }\n}\n",
        "Invalid enabled argument",
        "bad.tf:3",
    ),
    (
        "resource \"terraform_data\" \"y\" {\n  lifecycle {\n    enabled = sensitive(true)\n  }\n}\n",
        "Invalid enabled argument",
        "bad.tf:3",
    ),
    (
        "resource \"terraform_data\" \"y\" {\n  lifecycle {\n    enabled = \"maybe\"\n  }\n}\n",
        "Invalid enabled argument",
        "bad.tf:3",
    ),
];

#[test]
fn an_enabled_that_cannot_decide_is_refused_at_its_line() {
    for (i, (bad, summary, at)) in REFUSED.iter().enumerate() {
        let files = [("main.tf", ROOT), ("mod/main.tf", MODULE), ("bad.tf", *bad)];
        let dir = scratch(&format!("refused-{i}"), &files);
        // What the configuration cannot be read with stops init too.
        strata(&dir, &["init", "-no-color"]);
        let r = strata(&dir, &["plan", "-no-color"]);
        assert_eq!(r.code, 1, "case {i}: {}", r.both());
        assert!(r.err.contains(summary), "case {i}: {}", r.err);
        assert!(r.err.contains(at), "case {i}: {}", r.err);
    }
}
