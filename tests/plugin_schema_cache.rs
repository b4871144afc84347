//! A provider plugin's schema is asked for once per package and kept on
//! disk by the package's checksum (`.terraform/strata-schemas`), and its
//! process is started only when a call needs it: the test provider logs
//! each start and each `GetProviderSchema` (`STRATATEST_LOG`). A run that
//! only reads schemas (`show` of the state) starts no process; a plan
//! starts one and asks it nothing before its calls; a new package (its
//! checksum changes) is asked again. Terraform's counts for the same
//! commands are printed beside strata's, for the note. A saved plan
//! carries the schemas of the types it used, so that showing or applying
//! it where none is kept asks the provider for none.

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;

#[path = "common/lab.rs"]
mod lab;
use lab::{Lab, HEADER};

use std::path::Path;

const CONFIG: &str = "\nresource \"stratatest_object\" \"o\" {\n  name = \"one\"\n}\n";

/// What the provider logged since the last look (the log emptied),
/// its processes' ends left out.
fn logged(log: &Path) -> Vec<String> {
    let mut said = lived(log);
    said.retain(|l| l != "stop");
    said
}

/// Every line the provider logged since the last look, `stop` included.
fn lived(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let _ = std::fs::remove_file(log);
    text.lines().map(str::to_string).collect()
}

/// The most provider processes a walk of many configurations may have
/// alive at once: four open, and a few released ones still stopping (a
/// release does not wait for the process to end; on a loaded machine a
/// stop may lag the next start).
const FEW: usize = 8;

/// How many processes a log says were started.
fn starts(said: &[String]) -> usize {
    said.iter().filter(|l| *l == "start").count()
}

/// The most processes alive at once, from a log of `start` and `stop`.
fn most_at_once(said: &[String]) -> usize {
    let mut alive = 0usize;
    let mut most = 0;
    for l in said {
        match l.as_str() {
            "start" => alive += 1,
            "stop" => alive = alive.saturating_sub(1),
            _ => {}
        }
        most = most.max(alive);
    }
    most
}

fn runs(lab: &Lab, tool: &str, dir: &Path, args: &[&str]) {
    let log = lab.root.join(format!("{tool}.log"));
    let env = [("STRATATEST_LOG", log.as_os_str())];
    let (code, out, err) = lab.run_with(tool, dir, args, &env);
    assert_eq!(code, 0, "{tool} {args:?}:\n{out}{err}");
}

#[test]
fn a_providers_schema_is_asked_once_per_package_and_its_process_started_when_needed() {
    let lab = Lab::new("schema-cache");
    let dir = lab.work_with("strata", &format!("{HEADER}{CONFIG}"));
    let log = lab.root.join("strata.log");
    runs(&lab, "strata", &dir, &["init", "-no-color"]);
    logged(&log);
    runs(
        &lab,
        "strata",
        &dir,
        &["apply", "-auto-approve", "-no-color"],
    );
    // The process asked for the schema serves the calls (Terraform stops
    // it and starts another for them).
    assert_eq!(logged(&log), ["start", "schema"], "the first run asks");
    let kept: Vec<_> = std::fs::read_dir(dir.join(".terraform/strata-schemas"))
        .expect("the schema is kept")
        .flatten()
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    runs(&lab, "strata", &dir, &["show", "-no-color"]);
    assert!(
        logged(&log).is_empty(),
        "show reads the kept schema, starts nothing"
    );
    runs(&lab, "strata", &dir, &["plan", "-no-color"]);
    assert_eq!(
        logged(&log),
        ["start"],
        "a plan starts the process, asks no schema"
    );
    // A saved plan carries the schemas of the types it used: shown or
    // applied where none is kept (a new checkout, `.terraform` made
    // anew), it asks the provider for none, and keeps none of its own.
    // (A change, or the apply would start nothing at all.)
    let changed = format!("{HEADER}{}", CONFIG.replace("one", "two"));
    std::fs::write(dir.join("main.tf"), changed).expect("write");
    runs(&lab, "strata", &dir, &["plan", "-out=p.plan", "-no-color"]);
    logged(&log);
    let kept = dir.join(".terraform/strata-schemas");
    std::fs::remove_dir_all(&kept).expect("kept schemas");
    runs(&lab, "strata", &dir, &["show", "p.plan", "-no-color"]);
    assert!(
        logged(&log).is_empty(),
        "a saved plan is shown by its schemas"
    );
    runs(&lab, "strata", &dir, &["apply", "-no-color", "p.plan"]);
    assert_eq!(logged(&log), ["start"], "applied, asked for no schema");
    assert!(
        !kept.exists(),
        "a plan's schemas are not kept as a package's"
    );
    // Another package (a file added beside the binary: its checksum
    // changes), installed anew: its schema is asked again.
    let package = lab.mirrored_binary();
    let package = package.parent().expect("package dir");
    std::fs::write(package.join("README"), "another package\n").expect("write");
    std::fs::remove_file(dir.join(".terraform.lock.hcl")).expect("lock");
    std::fs::remove_dir_all(dir.join(".terraform/providers")).expect("providers");
    runs(&lab, "strata", &dir, &["init", "-no-color"]);
    logged(&log);
    runs(&lab, "strata", &dir, &["plan", "-no-color"]);
    assert_eq!(logged(&log), ["start", "schema"], "a new package is asked");
    std::fs::remove_file(package.join("README")).expect("remove");
}

/// `strata test` with the provider mocked asks it nothing and starts no
/// process: the mock takes each schema it needs from the kept ones, one
/// type at a time (it once asked a process for every type's names,
/// starting the provider and reading its whole schema again). Terraform
/// gives the same verdict.
#[test]
fn a_mocked_provider_starts_no_process() {
    let lab = Lab::new("schema-cache-mock");
    let dir = lab.work_with("strata", &format!("{HEADER}{CONFIG}"));
    let log = lab.root.join("strata.log");
    std::fs::create_dir_all(dir.join("tests")).expect("tests dir");
    std::fs::write(
        dir.join("tests/mocked.tftest.hcl"),
        r#"
mock_provider "stratatest" {}

run "made" {
  assert {
    condition     = stratatest_object.o.name == "one"
    error_message = "the name is the configuration's"
  }
}
"#,
    )
    .expect("test file");
    runs(&lab, "strata", &dir, &["init", "-no-color"]);
    // The schema asked once, as every first run of a package asks it.
    runs(&lab, "strata", &dir, &["validate", "-no-color"]);
    logged(&log);
    runs(&lab, "strata", &dir, &["test", "-no-color"]);
    assert!(logged(&log).is_empty(), "the mocked provider was started");
    let tf = lab.work_with("terraform", &format!("{HEADER}{CONFIG}"));
    std::fs::create_dir_all(tf.join("tests")).expect("tests dir");
    std::fs::copy(
        dir.join("tests/mocked.tftest.hcl"),
        tf.join("tests/mocked.tftest.hcl"),
    )
    .expect("copy");
    runs(&lab, "terraform", &tf, &["init", "-no-color"]);
    runs(&lab, "terraform", &tf, &["test", "-no-color"]);
}

/// An aliased configuration of the test provider, `a{i}`, and an object
/// through it.
fn aliased(i: usize) -> String {
    format!("provider \"stratatest\" {{\n  alias = \"a{i}\"\n  store = \"./store\"\n}}\n\nresource \"stratatest_object\" \"o{i}\" {{\n  provider = stratatest.a{i}\n  name     = \"o{i}\"\n}}\n")
}

/// A lab whose configuration has `n` aliased configurations, initialised
/// and validated (its schema kept): the lab, its directory and the
/// provider's log, emptied.
fn aliased_lab(tag: &str, n: usize) -> (Lab, std::path::PathBuf, std::path::PathBuf) {
    let aliases: String = (1..=n).map(aliased).collect();
    let lab = Lab::new(tag);
    let dir = lab.work_with("strata", &format!("{HEADER}\n{aliases}"));
    let log = lab.root.join("strata.log");
    runs(&lab, "strata", &dir, &["init", "-no-color"]);
    runs(&lab, "strata", &dir, &["validate", "-no-color"]);
    lived(&log);
    (lab, dir, log)
}

/// Configurations the run uses are configured side by side: with three
/// aliased configurations, each a process whose configure takes a second,
/// a second configure begins before the first ends (one after another
/// they took a quarter second each with the AWS provider, seconds for
/// twenty aliases).
#[test]
fn aliased_configurations_are_configured_side_by_side() {
    let (lab, dir, log) = aliased_lab("schema-cache-side-by-side", 3);
    let env = [
        ("STRATATEST_LOG", log.as_os_str()),
        ("STRATATEST_CONFIGURE_MS", std::ffi::OsStr::new("1000")),
    ];
    let (code, out, err) = lab.run_with("strata", &dir, &["plan", "-no-color"], &env);
    assert_eq!(code, 0, "{out}{err}");
    let said: Vec<String> = logged(&log)
        .into_iter()
        .filter(|l| l.starts_with("configure"))
        .collect();
    assert_eq!(said.len(), 6, "three configures: {said:?}");
    let before_first_end = said.iter().take_while(|l| *l == "configure").count();
    assert!(before_first_end >= 2, "one after another: {said:?}");
}

/// Twelve aliased configurations, one object each: a plan starts each
/// process once, a few ahead of the walk, and stops each as the walk
/// passes its object while others wait, so no more than [`FEW`] are
/// alive at once (Terraform keeps all twelve to the end of its walk:
/// hashicorp/terraform#32744, a quarter gigabyte each of the AWS
/// provider's) — the first plan, and one after the apply, whose objects
/// are read back as the walk opens each configuration. An apply's plan
/// keeps the processes of configurations with a change for its apply
/// (each started once) and stops the others as a plan does; a
/// configuration refused is told once, at its block.
#[test]
fn a_plan_keeps_few_provider_processes_alive() {
    let (lab, dir, log) = aliased_lab("schema-cache-lifetimes", 12);
    runs(&lab, "strata", &dir, &["plan", "-no-color"]);
    let said = lived(&log);
    assert_eq!(starts(&said), 12, "each started once: {said:?}");
    let most = most_at_once(&said);
    assert!((2..=FEW).contains(&most), "{most} alive at once: {said:?}");
    // Every configuration planned a create: the plan keeps its process
    // for the apply rather than stop it and start another (24 starts).
    // Then, with nothing to apply, nothing is kept: as few alive as in a
    // plan.
    let apply = || {
        let args = ["apply", "-auto-approve", "-no-color"];
        runs(&lab, "strata", &dir, &args);
        let said = lived(&log);
        assert_eq!(starts(&said), 12, "each started once: {said:?}");
        said
    };
    apply();
    let said = apply();
    let most = most_at_once(&said);
    assert!((2..=FEW).contains(&most), "{most} alive at once: {said:?}");
    // After the apply each configuration's object is read back as the
    // walk opens it, not all of them first: as few alive, and an object
    // deleted outside strata is seen (and nothing else changes).
    let gone: Vec<_> = std::fs::read_dir(dir.join("store"))
        .expect("store")
        .flatten()
        .filter(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("\"o7\"")))
        .collect();
    assert_eq!(gone.len(), 1, "o7's file in the store");
    std::fs::remove_file(gone[0].path()).expect("remove");
    let (code, out, err) = lab.run_with(
        "strata",
        &dir,
        &["plan", "-no-color"],
        &[("STRATATEST_LOG", log.as_os_str())],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("stratatest_object.o7 has been deleted"),
        "{out}"
    );
    assert!(out.contains("1 to add, 0 to change, 0 to destroy"), "{out}");
    let said = lived(&log);
    assert_eq!(starts(&said), 12, "each started once: {said:?}");
    let most = most_at_once(&said);
    assert!((2..=FEW).contains(&most), "{most} alive at once: {said:?}");
    // One configuration refused (its store cannot be opened): told once,
    // at its block, and the others planned.
    let broken = format!(
        "{HEADER}\n{}{}",
        aliased(1),
        aliased(2).replace("./store", "/dev/null/store")
    );
    std::fs::write(dir.join("main.tf"), broken).expect("write");
    let (code, out, err) = lab.run_with("strata", &dir, &["plan", "-no-color"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        err.matches("Invalid stratatest provider configuration")
            .count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("store = \"/dev/null/store\""),
        "at its block: {err}"
    );
}

/// Ctrl-C while the plan's walk is opening configurations (each configure
/// takes 0.4 s): the walk stops at its next node, the interrupt is said
/// once, nothing is planned or shown (no drift from the objects read so
/// far), and every process started was asked to stop, none left to be
/// killed with strata (the provider logs `stop` only when asked).
#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_plan_stops_every_provider_it_opened() {
    let (lab, dir, log) = aliased_lab("schema-cache-interrupted", 12);
    runs(
        &lab,
        "strata",
        &dir,
        &["apply", "-auto-approve", "-no-color"],
    );
    lived(&log);
    let strata = run::strata(&dir)
        .args(["plan", "-no-color"])
        .env("TF_CLI_CONFIG_FILE", &lab.cli)
        .env("TMPDIR", lab.tmp())
        .env("STRATATEST_LOG", &log)
        .env("STRATATEST_CONFIGURE_MS", "400")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("strata");
    let started = std::time::Instant::now();
    let configured = || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        text.lines().filter(|l| *l == "configured").count()
    };
    while configured() < 2 && started.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(configured() >= 2, "the walk opened nothing");
    unsafe { libc::kill(strata.id() as libc::pid_t, libc::SIGINT) };
    let ended = strata.wait_with_output().expect("wait");
    let (out, err) = (
        String::from_utf8_lossy(&ended.stdout),
        String::from_utf8_lossy(&ended.stderr),
    );
    assert_eq!(ended.status.code(), Some(1), "{out}{err}");
    assert_eq!(err.matches("execution halted").count(), 1, "{err}");
    assert!(
        !out.contains("has changed") && !out.contains("Plan:"),
        "{out}"
    );
    let said = lived(&log);
    let (started, stops) = (starts(&said), said.iter().filter(|l| *l == "stop").count());
    assert!(started < 12, "interrupted before the last: {said:?}");
    assert_eq!(started, stops, "each asked to stop: {said:?}");
}

/// Terraform's starts and schema calls for the same commands, printed
/// beside strata's (not asserted: they are Terraform's business).
#[test]
fn terraforms_starts_and_schema_calls_for_the_same_commands() {
    if !oracle::require_terraform("terraforms_starts_and_schema_calls") {
        return;
    }
    let lab = Lab::new("schema-cache-tf");
    for tool in ["terraform", "strata"] {
        let dir = lab.work_with(tool, &format!("{HEADER}{CONFIG}"));
        let log = lab.root.join(format!("{tool}.log"));
        runs(&lab, tool, &dir, &["init", "-no-color"]);
        logged(&log);
        for args in [
            &["apply", "-auto-approve", "-no-color"][..],
            &["show", "-no-color"],
            &["plan", "-no-color"],
        ] {
            runs(&lab, tool, &dir, args);
            let said = logged(&log);
            let started = starts(&said);
            let schemas = said.iter().filter(|l| *l == "schema").count();
            println!(
                "{tool} {}: {started} starts, {schemas} GetProviderSchema",
                args[0]
            );
        }
    }
}

/// A configuration nothing uses is neither configured nor started, as
/// Terraform prunes it: with only aliased blocks, the implied default
/// (which the provider would refuse: its `store` is required, "No
/// store"); beside an aliased one, a default block no resource names.
/// Terraform applies both configurations too.
#[test]
fn a_provider_configuration_nothing_uses_is_not_started() {
    let required = &HEADER[..HEADER.find("provider \"stratatest\"").expect("a block")];
    let aliased = "provider \"stratatest\" {\n  alias = \"other\"\n  store = \"./store\"\n}\n\nresource \"stratatest_object\" \"o\" {\n  provider = stratatest.other\n  name     = \"one\"\n}\n";
    let lab = Lab::new("schema-cache-aliased");
    let mut tools = vec!["strata"];
    if oracle::require_terraform("a_provider_configuration_nothing_uses_is_not_started") {
        tools.push("terraform");
    }
    for (case, config) in [
        ("implied", format!("{required}{aliased}")),
        ("block", format!("{HEADER}\n{aliased}")),
    ] {
        for tool in &tools {
            let dir = lab.work_with(&format!("{tool}-{case}"), &config);
            let log = lab.root.join(format!("{tool}.log"));
            runs(&lab, tool, &dir, &["init", "-no-color"]);
            logged(&log);
            runs(&lab, tool, &dir, &["apply", "-auto-approve", "-no-color"]);
            // No schema kept yet: the process asked for it is the one the
            // aliased configuration takes (Terraform starts another).
            let first = logged(&log);
            if *tool == "strata" {
                assert_eq!(first, ["start", "schema"], "{case}: the first apply");
            }
            runs(&lab, tool, &dir, &["plan", "-no-color"]);
            let starts = starts(&logged(&log));
            println!("{tool} plan ({case} default): {starts} starts");
            if *tool == "strata" {
                assert_eq!(starts, 1, "{case}: one process, the alias's");
            }
            runs(&lab, tool, &dir, &["destroy", "-auto-approve", "-no-color"]);
            let left = std::fs::read_dir(dir.join("store")).expect("store").count();
            assert_eq!(left, 0, "{tool} destroyed the object");
        }
    }
}

/// A package is checked against the lock file on every run, and its
/// files' digests are kept by their identity in the user's cache
/// (`$XDG_CACHE_HOME/strata/digests.json`), so the provider's binary is
/// not read again while it is untouched: a kept digest made wrong makes
/// the check fail, which it could not if the binary were read, and
/// another working directory's init takes the same digest. Touched (its
/// change time moves), the binary is read again and the check passes.
#[test]
fn an_untouched_package_is_checked_by_its_kept_digests() {
    let lab = Lab::new("schema-cache-digests");
    // The lab's mirror links the built provider; this test's is a copy of
    // its own, new, that it may touch.
    let binary = lab.mirrored_binary();
    std::fs::remove_file(&binary).expect("link");
    std::fs::copy(lab::provider_binary(), &binary).expect("copy");
    let cache = lab.root.join("cache");
    let strata = |dir: &Path, args: &[&str]| {
        let env = [("XDG_CACHE_HOME", cache.as_os_str())];
        lab.run_with("strata", dir, args, &env)
    };
    let ok = |dir: &Path, args: &[&str]| {
        let (code, out, err) = strata(dir, args);
        assert_eq!(code, 0, "{args:?}:\n{out}{err}");
    };
    let first = lab.work_with("strata", &format!("{HEADER}{CONFIG}"));
    ok(&first, &["init", "-no-color"]);
    let memo = cache.join("strata/digests.json");
    // A file changed in the last two seconds is hashed but not kept.
    ok(&first, &["validate", "-no-color"]);
    assert!(!memo.exists(), "a package just installed is not kept");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    ok(&first, &["validate", "-no-color"]);
    let kept = std::fs::read_to_string(&memo).expect("digests kept");
    let entries: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&kept).expect("json");
    let key = binary.canonicalize().expect("binary").display().to_string();
    let sha = entries
        .get(&key)
        .and_then(|entry| entry["sha256"].as_str())
        .unwrap_or_else(|| panic!("{key}'s digest is kept: {kept}"))
        .to_string();
    std::fs::write(&memo, kept.replace(&sha, &"0".repeat(64))).expect("write");
    let (code, _, err) = strata(&first, &["validate", "-no-color"]);
    assert_eq!(code, 1, "the kept digest is the one checked:\n{err}");
    assert!(err.contains("does not match any of the checksums"), "{err}");
    let second = lab.work_with("strata-second", &format!("{HEADER}{CONFIG}"));
    ok(&second, &["init", "-no-color"]);
    let locked = |dir: &Path| std::fs::read_to_string(dir.join(".terraform.lock.hcl"));
    assert_ne!(
        locked(&first).expect("lock file"),
        locked(&second).expect("lock file"),
        "the second directory's init took the kept (wrong) digest"
    );
    // Touched: the identity changes, the binary is read, the check passes.
    let file = std::fs::File::options()
        .append(true)
        .open(&binary)
        .expect("open");
    file.set_modified(std::time::SystemTime::now())
        .expect("touch");
    drop(file);
    ok(&first, &["validate", "-no-color"]);
}
