//! The apply stage: carrying out a [`Plan`] through the drivers.
//!
//! Three phases, each a dependency-ordered walk with at most `parallelism`
//! driver calls in flight:
//! 1. deletes — objects leaving the configuration and the old halves of
//!    delete-then-create replacements, dependents before their dependencies;
//! 2. the configuration graph — creates and updates in dependency order,
//!    each instance's configuration evaluated again now that what it
//!    references is known, and checked against the plan;
//! 3. deposed objects — the old halves of create-before-destroy
//!    replacements, once everything that referenced them has moved on.
//!
//! Evaluation runs on one thread (it is cheap); driver calls run as tokio
//! tasks (they are slow). Every finished operation is in the journal,
//! fsynced, before anything that depends on it starts; an intent entry is
//! written before each create, so a crash between "the cloud made it" and
//! "the state has it" can be recovered. A failed operation stops what
//! depends on it; independent branches finish.

mod runner;

use crate::builtin::Drivers;
use crate::config::condition::{judge_all, Kind};
use crate::config::Module;
use crate::diag::{Diag, Diags};
use crate::graph::{Graph, NodeKind};
use crate::lang::json::{type_to_json, value_to_json};
use crate::lang::value::Value;
use crate::plan::decode::decode;
use crate::plan::walk::Walk;
use crate::plan::{config_addr, diff, Action, Plan, ResourceChange};
use petgraph::graph::NodeIndex;
use petgraph::Direction;
use runner::{OpKind, OpResult, Runner};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use strata_provider::{Driver, PlanRequest, Tags};
use strata_state::model::{InstanceState, OutputState};
use strata_state::{Entry, Journal, State};

pub struct Request<'a> {
    pub root: &'a Module,
    pub graph: &'a Graph,
    pub drivers: &'a Drivers,
    pub vars: BTreeMap<String, Value>,
    pub plan: &'a Plan,
    pub lineage: String,
    pub parallelism: usize,
    /// Progress lines on stderr (a terminal is watching).
    pub progress: bool,
}

/// What happened, for the summary.
#[derive(Debug, Default)]
pub struct Report {
    pub imported: usize,
    pub forgotten: usize,
    pub added: usize,
    pub changed: usize,
    pub destroyed: usize,
    /// Address and error of every operation that failed.
    pub failed: Vec<(String, String)>,
    /// Addresses not attempted because something they depend on failed.
    pub skipped: Vec<String>,
    /// Failed `check` assertions, after they had time to settle.
    pub warnings: Vec<crate::diag::Diag>,
}

fn diag_of(e: strata_state::StateError) -> Diags {
    Diags::from(Diag::new("strata::state::journal", e.to_string(), ""))
}

struct Exec<'r, 'a> {
    req: &'r Request<'a>,
    journal: &'r mut Journal,
    /// Everything journaled, to fold into the state at the end.
    entries: Vec<Entry>,
    report: Report,
    /// Addresses whose operation failed or was skipped.
    broken: HashSet<String>,
    /// Unchanged instances whose recorded dependencies are not the
    /// configuration's (an object adopted after a crash has none).
    stale_dependencies: Vec<usize>,
}

impl Exec<'_, '_> {
    fn commit(&mut self, batch: Vec<Entry>) -> Result<(), Diags> {
        self.journal.append_all(&batch).map_err(diag_of)?;
        self.entries.extend(batch);
        Ok(())
    }

    fn driver(&self, c: &ResourceChange) -> Option<Arc<dyn Driver>> {
        self.req
            .drivers
            .configured(&c.addr.id.type_name, &c.provider, false)
            .map(|(d, _)| d)
    }

    fn put(&self, c: &ResourceChange, v: &Value, deposed: Option<String>) -> Result<Entry, String> {
        self.put_as(c, v, deposed, None)
    }

    fn put_as(
        &self,
        c: &ResourceChange,
        v: &Value,
        deposed: Option<String>,
        status: Option<&str>,
    ) -> Result<Entry, String> {
        let ty = self
            .req
            .drivers
            .resource(&c.addr.id.type_name)
            .map(|(_, s)| s.object_type())
            .ok_or_else(|| format!("no driver for {}", c.addr.id.type_name))?;
        Ok(Entry::Put {
            resource: c.addr.id.clone(),
            provider: c.provider.clone(),
            instance: InstanceState {
                index_key: c.addr.key.clone(),
                deposed,
                status: status.map(str::to_string),
                schema_version: c.schema_version,
                attributes: value_to_json(v, &ty)?.into(),
                sensitive_attributes: crate::lang::json::mark_paths(v),
                dependencies: c.dependencies.clone(),
                create_before_destroy: c.create_before_destroy,
            },
        })
    }

    fn remove(c: &ResourceChange, deposed: Option<String>) -> Entry {
        Entry::Remove {
            resource: c.addr.id.clone(),
            index_key: c.addr.key.clone(),
            deposed,
        }
    }

    fn fail(&mut self, addr: String, why: String) {
        self.broken.insert(addr.clone());
        self.report.failed.push((addr, why));
    }

    /// Runs delete operations, each after the deletes of everything that
    /// depends on it.
    async fn deletes(
        &mut self,
        runner: &mut Runner,
        ops: Vec<(&ResourceChange, Option<String>)>,
    ) -> Result<(), Diags> {
        // waits[i]: deletes that must finish before op i may start.
        let mut by_config: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, (c, _)) in ops.iter().enumerate() {
            by_config.entry(config_addr(&c.addr)).or_default().push(i);
        }
        let mut blockers = vec![0usize; ops.len()];
        let mut unblocks: Vec<Vec<usize>> = vec![Vec::new(); ops.len()];
        for (i, (c, _)) in ops.iter().enumerate() {
            for d in &c.dependencies {
                for &j in by_config.get(d).into_iter().flatten() {
                    if j != i {
                        blockers[j] += 1;
                        unblocks[i].push(j);
                    }
                }
            }
        }
        let mut ready: VecDeque<usize> = (0..ops.len()).filter(|&i| blockers[i] == 0).collect();
        let mut left = ops.len();
        let mut dead = vec![false; ops.len()];
        while left > 0 {
            while let Some(i) = ready.pop_front() {
                let (c, deposed) = &ops[i];
                if dead[i] || self.broken.contains(&c.addr.to_string()) && deposed.is_none() {
                    // A dependent failed to go: this one must stay.
                    self.report.skipped.push(c.addr.to_string());
                    left -= 1;
                    self.release(i, &unblocks, &mut blockers, &mut ready, &mut dead, true);
                    continue;
                }
                let driver = match self.req.drivers.deferred(&c.provider) {
                    Some(_) => None,
                    None => self.driver(c),
                };
                let Some(driver) = driver else {
                    let why = if self.req.drivers.deferred(&c.provider).is_some() {
                        format!("its provider configuration ({}) uses values known only later in this apply, so it cannot be deleted before them; apply the change that makes them known first", c.provider)
                    } else {
                        "no driver for this resource type".into()
                    };
                    self.fail(c.addr.to_string(), why);
                    left -= 1;
                    self.release(i, &unblocks, &mut blockers, &mut ready, &mut dead, true);
                    continue;
                };
                let prior = c.before.clone().unwrap_or_else(Value::null);
                runner.start(
                    i,
                    OpKind::Delete,
                    c.addr.to_string(),
                    driver,
                    c.addr.id.type_name.clone(),
                    prior,
                    None,
                );
            }
            if left == 0 {
                break;
            }
            let done = runner.next().await;
            if done.is_empty() {
                break;
            }
            let mut batch = Vec::new();
            let mut finished = Vec::new();
            for r in done {
                let (c, deposed) = &ops[r.op];
                left -= 1;
                match r.result {
                    Ok(_) => {
                        batch.push(Self::remove(c, deposed.clone()));
                        // Every object deleted is counted where it goes,
                        // so a replacement whose create then fails still
                        // reports its destroy.
                        self.report.destroyed += 1;
                        finished.push((r.op, false));
                    }
                    Err(e) => {
                        self.fail(c.addr.to_string(), e);
                        finished.push((r.op, true));
                    }
                }
            }
            self.commit(batch)?;
            for (i, failed) in finished {
                self.release(i, &unblocks, &mut blockers, &mut ready, &mut dead, failed);
            }
        }
        Ok(())
    }

    fn release(
        &self,
        i: usize,
        unblocks: &[Vec<usize>],
        blockers: &mut [usize],
        ready: &mut VecDeque<usize>,
        dead: &mut [bool],
        failed: bool,
    ) {
        for &j in &unblocks[i] {
            if failed {
                dead[j] = true;
            }
            blockers[j] -= 1;
            if blockers[j] == 0 {
                ready.push_back(j);
            }
        }
    }
}

/// Applies `req.plan`, journaling every operation; returns the state with
/// the journal folded in (the caller persists it) and the report.
/// Unchanged instances (by index into the plan's changes) whose recorded
/// dependencies are not the configuration's: a destroy orders by the
/// state's, so apply brings them up to date even where nothing else
/// changes, as Terraform does (an object adopted after a crash has none).
pub fn stale_dependencies(plan: &Plan, state: &State) -> Vec<usize> {
    let recorded: HashMap<&strata_state::model::ResourceId, &strata_state::ResourceState> =
        state.resources.iter().map(|r| (&r.id, r)).collect();
    plan.changes
        .iter()
        .enumerate()
        .filter(|(_, c)| c.action == Action::NoOp && c.deposed.is_none() && c.before.is_some())
        .filter(|(_, c)| {
            let instance = recorded.get(&c.addr.id).and_then(|r| {
                r.instances
                    .iter()
                    .find(|i| i.index_key == c.addr.key && i.deposed.is_none())
            });
            instance.is_some_and(|i| {
                let mut had = i.dependencies.clone();
                let mut want = c.dependencies.clone();
                had.sort();
                want.sort();
                had != want
            })
        })
        .map(|(i, _)| i)
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

pub fn apply(
    req: &Request<'_>,
    mut state: State,
    journal: &mut Journal,
    rt: &tokio::runtime::Runtime,
) -> Result<(State, Report), Diags> {
    let stale_dependencies = stale_dependencies(req.plan, &state);
    let mut ex = Exec {
        req,
        journal,
        entries: Vec::new(),
        report: Report::default(),
        broken: HashSet::new(),
        stale_dependencies,
    };
    let result = rt.block_on(run(&mut ex));
    let Exec {
        entries, report, ..
    } = ex;
    // Whatever finished is kept, even when a later step failed.
    state.apply_all(&entries);
    result.map(|()| (state, report))
}

async fn run(ex: &mut Exec<'_, '_>) -> Result<(), Diags> {
    let plan = ex.req.plan;
    let mut runner = Runner::new(ex.req.parallelism, ex.req.progress);
    // What refresh found changed outside strata is recorded first (an
    // object deleted out of band leaves the state), then moves, in one
    // commit: later entries use the new addresses.
    let mut first = Vec::new();
    for d in &plan.drift {
        match &d.after {
            Some(v) => match ex.put(d, v, d.deposed.clone()) {
                Ok(e) => first.push(e),
                Err(e) => {
                    return Err(Diags::from(Diag::new(
                        "strata::apply::refresh",
                        format!("Cannot record the refreshed {}", d.addr),
                        e,
                    )))
                }
            },
            None => first.push(Exec::remove(d, d.deposed.clone())),
        }
    }
    for &i in &ex.stale_dependencies {
        let c = &plan.changes[i];
        if let Some(before) = &c.before {
            match ex.put(c, before, None) {
                Ok(e) => first.push(e),
                Err(e) => {
                    return Err(Diags::from(Diag::new(
                        "strata::apply::dependencies",
                        format!("Cannot record the dependencies of {}", c.addr),
                        e,
                    )))
                }
            }
        }
    }
    // Imported objects join the state, forgotten ones leave it, before
    // anything else: neither needs a driver call.
    for c in &plan.changes {
        if c.action == Action::Forget {
            first.push(Exec::remove(c, c.deposed.clone()));
            ex.report.forgotten += 1;
        }
        if let (Some(_), Some(before)) = (&c.importing, &c.before) {
            match ex.put(c, before, None) {
                Ok(e) => first.push(e),
                Err(e) => {
                    return Err(Diags::from(Diag::new(
                        "strata::apply::import",
                        format!("Cannot record the imported {}", c.addr),
                        e,
                    )))
                }
            }
            ex.report.imported += 1;
        }
    }
    ex.commit(first)?;
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
    ex.commit(moves)?;

    let deletes: Vec<(&ResourceChange, Option<String>)> = plan
        .changes
        .iter()
        .filter(|c| c.action == Action::Delete || c.action == Action::DeleteThenCreate)
        .map(|c| (c, c.deposed.clone()))
        .collect();
    ex.deletes(&mut runner, deletes).await?;
    if plan.destroy {
        return outputs(ex, None);
    }

    let deposed = walk(ex, &mut runner).await?;
    let deposed: Vec<(&ResourceChange, Option<String>)> =
        deposed.iter().map(|(c, d)| (*c, Some(d.clone()))).collect();
    ex.deletes(&mut runner, deposed).await?;
    Ok(())
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
        (a, b) if a.is_wholly_known() => diff::same(a, b),
        _ => true,
    }
}

/// Phase 2: the configuration graph. Returns the create-before-destroy
/// replacements whose old objects are now deposed.
async fn walk<'p>(
    ex: &mut Exec<'_, 'p>,
    runner: &mut Runner,
) -> Result<Vec<(&'p ResourceChange, String)>, Diags> {
    let req = ex.req;
    let plan: &'p Plan = req.plan;
    let graph = req.graph;
    let w = Walk::new(req.root, graph, req.vars.clone());
    let by_addr: HashMap<String, &'p ResourceChange> = plan
        .changes
        .iter()
        .filter(|c| c.deposed.is_none() && c.action != Action::Delete)
        .map(|c| (c.addr.to_string(), c))
        .collect();
    let mut blockers: Vec<usize> = graph
        .graph
        .node_indices()
        .map(|n| {
            graph
                .graph
                .neighbors_directed(n, Direction::Incoming)
                .count()
        })
        .collect();
    let mut ready: VecDeque<NodeIndex> = graph
        .graph
        .node_indices()
        .filter(|n| blockers[n.index()] == 0)
        .collect();
    let mut failed_nodes: HashSet<NodeIndex> = HashSet::new();
    // Per resource (`module.m.t.n`), the changes its node would make: what
    // is reported skipped when something it depends on fails.
    let mut changes_of: HashMap<String, Vec<&ResourceChange>> = HashMap::new();
    for c in plan
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp && c.action != Action::Delete)
    {
        changes_of.entry(config_addr(&c.addr)).or_default().push(c);
    }
    // Per resource node: instance ops still running, and the values so far.
    struct Pending {
        left: usize,
        prefix: String,
        keys: crate::plan::walk::Keys,
        values: Vec<Value>,
        failed: bool,
    }
    let mut pending: HashMap<NodeIndex, Vec<Pending>> = HashMap::new();
    // Op id → (node, module instance #, instance #, change, deposed key).
    let mut ops: Vec<(NodeIndex, usize, usize, &'p ResourceChange)> = Vec::new();
    let mut deposed_out = Vec::new();
    let mut diags = Diags::default();
    let mut done_nodes = 0usize;
    let total = graph.graph.node_count();

    let finish = |n: NodeIndex,
                  failed: bool,
                  ready: &mut VecDeque<NodeIndex>,
                  blockers: &mut Vec<usize>,
                  failed_nodes: &mut HashSet<NodeIndex>| {
        if failed {
            failed_nodes.insert(n);
        }
        for s in graph.graph.neighbors_directed(n, Direction::Outgoing) {
            if failed {
                failed_nodes.insert(s);
            }
            blockers[s.index()] -= 1;
            if blockers[s.index()] == 0 {
                ready.push_back(s);
            }
        }
    };

    while done_nodes < total {
        // Everything ready is evaluated first; its create intents then go
        // to disk in one commit before any of its operations start.
        let mut intents = Vec::new();
        let mut starts = Vec::new();
        while let Some(n) = ready.pop_front() {
            let node = &graph.graph[n];
            if failed_nodes.contains(&n) {
                // Something this depends on failed: report what is skipped.
                for c in changes_of.get(&node.addr()).into_iter().flatten() {
                    ex.report.skipped.push(c.addr.to_string());
                }
                done_nodes += 1;
                finish(n, true, &mut ready, &mut blockers, &mut failed_nodes);
                continue;
            }
            let data = node.kind == NodeKind::Data;
            if node.kind != NodeKind::Resource && !data {
                w.visit(n, &mut diags);
                done_nodes += 1;
                finish(n, false, &mut ready, &mut blockers, &mut failed_nodes);
                continue;
            }
            let Some(r) = w.module(node).and_then(|m| m.resources.get(node.index)) else {
                done_nodes += 1;
                finish(n, false, &mut ready, &mut blockers, &mut failed_nodes);
                continue;
            };
            if r.check.is_some() {
                // Read with its check's assertions once the walk is done.
                for ri in w.expand(n, &mut diags) {
                    w.set(&ri.prefix, &node.local_addr, Value::unknown());
                }
                done_nodes += 1;
                finish(n, false, &mut ready, &mut blockers, &mut failed_nodes);
                continue;
            }
            let found = if data {
                req.drivers.data(&r.type_name)
            } else {
                req.drivers.resource(&r.type_name)
            };
            let Some((driver, schema)) = found else {
                done_nodes += 1;
                finish(n, true, &mut ready, &mut blockers, &mut failed_nodes);
                continue;
            };
            let mut groups = Vec::new();
            for ri in w.expand(n, &mut diags) {
                let mut group = Pending {
                    left: 0,
                    prefix: ri.prefix.clone(),
                    keys: ri.keys.clone(),
                    values: Vec::new(),
                    failed: false,
                };
                for (k, ctx) in ri.keys.instances().into_iter().enumerate() {
                    let addr = ri.address(node, ctx.key.clone()).to_string();
                    let Some(&c) = by_addr.get(&addr) else {
                        group.failed = true;
                        ex.fail(
                            addr,
                            "this instance is not in the plan; make a new plan".into(),
                        );
                        group.values.push(Value::unknown());
                        continue;
                    };
                    if ex.broken.contains(&addr) {
                        // Its delete-then-create delete failed.
                        group.failed = true;
                        group.values.push(Value::unknown());
                        continue;
                    }
                    if c.action == Action::NoOp {
                        group
                            .values
                            .push(c.after.clone().unwrap_or_else(Value::unknown));
                        continue;
                    }
                    // The instance's provider configuration, as planned;
                    // one that waited for this apply's values gets them now.
                    match crate::plan::providers::configure_deferred(
                        req.root,
                        &w,
                        req.drivers,
                        &c.provider,
                    ) {
                        Ok(true) => {}
                        Ok(false) => {
                            group.failed = true;
                            ex.fail(addr, format!("its provider configuration ({}) is still not known: it uses values that this apply did not produce", c.provider));
                            group.values.push(Value::unknown());
                            continue;
                        }
                        Err(d) => {
                            group.failed = true;
                            ex.fail(addr, d.detail.clone());
                            group.values.push(Value::unknown());
                            continue;
                        }
                    }
                    let driver = req
                        .drivers
                        .configured(&r.type_name, &c.provider, data)
                        .map_or_else(|| driver.clone(), |(d, _)| d);
                    // The configuration again, with what is now known.
                    let mut d = Diags::default();
                    let config = w
                        .eval_with(node, &ri.prefix, Some(&ctx), |ev| {
                            decode(&r.body, schema, ev, r.span, &mut d)
                        })
                        .unwrap_or_else(Value::unknown);
                    let prior = match c.action {
                        Action::Update => c.before.clone(),
                        _ => None,
                    };
                    let config = match &prior {
                        Some(p) if r.lifecycle.ignore_all_changes => diff::keep_all(config, p),
                        Some(p) => r.lifecycle.ignore_changes.iter().fold(config, |cv, e| {
                            match diff::path_of(e) {
                                Some(path) => diff::keep_prior(cv, p, &path),
                                None => cv,
                            }
                        }),
                        None => config,
                    };
                    if let Some(why) = unmet(&w, (node, &ri.prefix, &ctx), None, r) {
                        ex.fail(addr, why);
                        group.failed = true;
                        group.values.push(Value::unknown());
                        continue;
                    }
                    let planned = if d.0.is_empty() && data {
                        // A data source's "plan" is its configuration.
                        Ok(strata_provider::Planned {
                            planned: config.clone(),
                            requires_replace: Vec::new(),
                        })
                    } else if d.0.is_empty() {
                        driver
                            .plan(PlanRequest {
                                type_name: &r.type_name,
                                prior: prior.as_ref(),
                                config: &config,
                            })
                            .map_err(|e| e.to_string())
                    } else {
                        Err(d
                            .0
                            .iter()
                            .map(|x| x.summary.clone())
                            .collect::<Vec<_>>()
                            .join("; "))
                    };
                    let planned = match planned {
                        Ok(p) if c.after.as_ref().is_none_or(|a| consistent(a, &p.planned)) => {
                            Some(p.planned)
                        }
                        Ok(_) => {
                            ex.fail(addr.clone(), "the final plan differs from the saved plan: a value known when planning has changed".into());
                            None
                        }
                        Err(e) => {
                            ex.fail(addr.clone(), e);
                            None
                        }
                    };
                    let Some(planned) = planned else {
                        group.failed = true;
                        group.values.push(Value::unknown());
                        continue;
                    };
                    let kind = match c.action {
                        Action::Update => OpKind::Update,
                        Action::Read => OpKind::Read,
                        _ => OpKind::Create,
                    };
                    if c.action == Action::CreateThenDelete {
                        // The old object stays recorded, as deposed, until
                        // phase 3 deletes it.
                        let key = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
                        if let Some(b) = &c.before {
                            match ex.put(c, b, Some(key.clone())) {
                                Ok(e) => intents.push(e),
                                Err(e) => {
                                    ex.fail(addr.clone(), e);
                                    group.failed = true;
                                    group.values.push(Value::unknown());
                                    continue;
                                }
                            }
                            intents.push(Exec::remove(c, None));
                            deposed_out.push((c, key));
                        }
                    }
                    if kind == OpKind::Create {
                        intents.push(Entry::Intent {
                            address: addr.clone(),
                            action: "create".into(),
                            provider: Some(c.provider.clone()),
                        });
                    }
                    group.left += 1;
                    group.values.push(Value::unknown());
                    starts.push((
                        ops.len(),
                        kind,
                        addr,
                        c,
                        prior,
                        planned,
                        driver.clone(),
                        r.type_name.clone(),
                    ));
                    ops.push((n, groups.len(), k, c));
                }
                groups.push(group);
            }
            if groups.iter().all(|g| g.left == 0) {
                let failed = groups.iter().any(|g| g.failed);
                for g in groups {
                    w.set(&g.prefix, &node.local_addr, g.keys.assemble(g.values));
                }
                done_nodes += 1;
                finish(n, failed, &mut ready, &mut blockers, &mut failed_nodes);
            } else {
                pending.insert(n, groups);
            }
        }
        ex.commit(intents)?;
        for (id, kind, addr, c, prior, planned, driver, type_name) in starts {
            // Under create_before_destroy a create's prior is the object it
            // replaces: still there, with the same tags, and not to be
            // swept. (After delete-then-create it is gone, and a cloud
            // whose ids are names gives the new object the same id.)
            let prior = match c.action {
                Action::CreateThenDelete => c.before.clone(),
                _ => prior,
            };
            runner.start(
                id,
                kind,
                addr,
                driver,
                type_name,
                prior.unwrap_or_else(Value::null),
                Some((
                    planned,
                    Tags {
                        address: c.addr.to_string(),
                        lineage: req.lineage.clone(),
                    },
                )),
            );
        }
        if done_nodes >= total {
            break;
        }
        let results: Vec<OpResult> = runner.next().await;
        if results.is_empty() {
            break;
        }
        let mut batch = Vec::new();
        let mut completed = Vec::new();
        for r in results {
            let (n, g, k, c) = ops[r.op];
            let Some(groups) = pending.get_mut(&n) else {
                continue;
            };
            let group = &mut groups[g];
            group.left -= 1;
            // A driver answers plain values: the marks its schema and the
            // configuration call for go back on before anything uses them
            // (state's sensitive_attributes, outputs, dependents).
            let data = c.addr.id.mode == strata_state::model::Mode::Data;
            let schema = if data {
                req.drivers.data(&c.addr.id.type_name)
            } else {
                req.drivers.resource(&c.addr.id.type_name)
            }
            .map(|(_, s)| s);
            let result = r.result.map(|v| {
                v.map(|v| match schema {
                    Some(s) => crate::plan::diff::with_marks(v, c.after.as_ref(), s),
                    None => v,
                })
            });
            // Postconditions the plan could not judge, on what was made;
            // a made object stays recorded even when one fails.
            let node = &graph.graph[n];
            let unmet_post = match (
                &result,
                w.module(node).and_then(|m| m.resources.get(node.index)),
            ) {
                (Ok(Some(v)), Some(res)) => {
                    let ctx = group.keys.instances().into_iter().nth(k);
                    ctx.and_then(|ctx| unmet(&w, (node, &group.prefix, &ctx), Some(v), res))
                }
                _ => None,
            };
            if let Some(why) = unmet_post {
                ex.fail(c.addr.to_string(), why);
                group.failed = true;
            }
            match result {
                // Data sources are read again by every plan; not stored.
                Ok(Some(v)) if data => {
                    group.values[k] = v;
                }
                Ok(Some(v)) => match ex.put(c, &v, None) {
                    Ok(e) => {
                        batch.push(e);
                        match c.action {
                            Action::Update => ex.report.changed += 1,
                            _ => ex.report.added += 1,
                        }
                        group.values[k] = v;
                    }
                    Err(e) => {
                        ex.fail(
                            c.addr.to_string(),
                            format!("the driver returned an object that cannot be stored: {e}"),
                        );
                        group.failed = true;
                    }
                },
                Ok(None) => {}
                Err(e) => {
                    // A create that failed after the cloud made the object
                    // (it never became ready): recorded tainted, so it is
                    // neither orphaned nor made twice; the next plan
                    // replaces it.
                    if let Some(v) = &r.leftover {
                        if let Ok(entry) = ex.put_as(c, v, None, Some("tainted")) {
                            batch.push(entry);
                        }
                    }
                    ex.fail(c.addr.to_string(), e);
                    group.failed = true;
                }
            }
            completed.push(n);
        }
        ex.commit(batch)?;
        completed.sort();
        completed.dedup();
        for n in completed {
            if pending
                .get(&n)
                .is_some_and(|gs| gs.iter().all(|g| g.left == 0))
            {
                let groups = pending.remove(&n).unwrap_or_default();
                let failed = groups.iter().any(|g| g.failed);
                let node = &graph.graph[n];
                for g in groups {
                    w.set(&g.prefix, &node.local_addr, g.keys.assemble(g.values));
                }
                done_nodes += 1;
                finish(n, failed, &mut ready, &mut blockers, &mut failed_nodes);
            }
        }
    }
    outputs(ex, Some(&w))?;
    if !diags.0.is_empty() {
        return Err(diags);
    }
    if ex.report.failed.is_empty() {
        ex.report.warnings =
            crate::plan::checks::run(req.root, &w, req.drivers, Some(check_settle()), &|_| false)
                .await;
    }
    // Deposed objects of failed replacements stay deposed: the next plan
    // deletes them.
    Ok(deposed_out
        .into_iter()
        .filter(|(c, _)| !ex.broken.contains(&c.addr.to_string()))
        .collect())
}

/// Why an instance may not go on: the first of its preconditions (or,
/// given the object made, postconditions) that fails, as "summary: message".
fn unmet(
    w: &Walk,
    (node, prefix, ctx): (&crate::graph::Node, &str, &crate::plan::walk::InstanceCtx),
    made: Option<&Value>,
    r: &crate::config::Resource,
) -> Option<String> {
    let (conds, kind) = match made {
        Some(_) => (&r.lifecycle.postconditions, Kind::Postcondition),
        None => (&r.lifecycle.preconditions, Kind::Precondition),
    };
    if conds.is_empty() {
        return None;
    }
    let judge = |ev: &mut crate::eval::Evaluator| judge_all(ev, conds, kind);
    let judged = match made {
        Some(v) => w.eval_self(node, prefix, Some(ctx), v.clone(), judge),
        None => w.eval_with(node, prefix, Some(ctx), judge),
    };
    let (errors, _) = judged?;
    errors
        .first()
        .map(|e| format!("{}: {}", e.summary, e.detail))
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
    ex.commit(batch)
}
