//! Actions (protocol 6.11, Terraform 1.14; issue 45) through the test
//! provider's `stratatest_note`, which appends its message to
//! `actions.log` in its store and says so as it goes. Terraform 1.11 has
//! no actions: strata is held to the protocol's definition and Terraform's
//! source for its lines (recorded in docs/testing.md).

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;

#[path = "common/lab.rs"]
mod lab;
use lab::{errors_said, Lab, HEADER};

use std::path::Path;

const CONFIG: &str = r#"
resource "stratatest_object" "a" {
  name = "alpha"
}

action "stratatest_note" "hello" {
  config {
    message = "hello from ${stratatest_object.a.name}"
  }
}

action "stratatest_note" "failing" {
  config {
    message = "never"
    fail    = true
  }
}

action "stratatest_note" "empty" {
  config {
    message = ""
  }
}
"#;

fn log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("store/actions.log")).unwrap_or_default()
}

/// `apply -invoke=ADDR`, approved, insisted on.
fn invoke(lab: &Lab, dir: &Path, addr: &str) -> String {
    let flag = format!("-invoke={addr}");
    lab.ok(
        "strata",
        dir,
        &["apply", "-no-color", "-auto-approve", &flag],
    )
}

fn ready(lab: &Lab, tag: &str, body: &str) -> std::path::PathBuf {
    let dir = lab.work_with(tag, &format!("{HEADER}\n{body}"));
    lab.ok("strata", &dir, &["init", "-no-color"]);
    dir
}

#[test]
fn an_action_is_planned_and_invoked_from_the_command_line() {
    let lab = Lab::new("actions-invoke");
    let dir = ready(&lab, "invoke", CONFIG);
    lab.ok("strata", &dir, &["apply", "-no-color", "-auto-approve"]);
    let plan = lab.ok(
        "strata",
        &dir,
        &["plan", "-no-color", "-invoke=action.stratatest_note.hello"],
    );
    // Terraform 1.14's layout: no resource changes, the count, and the
    // action with its configuration as evaluated over the state.
    assert!(
        plan.contains("Plan: 0 to add, 0 to change, 0 to destroy. Actions: 1 to invoke.\n"),
        "{plan}"
    );
    assert!(
        plan.contains("will invoke the following action(s):\n\n    # action.stratatest_note.hello\n    action \"stratatest_note\" \"hello\" {\n        config {\n            message = \"hello from alpha\"\n        }\n    }\n"),
        "{plan}"
    );
    assert!(
        !plan.contains("Refreshing state"),
        "nothing is read back: {plan}"
    );
    assert_eq!(log(&dir), "", "a plan invokes nothing");
    // The plan JSON's `action_invocations`, as Terraform 1.14 writes them.
    lab.ok(
        "strata",
        &dir,
        &[
            "plan",
            "-invoke=action.stratatest_note.hello",
            "-out=shown.plan",
        ],
    );
    let shown: serde_json::Value =
        serde_json::from_str(&lab.ok("strata", &dir, &["show", "-json", "shown.plan"])).unwrap();
    let invoked = &shown["action_invocations"][0];
    assert_eq!(
        invoked["address"], "action.stratatest_note.hello",
        "{shown}"
    );
    assert_eq!(
        invoked["config_values"]["message"], "hello from alpha",
        "{shown}"
    );
    assert_eq!(invoked["provider_name"], lab::SOURCE, "{shown}");
    assert!(invoked["invoke_action_trigger"].is_object(), "{shown}");
    // Saved, then applied: invoked once, its progress said in order.
    lab.ok(
        "strata",
        &dir,
        &[
            "plan",
            "-no-color",
            "-invoke=action.stratatest_note.hello",
            "-out=invoke.plan",
        ],
    );
    let applied = lab.ok("strata", &dir, &["apply", "-no-color", "invoke.plan"]);
    let said: Vec<&str> = applied
        .lines()
        .filter(|l| l.starts_with("Action"))
        .collect();
    assert_eq!(
        said,
        [
            "Action started: action.stratatest_note.hello (triggered by CLI)",
            "Action action.stratatest_note.hello (triggered by CLI): noting \"hello from alpha\"",
            "Action action.stratatest_note.hello (triggered by CLI): noted",
            "Action complete: action.stratatest_note.hello (triggered by CLI)",
        ]
    );
    assert!(
        applied.contains(
            "Apply complete! Resources: 0 added, 0 changed, 0 destroyed. Actions: 1 invoked."
        ),
        "{applied}"
    );
    assert_eq!(log(&dir), "hello from alpha\n");
    // And from apply directly.
    invoke(&lab, &dir, "action.stratatest_note.hello");
    assert_eq!(log(&dir), "hello from alpha\nhello from alpha\n");
    // Under -json, Terraform 1.14's messages: the action's start, its
    // progress, its completion, and the counts in the summaries.
    let json = lab.ok(
        "strata",
        &dir,
        &[
            "apply",
            "-json",
            "-auto-approve",
            "-invoke=action.stratatest_note.hello",
        ],
    );
    let (messages, kinds) = lab::json_messages(&json);
    assert!(!kinds.iter().any(|k| k == "refresh_start"), "{kinds:?}");
    let actions: Vec<&str> = kinds
        .iter()
        .map(String::as_str)
        .filter(|k| k.starts_with("action_"))
        .collect();
    assert_eq!(
        actions,
        [
            "action_start",
            "action_progress",
            "action_progress",
            "action_complete"
        ]
    );
    let progress = messages
        .iter()
        .find(|m| m["type"] == "action_progress")
        .unwrap();
    assert_eq!(
        progress["hook"]["action"]["action_type"], "stratatest_note",
        "{progress}"
    );
    assert_eq!(
        progress["hook"]["message"], "noting \"hello from alpha\"",
        "{progress}"
    );
    let summaries: Vec<&serde_json::Value> = messages
        .iter()
        .filter(|m| m["type"] == "change_summary")
        .collect();
    assert_eq!(
        summaries[0]["changes"]["action_invocation"], 1,
        "{summaries:?}"
    );
    assert_eq!(
        summaries[1]["@message"],
        "Apply complete! Resources: 0 added, 0 changed, 0 destroyed. Actions: 1 invoked."
    );
    // Invoking changed nothing: the next plan has no changes.
    let (code, out, err) = lab.run("strata", &dir, &["plan", "-no-color", "-detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_repeated_action_is_invoked_by_instance_or_whole() {
    let lab = Lab::new("actions-repeated");
    let body = "action \"stratatest_note\" \"each\" {\n  for_each = toset([\"x\", \"y\"])\n  config {\n    message = \"note ${each.key}\"\n  }\n}\n\naction \"stratatest_note\" \"counted\" {\n  count = 2\n  config {\n    message = \"count ${count.index}\"\n  }\n}\n";
    let dir = ready(&lab, "repeated", body);
    let out = invoke(&lab, &dir, "action.stratatest_note.each[\"y\"]");
    assert!(
        out.contains("Action complete: action.stratatest_note.each[\"y\"] (triggered by CLI)"),
        "{out}"
    );
    assert_eq!(log(&dir), "note y\n");
    // No key: every instance, in order.
    let out = invoke(&lab, &dir, "action.stratatest_note.counted");
    assert!(out.contains("Actions: 2 invoked."), "{out}");
    assert_eq!(log(&dir), "note y\ncount 0\ncount 1\n");
    let (code, _, err) = lab.run(
        "strata",
        &dir,
        &[
            "plan",
            "-no-color",
            "-invoke=action.stratatest_note.counted[5]",
        ],
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("makes no instance action.stratatest_note.counted[5]"),
        "{err}"
    );
}

#[test]
fn refused_and_failing_actions_are_errors() {
    let lab = Lab::new("actions-refused");
    let dir = ready(&lab, "refused", CONFIG);
    // The provider's own check, at the block.
    let (code, _, err) = lab.run(
        "strata",
        &dir,
        &["plan", "-no-color", "-invoke=action.stratatest_note.empty"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        errors_said(&err).iter().any(|(s, _)| s == "Empty message"),
        "{err}"
    );
    // A failure while invoking: what it said first, then the error.
    let (code, out, err) = lab.run(
        "strata",
        &dir,
        &[
            "apply",
            "-no-color",
            "-auto-approve",
            "-invoke=action.stratatest_note.failing",
        ],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("Action action.stratatest_note.failing (triggered by CLI): noting \"never\""),
        "{out}"
    );
    assert!(
        out.contains("Action failed: action.stratatest_note.failing (triggered by CLI) - "),
        "{out}"
    );
    assert!(err.contains("The note was told to fail."), "{err}");
    assert_eq!(log(&dir), "");
    // No such action; -invoke beside -target.
    let (code, _, err) = lab.run(
        "strata",
        &dir,
        &["plan", "-no-color", "-invoke=action.stratatest_note.nope"],
    );
    assert_eq!(code, 1);
    assert!(err.contains("Action not found"), "{err}");
    let (code, _, _) = lab.run(
        "strata",
        &dir,
        &[
            "plan",
            "-invoke=action.stratatest_note.hello",
            "-target=stratatest_object.a",
        ],
    );
    assert_eq!(code, 1);
}

#[test]
fn action_blocks_and_triggers_are_read_with_terraforms_errors() {
    let lab = Lab::new("actions-decode");
    let trigger = |inner: &str| {
        format!("resource \"stratatest_object\" \"a\" {{\n  name = \"a\"\n  lifecycle {{\n    action_trigger {{\n{inner}\n    }}\n  }}\n}}\n\naction \"stratatest_note\" \"n\" {{\n  config {{\n    message = \"m\"\n  }}\n}}\n")
    };
    let cases: Vec<(String, &str)> = vec![
        (trigger("      actions = [action.stratatest_note.n]"), "No events specified"),
        (trigger("      events = [after_create]"), "No actions specified"),
        (trigger("      events = [after_lunch]\n      actions = [action.stratatest_note.n]"), "Invalid \"event\" value after_lunch"),
        (trigger("      events = [after_create, after_create]\n      actions = [action.stratatest_note.n]"), "Duplicate \"after_create\" event"),
        (trigger("      events = [after_create]\n      actions = [action.stratatest_note.n]\n      on_failure = shrug"), "Invalid \"on_failure\" keyword"),
        (trigger("      events = [after_create]\n      actions = [action.stratatest_note.n]"), "Not supported yet"),
        ("action \"stratatest_note\" \"n\" {\n  count = 1\n  for_each = {}\n}\n".to_string(), "Invalid combination of \"count\" and \"for_each\""),
        ("action \"stratatest_note\" \"n\" {\n  config {\n  }\n  config {\n  }\n}\n".to_string(), "Duplicate config block"),
    ];
    for (n, (body, want)) in cases.iter().enumerate() {
        let dir = lab.work_with(&format!("case{n}"), &format!("{HEADER}\n{body}"));
        let (code, out, err) = lab.run("strata", &dir, &["validate", "-no-color"]);
        assert_eq!(code, 1, "case {n}: {out}{err}");
        let said = errors_said(&err);
        assert!(
            said.iter().any(|(s, _)| s == want),
            "case {n}: want {want:?}, got {said:?}\n{err}"
        );
        assert!(
            err.contains("main.tf:"),
            "case {n}: no source location\n{err}"
        );
    }
}

/// Progress is said as the provider sends it, not when the action ends: a
/// note spacing its events by 1.5 s has its first line out well before
/// its last.
#[test]
fn an_actions_progress_is_said_as_it_comes() {
    use std::io::BufRead;
    use std::time::Duration;
    let lab = Lab::new("actions-live");
    let dir = ready(
        &lab,
        "live",
        r#"
action "stratatest_note" "slow" {
  config {
    message  = "slowly"
    pause_ms = 1500
  }
}
"#,
    );
    let tmp = lab.tmp();
    let mut child = run::strata(&dir)
        .args([
            "apply",
            "-auto-approve",
            "-invoke=action.stratatest_note.slow",
        ])
        .env("TMPDIR", &tmp)
        .env("TF_CLI_CONFIG_FILE", &lab.cli)
        .env("STRATATEST_PROTOCOL", lab.protocol)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("strata starts");
    let out = child.stdout.take().expect("stdout is piped");
    let mut lines = std::io::BufReader::new(out).lines().map_while(Result::ok);
    let noting = arrival(&mut lines, ": noting \"slowly\"");
    let noted = arrival(&mut lines, ": noted");
    let rest: Vec<String> = lines.collect();
    assert!(child.wait().expect("strata ends").success(), "{rest:?}");
    assert!(
        noted.duration_since(noting) >= Duration::from_millis(1000),
        "the first progress line came {:?} before the last",
        noted.duration_since(noting)
    );
    assert_eq!(log(&dir), "slowly\n");
}

/// When a line ending in `wanted` came.
fn arrival(lines: &mut impl Iterator<Item = String>, wanted: &str) -> std::time::Instant {
    let line = lines.find(|l| l.ends_with(wanted));
    assert!(line.is_some(), "no line ends with {wanted:?}");
    std::time::Instant::now()
}
