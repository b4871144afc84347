//! Plan renderings: insta snapshots of the human, JSON and markdown forms;
//! the plan JSON compared section by section with Terraform's own plan of
//! the same configuration and state (stored, and made live when
//! `terraform` is on PATH, where the human form must also match
//! Terraform's line for line); the markdown form within GitHub's limit.

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;
use oracle::require_terraform;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/render/changes")
}

/// A scratch copy of the fixture configuration and its prior state.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-render-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    std::fs::copy(fixture().join("main.tf"), d.join("main.tf")).expect("config");
    std::fs::copy(fixture().join("prior.tfstate"), d.join("terraform.tfstate")).expect("state");
    d
}

fn strata(dir: &Path, args: &[&str]) -> String {
    let out = run::strata(dir).args(args).output().expect("strata runs");
    assert!(
        out.status.success(),
        "strata {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Plan JSON without what changes from run to run.
fn stable_json(text: &str) -> Json {
    let mut j: Json = serde_json::from_str(text).expect("plan JSON parses");
    let o = j.as_object_mut().expect("an object");
    o.shift_remove("timestamp");
    o.shift_remove("strata_version");
    o.shift_remove("terraform_version");
    o.shift_remove("relevant_attributes");
    if let Some(p) = o.get_mut("prior_state").and_then(Json::as_object_mut) {
        p.shift_remove("terraform_version");
    }
    j
}

#[test]
fn every_action_in_each_rendering() {
    let d = scratch("all");
    insta::assert_snapshot!("changes_human", strata(&d, &["plan"]));
    insta::assert_snapshot!(
        "changes_markdown",
        strata(&d, &["plan", "--format", "markdown"])
    );
    let json = stable_json(&strata(&d, &["plan", "--format", "json"]));
    insta::assert_snapshot!(
        "changes_json",
        serde_json::to_string_pretty(&json).unwrap_or_default()
    );
    insta::assert_snapshot!("destroy_human", strata(&d, &["plan", "--destroy"]));
    std::fs::remove_file(d.join("terraform.tfstate")).expect("rm state");
    insta::assert_snapshot!("create_human", strata(&d, &["plan"]));
}

#[test]
fn no_changes_reads_as_terraform_says_it() {
    let d = scratch("nochange");
    std::fs::write(
        d.join("main.tf"),
        "resource \"terraform_data\" \"a\" {\n  input = 1\n}\n",
    )
    .expect("config");
    std::fs::remove_file(d.join("terraform.tfstate")).expect("rm state");
    strata(&d, &["apply", "--auto-approve"]);
    // The object's id is new with every run.
    let id = regex::Regex::new("id=[0-9a-f-]{36}").expect("regex");
    let plan = strata(&d, &["plan"]);
    insta::assert_snapshot!("no_changes_human", id.replace_all(&plan, "id=ID"));
    insta::assert_snapshot!(
        "no_changes_markdown",
        strata(&d, &["plan", "--format", "markdown"])
    );
}

/// The sections of Terraform's plan JSON that must be equal.
const SECTIONS: [&str; 7] = [
    "format_version",
    "variables",
    "planned_values",
    "resource_changes",
    "output_changes",
    "prior_state",
    "configuration",
];

/// Sets to null what `mask` (Terraform's `*_sensitive` shape) marks.
fn blank(v: &mut Json, mask: &Json) {
    match (v, mask) {
        (v, Json::Bool(true)) => *v = Json::Null,
        (Json::Object(o), Json::Object(m)) => {
            for (k, x) in o.iter_mut() {
                if let Some(mk) = m.get(k) {
                    blank(x, mk);
                }
            }
        }
        (Json::Array(a), Json::Array(m)) => {
            for (x, mk) in a.iter_mut().zip(m) {
                blank(x, mk);
            }
        }
        _ => {}
    }
}

/// Terraform's plan JSON as strata writes it: with sensitive values left
/// out (null), which Terraform prints in clear — strata's one deliberate
/// difference in these sections (README, known divergences).
fn at<'j>(w: &'j mut Json, keys: &[&str]) -> Option<&'j mut Json> {
    keys.iter().try_fold(w, |v, k| v.get_mut(*k))
}

fn without_secrets(want: &Json) -> Json {
    let mut w = want.clone();
    // Indexing a JSON value mutably adds the key: only `get_mut` here.
    fn modules(m: Option<&mut Json>) {
        let Some(m) = m else { return };
        if let Some(rs) = m.get_mut("resources").and_then(Json::as_array_mut) {
            for r in rs {
                let mask = r["sensitive_values"].clone();
                if let Some(v) = r.get_mut("values") {
                    blank(v, &mask);
                }
            }
        }
        if let Some(cs) = m.get_mut("child_modules").and_then(Json::as_array_mut) {
            for c in cs {
                modules(Some(c));
            }
        }
    }
    fn outputs(o: Option<&mut Json>) {
        let Some(o) = o else { return };
        for x in o.as_object_mut().into_iter().flat_map(|m| m.values_mut()) {
            if x["sensitive"] == Json::Bool(true) && x.get("value").is_some() {
                x["value"] = Json::Null;
            }
        }
    }
    let change = |c: &mut Json| {
        let (b, a) = (c["before_sensitive"].clone(), c["after_sensitive"].clone());
        if let Some(x) = c.get_mut("before") {
            blank(x, &b);
        }
        if let Some(x) = c.get_mut("after") {
            blank(x, &a);
        }
    };
    for key in ["resource_changes", "resource_drift"] {
        if let Some(cs) = w.get_mut(key).and_then(Json::as_array_mut) {
            for c in cs {
                if let Some(c) = c.get_mut("change") {
                    change(c);
                }
            }
        }
    }
    if let Some(o) = w.get_mut("output_changes").and_then(Json::as_object_mut) {
        o.values_mut().for_each(change);
    }
    modules(at(&mut w, &["planned_values", "root_module"]));
    outputs(at(&mut w, &["planned_values", "outputs"]));
    modules(at(&mut w, &["prior_state", "values", "root_module"]));
    outputs(at(&mut w, &["prior_state", "values", "outputs"]));
    let declared = w["configuration"]["root_module"]["variables"].clone();
    if let Some(vars) = w.get_mut("variables").and_then(Json::as_object_mut) {
        for (k, v) in vars {
            if declared[k.as_str()]["sensitive"] == Json::Bool(true) {
                v["value"] = Json::Null;
            }
        }
    }
    if let Some(vars) =
        at(&mut w, &["configuration", "root_module", "variables"]).and_then(Json::as_object_mut)
    {
        for v in vars.values_mut() {
            if v["sensitive"] == Json::Bool(true) && v.get("default").is_some() {
                v["default"] = Json::Null;
            }
        }
    }
    w
}

fn assert_same_sections(want: &Json, got: &Json, what: &str) {
    // Both sides, as one may be Terraform's own (a live plan against the
    // stored one); strata's has nothing to take out.
    let (want, got) = (&without_secrets(want), &without_secrets(got));
    for s in SECTIONS {
        if want[s] != got[s] {
            let w = serde_json::to_string_pretty(&want[s]).unwrap_or_default();
            let g = serde_json::to_string_pretty(&got[s]).unwrap_or_default();
            panic!(
                "plan JSON section {s:?} differs from {what}:\n{}",
                similar::TextDiff::from_lines(&w, &g)
                    .unified_diff()
                    .header("terraform", "strata")
            );
        }
    }
    // Nothing of Terraform's layout is missing.
    let (w, g) = (
        want.as_object().expect("object"),
        got.as_object().expect("object"),
    );
    for k in w.keys() {
        assert!(g.contains_key(k), "strata's plan JSON lacks {k:?}");
    }
}

#[test]
fn plan_json_is_terraforms() {
    let d = scratch("json");
    let got = stable_json(&strata(&d, &["plan", "--format", "json"]));
    let want = stable_json(
        &std::fs::read_to_string(fixture().join("terraform-plan.json")).expect("reference"),
    );
    assert_same_sections(&want, &got, "Terraform's stored plan");
}

fn terraform(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("terraform")
        .args(args)
        .current_dir(dir)
        .env("CHECKPOINT_DISABLE", "1")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "terraform {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn live_terraform_plans_the_same_text_and_json() {
    let d = scratch("live");
    if !require_terraform("live_terraform_plans_the_same_text_and_json") {
        return;
    }
    // The same state, as Terraform names its fields.
    let mut st: Json =
        serde_json::from_str(&std::fs::read_to_string(d.join("terraform.tfstate")).expect("state"))
            .expect("json");
    let o = st.as_object_mut().expect("object");
    o.remove("strata_version");
    o.insert("terraform_version".into(), Json::String("1.11.4".into()));
    std::fs::write(
        d.join("terraform.tfstate"),
        serde_json::to_string_pretty(&st).expect("json"),
    )
    .expect("write");
    terraform(&d, &["init", "-backend=false", "-no-color"]);
    terraform(&d, &["plan", "-no-color", "-out=tfplan"]);
    let text = terraform(&d, &["show", "-no-color", "tfplan"]).expect("show");
    let want = text.trim_start_matches('\n').replace("Terraform", "strata");
    // Like for like: a saved plan shown (a plan's run adds its refresh
    // lines, in Terraform in the order its reads finish, and its note).
    strata(&d, &["plan", "--out", "s.plan"]);
    let got = strata(&d, &["show", "s.plan"]);
    if want != got {
        panic!(
            "strata's plan text differs from terraform's:\n{}",
            similar::TextDiff::from_lines(&want, &got)
                .unified_diff()
                .header("terraform", "strata")
        );
    }
    let want = stable_json(&terraform(&d, &["show", "-json", "tfplan"]).expect("json"));
    let stored = stable_json(
        &std::fs::read_to_string(fixture().join("terraform-plan.json")).expect("reference"),
    );
    assert_same_sections(
        &want,
        &stored,
        "the live plan (the stored reference is stale)",
    );
    let got = stable_json(&strata(&d, &["plan", "--format", "json"]));
    assert_same_sections(&want, &got, "Terraform's live plan");
}

#[test]
fn a_markdown_plan_fits_one_comment_and_keeps_its_summary() {
    let d = scratch("big");
    std::fs::remove_file(d.join("terraform.tfstate")).expect("rm state");
    let long = "x".repeat(200);
    std::fs::write(
        d.join("main.tf"),
        format!("resource \"terraform_data\" \"n\" {{\n  count = 2000\n  input = \"{long}-${{count.index}}\"\n}}\n"),
    )
    .expect("config");
    let md = strata(&d, &["plan", "--format", "markdown"]);
    assert!(
        md.chars().count() <= 65_536,
        "{} characters",
        md.chars().count()
    );
    assert!(
        md.starts_with("### strata plan: 2000 to add, 0 to change, 0 to destroy\n"),
        "{}",
        &md[..200]
    );
    assert!(md.contains("the plan is cut here"), "a cut plan says so");
    assert!(
        md.trim_end()
            .ends_with("</details>\n\n<!-- strata:report kind=plan label=strata:changes -->"),
        "the collapsed block is closed, and the hidden line for `strata comment` follows"
    );
}
