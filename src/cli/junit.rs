//! `strata test -junit-xml=FILE`: the test's steps recorded as they come
//! (when each run began, how long it took) and the report written at the
//! end, as Terraform writes it once the test concludes — not when the
//! test could not start at all (no file is then written).

use crate::diag::{Diag, Diags, Sources};
use crate::engine::{TestStatus, TestStep};
use crate::render::junit::{Case, SuiteFile, Timing, Verdict};
use std::path::PathBuf;
use std::time::Instant;

pub struct Recorder {
    path: PathBuf,
    files: Vec<SuiteFile>,
    /// The run under way: when it began.
    began: Option<(String, Instant)>,
}

impl Recorder {
    pub fn new(path: PathBuf) -> Recorder {
        Recorder {
            path,
            files: Vec::new(),
            began: None,
        }
    }

    pub fn step(&mut self, step: &TestStep<'_>) {
        match step {
            TestStep::FileBegins(file) => self.files.push(SuiteFile {
                name: file.to_string(),
                cases: Vec::new(),
                errored: false,
                diags: Vec::new(),
            }),
            TestStep::RunBegins { .. } => self.began = Some((now(), Instant::now())),
            TestStep::Run {
                name,
                status,
                diags,
                assertions,
                ..
            } => {
                let timing = self.began.take().map(|(started, at)| Timing {
                    started,
                    seconds: at.elapsed().as_secs_f64(),
                });
                let case = Case {
                    name: name.to_string(),
                    verdict: verdict(*status),
                    diags: diags.0.clone(),
                    assertions: *assertions,
                    timing,
                };
                if let Some(f) = self.files.last_mut() {
                    f.cases.push(case);
                }
            }
            TestStep::FileDiags(_, diags) => {
                if let Some(f) = self.files.last_mut() {
                    f.diags.extend(diags.0.iter().cloned());
                }
            }
            TestStep::FileDone(_, status) => {
                if let Some(f) = self.files.last_mut() {
                    f.errored = *status == TestStatus::Error;
                }
            }
            TestStep::Found(_) | TestStep::TearingDown(_) | TestStep::RunTearingDown { .. } => {}
        }
    }

    /// Writes the report; `interrupted` when a signal stopped the test.
    pub fn save(&self, interrupted: bool, sources: &Sources) -> Result<(), Diags> {
        let xml = crate::render::junit::xml(&self.files, interrupted, sources);
        std::fs::write(&self.path, xml).map_err(|e| {
            Diags::from(Diag::new(
                "strata::test::junit",
                format!(
                    "error saving JUnit XML to file {:?}",
                    self.path.display().to_string()
                ),
                e.to_string(),
            ))
        })
    }
}

fn verdict(s: TestStatus) -> Verdict {
    match s {
        TestStatus::Pass => Verdict::Pass,
        TestStatus::Fail => Verdict::Fail,
        TestStatus::Error => Verdict::Error,
        TestStatus::Skip => Verdict::Skip,
    }
}

/// Now, as Terraform stamps a run: RFC 3339 in UTC, whole seconds.
fn now() -> String {
    let t = time::OffsetDateTime::now_utc();
    let t = t.replace_nanosecond(0).unwrap_or(t);
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The printer, with the report recorded beside what it shows.
pub struct Recording<'p> {
    pub printer: &'p mut super::printer::Printer,
    pub junit: Option<Recorder>,
}

impl crate::engine::View for Recording<'_> {
    fn notice(&mut self, notice: crate::engine::Notice) {
        self.printer.notice(notice)
    }
    fn plan(&mut self, shown: crate::engine::Shown<'_>, warnings: &[Diag], sources: &Sources) {
        self.printer.plan(shown, warnings, sources)
    }
    fn approve(&mut self, mode: crate::engine::Mode) -> bool {
        self.printer.approve(mode)
    }
    fn confirm(&mut self, question: &str) -> bool {
        self.printer.confirm(question)
    }
    fn progress(&self) -> fn(&str) {
        self.printer.progress()
    }
    fn test_step(&mut self, step: TestStep<'_>, sources: &Sources) {
        if let Some(j) = &mut self.junit {
            j.step(&step);
        }
        self.printer.test_step(step, sources)
    }
    fn diagnostics(&mut self, diags: &Diags, sources: &Sources) {
        self.printer.diagnostics(diags, sources)
    }
}
