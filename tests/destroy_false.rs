//! `lifecycle { destroy = false }` (Terraform 1.16, OpenTofu 1.12): what
//! would destroy an instance forgets it instead — `destroy`, its block
//! removed (the state remembers the setting), a `count` that shrinks —
//! and the plan names what stays in the cloud. A replacement, which
//! would destroy the old object, is an error at the resource (Terraform
//! 1.16 destroys it, hashicorp/terraform#39088; strata does not unasked).
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
fn a_replacement_is_an_error_at_the_resource() {
    let dir = scratch("replace");
    config(&dir, 1, "");
    ok(&dir, &["init"]);
    ok(&dir, &["apply", "-auto-approve"]);
    config(&dir, 1, " now");
    let (code, out) = strata_in(&dir, &["plan"]);
    assert_eq!(code, 1, "{out}");
    let said = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        said.contains("Instance cannot be replaced")
            && said.contains("a change of content forces its replacement")
            && said.contains("main.tf:1"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("kept-0")).expect("kept"),
        "keep me"
    );
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
