//! A command's session: the configuration prepared, the state's backend
//! opened, its lock held, the state loaded (what an interrupted apply left
//! recovered) and the runtime the drivers' calls run on. Each engine
//! command opens one and runs its steps over it, as OpenTofu's commands
//! run over a `Context`.

use super::prepare::{placements, prepare, CloudAsks, Prepared};
use super::view::{Notice, View};
use super::Options;
use crate::builtin::Drivers;
use crate::config;
use crate::diag::{Diag, Diags, Sources};
use crate::lang::value::Value;
use crate::plan::{Failed, Mode, Plan};
use crate::statecmd::state_err;
use std::collections::BTreeMap;
use std::path::Path;
use strata_provider::Tags;
use strata_state::{Entry, Lock, State, Store};
use time::OffsetDateTime;

/// What a command does to the state, which names its lock and decides
/// whether what an interrupted apply left is recovered (a command that
/// writes) or only folded in (one that reads).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Operation {
    Plan,
    Drift,
    Apply,
    Destroy,
    Import,
}

impl Operation {
    /// The lock's `Operation`, as Terraform names it.
    fn name(self) -> &'static str {
        match self {
            Operation::Plan => "plan",
            Operation::Drift => "drift",
            Operation::Apply => "apply",
            Operation::Destroy => "destroy",
            Operation::Import => "import",
        }
    }

    fn writes(self) -> bool {
        matches!(
            self,
            Operation::Apply | Operation::Destroy | Operation::Import
        )
    }
}

/// Where a session's configuration comes from: its directory, the
/// variables of a saved plan (none: resolved from the command line), and
/// the moment its expansion is judged at (which cool-downs are over).
pub(super) struct Source<'a> {
    pub dir: &'a Path,
    pub vars: Option<BTreeMap<String, Value>>,
    pub now: OffsetDateTime,
}

impl Source<'_> {
    /// The configuration prepared before the state is read: expanded
    /// without placement records.
    pub fn prepare(
        &self,
        opts: &Options,
        sources: &mut Sources,
        drivers: &Drivers,
    ) -> Result<Prepared, Diags> {
        let none = placements(None, &opts.replace_placement, self.now);
        prepare(self.dir, self.vars.clone(), opts, &none, sources, drivers)
    }
}

/// An open session. The lock is held, and Ctrl-C stops the run
/// gracefully (interrupt.rs), while it lives.
pub(super) struct Session {
    pub p: Prepared,
    pub store: Store,
    pub lock: Lock,
    pub state: State,
    /// Whether a state existed before this run.
    pub existed: bool,
    pub rt: tokio::runtime::Runtime,
    _graceful: crate::interrupt::Graceful,
}

/// How a session is opened: by which command, over what configuration.
pub(super) struct Opening<'a, 'v> {
    pub op: Operation,
    pub from: &'a Source<'a>,
    pub opts: &'a Options,
    pub view: &'v mut dyn View,
    /// The state read ahead, if it was ([`early_state`]).
    pub early: strata_state::Early,
}

/// The state read and parsed ahead, on a thread of its own, while the
/// configuration loads: `-state`'s file or the one the default backend
/// keeps for the workspace. Used only if the state read under the lock is
/// the same text; a configuration whose backend is another never is.
pub(super) fn early_state(opts: &Options) -> strata_state::Early {
    let path = match &opts.state {
        Some(p) => p.clone(),
        None => crate::backends::default_path(&opts.workspace),
    };
    strata_state::Early::read(path)
}

impl Session {
    /// Opens the state for `p` and expands it again with the state's
    /// placement records.
    pub fn open(
        p: Prepared,
        how: Opening<'_, '_>,
        sources: &mut Sources,
        drivers: &Drivers,
    ) -> Result<Session, Diags> {
        let Opening {
            op,
            from,
            opts,
            view,
            early,
        } = how;
        let rt = crate::runtime::start(opts.parallelism)?;
        let store = crate::backends::open(opts.state.as_deref(), &p.module, &opts.workspace)?;
        let graceful = crate::interrupt::Graceful::new();
        let opened = open_state(&store, (op, early), opts, drivers, &rt, view)?;
        if opts.state.is_none() {
            crate::backends::unmoved(&p.module, &opts.workspace, opened.existed)?;
        }
        let p = match op {
            Operation::Import => p,
            _ => placed(p, from, &opened.state, opts, sources, (drivers, &rt))?,
        };
        crate::timings::stage("state loaded");
        Ok(Session {
            p,
            store,
            lock: opened.lock,
            state: opened.state,
            existed: opened.existed,
            rt,
            _graceful: graceful,
        })
    }

    /// The plan of the session's configuration against its state, made
    /// for `purpose`.
    pub fn plan(
        &self,
        opts: &Options,
        purpose: crate::plan::Purpose,
        drivers: &Drivers,
    ) -> Result<Plan, Failed> {
        match &opts.invoke {
            None => {
                super::prepare::make_plan(&self.p, &self.state, opts, drivers, &self.rt, purpose)
            }
            Some(addr) => {
                let over = super::invoke::Over {
                    p: &self.p,
                    state: &self.state,
                    store: &self.store,
                    rt: &self.rt,
                };
                super::invoke::plan(&over, opts, addr, purpose, drivers)
            }
        }
    }

    /// Ends the session: the lock released, and a release that failed
    /// told, since the lock may still be held.
    pub fn close(self, view: &mut dyn View) {
        if let Err(e) = self.lock.release() {
            view.notice(Notice::UnlockFailed { why: e.to_string() });
        }
        // The configuration of a large module takes apart as slowly as a
        // plan (13 ms of a 10 000-resource plan's): not waited for either.
        crate::par::drop_later((self.p.module, self.p.graph));
    }

    /// Writes the state as it is now (under the session's lock).
    pub fn persist(&mut self) -> Result<(), Diags> {
        self.store
            .persist(&self.lock, &mut self.state)
            .map_err(state_err)
    }

    /// `entries` recorded: see [`journaled`].
    pub fn record(&mut self, entries: &[Entry]) -> Result<(), Diags> {
        journaled(&self.store, &self.lock, &mut self.state, entries)
    }
}

/// `entries` appended to the journal first (a crash right after still
/// has them), then applied to `state` and the state written.
fn journaled(
    store: &Store,
    lock: &Lock,
    state: &mut State,
    entries: &[Entry],
) -> Result<(), Diags> {
    if !entries.is_empty() {
        store
            .journal(lock)
            .and_then(|mut j| j.append_all(entries))
            .map_err(state_err)?;
        state.apply_all(entries);
    }
    store.persist(lock, state).map_err(state_err)
}

/// Refuses a root module without configuration files: its plan would
/// delete everything the state holds, which an empty or mistaken directory
/// never means. Destroying is the one way to plan everything away, and a
/// destroy without configuration says so.
pub(super) fn require_configuration(
    path: &Path,
    op: Operation,
    mode: Mode,
    view: &mut dyn View,
) -> Result<(), Diags> {
    if !config::config_files(path).map_err(Diags::from)?.is_empty() {
        return Ok(());
    }
    if mode.is_destroy() {
        view.notice(Notice::DestroyWithoutConfiguration {
            dir: path.to_path_buf(),
        });
        return Ok(());
    }
    let what = match op {
        Operation::Plan => "A plan needs configuration: without any, it would plan to destroy every object in the state. To destroy everything, run `strata plan --destroy`.",
        Operation::Apply | Operation::Destroy | Operation::Import => "An apply needs configuration: without any, it would destroy every object in the state. To destroy everything, run `strata destroy`.",
        Operation::Drift => "Drift is read through the providers the configuration sets up, and there is no configuration here.",
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

/// `p` expanded again with the state's placement records, when it has
/// placed pools: a node pool goes where state says it is, or past where
/// it could not. Prepared first without them because reading the state
/// needs the configured drivers (to recover an interrupted apply).
fn placed(
    p: Prepared,
    from: &Source<'_>,
    state: &State,
    opts: &Options,
    sources: &mut Sources,
    (drivers, rt): (&Drivers, &tokio::runtime::Runtime),
) -> Result<Prepared, Diags> {
    let asks = CloudAsks::new(drivers, rt);
    let mut recorded = placements(Some(state), &opts.replace_placement, from.now);
    asks.lend(&mut recorded);
    if p.expansion.placements().next().is_none() && !p.expansion.needs_state(&recorded.calls) {
        return Ok(p);
    }
    let vars = from.vars.clone();
    prepare(from.dir, vars, opts, &recorded, sources, drivers)
}

/// The state as [`open_state`] leaves it.
struct Opened {
    lock: Lock,
    state: State,
    existed: bool,
}

/// Locks and loads the state; adopts or clears what a crashed apply left
/// (open create intents) and folds the journal into the state file.
fn open_state(
    store: &Store,
    (op, early): (Operation, strata_state::Early),
    opts: &Options,
    drivers: &Drivers,
    rt: &tokio::runtime::Runtime,
    view: &mut dyn View,
) -> Result<Opened, Diags> {
    let lock = lock_within(store, op.name(), opts.lock_timeout).map_err(state_err)?;
    if let Some(old) = &lock.took_over {
        view.notice(Notice::LockTakenOver {
            who: old.who.clone(),
            operation: old.operation.clone(),
            since: old.created.clone(),
        });
    }
    let loaded = store.load_with(early).map_err(state_err)?;
    // A run that could not write its state at the end must not start:
    // what it did would live only in the journal.
    if op.writes() && loaded.state.serial == u64::MAX {
        return Err(state_err(strata_state::StateError::SerialExhausted {
            location: store.location(),
            serial: loaded.state.serial,
        }));
    }
    let mut opened = Opened {
        lock,
        state: loaded.state,
        existed: loaded.existed,
    };
    let replay = &loaded.replay;
    if replay.applied == 0 && replay.pending.is_empty() {
        return Ok(opened);
    }
    if !op.writes() {
        folded(store, &mut opened, replay, view)?;
        return Ok(opened);
    }
    let recovered = rt.block_on(recover(&replay.pending, &opened.state, drivers))?;
    journaled(store, &opened.lock, &mut opened.state, &recovered.adopted)?;
    view.notice(Notice::Recovered {
        recorded: replay.applied,
        adopted: recovered.adopted.len(),
        discarded: recovered.discarded,
    });
    opened.existed = true;
    Ok(opened)
}

/// For a command that does not write: what is only in the journal is
/// invisible to Terraform, which reads the state alone, so it is written
/// now, the creates still in question kept for the next apply to look for.
fn folded(
    store: &Store,
    opened: &mut Opened,
    replay: &strata_state::Replay,
    view: &mut dyn View,
) -> Result<(), Diags> {
    let pending = &replay.pending;
    let folds = replay.applied > pending.len();
    let (lock, state) = (&opened.lock, &mut opened.state);
    match (folds, pending.is_empty()) {
        (false, _) => {}
        // Nothing left in question: the journal goes with the write.
        (true, true) => store.persist(lock, state).map_err(state_err)?,
        (true, false) => store
            .journal(lock)
            .and_then(|mut j| store.checkpoint(lock, &mut j, state, pending))
            .map_err(state_err)?,
    }
    view.notice(Notice::Interrupted {
        folded: folds,
        pending: pending.len(),
    });
    opened.existed |= folds;
    Ok(())
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

/// What recovery did with the creates an interrupted apply left in
/// question.
#[derive(Default)]
struct Recovered {
    /// State entries for the objects found by their tags and adopted.
    adopted: Vec<Entry>,
    /// Objects that could not be adopted (untagged, their secret given
    /// once) and were deleted, each as the notice names it.
    discarded: Vec<String>,
}

/// For each create that may have happened unrecorded, asks the driver for
/// what it made: an object found by its tags is adopted (any others, a
/// retry that created twice, deleted); one found by the trace its create
/// journalled, and which this state does not hold, is deleted.
async fn recover(pending: &[Entry], state: &State, drivers: &Drivers) -> Result<Recovered, Diags> {
    let mut out = Recovered::default();
    for e in pending {
        let Entry::Intent {
            address,
            provider,
            trace,
            ..
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
        let Some((driver, schema)) = drivers.configured(
            &addr.id.type_name,
            &provider,
            strata_state::model::Mode::Managed,
        ) else {
            continue;
        };
        let intent = Intent {
            addr: &addr,
            provider,
            driver: &*driver,
        };
        match trace {
            Some(trace) => out.discarded.extend(intent.discard(trace, state).await?),
            None => out
                .adopted
                .extend(intent.adopt(&state.lineage, schema).await?),
        }
    }
    Ok(out)
}

/// A create in question, with the driver its provider configuration asks.
struct Intent<'a> {
    addr: &'a strata_state::model::Address,
    provider: String,
    driver: &'a dyn strata_provider::Driver,
}

impl Intent<'_> {
    fn failed(&self, what: &str, e: impl std::fmt::Display) -> Diags {
        Diags::from(Diag::new(
            "strata::recover",
            format!("{what} {}", self.addr),
            e.to_string(),
        ))
    }

    /// The first object carrying the create's tags, as a state entry; the
    /// others deleted.
    async fn adopt(
        &self,
        lineage: &str,
        schema: &strata_provider::ResourceSchema,
    ) -> Result<Option<Entry>, Diags> {
        let type_name = &self.addr.id.type_name;
        let tags = Tags {
            address: self.addr.to_string(),
            lineage: lineage.to_string(),
        };
        let found = self
            .driver
            .find_tagged(type_name, &tags)
            .await
            .map_err(|e| self.failed("Cannot look for", e))?;
        let mut found = found.into_iter();
        let Some(first) = found.next() else {
            return Ok(None);
        };
        for extra in found {
            self.driver
                .delete(type_name, &extra)
                .await
                .map_err(|e| self.failed("Cannot delete a duplicate of", e))?;
        }
        let attributes = crate::lang::json::value_to_json(&first, &schema.object_type())
            .map_err(|e| self.failed("Cannot adopt", e))?;
        Ok(Some(adopted(
            self.addr,
            self.provider.clone(),
            schema.version,
            attributes,
        )))
    }

    /// Deletes what the create may have made that no instance of its type
    /// in `state` records; what was deleted, by id.
    async fn discard(
        &self,
        trace: &serde_json::Value,
        state: &State,
    ) -> Result<Vec<String>, Diags> {
        let type_name = &self.addr.id.type_name;
        let recorded: std::collections::HashSet<String> = state
            .resources
            .iter()
            .filter(|r| &r.id.type_name == type_name)
            .flat_map(|r| &r.instances)
            .filter_map(|i| i.attributes.json().ok()?["id"].as_str().map(str::to_string))
            .collect();
        let found = self
            .driver
            .find_traced(type_name, trace)
            .await
            .map_err(|e| self.failed("Cannot look for", e))?;
        let mut discarded = Vec::new();
        for v in found {
            let Some(id) = crate::ui::id_of(&v).filter(|id| !recorded.contains(id)) else {
                continue;
            };
            self.driver
                .delete(type_name, &v)
                .await
                .map_err(|e| self.failed("Cannot delete what an interrupted create made for", e))?;
            discarded.push(format!("{} {id}", self.addr));
        }
        Ok(discarded)
    }
}

/// The state entry for an object found in the cloud (adopted after a
/// crash, or imported): its attributes alone, nothing known yet of its
/// dependencies.
pub(super) fn adopted(
    addr: &strata_state::model::Address,
    provider: String,
    schema_version: u64,
    attributes: serde_json::Value,
) -> Entry {
    let (provider, instance_provider) = strata_state::provider_parts(&provider);
    Entry::Put {
        resource: addr.id.clone(),
        provider,
        instance: strata_state::InstanceState {
            index_key: addr.key.clone(),
            provider: instance_provider,
            status: None,
            deposed: None,
            schema_version,
            attributes: attributes.into(),
            private: None,
            identity_schema_version: None,
            identity: None,
            sensitive_attributes: Vec::new(),
            dependencies: Vec::new(),
            create_before_destroy: false,
            skip_destroy: false,
        },
    }
}
