//! `lifecycle { destroy = false }` (Terraform 1.16, OpenTofu 1.12): what
//! would destroy an instance forgets it instead — `destroy`, its block
//! removed (the state remembers the setting), a `count` that shrinks —
//! and the plan names what stays in the cloud. A replacement makes the
//! new object and forgets the old (`CreateThenForget`, as OpenTofu
//! replaces and as Terraform replaces a tainted object; Terraform 1.16
//! destroyed it on `-replace` and attribute changes,
//! hashicorp/terraform#39088).
//! Observed on real files: `local_file`s stay on disk. Terraform 1.11
//! reads a state that records the setting.

#[path = "common/oracle.rs"]
mod oracle;
#[path = "common/run.rs"]
mod run;

use run::strata_in;
use std::path::{Path, PathBuf};

fn scratch(tag: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("strata-destroy-false-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

/// Files `kept-0`, `kept-1` (kept) and `plain` (destroyed as usual).
fn config(dir: &Path, kept: usize, extra: &str) {
    let text = format!(
        r#"resource "local_file" "kept" {{
  count    = {kept}
  filename = "${{path.module}}/kept-${{count.index}}"
  content  = "keep me{extra}"
  lifecycle {{
    destroy = false
  }}
}}

resource "local_file" "plain" {{
  filename = "${{path.module}}/plain"
  content  = "plain"
}}
"#
    );
    std::fs::write(dir.join("main.tf"), text).expect("config");
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let (code, out) = strata_in(dir, args);
    assert_eq!(code, 0, "{args:?}:\n{out}");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn destroy_and_a_shrinking_count_forget_what_destroy_false_keeps() {
    let dir = scratch("destroy");
    config(&dir, 2, "");
    ok(&dir, &["init"]);
    ok(&dir, &["apply", "-auto-approve"]);
    // One fewer: the instance dropped is forgotten, its file stays.
    config(&dir, 1, "");
    let said = ok(&dir, &["apply", "-auto-approve"]);
    assert!(
        said.contains("Objects will be forgotten, not destroyed")
            && said.contains("local_file.kept[1]"),
        "{said}"
    );
    assert!(dir.join("kept-1").exists(), "{said}");
    let said = ok(&dir, &["destroy", "-auto-approve"]);
    assert!(said.contains("local_file.kept[0]"), "{said}");
    assert!(
        said.contains("Destroy complete! Resources: 1 destroyed."),
        "{said}"
    );
    assert!(dir.join("kept-0").exists() && !dir.join("plain").exists());
    assert_eq!(ok(&dir, &["state", "list"]), "");
}

#[test]
fn a_removed_block_is_forgotten_as_the_state_recorded_it() {
    let dir = scratch("removed");
    config(&dir, 1, "");
    ok(&dir, &["init"]);
    ok(&dir, &["apply", "-auto-approve"]);
    let state = std::fs::read_to_string(dir.join("terraform.tfstate")).expect("state");
    assert_eq!(
        state.matches("\"skip_destroy\": true").count(),
        1,
        "{state}"
    );
    std::fs::write(
        dir.join("main.tf"),
        "resource \"local_file\" \"plain\" {\n  filename = \"${path.module}/plain\"\n  content  = \"plain\"\n}\n",
    )
    .expect("config");
    let said = ok(&dir, &["apply", "-auto-approve"]);
    assert!(
        said.contains("local_file.kept[0]") && said.contains("forgotten"),
        "{said}"
    );
    assert!(dir.join("kept-0").exists(), "{said}");
    assert_eq!(ok(&dir, &["state", "list"]), "local_file.plain");
}

#[test]
fn a_replacement_makes_the_new_object_and_forgets_the_old() {
    let dir = scratch("replace");
    let write = |v: &str| {
        let text = format!("variable \"v\" {{\n  default = \"{v}\"\n}}\n\nresource \"local_file\" \"kept\" {{\n  filename = \"${{path.module}}/kept-${{var.v}}\"\n  content  = \"keep me\"\n  lifecycle {{\n    destroy = false\n  }}\n}}\n");
        std::fs::write(dir.join("main.tf"), text).expect("config");
    };
    write("1");
    ok(&dir, &["init"]);
    ok(&dir, &["apply", "-auto-approve"]);
    // A change the provider cannot make in place: Terraform's layout for
    // `CreateThenForget`, counted as an add only.
    write("2");
    let (code, plan) = strata_in(&dir, &["plan", "-no-color"]);
    assert_eq!(code, 0, "{plan}");
    assert!(
        plan.contains(" # local_file.kept must be replaced, but the existing object will not be destroyed\n # (destroy = false is set in the configuration)\n +/. resource \"local_file\" \"kept\" {"),
        "{plan}"
    );
    assert!(
        plan.contains("Plan: 1 to add, 0 to change, 0 to destroy."),
        "{plan}"
    );
    assert!(
        plan.contains("Some objects will no longer be managed by strata"),
        "{plan}"
    );
    ok(&dir, &["apply", "-auto-approve"]);
    assert!(dir.join("kept-1").exists() && dir.join("kept-2").exists());
    assert_eq!(ok(&dir, &["state", "list"]), "local_file.kept");
    // `-replace` and a tainted object alike.
    let said = ok(&dir, &["plan", "-replace=local_file.kept"]);
    assert!(said.contains("+/. resource"), "{said}");
    ok(&dir, &["taint", "local_file.kept"]);
    let said = ok(&dir, &["plan", "-out=tfplan"]);
    assert!(
        said.contains("must be replaced, but the existing object will not be destroyed"),
        "{said}"
    );
    let (_, shown) = strata_in(&dir, &["show", "-json", "tfplan"]);
    let shown: serde_json::Value = serde_json::from_str(&shown).expect("plan JSON");
    assert_eq!(
        shown["resource_changes"][0]["change"]["actions"],
        serde_json::json!(["create", "forget"]),
        "{shown}"
    );
    ok(&dir, &["apply", "tfplan"]);
    assert_eq!(ok(&dir, &["state", "list"]), "local_file.kept");
    assert!(dir.join("kept-2").exists());
}

#[test]
fn terraform_reads_a_state_that_records_the_setting() {
    if !oracle::require_terraform("terraform_reads_a_state_that_records_the_setting") {
        return;
    }
    let dir = scratch("terraform");
    std::fs::write(
        dir.join("main.tf"),
        "resource \"terraform_data\" \"kept\" {\n  input = \"a\"\n  lifecycle {\n    destroy = false\n  }\n}\n",
    )
    .expect("config");
    ok(&dir, &["apply", "-auto-approve"]);
    // Terraform 1.11 has no `destroy` in lifecycle: the same object
    // without it, over strata's state, plans nothing.
    std::fs::write(
        dir.join("main.tf"),
        "resource \"terraform_data\" \"kept\" {\n  input = \"a\"\n}\n",
    )
    .expect("config");
    assert!(oracle::terraform(&dir, &["init", "-no-color"])
        .status
        .success());
    let plan = oracle::terraform(&dir, &["plan", "-detailed-exitcode", "-no-color"]);
    assert_eq!(plan.status.code(), Some(0), "{plan:?}");
}
