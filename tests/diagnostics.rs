//! Every kind of user error renders as a miette diagnostic with the file,
//! line, column and a snippet, and exits 1. The rendered text is snapshotted
//! (insta) so a change in wording or location is seen in review.

#[path = "common/run.rs"]
mod run;

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn strata(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    use std::io::Write;
    let mut cmd = run::strata(root());
    cmd.args(args);
    cmd.stdin(std::process::Stdio::piped());
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("strata runs");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write");
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("finishes");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn validate_fails(case: &str) -> String {
    let path = format!("tests/fixtures/diagnostics/{case}");
    let (code, stdout, stderr) = strata(&["validate", &path], None);
    assert_eq!(code, 1, "{case}: exit code 1 expected; stdout: {stdout}");
    assert!(
        !stderr.contains("panicked"),
        "{case}: strata panicked: {stderr}"
    );
    // file:line:col appears for every diagnostic that has a place.
    assert!(
        stderr.contains(&format!("{path}/main.tf:")),
        "{case}: no file location in:\n{stderr}"
    );
    stderr
}

macro_rules! diagnostic_cases {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), validate_fails(stringify!($name)));
        }
    )*};
}

diagnostic_cases!(
    syntax_error,
    unknown_variable_suggestion,
    type_mismatch_default,
    wrong_arity,
    invalid_cidr,
    module_not_found,
    unsupported_block,
    duplicate_variable,
    local_cycle,
    undeclared_resource,
    unknown_function,
    bad_type_constraint,
    count_outside_counted,
    conditional_types,
    for_each_list,
    count_negative,
    sensitive_output,
    resource_cycle,
    moved_kinds,
    moved_not_static,
    undefined_provider_alias,
    ephemeral_kept,
);

#[test]
fn validation_failure_names_the_rule() {
    let (code, _, stderr) = strata(
        &[
            "console",
            "tests/fixtures/validation",
            "--var",
            "gpus_per_node=3",
        ],
        Some("var.gpus_per_node\n"),
    );
    assert_eq!(code, 1);
    insta::assert_snapshot!("validation_failure", stderr);
}

#[test]
fn undeclared_cli_variable_is_an_error() {
    let (code, _, stderr) = strata(
        &["console", "tests/fixtures/precedence", "--var", "nope=1"],
        Some("1\n"),
    );
    assert_eq!(code, 1);
    assert!(stderr.contains("Value for undeclared variable"), "{stderr}");
}

#[test]
fn valid_configuration_passes() {
    let (code, stdout, stderr) = strata(&["validate", "tests/fixtures/valid"], None);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert!(stdout.contains("Success"));
}

#[test]
fn console_error_lines_do_not_stop_the_stream() {
    let (code, stdout, _) = strata(
        &["console", "--json"],
        Some("1 +\nupper(\"ok\")\nnope\n2\n"),
    );
    assert_eq!(code, 0);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    assert!(lines[0].starts_with("{\"error\""));
    assert_eq!(lines[1], r#"{"value":"OK","type":"string"}"#);
    assert!(lines[2].starts_with("{\"error\""));
    assert_eq!(lines[3], r#"{"value":2,"type":"number"}"#);
}
