//! The apply stage: carrying out a [`Plan`] through the drivers.
//!
//! Three phases, each a dependency-ordered walk ([`schedule`]) with at most
//! `parallelism` driver calls in flight ([`runner`]):
//! 1. deletes — objects leaving the configuration and the old halves of
//!    delete-then-create replacements, dependents before their dependencies;
//! 2. the configuration graph ([`graph`]) — creates and updates in
//!    dependency order, each instance's configuration evaluated again now
//!    that what it references is known, planned again by the plan stage's
//!    `plan_instance` and checked against the saved plan;
//! 3. deposed objects — the old halves of create-before-destroy
//!    replacements, once everything that referenced them has moved on.
//!
//! Evaluation runs on one thread (it is cheap); driver calls run as tokio
//! tasks (they are slow). Every finished operation is in the journal
//! ([`record`]), fsynced, before anything that depends on it starts; an
//! intent entry is written before each create, so a crash between "the
//! cloud made it" and "the state has it" can be recovered. A failed
//! operation stops what depends on it; independent branches finish.

mod actions;
mod conditions;
mod deletes;
mod ephemeral;
mod graph;
mod op;
mod progress;
mod provisioning;
mod record;
mod runner;
mod schedule;

pub use actions::Invocations;
pub use progress::{Form, Progress};

use crate::builtin::Drivers;
use crate::config::{Module, Run};
use crate::diag::{Diag, Diags};
use crate::graph::Graph;
use crate::lang::json::{type_to_json, value_to_json};
use crate::lang::types::Type;
use crate::lang::value::Value;
use crate::plan::{Action, Plan, ResourceChange};
use crate::walk::Walk;
use deletes::Doomed;
pub use record::{persist_interval, Sink};
use record::{put, remove, Record, Status};
use runner::Runner;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;
use strata_provider::Driver;
use strata_state::model::Mode;
use strata_state::model::{Address, OutputState};
use strata_state::{Entry, State};

pub struct Request<'a> {
    pub root: &'a Module,
    pub graph: &'a Graph,
    pub drivers: &'a Drivers,
    pub vars: BTreeMap<String, Value>,
    pub run: Rc<Run>,
    pub plan: &'a Plan,
    pub lineage: String,
    pub parallelism: usize,
    /// How each operation is told as it starts, goes on and ends.
    pub progress: Progress,
    /// How long failing checks are looked at again after the apply
    /// (`None`: five minutes, or `STRATA_CHECK_SETTLE` seconds; a test
    /// judges them once, as Terraform's does).
    pub settle: Option<std::time::Duration>,
}

/// What happened, for the summary.
#[derive(Debug, Default)]
pub struct Report {
    pub imported: usize,
    pub forgotten: usize,
    pub added: usize,
    pub changed: usize,
    pub destroyed: usize,
    /// Actions resources' `action_trigger` blocks invoked.
    pub invoked: Invocations,
    /// Every operation that failed.
    pub failed: Vec<Failure>,
    /// Instances not attempted because something they depend on failed
    /// (or was not started).
    pub skipped: Vec<Address>,
    /// Changes not started because the run was interrupted (Ctrl-C): not
    /// failures, their objects as they were.
    pub not_started: Vec<Address>,
    /// Failed `check` assertions, after they had time to settle, and what
    /// went wrong looking for duplicates after a resent create.
    pub warnings: Vec<crate::diag::Diag>,
}

impl Report {
    /// Adds a later round's report (a failover's next try): counts add
    /// up, and what failed or was skipped is the later round's.
    pub fn absorb(&mut self, later: Report) {
        self.imported += later.imported;
        self.forgotten += later.forgotten;
        self.added += later.added;
        self.changed += later.changed;
        self.destroyed += later.destroyed;
        self.invoked.add(later.invoked);
        self.failed = later.failed;
        self.skipped = later.skipped;
        self.not_started = later.not_started;
        self.warnings.extend(later.warnings);
    }
}

/// An operation that failed, and the error that says why.
#[derive(Debug)]
pub struct Failure {
    pub addr: Address,
    pub why: String,
    /// Set when the cloud had no capacity: where failover must not retry.
    pub shortage: Option<strata_provider::Shortage>,
    /// A provider's own diagnostics, placed in the block when shown.
    pub problems: Vec<strata_provider::Problem>,
    /// The failure as a diagnostic of its own (a provisioner's error, at
    /// its block), shown in place of "ADDR failed".
    pub diag: Option<crate::diag::Diag>,
}

/// One apply in progress: what it was asked, what it has written down,
/// and what went wrong so far.
struct Exec<'r, 'p> {
    req: &'r Request<'p>,
    record: Record<'r>,
    report: Report,
    /// Instances whose operation failed or was skipped.
    broken: HashSet<Address>,
    /// See [`Exec::object_type`].
    object_types: RefCell<HashMap<(Mode, String), Rc<Type>>>,
    /// The configuration's blocks, looked up for each object deleted.
    blocks: crate::config::ResourceIndex<'p>,
}

impl Exec<'_, '_> {
    fn driver(&self, c: &ResourceChange) -> Option<Arc<dyn Driver>> {
        self.req
            .drivers
            .configured(&c.addr.id.type_name, &c.provider, Mode::Managed)
            .map(|(d, _)| self.req.drivers.at(&c.addr, &d))
    }

    /// The entry recording `v` as `c`'s object.
    fn put(&self, c: &ResourceChange, v: &Value, status: Status) -> Result<Entry, String> {
        let ty = self.object_type(c.addr.id.mode, &c.addr.id.type_name)?;
        put(&ty, c, v, status)
    }

    /// A resource type's object type, built from its schema once per
    /// apply rather than once per object written.
    fn object_type(&self, mode: Mode, type_name: &str) -> Result<Rc<Type>, String> {
        let key = (mode, type_name.to_string());
        if let Some(t) = self.object_types.borrow().get(&key) {
            return Ok(t.clone());
        }
        let found = self.req.drivers.of_mode(mode, type_name);
        let (_, schema) = found.ok_or_else(|| format!("no driver for {type_name}"))?;
        let t = Rc::new(schema.object_type());
        self.object_types.borrow_mut().insert(key, t.clone());
        Ok(t)
    }

    fn fail(&mut self, addr: &Address, why: impl Into<runner::OpError>) {
        let runner::OpError {
            why,
            shortage,
            problems,
            diag,
            reached,
        } = why.into();
        self.broken.insert(addr.clone());
        if reached == runner::Reached::NotStarted {
            self.report.not_started.push(addr.clone());
            return;
        }
        self.report.failed.push(Failure {
            addr: addr.clone(),
            why,
            shortage,
            problems,
            diag,
        });
    }
}

/// Unchanged instances (by index into the plan's changes) whose record is
/// out of date, which apply writes again even where nothing else changes,
/// as Terraform does: recorded dependencies not the configuration's (a
/// destroy orders by the state's; an object adopted after a crash has
/// none), an object stored under an older schema version that its
/// provider upgraded, or an identity the provider upgraded or first gave
/// (Terraform 1.12 writes the identity its read returns).
pub fn stale_dependencies<'p>(plan: &'p Plan, state: &State) -> Vec<&'p ResourceChange> {
    let recorded: HashMap<&strata_state::model::ResourceAddr, &strata_state::ResourceState> =
        state.resources.iter().map(|r| (&r.id, r)).collect();
    // A refresh-only plan changes nothing, but what it read back under a
    // newer schema version is written as read, as Terraform writes it.
    let refreshed = plan
        .untouched
        .iter()
        .filter(|_| plan.mode.is_refresh_only());
    plan.changes
        .iter()
        .chain(refreshed)
        .filter(|c| c.action == Action::NoOp && c.deposed.is_none() && c.before.is_some())
        .filter(|c| {
            let instance = recorded.get(&c.addr.id).and_then(|r| {
                r.instances
                    .iter()
                    .find(|i| i.index_key == c.addr.key && i.deposed.is_none())
            });
            instance.is_some_and(|i| {
                let mut had = i.dependencies.clone();
                let mut want = record::recorded_dependencies(c);
                had.sort();
                want.sort();
                (had != want && !plan.mode.is_refresh_only())
                    || i.schema_version != c.schema_version
                    || crate::plan::kept_of(i).identity != c.kept_before.identity
            })
        })
        .collect()
}

/// How long a failing check is looked at again after an apply: five
/// minutes, or `STRATA_CHECK_SETTLE` seconds.
fn check_settle() -> std::time::Duration {
    let secs = std::env::var("STRATA_CHECK_SETTLE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    std::time::Duration::from_secs(secs)
}

/// Applies `req.plan`, journaling every operation; returns the state with
/// the journal folded in (the caller persists it) and the report.
pub fn apply(
    req: &Request<'_>,
    state: State,
    sink: Sink<'_>,
    rt: &tokio::runtime::Runtime,
) -> Result<(State, Report), Diags> {
    let stale = stale_dependencies(req.plan, &state);
    let gone = gone_data_sources(req.plan, &state);
    let mut ex = Exec {
        req,
        record: Record::new(sink, state, req.drivers),
        report: Report::default(),
        broken: HashSet::new(),
        object_types: RefCell::default(),
        blocks: crate::config::ResourceIndex::of(req.root),
    };
    let result = ex
        .record
        .commit(gone)
        .and_then(|()| rt.block_on(run(&mut ex, &stale)));
    let Exec { record, report, .. } = ex;
    // Whatever finished is kept, even when a later step failed.
    let state = record.fold();
    result.map(|()| (state, report))
}

async fn run(ex: &mut Exec<'_, '_>, stale: &[&ResourceChange]) -> Result<(), Diags> {
    let plan = ex.req.plan;
    // The driver calls the plan asks for: a replacement is two.
    let total = plan
        .changes
        .iter()
        .flat_map(|c| c.action.json_actions())
        .filter(|a| !matches!(**a, "no-op" | "forget"))
        .count();
    let mut runner = Runner::new(ex.req.parallelism, ex.req.progress, total);
    let first = without_driver_calls(ex, stale)?;
    ex.record.commit(first)?;
    // Moves in a commit of their own: later entries use the new addresses.
    let moves: Vec<Entry> = plan
        .changes
        .iter()
        .filter_map(|c| {
            let from = c.previous_addr.as_ref()?;
            Some(Entry::Move {
                from: from.to_string(),
                to: c.addr.to_string(),
            })
        })
        .collect();
    ex.record.commit(moves)?;
    // An object moved to another type is written as its new type's
    // driver converted it, once it is at its new address.
    let retyped = plan
        .changes
        .iter()
        .filter(|c| c.action == Action::NoOp && c.deposed.is_none())
        .filter(|c| {
            let old = c.previous_addr.as_ref();
            old.is_some_and(|o| o.id.type_name != c.addr.id.type_name)
        })
        .filter_map(|c| {
            let before = c.before.as_ref()?;
            Some(
                ex.put(c, before, Status::keeping(&c.kept_before))
                    .map_err(|e| {
                        Diags::from(Diag::new(
                            "strata::apply::moved",
                            format!("Cannot record {} at its new type", c.addr),
                            e,
                        ))
                    }),
            )
        })
        .collect::<Result<Vec<Entry>, Diags>>()?;
    ex.record.commit(retyped)?;

    let doomed = plan
        .changes
        .iter()
        .filter(|c| c.action == Action::Delete || c.action == Action::DeleteThenCreate)
        .map(|change| Doomed {
            change,
            deposed: change.deposed.clone(),
        })
        .collect();
    ex.deletes(&mut runner, doomed).await?;
    if plan.mode.is_destroy() {
        return outputs(ex, None);
    }
    let deposed = graph::apply(ex, &mut runner).await?;
    ex.deletes(&mut runner, deposed).await
}

/// What is recorded before any driver call: what refresh found changed
/// outside strata (an object deleted out of band leaves the state), the
/// configuration's dependencies of unchanged instances, imported objects
/// joining the state and forgotten ones leaving it.
/// The data sources the state keeps that this apply reads no more: all
/// of them when destroying, else those the plan has no instance of (only
/// when it plans the whole configuration: a targeted plan says nothing
/// about the rest).
fn gone_data_sources(plan: &Plan, state: &State) -> Vec<Entry> {
    if !plan.mode.is_destroy() && (!plan.scope.is_everything() || plan.mode.is_refresh_only()) {
        return Vec::new();
    }
    let read: HashSet<String> = plan
        .changes
        .iter()
        .filter(|c| c.addr.id.mode == Mode::Data && !plan.mode.is_destroy())
        .map(|c| c.addr.to_string())
        .collect();
    let mut out = Vec::new();
    for r in state.resources.iter().filter(|r| r.id.mode == Mode::Data) {
        for i in &r.instances {
            if !read.contains(&r.id.instance_address(i.index_key.as_ref())) {
                out.push(Entry::Remove {
                    resource: r.id.clone(),
                    index_key: i.index_key.clone(),
                    deposed: i.deposed.clone(),
                });
            }
        }
    }
    out
}

fn without_driver_calls(
    ex: &mut Exec<'_, '_>,
    stale: &[&ResourceChange],
) -> Result<Vec<Entry>, Diags> {
    let plan = ex.req.plan;
    let refused = |code: &'static str, what: &str, c: &ResourceChange, e: String| {
        Diags::from(Diag::new(
            code,
            format!("Cannot record {what} {}", c.addr),
            e,
        ))
    };
    let mut first = Vec::new();
    for d in &plan.drift {
        first.push(match &d.after {
            Some(v) => {
                let status = Status {
                    deposed: d.deposed.clone(),
                    tainted: false,
                    kept: d.kept_after.clone(),
                };
                ex.put(d, v, status)
                    .map_err(|e| refused("strata::apply::refresh", "the refreshed", d, e))?
            }
            None => remove(d, d.deposed.clone()),
        });
    }
    for c in stale {
        if let Some(before) = &c.before {
            let e = ex
                .put(c, before, Status::keeping(&c.kept_before))
                .map_err(|e| refused("strata::apply::dependencies", "the dependencies of", c, e))?;
            first.push(e);
        }
    }
    for c in &plan.changes {
        if c.action == Action::Forget {
            first.push(remove(c, c.deposed.clone()));
            ex.report.forgotten += 1;
        }
        // A data source read while planning is kept as read, as Terraform
        // keeps data sources in its state (one read at apply is recorded
        // when it is).
        let kept = !plan.mode.is_destroy();
        if let (Mode::Data, Action::NoOp, Some(v), true) =
            (c.addr.id.mode, c.action, &c.after, kept)
        {
            let e = ex
                .put(c, v, Status::keeping(&c.kept_after))
                .map_err(|e| refused("strata::apply::data", "the data source", c, e))?;
            first.push(e);
        }
        if let (Some(_), Some(before)) = (&c.importing, &c.before) {
            let e = ex
                .put(c, before, Status::keeping(&c.kept_before))
                .map_err(|e| refused("strata::apply::import", "the imported", c, e))?;
            first.push(e);
            ex.report.imported += 1;
        }
    }
    Ok(first)
}

/// Records root outputs whose values are known (all of them gone when
/// destroying).
fn outputs(ex: &mut Exec<'_, '_>, w: Option<&Walk>) -> Result<(), Diags> {
    let mut batch = Vec::new();
    for o in &ex.req.plan.outputs {
        let now = match w {
            Some(w) if o.after.is_some() => w.root_output(&o.name),
            _ => None,
        };
        let entry = match now {
            // A null output is not kept, as Terraform keeps none.
            Some(v) if v.is_null() => None,
            Some(v) if v.is_wholly_known() => {
                let (plain, marked) = v.clone().unmark_deep();
                let ty = plain.ty();
                match value_to_json(&plain, &ty) {
                    Ok(value) => Some(OutputState {
                        value,
                        ty: type_to_json(&ty),
                        sensitive: o.sensitive || marked,
                    }),
                    Err(_) => continue,
                }
            }
            // Unknown still: something it needs failed; keep the old value.
            Some(_) => continue,
            None => None,
        };
        batch.push(Entry::Output {
            name: o.name.clone(),
            output: entry,
        });
    }
    ex.record.commit(batch)
}
