//! Driver calls in flight: at most `parallelism` at once, the rest queued,
//! and at most one at a time in a queue the cloud runs one by one
//! (`Driver::queues`); each start, ten seconds' wait and end told as
//! `Progress` says.

use super::progress::{Event, Progress, Tally};
use crate::config::{OnFailure, ProvisionerKind};
use crate::diag::{Diag, Span};
use crate::lang::value::Value;
use crate::provision::Settings;
use crate::ui::id_of;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
use strata_provider::Kept;
use strata_provider::{ApplyRequest, Driver, DriverError, Shortage, Tags};
use tokio::task::JoinSet;

use super::actions::{self, Halted, Invocations, Invoked, Triggered};
use super::op::OpKind;

/// Why an operation failed: the driver's words, and how far the cloud's
/// shortage reaches when it was one (what failover acts on).
#[derive(Debug)]
pub struct OpError {
    pub why: String,
    pub shortage: Option<Shortage>,
    /// A provider's own diagnostics, each with where it points.
    pub problems: Vec<strata_provider::Problem>,
    /// The failure as a diagnostic of its own (a provisioner's, at its
    /// block), when it has one.
    pub diag: Option<Diag>,
    /// Whether the operation began: one the run was interrupted before is
    /// not a failure (its object is as it was), and is told as such.
    pub reached: Reached,
}

/// How far an operation that did not succeed got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reached {
    Started,
    /// Left unstarted: the run was interrupted.
    NotStarted,
}

impl From<DriverError> for OpError {
    fn from(e: DriverError) -> OpError {
        let (shortage, problems) = match &e {
            DriverError::Capacity { shortage, .. } => (Some(shortage.clone()), Vec::new()),
            DriverError::Provider { problems, .. } => (None, problems.clone()),
            _ => (None, Vec::new()),
        };
        OpError {
            why: e.to_string(),
            shortage,
            problems,
            diag: None,
            reached: Reached::Started,
        }
    }
}

/// A failure said as a diagnostic of its own (a provisioner's, an
/// action's, at its block).
impl From<Diag> for OpError {
    fn from(d: Diag) -> OpError {
        OpError {
            diag: Some(d.clone()),
            ..OpError::from(d.detail)
        }
    }
}

impl From<String> for OpError {
    fn from(why: String) -> OpError {
        OpError {
            why,
            shortage: None,
            problems: Vec::new(),
            diag: None,
            reached: Reached::Started,
        }
    }
}

pub struct OpResult {
    pub op: usize,
    /// The object now (none after a delete), or the error.
    pub result: Result<Option<Value>, OpError>,
    /// After a failed create, what the cloud made anyway (found by its
    /// ownership tags, or as the provider says); after a failed update,
    /// the object as the provider left it.
    pub leftover: Option<Value>,
    /// What went wrong looking for duplicates of what a create made; the
    /// create's outcome stands.
    pub warnings: Vec<String>,
    /// What the driver keeps beside the object now (a plugin provider's
    /// private data).
    pub kept: Kept,
    /// How many triggered actions were invoked.
    pub invoked: Invocations,
    /// Triggered actions' failures that let the run go on.
    pub notes: Vec<Diag>,
    /// A triggered action's failure after the operation did what it was
    /// asked: the object stands (tainted, when the action says so) and
    /// the instance fails.
    pub halted: Option<Halted>,
}

/// What a task hands back: its `OpResult` without the op id.
struct Finished {
    result: Result<Option<Value>, OpError>,
    leftover: Option<Value>,
    warnings: Vec<String>,
    kept: Kept,
    invoked: Invocations,
    notes: Vec<Diag>,
    halted: Option<Halted>,
}

impl Finished {
    fn of(result: Result<Option<Value>, OpError>) -> Finished {
        Finished {
            result,
            leftover: None,
            warnings: Vec::new(),
            kept: Kept::default(),
            invoked: Invocations::default(),
            notes: Vec::new(),
            halted: None,
        }
    }

    /// With what the actions after it came to.
    fn then(mut self, after: Invoked) -> Finished {
        self.invoked.add(after.invoked);
        self.notes.extend(after.warnings);
        self.halted = after.halted;
        self
    }
}

/// One driver call to make.
pub struct Op {
    /// The caller's id for it, returned with its result.
    pub id: usize,
    pub kind: OpKind,
    pub addr: String,
    pub driver: Arc<dyn Driver>,
    pub type_name: String,
    /// The object an update or delete acts on; for a create under
    /// create_before_destroy, the one it replaces (else null).
    pub prior: Value,
    /// What a create, update or read is asked for.
    pub wanted: Option<Wanted>,
    /// The configuration the change was planned from (null for a delete)
    /// and what the plan kept beside the object: for drivers that take a
    /// whole change in one call (`Driver::apply_change`).
    pub config: Value,
    pub kept: Kept,
    /// Provisioners this op runs: a delete's destroy-time ones before it
    /// deletes, or (`OpKind::Provision`) a new object's creation-time ones.
    pub provisions: Vec<Provision>,
    /// A create whose provisioners (or an update whose actions) run
    /// next: its completion is said when they have finished, as
    /// Terraform says it.
    pub provisioned_next: bool,
    /// The actions its resource's `action_trigger` blocks invoke around
    /// it.
    pub actions: Triggered,
}

/// A provisioner an op runs, its arguments evaluated.
pub struct Provision {
    pub kind: ProvisionerKind,
    pub settings: Settings,
    pub on_failure: OnFailure,
    /// Its block, where its failure is said.
    pub span: Span,
}

/// A provisioner's lines, said as they come.
struct Said<'a> {
    progress: Progress,
    addr: &'a str,
    kind: ProvisionerKind,
}

impl crate::provision::Output for Said<'_> {
    fn line(&mut self, line: &str) {
        self.progress
            .provision_line(self.addr, self.kind.name(), line);
    }
}

/// Runs `op`'s provisioners in order, each said as Terraform says it; a
/// failure ends them unless its `on_failure` is `continue`.
async fn provision(op: &Op, progress: Progress) -> Result<(), OpError> {
    for p in &op.provisions {
        progress.provisioning(&op.addr, p.kind.name());
        let mut said = Said {
            progress,
            addr: &op.addr,
            kind: p.kind,
        };
        match crate::provision::run(&p.settings, &mut said).await {
            Ok(()) => {}
            Err(_) if p.on_failure == OnFailure::Continue => {}
            Err(f) => {
                let summary = format!("{} provisioner error", p.kind.name());
                let diag = Diag::new("strata::provision::failed", summary, f.detail.clone());
                return Err(OpError {
                    diag: Some(diag.at(p.span)),
                    ..OpError::from(f.detail)
                });
            }
        }
    }
    Ok(())
}

/// The object a create or update should leave (a read's configuration),
/// and the ownership tags a create puts on it.
pub struct Wanted {
    pub value: Value,
    pub tags: Tags,
}

/// An op in flight, as the runner tells it.
struct Running {
    addr: String,
    kind: OpKind,
    began: Instant,
    provisioned_next: bool,
    /// The cloud's queues it holds ([`Driver::queues`]) while it runs.
    queues: Vec<String>,
}

/// An op waiting to start, with the cloud's queues it must wait its turn in.
struct Queued {
    op: Op,
    queues: Vec<String>,
}

/// The queues a write of `op` waits in where its cloud runs such writes
/// one at a time (a GKE cluster's node-pool operations).
fn queues_of(op: &Op) -> Vec<String> {
    let object = match (op.kind, &op.wanted) {
        (OpKind::Create | OpKind::Update, Some(w)) => &w.value,
        (OpKind::Delete, _) => &op.prior,
        _ => return Vec::new(),
    };
    op.driver.queues(&op.type_name, object)
}

pub struct Runner {
    parallelism: usize,
    progress: Progress,
    /// Operations asked for, done and failed, for a large apply's count.
    tally: Tally,
    set: JoinSet<Finished>,
    queue: VecDeque<Queued>,
    /// Queued operations a stop request kept from starting, told next.
    halted: Vec<OpResult>,
    running: HashMap<usize, Running>,
    /// When the creates whose provisioners run next began, by address:
    /// their `Provision` ops go on with their time.
    begun: HashMap<String, Instant>,
    /// Task id → op id, so a driver task that panics is still reported.
    tasks: HashMap<tokio::task::Id, usize>,
    /// Operations that finished at their first step, before they were
    /// handed to a worker: told next, with no wait.
    ready: Vec<(usize, Finished)>,
}

const TICK: Duration = Duration::from_secs(10);

type Task = std::pin::Pin<Box<dyn std::future::Future<Output = Finished> + Send>>;

/// Takes an operation's first step on this thread: one that needs no
/// wait (a `terraform_data` object, a value computed here) finishes
/// there, without a round trip through a worker and back, which on two
/// cores cost more than the operation (500 of them took 85 ms one at a
/// time). `None`: it waits, and goes to a worker from where it stopped —
/// a future registers its waker anew at every poll, so the runtime's
/// first poll of it takes over from this one.
fn first_step(task: &mut Task) -> Option<Finished> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let poll = std::panic::AssertUnwindSafe(|| task.as_mut().poll(&mut cx));
    match std::panic::catch_unwind(poll) {
        Ok(std::task::Poll::Ready(done)) => Some(done),
        Ok(std::task::Poll::Pending) => None,
        // As a worker's task that panics is told.
        Err(_) => Some(Finished::of(Err("the driver crashed: it panicked"
            .to_string()
            .into()))),
    }
}

fn crashed(e: tokio::task::JoinError) -> Finished {
    Finished::of(Err(format!("the driver crashed: {e}").into()))
}

/// Looks for objects carrying a create's ownership tags other than `kept`
/// (the one the create returned) and the one it replaces, and deletes
/// them: when a call's answer was lost after the cloud acted, the client's
/// resend made the object again, and the first one would be an orphan no
/// state knows. Without `kept` (the create failed) the first found is
/// returned, to be adopted or recorded tainted, and the rest deleted.
/// What fails here is a warning: the create's outcome stands.
async fn sweep(
    op: &Op,
    tags: &Tags,
    kept: Option<&str>,
    warnings: &mut Vec<String>,
) -> Option<Value> {
    let found = match op.driver.find_tagged(&op.type_name, tags).await {
        Ok(found) => found,
        Err(e) => {
            warnings.push(format!("could not list what carries its tags, to find a duplicate a resent create may have made: {e}"));
            return None;
        }
    };
    let replaced = id_of(&op.prior);
    let mut others = found.into_iter().filter(|v| {
        let id = id_of(v);
        id.is_some() && id.as_deref() != kept && id != replaced
    });
    let leftover = if kept.is_none() { others.next() } else { None };
    for v in others {
        let id = id_of(&v).unwrap_or_default();
        // A duplicate the cloud cannot delete stays, and the user hears of
        // it: a "delete" would only hide it (a second Capacity Block runs,
        // billed, to its end).
        if let Some(why) = op.driver.lasting(&op.type_name, &v) {
            warnings.push(format!("a resent create made a duplicate ({id}) that cannot be deleted ({why}); it is not in the state: `strata import` takes it"));
            continue;
        }
        if let Err(e) = op.driver.delete(&op.type_name, &v).await {
            warnings.push(format!(
                "a duplicate ({id}) a resent create made could not be deleted: {e}"
            ));
        }
    }
    leftover
}

/// A create, and the sweep for duplicates when the driver resent it or it
/// failed (a failed create may still have left an object behind).
async fn create(op: &Op, planned: &Value, tags: &Tags) -> Finished {
    let (made, resent) =
        strata_provider::resend::watch(op.driver.create(&op.type_name, planned, tags)).await;
    let mut warnings = Vec::new();
    let leftover = match &made {
        Ok(_) if !resent => None,
        _ => {
            let kept = made.as_ref().ok().and_then(id_of);
            sweep(op, tags, kept.as_deref(), &mut warnings).await
        }
    };
    let (result, leftover) = match (made, leftover) {
        (Ok(v), _) => (Ok(Some(v)), None),
        // Refused as existing, and there it is with this create's tags:
        // the call's first attempt made it and its answer was lost. It is
        // the object, brought to the plan (a listing does not show what
        // only the configuration holds).
        (Err(DriverError::AlreadyExists { .. }), Some(v)) => adopt(op, v, planned).await,
        // A create that failed yet made what the cloud cannot delete (a
        // purchase whose answer was lost) made the object: tainting it
        // would buy another on the next plan.
        (Err(_), Some(v)) if op.driver.lasting(&op.type_name, &v).is_some() => {
            warnings.push(format!(
                "the create failed but made {}, which cannot be deleted: it is the object now",
                id_of(&v).unwrap_or_default()
            ));
            adopt(op, v, planned).await
        }
        (Err(e), leftover) => (Err(e.into()), leftover),
    };
    Finished {
        leftover,
        warnings,
        ..Finished::of(result)
    }
}

/// `v`, which a create's first attempt made, brought to the plan as the
/// create's object (a listing does not show what only the configuration
/// holds).
async fn adopt(
    op: &Op,
    v: Value,
    planned: &Value,
) -> (Result<Option<Value>, OpError>, Option<Value>) {
    match op.driver.update(&op.type_name, &v, planned).await {
        Ok(now) => (Ok(Some(now)), None),
        Err(e) => (Err(e.into()), Some(v)),
    }
}

/// The op as one whole change, when its driver takes changes so (plugin
/// providers); `None` for a driver of creates, updates and deletes.
async fn whole_change(op: &Op) -> Option<Finished> {
    let planned = match op.kind {
        OpKind::Delete | OpKind::Read | OpKind::Provision | OpKind::AfterUpdate => None,
        OpKind::Create | OpKind::Update => op.wanted.as_ref().map(|w| &w.value),
    };
    // A create's prior is the object a create_before_destroy replaces:
    // not this change's.
    let prior = match op.kind {
        OpKind::Update | OpKind::Delete => Some(&op.prior),
        OpKind::Create | OpKind::Read | OpKind::Provision | OpKind::AfterUpdate => None,
    };
    let req = ApplyRequest {
        type_name: &op.type_name,
        prior,
        planned,
        config: &op.config,
        kept: &op.kept,
    };
    let done = op.driver.apply_change(req).await?;
    Some(match done {
        Ok(now) => {
            let (value, kept) = now.map_or((None, Kept::default()), |s| (Some(s.value), s.kept));
            Finished {
                kept,
                ..Finished::of(Ok(value))
            }
        }
        // A failed create that left an object: recorded tainted, as
        // Terraform records it, so it is neither orphaned nor made twice.
        // A failed update that left one recorded as the provider left it
        // (the part of the update that was done). A failed delete keeps
        // the prior object.
        Err(failed) => {
            let left = failed
                .left
                .filter(|_| matches!(op.kind, OpKind::Create | OpKind::Update));
            let (leftover, kept) =
                left.map_or((None, Kept::default()), |s| (Some(s.value), s.kept));
            Finished {
                leftover,
                kept,
                ..Finished::of(Err(failed.error.into()))
            }
        }
    })
}

/// Carries out one op: its provisioners, the actions before it, its
/// driver call, the actions after it.
async fn perform(op: Op, progress: Progress) -> Finished {
    let failures = op.actions.failures;
    if let Err(e) = provision(&op, progress).await {
        return Finished::of(Err(e));
    }
    if op.kind.follows() {
        let after = actions::invoke(&op.actions.after, progress, failures).await;
        return Finished::of(Ok(Some(op.prior.clone()))).then(after);
    }
    let before = actions::invoke(&op.actions.before, progress, failures).await;
    if let Some(h) = before.halted {
        return Finished {
            invoked: before.invoked,
            notes: before.warnings,
            ..Finished::of(Err(h.error.into()))
        };
    }
    let mut done = call(&op).await;
    done.invoked.add(before.invoked);
    done.notes.extend(before.warnings);
    if done.result.is_ok() && !op.actions.after.is_empty() {
        let after = actions::invoke(&op.actions.after, progress, failures).await;
        done = done.then(after);
    }
    done
}

/// The op's driver call.
async fn call(op: &Op) -> Finished {
    if op.kind != OpKind::Read {
        if let Some(done) = whole_change(op).await {
            return done;
        }
    }
    let r = match (op.kind, &op.wanted) {
        (OpKind::Create, Some(Wanted { value, tags })) => return create(op, value, tags).await,
        (OpKind::Update, Some(Wanted { value, .. })) => op
            .driver
            .update(&op.type_name, &op.prior, value)
            .await
            .map(Some),
        (OpKind::Read, Some(Wanted { value, .. })) => {
            op.driver.read_data(&op.type_name, value).await.map(Some)
        }
        (OpKind::Delete, _) => op
            .driver
            .delete(&op.type_name, &op.prior)
            .await
            .map(|()| None),
        _ => Ok(None),
    };
    Finished::of(r.map_err(OpError::from))
}

impl Runner {
    /// A runner for an apply of `total` operations.
    pub fn new(parallelism: usize, progress: Progress, total: usize) -> Runner {
        Runner {
            parallelism: parallelism.max(1),
            progress,
            tally: Tally {
                total,
                ..Tally::default()
            },
            set: JoinSet::new(),
            queue: VecDeque::new(),
            halted: Vec::new(),
            running: HashMap::new(),
            begun: HashMap::new(),
            tasks: HashMap::new(),
            ready: Vec::new(),
        }
    }

    /// Queues `op`; it starts as soon as fewer than `parallelism` run
    /// and no other op holds one of its cloud queues.
    pub fn start(&mut self, op: Op) {
        let queues = queues_of(&op);
        self.queue.push_back(Queued { op, queues });
        self.fill();
    }

    /// The first queued op free to start: none of its cloud queues held
    /// by a running op.
    fn next_free(&mut self) -> Option<Queued> {
        let held = |k: &String| self.running.values().any(|r| r.queues.contains(k));
        let at = self.queue.iter().position(|q| !q.queues.iter().any(held))?;
        self.queue.remove(at)
    }

    fn fill(&mut self) {
        if crate::interrupt::requested() {
            // Asked to stop: nothing more starts; what waited is told
            // halted, so the walk skips what depends on it and ends.
            for Queued { op, .. } in self.queue.drain(..) {
                let not_started = OpError {
                    reached: Reached::NotStarted,
                    ..OpError::from(crate::interrupt::HALTED.to_string())
                };
                self.halted.push(OpResult {
                    op: op.id,
                    result: Err(not_started),
                    leftover: None,
                    warnings: Vec::new(),
                    kept: Kept::default(),
                    invoked: Invocations::default(),
                    notes: Vec::new(),
                    halted: None,
                });
            }
            return;
        }
        let (mut said, mut starting) = (Vec::new(), Vec::new());
        while self.running.len() < self.parallelism {
            let Some(Queued { op, queues }) = self.next_free() else {
                break;
            };
            let began = match op.kind {
                // Said already, as its create.
                OpKind::Provision | OpKind::AfterUpdate => {
                    self.begun.remove(&op.addr).unwrap_or_else(Instant::now)
                }
                _ => {
                    let id = match op.kind {
                        OpKind::Create => None,
                        _ => id_of(&op.prior),
                    };
                    let start = Event::Start { id: id.as_deref() };
                    said.extend(self.progress.line(&op.addr, op.kind, start));
                    Instant::now()
                }
            };
            let running = Running {
                addr: op.addr.clone(),
                kind: op.kind,
                began,
                provisioned_next: op.provisioned_next,
                queues,
            };
            self.running.insert(op.id, running);
            starting.push(op);
        }
        // Said before any of them runs: an operation's own lines (its
        // actions', its provisioners') come after its start.
        self.progress.say_all(&said);
        for op in starting {
            let id = op.id;
            let mut task: Task = Box::pin(perform(op, self.progress));
            match first_step(&mut task) {
                Some(done) => self.ready.push((id, done)),
                None => {
                    let handle = self.set.spawn(task);
                    self.tasks.insert(handle.id(), id);
                }
            }
        }
    }

    /// Waits for at least one operation to finish and returns every one
    /// that has; empty when nothing is running.
    pub async fn next(&mut self) -> Vec<OpResult> {
        if !self.halted.is_empty() {
            self.tally.done += self.halted.len();
            self.tally.failed += self.halted.len();
            return std::mem::take(&mut self.halted);
        }
        if self.running.is_empty() {
            return Vec::new();
        }
        let results = self.finished().await;
        let mut said = Vec::new();
        for r in &results {
            let Some(op) = self.running.remove(&r.op) else {
                continue;
            };
            // A create and its provisioners are one operation to count.
            if !op.provisioned_next || r.result.is_err() {
                self.tally.done += 1;
                self.tally.failed += usize::from(r.result.is_err());
            }
            let secs = op.began.elapsed().as_secs();
            match &r.result {
                Ok(_) if op.provisioned_next => {
                    self.begun.insert(op.addr, op.began);
                }
                Ok(v) => {
                    let id = v.as_ref().and_then(id_of);
                    let done = Event::Done {
                        secs,
                        id: id.as_deref(),
                    };
                    said.extend(self.progress.line(&op.addr, op.kind, done));
                }
                // Terraform says nothing more of an operation whose
                // provisioner failed: the error says it.
                Err(e) if op.kind.follows() || e.diag.is_some() => {}
                Err(_) => said.extend(self.progress.line(
                    &op.addr,
                    op.kind,
                    Event::Failed { secs },
                )),
            }
        }
        self.progress.say_all(&said);
        self.fill();
        results
    }

    /// The operations that have finished: those done at their first
    /// step, else at least one a worker ran (waited for, saying every
    /// `TICK` what still runs), with any others done by then.
    async fn finished(&mut self) -> Vec<OpResult> {
        let mut raw = Vec::new();
        while self.ready.is_empty() {
            tokio::select! {
                r = self.set.join_next_with_id() => {
                    raw.extend(r);
                    break;
                }
                _ = tokio::time::sleep(TICK) => self.still_running(),
            }
        }
        while let Some(r) = self.set.try_join_next_with_id() {
            raw.push(r);
        }
        for r in raw {
            let (task, done) = match r {
                Ok((task, done)) => (task, done),
                Err(e) => (e.id(), crashed(e)),
            };
            if let Some(op) = self.tasks.remove(&task) {
                self.ready.push((op, done));
            }
        }
        let ready = std::mem::take(&mut self.ready);
        ready
            .into_iter()
            .map(|(op, done)| OpResult {
                op,
                result: done.result,
                leftover: done.leftover,
                warnings: done.warnings,
                kept: done.kept,
                invoked: done.invoked,
                notes: done.notes,
                halted: done.halted,
            })
            .collect()
    }

    fn still_running(&self) {
        let mut rows: Vec<_> = self.running.values().collect();
        rows.sort_by(|a, b| a.addr.cmp(&b.addr));
        for op in rows {
            let secs = op.began.elapsed().as_secs();
            self.progress.emit(&op.addr, op.kind, Event::Still { secs });
        }
        let now = Tally {
            running: self.running.len(),
            ..self.tally
        };
        if let Some(line) = super::progress::tally(self.progress, &now) {
            (self.progress.say)(&line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(mut task: Task) -> Result<Option<Value>, String> {
        match first_step(&mut task) {
            Some(done) => done.result.map_err(|e| e.why),
            None => Err("still waiting".into()),
        }
    }

    #[test]
    fn an_operation_that_needs_no_wait_finishes_at_its_first_step() {
        let ready: Task = Box::pin(async { Finished::of(Ok(Some(Value::string("made")))) });
        let v = answer(ready).expect("done");
        assert!(v.is_some_and(|v| v.raw_equal(&Value::string("made"))));
        let panics: Task = Box::pin(async { panic!("a driver's bug") });
        let told = answer(panics).expect_err("told as a crash");
        assert!(told.contains("the driver crashed"), "{told}");
    }

    #[test]
    fn one_that_waits_is_finished_by_the_runtime_from_where_it_stopped() {
        let rt = crate::runtime::start(2).expect("runtime");
        let (tx, rx) = tokio::sync::oneshot::channel::<&str>();
        let mut task: Task = Box::pin(async move {
            let said = rx.await.unwrap_or("dropped");
            Finished::of(Ok(Some(Value::string(said))))
        });
        assert!(
            first_step(&mut task).is_none(),
            "finished without its answer"
        );
        let handle = rt.spawn(task);
        let _ = tx.send("answered");
        let done = rt.block_on(handle).expect("joined");
        let v = done.result.ok().flatten().expect("a value");
        assert!(v.raw_equal(&Value::string("answered")));
    }
}
