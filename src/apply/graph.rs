//! Phase 2: the configuration graph in dependency order. Each node is
//! evaluated again now that what it references is known; each instance the
//! plan changes is planned again (`plan_instance`), checked against the
//! saved plan, and handed to the runner; a node's value is set once all its
//! instances have finished, and only then may its dependents start.

use super::actions::{Halted, Invoke, Triggered};
use super::conditions::unmet;
use super::deletes::Doomed;
use super::op::OpKind;
use super::record::{remove, Status};
use super::runner::{Op, OpError, OpResult, Runner, Wanted};
use super::schedule::{Edge, Schedule};
use super::{outputs, Exec};
use crate::config::ActionEvent;
use crate::config::Resource;
use crate::diag::{Diag, Diags};
use crate::graph::{Node, NodeKind};
use crate::lang::value::Value;
use crate::plan::{
    action_again, plan_instance, same, with_marks, Action, InstanceRequest, Prior, ResourceChange,
    Triggering,
};
use crate::walk::{decode, Ephemerals, InstanceCtx, ResourceInstances, Walk};
use petgraph::graph::NodeIndex;
use petgraph::Direction;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use strata_provider::Kept;
use strata_provider::{Driver, ResourceSchema, Tags};
use strata_state::model::{Address, Mode, ResourceAddr};
use strata_state::Entry;

/// The instances of one resource node in one module instance, while their
/// driver calls run.
struct Instances {
    of: ResourceInstances,
    /// Per instance: its object, unknown until its call returns.
    values: Vec<Value>,
    running: usize,
    failed: bool,
}

/// Which instance a driver call belongs to.
#[derive(Clone, Copy)]
pub(super) struct Slot<'p> {
    pub node: NodeIndex,
    /// Which of the node's module instances.
    pub group: usize,
    /// Which instance within it.
    pub instance: usize,
    pub change: &'p ResourceChange,
    pub stage: Stage,
}

/// Which of an instance's calls a slot is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// Its driver call.
    Call,
    /// Its creation-time provisioners, after its create.
    Provisioners,
}

/// What evaluating a batch of ready nodes asks for: entries to make durable
/// first, then driver calls to start.
#[derive(Default)]
struct Batch {
    entries: Vec<Entry>,
    starts: Vec<Op>,
}

/// What comes of a driver call's result.
enum Next {
    /// Its instance's provisioners run next; nothing more now.
    Provisioning,
    /// To be recorded.
    Record(Result<Option<Value>, OpError>),
}

/// What runs once a driver call has made its object.
struct Following {
    provisions: Vec<super::runner::Provision>,
    actions: Triggered,
}

/// One instance after it was evaluated again.
enum Prepared<'p> {
    /// Nothing to do: its value is known now.
    Known(Value),
    /// It cannot go on (reported, when there is something to say).
    Failed,
    Start(Box<Op>, &'p ResourceChange),
}

struct GraphApply<'x, 'r, 'p> {
    ex: &'x mut Exec<'r, 'p>,
    w: Walk<'p>,
    schedule: Schedule,
    /// The plan's current objects by instance address.
    by_addr: HashMap<Address, &'p ResourceChange>,
    /// Per resource (`module.m.t.n`), the changes its node would make:
    /// what is reported skipped when something it depends on fails.
    changes_of: HashMap<ResourceAddr, Vec<&'p ResourceChange>>,
    pending: HashMap<NodeIndex, Vec<Instances>>,
    /// By op id.
    slots: Vec<Slot<'p>>,
    /// Create-before-destroy replacements whose old objects are deposed.
    deposed: Vec<Doomed<'p>>,
    /// Provisioner runs to start, after the creates that precede them.
    follow: Vec<Op>,
    /// By op id of a provisioner run: the object it provisions and the
    /// driver's bytes kept beside it.
    provisioned: HashMap<usize, (Value, Kept)>,
    /// The ephemeral resources the walk opened, each closed once what uses
    /// it has finished (else at the walk's end).
    ephemerals: Ephemerals,
    closing: crate::walk::Closing,
    /// Each provider configuration that holds a process, released once
    /// its last node has finished.
    lifetimes: crate::walk::Lifetimes<()>,
    diags: Diags,
}

/// Runs phase 2; returns the deposed objects to delete in phase 3.
pub(super) async fn apply<'p>(
    ex: &mut Exec<'_, 'p>,
    runner: &mut Runner,
) -> Result<Vec<Doomed<'p>>, Diags> {
    let mut g = GraphApply::new(ex);
    // What the last driver calls did, not yet on disk: it goes in the same
    // commit as the intents of what it made ready (one sync, not two),
    // which is still before anything that depends on it starts.
    let mut results_recorded = Vec::new();
    while !g.schedule.is_done() {
        // Everything ready is evaluated first; its create intents then go
        // to disk in one commit before any of its operations start.
        let mut batch = Batch {
            entries: std::mem::take(&mut results_recorded),
            starts: Vec::new(),
        };
        while let Some(i) = g.schedule.next_ready() {
            g.visit(NodeIndex::new(i), &mut batch);
        }
        g.ex.record.commit(batch.entries)?;
        for op in batch.starts {
            runner.start(op);
        }
        if g.schedule.is_done() {
            break;
        }
        let results = runner.next().await;
        if results.is_empty() {
            break;
        }
        results_recorded = g.finished(results);
        if !g.follow.is_empty() {
            // A provisioner acts on the object its create recorded.
            g.ex.record.commit(std::mem::take(&mut results_recorded))?;
        }
        for op in std::mem::take(&mut g.follow) {
            runner.start(op);
        }
    }
    g.ex.record.commit(results_recorded)?;
    g.end().await
}

impl<'x, 'r, 'p> GraphApply<'x, 'r, 'p> {
    fn new(ex: &'x mut Exec<'r, 'p>) -> GraphApply<'x, 'r, 'p> {
        let req = ex.req;
        let plan = req.plan;
        let graph = &req.graph.graph;
        // What the plan leaves alone is read as state holds it.
        let by_addr = plan
            .changes
            .iter()
            .chain(&plan.untouched)
            .filter(|c| c.deposed.is_none() && c.action != Action::Delete)
            .map(|c| (c.addr.clone(), c))
            .collect();
        let mut changes_of: HashMap<ResourceAddr, Vec<&ResourceChange>> = HashMap::new();
        for c in plan
            .changes
            .iter()
            .filter(|c| c.action != Action::NoOp && c.action != Action::Delete)
        {
            changes_of.entry(c.config_addr()).or_default().push(c);
        }
        let edges = graph.node_indices().flat_map(|n| {
            graph
                .neighbors_directed(n, Direction::Outgoing)
                .map(move |s| Edge {
                    before: n.index(),
                    after: s.index(),
                })
        });
        let w = Walk::new(req.root, req.graph, req.vars.clone(), req.run.calling())
            .doubled(req.drivers.doubles());
        let nodes: Vec<NodeIndex> = graph.node_indices().collect();
        // Phase 3 deletes deposed objects after the walk, through the
        // configurations that made them.
        let deposing: HashSet<&str> = plan
            .changes
            .iter()
            .filter(|c| c.deposed.is_some() || c.action == Action::CreateThenDelete)
            .map(|c| c.provider.as_str())
            .collect();
        let kept = |address: &str| deposing.contains(address);
        let lifetimes =
            crate::walk::Lifetimes::new((req.root, req.graph, &w), req.drivers, &nodes, &kept);
        GraphApply {
            schedule: Schedule::new(graph.node_count(), edges),
            w,
            ex,
            by_addr,
            changes_of,
            pending: HashMap::new(),
            slots: Vec::new(),
            deposed: Vec::new(),
            follow: Vec::new(),
            provisioned: HashMap::new(),
            ephemerals: Ephemerals::new(tokio::runtime::Handle::current(), said(req.progress)),
            closing: crate::walk::Closing::new(req.graph, req.root),
            lifetimes,
            diags: Diags::default(),
        }
    }

    /// Node `n` has finished (failed, when so): what waits for it may
    /// start, an ephemeral resource nothing unfinished uses is closed, and
    /// a provider process nothing unfinished uses is stopped.
    fn done(&mut self, n: NodeIndex, failed: bool) {
        self.schedule.finish(n.index(), failed);
        self.lifetimes.finished(n);
        for config in self.closing.finished(n) {
            for f in self.ephemerals.close_of(&config) {
                self.diags.push(crate::walk::close_failed(&f));
            }
        }
    }

    /// Evaluates a ready node: its value when nothing changes, else the
    /// driver calls its instances need.
    fn visit(&mut self, n: NodeIndex, batch: &mut Batch) {
        let req = self.ex.req;
        let node = &req.graph.graph[n];
        if self.schedule.is_poisoned(n.index()) {
            let changes = node.resource_addr().and_then(|a| self.changes_of.get(a));
            for c in changes.into_iter().flatten() {
                self.ex.report.skipped.push(c.addr.clone());
            }
            return self.done(n, true);
        }
        if node.kind == NodeKind::Ephemeral {
            let w = (&self.w, n);
            let opened = super::ephemeral::open(req, w, &self.ephemerals, &mut self.diags);
            return self.done(n, !opened);
        }
        let data = node.kind == NodeKind::Data;
        if node.kind != NodeKind::Resource && !data {
            self.w.visit(n, &mut self.diags);
            return self.done(n, false);
        }
        let Some(r) = self
            .w
            .module(node)
            .and_then(|m| m.resources.get(node.index))
        else {
            return self.done(n, false);
        };
        if r.check.is_some() {
            // Read with its check's assertions once the walk is done.
            for ri in self.w.expand(n, &mut self.diags) {
                self.w.set(ri.module(), &node.local_addr, Value::unknown());
            }
            return self.done(n, false);
        }
        let found = if data {
            req.drivers.data(&r.type_name)
        } else {
            req.drivers.resource(&r.type_name)
        };
        let Some((base, schema)) = found else {
            return self.done(n, true);
        };
        let mut groups = Vec::new();
        for ri in self.w.expand(n, &mut self.diags) {
            let mut group = Instances {
                values: Vec::new(),
                running: 0,
                failed: false,
                of: ri,
            };
            for (instance, ctx) in group.of.keys.instances().into_iter().enumerate() {
                let value = match self.prepare(n, r, (base, schema), &group.of, &ctx, batch) {
                    Prepared::Known(v) => v,
                    Prepared::Failed => {
                        group.failed = true;
                        Value::unknown()
                    }
                    Prepared::Start(mut op, change) => {
                        op.id = self.slots.len();
                        self.slots.push(Slot {
                            node: n,
                            group: groups.len(),
                            instance,
                            change,
                            stage: Stage::Call,
                        });
                        batch.starts.push(*op);
                        group.running += 1;
                        Value::unknown()
                    }
                };
                group.values.push(value);
            }
            groups.push(group);
        }
        if groups.iter().all(|g| g.running == 0) {
            self.complete(n, groups);
        } else {
            self.pending.insert(n, groups);
        }
    }

    /// One instance of a ready node: evaluated and planned again, its
    /// intents added to `batch`, and the driver call it needs.
    fn prepare(
        &mut self,
        n: NodeIndex,
        r: &Resource,
        (base, schema): (&Arc<dyn Driver>, &ResourceSchema),
        ri: &ResourceInstances,
        ctx: &InstanceCtx,
        batch: &mut Batch,
    ) -> Prepared<'p> {
        let req = self.ex.req;
        let node = &req.graph.graph[n];
        let addr = ri.address(ctx.key.clone());
        let Some(&c) = self.by_addr.get(&addr) else {
            let why = "this instance is not in the plan; make a new plan";
            self.ex.fail(&addr, why.to_string());
            return Prepared::Failed;
        };
        if self.ex.broken.contains(&addr) {
            // Its delete-then-create delete failed.
            return Prepared::Failed;
        }
        if c.action == Action::NoOp {
            return Prepared::Known(c.after.clone().unwrap_or_else(Value::unknown));
        }
        // The instance's provider configuration, as planned; one that
        // waited for this apply's values gets them now.
        let why = match crate::walk::configure_deferred(req.root, &self.w, req.drivers, &c.provider)
        {
            Ok(true) => None,
            Ok(false) => Some(format!("its provider configuration ({}) is still not known: it uses values that this apply did not produce", c.provider)),
            Err(d) => Some(d.detail.clone()),
        };
        if let Some(why) = why {
            self.ex.fail(&addr, why);
            return Prepared::Failed;
        }
        let driver = driver_of(req.drivers, r, c, base);
        let at = (node, ri, ctx);
        let replanned = match self.plan_again(at, r, (&*driver, schema), c) {
            Ok(p) => p,
            Err(why) => {
                self.ex.fail(&addr, why);
                return Prepared::Failed;
            }
        };
        let before = match self.actions_again(at, r, c, before_change, &replanned.planned) {
            Ok(list) => list,
            Err(why) => {
                self.ex.fail(&addr, *why);
                return Prepared::Failed;
            }
        };
        if let Err(why) = self.depose(c, batch) {
            self.ex.fail(&addr, why);
            return Prepared::Failed;
        }
        let op = self.op(r, c, (driver, replanned), before, batch);
        Prepared::Start(Box::new(op), c)
    }

    /// The driver call of change `c` to the object `planned`, with the
    /// actions before it, its create intent added to `batch`.
    fn op(
        &self,
        r: &Resource,
        c: &ResourceChange,
        (driver, planned): (Arc<dyn Driver>, Replanned),
        before: Vec<Invoke>,
        batch: &mut Batch,
    ) -> Op {
        let req = self.ex.req;
        let Replanned {
            planned,
            config,
            kept,
        } = planned;
        // Written once: the intent, the call and the tags each carry it.
        let addr = c.addr.to_string();
        let kind = match c.action {
            Action::Update => OpKind::Update,
            Action::Read => OpKind::Read,
            _ => OpKind::Create,
        };
        if kind == OpKind::Create {
            batch.entries.push(Entry::Intent {
                address: addr.clone(),
                action: "create".into(),
                provider: Some(c.provider.clone()),
                trace: driver.trace(&r.type_name, &planned),
            });
        }
        // An update acts on the prior object. Under create_before_destroy
        // (or destroy = false) a create's prior is the object it replaces:
        // still there, with the same tags, and not to be swept. (After delete-then-create it is
        // gone, and a cloud whose ids are names gives the new object the
        // same id.)
        let prior = match c.action {
            Action::Update | Action::CreateThenDelete | Action::CreateThenForget => {
                c.before.clone()
            }
            _ => None,
        };
        Op {
            id: 0,
            kind,
            addr: addr.clone(),
            driver,
            type_name: r.type_name.clone(),
            prior: prior.unwrap_or_else(Value::null),
            wanted: Some(Wanted {
                value: planned,
                tags: Tags {
                    address: addr,
                    lineage: req.lineage.clone(),
                },
            }),
            config,
            kept,
            provisions: Vec::new(),
            // Its provisioners and the actions after it are part of it.
            provisioned_next: kind == OpKind::Create && super::provisioning::on_create(r)
                || kind != OpKind::Read && !self.ex.planned_actions(c, after_change).is_empty(),
            actions: Triggered {
                before,
                after: Vec::new(),
                failures: self.ex.failures(),
            },
        }
    }

    /// The plan's invocations of `c` on the events `pick` takes, each
    /// evaluated again with `caller` the object as it now is (those whose
    /// condition no longer holds left out).
    fn actions_again(
        &self,
        (node, ri, ctx): (&Node, &ResourceInstances, &InstanceCtx),
        r: &Resource,
        c: &ResourceChange,
        pick: fn(ActionEvent) -> bool,
        caller: &Value,
    ) -> Result<Vec<Invoke>, Box<OpError>> {
        let planned = self.ex.planned_actions(c, pick);
        if planned.is_empty() {
            return Ok(Vec::new());
        }
        let at = Triggering {
            walk: &self.w,
            node,
            r,
            ri,
            ctx,
        };
        let mut out = Vec::new();
        for p in planned {
            match action_again(&at, p, caller.clone(), self.ex.req.drivers) {
                Ok(Some(a)) => out.push(a),
                Ok(None) => {}
                Err(d) => return Err(Box::new(d.into())),
            }
        }
        self.ex.invokes(out).map_err(|why| Box::new(why.into()))
    }

    /// The instance's configuration evaluated and planned again: the
    /// object to ask the driver for, or why it may not go on.
    fn plan_again(
        &self,
        (node, ri, ctx): (&Node, &ResourceInstances, &InstanceCtx),
        r: &Resource,
        (driver, schema): (&dyn Driver, &ResourceSchema),
        c: &ResourceChange,
    ) -> Result<Replanned, String> {
        let mut d = Diags::default();
        let config = self
            .w
            .eval_with(node, ri.module(), Some(ctx), |ev| {
                decode(&r.body, schema, ev, r.span, &mut d)
            })
            .unwrap_or_else(Value::unknown);
        if let Some(why) = unmet(&self.w, (node, ri.module(), ctx), None, r) {
            return Err(why);
        }
        if !d.0.is_empty() {
            let summaries: Vec<_> = d.0.iter().map(|x| x.summary.clone()).collect();
            return Err(summaries.join("; "));
        }
        let planned = if node.kind == NodeKind::Data {
            // A data source's "plan" is its configuration.
            Replanned {
                planned: config.clone(),
                config,
                kept: Kept::default(),
            }
        } else {
            let prior = match c.action {
                Action::Update => c.before.as_ref(),
                _ => None,
            };
            let planned = plan_instance(InstanceRequest {
                driver,
                type_name: &r.type_name,
                schema,
                lifecycle: &r.lifecycle,
                config,
                prior: prior.map(|value| Prior {
                    value,
                    kept: &c.kept_before,
                    tainted: false,
                }),
                triggered: false,
                requested: false,
            })
            .map_err(|e| e.to_string())?;
            Replanned {
                planned: planned.planned.planned,
                config: planned.config,
                kept: planned.planned.kept,
            }
        };
        match &c.after {
            Some(saved) if !consistent(saved, &planned.planned) => Err("the final plan differs from the saved plan: a value known when planning has changed".into()),
            _ => Ok(planned),
        }
    }

    /// Under create_before_destroy the old object stays recorded, as
    /// deposed, until phase 3 deletes it.
    fn depose(&mut self, c: &'p ResourceChange, batch: &mut Batch) -> Result<(), String> {
        let (Action::CreateThenDelete, Some(before)) = (c.action, &c.before) else {
            return Ok(());
        };
        let key = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
        let status = Status {
            deposed: Some(key.clone()),
            tainted: false,
            kept: c.kept_before.clone(),
        };
        batch.entries.push(self.ex.put(c, before, status)?);
        batch.entries.push(remove(c, None));
        self.deposed.push(Doomed {
            change: c,
            deposed: Some(key),
        });
        Ok(())
    }

    /// Records what the finished driver calls did, and completes the nodes
    /// whose instances have all finished; the entries to commit before
    /// anything that depends on them starts.
    fn finished(&mut self, results: Vec<OpResult>) -> Vec<Entry> {
        let mut batch = Vec::new();
        let mut completed = Vec::new();
        for r in results {
            let slot = self.slots[r.op];
            if self.pending.contains_key(&slot.node) {
                self.record_result(slot, r, &mut batch);
                completed.push(slot.node);
            }
        }
        completed.sort();
        completed.dedup();
        for n in completed {
            if self
                .pending
                .get(&n)
                .is_some_and(|gs| gs.iter().all(|g| g.running == 0))
            {
                let groups = self.pending.remove(&n).unwrap_or_default();
                self.complete(n, groups);
            }
        }
        batch
    }

    /// One driver call's result: the object recorded (with the marks its
    /// schema and configuration call for), postconditions judged on it.
    fn record_result(&mut self, slot: Slot<'p>, r: OpResult, batch: &mut Vec<Entry>) {
        let req = self.ex.req;
        let c = slot.change;
        for why in &r.warnings {
            let summary = format!("What the create of {} left behind", c.addr);
            let d = Diag::new("strata::apply::sweep", summary, why.clone());
            self.ex.report.warnings.push(d.warning());
        }
        self.ex.report.invoked.add(r.invoked);
        self.ex.report.warnings.extend(r.notes);
        // A driver answers plain values: the marks its schema and the
        // configuration call for go back on before anything uses them
        // (state's sensitive_attributes, outputs, dependents).
        let data = c.addr.id.mode == Mode::Data;
        let schema = if data {
            req.drivers.data(&c.addr.id.type_name)
        } else {
            req.drivers.resource(&c.addr.id.type_name)
        }
        .map(|(_, s)| s);
        let result = r.result.map(|v| {
            v.map(|v| match schema {
                Some(s) => with_marks(v, c.after.as_ref(), s),
                None => v,
            })
        });
        let result = match self.provisions(slot, result, &r.kept, batch) {
            Next::Provisioning => return,
            Next::Record(result) => result,
        };
        let kept = match slot.stage {
            Stage::Provisioners => self
                .provisioned
                .remove(&r.op)
                .map(|(_, p)| p)
                .unwrap_or_default(),
            Stage::Call => r.kept.clone(),
        };
        let mut failed = false;
        // Postconditions the plan could not judge, on what was made; a made
        // object stays recorded even when one fails.
        if let Ok(Some(v)) = &result {
            if let Some(why) = self.unmet_after(slot, v) {
                self.ex.fail(&c.addr, why);
                failed = true;
            }
        }
        let value = match result {
            // Kept as read, as Terraform keeps data sources; every plan
            // reads them again.
            Ok(Some(v)) if data => {
                if let Ok(e) = self.ex.put(c, &v, Status::keeping(&kept)) {
                    batch.push(e);
                }
                Some(v)
            }
            Ok(Some(v)) => match self.record_object(c, v, &kept, batch) {
                Ok(v) => Some(v),
                Err(()) => {
                    failed = true;
                    None
                }
            },
            Ok(None) => None,
            Err(e) => {
                if let Some(v) = &r.leftover {
                    self.record_leftover(c, v, (schema, &r.kept), batch);
                }
                self.ex.fail(&c.addr, e);
                failed = true;
                None
            }
        };
        if let Some(h) = r.halted {
            self.halted(c, h, (value.as_ref(), &kept), batch);
            failed = true;
        }
        if let Some(group) = self
            .pending
            .get_mut(&slot.node)
            .and_then(|gs| gs.get_mut(slot.group))
        {
            group.running -= 1;
            group.failed |= failed;
            if let Some(v) = value {
                group.values[slot.instance] = v;
            }
        }
    }

    /// An action after the change failed: the object stands as made, or
    /// tainted where its trigger says so, and the instance fails.
    fn halted(
        &mut self,
        c: &ResourceChange,
        h: Halted,
        (made, kept): (Option<&Value>, &Kept),
        batch: &mut Vec<Entry>,
    ) {
        if let (true, Some(v)) = (h.taint, made) {
            let status = Status {
                deposed: None,
                tainted: true,
                kept: kept.clone(),
            };
            if let Ok(e) = self.ex.put(c, v, status) {
                batch.push(e);
            }
        }
        self.ex.fail(&c.addr, h.error);
    }

    /// A managed object the driver answered, recorded and counted; an
    /// object that cannot be stored fails the operation.
    fn record_object(
        &mut self,
        c: &ResourceChange,
        v: Value,
        kept: &Kept,
        batch: &mut Vec<Entry>,
    ) -> Result<Value, ()> {
        match self.ex.put(c, &v, Status::keeping(kept)) {
            Ok(e) => {
                batch.push(e);
                match c.action {
                    Action::Update => self.ex.report.changed += 1,
                    _ => self.ex.report.added += 1,
                }
                Ok(v)
            }
            Err(e) => {
                let why = format!("the driver returned an object that cannot be stored: {e}");
                self.ex.fail(&c.addr, why);
                Err(())
            }
        }
    }

    /// What a failed operation left in the cloud: a create that failed
    /// after the cloud made the object (it never became ready) recorded
    /// tainted, so it is neither orphaned nor made twice and the next plan
    /// replaces it; an update that failed part way, as it now is.
    fn record_leftover(
        &mut self,
        c: &ResourceChange,
        v: &Value,
        (schema, kept): (Option<&ResourceSchema>, &Kept),
        batch: &mut Vec<Entry>,
    ) {
        let v = &match schema {
            Some(s) => with_marks(v.clone(), c.after.as_ref(), s),
            None => v.clone(),
        };
        let status = Status {
            deposed: None,
            tainted: c.action != Action::Update,
            kept: kept.clone(),
        };
        if let Ok(entry) = self.ex.put(c, v, status) {
            batch.push(entry);
        }
    }

    /// A create of an instance with creation-time provisioners, or a
    /// create or update with actions after it: its object recorded
    /// (tainted while provisioners are to run: an interrupted run leaves
    /// it to be replaced, as a failed provisioner does) and its
    /// provisioners and actions, evaluated with the new object, started
    /// as an op of their own; anything else goes on to be recorded.
    fn provisions(
        &mut self,
        slot: Slot<'p>,
        result: Result<Option<Value>, OpError>,
        kept: &Kept,
        batch: &mut Vec<Entry>,
    ) -> Next {
        let c = slot.change;
        let creates = c.action == Action::Create || c.action.is_replace();
        let made = match (&result, slot.stage) {
            (Ok(Some(v)), Stage::Call) if creates || c.action == Action::Update => v.clone(),
            _ => return Next::Record(result),
        };
        let graph = &self.ex.req.graph.graph;
        let node = &graph[slot.node];
        let Some(r) = self
            .w
            .module(node)
            .and_then(|m| m.resources.get(node.index))
        else {
            return Next::Record(result);
        };
        let provisioning = creates && super::provisioning::on_create(r);
        if !provisioning && self.ex.planned_actions(c, after_change).is_empty() {
            return Next::Record(result);
        }
        let status = Status {
            deposed: None,
            tainted: provisioning,
            kept: kept.clone(),
        };
        match self.ex.put(c, &made, status) {
            Ok(e) => batch.push(e),
            Err(e) => {
                return Next::Record(Err(format!(
                    "the driver returned an object that cannot be stored: {e}"
                )
                .into()))
            }
        }
        let follows = match self.following(slot, r, &made, provisioning) {
            Ok(Some(f)) => f,
            Ok(None) => return Next::Record(result),
            Err(e) => return Next::Record(Err(*e)),
        };
        let Some(driver) = self.ex.driver(c) else {
            return Next::Record(result);
        };
        let id = self.slots.len();
        self.slots.push(Slot {
            stage: Stage::Provisioners,
            ..slot
        });
        self.provisioned.insert(id, (made.clone(), kept.clone()));
        self.follow.push(Op {
            id,
            kind: if creates {
                OpKind::Provision
            } else {
                OpKind::AfterUpdate
            },
            addr: c.addr.to_string(),
            driver,
            type_name: c.addr.id.type_name.clone(),
            prior: made,
            wanted: None,
            config: Value::null(),
            kept: Kept::default(),
            provisions: follows.provisions,
            provisioned_next: false,
            actions: follows.actions,
        });
        Next::Provisioning
    }

    /// What follows the driver call of `slot` that made `made`: its
    /// creation-time provisioners (when `provisioning`) and the actions
    /// after it, evaluated with the new object.
    fn following(
        &self,
        slot: Slot<'p>,
        r: &Resource,
        made: &Value,
        provisioning: bool,
    ) -> Result<Option<Following>, Box<OpError>> {
        let node = &self.ex.req.graph.graph[slot.node];
        let Some(group) = self
            .pending
            .get(&slot.node)
            .and_then(|gs| gs.get(slot.group))
        else {
            return Ok(None);
        };
        let Some(ctx) = group.of.keys.instances().into_iter().nth(slot.instance) else {
            return Ok(None);
        };
        let module = group.of.module();
        let provisions = match provisioning {
            false => Vec::new(),
            true => {
                let evaluated = self
                    .w
                    .eval_self(node, module, Some(&ctx), made.clone(), |ev| {
                        super::provisioning::evaluated(r, crate::config::When::Create, ev)
                    });
                match evaluated {
                    Some(Ok(p)) => p,
                    Some(Err(d)) => return Err(Box::new(d.into())),
                    None => return Ok(None),
                }
            }
        };
        let after =
            self.actions_again((node, &group.of, &ctx), r, slot.change, after_change, made)?;
        Ok(Some(Following {
            provisions,
            actions: Triggered {
                before: Vec::new(),
                after,
                failures: self.ex.failures(),
            },
        }))
    }

    /// The first failing postcondition of the instance `slot` made as `v`.
    fn unmet_after(&self, slot: Slot<'p>, v: &Value) -> Option<String> {
        let graph = &self.ex.req.graph.graph;
        let node = &graph[slot.node];
        let r = self.w.module(node)?.resources.get(node.index)?;
        if r.lifecycle.postconditions.is_empty() {
            // Most resources have none: spare listing every instance of a
            // large count for each one that finishes.
            return None;
        }
        let group = self.pending.get(&slot.node)?.get(slot.group)?;
        let ctx = group.of.keys.instances().into_iter().nth(slot.instance)?;
        unmet(&self.w, (node, group.of.module(), &ctx), Some(v), r)
    }

    /// A node whose instances have all finished: its value is set, and
    /// its dependents may start (or are skipped, when it failed).
    fn complete(&mut self, n: NodeIndex, groups: Vec<Instances>) {
        let node = &self.ex.req.graph.graph[n];
        let failed = groups.iter().any(|g| g.failed);
        for g in groups {
            self.w.set(
                g.of.module(),
                &node.local_addr,
                g.of.keys.assemble(g.values),
            );
        }
        self.done(n, failed);
    }

    /// After the walk: root outputs recorded, checks judged after a
    /// successful apply, and the deposed objects whose replacements
    /// succeeded. Deposed objects of failed replacements stay deposed: the
    /// next plan deletes them.
    async fn end(self) -> Result<Vec<Doomed<'p>>, Diags> {
        let GraphApply {
            ex,
            w,
            mut diags,
            deposed,
            ephemerals,
            ..
        } = self;
        for f in ephemerals.close_all() {
            diags.push(crate::walk::close_failed(&f));
        }
        outputs(ex, Some(&w))?;
        if !diags.0.is_empty() {
            return Err(diags);
        }
        // Checks judge the whole configuration, which a narrowed plan is not.
        let whole = ex.req.plan.scope.is_everything() && !ex.req.plan.mode.is_refresh_only();
        let finished = ex.report.failed.is_empty() && ex.report.not_started.is_empty();
        if finished && whole {
            let req = ex.req;
            let settle = Some(req.settle.unwrap_or_else(super::check_settle));
            let failed_checks =
                crate::walk::run_checks(req.root, &w, req.drivers, settle, &|_| false).await;
            ex.report.warnings.extend(failed_checks);
        }
        Ok(deposed
            .into_iter()
            .filter(|d| !ex.broken.contains(&d.change.addr))
            .collect())
    }
}

/// Whether `now` (the final plan) agrees with `saved` wherever `saved`
/// was known: what apply does must be what the plan showed.
fn consistent(saved: &Value, now: &Value) -> bool {
    if !saved.is_known() {
        return true;
    }
    match (saved.unmarked(), now.unmarked()) {
        (Value::Object(a), Value::Object(b)) | (Value::Map(_, a), Value::Map(_, b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, v)| b.get(k).is_some_and(|w| consistent(v, w)))
        }
        (Value::List(_, a), Value::List(_, b)) | (Value::Tuple(a), Value::Tuple(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(v, w)| consistent(v, w))
        }
        (a, b) if a.is_wholly_known() => same(a, b),
        _ => true,
    }
}

/// An instance planned again at apply: the object to ask for, the
/// configuration it was planned from, and the driver's bytes kept beside it.
struct Replanned {
    planned: Value,
    config: Value,
    kept: Kept,
}

/// The driver `c` is applied through: its provider configuration's (else
/// `base`, the type's), or a test's stand-in for the instance.
fn driver_of(
    drivers: &crate::builtin::Drivers,
    r: &Resource,
    c: &ResourceChange,
    base: &Arc<dyn Driver>,
) -> Arc<dyn Driver> {
    let configured = drivers.configured(&r.type_name, &c.provider, r.mode);
    drivers.at(&c.addr, configured.as_ref().map_or(base, |(d, _)| d))
}

/// Where the apply's ephemeral steps go: said as they happen.
fn said(progress: super::Progress) -> crate::walk::Tell {
    Box::new(move |s| progress.ephemeral(&s.addr, &s.step))
}

/// The events whose actions run before a create or update.
fn before_change(e: ActionEvent) -> bool {
    matches!(e, ActionEvent::BeforeCreate | ActionEvent::BeforeUpdate)
}

/// The events whose actions run once a create or update has made its
/// object.
fn after_change(e: ActionEvent) -> bool {
    matches!(e, ActionEvent::AfterCreate | ActionEvent::AfterUpdate)
}
