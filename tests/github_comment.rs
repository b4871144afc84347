//! `strata comment --github` against a stand-in of GitHub's REST API
//! (testing/standin/src/github.rs): one comment per pull request, found
//! again and edited in place, the label following the plan, a plan too
//! long for a comment cut with its summary kept, and a drift issue opened,
//! updated and closed.

#[path = "common/run.rs"]
mod run;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use strata_standin::github::{self, GitHub};

const TOKEN: &str = "ghs_stand_in_token";
const PR: u64 = 7;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-github-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    std::fs::write(
        d.join("event.json"),
        format!(
            r#"{{"action": "synchronize", "number": {PR}, "pull_request": {{"number": {PR}}}}}"#
        ),
    )
    .expect("event");
    d
}

fn strata(dir: &Path, args: &[&str]) -> (i32, String) {
    run::strata_in(dir, args)
}

/// `strata comment --github ARGS` with `report` on stdin, in GitHub
/// Actions' environment.
fn comment(dir: &Path, gh: &GitHub, token: &str, report: &str, args: &[&str]) -> (i32, String) {
    let mut c = run::strata(dir);
    c.arg("comment")
        .arg("--github")
        .args(args)
        .env("GITHUB_TOKEN", token)
        .env("GITHUB_REPOSITORY", &gh.repository)
        .env("GITHUB_EVENT_PATH", dir.join("event.json"))
        .env("GITHUB_API_URL", &gh.server.url)
        .env("GITHUB_SERVER_URL", "https://github.example")
        .env("GITHUB_RUN_ID", "4242")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("strata runs");
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(report.as_bytes()).expect("report to stdin");
    }
    let out = child.wait_with_output().expect("strata finishes");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn markdown_plan(dir: &Path, extra: &[&str]) -> String {
    let mut args = vec!["plan", "--format", "markdown"];
    args.extend(extra);
    let (code, out) = strata(dir, &args);
    assert_eq!(code, 0, "{out}");
    out
}

fn labels(gh: &GitHub) -> Vec<String> {
    gh.issues()
        .into_iter()
        .find(|i| i.number == PR)
        .map(|i| i.labels)
        .unwrap_or_default()
}

fn ours(gh: &GitHub) -> Vec<github::Comment> {
    gh.comments(PR)
        .into_iter()
        .filter(|c| c.body.contains("<!-- strata:comment"))
        .collect()
}

const CONFIG: &str = r#"
resource "terraform_data" "pool" {
  input = { gpu = "H100", count = 8 }
}
resource "terraform_data" "operator" {
  input = terraform_data.pool.output
}
"#;

#[test]
fn one_comment_per_pull_request_kept_up_to_date_with_its_label() {
    let gh = github::start("acme/gpu-infra", TOKEN, PR).expect("stand-in");
    let d = scratch("pr");
    std::fs::write(d.join("main.tf"), CONFIG).expect("config");

    // Others talk on the pull request first: strata's comment is then
    // on the listing's second page.
    for i in 0..3 {
        gh.comment_as_someone(PR, &format!("looks good {i}"));
    }
    // A first push: two creates.
    let report = markdown_plan(&d, &[]);
    let (code, out) = comment(&d, &gh, TOKEN, &report, &[]);
    assert_eq!(code, 0, "{out}");
    let first = ours(&gh);
    assert_eq!(first.len(), 1, "{first:?}");
    let body = &first[0].body;
    assert_eq!(
        body.lines().next(),
        Some("### strata plan: 2 to add, 0 to change, 0 to destroy")
    );
    assert!(
        body.contains("<details><summary>Full plan</summary>"),
        "{body}"
    );
    assert!(
        body.contains("(https://github.example/acme/gpu-infra/actions/runs/4242)"),
        "a link to the run:\n{body}"
    );
    assert!(
        out.contains("#issuecomment-"),
        "prints the comment's URL: {out}"
    );
    assert_eq!(labels(&gh), ["strata:changes"]);

    // The next push applies, and the same comment says there is nothing
    // to do.
    let (code, out) = strata(&d, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let report = markdown_plan(&d, &[]);
    let (code, out) = comment(&d, &gh, TOKEN, &report, &[]);
    assert_eq!(code, 0, "{out}");
    let now = ours(&gh);
    assert_eq!(now.len(), 1, "still one strata comment: {now:?}");
    assert_eq!(now[0].id, first[0].id, "edited in place");
    assert!(
        now[0].body.starts_with("### strata plan: no changes"),
        "{}",
        now[0].body
    );
    assert_eq!(labels(&gh), ["strata:no-changes"]);

    // A move alone is a change; so is an output alone.
    std::fs::write(
        d.join("main.tf"),
        CONFIG
            .replace("\"pool\"", "\"h100\"")
            .replace(".pool.", ".h100.")
            + "moved {\n  from = terraform_data.pool\n  to   = terraform_data.h100\n}\n",
    )
    .expect("config");
    let (code, out) = strata(&d, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "a moved-only plan has changes:\n{out}");
    let (code, out) = comment(&d, &gh, TOKEN, &markdown_plan(&d, &[]), &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(labels(&gh), ["strata:changes"], "moved only");
    let (code, out) = strata(&d, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    std::fs::OpenOptions::new()
        .append(true)
        .open(d.join("main.tf"))
        .and_then(|mut f| f.write_all(b"output \"gpu\" {\n  value = \"H100\"\n}\n"))
        .expect("an output");
    let (code, out) = comment(&d, &gh, TOKEN, &markdown_plan(&d, &[]), &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(labels(&gh), ["strata:changes"], "output only");

    // Destroying is labelled as such, with the warning first.
    let report = markdown_plan(&d, &["--destroy"]);
    let (code, out) = comment(&d, &gh, TOKEN, &report, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(labels(&gh), ["strata:destroy"]);
    let body = &ours(&gh)[0].body;
    assert!(body.contains("> [!WARNING]"), "{body}");
    assert_eq!(ours(&gh).len(), 1);

    // A second configuration's comment lives beside the first.
    let (code, out) = comment(&d, &gh, TOKEN, &report, &["--name", "staging"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(ours(&gh).len(), 2);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_plan_too_long_for_a_comment_keeps_its_summary() {
    let gh = github::start("acme/gpu-infra", TOKEN, PR).expect("stand-in");
    let d = scratch("long");
    let config: String = (0..300)
        .map(|i| {
            format!(
                "resource \"terraform_data\" \"r{i}\" {{\n  input = \"{}\"\n}}\n",
                "x".repeat(300)
            )
        })
        .collect();
    std::fs::write(d.join("main.tf"), config).expect("config");
    let report = markdown_plan(&d, &[]);
    let (code, out) = comment(&d, &gh, TOKEN, &report, &[]);
    assert_eq!(code, 0, "GitHub took it:\n{out}");
    let body = &ours(&gh)[0].body;
    assert!(body.chars().count() <= 65_536);
    assert!(
        body.starts_with("### strata plan: 300 to add"),
        "{}",
        &body[..200]
    );
    assert!(body.contains("the plan is cut here"), "says it was cut");
    assert_eq!(labels(&gh), ["strata:changes"]);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_drift_issue_is_opened_while_drift_lasts_and_closed_after() {
    let gh = github::start("acme/gpu-infra", TOKEN, PR).expect("stand-in");
    let d = scratch("drift");
    std::fs::write(d.join("main.tf"), CONFIG).expect("config");
    let (code, out) = strata(&d, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let (code, none) = strata(&d, &["drift", "--format", "markdown"]);
    assert_eq!(code, 0, "{none}");
    let title = "drift: prod";
    let (code, out) = comment(&d, &gh, TOKEN, &none, &["--issue", title]);
    assert_eq!(code, 0, "{out}");
    assert!(
        gh.issues().iter().all(|i| i.title != title),
        "no drift, no issue"
    );

    // terraform_data never drifts; the report is what `strata drift`
    // renders for a drifted object (its rendering is tested on its own).
    let drifted = "### strata drift: 1 changed, 0 deleted outside strata\n\n| resource | outside strata |\n| --- | --- |\n| `aws_vpc.main` | `tags[\"team\"]`: `\"ml\"` → `\"x\"` |\n\n<!-- strata:report kind=drift drift=true -->\n";
    let (code, out) = comment(&d, &gh, TOKEN, drifted, &["--issue", title]);
    assert_eq!(code, 0, "{out}");
    let opened: Vec<_> = gh
        .issues()
        .into_iter()
        .filter(|i| i.title == title)
        .collect();
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0].state, "open");
    assert_eq!(opened[0].labels, ["strata:drift"]);
    assert!(
        opened[0].body.contains("aws_vpc.main"),
        "{}",
        opened[0].body
    );
    let (code, out) = comment(&d, &gh, TOKEN, drifted, &["--issue", title]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        gh.issues().iter().filter(|i| i.title == title).count(),
        1,
        "the same issue, updated"
    );
    let (code, out) = comment(&d, &gh, TOKEN, &none, &["--issue", title]);
    assert_eq!(code, 0, "{out}");
    let closed: Vec<_> = gh
        .issues()
        .into_iter()
        .filter(|i| i.title == title)
        .collect();
    assert_eq!(closed[0].state, "closed", "{closed:?}");
    assert!(
        gh.comments(closed[0].number)
            .iter()
            .any(|c| c.body.contains("strata drift: none")),
        "says why it closed"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn comment_errors_say_what_is_missing() {
    let gh = github::start("acme/gpu-infra", TOKEN, PR).expect("stand-in");
    let d = scratch("errors");
    std::fs::write(d.join("main.tf"), CONFIG).expect("config");
    let report = markdown_plan(&d, &[]);
    let (code, out) = comment(&d, &gh, "wrong-token", &report, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Bad credentials"), "{out}");
    let (code, out) = comment(&d, &gh, "", &report, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("GITHUB_TOKEN is not set"), "{out}");
    let (code, out) = comment(&d, &gh, TOKEN, "just some text\n", &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("not a strata report"), "{out}");
    std::fs::write(d.join("event.json"), r#"{"schedule": "0 6 * * *"}"#).expect("event");
    let (code, out) = comment(&d, &gh, TOKEN, &report, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("not a pull request"), "{out}");
    assert!(gh.comments(PR).is_empty());
    let _ = std::fs::remove_dir_all(&d);
}
