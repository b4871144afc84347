//! One `run` block: its variables evaluated, the configuration planned or
//! applied against the file's scratch state, the failures it expects
//! taken out of what went wrong, and its assertions judged over what the
//! plan or the apply left.

use super::expect;
use super::{States, Status, TestRequest};
use crate::builtin::Drivers;
use crate::config::testfile::{Command, RunBlock, TestFile};
use crate::config::variables::{self, CliInput};
use crate::config::{self, ConfigScope};
use crate::diag::{Diag, Diags, Sources, Span};
use crate::engine::view::{Notice, Shown, View};
use crate::engine::{ConsoleObjects, Options};
use crate::eval::{Evaluator, MapScope, Scope};
use crate::lang::value::{Attrs, Value};
use crate::plan::{Mode, OutputChange};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Where a run runs: the request, its file, and the outputs of the
/// file's runs before it (`run.NAME.OUTPUT`).
pub(super) struct RunAt<'a> {
    pub req: &'a TestRequest,
    /// The test file: its path from the configuration, and what it says.
    pub file: (&'a str, &'a TestFile),
    pub outputs: &'a BTreeMap<String, Value>,
}

/// How a run went.
pub(super) struct Done {
    pub status: Status,
    pub diags: Diags,
    pub shown: Option<String>,
    /// Its outputs, as `run.NAME` offers them to later runs.
    pub outputs: Option<Value>,
}

impl Done {
    pub(super) fn skipped() -> Done {
        Done {
            status: Status::Skip,
            diags: Diags::default(),
            shown: None,
            outputs: None,
        }
    }

    fn erred(diags: Diags) -> Done {
        Done {
            status: Status::Error,
            diags,
            shown: None,
            outputs: None,
        }
    }
}

/// Runs `r`.
pub(super) fn one(
    r: &RunBlock,
    at: &RunAt<'_>,
    states: &mut States,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Done {
    attempt(r, at, states, sources, drivers).unwrap_or_else(Done::erred)
}

/// What planning or applying left for the assertions.
struct Outcome {
    values: ConsoleObjects,
    outputs: Vec<OutputChange>,
    /// Errors and warnings, the plan's and the apply's.
    diags: Diags,
    /// An apply run whose plan failed: nothing was applied.
    stopped_at_plan: bool,
    /// `-verbose`: the plan, or the state the apply left, as text.
    shown: Option<String>,
}

fn attempt(
    r: &RunBlock,
    at: &RunAt<'_>,
    states: &mut States,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Done, Diags> {
    let RunConfig { dir: config, under } = run_config(r, &at.req.dir, at.file.0)?;
    let module = load_run_config(&config, under.as_ref(), sources)?;
    let setup = super::doubles::for_run(at.file.1, r, &module, drivers)?;
    let drivers = &setup.drivers;
    let mut inputs = at.req.inputs.clone();
    inputs.extend(given_variables(r, at)?);
    let opts = Options {
        provider_blocks: setup.providers.clone(),
        parallelism: at.req.parallelism,
        installed_under: under.clone(),
        ..options(r, states.of(&config), &inputs)?
    };
    let verbose = at.req.verbose;
    let state_before = opts.state.as_ref().and_then(|s| std::fs::read(s).ok());
    let outcome = match r.command {
        Command::Plan => planned(&config, &opts, verbose, sources, drivers),
        Command::Apply => applied(&config, &module, (&opts, verbose), sources, drivers),
    };
    // An apply that wrote the state (even one that then failed) is the
    // one its teardown destroys with.
    let wrote = opts.state.as_ref().and_then(|s| std::fs::read(s).ok()) != state_before;
    if r.command == Command::Apply && (!outcome.stopped_at_plan || wrote) {
        let applied = super::states::Applied {
            run: r.name.clone(),
            inputs: inputs.clone(),
            drivers: Some(drivers.clone()),
            providers: setup.providers.clone(),
            installed_under: under,
        };
        states.applied(&config, applied);
    }
    let mut judged = setup.warnings;
    judged.extend(expect::sorted(
        r,
        &module,
        (outcome.diags.clone(), outcome.stopped_at_plan),
        sources,
    ));
    let outputs = outputs_value(&outcome.outputs, &module);
    if judged.has_errors() {
        return Ok(Done {
            status: Status::Error,
            diags: judged,
            shown: outcome.shown,
            outputs: (!outcome.stopped_at_plan).then_some(outputs),
        });
    }
    if outcome.stopped_at_plan {
        // The plan failed only as the run expected: there is nothing to
        // assert on, and the run passes.
        return Ok(Done {
            status: Status::Pass,
            diags: judged,
            shown: outcome.shown,
            outputs: None,
        });
    }
    let vars = variables::resolve(&module, &inputs, variables::environment(), sources)?;
    let module = expanded(module, &vars, &opts, drivers, sources)?;
    let mut diags = judged;
    let scope_at = AssertAt {
        module: &module,
        vars,
        known: &outcome.values,
        outputs: outputs.clone(),
        runs: at.outputs,
        drivers,
    };
    let status = asserts(r, &scope_at, &mut diags);
    Ok(Done {
        status,
        diags,
        shown: outcome.shown,
        outputs: Some(outputs),
    })
}

/// The configuration as the assertions see it: its `cluster` blocks
/// expanded as the run placed them, so that `module.<cluster>_<cloud>`
/// names what the plan made.
fn expanded(
    mut module: config::Module,
    vars: &BTreeMap<String, Value>,
    opts: &Options,
    drivers: &Drivers,
    sources: &mut Sources,
) -> Result<config::Module, Diags> {
    if module.clusters.is_empty() {
        return Ok(module);
    }
    let store = crate::backends::open(opts.state.as_deref(), &module, &opts.workspace)?;
    let functions = Rc::new(crate::walk::Functions(drivers.clone()));
    let run = config::Run::with_functions(module.dir.clone(), &opts.workspace, functions);
    crate::engine::prepare::expanded_as_stored(
        &mut module,
        vars.clone(),
        &run,
        &store,
        drivers,
        sources,
    )?;
    Ok(module)
}

/// The configuration a run plans, and where init installed what it
/// calls when it is a run's `module`.
struct RunConfig {
    dir: PathBuf,
    under: Option<config::InstalledUnder>,
}

/// The configuration a run plans: its `module` block's (a local path from
/// the configuration under test, or where init installed a registry or
/// remote one), else the configuration under test.
fn run_config(r: &RunBlock, root: &Path, file: &str) -> Result<RunConfig, Diags> {
    let Some(m) = &r.module else {
        return Ok(RunConfig {
            dir: root.to_path_buf(),
            under: None,
        });
    };
    let under = config::InstalledUnder {
        root: root.to_path_buf(),
        key: config::testfile::module_key(Path::new(file), &r.name),
    };
    let fail = |summary: &str, detail: String| {
        Diags::from(Diag::new("strata::test::module", summary, detail).at(m.span))
    };
    let source = config::source::ModuleSource::parse(&m.source, m.version.is_some())
        .map_err(|(summary, detail)| fail(summary, detail))?;
    let dir = match &source {
        config::source::ModuleSource::Local(p) => config::normalize(&root.join(p)),
        config::source::ModuleSource::Embedded(p) => config::normalize(Path::new(p)),
        config::source::ModuleSource::Registry(_) | config::source::ModuleSource::Remote(_) => {
            installed_dir(m, &source.to_string(), &under).map_err(|(s, d)| fail(s, d))?
        }
    };
    Ok(RunConfig {
        dir,
        under: Some(under),
    })
}

fn load_run_config(
    dir: &Path,
    under: Option<&config::InstalledUnder>,
    sources: &mut Sources,
) -> Result<config::Module, Diags> {
    match under {
        Some(u) => {
            let given = config::dynamic::Given::with_environment(Vec::new());
            config::load_for_test(dir, u, sources, &given)
        }
        None => config::load(dir, sources),
    }
}

/// The configuration run `r` of test file `file` plans, loaded.
pub(super) fn module_of(
    r: &RunBlock,
    root: &Path,
    file: &str,
    sources: &mut Sources,
) -> Result<config::Module, Diags> {
    let c = run_config(r, root, file)?;
    load_run_config(&c.dir, c.under.as_ref(), sources)
}

/// Every run's `module` of the test files, found and loaded before any
/// run, as Terraform loads them with the configuration: one not
/// installed stops the test (no run is made) with every such error.
pub(super) fn check_modules(
    req: &TestRequest,
    files: &[(PathBuf, TestFile)],
    sources: &mut Sources,
) -> Result<(), Diags> {
    let mut diags = Diags::default();
    for (file, test) in files {
        let file = file.display().to_string();
        for r in test.runs.iter().filter(|r| r.module.is_some()) {
            if let Err(d) = module_of(r, &req.dir, &file, sources) {
                diags.extend(d);
            }
        }
    }
    diags.into_result(())
}

/// The directory a run's registry or remote module was installed in by
/// `init` (Terraform's error when it was not, or is no longer the
/// version asked for).
fn installed_dir(
    m: &config::testfile::RunModule,
    source: &str,
    under: &config::InstalledUnder,
) -> Result<PathBuf, (&'static str, String)> {
    let manifest = config::installed::Manifest::read(&under.root)
        .map_err(|why| ("Cannot read the module manifest init kept", why))?;
    let not_installed = || {
        ("Module not installed", "This module is not yet installed. Run \"strata init\" to install all modules required by this configuration.".to_string())
    };
    let constraint = m.version.as_ref().map(|v| v.constraint.as_str());
    let installed = manifest.installed(&under.root, (&under.key, source), constraint);
    let dir = installed.map_err(|e| match e {
        config::installed::NotInstalled::Missing => not_installed(),
        config::installed::NotInstalled::BadConstraint(why) => ("Invalid version constraint", why),
        config::installed::NotInstalled::Outdated(detail) => {
            ("Module version requirements have changed", detail)
        }
    })?;
    match dir.is_dir() {
        true => Ok(dir),
        false => Err(not_installed()),
    }
}

/// The run's options: its variables, its scratch state, its plan
/// options.
fn options(r: &RunBlock, state: PathBuf, inputs: &[CliInput]) -> Result<Options, Diags> {
    let o = &r.plan_options;
    let mut targets = Vec::new();
    for e in &o.target {
        let parsed = e
            .address_text()
            .ok_or_else(|| "a resource or module address is required here".to_string());
        match parsed.and_then(|t| crate::graph::Target::parse(&t)) {
            Ok(t) => targets.push(t),
            Err(why) => return Err(invalid_address("target", &why, e.span)),
        }
    }
    let mut replace = Vec::new();
    for e in &o.replace {
        let parsed = e
            .address_text()
            .and_then(|t| strata_state::model::Address::parse(&t));
        match parsed {
            Some(a) => replace.push(a),
            None => {
                let why = "a resource instance address is required here";
                return Err(invalid_address("replace", why, e.span));
            }
        }
    }
    Ok(Options {
        scope: crate::graph::Scope {
            targets,
            excludes: Vec::new(),
        },
        replace,
        inputs: inputs.to_vec(),
        state: Some(state),
        refresh: !o.no_refresh,
        mode: match o.refresh_only {
            true => Mode::RefreshOnly,
            false => Mode::Normal,
        },
        // A test judges its checks once, as Terraform's does.
        check_settle: Some(std::time::Duration::ZERO),
        ..Options::default()
    })
}

/// A `plan_options` address that names nothing a plan can take.
fn invalid_address(what: &str, why: &str, at: crate::diag::Span) -> Diags {
    Diags::from(
        Diag::new(
            "strata::test::plan_options",
            format!("Invalid {what} address"),
            why.to_string(),
        )
        .at(at),
    )
}

/// The file's variables and the run's (the run's win), evaluated where
/// they may name the outputs of earlier runs (`run.NAME.OUTPUT`) and the
/// file's variables (`var.NAME`).
fn given_variables(r: &RunBlock, at: &RunAt<'_>) -> Result<Vec<CliInput>, Diags> {
    let runs = Value::Object(at.outputs.clone().into_iter().collect());
    let mut diags = Diags::default();
    let mut file_vars: BTreeMap<String, Value> = BTreeMap::new();
    let mut given = Vec::new();
    let scope_vars = Attrs::from([("run".to_string(), runs.clone())]);
    for a in &at.file.1.variables {
        match Evaluator::new(&MapScope(&scope_vars), PathBuf::from(".")).eval(&a.expr) {
            Ok(v) => {
                file_vars.insert(a.name.clone(), v.clone());
                given.push((a.name.clone(), v, a.expr.span));
            }
            Err(d) => diags.push(d),
        }
    }
    let with_vars = Attrs::from([
        ("run".to_string(), runs),
        (
            "var".to_string(),
            Value::Object(file_vars.into_iter().collect()),
        ),
    ]);
    for a in &r.variables {
        match Evaluator::new(&MapScope(&with_vars), PathBuf::from(".")).eval(&a.expr) {
            Ok(v) => given.push((a.name.clone(), v, a.expr.span)),
            Err(d) => diags.push(d),
        }
    }
    diags.into_result(
        given
            .into_iter()
            .map(|(name, value, span)| CliInput::Given { name, value, span })
            .collect(),
    )
}

/// A `command = plan` run: the plan's values, outputs and diagnostics.
fn planned(
    config: &Path,
    opts: &Options,
    verbose: bool,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Outcome {
    let mut quiet = Quiet::default();
    let how = crate::engine::plan::Planning::plain(crate::engine::session::Operation::Plan);
    match crate::engine::plan::planned(config, how, opts, &mut quiet, sources, drivers) {
        Ok(p) => {
            p.session.close(&mut quiet);
            let mut diags = Diags::default();
            for w in &p.plan.warnings {
                diags.push(w.clone());
            }
            Outcome {
                values: crate::engine::show::plan_objects(&p.plan),
                outputs: p.plan.outputs.clone(),
                diags,
                stopped_at_plan: false,
                shown: verbose.then(|| crate::render::human::plan(&p.plan)),
            }
        }
        Err(f) => Outcome {
            values: ConsoleObjects::default(),
            outputs: Vec::new(),
            diags: f.diags,
            stopped_at_plan: true,
            shown: None,
        },
    }
}

/// A `command = apply` run: what the state holds after it, and the
/// plan's and the apply's diagnostics.
fn applied(
    config: &Path,
    module: &config::Module,
    (opts, verbose): (&Options, bool),
    sources: &mut Sources,
    drivers: &Drivers,
) -> Outcome {
    let mut quiet = Quiet::default();
    let result = crate::engine::apply(config, opts, true, &mut quiet, sources, drivers);
    let mut diags = Diags::default();
    for w in quiet.warnings {
        diags.push(w);
    }
    let stopped_at_plan = match result {
        Ok(crate::engine::Applied::Done(report)) => {
            diags.extend(report.failed);
            // A pool left with nowhere to go fails the apply, as it does
            // `strata apply`.
            diags.extend(report.unplaced);
            false
        }
        Ok(crate::engine::Applied::Nothing(_)) => false,
        Err(d) => {
            diags.extend(d);
            true
        }
    };
    let read = crate::backends::open(opts.state.as_deref(), module, &opts.workspace)
        .and_then(|store| crate::engine::show::state_and_outputs(&store, drivers));
    let (values, outputs) = match read {
        Ok(x) => x,
        Err(d) => {
            diags.extend(d);
            Default::default()
        }
    };
    let shown = match verbose {
        true => state_text(opts, sources, drivers),
        false => None,
    };
    Outcome {
        values,
        outputs,
        diags,
        stopped_at_plan,
        shown,
    }
}

/// The run's state as `show` prints it (`-verbose`).
fn state_text(opts: &Options, sources: &mut Sources, drivers: &Drivers) -> Option<String> {
    let state = opts.state.as_deref()?;
    match crate::engine::show(None, Some(state), &opts.workspace, sources, drivers).ok()? {
        crate::engine::Showing::State { state, schemas } => Some(crate::render::human::state(
            &state.objects,
            &schemas,
            &state.outputs,
            state.existed,
        )),
        crate::engine::Showing::Plan(_) => None,
    }
}

/// The outputs as one object (unknown ones unknown).
/// The root module's outputs as `output` and `run.NAME` give them: every
/// declared output, null where it has no value (the state keeps none).
fn outputs_value(outputs: &[OutputChange], module: &config::Module) -> Value {
    let mut all: Attrs = module
        .outputs
        .iter()
        .map(|o| (o.name.clone(), Value::null()))
        .collect();
    all.extend(
        outputs
            .iter()
            .filter_map(|o| Some((o.name.clone(), o.after.clone()?))),
    );
    Value::Object(all)
}

/// What the assertions of a run see.
struct AssertAt<'a> {
    module: &'a config::Module,
    vars: BTreeMap<String, Value>,
    known: &'a ConsoleObjects,
    outputs: Value,
    runs: &'a BTreeMap<String, Value>,
    drivers: &'a Drivers,
}

/// Judges the run's assertions; whether any failed (each failure, or a
/// condition that cannot be judged, added to `diags`).
fn asserts(r: &RunBlock, at: &AssertAt<'_>, diags: &mut Diags) -> Status {
    let functions = Rc::new(crate::walk::Functions(at.drivers.clone()));
    let run_at = config::Run::with_functions(at.module.dir.clone(), "default", functions);
    // After a plan, what only an apply calls (`uuid()`, `timestamp()`) is
    // unknown, as the plan had it; after an apply it is called.
    let run_at = match r.command {
        Command::Plan => run_at,
        Command::Apply => run_at.calling(),
    };
    // The objects and the module calls' outputs (each child evaluated
    // over its own objects), as the console sees them; the plan or apply
    // ran whole, so a repeated resource it has no instance of has none,
    // in the root module as in every child.
    let over = crate::engine::console_scope::Over {
        objects: at.known,
        run: &run_at,
        missing: crate::engine::console_scope::Missing::Empty,
    };
    let scoped = crate::engine::console_scope::root(at.module, at.vars.clone(), &over);
    let scope = ConfigScope::new(at.module, at.vars.clone(), run_at.clone()).knowing(&scoped.known);
    let scope = TestScope {
        config: &scope,
        output: at.outputs.clone(),
        run: Value::Object(at.runs.clone().into_iter().collect()),
    };
    let mut status = Status::Pass;
    for c in &r.asserts {
        if let Some(d) = reads_ephemeral(c) {
            diags.push(d);
            status = Status::Error;
            continue;
        }
        let mut ev = Evaluator::new(&scope, at.module.dir.clone());
        // As Terraform does, the message is evaluated whether or not the
        // condition holds: one that cannot be is an error either way.
        if let Err(d) = ev.eval(&c.error_message) {
            diags.push(d);
            status = Status::Error;
            continue;
        }
        match config::condition::judge(&mut ev, c) {
            Ok(config::condition::Verdict::Holds) => {}
            // An assertion that cannot be judged errs the run (its file's
            // later runs are skipped); one that does not hold fails it.
            Ok(config::condition::Verdict::Unknown) => {
                status = Status::Error;
                diags.push(
                    Diag::new(
                        "strata::test::unknown_condition",
                        "Unknown condition value",
                        "The condition could not be evaluated at this time: its result will be known only after an apply. Run this block with command = apply, or, if an override gives the value, set override_during = plan in it.",
                    )
                    .at(c.condition.span),
                );
            }
            Ok(config::condition::Verdict::Fails(message)) => {
                if status == Status::Pass {
                    status = Status::Fail;
                }
                diags.push(assertion_failed(c.condition.span, &message));
            }
            Err(d) => {
                status = Status::Error;
                diags.push(d);
            }
        }
    }
    status
}

/// An assertion reading an ephemeral resource, which a run has closed by
/// the time its assertions are judged: Terraform's error.
fn reads_ephemeral(c: &config::Condition) -> Option<Diag> {
    let mut at = None;
    for e in [&c.condition, &c.error_message] {
        e.visit_references(&mut |root, _, span| {
            if root == "ephemeral" {
                at = at.or(Some(span));
            }
        });
    }
    Some(
        Diag::new(
            "strata::test::ephemeral",
            "Ephemeral resources cannot be asserted",
            "Ephemeral resources are closed when the test is finished, and are not available within the test context for assertions.",
        )
        .at(at?),
    )
}

fn assertion_failed(at: Span, message: &str) -> Diag {
    Diag::new(
        "strata::test::assertion_failed",
        "Test assertion failed",
        message,
    )
    .at(at)
}

/// The configuration's scope, with `output.NAME` (the run's outputs) and
/// `run.NAME.OUTPUT` (earlier runs') as a test's assertions see them.
struct TestScope<'a> {
    config: &'a ConfigScope<'a>,
    output: Value,
    run: Value,
}

impl Scope for TestScope<'_> {
    fn resolve(&self, name: &str, attr: Option<&str>, span: Span) -> Result<(Value, bool), Diag> {
        match name {
            "output" => Ok((self.output.clone(), false)),
            "run" => Ok((self.run.clone(), false)),
            _ => self.config.resolve(name, attr, span),
        }
    }

    fn is_ephemeral(&self, root: &str, attrs: &[&str]) -> bool {
        self.config.is_ephemeral(root, attrs)
    }

    fn declares_provider(&self, local_name: &str) -> bool {
        self.config.declares_provider(local_name)
    }

    fn impure(&self) -> crate::funcs::Impure {
        self.config.impure()
    }

    fn provider_function(
        &self,
        provider: &str,
        function: &str,
        args: Vec<Value>,
    ) -> Option<Result<Value, crate::eval::CallFailure>> {
        self.config.provider_function(provider, function, args)
    }
}

/// A view that shows nothing: a run's plan and apply are reported by the
/// test's own lines. It keeps the plan's warnings (failed checks) and
/// approves every plan (a test applies without asking, as Terraform's).
#[derive(Default)]
struct Quiet {
    warnings: Vec<Diag>,
}

impl View for Quiet {
    fn notice(&mut self, _notice: Notice) {}

    fn plan(&mut self, _shown: Shown<'_>, warnings: &[Diag], _sources: &Sources) {
        self.warnings.extend(warnings.iter().cloned());
    }

    fn approve(&mut self, _mode: Mode) -> bool {
        true
    }

    fn confirm(&mut self, _question: &str) -> bool {
        false
    }

    fn progress(&self) -> fn(&str) {
        |_| {}
    }
}

/// Destroys what file `file`'s runs made, newest state first (each said
/// with the run that last applied it): what could not be destroyed.
pub(super) fn tear_down(
    (states, file): (&States, &str),
    parallelism: usize,
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Diags {
    let mut left = Diags::default();
    for (config, applied, state) in states.newest_first() {
        if !state.exists() {
            continue;
        }
        let step = super::TestStep::RunTearingDown {
            file,
            name: &applied.run,
        };
        view.test_step(step, sources);
        let opts = Options {
            inputs: applied.inputs.clone(),
            state: Some(state.clone()),
            mode: Mode::Destroy,
            check_settle: Some(std::time::Duration::ZERO),
            provider_blocks: applied.providers.clone(),
            installed_under: applied.installed_under.clone(),
            parallelism,
            ..Options::default()
        };
        let mut quiet = Quiet::default();
        // With what the last apply had: its mocks and overrides stand in
        // for the providers they stood in for then.
        let drivers = applied.drivers.as_ref().unwrap_or(drivers);
        match crate::engine::apply(config, &opts, true, &mut quiet, sources, drivers) {
            Ok(crate::engine::Applied::Done(report)) => left.extend(report.failed),
            Ok(crate::engine::Applied::Nothing(_)) => {}
            Err(d) => left.extend(d),
        }
    }
    left
}
