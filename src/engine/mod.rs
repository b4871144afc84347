//! `strata plan`, `apply`, `destroy` and `show`: load and check the
//! configuration, lock and load the state, recover what a crashed run left,
//! plan, render, confirm, apply, persist. [`failover`] is apply's rounds
//! for placed node pools.

mod failover;
mod generate;
mod import;
mod validate;

/// A plan's mode, which a command's options carry.
pub use crate::plan::Mode;
pub use import::import;
pub use validate::{graph, validate};

use crate::apply;
use crate::builtin::Drivers;
use crate::cluster::placement::Recorded;
use crate::config::variables::{self, CliInput};
use crate::config::{self, Module, Run};
use crate::diag::{Diag, Diags, Sources};
use crate::graph::Graph;
use crate::lang::value::Value;
use crate::plan::{Failed, Plan, Request, Saved, Schemas};
use crate::statecmd::state_err;
use sha2::Digest as _;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use strata_provider::catalog::PriceList;
use strata_provider::Tags;
use strata_state::{Entry, Lock, PoolPlacement, State, Store};
use time::OffsetDateTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Format {
    #[default]
    Human,
    Json,
    Markdown,
}

/// What `plan` and `apply` share on the command line. The default is a
/// normal plan with refresh, ten calls at once, the `default` workspace.
#[derive(Debug, Clone)]
pub struct Options {
    pub inputs: Vec<CliInput>,
    /// `--state FILE`: a local file, in place of the configured backend.
    pub state: Option<PathBuf>,
    pub refresh: bool,
    pub parallelism: usize,
    /// `-destroy`, `-refresh-only`, or neither.
    pub mode: crate::plan::Mode,
    /// The workspace, decided once by the command: the backend opens its
    /// state and expressions read it as `terraform.workspace`.
    pub workspace: String,
    /// `--prices FILE`: the user's prices, over the catalogs.
    pub prices: PriceList,
    /// `--replace-placement POOL`.
    pub replace_placement: Vec<String>,
    /// `-lock-timeout=D`: how long to wait for a state lock another run
    /// holds before giving up (zero: at once, as Terraform's default).
    pub lock_timeout: std::time::Duration,
    /// `-target` / `-exclude`: the part of the configuration planned.
    pub scope: crate::graph::Scope,
    /// `-replace ADDR`: instances replaced whatever their attributes say.
    pub replace: Vec<strata_state::model::Address>,
    /// `-json`: Terraform's machine-readable UI on stdout, one message a
    /// line, in place of the human output.
    pub json: bool,
    /// `-generate-config-out=FILE`: configuration for import targets that
    /// have none, written into this new file before the plan.
    pub generate_config_out: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            inputs: Vec::new(),
            state: None,
            refresh: true,
            parallelism: 10,
            mode: crate::plan::Mode::Normal,
            workspace: "default".into(),
            prices: PriceList::default(),
            replace_placement: Vec::new(),
            lock_timeout: std::time::Duration::ZERO,
            scope: crate::graph::Scope::default(),
            replace: Vec::new(),
            json: false,
            generate_config_out: None,
        }
    }
}

pub enum Outcome {
    /// Success and nothing to do (exit 0).
    NoChanges,
    /// Success with changes (exit 2 under --detailed-exitcode, else 0).
    Changes,
}

struct Prepared {
    module: Module,
    graph: Graph,
    vars: BTreeMap<String, Value>,
    run: Rc<Run>,
    /// Configuration file name → SHA-256.
    files: BTreeMap<String, String>,
    expansion: crate::cluster::Expansion,
}

fn digest(text: &str) -> String {
    hex(&sha2::Sha256::digest(text.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn io_diag(what: &str, path: &Path, e: std::io::Error) -> Diags {
    Diags::from(Diag::new(
        "strata::io",
        format!("Cannot {what} {}", path.display()),
        e.to_string(),
    ))
}

/// Expands the root module's `cluster` blocks, asking the drivers for
/// their GPU catalogs; `prices` are the command's.
pub fn expand(
    module: &mut config::Module,
    vars: BTreeMap<String, Value>,
    run: &Rc<Run>,
    drivers: &Drivers,
    prices: &PriceList,
    recorded: &Recorded<'_>,
    sources: &mut Sources,
) -> Result<crate::cluster::Expansion, Diags> {
    let catalog = |name: &str| drivers.named(name).and_then(|d| d.gpu_catalog());
    let catalogs = crate::cluster::Catalogs {
        by_provider: &catalog,
        prices: prices.clone(),
    };
    crate::cluster::expand(module, vars, run, &catalogs, recorded, sources)
}

/// No placements recorded: what expansion sees before the state is read
/// (and all `validate` ever sees).
static NO_PLACEMENTS: BTreeMap<String, PoolPlacement> = BTreeMap::new();

/// What a command's expansion knows of placements: nothing yet, or the
/// state's records; `now` decides which cool-downs are over.
pub fn placements<'s>(
    state: Option<&'s State>,
    replace: &'s [String],
    now: OffsetDateTime,
) -> Recorded<'s> {
    Recorded {
        pools: state.map_or(&NO_PLACEMENTS, |s| &s.placements),
        calls: state.map_or_else(BTreeSet::new, root_calls),
        replace,
        now,
    }
}

/// The root module calls `state` holds objects of.
fn root_calls(state: &State) -> BTreeSet<String> {
    state
        .resources
        .iter()
        .filter_map(|r| r.id.module.steps().first())
        .map(|step| step.call.clone())
        .collect()
}

/// The portability check without a cloud: the configuration planned on
/// empty state through offline drivers, for `validate`.
pub fn check_portability(
    module: &Module,
    graph: &Graph,
    vars: BTreeMap<String, Value>,
    run: &Rc<Run>,
    expansion: &crate::cluster::Expansion,
    drivers: &Drivers,
) -> Result<(), Diags> {
    let offline = drivers.offline();
    crate::walk::configure(module, graph, &vars, run, &offline)?;
    let rt = crate::runtime::start(1)?;
    let state = State::new();
    crate::plan::plan(
        Request {
            root: module,
            graph,
            drivers: &offline,
            vars,
            run: run.clone(),
            state: &state,
            refresh: false,
            mode: crate::plan::Mode::Normal,
            inspect: Some(&|read| crate::cluster::portability::check(expansion, read)),
            prices: &PriceList::default(),
            describe_configuration: false,
            scope: &Default::default(),
            replace: &[],
            parallelism: 1,
        },
        &rt,
    )
    .map(|_| ())
    .map_err(Diags::from)
}

fn prepare(
    path: &Path,
    vars: Option<BTreeMap<String, Value>>,
    opts: &Options,
    recorded: &Recorded<'_>,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Prepared, Diags> {
    let inputs = &opts.inputs;
    let mut module = config::load(path, sources)?;
    let functions = std::rc::Rc::new(crate::walk::Functions(drivers.clone()));
    let run = Run::with_functions(module.dir.clone(), &opts.workspace, functions);
    // Files by their path inside the configuration, so a saved plan made
    // in its directory is checked the same when applied from elsewhere.
    let base = format!("{}/", module.dir.display());
    let digests = |sources: &Sources| -> BTreeMap<String, String> {
        sources
            .files()
            .map(|(n, t)| {
                // Read from the working directory (the lock file), a
                // name is relative to it rather than to the configuration.
                let inside = n.strip_prefix(&base).unwrap_or(n);
                (inside.trim_start_matches("./").to_string(), digest(t))
            })
            .collect()
    };
    // The configuration a saved plan is checked against: the files loaded,
    // and the modules a cluster expands into (variable files are not
    // configuration; a saved plan carries the values).
    let mut files = digests(sources);
    let env = variables::environment();
    let vars = match vars {
        Some(saved) => with_ephemeral(&module, saved, inputs, env, sources)?,
        None => variables::resolve(&module, inputs, env, sources)?,
    };
    let before = digests(sources);
    let expansion = expand(
        &mut module,
        vars.clone(),
        &run,
        drivers,
        &opts.prices,
        recorded,
        sources,
    )?;
    unknown_pools(&expansion, recorded.replace)?;
    for (n, d) in digests(sources) {
        if !before.contains_key(&n) {
            files.insert(n, d);
        }
    }
    let explain = |d: Diags, sources: &Sources| expansion.explain(d, sources);
    let graph = crate::graph::build(&module, sources).map_err(|d| explain(d, sources))?;
    let write_only =
        |r: &config::Resource, path: &[String]| crate::walk::write_only(drivers, r, path);
    config::check::check_module(&module, &run, &write_only, sources)
        .map_err(|d| explain(d, sources))?;
    crate::walk::configure(&module, &graph, &vars, &run, drivers)
        .map_err(|d| explain(d, sources))?;
    // A destroy works out what its scope deletes over the whole graph.
    let graph = match opts.scope.is_everything() || opts.mode.is_destroy() {
        true => graph,
        false => opts.scope.narrow(&graph),
    };
    Ok(Prepared {
        module,
        graph,
        vars,
        run,
        files,
        expansion,
    })
}

/// `--replace-placement` names a pool that has a placement.
fn unknown_pools(expansion: &crate::cluster::Expansion, replace: &[String]) -> Result<(), Diags> {
    let known: Vec<&str> = expansion.placements().map(|d| d.pool.as_str()).collect();
    for r in replace {
        let found = known
            .iter()
            .any(|k| k == r || k.split_once('.').is_some_and(|(_, pool)| pool == r));
        if !found {
            return Err(Diags::from(Diag::new(
                "strata::placement::unknown",
                format!("No placed node pool {r:?}"),
                match known.is_empty() {
                    true => "--replace-placement names a cluster node pool with `nodes`; this configuration has none.".to_string(),
                    false => format!("--replace-placement names a cluster node pool with `nodes`: {}.", known.join(", ")),
                },
            )));
        }
    }
    Ok(())
}

/// `p` expanded again with the state's placement records, when it has
/// placed pools: a node pool goes where state says it is, or past where
/// it could not. Prepared first without them because reading the state
/// needs the configured drivers (to recover an interrupted apply).
fn placed(
    p: Prepared,
    again: (&Path, Option<BTreeMap<String, Value>>),
    state: &State,
    opts: &Options,
    now: OffsetDateTime,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Prepared, Diags> {
    let recorded = placements(Some(state), &opts.replace_placement, now);
    if p.expansion.placements().next().is_none() && !p.expansion.retires(&recorded.calls) {
        return Ok(p);
    }
    prepare(again.0, again.1, opts, &recorded, sources, drivers)
}

/// Which command is asking for the configuration, for [`require_configuration`].
#[derive(Clone, Copy)]
enum Wants {
    Plan,
    Apply,
    Drift,
}

/// Refuses a root module without configuration files: its plan would
/// delete everything the state holds, which an empty or mistaken directory
/// never means. Destroying is the one way to plan everything away, and a
/// destroy without configuration says so.
fn require_configuration(path: &Path, wants: Wants, mode: crate::plan::Mode) -> Result<(), Diags> {
    if !config::config_files(path).map_err(Diags::from)?.is_empty() {
        return Ok(());
    }
    if mode.is_destroy() {
        eprintln!(
            "Note: {} holds no configuration files; every object the state records will be destroyed, using only what the state knows of it.",
            path.display()
        );
        return Ok(());
    }
    let what = match wants {
        Wants::Plan => "A plan needs configuration: without any, it would plan to destroy every object in the state. To destroy everything, run `strata plan --destroy`.",
        Wants::Apply => "An apply needs configuration: without any, it would destroy every object in the state. To destroy everything, run `strata destroy`.",
        Wants::Drift => "Drift is read through the providers the configuration sets up, and there is no configuration here.",
    };
    Err(Diags::from(Diag::new(
        "strata::config::no_configuration",
        "No configuration files",
        format!(
            "{what} Configuration is read from *.tf, *.tf.json and *.hcl files, and {:?} has none: give the directory that has them.",
            path.display().to_string()
        ),
    )))
}

/// A saved plan's variables and, given again now, the ephemeral ones: a
/// plan file never holds those (as in Terraform). Nothing else may be set
/// on the command line: the plan already holds the values it was made with.
fn with_ephemeral(
    module: &Module,
    mut saved: BTreeMap<String, Value>,
    inputs: &[CliInput],
    env: Vec<(String, String)>,
    sources: &mut Sources,
) -> Result<BTreeMap<String, Value>, Diags> {
    let ephemeral = Module {
        dir: module.dir.clone(),
        variables: module
            .variables
            .iter()
            .filter(|v| v.ephemeral)
            .cloned()
            .collect(),
        ..Module::default()
    };
    if ephemeral.variables.is_empty() {
        if !inputs.is_empty() {
            return Err(Diags::from(Diag::new(
                "strata::apply::vars",
                "Variables with a saved plan",
                "A saved plan already holds the variable values it was made with; --var and --var-file cannot change them (only ephemeral variables are given again). Make a new plan instead.",
            )));
        }
        return Ok(saved);
    }
    saved.extend(variables::resolve(&ephemeral, inputs, env, sources)?);
    Ok(saved)
}

/// Locks and loads the state; adopts or clears what a crashed apply left
/// (open create intents) and folds the journal into the state file.
fn open_state(
    store: &Store,
    operation: &str,
    opts: &Options,
    drivers: &Drivers,
    rt: &tokio::runtime::Runtime,
    write: bool,
) -> Result<(Lock, State, bool), Diags> {
    let lock = lock_within(store, operation, opts.lock_timeout).map_err(state_err)?;
    if let Some(old) = &lock.took_over {
        eprintln!(
            "Warning: the state was locked by {} (operation {}, since {}), which is no longer running; this run took the lock over.",
            old.who, old.operation, old.created
        );
    }
    let loaded = store.load().map_err(state_err)?;
    let mut state = loaded.state;
    // A run that could not write its state at the end must not start:
    // what it did would live only in the journal.
    if write && state.serial == u64::MAX {
        return Err(state_err(strata_state::StateError::SerialExhausted {
            location: store.location(),
            serial: state.serial,
        }));
    }
    let interrupted = loaded.replay.applied > 0 || !loaded.replay.pending.is_empty();
    if !interrupted {
        return Ok((lock, state, loaded.existed));
    }
    if !write {
        // What is only in the journal is invisible to Terraform, which
        // reads the state alone: written now, whatever the command, the
        // creates still in question kept for the next apply to look for.
        let pending = &loaded.replay.pending;
        let folds = loaded.replay.applied > pending.len();
        match (folds, pending.is_empty()) {
            (false, _) => {}
            // Nothing left in question: the journal goes with the write.
            (true, true) => store.persist(&lock, &mut state).map_err(state_err)?,
            (true, false) => store
                .journal(&lock)
                .and_then(|mut j| store.checkpoint(&lock, &mut j, &mut state, pending))
                .map_err(state_err)?,
        }
        let written = match folds {
            true => "what it finished is now written in the state, and ",
            false => "",
        };
        eprintln!(
            "Warning: the last apply was interrupted; {written}{} creates that may have happened will be checked by the next apply.",
            pending.len()
        );
        return Ok((lock, state, loaded.existed || folds));
    }
    let entries = rt.block_on(recover(&loaded.replay.pending, &state.lineage, drivers))?;
    if !entries.is_empty() {
        store
            .journal(&lock)
            .and_then(|mut j| j.append_all(&entries))
            .map_err(state_err)?;
        state.apply_all(&entries);
    }
    store.persist(&lock, &mut state).map_err(state_err)?;
    eprintln!(
        "Recovered an interrupted apply: {} operations were already recorded, {} objects created but not recorded were adopted.",
        loaded.replay.applied,
        entries.len()
    );
    Ok((lock, state, true))
}

/// The state lock, waiting up to `timeout` while another run holds it
/// (checked every second, as Terraform's `-lock-timeout` does).
fn lock_within(
    store: &Store,
    operation: &str,
    timeout: std::time::Duration,
) -> Result<Lock, strata_state::StateError> {
    let started = std::time::Instant::now();
    loop {
        match store.lock(operation) {
            Err(strata_state::StateError::Locked { .. }) if started.elapsed() < timeout => {
                std::thread::sleep(std::time::Duration::from_secs(1).min(timeout));
            }
            other => return other,
        }
    }
}

/// Which types provider plugins serve in place of strata's own drivers.
fn plugin_served(drivers: &Drivers) -> Vec<crate::plan::PluginServed> {
    drivers
        .plugin_served()
        .into_iter()
        .map(|(provider, types)| crate::plan::PluginServed { provider, types })
        .collect()
}

/// When a failed plan's partial part is shown.
#[derive(Clone, Copy, PartialEq)]
enum Partial {
    /// `plan`: always, "Planning failed." when it holds nothing.
    Always,
    /// `apply`: only when it holds changes.
    WithChanges,
}

/// Shows the part of a plan made before its errors, as Terraform shows
/// it above them; the errors are returned for the CLI to print.
fn shown_partial(f: Failed, when: Partial, json: bool, sources: &Sources) -> Diags {
    let Some(plan) = f
        .partial
        .filter(|p| when == Partial::Always || p.has_changes())
    else {
        return f.diags;
    };
    if json {
        for l in crate::render::ui::plan(&plan) {
            println!("{l}");
        }
        said_as_messages(&plan.warnings, sources);
        return f.diags;
    }
    print!("{}", crate::render::human::refreshing(&plan, true));
    print!("{}", crate::render::human::plan(&plan));
    warn(&plan.warnings, sources, true);
    f.diags
}

/// Which types provider plugins serve in place of strata's own drivers,
/// said before the plan (empty when none do).
fn plugin_note(plan: &Plan) -> String {
    if plan.plugin_served.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nProvider plugins serve, in place of strata's own drivers:\n");
    for served in &plan.plugin_served {
        out.push_str(&format!("  - {}\n", served.line()));
    }
    out.push('\n');
    out
}

/// For each create that may have happened unrecorded, asks the driver for
/// objects carrying its tags: the first is adopted, any others (a retry
/// that created twice) are deleted.
async fn recover(pending: &[Entry], lineage: &str, drivers: &Drivers) -> Result<Vec<Entry>, Diags> {
    let mut out = Vec::new();
    for e in pending {
        let Entry::Intent {
            address, provider, ..
        } = e
        else {
            continue;
        };
        let Some(addr) = strata_state::Address::parse(address) else {
            continue;
        };
        let Some((base, _)) = drivers.resource(&addr.id.type_name) else {
            continue;
        };
        let provider = provider.clone().unwrap_or_else(|| base.provider_address());
        let Some((driver, schema)) = drivers.configured(&addr.id.type_name, &provider, false)
        else {
            continue;
        };
        let tags = Tags {
            address: address.clone(),
            lineage: lineage.to_string(),
        };
        let found = driver
            .find_tagged(&addr.id.type_name, &tags)
            .await
            .map_err(|e| {
                Diags::from(Diag::new(
                    "strata::recover",
                    format!("Cannot look for {address}"),
                    e.to_string(),
                ))
            })?;
        let mut found = found.into_iter();
        if let Some(v) = found.next() {
            let attributes =
                crate::lang::json::value_to_json(&v, &schema.object_type()).map_err(|e| {
                    Diags::from(Diag::new(
                        "strata::recover",
                        format!("Cannot adopt {address}"),
                        e,
                    ))
                })?;
            out.push(adopted(&addr, provider.clone(), schema.version, attributes));
        }
        for extra in found {
            driver
                .delete(&addr.id.type_name, &extra)
                .await
                .map_err(|e| {
                    Diags::from(Diag::new(
                        "strata::recover",
                        format!("Cannot delete a duplicate of {address}"),
                        e.to_string(),
                    ))
                })?;
        }
    }
    Ok(out)
}

/// The state entry for an object found in the cloud (adopted after a
/// crash, or imported): its attributes alone, nothing known yet of its
/// dependencies.
fn adopted(
    addr: &strata_state::model::Address,
    provider: String,
    schema_version: u64,
    attributes: serde_json::Value,
) -> Entry {
    Entry::Put {
        resource: addr.id.clone(),
        provider,
        instance: strata_state::InstanceState {
            index_key: addr.key.clone(),
            status: None,
            deposed: None,
            schema_version,
            attributes: attributes.into(),
            private: None,
            sensitive_attributes: Vec::new(),
            dependencies: Vec::new(),
            create_before_destroy: false,
        },
    }
}

/// The plan of a prepared configuration; `described` when it is shown as
/// JSON or saved (see [`Request::describe_configuration`]).
fn make_plan(
    p: &Prepared,
    state: &State,
    opts: &Options,
    drivers: &Drivers,
    rt: &tokio::runtime::Runtime,
    described: bool,
) -> Result<Plan, Failed> {
    let mut plan = crate::plan::plan(
        Request {
            root: &p.module,
            graph: &p.graph,
            drivers,
            vars: p.vars.clone(),
            run: p.run.clone(),
            state,
            refresh: opts.refresh,
            mode: opts.mode,
            inspect: Some(&|read| crate::cluster::portability::check(&p.expansion, read)),
            prices: &p.expansion.prices.clone().then(opts.prices.clone()),
            describe_configuration: described,
            scope: &opts.scope,
            replace: &opts.replace,
            parallelism: opts.parallelism,
        },
        rt,
    )?;
    // An ephemeral value is never written down: not in plan JSON, not in
    // a saved plan (applying one takes it again).
    for v in p.module.variables.iter().filter(|v| v.ephemeral) {
        plan.variables.remove(&v.name);
    }
    plan.placements = p.expansion.placements().cloned().collect();
    plan.plugin_served = plugin_served(drivers);
    Ok(plan)
}

fn render(plan: &Plan, format: Format) -> String {
    match format {
        Format::Human => crate::render::human::plan(plan),
        Format::Json => crate::render::json::plan(plan, config::TERRAFORM_LANGUAGE),
        Format::Markdown => crate::render::markdown::plan(plan),
    }
}

/// What `plan`, `cost` and `drift` share: the configuration at `path`
/// prepared and planned against its state, read under the state's lock,
/// which is held while this lives.
struct Planned {
    p: Prepared,
    state: State,
    plan: Plan,
    _lock: Lock,
    rt: tokio::runtime::Runtime,
}

fn planned(
    path: &Path,
    wants: Wants,
    opts: &Options,
    described: bool,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Planned, Failed> {
    planned_saving(path, wants, opts, described, None, sources, drivers)
}

/// [`planned`], saving a plan that fails to `partial_out` as Terraform
/// saves one (marked errored: tools read it, apply refuses it).
fn planned_saving(
    path: &Path,
    wants: Wants,
    opts: &Options,
    described: bool,
    partial_out: Option<&Path>,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Planned, Failed> {
    crate::timings::stage("start");
    require_configuration(path, wants, opts.mode)?;
    let now = OffsetDateTime::now_utc();
    let none = placements(None, &opts.replace_placement, now);
    let p = prepare(path, None, opts, &none, sources, drivers)?;
    crate::timings::stage("prepared");
    let rt = crate::runtime::start(opts.parallelism)?;
    let store = crate::backends::open(opts.state.as_deref(), &p.module, &opts.workspace)?;
    let operation = match wants {
        Wants::Drift => "drift",
        _ => "plan",
    };
    // From the lock on, Ctrl-C stops the run gracefully (interrupt.rs).
    let _graceful = crate::interrupt::Graceful::new();
    let (lock, state, existed) = open_state(&store, operation, opts, drivers, &rt, false)?;
    if opts.state.is_none() {
        crate::backends::unmoved(&p.module, &opts.workspace, existed)?;
    }
    let p = placed(p, (path, None), &state, opts, now, sources, drivers)?;
    crate::timings::stage("state loaded");
    let plan = make_plan(&p, &state, opts, drivers, &rt, described)
        .map_err(|f| f.map_diags(|d| p.expansion.explain(d, sources)));
    let plan = match plan {
        Ok(plan) => plan,
        Err(f) => {
            if let (Some(out), Some(partial)) = (partial_out, f.partial.as_deref()) {
                write_file(out, &saved_of(&p, partial.clone(), opts).encode())?;
            }
            return Err(f);
        }
    };
    crate::timings::stage("planned");
    Ok(Planned {
        p,
        state,
        plan,
        _lock: lock,
        rt,
    })
}

/// `plan` as a plan file holds it, with the configuration it was made
/// from.
fn saved_of(p: &Prepared, plan: Plan, opts: &Options) -> Saved {
    // Absolute, so `strata apply FILE` finds it from any directory.
    let dir = match p.module.dir.as_os_str().is_empty() {
        true => PathBuf::from("."),
        false => p.module.dir.clone(),
    };
    let dir = dir.canonicalize().unwrap_or(dir);
    Saved {
        config_dir: dir.display().to_string(),
        files: p.files.clone(),
        plan,
        replace_placement: opts.replace_placement.clone(),
    }
}

pub fn plan(
    path: &Path,
    opts: &Options,
    out: Option<&Path>,
    format: Format,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Outcome, Diags> {
    let described = format == Format::Json || out.is_some();
    let generated = match &opts.generate_config_out {
        Some(file) => generate::config(path, opts, file, sources, drivers)?,
        None => generate::Generated::default(),
    };
    let written = opts
        .generate_config_out
        .as_ref()
        .filter(|_| !generated.blocks.is_empty());
    let experimental = written.map(|_| {
        Diag::new(
            "strata::plan::generate_config",
            "Config generation is experimental",
            "Generating configuration during import is currently experimental, and the generated configuration format may change in future versions.",
        )
        .warning()
    });
    // Bound whole, so the lock is held to the end; fields move out of it.
    let held = match planned_saving(path, Wants::Plan, opts, described, out, sources, drivers) {
        Ok(held) => held,
        Err(mut f) => {
            if let Some(partial) = f.partial.as_mut() {
                let importing = |addr: &str| {
                    let change = partial.changes.iter().find(|c| c.addr.to_string() == addr);
                    change.is_some_and(|c| c.importing.is_some())
                };
                generated.settle(&importing)?;
                partial.generated_config = generated.blocks;
                partial.warnings.extend(experimental);
            }
            return Err(shown_partial(f, Partial::Always, opts.json, sources));
        }
    };
    let (p, state, mut plan) = (held.p, held.state, held.plan);
    if let Some(warning) = experimental {
        plan.generated_config = generated.blocks;
        plan.warnings.push(warning);
    }
    match opts.json {
        true => {
            for l in crate::render::ui::plan(&plan) {
                println!("{l}");
            }
            said_as_messages(&plan.warnings, sources);
        }
        false => {
            if format == Format::Human {
                print!("{}", crate::render::human::refreshing(&plan, opts.refresh));
                print!("{}", plugin_note(&plan));
            }
            print!("{}", render(&plan, format));
            warn(&plan.warnings, sources, format == Format::Human);
            let advice = !crate::ui::in_automation();
            let unsaved = format == Format::Human && out.is_none() && plan.applyable() && advice;
            // Like the -out note, advice a script (TF_IN_AUTOMATION) is
            // not given.
            let written = written.filter(|_| advice);
            if unsaved || written.is_some() {
                println!("\n{}", crate::render::human::RULE);
            }
            if let Some(file) = written {
                println!("\nstrata has generated configuration and written it to {}. Please review\nthe configuration and edit it as necessary before adding it to version\ncontrol.", file.display());
            }
            if unsaved {
                println!("\nNote: You didn't use the -out option to save this plan, so strata can't\nguarantee to take exactly these actions if you run \"strata apply\" now.");
            }
        }
    }
    crate::timings::stage("rendered");
    if let Some(out) = out {
        let saved = saved_of(&p, plan, opts);
        write_file(out, &saved.encode())?;
        if format == Format::Human && !opts.json {
            let rule = crate::render::human::RULE;
            let file = out.display();
            println!("\n{rule}\n\nSaved the plan to: {file}\n\nTo perform exactly these actions, run the following command to apply:\n    strata apply \"{file}\"");
        }
        let outcome = outcome_of(&saved.plan);
        crate::par::drop_later((saved, state));
        return Ok(outcome);
    }
    let outcome = outcome_of(&plan);
    crate::par::drop_later((plan, state));
    Ok(outcome)
}

/// `strata cost`: the plan's cost alone, for the monthly review (what
/// the state holds against what the configuration would make). Nothing is
/// applied or saved.
pub fn cost(
    path: &Path,
    opts: &Options,
    format: Format,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<(), Diags> {
    let held = planned(path, Wants::Plan, opts, false, sources, drivers)?;
    let (state, plan) = (held.state, held.plan);
    let standing = crate::render::placement::standing(&plan.placements, &BTreeMap::new());
    let text = match format {
        Format::Human => {
            let cost = match plan.cost.is_empty() {
                true => "Nothing in this configuration or its state is priced: no node pools or managed control planes.\n".to_string(),
                false => crate::render::cost::human(&plan.cost),
            };
            cost + &standing
        }
        Format::Json => {
            let mut j = plan.cost.to_json();
            if let (Some(o), false) = (j.as_object_mut(), plan.placements.is_empty()) {
                o.insert(
                    "placements".into(),
                    crate::placement::to_json(&plan.placements),
                );
            }
            format!("{j}\n")
        }
        Format::Markdown => format!(
            "### strata cost\n\n{}{standing}",
            crate::render::cost::markdown(&plan.cost)
        ),
    };
    print!("{}", text.trim_start_matches('\n'));
    warn(&plan.warnings, sources, false);
    crate::par::drop_later((plan, state));
    Ok(())
}

fn outcome_of(plan: &Plan) -> Outcome {
    match plan.applyable() {
        true => Outcome::Changes,
        false => Outcome::NoChanges,
    }
}

/// `strata drift`: the plan's refresh, reported on its own. The plan is
/// made (a provider configured from another resource's attributes is
/// only known in its walk) but neither shown nor saved, and the state is
/// never written.
pub fn drift(
    path: &Path,
    opts: &Options,
    format: Format,
    ignore: &[String],
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Outcome, Diags> {
    let patterns = ignore
        .iter()
        .map(|p| {
            glob::Pattern::new(p).map_err(|e| {
                Diags::from(Diag::new(
                    "strata::drift::ignore",
                    format!("Invalid --ignore pattern {p:?}"),
                    e.to_string(),
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let held = planned(path, Wants::Drift, opts, false, sources, drivers)?;
    let plan = held.plan;
    // Wanted GPU nodes that run nowhere are the drift a cron must report.
    let unplaced = plan.unplaced().next().is_some();
    // Placed pools' GPUs as their clusters offer them now.
    let ready = held
        .rt
        .block_on(failover::gpus_now(drivers, &plan.placements));
    let standing = crate::render::placement::standing(&plan.placements, &ready);
    let schemas = plan.schemas;
    let drift: Vec<_> = plan
        .drift
        .into_iter()
        .filter(|c| {
            let addr = c.addr.to_string();
            !patterns.iter().any(|p| p.matches(&addr))
        })
        .collect();
    print!(
        "{}",
        match format {
            Format::Human => crate::render::drift::human(&drift, &schemas) + &standing,
            Format::Json => drift_json(&drift, &plan.placements, &ready),
            Format::Markdown => crate::render::drift::markdown(&drift, &schemas) + &standing,
        }
    );
    Ok(if drift.is_empty() && !unplaced {
        Outcome::NoChanges
    } else {
        Outcome::Changes
    })
}

/// The drift report's JSON, with each placed pool and the GPUs its
/// nodes offer now (`ready_gpus_now`).
fn drift_json(
    drift: &[crate::plan::ResourceChange],
    placements: &[crate::placement::Decision],
    ready: &BTreeMap<String, u64>,
) -> String {
    let mut report = crate::render::drift::json(drift);
    if let (Some(o), false) = (report.as_object_mut(), placements.is_empty()) {
        let mut placed = crate::placement::to_json(placements);
        for p in placed.as_array_mut().into_iter().flatten() {
            let pool = p["pool"].as_str().unwrap_or_default().to_string();
            p["ready_gpus_now"] = serde_json::json!(ready.get(&pool));
        }
        o.insert("placements".into(), placed);
    }
    format!("{report}\n")
}

fn write_file(path: &Path, text: &str) -> Result<(), Diags> {
    let tmp = PathBuf::from(format!("{}.tmp", path.display()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| io_diag("write", path, e))
}

/// Reads a saved plan if `path` is one.
/// The plan file at `path`, with the schemas of its types from `drivers`;
/// `None` when `path` is not a plan file but a configuration.
fn saved_plan(path: &Path, drivers: &Drivers) -> Result<Option<Saved>, Diags> {
    if !path.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).map_err(|e| io_diag("read", path, e))?;
    if !text.trim_start().starts_with('{') {
        return Ok(None);
    }
    let mut saved = Saved::decode(&text).map_err(|e| {
        Diags::from(Diag::new(
            "strata::plan::file",
            format!("{} is not a usable plan file", path.display()),
            e,
        ))
    })?;
    let plan = &saved.plan;
    saved.plan.schemas = Schemas::gather(plan.changes.iter().chain(&plan.drift), drivers);
    // Like the schemas, which served what is this run's drivers'.
    saved.plan.plugin_served = plugin_served(drivers);
    Ok(Some(saved))
}

fn confirm(mode: crate::plan::Mode) -> bool {
    let what = if mode.is_destroy() {
        "Do you really want to destroy all resources?\n  strata will destroy all your managed infrastructure, as shown above.\n  There is no undo. Only 'yes' will be accepted to confirm."
    } else {
        "Do you want to perform these actions?\n  strata will perform the actions described above.\n  Only 'yes' will be accepted to approve."
    };
    ask(what)
}

/// Asks `what` on stdout and reads the answer: true for `yes` alone.
pub fn ask(what: &str) -> bool {
    print!("\n{what}\n\n  Enter a value: ");
    let _ = std::io::stdout().flush();
    // Ctrl-C at the question is a "no": the run lets go of the state.
    let line = crate::interrupt::read_answer().unwrap_or_default();
    println!();
    line.trim() == "yes"
}

/// `strata apply [PATH|PLANFILE]` and `strata destroy [PATH]`.
pub fn apply(
    target: &Path,
    opts: &Options,
    auto_approve: bool,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Outcome, Diags> {
    crate::timings::stage("start");
    let saved = if opts.mode.is_destroy() {
        None
    } else {
        saved_plan(target, drivers)?
    };
    if saved.as_ref().is_some_and(|s| s.plan.errored) {
        return Err(Diags::from(Diag::new(
            "strata::apply::incomplete",
            "Cannot apply incomplete plan",
            "strata encountered an error when generating this plan, so it cannot be applied.",
        )));
    }
    let from_file = saved.is_some();
    if opts.json && !from_file && !auto_approve {
        return Err(Diags::from(Diag::new(
            "strata::apply::json",
            "Plan file or auto-approve required",
            "strata cannot ask for interactive approval when -json is set. You can either apply a saved plan file, or enable the -auto-approve option.",
        )));
    }
    // A saved plan is expanded as when it was planned: its moment decides
    // which cool-downs are over, its `--replace-placement` which pools move.
    let (config_dir, saved_vars, now, opts) = match &saved {
        Some(s) => {
            if !s.plan.timestamp.is_empty() {
                crate::funcs::set_plan_timestamp(&s.plan.timestamp);
            }
            let at = OffsetDateTime::parse(
                &s.plan.timestamp,
                &time::format_description::well_known::Rfc3339,
            )
            .unwrap_or_else(|_| OffsetDateTime::now_utc());
            // The graph is narrowed as it was for the plan.
            let opts = Options {
                replace_placement: s.replace_placement.clone(),
                scope: s.plan.scope.clone(),
                // A saved plan's refresh-only mode is kept; the command
                // that applies it is an apply, whatever it planned.
                mode: match s.plan.mode {
                    crate::plan::Mode::RefreshOnly => crate::plan::Mode::RefreshOnly,
                    _ => opts.mode,
                },
                ..opts.clone()
            };
            let vars = Some(s.plan.variables.clone());
            (PathBuf::from(&s.config_dir), vars, at, opts)
        }
        None => {
            require_configuration(target, Wants::Apply, opts.mode)?;
            let now = OffsetDateTime::now_utc();
            (target.to_path_buf(), None, now, opts.clone())
        }
    };
    let opts = &opts;
    let none = placements(None, &opts.replace_placement, now);
    let p = prepare(
        &config_dir,
        saved_vars.clone(),
        opts,
        &none,
        sources,
        drivers,
    )?;
    if let Some(s) = &saved {
        if p.files != s.files {
            return Err(Diags::from(Diag::new(
                "strata::apply::config_changed",
                "Saved plan does not match the configuration",
                format!("The configuration in {} has changed since this plan was made, so the plan may no longer describe it. Make a new plan.", s.config_dir),
            )));
        }
    }
    crate::timings::stage("prepared");
    let rt = crate::runtime::start(opts.parallelism)?;
    let store = crate::backends::open(opts.state.as_deref(), &p.module, &opts.workspace)?;
    let op = if opts.mode.is_destroy() {
        "destroy"
    } else {
        "apply"
    };
    // From the lock on, Ctrl-C stops the run gracefully (interrupt.rs).
    let _graceful = crate::interrupt::Graceful::new();
    let (lock, mut state, existed) = open_state(&store, op, opts, drivers, &rt, true)?;
    if opts.state.is_none() {
        crate::backends::unmoved(&p.module, &opts.workspace, existed)?;
    }
    crate::timings::stage("state loaded");
    let again = (config_dir.as_path(), saved_vars.clone());
    let p = placed(p, again, &state, opts, now, sources, drivers)?;
    let plan = match saved {
        Some(s) => {
            let mut plan = s.plan;
            if !existed && plan.serial == 0 && state.resources.is_empty() {
                // Planned against no state: the new state takes the lineage.
                state.lineage = plan.lineage.clone();
            }
            if plan.lineage != state.lineage {
                // No state here: its lineage is only the one a new state
                // would have been given, not worth naming.
                let found = match existed {
                    true => format!("{} has lineage {}", store.location(), state.lineage),
                    false => format!("there is no state at {}", store.location()),
                };
                return Err(Diags::from(Diag::new(
                    "strata::apply::lineage",
                    "Saved plan does not match the given state",
                    format!("The given plan file can not be applied because it was created from a different state lineage: it was made against state lineage {}, and {found}. Nothing was changed.", plan.lineage),
                )));
            }
            if plan.serial != state.serial {
                return Err(Diags::from(Diag::new(
                    "strata::apply::stale",
                    "Saved plan is stale",
                    format!("The state has changed since this plan was made (serial {} then, {} now), so applying it could undo those changes. Nothing was changed; make a new plan.", plan.serial, state.serial),
                )));
            }
            plan.placements = p.expansion.placements().cloned().collect();
            plan
        }
        None => {
            let plan = make_plan(&p, &state, opts, drivers, &rt, false)
                .map_err(|f| shown_partial(f, Partial::WithChanges, opts.json, sources))
                .map_err(|d| p.expansion.explain(d, sources))?;
            crate::timings::stage("planned");
            let scoped = crate::plan::scope_warning(&plan.scope);
            match opts.json {
                true => {
                    for l in crate::render::ui::plan(&plan) {
                        println!("{l}");
                    }
                    said_as_messages(scoped.as_slice(), sources);
                }
                false => {
                    print!("{}", crate::render::human::refreshing(&plan, opts.refresh));
                    print!("{}", plugin_note(&plan));
                    print!("{}", crate::render::human::plan(&plan));
                    warn(scoped.as_slice(), sources, true);
                }
            }
            // Objects changed outside strata are recorded even when
            // nothing else is to be done.
            if !plan.has_changes()
                && plan.drift.is_empty()
                && crate::apply::stale_dependencies(&plan, &state).is_empty()
                && !plan
                    .placements
                    .iter()
                    .any(|d| d.moves() || d.awaits_first_gpu())
            {
                return Ok(Outcome::NoChanges);
            }
            if plan.has_changes() && !auto_approve && !confirm(opts.mode) {
                return Err(Diags::from(Diag::new(
                    "strata::apply::cancelled",
                    if opts.mode.is_destroy() {
                        "Destroy cancelled"
                    } else {
                        "Apply cancelled"
                    },
                    "Only 'yes' approves. Nothing was changed.",
                )));
            }
            plan
        }
    };
    match (from_file, opts.json) {
        // A saved plan is applied without showing it again, and without
        // a word, as Terraform applies one.
        (true, false) => {}
        // The stream says what is planned, as Terraform's does.
        (true, true) => {
            for l in crate::render::ui::planned_changes(&plan) {
                println!("{l}");
            }
        }
        (false, _) => {}
    }
    if !existed {
        // The lineage tags every object created from here on; it must be
        // on disk before the first create, or a crash would leave objects
        // tagged with a lineage no state remembers.
        store.persist(&lock, &mut state).map_err(state_err)?;
    }
    let run = failover::Applying {
        store: &store,
        lock: &lock,
        rt: &rt,
        opts,
        drivers,
        config_dir: &config_dir,
        vars: saved_vars,
    };
    let applied_scope = crate::plan::applied_scope_warning(&plan.scope);
    let (state, report, p) = run.rounds(p, plan, state, sources)?;
    match opts.json {
        true => said_as_messages(applied_scope.as_slice(), sources),
        false => warn(applied_scope.as_slice(), sources, true),
    }
    let outcome = summary(&report.applied, &state, &p.module, (opts.mode, opts.json));
    warn(&report.applied.warnings, sources, !opts.json);
    match report.unplaced.is_empty() {
        true => outcome,
        false => Err(Diags(report.unplaced)),
    }
}

/// Warnings as the machine-readable UI's diagnostic messages.
fn said_as_messages(warnings: &[Diag], sources: &Sources) {
    for d in warnings {
        println!(
            "{}",
            crate::ui::diagnostic(true, &d.summary, d.to_json(sources))
        );
    }
}

/// Warnings (failed checks) on stderr, rendered like errors.
/// Warnings: beside human output, where and as Terraform writes them
/// (stdout, its layout); beside JSON or markdown on stdout, on stderr.
fn warn(warnings: &[Diag], sources: &Sources, human: bool) {
    for d in warnings {
        match human {
            true => print!("{}", d.terraform_text(sources)),
            false => eprintln!("{:?}", miette::Report::new(d.report(sources))),
        }
    }
}

/// Each failed operation as an error, pointed at its block when the
/// configuration still has it.
fn failures(report: &apply::Report, root: &Module) -> Diags {
    let mut diags = Diags::default();
    for f in &report.failed {
        if let Some(d) = &f.diag {
            diags.push(d.clone());
            continue;
        }
        let r = root.resource_at(&f.addr.id);
        // A provider's own errors, each where its path leads in the block,
        // as Terraform shows them.
        if let (Some(r), true) = (r, f.problems.iter().any(|p| p.error)) {
            for d in crate::walk::provider_problems(&f.problems, r) {
                diags.push(d);
            }
            continue;
        }
        let mut d = Diag::new(
            "strata::apply::failed",
            format!("{} failed", f.addr),
            f.why.clone(),
        );
        if let Some(r) = r {
            d = d.at(r.span);
        }
        diags.push(d);
    }
    diags
}

/// The apply's end as the machine-readable UI tells it: the
/// `change_summary` and the outputs' values.
fn summary_messages(report: &apply::Report, state: &State, mode: crate::plan::Mode) {
    let r = report;
    let summary = crate::render::ui::applied(r.added, r.changed, r.destroyed, r.imported, mode);
    let destroy = mode.is_destroy();
    println!("{summary}");
    let outputs = state_outputs(state);
    match crate::render::ui::outputs(&outputs, true) {
        Some(l) if !destroy => println!("{l}"),
        _ => {}
    }
}

/// What the apply did, or what failed: in Terraform's words, or (`json`)
/// its machine-readable UI's.
fn summary(
    report: &apply::Report,
    state: &State,
    root: &Module,
    (mode, json): (crate::plan::Mode, bool),
) -> Result<Outcome, Diags> {
    let destroy = mode.is_destroy();
    if json && report.failed.is_empty() {
        summary_messages(report, state, mode);
        return Ok(Outcome::Changes);
    }
    if !report.failed.is_empty() {
        let diags = failures(report, root);
        if json {
            return Err(diags);
        }
        println!(
            "\nApply stopped: {} added, {} changed, {} destroyed; {} failed, {} skipped because something they depend on failed.",
            report.added,
            report.changed,
            report.destroyed,
            report.failed.len(),
            report.skipped.len()
        );
        for s in &report.skipped {
            println!("  skipped: {s}");
        }
        return Err(diags);
    }
    if destroy {
        println!(
            "\nDestroy complete! Resources: {} destroyed.",
            report.destroyed
        );
    } else {
        let imported = if report.imported > 0 {
            format!("{} imported, ", report.imported)
        } else {
            String::new()
        };
        // Terraform 1.11 does not count what `removed` blocks forgot here.
        println!(
            "\nApply complete! Resources: {imported}{} added, {} changed, {} destroyed.",
            report.added, report.changed, report.destroyed
        );
    }
    if !destroy && !state.outputs.is_empty() {
        println!("\nOutputs:\n");
        for (name, o) in &state.outputs {
            let shown = if o.sensitive {
                "<sensitive>".to_string()
            } else {
                crate::lang::json::type_from_json(&o.ty)
                    .and_then(|t| crate::lang::json::value_from_json(&o.value, &t))
                    .map(|v| crate::lang::display::show(&v))
                    .unwrap_or_else(|_| o.value.to_string())
            };
            println!("{name} = {shown}");
        }
    }
    Ok(Outcome::Changes)
}

/// A state read and decoded for showing: each object by its driver's
/// schema, the outputs by their recorded types; and whether it existed.
fn shown_state(
    store: &Store,
    drivers: &Drivers,
) -> Result<
    (
        Vec<crate::plan::ResourceChange>,
        Vec<crate::plan::OutputChange>,
        bool,
    ),
    Diags,
> {
    let loaded = store.load().map_err(state_err)?;
    // A state only a killed run's journal holds is a state all the same.
    let existed = loaded.existed || loaded.replay.applied > 0;
    let state = loaded.state;
    let objects = crate::plan::state_objects(&state, drivers)?;
    Ok((objects, state_outputs(&state), existed))
}

/// The state's outputs, each as a change that changes nothing.
fn state_outputs(state: &State) -> Vec<crate::plan::OutputChange> {
    state
        .outputs
        .iter()
        .map(|(name, o)| {
            let value = crate::lang::json::type_from_json(&o.ty)
                .and_then(|t| crate::lang::json::value_from_json(&o.value, &t))
                .ok();
            crate::plan::OutputChange {
                name: name.clone(),
                before: value.clone(),
                after: value,
                sensitive: o.sensitive,
            }
        })
        .collect()
}

/// The root module's resources as a state holds them, by the address an
/// expression names them with (`aws_vpc.main`, `data.t.n`): one object,
/// or the instances by index (a tuple) or key (an object). The console
/// evaluates over them, as Terraform's does.
pub struct StateValues(BTreeMap<String, Value>);

impl config::Known for StateValues {
    fn get(&self, local_addr: &str) -> Option<Value> {
        self.0.get(local_addr).cloned()
    }
}

/// The state `store` holds, decoded for the console.
pub fn state_values(store: &Store, drivers: &Drivers) -> Result<StateValues, Diags> {
    let (objects, _, _) = shown_state(store, drivers)?;
    Ok(console_values(
        objects.iter().filter(|c| c.deposed.is_none()),
    ))
}

/// What a plan of the configuration at `path` would leave, for `console
/// -plan`: each object as planned (unknown where the plan cannot know),
/// what the plan leaves alone as the state holds it.
pub fn planned_values(
    path: &Path,
    opts: &Options,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<StateValues, Diags> {
    let held = planned(path, Wants::Plan, opts, false, sources, drivers)?;
    let plan = &held.plan;
    let kept = plan.changes.iter().chain(&plan.untouched).filter(|c| {
        c.deposed.is_none()
            && !matches!(
                c.action,
                crate::plan::Action::Delete | crate::plan::Action::Forget
            )
    });
    Ok(console_values(kept))
}

/// The root module's objects by the address an expression names them
/// with: one object, or the instances by index (a tuple) or key (an
/// object).
fn console_values<'c>(
    objects: impl Iterator<Item = &'c crate::plan::ResourceChange>,
) -> StateValues {
    use strata_state::model::{InstanceKey, Mode};
    let mut grouped: BTreeMap<String, Vec<(Option<InstanceKey>, Value)>> = BTreeMap::new();
    for c in objects.filter(|c| c.addr.id.module.is_root()) {
        let id = &c.addr.id;
        let name = match id.mode {
            Mode::Managed => format!("{}.{}", id.type_name, id.name),
            Mode::Data => format!("data.{}.{}", id.type_name, id.name),
        };
        let value = c
            .after
            .clone()
            .or_else(|| c.before.clone())
            .unwrap_or_else(Value::null);
        grouped
            .entry(name)
            .or_default()
            .push((c.addr.key.clone(), value));
    }
    let values = grouped
        .into_iter()
        .map(|(name, mut instances)| {
            let value = match instances.first().map(|(k, _)| k.clone()) {
                Some(Some(InstanceKey::Int(_))) => {
                    instances.sort_by(|a, b| a.0.cmp(&b.0));
                    Value::Tuple(instances.into_iter().map(|(_, v)| v).collect())
                }
                Some(Some(InstanceKey::Str(_))) => Value::Object(
                    instances
                        .into_iter()
                        .filter_map(|(k, v)| match k {
                            Some(InstanceKey::Str(s)) => Some((s, v)),
                            _ => None,
                        })
                        .collect(),
                ),
                _ => instances.pop().map(|(_, v)| v).unwrap_or_else(Value::null),
            };
            (name, value)
        })
        .collect();
    StateValues(values)
}

/// `strata state show ADDR`: one instance as Terraform prints it.
pub fn state_show(store: &Store, addr: &str, drivers: &Drivers) -> Result<String, Diags> {
    let (objects, _, existed) = shown_state(store, drivers)?;
    if !existed {
        return Err(crate::statecmd::no_state());
    }
    let wanted = strata_state::model::Address::parse(addr);
    let found = objects.iter().filter(|c| c.deposed.is_none()).find(|c| {
        wanted.as_ref().is_some_and(|a| {
            a.id == c.addr.id
                && (a.key == c.addr.key
                    || (a.key.is_none()
                        && objects.iter().filter(|o| o.addr.id == a.id).count() == 1))
        })
    });
    let schemas = crate::plan::Schemas::gather(found, drivers);
    found
        .map(|c| crate::render::human::state_object(c, &schemas))
        .ok_or_else(|| {
            Diags::from(Diag::new(
                "strata::state::no_instance",
                "No instance found for the given address",
                format!(
                    "The state holds no instance {addr}. `strata state list` shows what it holds."
                ),
            ))
        })
}

/// `strata show [--json] [PLANFILE]`.
pub fn show(
    planfile: Option<&Path>,
    json: bool,
    state: Option<&Path>,
    workspace: &str,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<(), Diags> {
    match planfile {
        Some(f) if !f.exists() => Err(Diags::from(Diag::new(
            "strata::show",
            format!("No such file: {}", f.display()),
            "Give a file written by `strata plan --out FILE`.",
        ))),
        Some(f) => {
            let saved = saved_plan(f, drivers)?.ok_or_else(|| {
                Diags::from(Diag::new(
                    "strata::show",
                    format!("{} is not a plan file", f.display()),
                    "Give a file written by `strata plan --out`.",
                ))
            })?;
            let text = if json {
                crate::render::json::plan(&saved.plan, config::TERRAFORM_LANGUAGE)
            } else {
                crate::render::human::plan(&saved.plan)
            };
            print!("{text}");
            Ok(())
        }
        None => {
            let store = crate::backends::open_here(state, workspace, sources)?;
            let (objects, outputs, existed) = shown_state(&store, drivers)?;
            let text = match json {
                true => {
                    let something = !objects.is_empty() || !outputs.is_empty();
                    let language = config::TERRAFORM_LANGUAGE;
                    crate::render::json::state(&objects, &outputs, existed && something, language)
                }
                false => {
                    let schemas = crate::plan::Schemas::gather(&objects, drivers);
                    crate::render::human::state(&objects, &schemas, &outputs, existed)
                }
            };
            print!("{text}");
            Ok(())
        }
    }
}
