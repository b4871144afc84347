//! The same configurations applied step by step under strata and under
//! Terraform must agree on the action planned for every address, on output
//! changes, and on the outputs after each apply; a final step destroys.
//!
//! Each case is `tests/engine/<case>/<step>/` (a configuration, with
//! `expect-error` holding a phrase strata's error must contain when the
//! step must fail, and `flags` the step's plan flags in Terraform's
//! spelling, one per line: `-target=…`, `-replace=…`, `-refresh-only`).
//! Both tools apply the plan they saved, so what a saved plan carries
//! (its scope, its mode) is what is applied. `expected.txt` per case is Terraform's record of the
//! run: `stored_records_agree` checks strata against it without Terraform;
//! `live_terraform_agrees` makes the record again with the `terraform` on
//! PATH, so the stored files cannot drift from what Terraform does.

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;
use oracle::require_terraform;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/engine")
}

/// Every case, or (`STRATA_ENGINE_CASE=name`, while working on one) that
/// one alone.
fn cases() -> Vec<PathBuf> {
    let only = std::env::var("STRATA_ENGINE_CASE").ok();
    let mut v: Vec<PathBuf> = std::fs::read_dir(root())
        .expect("tests/engine")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .filter(|p| only.as_deref().is_none_or(|o| p.ends_with(o)))
        .collect();
    v.sort();
    v
}

/// A case's name: its folder's.
fn case_name(case: &Path) -> String {
    case.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

fn steps(case: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(case)
        .expect("case")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read step") {
        let p = e.expect("entry").path();
        let dest = to.join(p.file_name().expect("name"));
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else if !p.ends_with("expect-error") && !p.ends_with("flags") {
            // Configuration and fixtures (a state a data source reads).
            std::fs::copy(&p, &dest).expect("copy");
        }
    }
}

/// Replaces the configuration in `work` with the step's; a step with no
/// configuration files of its own keeps the last one (and changes, say,
/// only `terraform.tfvars`), and one without `modules/` keeps those.
fn stage(step: &Path, work: &Path) {
    let is_config = |p: &Path| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        name.ends_with(".tf") || name.ends_with(".tf.json")
    };
    let has_config = std::fs::read_dir(step)
        .expect("step")
        .any(|e| e.is_ok_and(|e| is_config(&e.path())));
    if !has_config {
        return copy_dir(step, work);
    }
    for e in std::fs::read_dir(work).expect("work") {
        let p = e.expect("entry").path();
        if is_config(&p) {
            std::fs::remove_file(&p).expect("rm");
        } else if p.is_dir()
            && p.file_name().is_some_and(|n| n == "modules")
            && step.join("modules").is_dir()
        {
            std::fs::remove_dir_all(&p).expect("rm -r");
        }
    }
    copy_dir(step, work);
}

/// Actions per address and per output, one line each, from plan JSON.
fn actions(plan: &Json) -> Vec<String> {
    let mut out = Vec::new();
    for rc in plan["resource_changes"].as_array().into_iter().flatten() {
        let acts: Vec<&str> = rc["change"]["actions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .collect();
        let mut line = format!(
            "{} {}",
            rc["address"].as_str().unwrap_or("?"),
            acts.join(",")
        );
        if let Some(p) = rc["previous_address"].as_str() {
            line.push_str(&format!(" (moved from {p})"));
        }
        out.push(line);
    }
    let mut outputs: Vec<(String, String)> = plan["output_changes"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let acts: Vec<&str> = v["actions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .collect();
            let mut line = acts.join(",");
            // What of a value is known while planning (where any of it is
            // not) is part of what must agree: count and for_each rest on it.
            let unknown = &v["after_unknown"];
            if !(unknown.is_null() || unknown == &Json::Bool(false)) {
                line.push_str(&format!(" planned {}", planned(&v["after"], unknown)));
            }
            (k.clone(), line)
        })
        .collect();
    outputs.sort();
    out.extend(outputs.into_iter().map(|(k, a)| format!("output.{k} {a}")));
    out
}

/// A planned value with `"(unknown)"` wherever `after_unknown` marks one.
fn planned(after: &Json, unknown: &Json) -> Json {
    match (after, unknown) {
        (_, Json::Bool(true)) => Json::String("(unknown)".into()),
        (Json::Array(items), Json::Array(marks)) => Json::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| planned(v, marks.get(i).unwrap_or(&Json::Null)))
                .collect(),
        ),
        (Json::Null, Json::Array(marks)) => {
            Json::Array(marks.iter().map(|m| planned(&Json::Null, m)).collect())
        }
        (after, Json::Object(marks)) => {
            let empty = serde_json::Map::new();
            let items = after.as_object().unwrap_or(&empty);
            let mut keys: Vec<&String> = items.keys().chain(marks.keys()).collect();
            keys.sort();
            keys.dedup();
            Json::Object(
                keys.into_iter()
                    .map(|k| {
                        let v = items.get(k).unwrap_or(&Json::Null);
                        (k.clone(), planned(v, marks.get(k).unwrap_or(&Json::Null)))
                    })
                    .collect(),
            )
        }
        (v, _) => v.clone(),
    }
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.stdin(Stdio::null()).output().expect("spawn");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A step's plan flags (`flags`, one per line).
fn flags(step: &Path) -> Vec<String> {
    std::fs::read_to_string(step.join("flags"))
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

trait Tool {
    /// Plan JSON, or the error text; the plan is saved for `apply`.
    fn plan(&self, dir: &Path, destroy: bool, flags: &[String]) -> Result<Json, String>;
    fn apply(&self, dir: &Path, destroy: bool) -> Result<(), String>;
    fn outputs(&self, dir: &Path) -> Json;
}

struct Strata;
struct Terraform;

fn strata_cmd(dir: &Path) -> Command {
    run::strata(dir)
}

impl Tool for Strata {
    fn plan(&self, dir: &Path, destroy: bool, flags: &[String]) -> Result<Json, String> {
        let mut c = strata_cmd(dir);
        c.args(["plan", "--format", "json", "--out", "strata.plan"]);
        if destroy {
            c.arg("--destroy");
        }
        c.args(flags);
        let (ok, out, err) = run(&mut c);
        if !ok {
            return Err(err);
        }
        serde_json::from_str(&out).map_err(|e| format!("plan JSON does not parse: {e}\n{out}"))
    }
    fn apply(&self, dir: &Path, destroy: bool) -> Result<(), String> {
        let mut c = strata_cmd(dir);
        match destroy {
            true => c.args(["destroy", "--auto-approve"]),
            false => c.args(["apply", "strata.plan"]),
        };
        let (ok, out, err) = run(&mut c);
        if ok {
            Ok(())
        } else {
            Err(format!("{out}{err}"))
        }
    }
    fn outputs(&self, dir: &Path) -> Json {
        let (_, out, _) = run(strata_cmd(dir).args(["output", "--json"]));
        serde_json::from_str(&out).unwrap_or(Json::Null)
    }
}

fn tf(dir: &Path) -> Command {
    let mut c = Command::new("terraform");
    c.current_dir(dir)
        .env("TF_IN_AUTOMATION", "1")
        .env("CHECKPOINT_DISABLE", "1");
    c
}

impl Tool for Terraform {
    fn plan(&self, dir: &Path, destroy: bool, flags: &[String]) -> Result<Json, String> {
        let (ok, _, err) = run(tf(dir).args(["init", "-backend=false", "-no-color"]));
        if !ok {
            return Err(err);
        }
        let mut c = tf(dir);
        c.args(["plan", "-no-color", "-out=tfplan"]);
        if destroy {
            c.arg("-destroy");
        }
        c.args(flags);
        let (ok, _, err) = run(&mut c);
        if !ok {
            return Err(err);
        }
        let (_, out, _) = run(tf(dir).args(["show", "-json", "tfplan"]));
        serde_json::from_str(&out).map_err(|e| e.to_string())
    }
    fn apply(&self, dir: &Path, _destroy: bool) -> Result<(), String> {
        let (ok, out, err) = run(tf(dir).args(["apply", "-no-color", "-auto-approve", "tfplan"]));
        if ok {
            Ok(())
        } else {
            Err(format!("{out}{err}"))
        }
    }
    fn outputs(&self, dir: &Path) -> Json {
        let (_, out, _) = run(tf(dir).args(["output", "-json"]));
        serde_json::from_str(&out).unwrap_or(Json::Null)
    }
}

/// Runs a case's steps (and a final destroy) with `tool`, returning the
/// record: per step the actions, then the outputs, or `error`.
fn record(case: &Path, tool: &dyn Tool, work: &Path) -> Vec<String> {
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(work).expect("work dir");
    let mut rec = Vec::new();
    let all = steps(case);
    for (i, step) in all.iter().chain(all.last()).enumerate() {
        let destroy = i == all.len();
        let name = if destroy {
            "destroy".to_string()
        } else {
            step.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        };
        rec.push(format!("== {name}"));
        if !destroy {
            stage(step, work);
        }
        let flags = if destroy { Vec::new() } else { flags(step) };
        if !flags.is_empty() {
            rec.push(format!("flags {}", flags.join(" ")));
        }
        match tool.plan(work, destroy, &flags) {
            Err(e) => {
                rec.push("error".into());
                let want = std::fs::read_to_string(step.join("expect-error")).unwrap_or_default();
                assert!(
                    !want.trim().is_empty() || destroy,
                    "{}: planning step {name} failed unexpectedly:\n{e}",
                    case.display()
                );
                assert!(
                    e.contains(want.trim()),
                    "{}: step {name} failed without saying {:?}:\n{e}",
                    case.display(),
                    want.trim()
                );
                continue;
            }
            Ok(plan) => rec.extend(actions(&plan)),
        }
        if let Err(e) = tool.apply(work, destroy) {
            panic!("{}: applying step {name} failed:\n{e}", case.display());
        }
        let outputs = tool.outputs(work);
        rec.push(format!(
            "outputs {}",
            serde_json::to_string(&outputs).unwrap_or_default()
        ));
    }
    rec
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-engine-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn compare(case: &Path, want: &[String], got: &[String], what: &str) {
    if want != got {
        let (w, g) = (want.join("\n") + "\n", got.join("\n") + "\n");
        let diff = similar::TextDiff::from_lines(&w, &g);
        panic!(
            "{}: strata disagrees with {what}:\n{}",
            case.display(),
            diff.unified_diff().header("terraform", "strata")
        );
    }
}

#[test]
fn stored_records_agree() {
    assert!(
        std::env::var_os("STRATA_ENGINE_CASE").is_some() || cases().len() >= 9,
        "the cases in tests/engine were not found"
    );
    for case in cases() {
        let stored = std::fs::read_to_string(case.join("expected.txt")).unwrap_or_else(|_| {
            panic!(
                "{} has no expected.txt; run the live test with terraform to make it",
                case.display()
            )
        });
        let want: Vec<String> = stored.lines().map(str::to_string).collect();
        let name = case_name(&case);
        let got = record(&case, &Strata, &scratch(&name));
        compare(&case, &want, &got, "the stored Terraform record");
    }
}

#[test]
fn live_terraform_agrees() {
    if !require_terraform("live_terraform_agrees") {
        return;
    }
    for case in cases() {
        let name = case_name(&case);
        let want = record(&case, &Terraform, &scratch(&format!("tf-{name}")));
        let file = case.join("expected.txt");
        if std::env::var_os("STRATA_UPDATE_RECORDS").is_some() {
            std::fs::write(&file, want.join("\n") + "\n").expect("write record");
        }
        let stored: Vec<String> = std::fs::read_to_string(&file)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        compare(
            &case,
            &want,
            &stored,
            "live Terraform (stored record is stale; STRATA_UPDATE_RECORDS=1 rewrites it)",
        );
    }
}

/// What each tool prints for one step: the plan as a person reads it, the
/// apply of the saved plan, and `show` of the state after it.
fn human_record(case: &Path, strata: bool, work: &Path) -> Vec<String> {
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(work).expect("work dir");
    let cmd = |args: &[&str]| -> (bool, String) {
        let mut c = match strata {
            true => strata_cmd(work),
            false => tf(work),
        };
        // Terraform warns on stderr when the CLI configuration is missing.
        c.env("TF_IN_AUTOMATION", "1")
            .env("TF_CLI_CONFIG_FILE", "/dev/null")
            .args(args);
        let (ok, out, err) = run(&mut c);
        (ok, out + &err)
    };
    let mut rec = Vec::new();
    let all = steps(case);
    for (i, step) in all.iter().chain(all.last()).enumerate() {
        let destroy = i == all.len();
        if !destroy {
            stage(step, work);
        }
        if !strata {
            let _ = cmd(&["init", "-backend=false", "-no-color"]);
        }
        let mut flags = if destroy {
            vec!["-destroy".to_string()]
        } else {
            flags(step)
        };
        flags.push("-no-color".into());
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let (ok, text) = cmd(&[&["plan"][..], &flags].concat());
        rec.push(format!("== {} plan", i));
        rec.extend(normalized(&text, ok));
        if !ok {
            continue;
        }
        let (_, _) = cmd(&[&["plan", "-out=human.plan"][..], &flags].concat());
        let (ok, text) = cmd(&["apply", "-no-color", "human.plan"]);
        rec.push(format!("== {} apply", i));
        rec.extend(normalized(&text, ok));
        let (ok, text) = cmd(&["show", "-no-color"]);
        rec.push(format!("== {} show", i));
        rec.extend(normalized(&text, ok));
    }
    rec
}

/// A tool's words made comparable: the product's name one, ids, times
/// and elapsed seconds masked, and the lines each tool prints in the order
/// its concurrent operations finished sorted; only an error's summary.
fn normalized(text: &str, ok: bool) -> Vec<String> {
    let uuid = regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        .expect("re");
    let secs = regex::Regex::new(r"(after |\[)\d+s( elapsed\])?").expect("re");
    let text = text
        .replace("Terraform", "strata")
        .replace("\"terraform ", "\"strata ")
        .replace(" terraform plan", " strata plan");
    let text = uuid.replace_all(&text, "<id>");
    let deposed = regex::Regex::new(r"deposed object [0-9a-f]{8}").expect("re");
    let text = deposed.replace_all(&text, "deposed object <key>");
    let text = secs.replace_all(&text, "${1}Ns${2}");
    if !ok {
        return text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("Error: ") || l.starts_with("× "))
            .map(|l| {
                l.trim_start_matches("Error: ")
                    .trim_start_matches("× ")
                    .to_string()
            })
            .map(|l| format!("error: {}", l.split(" (at ").next().unwrap_or_default()))
            // A cycle's members come in no fixed order.
            .map(|l| match l.strip_prefix("error: Cycle: ") {
                Some(members) => {
                    let mut m: Vec<&str> = members.split(", ").collect();
                    m.sort();
                    format!("error: Cycle: {}", m.join(", "))
                }
                None => l,
            })
            .collect();
    }
    let concurrent = |l: &str| {
        [
            ": Refreshing state...",
            ": Reading...",
            ": Read complete",
            ": Preparing import",
            ": Creating...",
            ": Creation complete",
            ": Modifying...",
            ": Modifications complete",
            ": Destroying...",
            ": Destruction complete",
            ": Still ",
        ]
        .iter()
        .any(|m| l.contains(m))
    };
    let mut out: Vec<String> = Vec::new();
    let mut block: Vec<String> = Vec::new();
    for l in text.lines() {
        if concurrent(l) {
            block.push(l.to_string());
            continue;
        }
        block.sort();
        out.append(&mut block);
        out.push(l.to_string());
    }
    block.sort();
    out.append(&mut block);
    // Prose is wrapped at 78 columns around the product's name, whose two
    // spellings differ in length: a paragraph is compared as one line.
    let prose = |l: &str| {
        l.starts_with(|c: char| c.is_ascii_alphabetic())
            && !l.contains(" = ")
            && !l.ends_with('{')
            && !concurrent(l)
    };
    let mut joined: Vec<String> = Vec::new();
    for l in out {
        match joined.last_mut() {
            Some(prev) if prose(prev) && prose(&l) => {
                prev.push(' ');
                prev.push_str(&l);
            }
            _ => joined.push(l),
        }
    }
    joined
}

/// The human plan, apply and show of every comparison case beside live
/// Terraform's, after [`normalized`]: identical. Every case is compared
/// before the test fails, so one run names every difference.
#[test]
fn human_outputs_agree_with_live_terraform() {
    if !require_terraform("human_outputs_agree_with_live_terraform") {
        return;
    }
    let mut wrong = Vec::new();
    for case in cases() {
        let name = case_name(&case);
        let want = human_record(&case, false, &scratch(&format!("human-tf-{name}")));
        let got = human_record(&case, true, &scratch(&format!("human-{name}")));
        let caught =
            std::panic::catch_unwind(|| compare(&case, &want, &got, "Terraform's human output"));
        if let Err(e) = caught {
            wrong.push(e.downcast_ref::<String>().cloned().unwrap_or_default());
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
