//! `strata test`: Terraform's test command. Each test file (`*.tftest.hcl` or `.json`
//! in the configuration's directory and in its test directory, `tests`
//! unless given) runs its `run` blocks in order against a state of its
//! own — a scratch local state, never the configuration's backend — and
//! then destroys what its runs made, newest state first. A run whose
//! assertions fail fails and the next one runs; a run that errs fails and
//! the file's later runs are skipped, as in Terraform.

mod doubles;
mod expect;
mod mock;
mod run;
mod states;

use super::view::View;
use crate::builtin::Drivers;
use crate::config::testfile::{decode_test_file, MockProvider, TestFile};
use crate::config::variables::CliInput;
use crate::diag::{Diag, Diags, Sources};
use crate::lang::value::Value;
use states::States;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `strata test` was asked.
pub struct TestRequest {
    /// The configuration under test.
    pub dir: PathBuf,
    /// `-test-directory`, relative to `dir`.
    pub test_directory: PathBuf,
    /// `-filter`: the test files to run (as paths from `dir`); all when
    /// empty.
    pub filter: Vec<PathBuf>,
    /// `-var` and `-var-file`, for every run.
    pub inputs: Vec<CliInput>,
    /// `-verbose`: each run's plan, or the state its apply left, shown.
    pub verbose: bool,
    /// `-parallelism`: driver operations in flight at once in each run's
    /// plan or apply, and in each teardown.
    pub parallelism: usize,
}

/// How a run, a file or the whole test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pass,
    /// An assertion did not hold: the next run still runs.
    Fail,
    /// Something else went wrong: the file's later runs are skipped.
    Error,
    Skip,
}

impl Status {
    /// As Terraform's machine-readable UI names it.
    pub fn json(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Error => "error",
            Status::Skip => "skip",
        }
    }

    /// As Terraform prints it.
    pub fn word(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail | Status::Error => "fail",
            Status::Skip => "skip",
        }
    }
}

/// What the engine tells the view as a test goes, in Terraform's order.
pub enum TestStep<'a> {
    /// Every file found and its runs, before any runs.
    Found(&'a [(String, Vec<String>)]),
    FileBegins(&'a str),
    RunBegins {
        file: &'a str,
        name: &'a str,
    },
    Run {
        file: &'a str,
        name: &'a str,
        status: Status,
        /// Its errors and warnings, shown beneath its line.
        diags: &'a Diags,
        /// How many `assert` blocks it has.
        assertions: usize,
        /// `-verbose`: the plan or state it made.
        shown: Option<&'a str>,
    },
    TearingDown(&'a str),
    /// A state being destroyed, by the run that last applied it.
    RunTearingDown {
        file: &'a str,
        name: &'a str,
    },
    /// The file's own diagnostics, not a run's: what a destroy at the
    /// end could not destroy; after the file's status, what its
    /// file-wide blocks say (an override of nothing).
    FileDiags(&'a str, &'a Diags),
    FileDone(&'a str, Status),
}

/// What a test found, for the summary and the exit code.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TestTally {
    pub passed: usize,
    /// Runs whose assertions did not hold.
    pub failed: usize,
    /// Runs that went wrong otherwise.
    pub errored: usize,
    pub skipped: usize,
    /// Files none of whose runs ran (a scratch state strata could not
    /// make).
    pub files_failed: usize,
    /// A signal stopped the test: the later runs and files did not run.
    pub interrupted: bool,
}

impl TestTally {
    pub fn success(&self) -> bool {
        self.failed + self.errored + self.files_failed == 0 && !self.interrupted
    }
}

/// `strata test`.
pub fn test(
    req: &TestRequest,
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<TestTally, Diags> {
    let files = test_files(req)?;
    // As in Terraform, every test file is read first, those `-filter`
    // leaves out too: one that does not decode stops the test before
    // any run.
    let mut decoded: Vec<(PathBuf, TestFile)> = Vec::new();
    let mut diags = Diags::default();
    for rel in found_files(&req.dir, &req.test_directory) {
        match read(&req.dir, &rel, sources) {
            Ok(f) => decoded.push((rel, f)),
            Err(d) => diags.extend(d),
        }
    }
    diags.into_result(())?;
    run::check_modules(req, &decoded, sources)?;
    decoded.retain(|(rel, _)| files.contains(rel));
    // A signal asks the runs to stop, and the teardown still runs.
    let _graceful = crate::interrupt::Graceful::new();
    let left = states::killed_before(&req.dir);
    if !left.is_empty() {
        view.diagnostics(&left, sources);
    }
    let decoded: Vec<(String, TestFile)> = decoded
        .into_iter()
        .map(|(rel, f)| (rel.display().to_string(), f))
        .collect();
    let found: Vec<(String, Vec<String>)> = decoded
        .iter()
        .map(|(shown, f)| {
            let runs = f.runs.iter().map(|r| r.name.clone());
            (shown.clone(), runs.collect())
        })
        .collect();
    view.test_step(TestStep::Found(&found), sources);
    let mut tally = TestTally::default();
    for (shown, file) in decoded {
        if tally.interrupted {
            break;
        }
        view.test_step(TestStep::FileBegins(&shown), sources);
        let status = run_file(req, &shown, &file, view, sources, drivers, &mut tally);
        view.test_step(TestStep::FileDone(&shown, status), sources);
        let warnings = file_warnings(req, &file, sources);
        if !warnings.is_empty() {
            view.test_step(TestStep::FileDiags(&shown, &warnings), sources);
        }
    }
    Ok(tally)
}

/// What a file's own blocks say of the configuration under test: each
/// file-wide or mock override whose target it does not declare.
fn file_warnings(req: &TestRequest, file: &TestFile, sources: &mut Sources) -> Diags {
    let Ok(module) = crate::config::load(&req.dir, sources) else {
        // Its runs have said why it does not load.
        return Diags::default();
    };
    let mocks = file.mocks.iter().flat_map(|m| &m.overrides);
    doubles::unknown_targets(file.overrides.iter().chain(mocks), &module)
}

/// `validate`'s check of the test files of the configuration at `dir`:
/// each reads and decodes (its runs are not run).
pub fn validate_tests(
    dir: &Path,
    test_directory: &Path,
    sources: &mut Sources,
) -> Result<(), Diags> {
    let dir = match dir.is_file() {
        true => dir.parent().unwrap_or(Path::new(".")),
        false => dir,
    };
    let mut diags = Diags::default();
    for rel in found_files(dir, test_directory) {
        if let Err(d) = read(dir, &rel, sources) {
            diags.extend(d);
        }
    }
    diags.into_result(())
}

/// Every test file of the configuration at `dir`, as paths from it: its
/// own `*.tftest.hcl` and `*.tftest.json`, then the test directory's, each in name order.
pub(super) fn found_files(dir: &Path, test_directory: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for sub in [PathBuf::new(), test_directory.to_path_buf()] {
        let Ok(entries) = std::fs::read_dir(dir.join(&sub)) else {
            continue;
        };
        let mut names: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && kind_of(p, "tftest").is_some())
            .filter_map(|p| Some(sub.join(p.file_name()?)))
            .collect();
        names.sort();
        found.extend(names);
    }
    found
}

/// The modules the test files' runs plan in place of the configuration
/// at `dir`, loaded (those that do not load left out: the test reports
/// them): what provider plugins must serve beside the configuration.
pub(crate) fn run_module_configs(
    dir: &Path,
    test_directory: &Path,
    sources: &mut Sources,
) -> Vec<crate::config::Module> {
    let mut out = Vec::new();
    for rel in found_files(dir, test_directory) {
        let Ok(file) = parsed(&dir.join(&rel), sources).and_then(decode_test_file) else {
            continue;
        };
        let file_name = rel.display().to_string();
        for r in file.runs.iter().filter(|r| r.module.is_some()) {
            if let Ok(m) = run::module_of(r, dir, &file_name, sources) {
                out.push(m);
            }
        }
    }
    out
}

/// The runs' `module` blocks in every test file of the configuration at
/// `dir`, each with the key init installs it under.
pub(crate) fn run_modules(
    dir: &Path,
    test_directory: &Path,
    sources: &mut Sources,
) -> Result<Vec<crate::install::TestModule>, Diags> {
    let mut out = Vec::new();
    let mut diags = Diags::default();
    for rel in found_files(dir, test_directory) {
        let file = match parsed(&dir.join(&rel), sources).and_then(decode_test_file) {
            Ok(f) => f,
            Err(d) => {
                diags.extend(d);
                continue;
            }
        };
        for r in file.runs {
            if let Some(module) = r.module {
                out.push(crate::install::TestModule {
                    key: crate::config::testfile::module_key(&rel, &r.name),
                    run: r.name,
                    module,
                });
            }
        }
    }
    diags.into_result(out)
}

/// The test files to run: `-filter` keeps those it names and is an error
/// for one not found.
fn test_files(req: &TestRequest) -> Result<Vec<PathBuf>, Diags> {
    let found = found_files(&req.dir, &req.test_directory);
    if req.filter.is_empty() {
        return Ok(found);
    }
    let mut kept = Vec::new();
    for f in &req.filter {
        match found.iter().find(|p| *p == f) {
            Some(p) => kept.push(p.clone()),
            None => {
                return Err(Diag::new(
                    "strata::test::filter",
                    "Test file not found",
                    format!(
                        "{} is not a test file of this configuration (*.tftest.hcl or *.tftest.json here or in {}).",
                        f.display(),
                        req.test_directory.display()
                    ),
                )
                .into())
            }
        }
    }
    Ok(kept)
}

/// Test file `rel` of the configuration at `dir`, with its mocks' data
/// files.
fn read(dir: &Path, rel: &Path, sources: &mut Sources) -> Result<TestFile, Diags> {
    let mut file = decode_test_file(parsed(&dir.join(rel), sources)?)?;
    let mut diags = Diags::default();
    for m in &mut file.mocks {
        if let Err(d) = mock_sources(dir, m, sources) {
            diags.extend(d);
        }
    }
    diags.into_result(file)
}

/// What a test or mock file `p` is written in, from its name
/// (`NAME.STEM.hcl` or `NAME.STEM.json`); `None` when it is no such file.
fn kind_of(p: &Path, stem: &str) -> Option<Written> {
    let name = p.file_name()?.to_string_lossy().into_owned();
    if name.ends_with(&format!(".{stem}.hcl")) {
        return Some(Written::Hcl);
    }
    name.ends_with(&format!(".{stem}.json"))
        .then_some(Written::Json)
}

/// A test or mock file's language.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Written {
    Hcl,
    Json,
}

/// A test or mock file (HCL, or JSON by its name), read, kept among the
/// sources and parsed.
fn parsed(path: &Path, sources: &mut Sources) -> Result<crate::syntax::Body, Diags> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Diag::new(
            "strata::test::read",
            "Cannot read test file",
            format!("{}: {e}", path.display()),
        )
    })?;
    let id = sources.add(path.display().to_string(), text.clone());
    use crate::syntax::json::{parse_json_file, JsonFile};
    let json = match kind_of(path, "tftest") {
        Some(Written::Json) => Some(JsonFile::Test),
        Some(Written::Hcl) => None,
        None => (kind_of(path, "tfmock") == Some(Written::Json)).then_some(JsonFile::Mock),
    };
    match json {
        Some(kind) => parse_json_file(id, &text, kind),
        None => crate::syntax::parse_body(id, &text),
    }
    .map_err(Diags::from)
}

/// The `*.tfmock.hcl` files of mock `m`'s `source` (a directory from the
/// configuration's, as Terraform reads it), in name order, under its own
/// blocks.
fn mock_sources(dir: &Path, m: &mut MockProvider, sources: &mut Sources) -> Result<(), Diags> {
    let Some((source, span)) = m.source.clone() else {
        return Ok(());
    };
    let unreadable = || {
        Diags::from(
            Diag::new(
                "strata::test::mock_source",
                "Failed to read mock data directory",
                format!("Mock data directory {source} does not exist or cannot be read."),
            )
            .at(m.span)
            .also("source", span),
        )
    };
    let entries = std::fs::read_dir(dir.join(&source)).map_err(|_| unreadable())?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && kind_of(p, "tfmock").is_some())
        .collect();
    files.sort();
    let mut diags = Diags::default();
    for f in files {
        let decoded =
            parsed(&f, sources).and_then(|body| crate::config::testfile::decode_mock_file(body, m));
        if let Err(d) = decoded {
            diags.extend(d);
        }
    }
    diags.into_result(())
}

/// Runs one file's runs and tears down what they made; its status.
fn run_file(
    req: &TestRequest,
    shown: &str,
    file: &TestFile,
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
    tally: &mut TestTally,
) -> Status {
    let mut states = match States::new(&req.dir) {
        Ok(s) => s,
        Err(d) => {
            view.diagnostics(&d, sources);
            tally.files_failed += 1;
            return Status::Error;
        }
    };
    let mut outputs: BTreeMap<String, Value> = BTreeMap::new();
    let mut status = Status::Pass;
    for r in &file.runs {
        let stopped = crate::interrupt::requested();
        let done = match status {
            _ if stopped => run::Done::skipped(),
            Status::Error => run::Done::skipped(),
            _ => {
                let begins = TestStep::RunBegins {
                    file: shown,
                    name: &r.name,
                };
                view.test_step(begins, sources);
                let at = run::RunAt {
                    req,
                    file: (shown, file),
                    outputs: &outputs,
                };
                run::one(r, &at, &mut states, sources, drivers)
            }
        };
        match done.status {
            Status::Pass => tally.passed += 1,
            Status::Fail => tally.failed += 1,
            Status::Error => tally.errored += 1,
            Status::Skip => tally.skipped += 1,
        }
        if let Some(o) = done.outputs {
            outputs.insert(r.name.clone(), o);
        }
        let step = TestStep::Run {
            file: shown,
            name: &r.name,
            status: done.status,
            diags: &done.diags,
            assertions: r.asserts.len(),
            shown: done.shown.as_deref(),
        };
        view.test_step(step, sources);
        status = worst(status, done.status);
    }
    // After Ctrl-C the runs stop, but what they made is still destroyed
    // (another signal stops that too; what is left is then kept).
    if crate::interrupt::take() {
        tally.interrupted = true;
        status = Status::Error;
    }
    view.test_step(TestStep::TearingDown(shown), sources);
    let mut left = run::tear_down((&states, shown), req.parallelism, view, sources, drivers);
    left.extend(states.keep_leftovers(shown));
    if !left.is_empty() {
        view.test_step(TestStep::FileDiags(shown, &left), sources);
        status = Status::Error;
    }
    status
}

fn worst(a: Status, b: Status) -> Status {
    let rank = |s: Status| match s {
        Status::Pass | Status::Skip => 0,
        Status::Fail => 1,
        Status::Error => 2,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}
