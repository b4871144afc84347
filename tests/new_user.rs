//! What a new user broke (issue 20), one test per class of defect, through
//! the binary: no state planned away for want of configuration, JSON
//! configuration errors at their line, conditions judged at plan and at
//! apply, states that say two things of one object refused untouched,
//! a serial that cannot grow refused.

#[path = "common/run.rs"]
mod run;

use std::path::{Path, PathBuf};
use std::process::Stdio;

#[path = "common/oracle.rs"]
mod oracle;
use oracle::{require_terraform, terraform};

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-new-user-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write");
}

struct Run {
    code: i32,
    out: String,
    err: String,
}

impl Run {
    fn all(&self) -> String {
        format!("{}{}", self.out, self.err)
    }
}

fn strata(dir: &Path, args: &[&str]) -> Run {
    strata_env(dir, args, &[])
}

fn strata_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let out = run::strata(dir)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("spawn strata");
    Run {
        code: out.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn state(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join("terraform.tfstate")).expect("state file")
}

const TWO: &str = r#"
resource "terraform_data" "a" {
  count = 2
  input = count.index
}
"#;

#[test]
fn no_configuration_plans_nothing_away() {
    let d = scratch("empty");
    write(&d, "main.tf", TWO);
    let r = strata(&d, &["apply", "--auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all());
    std::fs::remove_file(d.join("main.tf")).expect("rm");
    write(&d, "README.md", "# infrastructure\n");
    let before = state(&d);
    for args in [
        &["plan"][..],
        &["plan", "--detailed-exitcode"],
        &["apply", "--auto-approve"],
        &["drift"],
    ] {
        let r = strata(&d, args);
        assert_eq!(r.code, 1, "{args:?} must fail: {}", r.all());
        assert!(
            r.err.contains("No configuration files"),
            "{args:?}: {}",
            r.err
        );
        assert!(!r.out.contains("destroy"), "{args:?} planned: {}", r.out);
        assert_eq!(state(&d), before, "{args:?} changed the state");
    }
    // A plan of everything away is asked for by name.
    let r = strata(&d, &["plan", "--destroy"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.out.contains("2 to destroy"), "{}", r.out);
    let r = strata(&d, &["destroy", "--auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.err.contains("holds no configuration files"), "{}", r.err);
    assert!(r.out.contains("2 destroyed"), "{}", r.out);
}

#[test]
fn json_configuration_is_configuration() {
    let d = scratch("json-only");
    write(
        &d,
        "main.tf.json",
        r#"{"resource": {"terraform_data": {"a": {"count": 2, "input": "${count.index}"}}}}"#,
    );
    let r = strata(&d, &["apply", "--auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.out.contains("2 added"), "{}", r.out);
    let r = strata(&d, &["plan", "--detailed-exitcode"]);
    assert_eq!(
        r.code,
        0,
        "a JSON-only directory must plan no changes: {}",
        r.all()
    );
}

#[test]
fn json_errors_point_at_their_line() {
    let cases = [
        (
            "{\n  \"locals\": {\"a\": 1,}\n}\n",
            "main.tf.json:2:",
            "trailing comma",
        ),
        (
            "{\n  \"locals\": {\n    \"a\": \"${1 +}\"\n  }\n}\n",
            "main.tf.json:3:",
            "Invalid expression",
        ),
        (
            "{\n\n  \"locals\": {\"a\": tru}\n}\n",
            "main.tf.json:3:",
            "not a JSON keyword",
        ),
        (
            "{\"resource\": {\"terraform_data\": {\"a\": \"x\"}}}",
            "main.tf.json:1:",
            "must be a JSON object",
        ),
        (
            "{\n \"output\": {\"o\": {\"value\": 1, \"value\": 2}}}",
            "main.tf.json:2:",
            "Duplicate argument",
        ),
    ];
    for (i, (text, place, says)) in cases.iter().enumerate() {
        let d = scratch(&format!("json-error-{i}"));
        write(&d, "main.tf.json", text);
        let r = strata(&d, &["validate"]);
        assert_eq!(r.code, 1, "{text}: {}", r.all());
        assert!(r.err.contains(place), "{text}: no {place} in {}", r.err);
        assert!(r.err.contains(says), "{text}: no {says:?} in {}", r.err);
    }
}

#[test]
fn a_postcondition_unknown_at_plan_is_judged_after_apply() {
    let d = scratch("post-apply");
    write(
        &d,
        "main.tf",
        r#"
resource "terraform_data" "a" {
  input = "x"
  lifecycle {
    postcondition {
      condition     = length(self.id) == 3
      error_message = "The id ${self.id} is not three characters."
    }
  }
}
resource "terraform_data" "after" {
  input = terraform_data.a.id
}
"#,
    );
    let r = strata(&d, &["plan"]);
    assert_eq!(r.code, 0, "unknown at plan, so the plan holds: {}", r.all());
    let r = strata(&d, &["apply", "--auto-approve"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(r.err.contains("Resource postcondition failed"), "{}", r.err);
    assert!(r.err.contains("is not three characters"), "{}", r.err);
    assert!(r.out.contains("skipped: terraform_data.after"), "{}", r.out);
    // What the apply made is recorded, not orphaned.
    let listed = strata(&d, &["state", "list"]);
    assert_eq!(listed.out.trim(), "terraform_data.a", "{}", listed.all());
}

#[test]
fn validate_checks_the_names_conditions_use() {
    let d = scratch("cond-names");
    write(
        &d,
        "main.tf",
        r#"
data "terraform_remote_state" "net" {
  backend = "local"
  config  = { path = "remote.json" }
  lifecycle {
    postcondition {
      condition     = self.outputs != null
      error_message = "no outputs"
    }
  }
}
resource "terraform_data" "a" {
  lifecycle {
    precondition {
      condition     = var.nope > 1
      error_message = "nope"
    }
  }
}
"#,
    );
    let r = strata(&d, &["validate"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.err.contains("nope") && r.err.contains("main.tf:15"),
        "{}",
        r.err
    );
    let text = std::fs::read_to_string(d.join("main.tf")).expect("read");
    write(
        &d,
        "main.tf",
        &text.replace("var.nope > 1", "path.module != \"\""),
    );
    let r = strata(&d, &["validate"]);
    assert_eq!(
        r.code,
        0,
        "data source conditions and self are accepted: {}",
        r.all()
    );
}

/// A state this test writes by hand, with the given resources and serial.
fn hand_state(serial: u64, resources: &str) -> String {
    format!(
        r#"{{"version": 4, "serial": {serial}, "lineage": "6c3e2f6a-1d2b-4c55-9a39-000000000020", "outputs": {{}}, "resources": {resources}}}"#
    )
}

fn instance(key: u64, id: &str) -> String {
    format!(
        r#"{{"index_key": {key}, "schema_version": 0, "attributes": {{"id": "{id}", "input": {{"value": {key}, "type": "number"}}, "output": {{"value": {key}, "type": "number"}}, "triggers_replace": null}}}}"#
    )
}

#[test]
fn a_state_recording_an_instance_twice_is_refused_untouched() {
    let d = scratch("dup-state");
    write(&d, "main.tf", TWO);
    let resource = |instances: &[String]| {
        format!(
            r#"{{"mode": "managed", "type": "terraform_data", "name": "a", "provider": "provider[\"terraform.io/builtin/terraform\"]", "instances": [{}]}}"#,
            instances.join(",")
        )
    };
    let twice = hand_state(
        3,
        &format!(
            "[{}]",
            resource(&[instance(0, "i0"), instance(0, "stale"), instance(1, "i1")])
        ),
    );
    write(&d, "terraform.tfstate", &twice);
    for args in [
        &["plan"][..],
        &["apply", "--auto-approve"],
        &["state", "list"],
    ] {
        let r = strata(&d, args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.all());
        assert!(
            // Where miette wraps the line depends on the path's length.
            r.err.contains("terraform_data.a[0] recorded more than"),
            "{}",
            r.err
        );
        assert_eq!(state(&d), twice.as_bytes(), "{args:?} touched the state");
    }
    // One resource split over two entries is one resource, as Terraform reads it.
    let split = hand_state(
        3,
        &format!(
            "[{}, {}]",
            resource(&[instance(0, "i0")]),
            resource(&[instance(1, "i1")])
        ),
    );
    write(&d, "terraform.tfstate", &split);
    let r = strata(&d, &["plan", "--detailed-exitcode", "--no-refresh"]);
    assert_eq!(r.code, 0, "{}", r.all());
}

#[test]
fn a_serial_that_cannot_grow_is_refused() {
    let d = scratch("serial");
    write(&d, "main.tf", TWO);
    let full = hand_state(u64::MAX, "[]");
    write(&d, "terraform.tfstate", &full);
    let r = strata(&d, &["apply", "--auto-approve"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(r.err.contains("the largest a serial can be"), "{}", r.err);
    assert_eq!(state(&d), full.as_bytes());
    // Refused before anything was made: nothing waits in a journal.
    assert!(!r.out.contains("Creation complete"), "{}", r.out);
    assert!(!d.join("terraform.tfstate.journal").exists());
}

#[test]
fn no_size_a_configuration_asks_for_aborts() {
    let d = scratch("sizes");
    write(&d, "main.tf", TWO);
    let r = strata(&d, &["apply", "--auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all());
    // Through the console: each is an error, and the process lives on.
    let exprs = [
        "range(1e12)",
        r#"format("%20000000000d", 1)"#,
        r#"format("%.99999999999999999999f", 1)"#,
        "indent(100000000000, \"a\\nb\")",
        r#"join("", [for i in range(1000) : format("%100000s", "x")])"#,
        r#"replace(format("%1000000s", ""), " ", format("%1000s", "y"))"#,
        "length(setproduct(range(1000), range(1000), range(1000)))",
    ];
    let mut child = run::strata(&d)
        .args(["console", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("console");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        for e in exprs {
            writeln!(stdin, "{e}").expect("write");
        }
    }
    let out = child.wait_with_output().expect("wait");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), exprs.len(), "{text}");
    for (e, l) in exprs.iter().zip(&lines) {
        assert!(l.starts_with("{\"error\""), "{e} gave {l}");
    }
    // Through a plan: huge counts, and a local that doubles forty times.
    let doubling: String = (1..=40)
        .map(|i| format!("  l{i} = concat(local.l{}, local.l{})\n", i - 1, i - 1))
        .collect();
    for config in [
        "resource \"terraform_data\" \"a\" {\n  count = 1e12\n}\n".to_string(),
        format!("locals {{\n  l0 = [1]\n{doubling}}}\nresource \"terraform_data\" \"a\" {{\n  input = length(local.l40)\n}}\n"),
        format!("locals {{\n  l0 = \"ab\"\n{}}}\nresource \"terraform_data\" \"a\" {{\n  input = length(local.l40)\n}}\n", (1..=40).map(|i| format!("  l{i} = \"${{local.l{}}}${{local.l{}}}\"\n", i - 1, i - 1)).collect::<String>()),
        // Built by constructors and `for` rather than functions: one
        // budget counts all (issue 40, item 16).
        format!("locals {{\n  l0 = [1]\n{}}}\nresource \"terraform_data\" \"a\" {{\n  input = length(local.l40)\n}}\n", (1..=40).map(|i| format!("  l{i} = [local.l{}, local.l{}]\n", i - 1, i - 1)).collect::<String>()),
        "resource \"terraform_data\" \"a\" {\n  input = length([for a in range(1000) : [for b in range(1000) : [for c in range(1000) : c]]])\n}\n".to_string(),
    ] {
        write(&d, "main.tf", &config);
        let before = state(&d);
        let r = strata(&d, &["apply", "--auto-approve"]);
        assert_eq!(r.code, 1, "{config}: {}", r.all());
        assert!(r.err.contains("limit"), "{config}: {}", r.err);
        assert_eq!(state(&d), before);
        // The lock went with the run.
        let r = strata(&d, &["state", "list"]);
        assert_eq!(r.code, 0, "{}", r.all());
    }
}

#[test]
fn a_sensitive_variable_is_never_quoted_in_an_error() {
    let d = scratch("secret-errors");
    write(
        &d,
        "main.tf",
        r#"
variable "token" {
  type      = number
  sensitive = true
}
variable "plain" {
  type    = number
  default = 1
}
output "o" {
  value     = var.token
  sensitive = true
}
"#,
    );
    let secret = "SECRET-7f3a9c";
    write(
        &d,
        "bad.tfvars",
        &format!("plain = 2\ntoken = \"{secret}\"\n"),
    );
    write(&d, "broken.tfvars", &format!("token = {secret}+\n"));
    let runs = [
        strata(&d, &["plan", "--var", &format!("token={secret}")]),
        strata(&d, &["plan", "--var", &format!("token=\"{secret}\"")]),
        strata(&d, &["plan", "--var-file", "bad.tfvars"]),
        strata(&d, &["plan", "--var", &format!("token=[{secret}")]),
        strata(&d, &["plan", "--var-file", "broken.tfvars"]),
        strata_env(
            &d,
            &["plan"],
            &[("STRATA_VAR_token", &format!("{{{secret}"))],
        ),
    ];
    for r in &runs {
        assert_eq!(r.code, 1, "{}", r.all());
        assert!(
            !r.all().contains("7f3a9c"),
            "the secret was shown:\n{}",
            r.all()
        );
    }
}

#[test]
fn a_cluster_spec_graphs_what_it_expands_into() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/multi-cloud");
    let r = strata(&example, &["graph"]);
    assert_eq!(r.code, 0, "{}", r.all());
    for node in [
        "module.train_aws.aws_eks_node_group.pool",
        "module.train_gcp.google_container_node_pool.pool",
    ] {
        assert!(
            r.out.contains(node),
            "{node} is not in the graph:\n{}",
            r.out
        );
    }
}

/// The console names the module calls a cluster spec expands into, as a
/// test's assertions do (it said "No module call named \"train_aws\"").
#[test]
fn a_cluster_specs_module_calls_are_in_the_console() {
    use std::io::Write as _;
    let dir = scratch("console-cluster");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/single-cloud/cluster.hcl");
    std::fs::copy(example, dir.join("cluster.hcl")).expect("copy");
    let mut child = run::strata(&dir)
        .args(["console", "-plan"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn strata");
    let asked = "module.train_aws.portable[\"h100\"].gpus_per_node\n";
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(asked.as_bytes())
        .expect("ask");
    let out = child.wait_with_output().expect("wait");
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}{err}");
    assert_eq!(said.trim(), "8", "{err}");
}

#[test]
fn usage_errors_exit_1_and_version_names_the_language() {
    let d = scratch("usage");
    for args in [&["plan", "--nope"][..], &["frobnicate"], &[]] {
        let r = strata(&d, args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.all());
    }
    assert_eq!(strata(&d, &["--help"]).code, 0);
    let r = strata(&d, &["version"]);
    assert_eq!(r.code, 0);
    assert!(r.out.contains("Terraform language v1.11"), "{}", r.out);
    write(
        &d,
        "main.tf",
        "terraform {\n  required_version = \"< 0.1.0\"\n}\n",
    );
    let r = strata(&d, &["validate"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.err.contains("Unsupported Terraform Core version") && r.err.contains("main.tf:2:"),
        "{}",
        r.err
    );
    write(
        &d,
        "main.tf",
        "terraform {\n  required_version = \">= 1.5, < 2.0\"\n}\n",
    );
    assert_eq!(strata(&d, &["validate"]).code, 0);
}

#[test]
fn ephemeral_values_never_reach_what_is_kept() {
    let d = scratch("ephemeral");
    std::fs::create_dir_all(d.join("m")).expect("mkdir");
    write(
        &d,
        "m/main.tf",
        "variable \"x\" {}\noutput \"y\" { value = var.x }\n",
    );
    let base = r#"
variable "token" {
  type      = string
  ephemeral = true
  default   = "s3cret"
}
locals { derived = "x-${var.token}" }
resource "terraform_data" "ok" {
  input = ephemeralasnull(var.token)
}
"#;
    write(&d, "main.tf", base);
    let r = strata(&d, &["validate"]);
    assert_eq!(r.code, 0, "{}", r.all());
    for (extra, says) in [
        (
            "resource \"terraform_data\" \"a\" {\n  input = local.derived\n}\n",
            "Invalid use of ephemeral value",
        ),
        (
            "resource \"terraform_data\" \"a\" {\n  count = length(var.token)\n}\n",
            "Invalid count argument",
        ),
        (
            "output \"o\" {\n  value = upper(var.token)\n}\n",
            "Ephemeral value not allowed",
        ),
        (
            "output \"o\" {\n  value     = var.token\n  ephemeral = true\n}\n",
            "Ephemeral output not allowed",
        ),
        (
            "module \"m\" {\n  source = \"./m\"\n  x      = var.token\n}\n",
            "Ephemeral value not allowed",
        ),
    ] {
        write(&d, "main.tf", &format!("{base}{extra}"));
        let r = strata(&d, &["validate"]);
        assert_eq!(r.code, 1, "{extra}: {}", r.all());
        assert!(r.err.contains(says), "{extra}: {}", r.err);
        assert!(
            r.err.contains("main.tf:1"),
            "{extra}: not at its line: {}",
            r.err
        );
    }
}

#[test]
fn errors_say_what_is_wrong_where() {
    let d = scratch("errors");
    let cases: [(&[u8], &str, &str); 4] = [
        (
            b"locals {\n  a = \"abc }\n}\n",
            "Unterminated template string",
            "main.tf:2:7",
        ),
        (
            b"locals {\n  a = \"ab\xff\"\n}\n",
            "Invalid character encoding",
            "main.tf:2:10",
        ),
        (
            b"module \"x\" {\n  source = \"./\"\n}\n",
            "Module calls itself",
            "main.tf:2:12",
        ),
        (
            b"locals {\n  a = \"${\"x\"} $${y} %%{z}\"\n  b = <<EOT\n\"\nEOT\n}\n",
            "",
            "",
        ),
    ];
    for (text, says, place) in cases {
        std::fs::write(d.join("main.tf"), text).expect("write");
        let r = strata(&d, &["validate"]);
        if says.is_empty() {
            assert_eq!(r.code, 0, "{}", r.all());
            continue;
        }
        assert_eq!(r.code, 1, "{}", r.all());
        assert!(
            r.err.contains(says) && r.err.contains(place),
            "{says} at {place}: {}",
            r.err
        );
    }
    let r = strata(&d, &["show", "missing.plan"]);
    assert!(r.code == 1 && r.err.contains("No such file"), "{}", r.all());
    // A state file that is not UTF-8 is refused with its line, untouched.
    write(&d, "main.tf", TWO);
    let bad = b"{\n  \"version\": 4,\n  \"lineage\": \"\xff\"\n}\n";
    std::fs::write(d.join("terraform.tfstate"), bad).expect("write");
    let r = strata(&d, &["plan"]);
    assert!(r.code == 1 && r.err.contains("column 15"), "{}", r.all());
    assert_eq!(state(&d), bad);
    std::fs::remove_file(d.join("terraform.tfstate")).expect("rm");
    // A bare word for a number is a value of the wrong type, not a reference.
    write(&d, "main.tf", "variable \"n\" {\n  type = number\n}\n");
    let r = strata(&d, &["plan", "--var", "n=abc"]);
    assert!(
        r.code == 1 && r.err.contains("a number is required"),
        "{}",
        r.all()
    );
}

#[test]
fn a_saved_plan_applies_from_another_directory() {
    let d = scratch("saved-elsewhere");
    let config = d.join("infra");
    std::fs::create_dir_all(&config).expect("mkdir");
    write(&config, "main.tf", TWO);
    let r = strata(&config, &["plan", "--out", "../tfplan"]);
    assert_eq!(r.code, 0, "{}", r.all());
    let r = strata(&d, &["apply", "tfplan"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.out.contains("2 added"), "{}", r.out);
}

#[test]
fn validate_checks_blocks_against_their_schemas() {
    let d = scratch("validate-schemas");
    write(
        &d,
        "main.tf",
        r#"
resource "aws_vpc" "main" {
  cidr_blok = "10.0.0.0/16"
}
resource "aws_subnet" "a" {
  cidr_block = "10.0.1.0/24"
}
resource "aws_kms_key" "k" {}
resource "aws_kms_key" "k2" {}
resource "terraform_data" "t" {
  input = 1
  ingress {}
}
"#,
    );
    let r = strata(&d, &["validate"]);
    assert_eq!(r.code, 1, "{}", r.all());
    for says in [
        "Did you mean \"cidr_block\"?",
        "The argument \"vpc_id\" is required",
        "Blocks of type \"ingress\" are not expected here",
        "./main.tf:9.",
    ] {
        assert!(r.err.contains(says), "no {says:?} in {}", r.err);
    }
    assert_eq!(
        r.err.matches("Invalid resource type").count(),
        1,
        "one error for the type: {}",
        r.err
    );
}

/// One console expression's JSON line.
fn console_line(expr: &str) -> String {
    use std::io::Write;
    // A folder of its own: the console reads whatever configuration the
    // folder holds, and the shared temporary folder may hold some.
    let d = scratch("console");
    let mut child = run::strata(&d)
        .args(["console", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("console");
    writeln!(child.stdin.take().expect("stdin"), "{expr}").expect("write");
    let out = child.wait_with_output().expect("wait");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn logical_operators_drop_the_side_that_cannot_matter() {
    for (expr, want) in [
        // Terraform 1.12's rule: the guard pattern of optional inputs.
        (
            "null == null || contains([\"a\"], null)",
            r#"{"value":true,"type":"bool"}"#,
        ),
        ("true || [1][5]", r#"{"value":true,"type":"bool"}"#),
        (
            "false && tonumber(\"x\")",
            r#"{"value":false,"type":"bool"}"#,
        ),
        // 1.11's results everywhere else.
        ("false || [1][5]", "Invalid index"),
        ("true || null", "error"),
        ("true && false", r#"{"value":false,"type":"bool"}"#),
    ] {
        let got = console_line(expr);
        assert!(got.contains(want), "{expr}: {got}");
    }
}

#[test]
fn plantimestamp_is_the_plans_time_when_a_saved_plan_is_applied() {
    let d = scratch("plantimestamp");
    write(
        &d,
        "main.tf",
        "resource \"terraform_data\" \"t\" {\n  input = plantimestamp()\n}\noutput \"t\" { value = terraform_data.t.output }\n",
    );
    let r = strata(&d, &["plan", "--out", "tfplan"]);
    assert_eq!(r.code, 0, "{}", r.all());
    let saved = std::fs::read_to_string(d.join("tfplan")).expect("plan file");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let r = strata(&d, &["apply", "tfplan"]);
    assert_eq!(r.code, 0, "the plan's time, not the apply's: {}", r.all());
    let out = strata(&d, &["output", "--json"]);
    let time = serde_json::from_str::<serde_json::Value>(&out.out).expect("json")["t"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        time.ends_with('Z') && saved.contains(&time),
        "{time} is not the plan's time"
    );
}

/// A small deterministic generator: the seed is printed, and
/// `STRATA_RANDOM_SEED` replays a run.
struct Rng(u64);

impl Rng {
    /// Seeded from STRATA_RANDOM_SEED, or from the process (printed, so a
    /// failing run can be replayed).
    fn seeded(salt: u64) -> (u64, Rng) {
        let seed = std::env::var("STRATA_RANDOM_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| std::process::id() as u64 * salt + 1);
        eprintln!("seed {seed} (STRATA_RANDOM_SEED={seed} replays this run)");
        (seed, Rng(seed | 1))
    }

    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

/// A random small configuration: sizes from the ordinary to (when
/// `absurd`) the absurd, runaway locals, conditions, and sometimes nothing
/// at all.
fn random_config(rng: &mut Rng, absurd: bool) -> Option<String> {
    if rng.next().is_multiple_of(5) {
        return None;
    }
    let pick = |rng: &mut Rng, ordinary: &[&'static str], huge: &[&'static str]| {
        let all: Vec<&str> = ordinary
            .iter()
            .chain(if absurd { huge } else { &[] })
            .copied()
            .collect();
        *rng.pick(&all)
    };
    let count = pick(
        rng,
        &[
            "0",
            "2",
            "-1",
            "\"x\"",
            "2.5",
            "null",
            "var.n",
            "length(local.grow)",
        ],
        &["1e12"],
    );
    let for_each = pick(
        rng,
        &[
            "toset([\"a\", \"b\"])",
            "{ a = 1 }",
            "null",
            "[\"a\"]",
            "merge({ a = terraform_data.n[0].id }, { b = 1 })",
        ],
        &["toset([for i in range(1000) : tostring(i)])"],
    );
    // Small lists, or a runaway the limits stop (2^30, 2^44); not the
    // legal but slow 2^19 instances in between.
    let depth = pick(rng, &["0", "1", "2", "3", "5"], &["8", "10", "30", "44"]);
    let depth: usize = depth.parse().unwrap_or(0);
    let grow: String = (1..=depth)
        .map(|i| format!("  g{i} = concat(local.g{}, local.g{})\n", i - 1, i - 1))
        .collect();
    let width = pick(rng, &["10", "100"], &["100000", "20000000000"]);
    // `true` refers to nothing, which both tools refuse in a condition.
    let condition = *rng.pick(&["true", "var.n > 5", "var.n > 1", "self.input != null"]);
    Some(format!(
        "variable \"n\" {{\n  default = 2\n}}\nlocals {{\n  g0 = [1]\n{grow}  grow = local.g{depth}\n}}\n\
         resource \"terraform_data\" \"n\" {{\n  count = {count}\n  input = format(\"%{width}d\", 1)\n}}\n\
         resource \"terraform_data\" \"e\" {{\n  for_each = {for_each}\n  input = each.key\n  lifecycle {{\n    postcondition {{\n      condition     = {condition}\n      error_message = \"no\"\n    }}\n  }}\n}}\n"
    ))
}

/// The state as it may be found: written by the last run, or damaged.
fn random_state(rng: &mut Rng, current: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(current).into_owned();
    match rng.next() % 6 {
        0 => text
            .replacen(
                "\"serial\": ",
                "\"serial\": 18446744073709551615, \"x\": ",
                1,
            )
            .into_bytes(),
        1 => text
            .get(..text.len() / 2)
            .unwrap_or_default()
            .as_bytes()
            .to_vec(),
        2 => {
            let mut b = current.to_vec();
            if let Some(at) = b.iter().position(|&c| c == b'"') {
                b.insert(at + 1, 0xff);
            }
            b
        }
        _ => current.to_vec(),
    }
}

#[test]
fn random_small_configurations_never_abort_nor_lose_state() {
    let (seed, mut rng) = Rng::seeded(0x9e37_79b9);
    let d = scratch("random");
    write(&d, "main.tf", TWO);
    assert_eq!(strata(&d, &["apply", "--auto-approve"]).code, 0);
    let good = state(&d);
    for round in 0..30 {
        let config = random_config(&mut rng, true);
        match &config {
            Some(c) => write(&d, "main.tf", c),
            None => {
                let _ = std::fs::remove_file(d.join("main.tf"));
            }
        }
        let before = random_state(&mut rng, &good);
        std::fs::write(d.join("terraform.tfstate"), &before).expect("state");
        for args in [&["plan"][..], &["apply", "--auto-approve"]] {
            let started = std::time::Instant::now();
            let r = strata(&d, args);
            let what = format!(
                "seed {seed}, round {round}, {args:?}:\n{config:?}\n{}",
                r.all()
            );
            if started.elapsed().as_secs() > 5 {
                eprintln!("slow ({:?}): {what}", started.elapsed());
            }
            assert!(matches!(r.code, 0 | 1), "exit {}: {what}", r.code);
            assert!(
                !r.err.contains("panicked") && !r.err.contains("memory allocation"),
                "{what}"
            );
            let after = state(&d);
            if r.code == 1 || config.is_none() {
                assert_eq!(after, before, "a refused run changed the state: {what}");
            }
            // Nothing was planned away for want of configuration.
            if config.is_none() {
                assert!(r.err.contains("No configuration files"), "{what}");
            }
            // The lock went with the run, whatever happened.
            let lock = strata(&d, &["force-unlock", "nothing-holds-it"]);
            assert!(!lock.all().contains("locked by"), "{what}\n{}", lock.all());
        }
    }
}

#[test]
fn terraform_refuses_an_empty_directory_too() {
    if !require_terraform("terraform_refuses_an_empty_directory_too") {
        return;
    }
    let d = scratch("tf-empty");
    write(&d, "main.tf", TWO);
    let tf = |args: &[&str]| terraform(&d, args);
    assert!(tf(&["apply", "-auto-approve", "-no-color"])
        .status
        .success());
    std::fs::remove_file(d.join("main.tf")).expect("rm");
    for args in [
        &["plan", "-no-color"][..],
        &["apply", "-auto-approve", "-no-color"],
    ] {
        let out = tf(args);
        let text = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("No configuration files"),
            "terraform {args:?}: {text}"
        );
        // strata refuses the same directory, reading Terraform's state.
        let r = strata(&d, &[args[0], "--state", "terraform.tfstate"]);
        assert_eq!(r.code, 1, "{}", r.all());
        assert!(r.err.contains("No configuration files"), "{}", r.err);
    }
}

#[test]
fn a_saved_plan_never_holds_an_ephemeral_value() {
    let d = scratch("ephemeral-plan");
    write(
        &d,
        "main.tf",
        r#"
variable "token" {
  type      = string
  ephemeral = true
}
variable "size" {
  type    = number
  default = 1
}
resource "terraform_data" "a" {
  count = var.size
  input = ephemeralasnull(var.token)
}
"#,
    );
    let r = strata(
        &d,
        &["plan", "--var", "token=s3cret-4411", "--out", "tfplan"],
    );
    assert_eq!(r.code, 0, "{}", r.all());
    let saved = std::fs::read_to_string(d.join("tfplan")).expect("plan file");
    assert!(
        !saved.contains("s3cret-4411"),
        "the plan file holds the ephemeral value"
    );
    let json = strata(
        &d,
        &["plan", "--var", "token=s3cret-4411", "--format", "json"],
    );
    assert_eq!(json.code, 0, "{}", json.all());
    assert!(
        !json.out.contains("s3cret-4411"),
        "plan JSON shows the ephemeral value"
    );
    let r = strata(&d, &["apply", "tfplan"]);
    assert_eq!(
        r.code,
        1,
        "the ephemeral value must be given again: {}",
        r.all()
    );
    assert!(r.err.contains("token"), "{}", r.err);
    let r = strata(&d, &["apply", "tfplan", "--var", "size=3"]);
    assert_eq!(
        r.code,
        1,
        "only ephemeral variables may be given: {}",
        r.all()
    );
    let r = strata(&d, &["apply", "tfplan", "--var", "token=again"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.out.contains("1 added"), "{}", r.out);
}

#[test]
fn a_generated_json_configuration_applies_and_terraform_reads_its_state() {
    let found =
        require_terraform("a_generated_json_configuration_applies_and_terraform_reads_its_state");
    let d = scratch("cdktf");
    // As CDK for Terraform writes it: "//" metadata at the top and in each
    // resource, a local backend, references as templates.
    write(
        &d,
        "cdk.tf.json",
        r#"{
  "//": {"metadata": {"backend": "local", "stackName": "demo", "version": "0.20.0"}, "outputs": {}},
  "terraform": {"backend": {"local": {"path": "terraform.tfstate"}}, "required_providers": {}},
  "resource": {"terraform_data": {
    "demo_item_1A2B": {"//": {"metadata": {"path": "demo/item", "uniqueId": "item"}}, "input": "hello", "lifecycle": {"create_before_destroy": true}},
    "demo_next_3C4D": {"input": "${terraform_data.demo_item_1A2B.output}-next", "depends_on": ["terraform_data.demo_item_1A2B"]}
  }},
  "output": {"out": {"value": "${terraform_data.demo_next_3C4D.output}"}}
}"#,
    );
    let r = strata(&d, &["apply", "--auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.out.contains("out = \"hello-next\""), "{}", r.out);
    if !found {
        return;
    }
    let tf = |args: &[&str]| terraform(&d, args);
    assert!(tf(&["init", "-no-color"]).status.success());
    let plan = tf(&["plan", "-no-color", "-detailed-exitcode"]);
    assert_eq!(
        plan.status.code(),
        Some(0),
        "Terraform plans changes on strata's state of the same JSON:\n{}",
        String::from_utf8_lossy(&plan.stdout)
    );
}

/// Item 7: long valid expressions plan, in both tools, to the same values.
#[test]
fn long_expressions_plan_as_terraform_plans_them() {
    let d = scratch("long-expr");
    let n = 100_000;
    let deep = 5_000;
    let text = format!(
        "output \"sum\" {{\n  value = {}\n}}\noutput \"deep\" {{\n  value = {}2{}\n}}\n",
        vec!["1"; n].join(" + "),
        "(".repeat(deep),
        ")".repeat(deep)
    );
    write(&d, "main.tf", &text);
    let r = strata(&d, &["plan"]);
    assert_eq!(r.code, 0, "{}", r.all());
    for want in [format!("+ sum  = {n}"), "+ deep = 2".to_string()] {
        assert!(r.out.contains(&want), "no {want:?} in {}", r.out);
    }
    if !require_terraform("long_expressions_plan_as_terraform_plans_them") {
        return;
    }
    let tf = terraform(&d, &["plan", "-no-color"]);
    let tf_out = String::from_utf8_lossy(&tf.stdout);
    for want in [format!("+ sum  = {n}"), "+ deep = 2".to_string()] {
        assert!(tf_out.contains(&want), "terraform: no {want:?} in {tf_out}");
    }
}

/// `provider::terraform::…` functions are callable only where the module
/// declares the provider, as Terraform has them.
#[test]
fn provider_functions_need_their_provider_declared() {
    let d = scratch("provider-fn");
    let call = "output \"e\" {\n  value = provider::terraform::encode_expr([1])\n}\n";
    write(&d, "main.tf", call);
    let r = strata(&d, &["validate"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(r.err.contains("Unknown provider function"), "{}", r.err);
    assert!(r.err.contains("main.tf:2:"), "{}", r.err);
    if require_terraform("provider_functions_need_their_provider_declared") {
        let tf = terraform(&d, &["validate", "-no-color"]);
        let text = String::from_utf8_lossy(&tf.stderr);
        assert!(text.contains("Unknown provider function"), "{text}");
    }
    let declared = "terraform {\n  required_providers {\n    terraform = { source = \"terraform.io/builtin/terraform\" }\n  }\n}\n";
    write(&d, "versions.tf", declared);
    let r = strata(&d, &["plan"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.out.contains("+ e = jsonencode("), "{}", r.out);
}

/// A destroy still gives every module's variables their values and judges
/// their validations, as Terraform's does: a child's failing validation
/// stops it with the state untouched.
#[test]
fn destroy_judges_child_module_variables() {
    let d = scratch("destroy-child-var");
    let root = "variable \"x\" {\n  default = \"ok\"\n}\nmodule \"m\" {\n  source = \"./m\"\n  x      = var.x\n}\nresource \"terraform_data\" \"a\" {}\n";
    let child = "variable \"x\" {\n  validation {\n    condition     = var.x == \"ok\"\n    error_message = \"x must be ok.\"\n  }\n}\n";
    write(&d, "main.tf", root);
    std::fs::create_dir_all(d.join("m")).expect("mkdir");
    write(&d.join("m"), "main.tf", child);
    let r = strata(&d, &["apply", "--auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all());
    write(&d, "terraform.tfvars", "x = \"bad\"\n");
    let before = state(&d);
    let r = strata(&d, &["destroy", "--auto-approve"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(r.err.contains("x must be ok."), "{}", r.err);
    // Where the module call gives the value, as Terraform places it.
    assert!(r.err.contains("main.tf:6:12)"), "{}", r.err);
    assert_eq!(
        state(&d),
        before,
        "a refused destroy leaves the state alone"
    );
    if require_terraform("destroy_judges_child_module_variables") {
        let t = scratch("destroy-child-var-tf");
        write(&t, "main.tf", root);
        std::fs::create_dir_all(t.join("m")).expect("mkdir");
        write(&t.join("m"), "main.tf", child);
        assert!(terraform(&t, &["init", "-no-color"]).status.success());
        assert!(terraform(&t, &["apply", "-auto-approve", "-no-color"])
            .status
            .success());
        write(&t, "terraform.tfvars", "x = \"bad\"\n");
        let out = terraform(&t, &["destroy", "-auto-approve", "-no-color"]);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("x must be ok."));
    }
}

/// An error upstream is reported where it is, once: what depends on the
/// failed value (count, for_each, a data source's config) is not reported
/// again as "cannot be determined until apply".
#[test]
fn an_error_upstream_is_not_reported_again_downstream() {
    let d = scratch("upstream-error");
    std::fs::create_dir_all(d.join("m")).expect("mkdir");
    write(
        &d.join("m"),
        "main.tf",
        "variable \"n\" {}\noutput \"x\" {\n  value = var.n + \"a\"\n}\n",
    );
    write(
        &d,
        "main.tf",
        "module \"m\" {\n  source = \"./m\"\n  n      = 1\n}\nresource \"terraform_data\" \"r\" {\n  count = module.m.x\n}\nresource \"terraform_data\" \"q\" {\n  for_each = toset([tostring(module.m.x)])\n}\ndata \"terraform_remote_state\" \"s\" {\n  backend = \"local\"\n  config  = { path = 1 + \"b\" }\n}\nresource \"terraform_data\" \"w\" {\n  count = length(data.terraform_remote_state.s.outputs)\n}\n",
    );
    for cmd in ["plan", "validate"] {
        let r = strata(&d, &[cmd]);
        assert_eq!(r.code, 1, "{}", r.all());
        assert_eq!(
            r.err.matches("Invalid operand").count(),
            2,
            "{cmd}: {}",
            r.err
        );
        assert!(r.err.contains("m/main.tf:3:"), "{}", r.err);
        assert!(r.err.contains("main.tf:13:"), "{}", r.err);
        for cascade in ["until apply", "Invalid count", "Invalid for_each"] {
            assert!(!r.err.contains(cascade), "{cmd}: {cascade} in {}", r.err);
        }
    }
}

/// The randomized configurations of ordinary size, planned by both tools in
/// fresh directories: each refuses exactly where the other does.
#[test]
fn random_small_configurations_are_refused_where_terraform_refuses_them() {
    if !require_terraform("random_small_configurations_are_refused_where_terraform_refuses_them") {
        return;
    }
    let (seed, mut rng) = Rng::seeded(0x2545_f491);
    // The first round is one both plan and the last one neither does, so
    // agreeing always meant something.
    let rounds = 20;
    for round in 0..rounds {
        let config = match round {
            0 => Some(TWO.to_string()),
            r if r == rounds - 1 => None,
            _ => random_config(&mut rng, false),
        };
        let d = scratch(&format!("random-tf-{round}"));
        if let Some(c) = &config {
            write(&d, "main.tf", c);
        }
        let ours = strata(&d, &["plan"]);
        let theirs = terraform(&d, &["plan", "-input=false", "-no-color"]);
        let what = format!(
            "seed {seed}, round {round}:\n{config:?}\nstrata: {}\nterraform: {}",
            ours.all(),
            String::from_utf8_lossy(&theirs.stderr)
        );
        assert_eq!(ours.code == 0, theirs.status.success(), "{what}");
        if round == 0 || round == rounds - 1 {
            assert_eq!(ours.code == 0, round == 0, "{what}");
        }
    }
}

/// `validate` given a value holds it to its variable's type (it said
/// "Success!" for `--var n=abc` on a number); a variable left unset is no
/// error there.
#[test]
fn validate_holds_given_values_to_their_types() {
    let d = scratch("validate-var");
    write(
        &d,
        "main.tf",
        "variable \"n\" {\n  type = number\n}\nvariable \"m\" {\n  type = number\n}\noutput \"o\" {\n  value = var.n\n}\n",
    );
    let r = strata(&d, &["validate", "--var", "n=abc"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(r.err.contains("a number is required"), "{}", r.err);
    let r = strata(&d, &["validate", "--var", "n=3"]);
    assert_eq!(r.code, 0, "{}", r.all());
}

/// A block the schema requires (`kubernetes_namespace`'s `metadata`) given
/// only by a `dynamic` block is counted once its `for_each` is known: not
/// at `validate`, where the root's variables are unknown, nor in an
/// instance `count = 0` leaves out; an instance that exists without one
/// is refused at its place (issue 40, item 19; Terraform's rule, from
/// modules such as terraform-aws-modules' s3-bucket).
#[test]
fn a_required_block_from_a_dynamic_block_is_counted_once_known() {
    let dir = scratch("dynamic-required");
    write(
        &dir,
        "main.tf",
        r#"
variable "ns" {
  type    = list(string)
  default = []
}

variable "on" {
  type    = bool
  default = false
}

resource "kubernetes_namespace" "n" {
  count = var.on ? 1 : 0
  dynamic "metadata" {
    for_each = try(flatten([var.ns]), [])
    content {
      name = metadata.value
    }
  }
}
"#,
    );
    let validated = strata(&dir, &["validate"]);
    assert_eq!(validated.code, 0, "{}", validated.all());
    let planned = strata(&dir, &["plan", "-detailed-exitcode"]);
    assert_eq!(planned.code, 0, "{}", planned.all());
    let refused = strata(&dir, &["plan", "-var", "on=true"]);
    assert_eq!(refused.code, 1, "{}", refused.all());
    assert!(
        refused.err.contains("Insufficient metadata blocks") && refused.err.contains("main.tf:12"),
        "{}",
        refused.err
    );
}

/// Only a root module's output must say it is sensitive: a child's output
/// of a sensitive value is used where the caller uses it, marks and all,
/// as Terraform 1.11 plans it (strata refused the configuration at the
/// child's output); a root output of it that does not say so is refused
/// by both.
#[test]
fn a_childs_output_of_a_secret_need_not_say_it_is_sensitive() {
    let child = "variable \"s\" {\n  sensitive = true\n  default   = \"x\"\n}\n\noutput \"o\" {\n  value = var.s\n}\n";
    let root = |sensitive: bool| {
        let said = if sensitive {
            "\n  sensitive = true"
        } else {
            ""
        };
        format!("module \"m\" {{\n  source = \"./m\"\n}}\n\noutput \"r\" {{\n  value = module.m.o{said}\n}}\n")
    };
    for (sensitive, want) in [(true, 0), (false, 1)] {
        let d = scratch(&format!("child-secret-{sensitive}"));
        std::fs::create_dir_all(d.join("m")).expect("mkdir");
        write(&d, "m/main.tf", child);
        write(&d, "main.tf", &root(sensitive));
        let (code, out, err) = oracle::run("strata", &d, &["plan", "-no-color"]);
        assert_eq!(code, want, "{out}{err}");
        if want == 1 {
            assert!(
                format!("{out}{err}").contains("Output refers to sensitive values"),
                "{out}{err}"
            );
        }
        if require_terraform("a_childs_output_of_a_secret") {
            assert!(terraform(&d, &["init", "-no-color"]).status.success());
            let (code, out, err) = oracle::run("terraform", &d, &["plan", "-no-color"]);
            assert_eq!(code, want, "{out}{err}");
        }
    }
}

/// A `terraform_remote_state` whose state is not there is an error, as
/// Terraform's ("Unable to find remote state"), even with `defaults`: a
/// mistyped path must not read as a state with no outputs. Once the state
/// is there, its outputs are read over the defaults.
#[test]
fn a_remote_state_that_is_not_there_is_an_error_whatever_the_defaults() {
    let d = scratch("remote-missing");
    write(
        &d,
        "main.tf",
        r#"
data "terraform_remote_state" "net" {
  backend  = "local"
  config   = { path = "net.tfstate" }
  defaults = { cidr = "10.0.0.0/16" }
}
output "cidr" { value = data.terraform_remote_state.net.outputs.cidr }
"#,
    );
    let r = strata(&d, &["plan", "-no-color"]);
    let said = ["Unable to find remote state", "net.tfstate"];
    assert!(
        r.code == 1 && said.iter().all(|s| r.err.contains(s)),
        "{}",
        r.all()
    );
    write(
        &d,
        "net.tfstate",
        r#"{"version": 4, "serial": 1, "lineage": "6c3e2f6a-1d2b-4c55-9a39-000000000021", "outputs": {"cidr": {"value": "10.1.0.0/16", "type": "string"}}, "resources": []}"#,
    );
    let r = strata(&d, &["apply", "-auto-approve", "-no-color"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.out.contains("cidr = \"10.1.0.0/16\""), "{}", r.out);
}
