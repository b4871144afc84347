use super::*;

fn read(args: &[&str], env: &[(&str, &str)]) -> Result<Respelled, String> {
    let args = std::iter::once("strata")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    respell(args, &|name| {
        env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    })
}

fn args(r: &Respelled) -> Vec<String> {
    r.args[1..]
        .iter()
        .map(|a| a.to_string_lossy().to_string())
        .collect()
}

#[test]
fn terraform_flags_become_stratas() {
    let r = read(
        &[
            "plan",
            "-out=tfplan",
            "-var",
            "region=us-east-1",
            "-var-file=prod.tfvars",
            "-input=false",
            "-no-color",
            "-lock-timeout=5m",
            "-parallelism=4",
            "-refresh=false",
            "-detailed-exitcode",
            "-compact-warnings",
        ],
        &[],
    )
    .expect("read");
    assert_eq!(
        args(&r),
        [
            "plan",
            "--out",
            "tfplan",
            "--var",
            "region=us-east-1",
            "--var-file",
            "prod.tfvars",
            "--parallelism",
            "4",
            "--no-refresh",
            "--detailed-exitcode"
        ]
    );
    assert!(r.no_color);
    assert_eq!(r.lock_timeout, Some(Duration::from_secs(300)));
}

#[test]
fn stratas_own_spellings_pass_unchanged() {
    let given = [
        "apply",
        "--auto-approve",
        "--var",
        "a=b",
        "--prices",
        "p.csv",
        "--replace-placement",
        "train.h100",
        "dir",
    ];
    let r = read(&given, &[]).expect("read");
    assert_eq!(args(&r), given);
    let r = read(&["plan", "--format", "json", "--var-file=x.tfvars"], &[]).expect("read");
    assert_eq!(
        args(&r),
        ["plan", "--format", "json", "--var-file", "x.tfvars"]
    );
}

#[test]
fn chdir_help_and_version_come_before_the_command() {
    let r = read(&["-chdir=infra", "apply", "-auto-approve", "tfplan"], &[]).expect("read");
    assert_eq!(r.chdir, Some(PathBuf::from("infra")));
    assert_eq!(args(&r), ["apply", "--auto-approve", "tfplan"]);
    assert_eq!(args(&read(&["-version"], &[]).expect("read")), ["version"]);
    assert_eq!(
        args(&read(&["plan", "-help"], &[]).expect("read")),
        ["plan", "--help"]
    );
}

#[test]
fn tf_cli_args_go_after_the_command() {
    let r = read(
        &["plan", "-var", "x=1"],
        &[
            ("TF_CLI_ARGS", "-no-color"),
            ("TF_CLI_ARGS_plan", "-var 'name=a b' -parallelism=2"),
            ("TF_CLI_ARGS_apply", "-auto-approve"),
        ],
    )
    .expect("read");
    assert_eq!(
        args(&r),
        [
            "plan",
            "--var",
            "name=a b",
            "--parallelism",
            "2",
            "--var",
            "x=1"
        ]
    );
    assert!(r.no_color);
    let bad = read(&["plan"], &[("TF_CLI_ARGS", "-var 'x=1")]);
    assert!(bad.is_err_and(|e| e.contains("TF_CLI_ARGS")));
}

#[test]
fn switches_take_terraforms_boolean_values() {
    let r = read(
        &[
            "apply",
            "-auto-approve=false",
            "-refresh=true",
            "-lock=false",
        ],
        &[],
    )
    .expect("read");
    assert_eq!(args(&r), ["apply"]);
    assert_eq!(r.notes.len(), 1, "-lock=false is taken, and said");
    let e = read(&["plan", "-refresh=maybe"], &[]).expect_err("not a boolean");
    assert!(
        e.contains("invalid boolean value \"maybe\" for -refresh"),
        "{e}"
    );
}

#[test]
fn apply_destroy_is_destroy_and_json_follows_the_command() {
    let r = read(&["apply", "-destroy", "-auto-approve"], &[]).expect("read");
    assert_eq!(args(&r), ["destroy", "--auto-approve"]);
    assert_eq!(
        args(&read(&["show", "-json", "tfplan"], &[]).expect("read")),
        ["show", "--json", "tfplan"]
    );
    assert_eq!(
        args(&read(&["output", "-json"], &[]).expect("read")),
        ["output", "--json"]
    );
    assert_eq!(
        args(&read(&["plan", "-json"], &[]).expect("read")),
        ["plan", "--json"]
    );
    let e = read(&["init", "-json"], &[]).expect_err("init's JSON is not written yet");
    assert!(
        e.contains("-json on init is Terraform's machine-readable output"),
        "{e}"
    );
}

#[test]
fn what_strata_does_not_do_yet_is_refused_by_name() {
    for (flag, what) in [
        ("-backup=old.tfstate", "a backup file of your choosing"),
        (
            "-state-out=other.tfstate",
            "writing the state to another file",
        ),
    ] {
        let e = read(&["plan", flag], &[]).expect_err(flag);
        assert!(
            e.contains(what) && e.contains("strata does not do yet"),
            "{e}"
        );
    }
    let e = read(&["plan", "-out"], &[]).expect_err("a value is missing");
    assert_eq!(e, "flag needs an argument: -out");
}

#[test]
fn targeting_and_refresh_only_are_stratas_long_flags() {
    let r = read(
        &[
            "apply",
            "-target=module.m[0]",
            "-target",
            "a.b",
            "-exclude=c.d",
            "-replace=e.f[\"k\"]",
            "-refresh-only",
        ],
        &[],
    )
    .expect("read");
    assert_eq!(
        args(&r),
        [
            "apply",
            "--target",
            "module.m[0]",
            "--target",
            "a.b",
            "--exclude",
            "c.d",
            "--replace",
            "e.f[\"k\"]",
            "--refresh-only"
        ]
    );
}

#[test]
fn nothing_after_a_double_dash_is_a_flag() {
    let r = read(&["console", "--", "-var"], &[]).expect("read");
    assert_eq!(args(&r), ["console", "--", "-var"]);
}

/// A byte that is not UTF-8 in a `-var` is kept as U+FFFD, as Terraform
/// reads it (strata said "flag needs an argument"); in a path it is an
/// error that says so.
#[cfg(unix)]
#[test]
fn a_value_that_is_not_utf8_is_read_as_terraform_reads_it() {
    use std::os::unix::ffi::OsStringExt;
    let raw = |bytes: &[u8]| OsString::from_vec(bytes.to_vec());
    let run = |tail: Vec<OsString>| {
        let args = [OsString::from("strata"), OsString::from("plan")]
            .into_iter()
            .chain(tail)
            .collect();
        respell(args, &|_| None)
    };
    for tail in [
        vec![OsString::from("-var"), raw(b"v=a\xffb")],
        vec![raw(b"-var=v=a\xffb")],
    ] {
        let r = run(tail).expect("read");
        assert_eq!(args(&r), ["plan", "--var", "v=a\u{fffd}b"]);
    }
    let e = run(vec![OsString::from("-out"), raw(b"p\xff")]).expect_err("a path");
    assert!(e.contains("-out is not UTF-8"), "{e}");
}
