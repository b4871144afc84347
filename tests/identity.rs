//! Resource identity (protocol 6.9, Terraform 1.12; issue 45) through a
//! real provider plugin: the test provider's `stratatest_object` declares
//! `{ id, name }` when `STRATATEST_IDENTITY` is set, refuses a read whose
//! stored identity names another object, and upgrades identities of
//! version 0. Terraform 1.11 knows no identities, so strata is held to
//! the protocol's definition and Terraform 1.12's documented behaviour,
//! and Terraform 1.11 is asked only what it can answer: that a state
//! holding identities is one it reads as it reads any other.

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;
use oracle::require_terraform;

#[path = "common/lab.rs"]
mod lab;
use lab::{errors_said, identity_env, Lab, HEADER};

use serde_json::{json, Value as Json};
use std::path::Path;

fn config(body: &str) -> String {
    format!("{HEADER}\n{body}")
}

fn state(dir: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(dir.join("terraform.tfstate")).unwrap()).unwrap()
}

/// The state's one instance of resource `name`.
fn instance(dir: &Path, name: &str) -> Json {
    let s = state(dir);
    let r = s["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name);
    r.unwrap_or_else(|| panic!("no resource {name} in {s}"))["instances"][0].clone()
}

/// Rewrites the state's instance of `name` with `change`.
fn edit_state(dir: &Path, name: &str, change: impl Fn(&mut Json)) {
    let mut s = state(dir);
    for r in s["resources"].as_array_mut().unwrap() {
        if r["name"] == name {
            change(&mut r["instances"][0]);
        }
    }
    std::fs::write(
        dir.join("terraform.tfstate"),
        serde_json::to_string_pretty(&s).unwrap(),
    )
    .unwrap();
}

const ALPHA: &str = r#"
resource "stratatest_object" "a" {
  name = "alpha"
}
"#;

#[test]
fn identities_are_kept_sent_back_and_upgraded() {
    let lab = Lab::new("identity-kept");
    let dir = lab.work_with("strata", &config(ALPHA));
    lab.identified(&dir, &["init", "-no-color"]);
    lab.identified(&dir, &["apply", "-no-color", "-auto-approve"]);
    let a = instance(&dir, "a");
    assert_eq!(
        a["identity"],
        json!({"id": "alpha-1", "name": "alpha"}),
        "{a}"
    );
    assert_eq!(a["identity_schema_version"], 1, "{a}");
    // `show -json` gives it as Terraform 1.12 does.
    let shown: Json = serde_json::from_str(&lab.identified(&dir, &["show", "-json"])).unwrap();
    let r = &shown["values"]["root_module"]["resources"][0];
    assert_eq!(
        r["identity"],
        json!({"id": "alpha-1", "name": "alpha"}),
        "{r}"
    );
    assert_eq!(r["identity_schema_version"], 1, "{r}");
    // `state identities -json` (Terraform 1.12): by address, filtered by
    // address and `-id` as `state list` is; JSON only.
    let all = lab.identified(&dir, &["state", "identities", "-json"]);
    assert_eq!(
        all,
        "{\n  \"stratatest_object.a\": {\n    \"id\": \"alpha-1\",\n    \"name\": \"alpha\"\n  }\n}\n"
    );
    let none = lab.identified(&dir, &["state", "identities", "-json", "-id=nothing"]);
    assert_eq!(none, "{}\n");
    let named = lab.identified(
        &dir,
        &["state", "identities", "-json", "stratatest_object.a"],
    );
    assert_eq!(named, all);
    let (code, _, err) = lab.run_with("strata", &dir, &["state", "identities"], &identity_env());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("requires the -json flag"), "{err}");

    // `providers schema -json` gives the identity schema as Terraform
    // 1.12 does.
    let schema: Json =
        serde_json::from_str(&lab.identified(&dir, &["providers", "schema", "-json"])).unwrap();
    let ours = &schema["provider_schemas"][lab::SOURCE]["resource_identity_schemas"];
    assert_eq!(ours["stratatest_object"]["version"], 1, "{ours}");
    assert_eq!(
        ours["stratatest_object"]["attributes"]["id"]["required_for_import"], true,
        "{ours}"
    );

    // The provider refuses a read whose identity names another object:
    // strata sends what it stored.
    edit_state(&dir, "a", |i| i["identity"]["id"] = json!("other-9"));
    let (code, out, err) = lab.run_with("strata", &dir, &["plan", "-no-color"], &identity_env());
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("Unexpected Identity Change"), "{err}");

    // An identity of version 0 (`object_id`) is upgraded before use, and
    // the upgraded one is what the plan carries and the apply records.
    edit_state(&dir, "a", |i| {
        i["identity"] = json!({"object_id": "alpha-1"});
        i["identity_schema_version"] = json!(0);
    });
    lab.identified(
        &dir,
        &["plan", "-no-color", "-refresh=false", "-out=saved.plan"],
    );
    let plan: Json =
        serde_json::from_str(&lab.identified(&dir, &["show", "-json", "saved.plan"])).unwrap();
    let change = &plan["resource_changes"][0]["change"];
    assert_eq!(
        change["before_identity"],
        json!({"id": "alpha-1", "name": null}),
        "{change}"
    );
    lab.identified(&dir, &["apply", "-no-color", "-auto-approve"]);
    let a = instance(&dir, "a");
    assert_eq!(
        a["identity"],
        json!({"id": "alpha-1", "name": "alpha"}),
        "{a}"
    );
    assert_eq!(a["identity_schema_version"], 1, "{a}");
}

const IMPORT_BETA: &str = r#"
import {
  to       = stratatest_object.b
  identity = { id = "beta-1" }
}

resource "stratatest_object" "b" {
  name = "beta"
}
"#;

#[test]
fn an_import_block_takes_an_identity() {
    let lab = Lab::new("identity-import");
    let dir = lab.work_with("strata", &config(IMPORT_BETA));
    lab.made_elsewhere(&dir, "beta");
    lab.identified(&dir, &["init", "-no-color"]);
    let plan = lab.identified(&dir, &["plan", "-no-color", "-out=saved.plan"]);
    // Terraform 1.12's lines: the identity as the block gives it, its
    // optional attributes null.
    assert!(
        plan.contains("stratatest_object.b: Preparing import... [identity=id=beta-1,name=<null>]"),
        "{plan}"
    );
    assert!(
        plan.contains("# stratatest_object.b will be imported"),
        "{plan}"
    );
    assert!(
        plan.contains("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy."),
        "{plan}"
    );
    let shown: Json =
        serde_json::from_str(&lab.identified(&dir, &["show", "-json", "saved.plan"])).unwrap();
    let change = &shown["resource_changes"][0]["change"];
    assert_eq!(
        change["importing"],
        json!({"identity": {"id": "beta-1", "name": null}}),
        "{change}"
    );
    assert_eq!(
        change["after_identity"],
        json!({"id": "beta-1", "name": "beta"}),
        "{change}"
    );
    let applied = lab.identified(&dir, &["apply", "-no-color", "saved.plan"]);
    assert!(applied.contains("1 imported, 0 added"), "{applied}");
    let b = instance(&dir, "b");
    assert_eq!(
        b["identity"],
        json!({"id": "beta-1", "name": "beta"}),
        "{b}"
    );
    assert_eq!(b["attributes"]["id"], "beta-1", "{b}");
    let again = lab.run_with(
        "strata",
        &dir,
        &["plan", "-no-color", "-detailed-exitcode"],
        &identity_env(),
    );
    assert_eq!(again.0, 0, "{}{}", again.1, again.2);
}

#[test]
fn configuration_is_generated_for_an_import_by_identity() {
    let lab = Lab::new("identity-generate");
    let body = "import {\n  to       = stratatest_object.g\n  identity = { id = \"gamma-1\" }\n}\n";
    let dir = lab.work_with("strata", &config(body));
    lab.made_elsewhere(&dir, "gamma");
    lab.identified(&dir, &["init", "-no-color"]);
    lab.identified(
        &dir,
        &["plan", "-no-color", "-generate-config-out=generated.tf"],
    );
    let generated = std::fs::read_to_string(dir.join("generated.tf")).unwrap();
    // No id to name: the comment says only where the block came from,
    // as Terraform writes it for an import by identity.
    assert!(
        generated.contains("\n# __generated__ by strata\nresource \"stratatest_object\" \"g\" {"),
        "{generated}"
    );
    assert!(generated.contains("= \"gamma\""), "{generated}");
}

#[test]
fn bad_import_identities_are_refused_where_they_are_written() {
    let lab = Lab::new("identity-refused");
    let cases: [(&str, &str, &str); 6] = [
        (
            "to = stratatest_object.b",
            "Invalid import block",
            "At least one of 'id' or 'identity' must be specified.",
        ),
        (
            "to = stratatest_object.b\n  id = \"beta-1\"\n  identity = { id = \"beta-1\" }",
            "Invalid import block",
            "Only one of 'id' or 'identity' can be specified.",
        ),
        (
            "to = stratatest_object.b\n  identity = null",
            "Invalid import identity argument",
            "The import identity cannot be null.",
        ),
        (
            "to = stratatest_object.b\n  identity = { name = \"beta\" }",
            "Invalid import identity argument",
            "attribute \"id\" is required",
        ),
        (
            "to = stratatest_object.b\n  identity = { id = [\"beta-1\"] }",
            "Invalid import identity argument",
            "string required",
        ),
        (
            "to = stratatest_object.b\n  identity = { id = sensitive(\"beta-1\") }",
            "Invalid import identity",
            "must not contain sensitive values",
        ),
    ];
    for (n, (block, summary, detail)) in cases.iter().enumerate() {
        let body = format!("import {{\n  {block}\n}}\n\nresource \"stratatest_object\" \"b\" {{\n  name = \"beta\"\n}}\n");
        let dir = lab.work_with(&format!("case{n}"), &config(&body));
        // A block that does not decode stops init already, as it stops
        // Terraform's; the plan must say it either way.
        lab.run_with("strata", &dir, &["init", "-no-color"], &identity_env());
        let (code, out, err) =
            lab.run_with("strata", &dir, &["plan", "-no-color"], &identity_env());
        assert_eq!(code, 1, "case {n}: {out}{err}");
        let said = errors_said(&err);
        assert!(
            said.iter().any(|(s, _)| s.contains(summary)) && err.contains(detail),
            "case {n}: want {summary:?} / {detail:?}, got {said:?}\n{err}"
        );
        assert!(
            err.contains("main.tf:"),
            "case {n}: no source location\n{err}"
        );
    }
    // A provider that declares no identity for the type: said so.
    let body = IMPORT_BETA;
    let dir = lab.work_with("undeclared", &config(body));
    lab.ok("strata", &dir, &["init", "-no-color"]);
    let (code, _, err) = lab.run("strata", &dir, &["plan", "-no-color"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Invalid import identity argument"), "{err}");
    assert!(err.contains("has no identity schema"), "{err}");
}

#[test]
fn terraform_reads_a_state_that_holds_identities() {
    if !require_terraform("terraform_reads_a_state_that_holds_identities") {
        return;
    }
    let lab = Lab::new("identity-terraform");
    let dir = lab.work_with("strata", &config(ALPHA));
    lab.identified(&dir, &["init", "-no-color"]);
    lab.identified(&dir, &["apply", "-no-color", "-auto-approve"]);
    assert!(instance(&dir, "a")["identity"].is_object());
    // Terraform 1.11, with the same provider, plans no change over it.
    let (code, out, err) = lab.run("terraform", &dir, &["init", "-no-color"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = lab.run_with(
        "terraform",
        &dir,
        &["plan", "-no-color", "-detailed-exitcode"],
        &identity_env(),
    );
    assert_eq!(code, 0, "{out}{err}");
}
