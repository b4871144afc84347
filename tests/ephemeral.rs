//! Ephemeral resources (Terraform 1.10's `ephemeral` blocks, issue 45)
//! through a real provider plugin, beside Terraform 1.11 running the same
//! one: the test provider's `stratatest_token`, which writes every open,
//! renewal and close it is asked for to `tokens.log` in its store.
//! Both tools must open and close the same tokens in a plan and in an
//! apply, say the same lines, keep no token in a plan file or a state,
//! refuse the same misuses at the same lines, and hand a token to a
//! write-only argument and a provisioner (whose output is then hidden).

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;
use oracle::require_terraform;

#[path = "common/lab.rs"]
mod lab;
use lab::{errors_said, Lab, HEADER};

use serde_json::Value as Json;
use std::path::Path;

const TOOLS: [&str; 2] = ["strata", "terraform"];

/// The lines a run said about ephemeral resources, sorted (each tool
/// opens the instances of one resource in its own order).
fn ephemeral_lines(out: &str) -> Vec<String> {
    let mut lines: Vec<String> = out
        .lines()
        .filter(|l| l.starts_with("ephemeral."))
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

/// What the provider was asked, sorted; the log emptied for the next step.
fn calls(dir: &Path) -> Vec<String> {
    let log = dir.join("store/tokens.log");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

/// The object the provider keeps under `name`.
fn stored(dir: &Path, name: &str) -> Json {
    let found = std::fs::read_dir(dir.join("store"))
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .filter_map(|text| serde_json::from_str::<Json>(&text).ok())
        .find(|o| o["name"] == name);
    found.unwrap_or_else(|| panic!("the provider keeps no object named {name}"))
}

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn config(body: &str) -> String {
    format!("{HEADER}\n{body}")
}

/// A token for a write-only argument and a provisioner, and two more
/// that nothing uses (Terraform opens those too).
const USED: &str = r#"
variable "audience" {
  default = "db"
}

ephemeral "stratatest_token" "db" {
  audience = var.audience
}

ephemeral "stratatest_token" "spare" {
  count    = 2
  audience = "spare-${count.index}"
}

resource "stratatest_object" "a" {
  name     = "a"
  token_wo = ephemeral.stratatest_token.db.value

  provisioner "local-exec" {
    command     = "echo token=$T"
    environment = { T = ephemeral.stratatest_token.db.value }
  }
}
"#;

#[test]
fn ephemeral_resources_are_opened_and_closed_as_terraform_does() {
    if !require_terraform("ephemeral_resources_are_opened_and_closed_as_terraform_does") {
        return;
    }
    let lab = Lab::new("ephemeral");
    let opened_sorted = lines(&[
        "close db",
        "close spare-0",
        "close spare-1",
        "open db",
        "open spare-0",
        "open spare-1",
    ]);
    let mut said = Vec::new();
    for tool in TOOLS {
        let dir = lab.work_with(tool, &config(USED));
        lab.ok(tool, &dir, &["init", "-no-color"]);
        let plan = lab.ok(tool, &dir, &["plan", "-no-color", "-out=saved.plan"]);
        assert_eq!(calls(&dir), opened_sorted, "{tool}'s plan:\n{plan}");
        let saved = std::fs::read(dir.join("saved.plan")).unwrap();
        assert!(
            !String::from_utf8_lossy(&saved).contains("tok-"),
            "{tool}'s plan file holds a token"
        );
        let apply = lab.ok(tool, &dir, &["apply", "-no-color", "saved.plan"]);
        assert_eq!(calls(&dir), opened_sorted, "{tool}'s apply:\n{apply}");
        // The provisioner said the token: its output is hidden.
        assert!(!apply.contains("token=tok-db"), "{tool}:\n{apply}");
        assert!(
            apply.contains("(output suppressed due to ephemeral value in config)"),
            "{tool}:\n{apply}"
        );
        let state = std::fs::read_to_string(dir.join("terraform.tfstate")).unwrap();
        assert!(!state.contains("tok-"), "{tool}'s state holds a token");
        let state: Json = serde_json::from_str(&state).unwrap();
        let resources = state["resources"].as_array().unwrap();
        assert_eq!(resources.len(), 1, "{tool} kept only the object");
        assert_eq!(
            resources[0]["instances"][0]["dependencies"],
            serde_json::json!(["ephemeral.stratatest_token.db"]),
            "{tool}"
        );
        // The token reached the provider's write-only argument.
        let object = stored(&dir, "a");
        assert_eq!(object["token_wo"], "tok-db", "{tool}: {object}");
        let again = lab.run(tool, &dir, &["plan", "-no-color", "-detailed-exitcode"]);
        assert_eq!(again.0, 0, "{tool}'s second plan:\n{}{}", again.1, again.2);
        said.push((ephemeral_lines(&plan), ephemeral_lines(&apply), object));
    }
    assert_eq!(said[0].0, said[1].0, "the plans' lines");
    assert_eq!(said[0].1, said[1].1, "the applies' lines");
    assert_eq!(said[0].2, said[1].2, "what the provider keeps");
}

/// A token whose audience is known only once an object is made: the plan
/// defers it ("Configuration unknown, deferring...") and opens nothing;
/// the apply opens it after the object and hands it on.
const LATE: &str = r#"
resource "stratatest_object" "src" {
  name = "src"
}

ephemeral "stratatest_token" "late" {
  audience = stratatest_object.src.id
}

resource "stratatest_object" "b" {
  name     = "b"
  token_wo = ephemeral.stratatest_token.late.value
}
"#;

#[test]
fn a_token_of_unknown_configuration_is_opened_by_the_apply() {
    if !require_terraform("a_token_of_unknown_configuration_is_opened_by_the_apply") {
        return;
    }
    let lab = Lab::new("ephemeral-late");
    let mut said = Vec::new();
    for tool in TOOLS {
        let dir = lab.work_with(tool, &config(LATE));
        lab.ok(tool, &dir, &["init", "-no-color"]);
        let plan = lab.ok(tool, &dir, &["plan", "-no-color"]);
        assert_eq!(calls(&dir), Vec::<String>::new(), "{tool}'s plan:\n{plan}");
        let apply = lab.ok(tool, &dir, &["apply", "-no-color", "-auto-approve"]);
        let id = stored(&dir, "src")["id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert_eq!(
            calls(&dir),
            lines(&[&format!("close {id}"), &format!("open {id}")]),
            "{tool}'s apply:\n{apply}"
        );
        assert_eq!(stored(&dir, "b")["token_wo"], format!("tok-{id}"), "{tool}");
        said.push((ephemeral_lines(&plan), ephemeral_lines(&apply)));
    }
    assert_eq!(
        said[0].0,
        lines(&["ephemeral.stratatest_token.late: Configuration unknown, deferring..."])
    );
    assert_eq!(said[0], said[1]);
}

/// What each tool says when it plans: its exit code and its errors'
/// summaries with the line each points at.
fn refusals(lab: &Lab, tool: &str, dir: &Path) -> (i32, Vec<(String, String)>) {
    let (code, out, err) = lab.run(tool, dir, &["plan", "-no-color"]);
    (code, errors_said(&format!("{out}{err}")))
}

/// A token where only what lasts may go (an ordinary argument, an output
/// not declared ephemeral), an audience the provider's validation
/// refuses, and one its open refuses: the same errors, at the same lines,
/// before anything is made.
#[test]
fn misused_or_refused_tokens_are_terraforms_errors() {
    if !require_terraform("misused_or_refused_tokens_are_terraforms_errors") {
        return;
    }
    let cases = [
        r#"
ephemeral "stratatest_token" "t" {
  audience = "db"
}

resource "stratatest_object" "bad" {
  name = ephemeral.stratatest_token.t.value
}

output "leak" {
  value = ephemeral.stratatest_token.t.value
}
"#,
        r#"
ephemeral "stratatest_token" "t" {
  audience = ""
}
"#,
        r#"
ephemeral "stratatest_token" "t" {
  audience = "refused"
}
"#,
    ];
    let lab = Lab::new("ephemeral-refused");
    for (i, case) in cases.iter().enumerate() {
        let mut seen = Vec::new();
        for tool in TOOLS {
            let dir = lab.work_with(&format!("{tool}-{i}"), &config(case));
            lab.ok(tool, &dir, &["init", "-no-color"]);
            let (code, errors) = refusals(&lab, tool, &dir);
            assert_eq!(code, 1, "{tool}, case {i}: {errors:?}");
            assert!(!errors.is_empty(), "{tool}, case {i}: no error found");
            assert!(stored_names(&dir).is_empty(), "{tool} made something");
            seen.push(errors);
        }
        assert_eq!(seen[0], seen[1], "case {i}");
    }
}

/// The names of the objects the provider keeps.
fn stored_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join("store"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The machine-readable UI's ephemeral messages: their types, actions and
/// resources, sorted.
fn ephemeral_messages(out: &str) -> Vec<String> {
    let mut found: Vec<String> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Json>(l).ok())
        .filter(|m| {
            m["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("ephemeral_op"))
        })
        .map(|m| {
            let hook = &m["hook"];
            format!(
                "{} {} {} {} {}",
                m["type"], hook["action"], hook["resource"], hook["elapsed_seconds"], m["@message"]
            )
        })
        .collect();
    found.sort();
    found
}

#[test]
fn the_json_ui_tells_of_tokens_as_terraforms_does() {
    if !require_terraform("the_json_ui_tells_of_tokens_as_terraforms_does") {
        return;
    }
    let lab = Lab::new("ephemeral-json");
    let mut said = Vec::new();
    for tool in TOOLS {
        let dir = lab.work_with(tool, &config(USED));
        lab.ok(tool, &dir, &["init", "-no-color"]);
        let plan = lab.ok(tool, &dir, &["plan", "-json"]);
        let apply = lab.ok(tool, &dir, &["apply", "-json", "-auto-approve"]);
        said.push((ephemeral_messages(&plan), ephemeral_messages(&apply)));
    }
    assert_eq!(said[0].0.len(), 12, "{:#?}", said[0].0);
    assert_eq!(said[0], said[1]);
}
