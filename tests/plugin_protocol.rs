//! Terraform's provider plugins run by strata (issue 25), beside
//! Terraform 1.11 running the same one: `terraform-provider-stratatest`
//! (`testing/provider`, built beside strata by `cargo test --workspace`)
//! is installed by both tools' `init` from a filesystem mirror named in a
//! CLI configuration, and the same configuration (`tests/plugin/main.tf`)
//! is planned and applied by each through it. Plans (as JSON), states and
//! lock files must agree, and each tool must plan no changes on the
//! other's state.

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;
use oracle::require_terraform;

#[path = "common/lab.rs"]
mod lab;
use lab::{errors_said, line_of, provider_zip, Lab, HEADER, SOURCE};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

/// Both tools keep a directory's state in the same file.
const STATE_FILE: &str = "terraform.tfstate";

fn state(dir: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(dir.join(STATE_FILE)).unwrap()).unwrap()
}

/// What of a plan must agree: each resource change's actions and values
/// (before, after, what is unknown and sensitive, what forces
/// replacement), the output changes, and the configuration as the plan
/// describes it.
fn plan_facts(plan: &Json) -> Json {
    let mut changes: Vec<Json> = plan["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|rc| {
            let c = &rc["change"];
            json!({
                "address": rc["address"],
                "previous_address": rc["previous_address"],
                "provider_name": rc["provider_name"],
                "actions": c["actions"],
                // strata never prints a secret, where Terraform's JSON
                // does: compared with the sensitive parts left out.
                "before": redacted(&c["before"], &c["before_sensitive"]),
                "after": redacted(&c["after"], &c["after_sensitive"]),
                "after_unknown": c["after_unknown"],
                "before_sensitive": c["before_sensitive"],
                "after_sensitive": c["after_sensitive"],
                "replace_paths": c["replace_paths"],
                "action_reason": rc["action_reason"],
            })
        })
        .collect();
    changes.sort_by_key(|c| c["address"].to_string());
    json!({
        "resource_changes": changes,
        "output_changes": plan["output_changes"],
        "configuration": plan["configuration"],
    })
}

/// `v` with null where the sensitivity mask `mask` says true.
fn redacted(v: &Json, mask: &Json) -> Json {
    match (v, mask) {
        (_, Json::Bool(true)) => Json::Null,
        (Json::Object(m), Json::Object(marks)) => Json::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), redacted(x, marks.get(k).unwrap_or(&Json::Null))))
                .collect(),
        ),
        (Json::Array(items), Json::Array(marks)) => Json::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| redacted(x, marks.get(i).unwrap_or(&Json::Null)))
                .collect(),
        ),
        (v, _) => v.clone(),
    }
}

/// What of a state must agree: every object with its attributes, schema
/// version, private data and sensitive paths, and the outputs.
fn state_facts(state: &Json) -> Json {
    let mut resources: Vec<Json> = state["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let instances: Vec<Json> = r["instances"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|i| {
                    json!({
                        "index_key": i["index_key"],
                        "schema_version": i["schema_version"],
                        "attributes": i["attributes"],
                        "private": i["private"],
                        "sensitive_attributes": i["sensitive_attributes"],
                    })
                })
                .collect();
            json!({
                "mode": r["mode"], "type": r["type"], "name": r["name"],
                "provider": r["provider"], "instances": instances,
            })
        })
        .collect();
    resources.sort_by_key(|r| format!("{}.{}.{}", r["mode"], r["type"], r["name"]));
    json!({ "resources": resources, "outputs": state["outputs"] })
}

fn same(what: &str, strata: &Json, terraform: &Json) {
    if strata == terraform {
        return;
    }
    let (s, t) = (
        serde_json::to_string_pretty(strata).unwrap(),
        serde_json::to_string_pretty(terraform).unwrap(),
    );
    let diff = similar::TextDiff::from_lines(&t, &s);
    panic!(
        "{what} differ (- terraform, + strata):\n{}",
        diff.unified_diff().context_radius(4)
    );
}

/// One step in both tools: the plans with `vars` agree, each applies its
/// saved plan, and the states agree.
fn plan_and_apply_alike(lab: &Lab, dirs: &[(&str, PathBuf)], vars: &[&str], what: &str) {
    let plans: Vec<Json> = dirs
        .iter()
        .map(|(t, d)| plan_facts(&lab.plan(t, d, vars)))
        .collect();
    same(&format!("{what}plans with {vars:?}"), &plans[0], &plans[1]);
    for (tool, dir) in dirs {
        lab.ok(
            tool,
            dir,
            &["apply", "-no-color", "-auto-approve", "saved.plan"],
        );
    }
    let states: Vec<Json> = dirs.iter().map(|(_, d)| state_facts(&state(d))).collect();
    same(
        &format!("{what}states after {vars:?}"),
        &states[0],
        &states[1],
    );
}

/// Each tool, given the other's state, store and lock file, plans no
/// changes (with `vars`).
fn each_plans_nothing_on_the_others_state(lab: &Lab, dirs: &[(&str, PathBuf)], vars: &[&str]) {
    let swapped = lab.root.join("swapped");
    for (from, to) in [(0, 1), (1, 0)] {
        let (tool, _) = &dirs[to];
        let (other, other_dir) = &dirs[from];
        let _ = std::fs::remove_dir_all(&swapped);
        std::fs::create_dir_all(&swapped).unwrap();
        for f in ["main.tf", ".terraform.lock.hcl"] {
            std::fs::copy(other_dir.join(f), swapped.join(f)).unwrap();
        }
        copy_tree(&other_dir.join("store"), &swapped.join("store"));
        std::fs::copy(other_dir.join(STATE_FILE), swapped.join(STATE_FILE)).unwrap();
        lab.ok(tool, &swapped, &["init", "-no-color"]);
        let mut args = vec!["plan", "-no-color", "-detailed-exitcode"];
        args.extend(vars);
        let (code, out, err) = lab.run(tool, &swapped, &args);
        assert_eq!(
            code, 0,
            "{tool} on {other}'s state plans changes:\n{out}\n{err}"
        );
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, dest).unwrap();
        }
    }
}

/// Each tool plans and applies the same steps through the provider; plans
/// and states agree at every step.
#[test]
fn terraform_and_strata_agree_through_the_test_provider() {
    if !require_terraform("terraform_and_strata_agree_through_the_test_provider") {
        return;
    }
    let lab = Lab::new("agree");
    let dirs = [
        ("strata", lab.work("strata")),
        ("terraform", lab.work("terraform")),
    ];
    // Before init, both refuse to validate and say to install it first.
    for (tool, dir) in &dirs {
        let (code, out, err) = lab.run(tool, dir, &["validate", "-no-color"]);
        let said = format!("{out}{err}");
        assert_eq!(code, 1, "{tool}: {said}");
        // As the words may be wrapped anywhere.
        let squashed: String = said.split_whitespace().collect();
        assert!(squashed.contains(SOURCE), "{tool}: {said}");
        assert!(squashed.contains(&format!("{tool}init")), "{tool}: {said}");
    }
    for (tool, dir) in &dirs {
        lab.ok(tool, dir, &["init", "-no-color"]);
    }
    // The same lock file, byte for byte.
    let locks: Vec<String> = dirs
        .iter()
        .map(|(_, d)| std::fs::read_to_string(d.join(".terraform.lock.hcl")).unwrap())
        .collect();
    assert_eq!(locks[0], locks[1]);
    // `version` lists the selection, as Terraform's does.
    for (tool, dir) in &dirs {
        let said = lab.ok(tool, dir, &["version"]);
        assert!(
            said.lines()
                .any(|l| l == format!("+ provider {SOURCE} v0.1.0")),
            "{tool} version:\n{said}"
        );
    }

    // Create; then an update (labels) and a replacement (size) at once.
    for vars in [&[][..], &["-var=team=ml", "-var=size=3"][..]] {
        plan_and_apply_alike(&lab, &dirs, vars, "");
    }

    // Each plans no changes on the other's state (and the other's store).
    each_plans_nothing_on_the_others_state(&lab, &dirs, &["-var=team=ml", "-var=size=3"]);

    // Drift made in the store: both see the same change.
    for (_, dir) in &dirs {
        let file = dir.join("store/alpha-1.json");
        let mut obj: Json = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        obj["labels"]["team"] = json!("changed by hand");
        std::fs::write(&file, obj.to_string()).unwrap();
    }
    let plans: Vec<Json> = dirs
        .iter()
        .map(|(t, d)| plan_facts(&lab.plan(t, d, &["-var=team=ml", "-var=size=3"])))
        .collect();
    same("plans after drift", &plans[0], &plans[1]);

    // Destroy: both stores empty.
    for (tool, dir) in &dirs {
        lab.ok(
            tool,
            dir,
            &[
                "destroy",
                "-no-color",
                "-auto-approve",
                "-var=team=ml",
                "-var=size=3",
            ],
        );
        let left = std::fs::read_dir(dir.join("store")).unwrap().count();
        assert_eq!(left, 0, "{tool} left objects behind");
    }
}

/// The provider block every small case starts with.

/// A provider's validation errors come out of both tools with its words,
/// at the same line of the configuration.
#[test]
fn provider_diagnostics_point_where_terraforms_do() {
    if !require_terraform("provider_diagnostics_point_where_terraforms_do") {
        return;
    }
    let lab = Lab::new("diagnostics");
    let cases = [
        ("name = \"Not OK\"", "Invalid object name"),
        ("name = \"ok\"\n  ports = [{ name = \"a\", number = 80 }, { name = \"b\", number = 0 }]", "Invalid port number"),
        ("name = \"ok\"\n  labels = { \" \" = \"x\" }", "Empty label key"),
    ];
    for (body, summary) in cases {
        let config = format!("{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  {body}\n}}\n");
        let mut lines = Vec::new();
        for tool in ["strata", "terraform"] {
            let dir = lab.work_with(tool, &config);
            lab.ok(tool, &dir, &["init", "-no-color"]);
            // `validate` asks the provider too, as Terraform's does.
            let (code, out, err) = lab.run(tool, &dir, &["validate", "-no-color"]);
            let said = format!("{out}{err}");
            assert_eq!(code, 1, "{tool} validate: {said}");
            assert!(said.contains(summary), "{tool} validate: {said}");
            let (code, out, err) = lab.run(tool, &dir, &["plan", "-no-color"]);
            let said = format!("{out}{err}");
            assert_eq!(code, 1, "{tool}: {said}");
            assert!(
                said.contains(summary),
                "{tool} does not say {summary:?}:\n{said}"
            );
            lines.push(line_of(&said));
        }
        assert!(lines[0].is_some(), "strata names no line for {summary}");
        assert_eq!(
            lines[0], lines[1],
            "{summary}: strata and Terraform point at different lines"
        );
    }
}

/// Runs `attempt` with each tool, which must fail saying `summary`; both
/// must name the same line of main.tf.
fn same_failing_line(summary: &str, mut attempt: impl FnMut(&str) -> (i32, String)) {
    let mut lines = Vec::new();
    for tool in ["strata", "terraform"] {
        let (code, said) = attempt(tool);
        assert_eq!(code, 1, "{tool}: {said}");
        assert!(
            said.contains(summary),
            "{tool} does not say {summary:?}: {said}"
        );
        lines.push(line_of(&said));
    }
    assert!(lines[0].is_some(), "strata names no line for {summary}");
    assert_eq!(
        lines[0], lines[1],
        "{summary}: strata and Terraform point at different lines"
    );
}

/// A diagnostic the provider gives only when planning (it needs the prior
/// object) points at the same line in both tools: the map element its
/// path names.
#[test]
fn plan_diagnostics_point_where_terraforms_do() {
    if !require_terraform("plan_diagnostics_point_where_terraforms_do") {
        return;
    }
    let lab = Lab::new("plan-diagnostics");
    let config = |value: &str| {
        format!("{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  name = \"ok\"\n  labels = {{\n    team   = \"gpu\"\n    frozen = \"{value}\"\n  }}\n}}\n")
    };
    same_failing_line("Frozen label changed", |tool| {
        let dir = lab.work_with(tool, &config("a"));
        lab.ok(tool, &dir, &["init", "-no-color"]);
        lab.ok(tool, &dir, &["apply", "-auto-approve", "-no-color"]);
        std::fs::write(dir.join("main.tf"), config("b")).unwrap();
        let (code, out, err) = lab.run(tool, &dir, &["plan", "-no-color"]);
        (code, format!("{out}{err}"))
    });
}

/// A diagnostic the provider gives when applying points at the same line
/// in both tools, and nothing is made.
#[test]
fn apply_diagnostics_point_where_terraforms_do() {
    if !require_terraform("apply_diagnostics_point_where_terraforms_do") {
        return;
    }
    let lab = Lab::new("apply-diagnostics");
    let config = format!("{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  name = \"ok\"\n  labels = {{\n    team   = \"gpu\"\n    reject = \"yes\"\n  }}\n}}\n");
    same_failing_line("Label refused", |tool| {
        let dir = lab.work_with(tool, &config);
        lab.ok(tool, &dir, &["init", "-no-color"]);
        let (code, out, err) = lab.run(tool, &dir, &["apply", "-auto-approve", "-no-color"]);
        let made = std::fs::read_dir(dir.join("store")).unwrap().count();
        assert_eq!(made, 0, "{tool} made nothing");
        (code, format!("{out}{err}"))
    });
}

/// An `import` block brings in an object the store has: the same plan and
/// the same state from both tools, and no changes after.
#[test]
fn an_import_through_the_provider_is_terraforms() {
    if !require_terraform("an_import_through_the_provider_is_terraforms") {
        return;
    }
    let lab = Lab::new("import");
    let config = format!(
        "{HEADER}\nimport {{\n  to = stratatest_object.a\n  id = \"found-1\"\n}}\n\nresource \"stratatest_object\" \"a\" {{\n  name   = \"found\"\n  labels = {{ kept = \"yes\" }}\n}}\n"
    );
    let stored = json!({
        "id": "found-1", "name": "found", "labels": {"kept": "no"}, "size": null,
        "secret": null, "revision": 4, "spec": null, "ports": null
    });
    let mut plans = Vec::new();
    let mut states = Vec::new();
    for tool in ["strata", "terraform"] {
        let dir = lab.work_with(tool, &config);
        std::fs::write(dir.join("store/found-1.json"), stored.to_string()).unwrap();
        lab.ok(tool, &dir, &["init", "-no-color"]);
        plans.push(plan_facts(&lab.plan(tool, &dir, &[])));
        lab.ok(
            tool,
            &dir,
            &["apply", "-no-color", "-auto-approve", "saved.plan"],
        );
        states.push(state_facts(&state(&dir)));
        let (code, out, _) = lab.run(tool, &dir, &["plan", "-no-color", "-detailed-exitcode"]);
        assert_eq!(code, 0, "{tool} plans changes after the import:\n{out}");
    }
    same("import plans", &plans[0], &plans[1]);
    same("states after the import", &states[0], &states[1]);
}

/// A provider declared under a local name other than its type (`st`),
/// configured twice (`st` and `st.second`) and chosen by `provider = …`:
/// both tools install it, validate, plan and apply alike.
#[test]
fn a_provider_under_another_local_name_is_terraforms() {
    if !require_terraform("a_provider_under_another_local_name_is_terraforms") {
        return;
    }
    let lab = Lab::new("local-name");
    let config = r#"terraform {
  required_providers {
    st = {
      source  = "registry.strata.test/strata/stratatest"
      version = "0.1.0"
    }
  }
}

provider "st" {
  store = "./store"
}

provider "st" {
  alias = "second"
  store = "./store"
}

resource "stratatest_object" "a" {
  provider = st
  name     = "first"
}

resource "stratatest_object" "b" {
  provider = st.second
  name     = "second"
  labels   = { of = stratatest_object.a.id }
}
"#;
    let dirs: Vec<(&str, PathBuf)> = ["strata", "terraform"]
        .into_iter()
        .map(|tool| {
            let dir = lab.work_with(tool, config);
            lab.ok(tool, &dir, &["init", "-no-color"]);
            lab.ok(tool, &dir, &["validate", "-no-color"]);
            (tool, dir)
        })
        .collect();
    plan_and_apply_alike(&lab, &dirs, &[], "local name ");
    for (tool, dir) in &dirs {
        let (code, out, err) = lab.run(tool, dir, &["plan", "-no-color", "-detailed-exitcode"]);
        assert_eq!(code, 0, "{tool} plans changes after applying:\n{out}{err}");
    }
}

/// A type whose schema strata cannot read (`stratatest_odd`, an attribute
/// of a type cty does not have, declared when `STRATATEST_ODD_SCHEMA` is
/// set) costs only itself: using it is an error at its block naming the
/// provider and why, and the provider's other types still plan.
/// (Terraform has no answer to compare: a schema it cannot read stops it
/// reading the provider's.)
#[test]
fn a_type_strata_cannot_read_costs_only_itself() {
    let lab = Lab::new("unusable");
    let object = "resource \"stratatest_object\" \"a\" {\n  name = \"kept\"\n}\n";
    let odd = "\nresource \"stratatest_odd\" \"r\" {\n  when = \"now\"\n}\n";
    let config = format!("{HEADER}\n{object}{odd}");
    let dir = lab.work_with("strata", &config);
    let odd_env = [("STRATATEST_ODD_SCHEMA", std::ffi::OsStr::new("1"))];
    let run = |args: &[&str]| lab.run_with("strata", &dir, args, &odd_env);
    assert_eq!(run(&["init", "-no-color"]).0, 0);
    for command in ["validate", "plan"] {
        let (code, out, err) = run(&[command, "-no-color"]);
        let said = format!("{out}{err}");
        assert_eq!(code, 1, "{command}: {said}");
        assert!(
            said.contains("Unsupported resource type \"stratatest_odd\""),
            "{command}: {said}"
        );
        assert!(
            said.contains(SOURCE) && said.contains("uuid"),
            "{command}: {said}"
        );
        let at = line_of(&said);
        assert_eq!(
            at.as_deref(),
            Some("18"),
            "{command} points elsewhere: {said}"
        );
    }
    std::fs::write(dir.join("main.tf"), format!("{HEADER}\n{object}")).unwrap();
    let (code, out, err) = run(&["plan", "-no-color"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 to add"), "{out}");
}

/// `stratatest_loose_rules` as written in each step: rules (nested as a
/// map) and steps (as a list) whose values may be of any type, some
/// written as `dynamic` blocks, one of them over a collection known only
/// once another object exists (so at first every step is).
fn loose_config(rules: &str, steps: &str) -> String {
    format!(
        r#"{HEADER}
locals {{
  more = {{ extra = true, list = [1, 2] }}
}}

resource "stratatest_object" "o" {{
  name = "o"
}}

resource "stratatest_loose_rules" "a" {{
  name = "loose"
{rules}{steps}
  dynamic "rule" {{
    for_each = local.more
    labels   = [rule.key]
    content {{
      value = rule.value
    }}
  }}

  dynamic "step" {{
    for_each = local.more
    content {{
      value = step.value
    }}
  }}

  dynamic "step" {{
    for_each = stratatest_object.o.id == "" ? [] : [stratatest_object.o.id]
    content {{
      value = step.value
    }}
  }}
}}
"#
    )
}

/// Blocks whose attributes may be of any type (Terraform types those
/// nested as a list as a tuple, and as a map as an object keyed by label,
/// so each block keeps its value's own type): created, changed (a value
/// changing type, blocks added and removed) and left alone, with the same
/// human plans, plan JSON and states as Terraform's, and each tool planning
/// nothing on the other's state.
#[test]
fn blocks_of_values_of_any_type_are_terraforms() {
    if !require_terraform("blocks_of_values_of_any_type_are_terraforms") {
        return;
    }
    let lab = Lab::new("loose-blocks");
    let rule = |key: &str, value: &str| format!("  rule \"{key}\" {{\n    value = {value}\n  }}\n");
    let step = |value: &str| format!("  step {{\n    value = {value}\n  }}\n");
    let steps = [
        (
            rule("http", "80") + &rule("names", "[\"a\", \"b\"]"),
            step("\"first\"") + &step("{ n = 2 }"),
        ),
        (
            rule("http", "\"eighty\"") + &rule("tls", "{ port = 443 }") + &rule("none", "{}"),
            // Empty values are one token, `[]` and `{}`, as Terraform
            // writes them.
            step("[1, 2, 3]") + &step("[]"),
        ),
    ];
    let dirs = [
        (
            "strata",
            lab.work_with("strata", &loose_config(&steps[0].0, &steps[0].1)),
        ),
        (
            "terraform",
            lab.work_with("terraform", &loose_config(&steps[0].0, &steps[0].1)),
        ),
    ];
    for (tool, dir) in &dirs {
        lab.ok(tool, dir, &["init", "-no-color"]);
    }
    for (rules, listed) in &steps {
        let config = loose_config(rules, listed);
        step_alike(&lab, &dirs, &config, &format!("{rules}{listed}: "));
    }
    each_plans_nothing_on_the_others_state(&lab, &dirs, &[]);
}

/// `stratatest_rules`: written as static blocks and a `dynamic` one. Its
/// keys come from a local of constants: Terraform refuses keys from a
/// variable, which its validation holds unknown.
fn rules_config(ports: &str, name: &str) -> String {
    format!(
        r#"{HEADER}
locals {{
  extra = {{ {ports} }}
}}

resource "stratatest_rules" "web" {{
  name = "{name}"
  rule "http" {{
    port = 80
  }}
  rule "https" {{
    port     = 443
    protocol = "tcp"
  }}
  dynamic "rule" {{
    for_each = local.extra
    labels   = [rule.key]
    content {{
      port     = rule.value
      protocol = "udp"
    }}
  }}
}}

output "rules" {{
  value = stratatest_rules.web.rule
}}
"#
    )
}

/// Blocks nested as a map (`rule "NAME" { … }`, static and `dynamic`):
/// created, changed (a port, a rule added and one taken away) and replaced
/// alike in both tools, no changes after; the provider's diagnostic for a
/// rule points at the same line; and labels written wrong are refused
/// with Terraform's errors at Terraform's lines.
#[test]
fn blocks_nested_as_a_map_are_terraforms() {
    if !require_terraform("blocks_nested_as_a_map_are_terraforms") {
        return;
    }
    let lab = Lab::new("map-blocks");
    let steps = [
        ("dns = 53, ntp = 123", "web"),
        ("dns = 5353, syslog = 514", "web"),
        ("dns = 5353", "edge"),
    ];
    let dirs = [
        (
            "strata",
            lab.work_with("strata", &rules_config(steps[0].0, steps[0].1)),
        ),
        (
            "terraform",
            lab.work_with("terraform", &rules_config(steps[0].0, steps[0].1)),
        ),
    ];
    for (tool, dir) in &dirs {
        lab.ok(tool, dir, &["init", "-no-color"]);
    }
    for (ports, name) in steps {
        let config = rules_config(ports, name);
        step_alike(&lab, &dirs, &config, &format!("{name} with {ports}: "));
    }

    same_failing_line("Invalid port number", |tool| {
        let dir = &dirs.iter().find(|(t, _)| *t == tool).unwrap().1;
        std::fs::write(
            dir.join("main.tf"),
            rules_config("dns = 53, bad = 70000", "web"),
        )
        .unwrap();
        let (code, out, err) = lab.run(tool, dir, &["validate", "-no-color"]);
        (code, format!("{out}{err}"))
    });

    let wrong = format!(
        r#"{HEADER}
resource "stratatest_rules" "web" {{
  name = "web"
  rule {{
    port = 80
  }}
  rule "a" "b" {{
    port = 443
  }}
  rule "c" {{
    port = 1
  }}
  rule "c" {{
    port = 2
  }}
  dynamic "rule" {{
    for_each = {{ x = 1 }}
    content {{
      port = rule.value
    }}
  }}
  dynamic "rule" {{
    for_each = {{ x = 1 }}
    labels   = ["x", "y"]
    content {{
      port = rule.value
    }}
  }}
}}

resource "stratatest_object" "o" {{
  name = "o"
  spec "x" {{
    image = "a"
  }}
}}
"#
    );
    let errors: Vec<Vec<(String, String)>> = dirs
        .iter()
        .map(|(tool, dir)| {
            std::fs::write(dir.join("main.tf"), &wrong).unwrap();
            let (code, out, err) = lab.run(tool, dir, &["validate", "-no-color"]);
            assert_eq!(code, 1, "{tool}: {out}{err}");
            errors_said(&format!("{out}{err}"))
        })
        .collect();
    assert_eq!(errors[0], errors[1], "strata's errors, then Terraform's");
    assert_eq!(errors[0].len(), 6, "{:?}", errors[0]);
}

/// One step of a side-by-side test: `config` written for both tools, the
/// same human plan (each block laid out as Terraform lays it out), the
/// same plan JSON and state (`plan_and_apply_alike`), and nothing left for
/// strata to plan after.
fn step_alike(lab: &Lab, dirs: &[(&str, PathBuf)], config: &str, what: &str) {
    for (_, dir) in dirs {
        std::fs::write(dir.join("main.tf"), config).unwrap();
    }
    let shown: Vec<String> = dirs
        .iter()
        .map(|(tool, dir)| actions_shown(&lab.ok(tool, dir, &["plan", "-no-color"])))
        .collect();
    assert_eq!(shown[0], shown[1], "{what}strata's plan, then Terraform's");
    plan_and_apply_alike(lab, dirs, &[], what);
    let (code, out, err) = lab.run(
        "strata",
        &dirs[0].1,
        &["plan", "-no-color", "-detailed-exitcode"],
    );
    assert_eq!(
        code, 0,
        "{what}strata plans changes after applying:\n{out}{err}"
    );
}

/// A human plan's actions, from "will perform" to the "Plan:" line.
fn actions_shown(plan: &str) -> String {
    let start = plan.find("will perform").unwrap_or(0);
    let end = plan[start..]
        .find("\nPlan:")
        .map_or(plan.len(), |e| start + e);
    plan[start..end].to_string()
}

/// The plan JSON's `configuration` (what policy tools read) is
/// Terraform's for a configuration of modules: provider configurations
/// passed to a module and inherited by one, aliases, version constraints,
/// `count`, `for_each` and `depends_on`, references through indexes,
/// module outputs and instances, block shapes by schema.
#[test]
fn the_plans_configuration_is_terraforms() {
    if !require_terraform("the_plans_configuration_is_terraforms") {
        return;
    }
    let lab = Lab::new("configuration");
    let root = format!(
        r#"{HEADER}
provider "stratatest" {{
  alias = "two"
  store = "./store"
}}

variable "names" {{
  type    = list(string)
  default = ["a", "b"]
}}

variable "m" {{
  default = {{ x = {{ y = "z" }} }}
}}

resource "terraform_data" "one" {{
  count = 2
  input = "${{var.names[count.index]}}-${{var.names[0]}}-${{var.m.x.y}}-${{var.m["x"].y}}"
}}

resource "terraform_data" "two" {{
  for_each         = toset(var.names)
  input            = terraform_data.one[0].output
  triggers_replace = [terraform_data.one[*].id, terraform_data.one[1].output, each.key, local.l]
  depends_on       = [terraform_data.one, module.c]
}}

locals {{
  l = module.c.out
}}

module "c" {{
  source = "./child"
  n      = "${{var.names[1]}}${{var.names[1]}}"
  providers = {{
    stratatest = stratatest.two
  }}
  depends_on = [terraform_data.one]
}}

module "k" {{
  source = "./child"
  count  = 2
  n      = count.index
}}

output "o" {{
  value      = module.k[0].out
  depends_on = [module.c]
}}

output "p" {{
  value = [module.c, module.k[1], terraform_data.two["a"].output, path.module]
}}
"#
    );
    let child = r#"terraform {
  required_providers {
    stratatest = {
      source = "registry.strata.test/strata/stratatest"
    }
  }
}

variable "n" {}

resource "stratatest_object" "x" {
  name = "x${var.n}"
  spec {
    image = "i"
  }
}

data "stratatest_object" "x" {
  name = stratatest_object.x.name
}

output "out" {
  value = stratatest_object.x.id
}
"#;
    let configurations: Vec<Json> = ["strata", "terraform"]
        .into_iter()
        .map(|tool| {
            let dir = lab.work_with(tool, &root);
            std::fs::create_dir_all(dir.join("child")).unwrap();
            std::fs::write(dir.join("child/main.tf"), child).unwrap();
            lab.ok(tool, &dir, &["init", "-no-color"]);
            lab.plan(tool, &dir, &[])["configuration"].clone()
        })
        .collect();
    same("configurations", &configurations[0], &configurations[1]);
}

/// `providers schema -json`: a plugin's schemas exactly as Terraform
/// prints them (descriptions, nested attributes, blocks nested as a map,
/// functions), and a native driver's (the builtin `terraform_data`) with
/// the same types, roles and nesting; without `-json` both refuse.
#[test]
fn providers_schema_json_is_terraforms() {
    if !require_terraform("providers_schema_json_is_terraforms") {
        return;
    }
    let lab = Lab::new("schema");
    let config = format!("{HEADER}\nresource \"terraform_data\" \"t\" {{\n  input = 1\n}}\n");
    let printed: Vec<Json> = ["strata", "terraform"]
        .into_iter()
        .map(|tool| {
            let dir = lab.work_with(tool, &config);
            lab.ok(tool, &dir, &["init", "-no-color"]);
            let (code, _, _) = lab.run(tool, &dir, &["providers", "schema", "-no-color"]);
            assert_eq!(code, 1, "{tool} providers schema without -json");
            let out = lab.ok(tool, &dir, &["providers", "schema", "-json"]);
            serde_json::from_str(&out).unwrap()
        })
        .collect();
    let (s, t) = (&printed[0], &printed[1]);
    assert_eq!(s["format_version"], t["format_version"]);
    // The provider's action (protocol 6.11) is listed as Terraform 1.14
    // lists it; 1.11 knows no actions and leaves it out.
    let mut ours = s["provider_schemas"][SOURCE].clone();
    let actions = ours.as_object_mut().unwrap().shift_remove("action_schemas");
    let note = &actions.unwrap_or_default()["stratatest_note"]["block"]["attributes"];
    assert_eq!(note["message"]["required"], true, "{s}");
    same(
        "the plugin's schemas",
        &ours,
        &t["provider_schemas"][SOURCE],
    );
    // Its ephemeral resource, which strata does not open, is listed too.
    let token = &s["provider_schemas"][SOURCE]["ephemeral_resource_schemas"]["stratatest_token"];
    assert!(token["block"].is_object(), "{s}");
    let builtin = |p: &Json, part: &str| {
        without_words(&p["provider_schemas"]["terraform.io/builtin/terraform"][part])
    };
    same(
        "terraform_data's schema",
        &builtin(s, "resource_schemas")["terraform_data"],
        &builtin(t, "resource_schemas")["terraform_data"],
    );
    same(
        "the builtin provider's functions",
        &builtin(s, "functions"),
        &builtin(t, "functions"),
    );

    // A provider only the state still needs is listed too.
    let listed: Vec<Vec<String>> = ["strata", "terraform"]
        .into_iter()
        .map(|tool| {
            let dir = lab.work_with(tool, &config);
            lab.ok(tool, &dir, &["apply", "-auto-approve", "-no-color"]);
            std::fs::write(dir.join("main.tf"), HEADER).unwrap();
            let out = lab.ok(tool, &dir, &["providers", "schema", "-json"]);
            let printed: Json = serde_json::from_str(&out).unwrap();
            let names = printed["provider_schemas"].as_object().unwrap().keys();
            names.cloned().collect()
        })
        .collect();
    assert_eq!(listed[0], listed[1], "strata's, then Terraform's");
    assert!(listed[0]
        .iter()
        .any(|p| p == "terraform.io/builtin/terraform"));
}

/// A schema without its descriptions and summaries, which are each tool's
/// own words.
fn without_words(v: &Json) -> Json {
    match v {
        Json::Object(m) => Json::Object(
            m.iter()
                .filter(|(k, _)| !k.starts_with("description") && *k != "summary")
                .map(|(k, x)| (k.clone(), without_words(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Provider-defined functions (`GetProviderSchema`'s functions,
/// `CallFunction`): a plain and a variadic call, one on an attribute known
/// only after apply (unknown in the plan, called when applying), plan and
/// apply alike in both tools, over protocols 6 and 5; a call the function
/// refuses fails both at the same line.
#[test]
fn provider_functions_are_called_as_terraform_calls_them() {
    if !require_terraform("provider_functions_are_called_as_terraform_calls_them") {
        return;
    }
    for protocol in ["6", "5"] {
        functions_alike(protocol);
    }
}

fn functions_alike(protocol: &'static str) {
    let mut lab = Lab::new(&format!("functions-{protocol}"));
    lab.protocol = protocol;
    let config = |title: &str| {
        format!(
            r#"{HEADER}
variable "title" {{
  default = "{title}"
}}

resource "stratatest_object" "a" {{
  name   = provider::stratatest::slug(var.title)
  labels = {{ tag = provider::stratatest::tag("team", "ml", "gpu") }}
}}

resource "stratatest_object" "b" {{
  name   = "b"
  labels = {{ of = provider::stratatest::slug(stratatest_object.a.id) }}
}}

output "slug" {{
  value = provider::stratatest::slug(var.title)
}}
"#
        )
    };
    let good = config("GPU Pool: H100 (eu-west)");
    let dirs: Vec<(&str, PathBuf)> = ["strata", "terraform"]
        .into_iter()
        .map(|tool| {
            let dir = lab.work_with(tool, &good);
            lab.ok(tool, &dir, &["init", "-no-color"]);
            (tool, dir)
        })
        .collect();
    plan_and_apply_alike(&lab, &dirs, &[], "functions ");
    let outputs = state(&dirs[0].1)["outputs"].clone();
    assert_eq!(outputs["slug"]["value"], json!("gpu-pool-h100-eu-west"));
    same_failing_line("has no letters or digits", |tool| {
        let dir = lab.root.join(tool);
        std::fs::write(dir.join("main.tf"), config("!!!")).unwrap();
        let (code, out, err) = lab.run(tool, &dir, &["plan", "-no-color"]);
        (code, format!("{out}{err}"))
    });
}

/// The children of process `pid` (Linux's /proc).
fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let child: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `pid (comm) state ppid …`: the fields after the name.
            let after = stat.rsplit_once(')')?.1;
            let ppid: u32 = after.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == pid).then_some(child)
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// A strata killed outright (SIGKILL, no chance to stop anything) takes
/// its provider plugins with it, as one that ends any other way does. The
/// provider's objects come before and after the wait, so its process is
/// alive through it.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_strata_leaves_no_provider_running() {
    let lab = Lab::new("killed");
    let config = format!("{HEADER}\nresource \"stratatest_object\" \"b\" {{\n  name = \"before\"\n}}\n\nresource \"time_sleep\" \"wait\" {{\n  create_duration = \"120s\"\n  depends_on      = [stratatest_object.b]\n}}\n\nresource \"stratatest_object\" \"a\" {{\n  name       = \"after\"\n  depends_on = [time_sleep.wait]\n}}\n");
    let dir = lab.work_with("strata", &config);
    lab.ok("strata", &dir, &["init", "-no-color"]);
    let mut strata = run::strata(&dir)
        .args(["apply", "-auto-approve", "-no-color"])
        .env("TF_CLI_CONFIG_FILE", &lab.cli)
        // A provider killed with strata leaves its socket: in the lab.
        .env("TMPDIR", lab.tmp())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let plugins = loop {
        let found = children(strata.id());
        if !found.is_empty() || started.elapsed() > std::time::Duration::from_secs(60) {
            break found;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(!plugins.is_empty(), "strata started no provider");
    strata.kill().unwrap();
    strata.wait().unwrap();
    let killed = std::time::Instant::now();
    while plugins.iter().any(|&p| alive(p)) && killed.elapsed() < std::time::Duration::from_secs(20)
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let left: Vec<u32> = plugins.into_iter().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "providers left running: {left:?}");
}

/// Providers are asked to exit at the end of each command, as Terraform
/// asks them, rather than killed: a killed provider leaves its socket in
/// the temporary directory (a thousand CI runs, a thousand sockets).
#[test]
fn providers_are_stopped_as_terraform_stops_them() {
    if !require_terraform("providers_are_stopped_as_terraform_stops_them") {
        return;
    }
    let lab = Lab::new("stopped");
    let config =
        format!("{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  name = \"kept\"\n}}\n");
    for tool in ["strata", "terraform"] {
        let dir = lab.work_with(tool, &config);
        for step in [
            &["init", "-no-color"][..],
            &["validate", "-no-color"],
            &["plan", "-no-color"],
            &["apply", "-auto-approve", "-no-color"],
            &["plan", "-no-color", "-refresh-only"],
            &["destroy", "-auto-approve", "-no-color"],
        ] {
            lab.ok(tool, &dir, step);
            let left: Vec<_> = std::fs::read_dir(lab.tmp())
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect();
            assert!(left.is_empty(), "{tool} {step:?} left {left:?}");
        }
    }
}

/// A state as Terraform writes it, holding one object `a` of `type_name`
/// stored at schema version 0.
fn state_of(type_name: &str, attributes: &Json) -> Json {
    json!({
        "version": 4, "terraform_version": "1.11.4", "serial": 1,
        "lineage": "5f0c5b5e-0000-4000-8000-000000000000", "outputs": {},
        "resources": [{
            "mode": "managed", "type": type_name, "name": "a",
            "provider": format!("provider[\"{SOURCE}\"]"),
            "instances": [{"schema_version": 0, "attributes": attributes, "sensitive_attributes": []}]
        }],
        "check_results": null
    })
}

/// The provider's objects as stored at schema version 0 (labels were
/// `tags`), and as it stores them now.
fn old_object() -> (Json, Json) {
    let attributes = json!({"id": "old-1", "name": "old", "tags": {"a": "b"}, "revision": 1});
    let stored = json!({
        "id": "old-1", "name": "old", "labels": {"a": "b"}, "size": null,
        "secret": null, "revision": 1, "spec": null, "ports": null
    });
    (attributes, stored)
}

/// A `moved` block taking an object to another resource type goes to the
/// provider's `MoveResourceState` in both tools: `stratatest_item` (the
/// provider's old name for the type, which it no longer serves) becomes
/// `stratatest_object` with no change planned, and the states after
/// applying agree. A move the provider refuses fails both, strata at the
/// `moved` block.
#[test]
fn a_move_across_types_is_converted_by_the_provider() {
    if !require_terraform("a_move_across_types_is_converted_by_the_provider") {
        return;
    }
    let lab = Lab::new("move");
    let config = |from: &str| {
        format!("{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  name   = \"old\"\n  labels = {{ a = \"b\" }}\n}}\n\nmoved {{\n  from = {from}.a\n  to   = stratatest_object.a\n}}\n")
    };
    let (attributes, stored) = old_object();
    let prepare = |tool: &str, from: &str| {
        let dir = lab.work_with(tool, &config(from));
        std::fs::write(dir.join("store/old-1.json"), stored.to_string()).unwrap();
        let old_state = state_of(from, &attributes);
        std::fs::write(dir.join(STATE_FILE), old_state.to_string()).unwrap();
        lab.ok(tool, &dir, &["init", "-no-color"]);
        dir
    };
    let dirs: Vec<(&str, PathBuf)> = ["strata", "terraform"]
        .into_iter()
        .map(|tool| (tool, prepare(tool, "stratatest_item")))
        .collect();
    plan_and_apply_alike(&lab, &dirs, &[], "moved ");
    for (tool, dir) in &dirs {
        let (code, out, err) = lab.run(tool, dir, &["plan", "-no-color", "-detailed-exitcode"]);
        assert_eq!(code, 0, "{tool} plans changes after the move:\n{out}{err}");
    }
    for tool in ["strata", "terraform"] {
        let dir = prepare(tool, "stratatest_gadget");
        let (code, out, err) = lab.run(tool, &dir, &["plan", "-no-color"]);
        let said = format!("{out}{err}");
        assert_eq!(code, 1, "{tool}: {said}");
        assert!(
            said.contains("cannot take the state of stratatest_gadget"),
            "{tool}: {said}"
        );
        if tool == "strata" {
            // Terraform names no place; strata names the block.
            assert_eq!(line_of(&said).as_deref(), Some("19"), "{said}");
        }
    }
}

/// A state written under the provider's schema version 0 (labels were
/// `tags`) is upgraded by the provider in both tools: no changes planned,
/// and the refreshed state at version 1 alike.
#[test]
fn an_older_schema_version_is_upgraded_by_the_provider() {
    if !require_terraform("an_older_schema_version_is_upgraded_by_the_provider") {
        return;
    }
    let lab = Lab::new("upgrade");
    let config = format!(
        "{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  name   = \"old\"\n  labels = {{ a = \"b\" }}\n}}\n"
    );
    let (attributes, stored) = old_object();
    let mut states = Vec::new();
    for tool in ["strata", "terraform"] {
        let dir = lab.work_with(tool, &config);
        std::fs::write(dir.join("store/old-1.json"), stored.to_string()).unwrap();
        let old_state = state_of("stratatest_object", &attributes);
        std::fs::write(dir.join(STATE_FILE), old_state.to_string()).unwrap();
        lab.ok(tool, &dir, &["init", "-no-color"]);
        let (code, out, err) = lab.run(tool, &dir, &["plan", "-no-color", "-detailed-exitcode"]);
        assert_eq!(
            code, 0,
            "{tool} plans changes on an upgraded object:\n{out}{err}"
        );
        lab.ok(tool, &dir, &["apply", "-no-color", "-auto-approve"]);
        states.push(state_facts(&state(&dir)));
    }
    same("refreshed states", &states[0], &states[1]);
    assert_eq!(
        states[0]["resources"][0]["instances"][0]["schema_version"],
        json!(1)
    );
}

/// A data source in the state is read back as a data source everywhere the
/// state is read (`show`, `show -json`, `state show`, the next plan), also
/// when its name is no resource type's (`stratatest_lookup`) or is one of
/// another shape (`data.stratatest_object`, whose resource type is at a
/// later schema version): both tools show the same.
#[test]
fn data_sources_in_the_state_are_shown_as_terraform_shows_them() {
    if !require_terraform("data_sources_in_the_state_are_shown_as_terraform_shows_them") {
        return;
    }
    let lab = Lab::new("data-show");
    let config = format!(
        "{HEADER}
resource \"stratatest_object\" \"a\" {{
  name   = \"seen\"
  labels = {{ team = \"ml\" }}
}}

data \"stratatest_lookup\" \"a\" {{
  name       = stratatest_object.a.name
  depends_on = [stratatest_object.a]
}}

data \"stratatest_object\" \"a\" {{
  name       = stratatest_object.a.name
  depends_on = [stratatest_object.a]
}}
"
    );
    let mut shown = Vec::new();
    for tool in ["strata", "terraform"] {
        let dir = lab.work_with(tool, &config);
        lab.ok(tool, &dir, &["init", "-no-color"]);
        lab.ok(tool, &dir, &["apply", "-no-color", "-auto-approve"]);
        let human = lab.ok(tool, &dir, &["show", "-no-color"]);
        assert!(
            human.contains("data \"stratatest_lookup\" \"a\"") && human.contains("\"ml\""),
            "{tool} show:\n{human}"
        );
        let one = lab.ok(
            tool,
            &dir,
            &["state", "show", "-no-color", "data.stratatest_lookup.a"],
        );
        assert!(one.contains("= \"ml\""), "{tool} state show:\n{one}");
        let (code, out, err) = lab.run(tool, &dir, &["plan", "-no-color", "-detailed-exitcode"]);
        assert_eq!(code, 0, "{tool} plan:\n{out}{err}");
        let json: Json = serde_json::from_str(&lab.ok(tool, &dir, &["show", "-json"])).unwrap();
        let resources = json["values"]["root_module"]["resources"].clone();
        shown.push(json!({ "resources": resources }));
    }
    same("show -json", &shown[0], &shown[1]);
}

/// A create the provider fails after making the object: both tools record
/// it tainted (with its id and private data), and the next plan replaces
/// it.
#[test]
fn an_object_left_by_a_failed_create_is_kept_tainted() {
    if !require_terraform("an_object_left_by_a_failed_create_is_kept_tainted") {
        return;
    }
    let lab = Lab::new("tainted");
    let config =
        format!("{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  name = \"broken-one\"\n}}\n");
    let mut states = Vec::new();
    let mut plans = Vec::new();
    for tool in ["strata", "terraform"] {
        let dir = lab.work_with(tool, &config);
        lab.ok(tool, &dir, &["init", "-no-color"]);
        let (code, out, err) = lab.run(tool, &dir, &["apply", "-no-color", "-auto-approve"]);
        assert_eq!(code, 1, "{tool}: {out}{err}");
        assert!(
            format!("{out}{err}").contains("Object not ready"),
            "{tool}: {out}{err}"
        );
        assert!(
            dir.join("store/broken-one-1.json").exists(),
            "{tool}: the object was not made"
        );
        let recorded = state(&dir);
        assert_eq!(
            recorded["resources"][0]["instances"][0]["status"],
            json!("tainted"),
            "{tool} did not keep the object tainted: {recorded}"
        );
        states.push(state_facts(&recorded));
        plans.push(plan_facts(&lab.plan(tool, &dir, &[])));
    }
    same("states after the failed create", &states[0], &states[1]);
    same("plans replacing the tainted object", &plans[0], &plans[1]);
    assert_eq!(
        plans[0]["resource_changes"][0]["actions"],
        json!(["delete", "create"])
    );
}

/// A write-only argument set from an ephemeral variable and from a
/// literal.
fn write_only_config(name: &str, extra: &str) -> String {
    format!(
        r#"{HEADER}
variable "token" {{
  type      = string
  ephemeral = true
}}

resource "stratatest_object" "a" {{
  name     = "{name}"
  token_wo = var.token
}}

resource "stratatest_object" "plain" {{
  name     = "plain"
  token_wo = "literal"
{extra}}}
"#
    )
}

/// Write-only attributes (Terraform 1.11): an ephemeral variable may set
/// one (and no other argument), the value reaches the provider when the
/// object is written and is never in a plan file or the state, the human
/// plans say "(write-only attribute)" where Terraform's do (create, update,
/// destroy), plans and states are Terraform's, and a provider answering
/// with a value for one is refused as Terraform refuses it.
#[test]
fn write_only_attributes_are_terraforms() {
    if !require_terraform("write_only_attributes_are_terraforms") {
        return;
    }
    let lab = Lab::new("write-only");
    let config = write_only_config("wo", "");
    let dirs = [
        ("strata", lab.work_with("strata", &config)),
        ("terraform", lab.work_with("terraform", &config)),
    ];
    let mut shown = Vec::new();
    let mut plans = Vec::new();
    let mut states = Vec::new();
    for (tool, dir) in &dirs {
        lab.ok(tool, dir, &["init", "-no-color"]);
        let out = lab.ok(
            tool,
            dir,
            &["plan", "-no-color", "-var=token=s3cret", "-out=saved.plan"],
        );
        shown.push(actions_shown(&out));
        let saved = std::fs::read(dir.join("saved.plan")).unwrap();
        assert!(
            !String::from_utf8_lossy(&saved).contains("s3cret"),
            "{tool}'s plan file holds the token"
        );
        plans.push(plan_facts(
            &serde_json::from_str(&lab.ok(tool, dir, &["show", "-json", "saved.plan"])).unwrap(),
        ));
        // An ephemeral variable is given again to apply a saved plan.
        lab.ok(
            tool,
            dir,
            &["apply", "-no-color", "-var=token=s3cret", "saved.plan"],
        );
        let text = std::fs::read_to_string(dir.join(STATE_FILE)).unwrap();
        assert!(
            !text.contains("s3cret") && !text.contains("literal"),
            "{tool}'s state holds a write-only value"
        );
        states.push(state_facts(&state(dir)));
        let received: Vec<Json> = ["wo-1", "plain-1"]
            .iter()
            .map(|id| {
                let file = std::fs::read_to_string(dir.join(format!("store/{id}.json"))).unwrap();
                serde_json::from_str::<Json>(&file).unwrap()["token_wo"].clone()
            })
            .collect();
        assert_eq!(
            received,
            vec![json!("s3cret"), json!("literal")],
            "{tool}: what the provider was sent"
        );
    }
    assert_eq!(shown[0], shown[1], "strata's plan, then Terraform's");
    assert!(
        shown[0].contains("+ token_wo = (write-only attribute)"),
        "{}",
        shown[0]
    );
    same("plans with write-only values", &plans[0], &plans[1]);
    same("states after the apply", &states[0], &states[1]);
    let (code, out, err) = lab.run(
        "strata",
        &dirs[0].1,
        &[
            "plan",
            "-no-color",
            "-detailed-exitcode",
            "-var=token=other",
        ],
    );
    assert_eq!(code, 0, "a new token is no change:\n{out}{err}");

    // An update hides the write-only attribute as unchanged; a destroy
    // shows it going.
    let update = write_only_config("wo", "  labels   = { team = \"ml\" }\n");
    let shown: Vec<(String, String)> = dirs
        .iter()
        .map(|(tool, dir)| {
            std::fs::write(dir.join("main.tf"), &update).unwrap();
            let changed = lab.ok(tool, dir, &["plan", "-no-color", "-var=token=x"]);
            let gone = lab.ok(
                tool,
                dir,
                &["plan", "-destroy", "-no-color", "-var=token=x"],
            );
            (actions_shown(&changed), actions_shown(&gone))
        })
        .collect();
    assert_eq!(shown[0], shown[1], "strata's plans, then Terraform's");
    assert!(
        shown[0]
            .1
            .contains("- token_wo = (write-only attribute) -> null"),
        "{}",
        shown[0].1
    );

    // An ephemeral value anywhere else is refused at its line.
    same_failing_line("Invalid use of ephemeral value", |tool| {
        let dir = &dirs.iter().find(|(t, _)| *t == tool).unwrap().1;
        let config =
            write_only_config("wo", "").replace("name     = \"plain\"", "name     = var.token");
        std::fs::write(dir.join("main.tf"), config).unwrap();
        let (code, out, err) = lab.run(tool, dir, &["validate", "-no-color"]);
        (code, format!("{out}{err}"))
    });

    // A provider planning a value for one (the test provider does for a
    // name starting "leaky") is refused, the value shown nowhere.
    for (tool, dir) in &dirs {
        std::fs::write(dir.join("main.tf"), write_only_config("leaky", "")).unwrap();
        let (code, out, err) = lab.run(tool, dir, &["plan", "-no-color", "-var=token=s3cret"]);
        let said = format!("{out}{err}");
        assert_eq!(code, 1, "{tool}: {said}");
        assert!(
            said.contains("Provider produced invalid plan"),
            "{tool}: {said}"
        );
        assert!(!said.contains("s3cret"), "{tool} shows the token: {said}");
    }
}

/// A provider that dies in the middle of a call (a Go provider's panic:
/// its trace on stderr, exit code 2) stops the apply in both tools with
/// exit 1 and the trace shown, keeps what was done before it, and makes
/// nothing after it; once the configuration stops asking for the crash,
/// both finish the job.
#[test]
fn a_crashing_provider_stops_the_run_as_it_stops_terraform() {
    if !require_terraform("a_crashing_provider_stops_the_run_as_it_stops_terraform") {
        return;
    }
    let lab = Lab::new("crash");
    let config = |name: &str| {
        format!(
            "{HEADER}\nresource \"stratatest_object\" \"first\" {{\n  name = \"first\"\n}}\n\nresource \"stratatest_object\" \"a\" {{\n  name       = \"{name}\"\n  depends_on = [stratatest_object.first]\n}}\n\nresource \"stratatest_object\" \"after\" {{\n  name       = \"after\"\n  depends_on = [stratatest_object.a]\n}}\n"
        )
    };
    let mut states = Vec::new();
    for (tool, crashed) in [("strata", "crashed"), ("terraform", "plugin crashed")] {
        let dir = lab.work_with(tool, &config("crash-now"));
        lab.ok(tool, &dir, &["init", "-no-color"]);
        let (code, out, err) = lab.run(tool, &dir, &["apply", "-no-color", "-auto-approve"]);
        let said = format!("{out}{err}");
        assert_eq!(code, 1, "{tool}: {said}");
        assert!(
            said.contains("panic: stratatest_object was told to crash"),
            "{tool}: {said}"
        );
        assert!(said.contains(crashed), "{tool}: {said}");
        let kept: Vec<_> = state(&dir)["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].clone())
            .collect();
        assert_eq!(kept, vec![json!("first")], "{tool}");
        std::fs::write(dir.join("main.tf"), config("calm")).unwrap();
        lab.ok(tool, &dir, &["apply", "-no-color", "-auto-approve"]);
        states.push(state_facts(&state(&dir)));
    }
    same("states once the crash is gone", &states[0], &states[1]);
}

/// An update the provider fails after doing it (the object never becomes
/// ready): both tools record the object as the provider left it, neither
/// tainted nor as it was, so a plan without refreshing has nothing left
/// to do.
#[test]
fn an_update_that_fails_part_way_keeps_what_was_done() {
    if !require_terraform("an_update_that_fails_part_way_keeps_what_was_done") {
        return;
    }
    let lab = Lab::new("partial");
    let config = |name: &str| {
        format!("{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  name = \"{name}\"\n}}\n")
    };
    let mut states = Vec::new();
    for tool in ["strata", "terraform"] {
        let dir = lab.work_with(tool, &config("fine"));
        lab.ok(tool, &dir, &["init", "-no-color"]);
        lab.ok(tool, &dir, &["apply", "-no-color", "-auto-approve"]);
        std::fs::write(dir.join("main.tf"), config("broken-now")).unwrap();
        let (code, out, err) = lab.run(tool, &dir, &["apply", "-no-color", "-auto-approve"]);
        assert_eq!(code, 1, "{tool}: {out}{err}");
        assert!(
            format!("{out}{err}").contains("Object not ready"),
            "{tool}: {out}{err}"
        );
        let recorded = state(&dir);
        let object = &recorded["resources"][0]["instances"][0];
        assert_eq!(
            object["attributes"]["name"],
            json!("broken-now"),
            "{tool}: {recorded}"
        );
        assert_eq!(
            object["attributes"]["revision"],
            json!(2),
            "{tool}: {recorded}"
        );
        assert_eq!(
            object["status"],
            Json::Null,
            "{tool} tainted it: {recorded}"
        );
        let args = ["plan", "-no-color", "-refresh=false", "-detailed-exitcode"];
        let (code, out, err) = lab.run(tool, &dir, &args);
        assert_eq!(code, 0, "{tool} plans the update again:\n{out}{err}");
        states.push(state_facts(&recorded));
    }
    same("states after the failed update", &states[0], &states[1]);
}

/// A package that no longer matches the lock file's checksum is refused by
/// every command of both tools, and `init` names it; a provider the
/// configuration stops needing leaves the lock file.
#[test]
fn a_changed_package_is_refused_as_terraform_refuses_it() {
    if !require_terraform("a_changed_package_is_refused_as_terraform_refuses_it") {
        return;
    }
    let lab = Lab::new("tampered");
    let config =
        format!("{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  name = \"kept\"\n}}\n");
    let dirs: Vec<(&str, PathBuf)> = ["strata", "terraform"]
        .into_iter()
        .map(|t| (t, lab.work_with(t, &config)))
        .collect();
    for (tool, dir) in &dirs {
        lab.ok(tool, dir, &["init", "-no-color"]);
    }
    // The mirror's binary changes under the installed link (replaced by a
    // changed copy: the link itself leads to the built provider).
    let binary = lab.mirrored_binary();
    let mut bytes = std::fs::read(&binary).unwrap();
    bytes.extend_from_slice(b"tampered");
    std::fs::remove_file(&binary).unwrap();
    std::fs::write(&binary, bytes).unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&binary, executable).unwrap();
    for (tool, dir) in &dirs {
        let (code, out, err) = lab.run(tool, dir, &["plan", "-no-color"]);
        let said = format!("{out}{err}");
        assert_eq!(code, 1, "{tool} planned with a changed package:\n{said}");
        assert!(
            said.contains("does not match any of the checksums"),
            "{tool}: {said}"
        );
        let (code, out, err) = lab.run(tool, dir, &["init", "-no-color"]);
        let said = format!("{out}{err}");
        assert_eq!(code, 1, "{tool} installed a changed package:\n{said}");
        assert!(
            said.contains("checksums previously recorded in the dependency lock file"),
            "{tool}: {said}"
        );
    }
    // Without the provider in the configuration, init drops its entry.
    for (tool, dir) in &dirs {
        std::fs::write(dir.join("main.tf"), "output \"x\" {\n  value = 1\n}\n").unwrap();
        lab.ok(tool, dir, &["init", "-no-color"]);
        let lock = std::fs::read_to_string(dir.join(".terraform.lock.hcl")).unwrap_or_default();
        assert!(
            !lock.contains(SOURCE),
            "{tool} kept the provider in the lock file:\n{lock}"
        );
    }
}

/// The same through protocol version 5, which most published providers
/// still speak (no nested attributes there: `ports` is a list of objects
/// whose every attribute is written).
#[test]
fn protocol_5_plans_and_states_are_terraforms() {
    if !require_terraform("protocol_5_plans_and_states_are_terraforms") {
        return;
    }
    let mut lab = Lab::new("protocol5");
    lab.protocol = "5";
    // Version 5's schema is shaped as the older SDK shapes them, so both
    // tools' human plans take an empty `image` for null: hidden (counted)
    // when made, shown as added when it is set. `ports`, a list of
    // objects there, may be written as blocks: a `dynamic` one with
    // nothing to iterate leaves it unset. A null output is no change.
    let config = |size: u32, image: &str, ports: &str| {
        format!(
            "{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  name   = \"five\"\n  size   = {size}\n  secret = \"hush\"\n{ports}\n  spec {{\n    image = \"{image}\"\n  }}\n}}\n\noutput \"nothing\" {{\n  value = null\n}}\n"
        )
    };
    let none = "  dynamic \"ports\" {\n    for_each = []\n    content {\n      name   = ports.value\n      number = 1\n    }\n  }";
    let http = "  ports  = [{ name = \"http\", number = 80, protocol = \"tcp\" }]";
    let dirs: Vec<(&str, PathBuf)> = ["strata", "terraform"]
        .into_iter()
        .map(|t| (t, lab.work_with(t, &config(1, "", none))))
        .collect();
    for (tool, dir) in &dirs {
        lab.ok(tool, dir, &["init", "-no-color"]);
    }
    for (size, image, ports) in [(1, "", none), (1, "nginx", http), (2, "nginx", http)] {
        let what = format!("protocol 5, size {size}, image {image:?}: ");
        step_alike(&lab, &dirs, &config(size, image, ports), &what);
    }
}

/// `init` installs the provider from a registry speaking the provider
/// registry protocol (behind a token, as a private registry): versions,
/// the download, its checksums and their signature checked; both tools
/// write the same lock file (`h1:` and `zh:` checksums) and plan with it.
#[test]
fn init_installs_from_a_provider_registry_as_terraform_does() {
    if !require_terraform("init_installs_from_a_provider_registry_as_terraform_does") {
        return;
    }
    const TOKEN: &str = "provider-registry-token";
    let registry = strata_standin::registry::start(Some(TOKEN)).unwrap();
    registry.publish_provider(strata_standin::registry::ProviderRelease {
        provider: "strata/stratatest".into(),
        version: "0.1.0".into(),
        platform: "linux_amd64".into(),
        protocols: vec!["6.0".into()],
        zip: provider_zip(),
    });
    let lab = Lab::new("registry");
    std::fs::write(
        &lab.cli,
        format!(
            "host \"registry.strata.test\" {{\n  services = {{\n    \"providers.v1\" = \"{}\"\n  }}\n}}\n\ncredentials \"registry.strata.test\" {{\n  token = \"{TOKEN}\"\n}}\n",
            registry.providers_url()
        ),
    )
    .unwrap();
    let config =
        format!("{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  name = \"fetched\"\n}}\n");
    let mut locks = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = lab.work_with(tool, &config);
        let said = lab.ok(tool, &dir, &["init", "-no-color"]);
        let signed = format!(
            "- Installed {SOURCE} v0.1.0 (self-signed, key ID {})",
            registry.key_id()
        );
        assert!(said.lines().any(|l| l == signed), "{tool} init:\n{said}");
        locks.push(std::fs::read_to_string(dir.join(".terraform.lock.hcl")).unwrap());
        lab.ok(tool, &dir, &["plan", "-no-color"]);
    }
    assert_eq!(locks[0], locks[1]);
    assert!(locks[0].contains("\"zh:"), "{}", locks[0]);
}

/// With a plugin cache (`TF_PLUGIN_CACHE_DIR`), `init` unpacks what it
/// fetches from the registry into the cache and links it from
/// `.terraform/providers`, and a second directory whose lock file vouches
/// for the package takes it from the cache, as Terraform does: the same
/// cache layout in both tools.
#[test]
fn init_fills_and_uses_the_plugin_cache_as_terraform_does() {
    if !require_terraform("init_fills_and_uses_the_plugin_cache_as_terraform_does") {
        return;
    }
    let registry = strata_standin::registry::start(None).unwrap();
    registry.publish_provider(strata_standin::registry::ProviderRelease {
        provider: "strata/stratatest".into(),
        version: "0.1.0".into(),
        platform: "linux_amd64".into(),
        protocols: vec!["6.0".into()],
        zip: provider_zip(),
    });
    let lab = Lab::new("cache");
    lab.provider_registry(&registry.providers_url());
    let config =
        format!("{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  name = \"cached\"\n}}\n");
    let package = format!("{SOURCE}/0.1.0/linux_amd64/terraform-provider-stratatest_v0.1.0");
    for tool in ["terraform", "strata"] {
        let cache = lab.root.join(format!("cache-{tool}"));
        std::fs::create_dir_all(&cache).unwrap();
        let env = [("TF_PLUGIN_CACHE_DIR", cache.as_os_str())];
        for (n, dir) in ["first", "second"].iter().enumerate() {
            let dir = lab.root.join(format!("{tool}-{dir}"));
            std::fs::create_dir_all(dir.join("store")).unwrap();
            std::fs::write(dir.join("main.tf"), &config).unwrap();
            if n == 1 {
                // As Terraform 1.4 on, the cache serves a directory whose
                // lock file vouches for the package.
                let first = lab.root.join(format!("{tool}-first/.terraform.lock.hcl"));
                std::fs::copy(first, dir.join(".terraform.lock.hcl")).unwrap();
            }
            let (code, out, err) = lab.run_with(tool, &dir, &["init", "-no-color"], &env);
            assert_eq!(code, 0, "{tool} init:\n{out}{err}");
            assert!(
                cache.join(&package).is_file(),
                "{tool}: nothing in the cache:\n{out}"
            );
            if n == 1 {
                assert!(
                    out.contains("from the shared cache directory"),
                    "{tool}'s second init did not use the cache:\n{out}"
                );
            }
            let (code, out, err) = lab.run_with(tool, &dir, &["plan", "-no-color"], &env);
            assert_eq!(code, 0, "{tool} plan:\n{out}{err}");
        }
    }
}

/// `init` installs the provider from a network mirror (Terraform's provider
/// network mirror protocol, over HTTPS, the base URL with a path) as
/// Terraform does: both say "verified checksum" and write the same lock
/// file; a package that does not match the mirror's checksum is refused by
/// both, and nothing is installed.
#[test]
fn init_installs_from_a_network_mirror_as_terraform_does() {
    if !require_terraform("init_installs_from_a_network_mirror_as_terraform_does") {
        return;
    }
    use strata_standin::mirror::{self, Mirrored};
    let zip = provider_zip();
    let zh = format!("zh:{}", sha256_hex(&zip));
    let serve = |hashes: Vec<String>| {
        let m = mirror::start().unwrap();
        m.publish(Mirrored {
            provider: SOURCE.into(),
            version: "0.1.0".into(),
            platform: "linux_amd64".into(),
            zip: zip.clone(),
            hashes,
        });
        m
    };
    let lab_of = |tag: &str, m: &mirror::Mirror| {
        let mut lab = Lab::new(tag);
        let ca = lab.root.join("ca.pem");
        std::fs::write(&ca, &m.ca_pem).unwrap();
        lab.ca = Some(ca);
        let cli = format!(
            "provider_installation {{\n  network_mirror {{\n    url     = \"{}\"\n    include = [\"registry.strata.test/*/*\"]\n  }}\n}}\n",
            m.url()
        );
        std::fs::write(&lab.cli, cli).unwrap();
        lab
    };
    let config =
        format!("{HEADER}\nresource \"stratatest_object\" \"a\" {{\n  name = \"mirrored\"\n}}\n");
    let good = serve(vec![zh.clone(), "h1:not-this-one=".into()]);
    let lab = lab_of("network-mirror", &good);
    let mut locks = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = lab.work_with(tool, &config);
        let said = lab.ok(tool, &dir, &["init", "-no-color"]);
        let verified = format!("- Installed {SOURCE} v0.1.0 (verified checksum)");
        assert!(said.lines().any(|l| l == verified), "{tool} init:\n{said}");
        locks.push(std::fs::read_to_string(dir.join(".terraform.lock.hcl")).unwrap());
        lab.ok(tool, &dir, &["plan", "-no-color"]);
    }
    assert_eq!(locks[0], locks[1]);
    assert!(good.hits("/mirror/registry.strata.test/strata/stratatest/index.json") >= 2);

    let bad = serve(vec![
        "zh:0000000000000000000000000000000000000000000000000000000000000000".into(),
    ]);
    let lab = lab_of("network-mirror-bad", &bad);
    for tool in ["terraform", "strata"] {
        let dir = lab.work_with(tool, &config);
        let (code, out, err) = lab.run(tool, &dir, &["init", "-no-color"]);
        let said = format!("{out}{err}");
        assert_eq!(
            code, 1,
            "{tool} took a package the mirror's checksum refuses:\n{said}"
        );
        assert!(
            said.contains("doesn't match the expected checksum"),
            "{tool}: {said}"
        );
        assert!(
            !dir.join(".terraform.lock.hcl").exists(),
            "{tool} locked a refused package"
        );
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
