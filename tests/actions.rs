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

/// Case `n`'s `args` fail with the error `want`, at a line of main.tf.
fn refused_at_its_line(lab: &Lab, dir: &Path, args: &[&str], (n, want): (usize, &str)) {
    let (code, out, err) = lab.run("strata", dir, args);
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

/// `apply -auto-approve` with `flag`, which fails: what it said.
fn failed_apply(lab: &Lab, dir: &Path, flag: &str) -> (String, String) {
    let args = ["apply", "-no-color", "-auto-approve", flag];
    let (code, out, err) = lab.run("strata", dir, &args);
    assert_eq!(code, 1, "{out}{err}");
    (out, err)
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
    let (out, err) = failed_apply(&lab, &dir, "-invoke=action.stratatest_note.failing");
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
        (trigger("      events = [after_create]\n      actions = [action.stratatest_note.nope]"), "action_trigger actions references non-existent action"),
        (trigger("      events = [after_create]\n      actions = [stratatest_object.a]"), "Invalid action argument"),
        // Terraform 1.16's rules for a condition.
        (trigger("      events = [before_create]\n      condition = self.name == \"a\"\n      actions = [action.stratatest_note.n]"), "Reference to self in before_create condition"),
        (trigger("      events = [after_destroy]\n      condition = true\n      actions = [action.stratatest_note.n]"), "Condition on destroy action"),
        (trigger("      events = [after_create]\n      condition = stratatest_object.a.name == \"a\"\n      actions = [action.stratatest_note.n]"), "Self-referential block"),
        ("action \"stratatest_note\" \"n\" {\n  count = 1\n  for_each = {}\n}\n".to_string(), "Invalid combination of \"count\" and \"for_each\""),
        ("action \"stratatest_note\" \"n\" {\n  config {\n  }\n  config {\n  }\n}\n".to_string(), "Duplicate config block"),
    ];
    for (n, (body, want)) in cases.iter().enumerate() {
        let dir = lab.work_with(&format!("case{n}"), &format!("{HEADER}\n{body}"));
        refused_at_its_line(&lab, &dir, &["validate", "-no-color"], (n, want));
    }
}

/// Terraform's warning (1.16) for an action whose configuration names the
/// resource triggering it, where `caller` would do: said by `validate`
/// and with a plan, at the reference, in a called module too; none for
/// `caller` or another resource.
#[test]
fn an_action_naming_its_triggering_resource_is_warned_about() {
    let lab = Lab::new("actions-caller");
    let body = |message: &str| {
        format!("resource \"stratatest_object\" \"a\" {{\n  name = \"a\"\n  lifecycle {{\n    action_trigger {{\n      events  = [after_create]\n      actions = [action.stratatest_note.n]\n    }}\n  }}\n}}\n\nresource \"stratatest_object\" \"b\" {{\n  name = \"b\"\n}}\n\naction \"stratatest_note\" \"n\" {{\n  config {{\n    message = {message}\n  }}\n}}\n")
    };
    let named = body("\"made ${stratatest_object.a.name}\"");
    let dir = lab.work_with("named", &format!("{HEADER}\n{named}"));
    std::fs::create_dir_all(dir.join("child")).unwrap();
    std::fs::write(dir.join("child/main.tf"), format!("{HEADER}\n{named}")).unwrap();
    std::fs::write(
        dir.join("calls.tf"),
        "module \"child\" {\n  source = \"./child\"\n}\n",
    )
    .unwrap();
    lab.ok("strata", &dir, &["init", "-no-color"]);
    let out = lab.ok("strata", &dir, &["validate", "-no-color"]);
    assert_eq!(
        out.matches("Warning: Reference to triggering resource")
            .count(),
        2,
        "{out}"
    );
    assert!(out.contains("via the \"caller\" symbol"), "{out}");
    // The message's line (the 17th of the body) in both files.
    let line = format!("{HEADER}\n").lines().count() + 17;
    assert!(out.contains(&format!("on main.tf line {line}")), "{out}");
    assert!(out.contains(&format!("child/main.tf line {line}")), "{out}");
    assert!(
        out.contains("The configuration is valid, but there were some validation warnings"),
        "{out}"
    );
    let (code, out, err) = lab.run("strata", &dir, &["plan", "-no-color"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        format!("{out}{err}").contains("Reference to triggering resource"),
        "{out}{err}"
    );
    for message in [
        "\"made ${caller.name}\"",
        "\"next to ${stratatest_object.b.name}\"",
    ] {
        let dir = ready(&lab, "quiet", &body(message));
        let out = lab.ok("strata", &dir, &["validate", "-no-color"]);
        assert!(!out.contains("Warning"), "{message}: {out}");
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

const TRIGGERED: &str = r#"
resource "stratatest_object" "a" {
  name = "alpha"
  lifecycle {
    action_trigger {
      events  = [before_create, before_update]
      actions = [action.stratatest_note.hello]
    }
    action_trigger {
      events  = [after_create, after_update]
      actions = [action.stratatest_note.id, action.stratatest_note.hello]
    }
    action_trigger {
      events    = [after_update]
      condition = self.name == "never"
      actions   = [action.stratatest_note.hello]
    }
  }
}

action "stratatest_note" "hello" {
  config {
    message = "hello ${caller.name}"
  }
}

action "stratatest_note" "id" {
  config {
    message = "id ${caller.id}"
  }
}
"#;

/// The lines an apply said of actions, and where its create or update
/// of `stratatest_object.a` was said complete among them.
fn action_lines(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with("Action") || l.starts_with("stratatest_object.a: "))
        .collect()
}

#[test]
fn triggered_actions_are_planned_in_their_resources_diff_and_invoked_around_its_change() {
    let lab = Lab::new("actions-triggered");
    let dir = ready(&lab, "triggered", TRIGGERED);
    let plan = lab.ok("strata", &dir, &["plan", "-no-color", "-out=first.plan"]);
    // Terraform 1.14's rendering (jsonformat/plan.go): inside the
    // resource's diff, before then after, each list in its blocks' order;
    // what the new object decides is known after apply.
    let want = "    }\n\n    # Actions to be invoked before this change in order:\n    # action.stratatest_note.hello\n    action \"stratatest_note\" \"hello\" {\n        config {\n            message = \"hello alpha\"\n        }\n    }\n\n    # Actions to be invoked after this change in order:\n    # action.stratatest_note.id\n    action \"stratatest_note\" \"id\" {\n        config {\n            message = (known after apply)\n        }\n    }\n    # action.stratatest_note.hello\n    action \"stratatest_note\" \"hello\" {\n        config {\n            message = \"hello alpha\"\n        }\n    }\n\n\nPlan: 1 to add, 0 to change, 0 to destroy. Actions: 3 to invoke.\n";
    assert!(plan.contains(want), "{plan}");
    assert!(
        !plan.contains("will invoke the following action(s)"),
        "{plan}"
    );
    assert_eq!(log(&dir), "", "a plan invokes nothing");
    // The plan JSON's lifecycle_action_trigger, as Terraform writes it.
    let shown: serde_json::Value =
        serde_json::from_str(&lab.ok("strata", &dir, &["show", "-json", "first.plan"])).unwrap();
    let all = shown["action_invocations"].as_array().unwrap();
    assert_eq!(all.len(), 3, "{shown}");
    let id = &all[1];
    assert_eq!(id["address"], "action.stratatest_note.id", "{shown}");
    assert_eq!(id["config_unknown"]["message"], true, "{shown}");
    assert_eq!(
        id["lifecycle_action_trigger"],
        serde_json::json!({
            "triggering_resource_address": "stratatest_object.a",
            "action_trigger_event": "AfterCreate",
            "action_trigger_block_index": 1,
            "actions_list_index": 0,
            "on_failure": "ActionOnFailureHalt",
        }),
        "{shown}"
    );
    assert!(id.get("invoke_action_trigger").is_none(), "{shown}");
    // The saved plan applied: the before action, the create, the after
    // actions with the new object's id, then the create said complete.
    let applied = lab.ok("strata", &dir, &["apply", "-no-color", "first.plan"]);
    let said = action_lines(&applied);
    assert_eq!(said[0], "stratatest_object.a: Creating...", "{applied}");
    assert_eq!(
        said[1],
        "Action started: action.stratatest_note.hello (triggered by stratatest_object.a)"
    );
    assert_eq!(
        said.last().copied(),
        Some("stratatest_object.a: Creation complete after 0s [id=alpha-1]"),
        "{applied}"
    );
    assert!(
        applied.contains(
            "Apply complete! Resources: 1 added, 0 changed, 0 destroyed. Actions: 3 invoked."
        ),
        "{applied}"
    );
    assert_eq!(log(&dir), "hello alpha\nid alpha-1\nhello alpha\n");
    // Nothing to change: nothing invoked.
    let (code, out, err) = lab.run("strata", &dir, &["plan", "-no-color", "-detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");
    // An update fires the update events; the third block's condition is
    // false, so its action is not planned.
    let body = format!(
        "{HEADER}\n{}",
        TRIGGERED.replace("name = \"alpha\"", "name = \"beta\"")
    );
    std::fs::write(dir.join("main.tf"), body).unwrap();
    let plan = lab.ok("strata", &dir, &["plan", "-no-color"]);
    assert!(plan.contains("Actions: 3 to invoke."), "{plan}");
    assert!(
        plan.contains("message = \"id alpha-1\""),
        "an update's object is known: {plan}"
    );
    let applied = lab.ok("strata", &dir, &["apply", "-no-color", "-auto-approve"]);
    assert!(applied.contains("Actions: 3 invoked."), "{applied}");
    assert_eq!(
        log(&dir),
        "hello alpha\nid alpha-1\nhello alpha\nhello beta\nid alpha-1\nhello beta\n"
    );
}

#[test]
fn a_failed_triggered_action_halts_taints_or_warns_as_its_trigger_says() {
    let lab = Lab::new("actions-failing");
    let object = |name: &str, events: &str, on_failure: &str| {
        format!("resource \"stratatest_object\" \"{name}\" {{\n  name = \"{name}\"\n  lifecycle {{\n    action_trigger {{\n      events     = [{events}]\n      actions    = [action.stratatest_note.failing]\n      on_failure = {on_failure}\n    }}\n  }}\n}}\n")
    };
    let body = [
        object("halted", "after_create", "halt"),
        object("tainted", "after_create", "taint"),
        object("going", "after_create", "continue"),
        object("stopped", "before_create", "halt"),
        "action \"stratatest_note\" \"failing\" {\n  config {\n    message = \"no\"\n    fail    = true\n  }\n}\n".to_string(),
    ]
    .concat();
    let dir = ready(&lab, "failing", &body);
    let (code, out, err) = lab.run(
        "strata",
        &dir,
        &["apply", "-no-color", "-auto-approve", "-parallelism=1"],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("Action failed: action.stratatest_note.failing (triggered by stratatest_object.going) - "),
        "{out}"
    );
    assert!(err.contains("The note was told to fail."), "{err}");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("terraform.tfstate")).unwrap())
            .unwrap();
    let status = |name: &str| {
        let r = state["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name);
        r.map(|r| {
            r["instances"][0]["status"]
                .as_str()
                .unwrap_or("ready")
                .to_string()
        })
    };
    // halt: the object made stands, the apply fails; taint: it is
    // tainted, to be made again; continue: a warning; a before event's
    // halt: nothing made.
    assert_eq!(status("halted").as_deref(), Some("ready"), "{state}");
    assert_eq!(status("tainted").as_deref(), Some("tainted"), "{state}");
    assert_eq!(status("going").as_deref(), Some("ready"), "{state}");
    assert_eq!(status("stopped"), None, "{state}");
    assert!(
        out.contains("Warning: Invoking action.stratatest_note.failing (triggered by stratatest_object.going) failed"),
        "the continued failure is a warning: {out}"
    );
    assert!(
        !err.contains("(triggered by stratatest_object.going) failed"),
        "{err}"
    );
    let plan = lab.ok("strata", &dir, &["plan", "-no-color"]);
    assert!(
        plan.contains("# stratatest_object.tainted is tainted, so must be replaced"),
        "{plan}"
    );
    assert!(
        plan.contains("# stratatest_object.stopped will be created"),
        "{plan}"
    );
    assert!(!plan.contains("stratatest_object.halted will"), "{plan}");
}

#[test]
fn destroy_events_fire_around_deletes_and_never_block_a_destroy() {
    let lab = Lab::new("actions-destroy");
    let body = r#"
resource "stratatest_object" "b" {
  name = "bee"
  lifecycle {
    action_trigger {
      events  = [before_destroy, after_destroy]
      actions = [action.stratatest_note.bye, action.stratatest_note.failing]
    }
  }
}

action "stratatest_note" "bye" {
  config {
    message = "bye ${caller.name}"
  }
}

action "stratatest_note" "failing" {
  config {
    message = "no"
    fail    = true
  }
}
"#;
    let dir = ready(&lab, "destroy", body);
    lab.ok("strata", &dir, &["apply", "-no-color", "-auto-approve"]);
    assert_eq!(log(&dir), "", "a create fires no destroy event");
    // A replacement: the failing before_destroy action halts it, and the
    // old object stays.
    let (out, err) = failed_apply(&lab, &dir, "-replace=stratatest_object.b");
    assert!(
        out.contains("# Actions to be invoked before this change in order:"),
        "{out}"
    );
    assert_eq!(log(&dir), "bye bee\n");
    assert!(err.contains("The note was told to fail."), "{err}");
    assert!(!out.contains("Destruction complete"), "{out}");
    // A destroy run is never blocked: the failures are warnings, and the
    // caller is the object as it was.
    let out = lab.ok("strata", &dir, &["destroy", "-no-color", "-auto-approve"]);
    assert!(
        out.contains("Destroy complete! Resources: 1 destroyed. Actions: 4 invoked, 2 failed."),
        "{out}"
    );
    assert_eq!(log(&dir), "bye bee\nbye bee\nbye bee\n");
}

#[test]
fn triggered_actions_are_said_in_terraforms_json_and_refused_where_it_refuses_them() {
    let lab = Lab::new("actions-triggered-json");
    let dir = ready(&lab, "json", TRIGGERED);
    let json = lab.ok("strata", &dir, &["apply", "-json", "-auto-approve"]);
    let (messages, _) = lab::json_messages(&json);
    let start = messages
        .iter()
        .find(|m| m["type"] == "action_start")
        .unwrap();
    assert_eq!(
        start["@message"],
        "stratatest_object.a.trigger[0]: Action started: action.stratatest_note.hello"
    );
    assert_eq!(
        start["hook"]["lifecycle"]["trigger_event"], "BeforeCreate",
        "{start}"
    );
    assert_eq!(
        start["hook"]["lifecycle"]["resource"]["addr"], "stratatest_object.a",
        "{start}"
    );
    let planned: Vec<&serde_json::Value> = messages
        .iter()
        .filter(|m| m["type"] == "planned_action_invocation")
        .collect();
    assert_eq!(planned.len(), 3, "{json}");
    assert_eq!(
        planned[0]["@message"],
        "planned action invocation: action.stratatest_note.hello"
    );
    let lifecycle = &planned[0]["invocation"]["lifecycle_trigger"];
    assert_eq!(lifecycle["triggering_event"], "BeforeCreate", "{lifecycle}");
    assert_eq!(
        lifecycle["triggering_resource"]["addr"], "stratatest_object.a",
        "{lifecycle}"
    );
    let summary = messages
        .iter()
        .filter(|m| m["type"] == "change_summary")
        .next_back()
        .unwrap();
    assert_eq!(summary["changes"]["action_invocation"], 3, "{summary}");
    // Terraform's errors: an action this module has not, a destroy
    // event's configuration unknown while planning, a before event's
    // unknown when applying.
    let cases = [
        (
            "action.stratatest_note.nope",
            "after_create",
            "action_trigger actions references non-existent action",
        ),
        (
            "action.stratatest_note.id",
            "before_destroy",
            "Unknown action config",
        ),
        (
            "action.stratatest_note.id",
            "before_create",
            "Action configuration unknown during apply",
        ),
    ];
    for (n, (action, event, want)) in cases.iter().enumerate() {
        let body = format!("resource \"stratatest_object\" \"c\" {{\n  name = \"c\"\n  lifecycle {{\n    action_trigger {{\n      events  = [{event}]\n      actions = [{action}]\n    }}\n  }}\n}}\n\nresource \"stratatest_object\" \"d\" {{\n  name = \"d\"\n}}\n\naction \"stratatest_note\" \"id\" {{\n  config {{\n    message = \"id ${{caller.id}} ${{stratatest_object.d.id}}\"\n  }}\n}}\n");
        let dir = ready(&lab, &format!("case{n}"), &body);
        if *event == "before_destroy" {
            // Made first, so its destroy is planned by a -replace.
            let plain = body.replace("before_destroy", "after_update");
            std::fs::write(dir.join("main.tf"), format!("{HEADER}\n{plain}")).unwrap();
            lab.ok("strata", &dir, &["apply", "-no-color", "-auto-approve"]);
            std::fs::write(dir.join("main.tf"), format!("{HEADER}\n{body}")).unwrap();
            lab.ok(
                "strata",
                &dir,
                &[
                    "apply",
                    "-no-color",
                    "-auto-approve",
                    "-target=stratatest_object.d",
                    "-replace=stratatest_object.d",
                ],
            );
        }
        let args: &[&str] = match *event {
            "before_destroy" => &[
                "apply",
                "-no-color",
                "-auto-approve",
                "-replace=stratatest_object.c",
                "-replace=stratatest_object.d",
            ],
            _ => &["apply", "-no-color", "-auto-approve"],
        };
        refused_at_its_line(&lab, &dir, args, (n, want));
    }
}

/// Under `strata test` with the provider mocked, a resource's triggered
/// actions are planned against the real schemas and invoked by the mock,
/// which does nothing (Terraform's mock answers `PlanAction` and
/// `InvokeAction` so); a real provider's are invoked as in an apply.
#[test]
fn triggered_actions_run_under_strata_test_mocked_or_real() {
    let lab = Lab::new("actions-test");
    let dir = ready(&lab, "test", TRIGGERED);
    let tests = |mocked: bool| {
        let mock = match mocked {
            true => "mock_provider \"stratatest\" {\n  mock_resource \"stratatest_object\" {\n    defaults = {\n      id = \"mocked\"\n    }\n  }\n}\n\n",
            false => "",
        };
        format!("{mock}run \"made\" {{\n  command = apply\n\n  assert {{\n    condition     = stratatest_object.a.name == \"alpha\"\n    error_message = \"the object is not made\"\n  }}\n}}\n")
    };
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("tests/a.tftest.hcl"), tests(true)).unwrap();
    let out = lab.ok("strata", &dir, &["test", "-no-color"]);
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    assert_eq!(log(&dir), "", "a mock invokes nothing");
    std::fs::write(dir.join("tests/a.tftest.hcl"), tests(false)).unwrap();
    let out = lab.ok("strata", &dir, &["test", "-no-color"]);
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    assert_eq!(log(&dir), "hello alpha\nid alpha-1\nhello alpha\n");
}
