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
        .map(|l| match l.split_once(" after ") {
            // How long a call took is the machine's, not the tool's.
            Some((said, _)) => format!("{said} after …"),
            None => l.to_string(),
        })
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

/// A provider configured from a token (as a cluster's provider is from a
/// token the cloud gives): the configuration waits for the token, the
/// objects go where it says, and a destroy opens the token again to
/// reach them.
const CONFIGURED: &str = r#"
ephemeral "stratatest_token" "where" {
  audience = "elsewhere"
}

provider "stratatest" {
  alias = "other"
  store = "./store-${ephemeral.stratatest_token.where.audience}"
}

resource "stratatest_object" "there" {
  provider = stratatest.other
  name     = "there"
}
"#;

#[test]
fn a_provider_configured_from_a_token_is_terraforms() {
    if !require_terraform("a_provider_configured_from_a_token_is_terraforms") {
        return;
    }
    let lab = Lab::new("ephemeral-provider");
    // Opened by the apply's plan, then by the apply itself.
    let both = lines(&[
        "close elsewhere",
        "close elsewhere",
        "open elsewhere",
        "open elsewhere",
    ]);
    for tool in TOOLS {
        let dir = lab.work_with(tool, &config(CONFIGURED));
        std::fs::create_dir_all(dir.join("store-elsewhere")).unwrap();
        lab.ok(tool, &dir, &["init", "-no-color"]);
        let apply = lab.ok(tool, &dir, &["apply", "-no-color", "-auto-approve"]);
        assert_eq!(calls(&dir), both, "{tool}'s apply:\n{apply}");
        let there = std::fs::read_dir(dir.join("store-elsewhere"))
            .unwrap()
            .count();
        assert_eq!(there, 1, "{tool} put the object where the token said");
        let again = lab.run(tool, &dir, &["plan", "-no-color", "-detailed-exitcode"]);
        assert_eq!(again.0, 0, "{tool}'s second plan:\n{}{}", again.1, again.2);
        calls(&dir);
        let destroy = lab.ok(tool, &dir, &["destroy", "-no-color", "-auto-approve"]);
        assert!(destroy.contains("1 destroyed"), "{tool}:\n{destroy}");
        assert!(
            calls(&dir).contains(&"open elsewhere".to_string()),
            "{tool}"
        );
        let left = std::fs::read_dir(dir.join("store-elsewhere"))
            .unwrap()
            .count();
        assert_eq!(left, 0, "{tool} deleted the object where it was");
    }
}

/// A token the provider asks to be renewed every 300 ms, held through a
/// provisioner that takes two seconds: renewed while held, in both tools.
#[test]
fn a_token_held_past_its_time_is_renewed() {
    if !require_terraform("a_token_held_past_its_time_is_renewed") {
        return;
    }
    let lab = Lab::new("ephemeral-renew");
    let slow = r#"
ephemeral "stratatest_token" "db" {
  audience = "db"
}

resource "stratatest_object" "slow" {
  name     = "slow"
  token_wo = ephemeral.stratatest_token.db.value

  provisioner "local-exec" {
    command = "sleep 2"
  }
}
"#;
    let every = std::ffi::OsStr::new("300");
    for tool in TOOLS {
        let dir = lab.work_with(tool, &config(slow));
        lab.ok(tool, &dir, &["init", "-no-color"]);
        let args = ["apply", "-no-color", "-auto-approve"];
        let (code, out, err) =
            lab.run_with(tool, &dir, &args, &[("STRATATEST_TOKEN_RENEW_MS", every)]);
        assert_eq!(code, 0, "{tool}:\n{out}{err}");
        let asked = calls(&dir);
        let renewed = asked.iter().filter(|c| *c == "renew db").count();
        assert!(renewed >= 2, "{tool} renewed {renewed} times: {asked:?}");
        assert_eq!(
            asked.iter().filter(|c| *c == "close db").count(),
            2,
            "{tool}"
        );
    }
}

/// `terraform test` over a configuration with a token, the provider real:
/// a run that applies opens and closes it as an apply does, and an
/// assertion that reads a token is Terraform's verdict.
#[test]
fn strata_test_runs_a_configuration_with_tokens_as_terraform_does() {
    if !require_terraform("strata_test_runs_a_configuration_with_tokens_as_terraform_does") {
        return;
    }
    let lab = Lab::new("ephemeral-test");
    let config_text = config(
        r#"
ephemeral "stratatest_token" "db" {
  audience = "db"
}

resource "stratatest_object" "a" {
  name     = "a"
  token_wo = ephemeral.stratatest_token.db.value
}
"#,
    );
    let tests = r#"
run "made" {
  assert {
    condition     = stratatest_object.a.name == "a"
    error_message = "wrong name"
  }
}

run "reading_the_token" {
  command = plan

  assert {
    condition     = ephemeral.stratatest_token.db.value == "tok-db"
    error_message = "wrong token"
  }
}
"#;
    let mut said = Vec::new();
    for tool in TOOLS {
        let dir = lab.work_with(tool, &config_text);
        std::fs::create_dir_all(dir.join("tests")).unwrap();
        std::fs::write(dir.join("tests/token.tftest.hcl"), tests).unwrap();
        lab.ok(tool, &dir, &["init", "-no-color"]);
        let (code, out, err) = lab.run(tool, &dir, &["test", "-no-color"]);
        let all = format!("{out}{err}");
        assert!(
            all.contains("Failure! 1 passed, 1 failed."),
            "{tool}:\n{all}"
        );
        let first = all.lines().find_map(|l| {
            let l = l.trim();
            l.strip_prefix("Error: ")
                .or_else(|| l.strip_prefix("× "))
                .map(|s| s.split(" (at ").next().unwrap_or(s).to_string())
        });
        said.push((code, calls(&dir), first));
    }
    assert_eq!(
        said[0].2.as_deref(),
        Some("Ephemeral resources cannot be asserted")
    );
    assert_eq!(said[0], said[1]);
}

/// A mocked provider's tokens (Terraform's `mock_ephemeral` and
/// `override_ephemeral`, hashicorp/terraform#38928, after 1.11, so strata
/// alone): opened from the mock's defaults or a run's override, never from
/// the provider — its log stays empty — and handed on as a real one is.
#[test]
fn a_mocked_providers_tokens_come_from_the_mock() {
    let lab = Lab::new("ephemeral-mock");
    let config_text = config(
        r#"
ephemeral "stratatest_token" "db" {
  audience = "db"
}

provider "stratatest" {
  alias = "other"
  store = "./store-${ephemeral.stratatest_token.db.value}"
}

resource "stratatest_object" "a" {
  provider = stratatest.other
  name     = "a"
}

# Where a test can see what a token was: each run's is written down.
variable "round" {
  default = 1
}

resource "terraform_data" "seen" {
  triggers_replace = var.round

  provisioner "local-exec" {
    command     = "echo $T >> ${path.module}/seen.txt"
    environment = { T = ephemeral.stratatest_token.db.value }
  }
}
"#,
    );
    let tests = r#"
mock_provider "stratatest" {
  mock_ephemeral "stratatest_token" {
    defaults = {
      value = "mocked"
    }
  }
}

run "from_the_defaults" {
  assert {
    condition     = stratatest_object.a.name == "a"
    error_message = "wrong name"
  }
}

run "from_an_override" {
  variables {
    round = 2
  }

  override_ephemeral {
    target = ephemeral.stratatest_token.db
    values = {
      value = "overridden"
    }
  }

  assert {
    condition     = stratatest_object.a.name == "a"
    error_message = "wrong name"
  }
}
"#;
    let dir = lab.work_with("strata", &config_text);
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("tests/token.tftest.hcl"), tests).unwrap();
    lab.ok("strata", &dir, &["init", "-no-color"]);
    let (code, out, err) = lab.run("strata", &dir, &["test", "-no-color", "-verbose"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Success! 2 passed, 0 failed."), "{out}");
    assert_eq!(calls(&dir), Vec::<String>::new(), "the provider was asked");
    let seen = std::fs::read_to_string(dir.join("seen.txt")).unwrap_or_default();
    assert_eq!(seen, "mocked\noverridden\n");
}

/// An ephemeral resource is closed once what uses it has finished, not
/// at the end of the run, as Terraform closes it: the token `a` uses is
/// closed while an object that has nothing to do with it is still being
/// made (its provisioner sleeps for two seconds).
#[test]
fn a_token_is_closed_once_what_uses_it_is_done() {
    if !require_terraform("a_token_is_closed_once_what_uses_it_is_done") {
        return;
    }
    let body = r#"
ephemeral "stratatest_token" "db" {
  audience = "db"
}

resource "stratatest_object" "a" {
  name     = "a"
  token_wo = ephemeral.stratatest_token.db.value
}

resource "stratatest_object" "slow" {
  name = "slow"

  provisioner "local-exec" {
    command = "sleep 2"
  }
}
"#;
    let lab = Lab::new("ephemeral-close");
    for tool in TOOLS {
        let dir = lab.work_with(tool, &config(body));
        lab.ok(tool, &dir, &["init", "-no-color"]);
        let out = lab.ok(tool, &dir, &["apply", "-no-color", "-auto-approve"]);
        // The last of each line: the apply's, after its plan's.
        let at = |wanted: &str| {
            let said: Vec<&str> = out.lines().collect();
            said.iter()
                .rposition(|l| l.starts_with(wanted))
                .unwrap_or_else(|| panic!("{tool} never said {wanted:?}:\n{out}"))
        };
        assert!(
            at("ephemeral.stratatest_token.db: Closing...")
                < at("stratatest_object.slow: Creation complete"),
            "{tool} closed the token only at the end:\n{out}"
        );
        // The plan's open and close, then the apply's.
        let both = lines(&["close db", "close db", "open db", "open db"]);
        assert_eq!(calls(&dir), both, "{tool}");
    }
}
