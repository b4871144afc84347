//! `strata plan`, `apply`, `destroy` and `show` through the binary: saved
//! plans and when they are refused, exit codes, confirmation, and bad
//! input (damaged or foreign state, damaged plan files) that must leave
//! every file as it was.

#[path = "common/run.rs"]
mod run;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-plan-apply-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

const CONFIG: &str = r#"
variable "size" {
  type    = number
  default = 2
}
resource "terraform_data" "pool" {
  count = var.size
  input = "node-${count.index}"
}
output "nodes" { value = terraform_data.pool[*].output }
"#;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write");
}

struct Run {
    code: i32,
    out: String,
    err: String,
}

fn strata_in(dir: &Path, args: &[&str], stdin: &str) -> Run {
    strata_env(dir, args, stdin, &[])
}

fn strata_env(dir: &Path, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Run {
    let mut child = run::strata(dir)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn strata");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    Run {
        code: out.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn strata(dir: &Path, args: &[&str]) -> Run {
    strata_in(dir, args, "")
}

fn state_bytes(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join("terraform.tfstate")).unwrap_or_default()
}

#[test]
fn detailed_exit_codes() {
    let d = scratch("exit");
    write(&d, "main.tf", CONFIG);
    let r = strata(&d, &["plan", "--detailed-exitcode"]);
    assert_eq!(r.code, 2, "{}{}", r.out, r.err);
    assert!(
        r.out.contains("Plan: 2 to add, 0 to change, 0 to destroy."),
        "{}",
        r.out
    );
    assert_eq!(strata(&d, &["plan"]).code, 0);
    assert_eq!(strata(&d, &["apply", "--auto-approve"]).code, 0);
    let r = strata(&d, &["plan", "--detailed-exitcode"]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    assert!(r.out.contains("No changes."), "{}", r.out);
    write(
        &d,
        "main.tf",
        "resource \"terraform_data\" \"x\" {\n  input = var.nope\n}\n",
    );
    let r = strata(&d, &["plan", "--detailed-exitcode"]);
    assert_eq!(r.code, 1, "{}{}", r.out, r.err);
}

#[test]
fn a_saved_plan_is_applied_as_made_and_refused_once_stale() {
    let d = scratch("saved");
    write(&d, "main.tf", CONFIG);
    let r = strata(&d, &["plan", "--out", "first.plan", "--var", "size=3"]);
    assert_eq!(r.code, 0, "{}", r.err);
    // The saved plan keeps the variables it was made with.
    let r = strata(&d, &["apply", "first.plan"]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    assert!(r.out.contains("3 added"), "{}", r.out);
    let list = strata(&d, &["state", "list"]);
    assert_eq!(list.out.lines().count(), 3, "{}", list.out);
    // Applying it again would act on a state that has moved on.
    let before = state_bytes(&d);
    let r = strata(&d, &["apply", "first.plan"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("Saved plan is stale"), "{}", r.err);
    assert_eq!(
        state_bytes(&d),
        before,
        "a refused plan must not touch the state"
    );
    // A plan made now, then a configuration change: refused too.
    assert_eq!(strata(&d, &["plan", "--out", "second.plan"]).code, 0);
    write(&d, "main.tf", &CONFIG.replace("node-", "gpu-"));
    let r = strata(&d, &["apply", "second.plan"]);
    assert_eq!(r.code, 1);
    assert!(
        r.err.contains("does not match the configuration"),
        "{}",
        r.err
    );
    assert_eq!(state_bytes(&d), before);
}

#[test]
fn a_plan_for_another_state_is_refused() {
    let d = scratch("lineage");
    write(&d, "main.tf", CONFIG);
    assert_eq!(strata(&d, &["apply", "--auto-approve"]).code, 0);
    assert_eq!(
        strata(&d, &["apply", "--auto-approve", "--state", "other.tfstate"]).code,
        0
    );
    write(&d, "main.tf", &CONFIG.replace("default = 2", "default = 1"));
    assert_eq!(
        strata(&d, &["plan", "--out", "p.plan", "--state", "other.tfstate"]).code,
        0
    );
    let before = state_bytes(&d);
    let r = strata(&d, &["apply", "p.plan"]);
    assert_eq!(r.code, 1);
    assert!(
        r.err.contains("does not match the given state"),
        "{}",
        r.err
    );
    assert_eq!(state_bytes(&d), before);
    // Against the state it was made for, it applies.
    let r = strata(&d, &["apply", "p.plan", "--state", "other.tfstate"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.out.contains("1 destroyed"), "{}", r.out);
}

#[test]
fn damaged_plan_files_are_refused() {
    let d = scratch("badplan");
    write(&d, "main.tf", CONFIG);
    write(&d, "bad.plan", "{\"strata_plan_format\": 99}");
    let r = strata(&d, &["apply", "bad.plan"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("not a usable plan file"), "{}", r.err);
    write(&d, "torn.plan", "{\"strata_plan_format\": 1, \"lin");
    let r = strata(&d, &["apply", "torn.plan"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("not a usable plan file"), "{}", r.err);
    assert!(
        !d.join("terraform.tfstate").exists(),
        "nothing may be written"
    );
}

#[test]
fn damaged_or_newer_state_is_an_error_and_left_alone() {
    let d = scratch("badstate");
    write(&d, "main.tf", CONFIG);
    for (text, phrase) in [
        ("{\"version\": 4, \"serial\": ", "not valid state"),
        ("{\"version\": 9, \"serial\": 1, \"lineage\": \"x\"}", "format version 9"),
        ("{\"version\": 4, \"strata_version\": \"0\", \"serial\": 1, \"lineage\": \"x\", \"resources\": [{\"mode\": \"managed\", \"type\": \"terraform_data\", \"name\": \"a\", \"provider\": \"p\", \"instances\": [{\"schema_version\": 0, \"attributes\": {\"input\": 5}}]}]}", "do not fit its schema"),
    ] {
        write(&d, "terraform.tfstate", text);
        for args in [&["plan"][..], &["apply", "--auto-approve"]] {
            let r = strata(&d, args);
            assert_eq!(r.code, 1, "{args:?} on {text}");
            assert!(r.err.contains(phrase), "{args:?}: {}", r.err);
            assert_eq!(std::fs::read_to_string(d.join("terraform.tfstate")).unwrap_or_default(), text);
        }
    }
}

#[test]
fn apply_asks_and_only_yes_approves() {
    let d = scratch("confirm");
    write(&d, "main.tf", CONFIG);
    let r = strata_in(&d, &["apply"], "no\n");
    assert_eq!(r.code, 1);
    assert!(r.err.contains("Apply cancelled"), "{}", r.err);
    assert!(state_bytes(&d).is_empty() || !r.out.contains("Apply complete"));
    let r = strata_in(&d, &["apply"], "yes\n");
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out.contains("Apply complete! Resources: 2 added"),
        "{}",
        r.out
    );
    let r = strata_in(&d, &["destroy"], "yes\n");
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out.contains("Destroy complete! Resources: 2 destroyed."),
        "{}",
        r.out
    );
    assert_eq!(strata(&d, &["state", "list"]).out, "");
}

#[test]
fn a_held_lock_names_its_holder() {
    let d = scratch("lock");
    write(&d, "main.tf", CONFIG);
    assert_eq!(strata(&d, &["apply", "--auto-approve"]).code, 0);
    let before = state_bytes(&d);
    let store = strata_state::Store::local(d.join("terraform.tfstate"));
    let held = store.lock("apply").expect("lock");
    let r = strata(&d, &["apply", "--auto-approve", "--var", "size=1"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("locked by"), "{}", r.err);
    assert!(r.err.contains(&held.info.who), "{}", r.err);
    assert_eq!(state_bytes(&d), before);
    drop(held);
    assert_eq!(
        strata(&d, &["apply", "--auto-approve", "--var", "size=1"]).code,
        0
    );
}

#[test]
fn show_prints_a_saved_plan_in_both_forms() {
    let d = scratch("show");
    write(&d, "main.tf", CONFIG);
    assert_eq!(strata(&d, &["plan", "--out", "p.plan"]).code, 0);
    let human = strata(&d, &["show", "p.plan"]);
    assert!(
        human.out.contains("terraform_data.pool[1] will be created"),
        "{}",
        human.out
    );
    let json = strata(&d, &["show", "--json", "p.plan"]);
    let j: serde_json::Value = serde_json::from_str(&json.out).expect("plan JSON");
    assert_eq!(j["format_version"], "1.2");
    assert_eq!(j["resource_changes"][0]["change"]["actions"][0], "create");
    assert_eq!(j["resource_changes"][1]["index"], 1);
}

#[test]
fn sensitive_values_stay_redacted_after_they_are_stored() {
    let d = scratch("sensitive");
    write(
        &d,
        "main.tf",
        r#"
variable "pw" {
  type      = string
  default   = "hunter2"
  sensitive = true
}
resource "terraform_data" "a" {
  input = { user = "me", pw = var.pw }
}
"#,
    );
    let r = strata(&d, &["apply", "--auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(!r.out.contains("hunter2"), "{}", r.out);
    let state: serde_json::Value = serde_json::from_slice(&state_bytes(&d)).expect("state JSON");
    let paths = &state["resources"][0]["instances"][0]["sensitive_attributes"];
    assert_eq!(
        paths[0],
        serde_json::json!([{"type": "get_attr", "value": "input"}, {"type": "get_attr", "value": "pw"}])
    );
    // A changed secret: every human rendering hides old and new.
    for format in ["human", "markdown"] {
        let r = strata(&d, &["plan", "--var", "pw=other", "--format", format]);
        assert_eq!(r.code, 0, "{}", r.err);
        assert!(r.out.contains("(sensitive value)"), "{}", r.out);
        assert!(
            !r.out.contains("hunter2") && !r.out.contains("other"),
            "{format}: {}",
            r.out
        );
    }
    let r = strata(&d, &["plan", "--var", "pw=other", "--format", "json"]);
    let j: serde_json::Value = serde_json::from_str(&r.out).expect("plan JSON");
    assert_eq!(
        j["resource_changes"][0]["change"]["before_sensitive"]["input"]["pw"],
        true
    );
    assert_eq!(
        j["resource_changes"][0]["change"]["after_sensitive"]["input"]["pw"],
        true
    );
}

/// The workspace is decided once per command and is the same everywhere
/// it shows: the state file it picks, `terraform.workspace` in plan,
/// apply, output, validate and console.
#[test]
fn the_workspace_is_one_decision_per_command() {
    let d = scratch("workspace");
    write(
        &d,
        "main.tf",
        r#"
resource "terraform_data" "w" {
  input = terraform.workspace
}
output "w" { value = terraform_data.w.output }
"#,
    );
    let blue = [("STRATA_WORKSPACE", "blue")];
    let r = strata_env(&d, &["apply", "--auto-approve"], "", &blue);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.out.contains("w = \"blue\""), "{}", r.out);
    // Terraform's layout: a workspace other than default in its own folder.
    assert!(d
        .join("terraform.tfstate.d/blue/terraform.tfstate")
        .is_file());
    assert!(!d.join("terraform.tfstate").exists());
    let r = strata_env(&d, &["output", "--json"], "", &blue);
    assert_eq!(r.code, 0, "{}", r.err);
    let r = strata_env(&d, &["output", "w"], "", &blue);
    assert_eq!(r.out.trim(), "\"blue\"", "{}", r.err);
    let r = strata_env(
        &d,
        &["console", "--json", "."],
        "terraform.workspace\n",
        &blue,
    );
    assert!(
        r.out.starts_with(r#"{"value":"blue""#),
        "{}{}",
        r.out,
        r.err
    );
    let r = strata_env(&d, &["validate", "."], "", &blue);
    assert_eq!(r.code, 0, "{}", r.err);
    // Another workspace starts empty and plans its own object.
    let r = strata_env(&d, &["plan"], "", &[("STRATA_WORKSPACE", "green")]);
    assert!(r.out.contains("\"green\""), "{}", r.out);
    // A name no backend could hold fails the commands that use it, at
    // once, and leaves the others alone.
    let bad = [("STRATA_WORKSPACE", "no/such")];
    let r = strata_env(&d, &["plan"], "", &bad);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("Invalid workspace name"), "{}", r.err);
    let r = strata_env(&d, &["fmt", "--check", "."], "", &bad);
    assert_eq!(r.code, 0, "{}", r.err);
}

/// A destroy that stopped midway (an error, a kill) leaves objects whose
/// `for_each` is made of objects already gone: the next destroy still
/// plans them away from the state's instances, as Terraform's does,
/// where it used to stop at "Invalid for_each argument".
#[test]
fn a_destroy_finishes_what_a_stopped_destroy_left() {
    let d = scratch("half-destroyed");
    write(
        &d,
        "main.tf",
        r#"
resource "terraform_data" "names" {
  input = ["a", "b"]
}
resource "terraform_data" "node" {
  for_each = toset(terraform_data.names.input)
  input    = each.key
}
"#,
    );
    let r = strata(&d, &["apply", "--auto-approve"]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    // As a destroy stopped after deleting the names would leave it.
    let r = strata(&d, &["state", "rm", "terraform_data.names"]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    let r = strata(&d, &["destroy", "--auto-approve"]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    assert!(r.out.contains("2 destroyed"), "{}", r.out);
    let r = strata(&d, &["state", "list"]);
    assert_eq!(r.out.trim(), "", "{}", r.err);
    // Planned from nothing again, the keys are known.
    let r = strata(&d, &["plan"]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    assert!(r.out.contains("Plan: 3 to add"), "{}", r.out);
}
