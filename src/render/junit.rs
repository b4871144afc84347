//! `strata test -junit-xml=FILE`: the test's outcome as a JUnit XML
//! report, laid out as Terraform (1.12+) writes it
//! (`internal/command/junit`): a `testsuite` per test file, sorted by
//! name, a `testcase` per run with the file as its class name, a failure
//! saying how many assertions failed, an error with the run's errors,
//! other diagnostics in `system-err`, and why a run was skipped.

use crate::diag::{Diag, Sources};

/// How a run ended, as the report counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    Error,
    Skip,
}

/// When a run started (RFC 3339, whole seconds, UTC) and how long it took.
#[derive(Debug, Clone)]
pub struct Timing {
    pub started: String,
    pub seconds: f64,
}

/// One run block.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub verdict: Verdict,
    pub diags: Vec<Diag>,
    /// Its `assert` blocks.
    pub assertions: usize,
    /// None for a run that did not run.
    pub timing: Option<Timing>,
}

/// One test file.
#[derive(Debug, Clone)]
pub struct SuiteFile {
    pub name: String,
    pub cases: Vec<Case>,
    /// The file ended in error.
    pub errored: bool,
    /// What the file said itself (what its teardown could not destroy).
    pub diags: Vec<Diag>,
}

/// The code of a failed assertion's diagnostic: what a failure element
/// holds; everything else is an error or `system-err`.
const ASSERTION_FAILED: &str = "strata::test::assertion_failed";

/// The report: `interrupted` when a signal stopped the test (its runs not
/// run are skipped "due to an interrupt").
pub fn xml(files: &[SuiteFile], interrupted: bool, sources: &Sources) -> String {
    let mut sorted: Vec<&SuiteFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?><testsuites>");
    for f in sorted {
        suite(&mut out, f, interrupted, sources);
    }
    out.push_str("\n</testsuites>");
    out
}

fn suite(out: &mut String, f: &SuiteFile, interrupted: bool, sources: &Sources) {
    let count = |v: Verdict| f.cases.iter().filter(|c| c.verdict == v).count();
    out.push_str(&format!(
        "\n  <testsuite name=\"{}\" tests=\"{}\" skipped=\"{}\" failures=\"{}\" errors=\"{}\">",
        attr(&f.name),
        f.cases.len(),
        count(Verdict::Skip),
        count(Verdict::Fail),
        count(Verdict::Error)
    ));
    let file_errors = f.errored && f.diags.iter().any(|d| !d.warning);
    for (i, c) in f.cases.iter().enumerate() {
        let mut inner = Vec::new();
        match c.verdict {
            Verdict::Pass => {}
            Verdict::Skip => inner.push(("skipped", skipped(f, i, interrupted, file_errors))),
            Verdict::Fail => {
                let failed: Vec<&Diag> = c
                    .diags
                    .iter()
                    .filter(|d| d.code == ASSERTION_FAILED)
                    .collect();
                let message = failure_message(&failed, c.assertions);
                inner.push(("failure", (message, text(&failed, sources))));
            }
            Verdict::Error => {
                let errors: Vec<&Diag> = c.diags.iter().filter(|d| !d.warning).collect();
                inner.push((
                    "error",
                    ("Encountered an error".into(), text(&errors, sources)),
                ));
            }
        }
        let rest: Vec<&Diag> = match c.verdict {
            Verdict::Error => c.diags.iter().filter(|d| d.warning).collect(),
            _ => c
                .diags
                .iter()
                .filter(|d| d.code != ASSERTION_FAILED)
                .collect(),
        };
        if !rest.is_empty() {
            inner.push(("system-err", (String::new(), text(&rest, sources))));
        }
        case(out, f, c, &inner);
    }
    if file_errors {
        let all: Vec<&Diag> = f.diags.iter().collect();
        out.push_str("\n    ");
        element(out, "system-err", "", &text(&all, sources));
    }
    out.push_str("\n  </testsuite>");
}

fn case(out: &mut String, f: &SuiteFile, c: &Case, inner: &[(&str, (String, String))]) {
    out.push_str(&format!(
        "\n    <testcase name=\"{}\" classname=\"{}\"",
        attr(&c.name),
        attr(&f.name)
    ));
    if let Some(t) = &c.timing {
        if t.seconds > 0.0 {
            out.push_str(&format!(" time=\"{}\"", t.seconds));
        }
        out.push_str(&format!(" timestamp=\"{}\"", attr(&t.started)));
    }
    out.push('>');
    for (name, (message, body)) in inner {
        out.push_str("\n      ");
        element(out, name, message, body);
    }
    if !inner.is_empty() {
        out.push_str("\n    ");
    }
    out.push_str("</testcase>");
}

/// `<NAME message="…"><![CDATA[…]]></NAME>`, the message left out when
/// empty, the body when empty.
fn element(out: &mut String, name: &str, message: &str, body: &str) {
    out.push('<');
    out.push_str(name);
    if !message.is_empty() {
        out.push_str(&format!(" message=\"{}\"", attr(message)));
    }
    out.push('>');
    if !body.is_empty() {
        // A CDATA section cannot hold its own end: split it there.
        out.push_str(&format!(
            "<![CDATA[{}]]>",
            body.replace("]]>", "]]]]><![CDATA[>")
        ));
    }
    out.push_str(&format!("</{name}>"));
}

/// Why run `i` was skipped, as Terraform says it.
fn skipped(f: &SuiteFile, i: usize, interrupted: bool, file_errors: bool) -> (String, String) {
    if interrupted {
        return (
            "Testcase skipped due to an interrupt".into(),
            "strata received an interrupt and stopped gracefully. This caused all remaining testcases to be skipped".into(),
        );
    }
    if f.errored {
        if let Some(prior) = f.cases[..=i]
            .iter()
            .rev()
            .find(|c| c.verdict == Verdict::Error)
        {
            return (
                "Testcase skipped due to a previous testcase error".into(),
                format!(
                    "Previous testcase {:?} ended in error, which caused the remaining tests in the file to be skipped",
                    prior.name
                ),
            );
        }
        if file_errors {
            return (
                "Testcase skipped due to file-level errors".into(),
                String::new(),
            );
        }
    }
    (String::new(), String::new())
}

fn failure_message(failed: &[&Diag], assertions: usize) -> String {
    match failed {
        [] => String::new(),
        [one] => format!("1 of {assertions} assertions failed: {}", one.detail),
        [first, ..] => format!(
            "{} of {assertions} assertions failed, including: {}",
            failed.len(),
            first.detail
        ),
    }
}

/// Diagnostics as Terraform's plain text, one after another.
fn text(diags: &[&Diag], sources: &Sources) -> String {
    diags.iter().map(|d| d.terraform_text(sources)).collect()
}

/// An attribute value escaped as Go's XML encoder escapes it.
fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '\t' => out.push_str("&#x9;"),
            '\n' => out.push_str("&#xA;"),
            '\r' => out.push_str("&#xD;"),
            c => out.push(c),
        }
    }
    out
}
