//! Making a plan: decode and refresh the prior state, apply `moved`, walk
//! the graph asking each resource's driver what would change, then delete
//! what the configuration no longer has.

use super::diff::{self, Decision};
use super::instance::{plan_instance, InstanceRequest, PlannedInstance, Prior};
use super::refresh::{self, PriorInstance};
use super::window::{Opened, Window};
use super::{import, moved, Action, Failed, OutputChange, Plan, Reason, ResourceChange};
use crate::builtin::Drivers;
use crate::config::condition::{judge_all, Kind};
use crate::config::{Module, Resource, Run};
use crate::cost::{estimate, Cost, Item};
use crate::diag::{Diag, Diags};
use crate::graph::{Destroying, Graph, NodeKind, Scope};
use crate::lang::json::value_from_json;
use crate::lang::value::Value;
use crate::syntax::ast::{Expr, ExprKind};
use crate::walk::decode;
use crate::walk::{EphemeralSaid, Ephemerals, InstanceCtx, Resolution, ResourceInstances, Walk};
use petgraph::graph::NodeIndex;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use strata_provider::catalog::PriceList;
use strata_provider::Kept;
use strata_provider::{Driver, ResourceSchema};
use strata_state::model::{Address, InstanceKey, Mode, ModulePath, ResourceAddr, State};

pub struct Request<'a> {
    pub root: &'a Module,
    pub graph: &'a Graph,
    pub drivers: &'a Drivers,
    /// The root module's variables, resolved.
    pub vars: BTreeMap<String, Value>,
    pub run: Rc<Run>,
    pub state: &'a State,
    pub refresh: Refresh<'a>,
    /// `-destroy`, `-refresh-only`, or neither.
    pub mode: super::Mode,
    /// Looks at evaluated values once the walk is done (the cluster
    /// portability check): given a reader of `(module instance, local
    /// address)`, returns problems that fail the plan.
    pub inspect: Option<Inspect<'a>>,
    /// The user's prices, over the drivers' catalogs.
    pub prices: &'a PriceList,
    /// What the run does with the plan.
    pub purpose: Purpose,
    /// `-target` or `-exclude`: the graph is already narrowed to it (for a
    /// destroy it is not: what goes is worked out over the whole graph).
    pub scope: &'a Scope,
    /// `-replace`: instances replaced whatever their attributes say.
    pub replace: &'a [Address],
    /// How many driver calls a refresh makes at once (`-parallelism`).
    pub parallelism: usize,
}

/// What a run does with the plan it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Shown, and no more.
    Shown,
    /// Shown as JSON or saved: the plan describes the configuration
    /// (`Plan::configuration`), as Terraform's plan JSON and saved plans
    /// do; a plan only shown or applied has no use for it.
    Described,
    /// Applied in the same run: the provider processes that planned a
    /// change are kept for the apply rather than started again.
    Applied,
}

/// See [`Request::inspect`].
pub type Inspect<'a> = &'a dyn Fn(&dyn Fn(&ModulePath, &str) -> Option<Value>) -> Diags;

/// Config resources by `module.m.t.n`, to find a deleted instance's block.
fn config_resources<'a>(
    m: &'a Module,
    path: &ModulePath,
    out: &mut HashMap<ResourceAddr, &'a Resource>,
) {
    for r in &m.resources {
        out.insert(r.addr_in(path), r);
    }
    for c in &m.module_calls {
        config_resources(&c.module, &path.child(&c.name, None), out);
    }
}

/// Whether the walk expanded the module instance at `path`.
fn expanded(walk: &Walk<'_>, path: &ModulePath) -> bool {
    let config = path
        .steps()
        .iter()
        .fold(ModulePath::root(), |m, s| m.child(&s.call, None));
    walk.module_instances(&config).contains(path)
}

fn prevent_destroy(r: &Resource, addr: &Address) -> Diag {
    Diag::new(
        "strata::plan::prevent_destroy",
        "Instance cannot be destroyed",
        format!("Resource {addr} has lifecycle.prevent_destroy set, but the plan calls for this resource to be destroyed. To avoid this error and continue with the plan, either disable lifecycle.prevent_destroy or change the configuration so the resource is no longer destroyed."),
    )
    .at(r.span)
}

/// The instances a plan forgets because `lifecycle { destroy = false }`
/// keeps them: what stays in the cloud, unmanaged, named once.
fn kept_warning(changes: &[ResourceChange]) -> Option<Diag> {
    let kept: Vec<String> = changes
        .iter()
        .filter(|c| {
            c.action == Action::CreateThenForget || c.action == Action::Forget && c.skip_destroy
        })
        .map(|c| format!("  - {}", c.addr))
        .collect();
    if kept.is_empty() {
        return None;
    }
    Some(
        Diag::new(
            "strata::plan::destroy_false",
            "Objects will be forgotten, not destroyed",
            format!(
                "lifecycle.destroy is false for these, so strata removes them from the state and leaves them in the cloud:\n{}\n`strata import` takes one back.",
                kept.join("\n")
            ),
        )
        .warning(),
    )
}

/// The `removed` block naming this address (or a module holding it).
fn removed_rule<'a>(root: &'a Module, addr: &Address) -> Option<&'a crate::config::Removed> {
    root.removed.iter().find(|r| {
        let Some(from) = moved::text(&r.from) else {
            return false;
        };
        match (Address::parse(&from), ModulePath::parse(&from)) {
            (Some(a), _) => a.id == addr.id && (a.key.is_none() || a.key == addr.key),
            // A module's removal covers every instance of it.
            (None, Some(m)) => !m.is_root() && addr.id.module.without_keys().starts_with(&m),
            (None, None) => false,
        }
    })
}

/// Which prior objects a plan reads back through their drivers first.
#[derive(Clone, Copy)]
pub enum Refresh<'a> {
    /// None: the state as stored (`-refresh=false`).
    Nothing,
    Everything,
    /// Only these (`-minimal-refresh`'s second plan: the instances its
    /// first plan, made without reading, would change).
    Only(&'a HashSet<Address>),
}

impl Refresh<'_> {
    fn reads(self) -> bool {
        !matches!(self, Refresh::Nothing)
    }

    /// Whether `a` is left as stored.
    fn skips(self, a: &Address) -> bool {
        match self {
            Refresh::Nothing => true,
            Refresh::Everything => false,
            Refresh::Only(these) => !these.contains(a),
        }
    }
}

/// The plan of `req`; when the walk meets errors, they come with the
/// part it had planned (`Failed::partial`), for the CLI to show.
pub fn plan(req: Request<'_>, rt: &tokio::runtime::Runtime) -> Result<Plan, Failed> {
    let retyped = moved::retyped(req.root);
    let walk = Walk::new(req.root, req.graph, req.vars.clone(), req.run.clone())
        .doubled(req.drivers.doubles());
    let (order, mut window) = windowed(&req, &walk, rt);
    let later = window.as_ref().map(Window::addresses).unwrap_or_default();
    let read = (Mode::Managed, refresh::Upgrade::AlwaysBut(&later));
    let mut prior = refresh::decode_state(req.state, req.drivers, read, &retyped)?;
    crate::timings::stage("decoded");
    let moves = moved::apply(req.root, &mut prior)?;
    moved::retype(req.root, &mut prior, &moves, req.drivers)?;
    let mut configs = HashMap::new();
    config_resources(req.root, &ModulePath::root(), &mut configs);
    let coverage = Coverage::new(&req, &configs);
    provider_instances(&req, &prior, &coverage)?;
    let (now, drift) = read_back(&req, prior, &coverage, window.as_mut(), rt)?;
    prior = now;
    let said = Arc::new(Mutex::new(Vec::new()));
    let mut p = Planner {
        req: &req,
        prior: HashMap::with_capacity(prior.len()),
        deposed: Vec::new(),
        unserved: HashSet::new(),
        // A plan has a change for each prior object, or more: its
        // vector sized once, not doubled (and copied) a dozen times.
        changes: Vec::with_capacity(prior.len()),
        by_addr: ChangeIndex::with_capacity(prior.len()),
        claims: Claims::with_capacity(prior.len()),
        moves,
        changing: HashSet::new(),
        imported: HashMap::new(),
        module_imports: HashMap::new(),
        diags: Diags::default(),
        configs,
        rt,
        late_drift: Vec::new(),
        coverage,
        untouched: Vec::new(),
        ephemerals: Ephemerals::new(rt.handle().clone(), told(&said)),
        actions: Vec::new(),
    };
    p.removed_still_configured();
    import_root(&req, &mut p, &mut prior, rt)?;
    for i in prior {
        if i.deposed.is_some() {
            p.deposed.push(i);
        } else {
            p.prior.insert(i.addr.clone(), Box::new(i));
        }
    }
    crate::timings::stage("refreshed");
    p.walk(&walk, &order, window)?;
    p.close_ephemerals();
    crate::timings::stage("walked");
    let outputs = p.outputs(&walk);
    let mut warnings = p.checks(&walk);
    warnings.extend(super::scope_warning(req.scope));
    warnings.extend(unmatched_replacements(req.replace, &p.changes));
    warnings.extend(super::lasting::warning(&p.changes, req.drivers));
    warnings.extend(kept_warning(&p.changes));
    let Planner {
        changes,
        diags,
        late_drift,
        untouched,
        actions,
        ..
    } = p;
    let mut drift = drift;
    drift.extend(late_drift);
    let ephemeral = std::mem::take(&mut *said.lock().unwrap_or_else(|p| p.into_inner()));
    let plan = assemble(
        &req,
        Planned {
            changes,
            drift,
            outputs,
            warnings,
            untouched,
            ephemeral,
            actions,
        },
    );
    match diags.is_empty() {
        true => Ok(plan),
        false => Err(Failed {
            diags,
            partial: Some(Box::new(Plan {
                errored: true,
                ..plan
            })),
        }),
    }
}

/// Every object the plan covers has the provider instance it was made
/// with (one of a provider configuration's `for_each` elements), unless a
/// `removed` block forgets it.
fn provider_instances(
    req: &Request<'_>,
    prior: &[PriorInstance],
    coverage: &Coverage<'_>,
) -> Result<(), Failed> {
    let forgotten = |a: &Address| removed_rule(req.root, a).is_some_and(|r| !r.destroy);
    let mut diags = Diags::default();
    for p in prior
        .iter()
        .filter(|p| coverage.covers(&p.addr) && !forgotten(&p.addr))
    {
        if let Some(d) = crate::walk::missing_instance(req.root, req.drivers, &p.addr, &p.provider)
        {
            diags.push(d);
        }
    }
    diags.into_result(()).map_err(|diags| Failed {
        diags,
        partial: None,
    })
}

/// The prior objects read back from the clouds, and what changed outside
/// strata. What a `removed` block forgets is not read: its provider may be
/// gone with it (a cluster's objects, when the cluster goes). Nor is what
/// the plan's scope leaves alone.
/// Nothing when the plan reads nothing. The objects of the
/// configurations the walk opens are upgraded and read then ([`Window`]).
fn read_back(
    req: &Request<'_>,
    prior: Vec<PriorInstance>,
    coverage: &Coverage<'_>,
    window: Option<&mut Window>,
    rt: &tokio::runtime::Runtime,
) -> Result<(Vec<PriorInstance>, Vec<ResourceChange>), Failed> {
    let unread = Unread::of(req, coverage);
    let reads = |a: &Address| !unread.skips(a);
    let reading = req.refresh.reads();
    let later = window
        .map(|w| {
            w.take(
                &prior,
                reading.then_some(&reads as &dyn Fn(&Address) -> bool),
            )
        })
        .unwrap_or_default();
    if !reading {
        return Ok((prior, Vec::new()));
    }
    let skip = |a: &Address| unread.skips(a) || later.contains(a);
    Ok(rt.block_on(refresh::refresh(prior, req.drivers, req.parallelism, &skip))?)
}

/// What the refresh leaves as stored; only what can be shared with its
/// threads.
struct Unread<'r> {
    refresh: Refresh<'r>,
    drivers: &'r Drivers,
    root: &'r Module,
    destroying: bool,
    coverage: &'r Coverage<'r>,
}

impl<'r> Unread<'r> {
    fn of(req: &Request<'r>, coverage: &'r Coverage<'r>) -> Unread<'r> {
        Unread {
            refresh: req.refresh,
            drivers: req.drivers,
            root: req.root,
            destroying: req.mode.is_destroy(),
            coverage,
        }
    }

    fn skips(&self, a: &Address) -> bool {
        !self.coverage.covers(a)
            || self.refresh.skips(a)
            || self.drivers.stood_in(a)
            || (!self.destroying && removed_rule(self.root, a).is_some_and(|r| !r.destroy))
    }
}

/// The provider configurations the walk opens and releases as it goes
/// ([`Window`]): none for a destroy (it deletes after the walk) or a
/// refresh-only plan (the refresh is all it does).
/// The walk's order comes with it.
fn windowed(
    req: &Request<'_>,
    walk: &Walk<'_>,
    rt: &tokio::runtime::Runtime,
) -> (Vec<NodeIndex>, Option<Window>) {
    let order = walk.order();
    if req.mode.is_destroy() || req.mode.is_refresh_only() {
        return (order, None);
    }
    let at = (req.root, req.graph, walk);
    let lifetimes = crate::walk::Lifetimes::new(at, req.drivers, &order, &|_| false);
    let window = Window::new(lifetimes, req.drivers, rt.handle().clone(), req.parallelism);
    (order, Some(window))
}

/// What the walk made, for [`assemble`].
struct Planned {
    changes: Vec<ResourceChange>,
    drift: Vec<ResourceChange>,
    outputs: Vec<OutputChange>,
    warnings: Vec<Diag>,
    untouched: Vec<ResourceChange>,
    ephemeral: Vec<EphemeralSaid>,
    actions: Vec<super::ActionInvocation>,
}

/// Where a plan's ephemeral steps go: kept, to be shown with the plan.
fn told(said: &Arc<Mutex<Vec<EphemeralSaid>>>) -> crate::walk::Tell {
    let said = said.clone();
    Box::new(move |s| said.lock().unwrap_or_else(|p| p.into_inner()).push(s))
}

/// The plan of what the walk made: changes in order, their schemas,
/// prices and the attributes they refer to.
fn assemble(req: &Request<'_>, made: Planned) -> Plan {
    let Planned {
        mut changes,
        drift,
        outputs,
        warnings,
        untouched,
        ephemeral,
        actions,
    } = made;
    super::order::sort_in_order(&mut changes);
    let schemas = super::Schemas::gather(changes.iter().chain(&drift), req.drivers);
    let timestamp = crate::funcs::plan_timestamp().to_string();
    let cost = price(&changes, req.drivers, req.prices, &timestamp);
    let relevant_attributes = super::relevant::relevant(req.root, &changes, &outputs);
    Plan {
        relevant_attributes,
        lineage: req.state.lineage.clone(),
        serial: req.state.serial,
        mode: req.mode,
        changes,
        drift,
        outputs,
        actions,
        variables: req.vars.clone(),
        configuration: match req.purpose == Purpose::Described {
            true => crate::config::json::configuration(req.root, &|mode, type_name| {
                let found = req.drivers.of_mode(mode, type_name);
                found.map(|(_, schema)| schema)
            }),
            false => serde_json::Value::Null,
        },
        warnings,
        timestamp,
        schemas,
        cost,
        placements: Vec::new(),
        dispatch: Vec::new(),
        plugin_served: Vec::new(),
        scope: req.scope.clone(),
        read_only: match req.refresh {
            Refresh::Only(these) => Some(these.iter().cloned().collect()),
            _ => None,
        },
        untouched,
        generated_config: BTreeMap::new(),
        ephemeral,
        errored: false,
    }
}

/// Terraform's warning for a `-replace` of a resource with several
/// instances, which names none of them.
fn unmatched_replacements(replace: &[Address], changes: &[ResourceChange]) -> Vec<Diag> {
    let mut out = Vec::new();
    for r in replace.iter().filter(|r| r.key.is_none()) {
        let keyed: Vec<String> = changes
            .iter()
            .filter(|c| c.addr.id == r.id && c.addr.key.is_some() && c.deposed.is_none())
            .map(|c| format!("  -replace={:?}", c.addr.to_string()))
            .collect();
        if !keyed.is_empty() {
            out.push(Diag::new(
                "strata::plan::replace",
                "Incompletely-matched force-replace resource instance",
                format!("Your force-replace request for {r} doesn't match any resource instances because it lacks an instance key.\n\nTo force replacement of particular instances, use one or more of the following options instead:\n{}", keyed.join("\n")),
            ).warning());
        }
    }
    out
}

/// Which instances a plan covers: those in its scope (`-target`,
/// `-exclude`; for a destroy, what goes with them), each asked once.
struct Coverage<'a> {
    scope: &'a Scope,
    /// The configuration's resources left in the (narrowed) graph.
    in_graph: HashSet<ResourceAddr>,
    /// The configuration's resources, narrowed or not.
    configured: HashSet<ResourceAddr>,
    /// For a destroy: what the scope deletes.
    destroying: Option<Destroying<'a>>,
}

impl<'a> Coverage<'a> {
    fn new(req: &Request<'a>, configs: &HashMap<ResourceAddr, &Resource>) -> Coverage<'a> {
        let g = &req.graph.graph;
        Coverage {
            scope: req.scope,
            in_graph: g
                .node_weights()
                .filter_map(|n| n.resource_addr().cloned())
                .collect(),
            configured: configs.keys().cloned().collect(),
            destroying: req
                .mode
                .is_destroy()
                .then(|| req.scope.destroying(req.graph)),
        }
    }

    fn covers(&self, addr: &Address) -> bool {
        if self.scope.is_everything() {
            return true;
        }
        if let Some(d) = &self.destroying {
            return d.destroys(addr);
        }
        let config = addr.id.config();
        self.scope.plans(
            addr,
            self.in_graph.contains(&config),
            self.configured.contains(&config),
        )
    }
}

/// What the planned objects cost, against what they cost before.
fn price(
    changes: &[ResourceChange],
    drivers: &Drivers,
    prices: &PriceList,
    timestamp: &str,
) -> Cost {
    let items: Vec<Item<'_>> = changes
        .iter()
        .filter(|c| c.addr.id.mode == Mode::Managed && c.deposed.is_none())
        .map(|c| Item {
            addr: &c.addr,
            provider: &c.provider,
            before: c.before.as_ref(),
            after: c.after.as_ref(),
            dependencies: &c.dependencies,
        })
        .collect();
    let today = timestamp.get(..10).unwrap_or(timestamp);
    estimate(&items, drivers, prices, today)
}

/// A data source read during the apply, as planned: its configuration,
/// what it computes unknown.
fn read_later(config: &Value, schema: &ResourceSchema) -> Value {
    let mut planned = config.unmarked().entries().cloned().unwrap_or_default();
    for (k, a) in &schema.attributes {
        if a.computed && planned.get(k).is_none_or(Value::is_null) {
            planned.insert(k.clone(), Value::Unknown(a.ty.clone()));
        }
    }
    Value::Object(planned)
}

/// One instance of a resource being planned: where in the walk it is.
struct OneInstance<'w, 'a> {
    walk: &'w Walk<'a>,
    n: NodeIndex,
    r: &'a Resource,
    ri: &'w ResourceInstances,
    ctx: &'w InstanceCtx,
    /// Its driver, under the provider configuration (instance) it uses.
    driver: &'w Configured,
}

impl<'w, 'a> OneInstance<'w, 'a> {
    /// Where its conditions are judged.
    fn at(&self, graph: &'w Graph) -> At<'w, 'a> {
        At {
            graph,
            walk: self.walk,
            n: self.n,
            ri: self.ri,
            ctx: self.ctx,
        }
    }
}

/// One instance being planned, to judge its conditions.
struct At<'x, 'w> {
    graph: &'x Graph,
    walk: &'x Walk<'w>,
    n: NodeIndex,
    ri: &'x ResourceInstances,
    ctx: &'x InstanceCtx,
}

impl At<'_, '_> {
    /// Judges the instance's preconditions, or its postconditions on
    /// `object`; true (and reported) when one fails. Those not known yet
    /// are judged again by the apply.
    fn unmet(&self, diags: &mut Diags, r: &Resource, kind: Kind, object: Option<&Value>) -> bool {
        let conds = match kind {
            Kind::Postcondition => &r.lifecycle.postconditions,
            _ => &r.lifecycle.preconditions,
        };
        if conds.is_empty() {
            return false;
        }
        let node = &self.graph.graph[self.n];
        let judge = |ev: &mut crate::eval::Evaluator| judge_all(ev, conds, kind);
        let (module, ctx) = (self.ri.module(), Some(self.ctx));
        let judged = match object {
            Some(o) => self.walk.eval_self(node, module, ctx, o.clone(), judge),
            None => self.walk.eval_with(node, module, ctx, judge),
        };
        let errors = judged.unwrap_or_default().0;
        let any = !errors.is_empty();
        // Said for each instance, as Terraform says it, even when the
        // words are the same.
        diags.0.extend(errors);
        any
    }
}

use super::index::{ChangeIndex, Claims};
/// Instance address → cloud id and the `import` block that adopts it.
use import::Imported;

/// A no-op's planned object is the prior one, shared: the driver's copy,
/// equal to it marks and all, would double what a no-change plan holds
/// (and keep the evaluated configuration it was made from alive).
fn kept_when_unchanged(
    planned: strata_provider::Planned,
    action: Action,
    prior: Option<&Value>,
) -> strata_provider::Planned {
    match prior {
        Some(p) if action == Action::NoOp && planned.planned.raw_equal(p) => {
            strata_provider::Planned {
                planned: p.clone(),
                ..planned
            }
        }
        _ => planned,
    }
}

/// A resource's driver instance under its provider configuration, and
/// that configuration's address.
pub struct Configured {
    pub driver: Arc<dyn Driver>,
    pub provider: String,
}

impl std::ops::Deref for Configured {
    type Target = dyn Driver;
    fn deref(&self) -> &(dyn Driver + 'static) {
        self.driver.as_ref()
    }
}

struct Planner<'r, 'a> {
    req: &'r Request<'a>,
    /// Boxed: the table is sized to a power of two above the count, and
    /// an instance is hundreds of bytes.
    prior: HashMap<Address, Box<PriorInstance>>,
    deposed: Vec<PriorInstance>,
    /// Types no driver serves, each reported once.
    unserved: HashSet<String>,
    changes: Vec<ResourceChange>,
    /// Every change but a deposed object's, by its address, for
    /// replace_triggered_by.
    by_addr: ChangeIndex,
    /// The declared instances met: what an import, a move or a prior
    /// object without one is judged against.
    claims: Claims,
    moves: HashMap<Address, Address>,
    /// Config addresses (`module.m.t.n`) with a planned change.
    changing: HashSet<ResourceAddr>,
    /// Instance address → cloud id and the `import` block, for objects
    /// import blocks adopt.
    imported: Imported,
    /// What a child module instance's import blocks name, by the instance
    /// and the resource, once its first instance is planned.
    module_imports: HashMap<(ModulePath, String), Vec<import::Target>>,
    diags: Diags,
    configs: HashMap<ResourceAddr, &'a Resource>,
    rt: &'r tokio::runtime::Runtime,
    /// What the refresh of a deferred provider configuration's objects
    /// found changed outside strata.
    late_drift: Vec<ResourceChange>,
    coverage: Coverage<'a>,
    /// See [`Plan::untouched`].
    untouched: Vec<ResourceChange>,
    /// The ephemeral resources the walk opened, closed when it ends.
    ephemerals: Ephemerals,
    /// What resources' `action_trigger` blocks invoke.
    actions: Vec<super::ActionInvocation>,
}

impl<'a> Planner<'_, 'a> {
    /// Walks the graph: each resource and data source planned, every
    /// other node evaluated; then what the walk can judge only whole
    /// (imports without configuration, moves from what is still
    /// declared, orphans, the cluster spec's own checks).
    /// Interrupted, it stops at the next node: nothing is planned.
    fn walk(
        &mut self,
        walk: &Walk<'a>,
        order: &[NodeIndex],
        mut window: Option<Window>,
    ) -> Result<(), Failed> {
        let mut closing = crate::walk::Closing::new(self.req.graph, self.req.root);
        for (at, &n) in order.iter().enumerate() {
            if crate::interrupt::requested() {
                return Err(self.halted());
            }
            for opened in window.iter_mut().flat_map(|w| w.before(at)) {
                self.opened(opened);
            }
            let changing = self.changing.len();
            self.node(walk, n);
            for config in closing.finished(n) {
                for f in self.ephemerals.close_of(&config) {
                    self.diags.push(crate::walk::close_failed(&f));
                }
            }
            if let Some(w) = window.as_mut() {
                if self.req.purpose == Purpose::Applied && self.changing.len() > changing {
                    w.keep(n);
                }
                w.after(at);
            }
        }
        self.after_walk(walk);
        Ok(())
    }

    /// The walk's end when the run is interrupted: what it said, the
    /// interrupt once, and no part of a plan.
    fn halted(&mut self) -> Failed {
        let mut diags = std::mem::take(&mut self.diags);
        diags.0.retain(|d| d.code != "strata::interrupted");
        diags.push(Diag::new(
            "strata::interrupted",
            crate::interrupt::HALTED,
            "Interrupted before every resource was planned: nothing was planned.",
        ));
        Failed {
            diags,
            partial: None,
        }
    }

    /// A configuration the window opened: its refusal told, its objects
    /// as read back replacing the state's (one gone outside strata is
    /// gone from the plan's prior objects too).
    fn opened(&mut self, opened: Opened) {
        self.diags.0.extend(opened.refused);
        let Some((addrs, read)) = opened.read else {
            return;
        };
        match read {
            Ok((now, drift)) => {
                for a in &addrs {
                    self.prior.remove(a);
                }
                for p in now {
                    self.prior.insert(p.addr.clone(), Box::new(p));
                }
                self.late_drift.extend(drift);
            }
            Err(d) => self.diags.0.extend(d.0),
        }
    }

    /// One node of the walk: planned, read, opened or evaluated.
    fn node(&mut self, walk: &Walk<'a>, n: NodeIndex) {
        match (self.req.graph.graph[n].kind, self.req.mode.is_destroy()) {
            (NodeKind::Resource, false) => self.resource(walk, n),
            // A destroy reads data sources as a plan does (Terraform's
            // destroy refreshes first), so what configures a provider
            // from one has it.
            (NodeKind::Data, _) => self.data(walk, n, self.rt),
            // Opened in a destroy too: a provider configuration may be
            // made of it (a cluster's token).
            (NodeKind::Ephemeral, _) => self.ephemeral(walk, n),
            // A destroy evaluates what provider configurations read (a
            // cluster's endpoint through its module's outputs) from the
            // objects as they are, as Terraform does: the cluster exists
            // until after what is inside it is deleted.
            // An output that cannot be evaluated so only leaves the
            // configurations that read it unconfigured, which the delete
            // of what they serve then reports.
            (NodeKind::Resource, true) => self.prior_values(walk, n),
            (NodeKind::Output, true) if !self.req.graph.graph[n].module.is_root() => {
                walk.visit(n, &mut Diags::default())
            }
            // A destroy plans no resource, but as in Terraform the
            // variables of every module are still given their values and
            // judged by their validations.
            (NodeKind::Variable | NodeKind::Local | NodeKind::ModuleCall, true) | (_, false) => {
                walk.visit(n, &mut self.diags)
            }
            _ => {}
        }
    }

    /// What the walk can judge only whole: imports without configuration,
    /// moves from what is still declared, orphans, the cluster spec's own
    /// checks.
    fn after_walk(&mut self, walk: &Walk<'a>) {
        let (claims, changes) = (&self.claims, &self.changes);
        for (addr, (id, span)) in self
            .imported
            .iter()
            .filter(|(a, _)| !claims.contains(changes, a))
        {
            self.diags.push(
                Diag::new(
                    "strata::plan::import_target",
                    "Configuration for import target does not exist",
                    format!("The configuration for the given import target {addr} (id {id:?}) does not exist. If you wish to automatically generate config for this resource, use the -generate-config-out option within strata plan. Otherwise, make sure the target resource exists within your configuration. For example:\n\n  strata plan -generate-config-out=generated.tf"),
                )
                .at(*span),
            );
        }
        let module_instance = |path: &ModulePath| expanded(walk, path);
        for d in moved::instances_still_declared(
            self.req.root,
            &|a| self.claims.contains(&self.changes, a),
            &module_instance,
        ) {
            self.diags.push(d);
        }
        if self.req.mode.is_destroy() {
            self.configure_for_destroy(walk);
        }
        self.orphans(walk);
        let whole = self.req.scope.is_everything() && !self.req.mode.is_refresh_only();
        if let (Some(inspect), false, true) = (self.req.inspect, self.req.mode.is_destroy(), whole)
        {
            let found = inspect(&|module: &ModulePath, local: &str| walk.get(module, local));
            self.diags.0.extend(found.0);
        }
    }

    /// The configuration's checks, as warnings. They judge the whole
    /// configuration: a plan of part of it cannot.
    fn checks(&self, walk: &Walk<'a>) -> Vec<Diag> {
        let whole = self.req.scope.is_everything() && !self.req.mode.is_refresh_only();
        if self.req.mode.is_destroy() || !whole {
            Vec::new()
        } else {
            let graph = self.req.graph;
            let index: HashMap<ResourceAddr, NodeIndex> = graph
                .graph
                .node_indices()
                .filter_map(|i| Some((graph.graph[i].resource_addr()?.clone(), i)))
                .collect();
            let changing = &self.changing;
            let pending = |addr: &ResourceAddr| {
                index.get(addr).is_some_and(|&n| {
                    graph.resource_deps(n).iter().any(|d| {
                        graph.graph[*d]
                            .resource_addr()
                            .is_some_and(|a| changing.contains(a))
                    })
                })
            };
            self.rt.block_on(crate::walk::run_checks(
                self.req.root,
                walk,
                self.req.drivers,
                None,
                &pending,
            ))
        }
    }

    fn push(&mut self, c: ResourceChange) {
        let deposed = c.deposed.is_some();
        if c.action != Action::NoOp {
            self.changing.insert(c.config_addr());
        }
        self.changes.push(c);
        if !deposed {
            self.by_addr.insert(&self.changes, self.changes.len() - 1);
        }
    }

    /// A declared instance's change: the address it claimed is found
    /// through the change from now on, not held a second time. Its prior
    /// object is the change's `before` now: what else the walk kept of it
    /// goes (a no-change plan of 10 000 objects held every prior twice
    /// until its end).
    fn push_claimed(&mut self, c: ResourceChange) {
        self.prior.remove(&c.addr);
        self.push(c);
        self.claims.planned(&self.changes, self.changes.len() - 1);
    }

    /// A data source: read now when its configuration is known and nothing
    /// it depends on changes; otherwise planned as a read during apply.
    fn data(&mut self, walk: &Walk<'a>, n: NodeIndex, rt: &tokio::runtime::Runtime) {
        let Some((r, provider, schema, deps)) = self.prologue(walk, n) else {
            return;
        };
        let node = &self.req.graph.graph[n];
        // A check's data sources are read with its assertions, not planned.
        if r.check.is_some() {
            for ri in walk.expand(n, &mut self.diags) {
                let unknown = Value::Unknown(schema.object_type());
                walk.set(ri.module(), &node.local_addr, unknown);
            }
            return;
        }
        // Read during apply when a change to what it waits for is planned
        // (Terraform's rule: not every change upstream, see
        // `graph::read_waits`), or its provider is configured only then.
        let pending = node.read_waits().iter().any(|d| self.changing.contains(d));
        self.instances(walk, (n, r), (&provider, schema), |me, one| {
            let pending = pending || me.req.drivers.deferred(&one.driver.provider).is_some();
            me.data_instance(one, schema, (&deps, pending), rt)
        });
    }

    /// One instance of a data source: read now when its configuration is
    /// known and nothing it waits for changes, else planned to be read
    /// during the apply; the value dependents see (`None`: unknown).
    fn data_instance(
        &mut self,
        one: &OneInstance<'_, 'a>,
        schema: &'a ResourceSchema,
        (deps, pending): (&[ResourceAddr], bool),
        rt: &tokio::runtime::Runtime,
    ) -> Option<Value> {
        let (walk, n, r, ri, ctx) = (one.walk, one.n, one.r, one.ri, one.ctx);
        let driver = one.driver;
        let addr = ri.address(ctx.key.clone());
        if !self.coverage.covers(&addr) {
            return Some(self.leave_alone(addr, schema, &driver.provider));
        }
        let checked = &*driver.driver;
        let config = self.config_of(walk, n, r, (checked, schema), (ri, ctx))?;
        let at = one.at(self.req.graph);
        if at.unmet(&mut self.diags, r, Kind::Precondition, None) {
            return None;
        }
        let reader = self.req.drivers.at(&addr, &driver.driver);
        let (action, reason, after) = match !pending && config.is_wholly_known() {
            true => match rt.block_on(reader.read_data(&r.type_name, &config)) {
                Ok(v) if at.unmet(&mut self.diags, r, Kind::Postcondition, Some(&v)) => {
                    return None;
                }
                Ok(v) => (Action::NoOp, None, v),
                Err(e) => {
                    let summary = format!("Reading {addr} failed");
                    let d = Diag::new("strata::driver::read_data", summary, e.to_string());
                    self.diags.push(d.at(r.span));
                    return None;
                }
            },
            false => {
                let reason = match config.is_wholly_known() {
                    true => Reason::ReadDependencyPending,
                    false => Reason::ReadConfigUnknown,
                };
                (Action::Read, Some(reason), read_later(&config, schema))
            }
        };
        self.push(ResourceChange {
            addr,
            deposed: None,
            tainted: false,
            previous_addr: None,
            provider: driver.provider.clone(),
            action,
            reason,
            before: None,
            after: Some(after.clone()),
            replace_paths: Vec::new(),
            schema_version: schema.version,
            kept_before: Kept::default(),
            kept_after: Kept::default(),
            dependencies: deps.to_vec(),
            create_before_destroy: false,
            skip_destroy: false,
            importing: None,
        });
        Some(after)
    }

    fn ephemeral(&mut self, walk: &Walk<'a>, n: NodeIndex) {
        let Some((r, provider, schema, _)) = self.prologue(walk, n) else {
            return;
        };
        self.instances(walk, (n, r), (&provider, schema), |me, one| {
            me.ephemeral_instance(one, schema)
        });
    }

    /// One instance of an ephemeral resource opened, when its
    /// configuration is known; its object, which nothing keeps.
    fn ephemeral_instance(
        &mut self,
        one: &OneInstance<'_, 'a>,
        schema: &'a ResourceSchema,
    ) -> Option<Value> {
        let (walk, n, r, ri, ctx) = (one.walk, one.n, one.r, one.ri, one.ctx);
        let driver = one.driver;
        let addr = ri.address(ctx.key.clone());
        let config = self.config_of(walk, n, r, (&*driver.driver, schema), (ri, ctx))?;
        let at = one.at(self.req.graph);
        if at.unmet(&mut self.diags, r, Kind::Precondition, None) {
            return None;
        }
        let opener = self.req.drivers.at(&addr, &driver.driver);
        match self
            .ephemerals
            .open(&addr, (&r.type_name, &opener), &config)
        {
            Ok(Some(v)) if at.unmet(&mut self.diags, r, Kind::Postcondition, Some(&v)) => None,
            Ok(v) => v,
            Err(e) => {
                self.open_failed(r, &addr, &e);
                None
            }
        }
    }

    /// Closes what the walk opened; a close that fails is an error of the
    /// plan, as Terraform makes it.
    fn close_ephemerals(&mut self) {
        for f in self.ephemerals.close_all() {
            self.diags.push(crate::walk::close_failed(&f));
        }
    }

    /// A resource's instances as the prior state holds them, for a destroy
    /// (unknown where there is none).
    fn prior_values(&mut self, walk: &Walk<'a>, n: NodeIndex) {
        let node = &self.req.graph.graph[n];
        // What a destroy deletes is the state's instances: keys that cannot
        // be known now (made of objects a failed or killed destroy already
        // deleted) leave the values unknown rather than stop it, as
        // Terraform's destroy plans them.
        let mut expanding = Diags::default();
        let expanded = walk.expand(n, &mut expanding);
        let unknown_keys = [
            "strata::plan::for_each_unknown",
            "strata::plan::count_unknown",
        ];
        self.diags.0.extend(
            expanding
                .0
                .into_iter()
                .filter(|d| !unknown_keys.contains(&d.code)),
        );
        for ri in expanded {
            let values = ri
                .keys
                .instances()
                .into_iter()
                .map(|ctx| match self.prior.get(&ri.address(ctx.key)) {
                    Some(p) => p.value.clone(),
                    None => Value::unknown(),
                })
                .collect();
            walk.set(ri.module(), &node.local_addr, ri.keys.assemble(values));
        }
    }

    /// Configures, for a destroy, the deferred provider configurations of
    /// the objects to delete, from the prior objects the walk was given.
    fn configure_for_destroy(&mut self, walk: &Walk<'a>) {
        let mut providers: Vec<String> = self.prior.values().map(|p| p.provider.clone()).collect();
        providers.sort();
        providers.dedup();
        for provider in providers {
            if let Err(d) =
                crate::walk::configure_deferred(self.req.root, walk, self.req.drivers, &provider)
            {
                self.diags.push(d);
            }
        }
    }

    /// A provider configuration deferred for using resources' attributes:
    /// configured once the walk knows them (the cluster exists), and its
    /// objects refreshed then; left for the apply otherwise.
    fn configure_late(&mut self, walk: &Walk<'a>, provider: &str) {
        if self.req.drivers.deferred(provider).is_none() {
            return;
        }
        match crate::walk::configure_deferred(self.req.root, walk, self.req.drivers, provider) {
            Err(d) => self.diags.push(d),
            Ok(false) => {}
            Ok(true) if !self.req.refresh.reads() => {}
            Ok(true) => {
                let mine: Vec<Address> = self
                    .prior
                    .iter()
                    .filter(|(a, p)| p.provider == provider && !self.req.refresh.skips(a))
                    .filter(|(a, _)| !self.req.drivers.stood_in(a))
                    .map(|(a, _)| a.clone())
                    .collect();
                let objs: Vec<PriorInstance> = mine
                    .iter()
                    .filter_map(|a| self.prior.remove(a))
                    .map(|p| *p)
                    .collect();
                match self.rt.block_on(refresh::refresh(
                    objs,
                    self.req.drivers,
                    self.req.parallelism,
                    &|_| false,
                )) {
                    Ok((now, drift)) => {
                        for p in now {
                            self.prior.insert(p.addr.clone(), Box::new(p));
                        }
                        self.late_drift.extend(drift);
                    }
                    Err(d) => self.diags.0.extend(d.0),
                }
            }
        }
    }

    /// The block of a resource or data node, its provider configuration
    /// and schema, and the resources it depends on; `None` (reported)
    /// when no driver has the type.
    #[allow(clippy::type_complexity)]
    fn prologue(
        &mut self,
        walk: &Walk<'a>,
        n: NodeIndex,
    ) -> Option<(
        &'a Resource,
        Resolution<'a>,
        &'a ResourceSchema,
        Vec<ResourceAddr>,
    )> {
        let graph = self.req.graph;
        let node = &graph.graph[n];
        let r = walk.module(node)?.resources.get(node.index)?;
        let drivers: &'a Drivers = self.req.drivers;
        let found = drivers.of_mode(r.mode, &r.type_name);
        let found = found.and_then(|(base, schema)| {
            match crate::walk::resolve(self.req.root, &node.module, r, base.as_ref()) {
                Ok(provider) => {
                    if let Some(address) = provider.single() {
                        self.configure_late(walk, address);
                    }
                    Some((provider, schema))
                }
                Err(d) => {
                    self.diags.push(d);
                    None
                }
            }
        });
        let Some((provider, schema)) = found else {
            if self.unserved.insert(r.type_name.clone()) {
                let module = walk.module(node);
                let d = match drivers.unusable(&r.type_name, r.mode) {
                    Some(why) => unusable(r, why),
                    None => unserved(r, module),
                };
                self.diags.push(d.at(r.span));
            }
            for ri in walk.expand(n, &mut self.diags) {
                walk.set(ri.module(), &node.local_addr, Value::unknown());
            }
            return None;
        };
        let mut deps: Vec<ResourceAddr> = graph
            .resource_deps(n)
            .into_iter()
            .filter_map(|d| graph.graph[d].resource_addr().cloned())
            .collect();
        // In the order of their text, as Terraform writes them.
        deps.sort_by_cached_key(ToString::to_string);
        Some((r, provider, schema, deps))
    }

    /// The driver instance `(ri, ctx)` of `r` uses: its configuration's,
    /// or (OpenTofu's provider `for_each`) the instance its key chooses,
    /// configured now when it waited for the walk; `None` (reported)
    /// when the key is not usable.
    fn instance_driver(
        &mut self,
        walk: &Walk<'a>,
        (n, r): (NodeIndex, &Resource),
        (ri, ctx): (&ResourceInstances, &InstanceCtx),
        provider: &Resolution<'_>,
    ) -> Option<Configured> {
        let node = &self.req.graph.graph[n];
        let what = || ri.address(ctx.key.clone()).to_string();
        let at = (&node.module, ri.module(), Some(ctx));
        let address = match provider.instance(walk, at, self.req.drivers, &what) {
            Ok(a) => a,
            Err(d) => {
                self.diags.push(d);
                return None;
            }
        };
        if provider.single().is_none() {
            self.configure_late(walk, &address);
        }
        let (driver, _) = self
            .req
            .drivers
            .configured(&r.type_name, &address, r.mode)?;
        if let Err(refused) = self.req.drivers.ready(&driver, &address) {
            self.diags.0.extend(refused);
            return None;
        }
        Some(Configured {
            driver,
            provider: address,
        })
    }

    /// One instance's configuration decoded against its schema; `None`
    /// (reported) when it does not fit.
    /// An instance's configuration decoded by its schema and checked by
    /// its driver (as its mode's type); `None` when either found a
    /// problem, which is reported.
    fn config_of(
        &mut self,
        walk: &Walk,
        n: NodeIndex,
        r: &Resource,
        (driver, schema): (&dyn Driver, &ResourceSchema),
        (ri, ctx): (&ResourceInstances, &InstanceCtx),
    ) -> Option<Value> {
        let node = &self.req.graph.graph[n];
        let mut d = Diags::default();
        let config = walk
            .eval_with(node, ri.module(), Some(ctx), |ev| {
                decode(&r.body, schema, ev, r.span, &mut d)
            })
            .unwrap_or_else(Value::unknown);
        if !d.0.is_empty() {
            self.diags.0.extend(d.0);
            return None;
        }
        let mode = crate::builtin::type_mode(r.mode);
        let problems = match driver.validate(&r.type_name, mode, &config) {
            Ok(p) => p,
            Err(e) => {
                self.diags.push(crate::walk::validate_failed(r, &e));
                return None;
            }
        };
        let failed = problems.iter().any(|p| p.error);
        for d in crate::walk::provider_problems(&problems, r) {
            self.diags.push(d);
        }
        (!failed).then_some(config)
    }

    /// A driver's refusal to open `addr`, said as a refusal to plan is.
    fn open_failed(&mut self, r: &Resource, addr: &Address, e: &strata_provider::DriverError) {
        self.plan_failed_as(r, addr, e, "Opening");
    }

    /// A driver's refusal to plan `addr`: a provider's own diagnostics
    /// each where its attribute path leads in the block, as Terraform
    /// shows them; anything else at the block.
    fn plan_failed(&mut self, r: &Resource, addr: &Address, e: &strata_provider::DriverError) {
        self.plan_failed_as(r, addr, e, "Planning");
    }

    /// A driver's refusal of `doing` (`Planning`, `Opening`) `addr`.
    fn plan_failed_as(
        &mut self,
        r: &Resource,
        addr: &Address,
        e: &strata_provider::DriverError,
        doing: &str,
    ) {
        if let strata_provider::DriverError::Provider { problems, .. } = e {
            if problems.iter().any(|p| p.error) {
                for d in crate::walk::provider_problems(problems, r) {
                    self.diags.push(d);
                }
                return;
            }
        }
        self.diags.push(
            Diag::new(
                "strata::driver::plan",
                format!("{doing} {addr} failed"),
                e.to_string(),
            )
            .at(r.span),
        );
    }

    /// Adopts `addr`'s object when an import block of its module instance
    /// names it (Terraform 1.16's imports in child modules).
    fn import_in_module(
        &mut self,
        walk: &Walk<'a>,
        r: &Resource,
        addr: &Address,
        (driver, schema): (&Configured, &ResourceSchema),
    ) {
        if self.req.mode.is_refresh_only() || !self.coverage.covers(addr) {
            return;
        }
        let key = (addr.id.module.clone(), r.address());
        if !self.module_imports.contains_key(&key) {
            let found = import::module_targets(walk, self.req.root, &addr.id.module, r);
            let found = found.unwrap_or_else(|d| {
                self.diags.0.extend(d.0);
                Vec::new()
            });
            self.module_imports.insert(key.clone(), found);
        }
        let Some(t) = self.module_imports[&key].iter().find(|t| t.to == *addr) else {
            return;
        };
        let reading = (&*driver.driver, driver.provider.as_str(), schema);
        let adopted = import::import_by(&*driver.driver, &addr.id.type_name, &t.by)
            .and_then(|by| Ok((by, import::adopt(reading, t, self.rt)?)));
        match adopted {
            Ok((by, p)) => {
                self.imported.insert(addr.clone(), (by, t.span));
                self.prior.insert(addr.clone(), Box::new(p));
            }
            Err(d) => self.diags.push(d),
        }
    }

    fn resource(&mut self, walk: &Walk<'a>, n: NodeIndex) {
        let Some((r, provider, schema, deps)) = self.prologue(walk, n) else {
            return;
        };
        self.instances(walk, (n, r), (&provider, schema), |me, one| {
            me.resource_instance(one, schema, &deps)
        });
    }

    /// Each instance of the resource at `n` through `one`; their values
    /// (unknown where `one` gives none) set in the walk for what reads
    /// them.
    fn instances(
        &mut self,
        walk: &Walk<'a>,
        (n, r): (NodeIndex, &'a Resource),
        (provider, schema): (&Resolution<'_>, &ResourceSchema),
        mut one: impl FnMut(&mut Self, &OneInstance<'_, 'a>) -> Option<Value>,
    ) {
        let graph = self.req.graph;
        let node = &graph.graph[n];
        for ri in walk.expand(n, &mut self.diags) {
            let mut values = Vec::new();
            for ctx in ri.keys.instances() {
                let driver = self.instance_driver(walk, (n, r), (&ri, &ctx), provider);
                let value = driver.and_then(|driver| {
                    let at = OneInstance {
                        walk,
                        n,
                        r,
                        ri: &ri,
                        ctx: &ctx,
                        driver: &driver,
                    };
                    one(self, &at)
                });
                values.push(value.unwrap_or_else(|| Value::Unknown(schema.object_type())));
            }
            walk.set(ri.module(), &node.local_addr, ri.keys.assemble(values));
        }
    }

    /// One instance of a managed resource planned and its change pushed;
    /// the value dependents see (`None`: unknown, the instance failed).
    fn resource_instance(
        &mut self,
        one: &OneInstance<'_, 'a>,
        schema: &'a ResourceSchema,
        deps: &[ResourceAddr],
    ) -> Option<Value> {
        let (walk, n, r, ri, ctx) = (one.walk, one.n, one.r, one.ri, one.ctx);
        let driver = one.driver;
        let addr = ri.address(ctx.key.clone());
        if self.req.mode.is_refresh_only() || !self.coverage.covers(&addr) {
            return Some(self.leave_alone(addr, schema, &driver.provider));
        }
        // Declared, valid or not: an import into it or a move from it has
        // its configuration, whose errors are its own.
        self.claims.claim(addr.clone());
        let checked = &*driver.driver;
        let config = self.config_of(walk, n, r, (checked, schema), (ri, ctx))?;
        let at = one.at(self.req.graph);
        if at.unmet(&mut self.diags, r, Kind::Precondition, None) {
            return None;
        }
        if !ri.module().is_root() && !self.prior.contains_key(&addr) {
            self.import_in_module(walk, r, &addr, (driver, schema));
        }
        let prior = self.prior.get(&addr);
        let triggered = prior.is_some() && self.triggered(walk, n, r, ri, ctx);
        let requested = self.req.replace.contains(&addr);
        // A test's stand-in plans by its own schema (which forces no
        // replacement).
        let planner = self.req.drivers.at(&addr, &driver.driver);
        let schema = planner
            .schema(strata_provider::TypeMode::Managed, &r.type_name)
            .unwrap_or(schema);
        let planned = plan_instance(InstanceRequest {
            driver: &*planner,
            type_name: &r.type_name,
            schema,
            lifecycle: &r.lifecycle,
            config,
            prior: prior.map(|p| Prior {
                value: &p.value,
                kept: &p.kept,
                tainted: p.tainted,
            }),
            triggered,
            requested,
        });
        let PlannedInstance {
            config,
            planned,
            decision:
                Decision {
                    action,
                    reason,
                    replace_paths,
                },
        } = match planned {
            Ok(p) => p,
            Err(e) => {
                self.plan_failed(r, &addr, &e);
                return None;
            }
        };
        if action.deletes() && r.lifecycle.prevent_destroy {
            self.diags.push(prevent_destroy(r, &addr));
        }
        let planned = strata_provider::Planned {
            planned: diff::with_marks(planned.planned, Some(&config), schema),
            ..planned
        };
        let planned = kept_when_unchanged(planned, action, prior.map(|p| &p.value));
        let after = Some(&planned.planned);
        if at.unmet(&mut self.diags, r, Kind::Postcondition, after) {
            return None;
        }
        let value = planned.planned.clone();
        let change = ResourceChange {
            previous_addr: self.moves.get(&addr).cloned().map(Box::new),
            deposed: None,
            tainted: prior.is_some_and(|p| p.tainted),
            provider: driver.provider.clone(),
            action,
            reason,
            before: prior.map(|p| p.value.clone()),
            after: Some(planned.planned),
            replace_paths,
            schema_version: schema.version,
            kept_before: prior.map(|p| p.kept.clone()).unwrap_or_default(),
            kept_after: planned.kept,
            dependencies: deps.to_vec(),
            create_before_destroy: r.lifecycle.create_before_destroy,
            skip_destroy: r.lifecycle.skip_destroy,
            importing: self.imported.get(&addr).map(|(id, _)| id.clone()),
            addr,
        };
        self.triggers(one, &change);
        self.push_claimed(change);
        Some(value)
    }

    /// The actions the instance's change triggers (its `action_trigger`
    /// blocks).
    fn triggers(&mut self, one: &OneInstance<'_, 'a>, change: &ResourceChange) {
        if one.r.lifecycle.action_triggers.is_empty() {
            return;
        }
        let triggering = super::triggers::Triggering {
            walk: one.walk,
            node: &self.req.graph.graph[one.n],
            r: one.r,
            ri: one.ri,
            ctx: one.ctx,
        };
        let drivers = self.req.drivers;
        let actions = super::triggers::plan(&triggering, change, drivers, &mut self.diags);
        self.actions.extend(actions);
    }

    /// An instance the plan does not touch: its prior object, kept for
    /// what reads it (the walk now, the apply later); unknown when there
    /// is none.
    fn leave_alone(&mut self, addr: Address, schema: &ResourceSchema, provider: &str) -> Value {
        let Some(p) = self.prior.get(&addr) else {
            self.untouched.push(ResourceChange {
                provider: provider.to_string(),
                action: Action::NoOp,
                reason: None,
                before: None,
                after: None,
                replace_paths: Vec::new(),
                schema_version: schema.version,
                kept_before: Kept::default(),
                kept_after: Kept::default(),
                dependencies: Vec::new(),
                create_before_destroy: false,
                skip_destroy: false,
                importing: None,
                deposed: None,
                tainted: false,
                previous_addr: None,
                addr,
            });
            return Value::Unknown(schema.object_type());
        };
        self.claims.claim(addr);
        let value = p.value.clone();
        self.untouched
            .push(refresh::change_of(p, Action::NoOp, Some(value.clone())));
        value
    }

    /// Whether any `replace_triggered_by` reference of this instance has a
    /// planned update or replacement (for a resource) or a changing value
    /// (for an attribute).
    fn triggered(
        &self,
        walk: &Walk,
        n: NodeIndex,
        r: &Resource,
        ri: &ResourceInstances,
        ctx: &InstanceCtx,
    ) -> bool {
        let node = &self.req.graph.graph[n];
        r.lifecycle.replace_triggered_by.iter().any(|e| {
            let Some((target, attrs, key)) = trigger_target(e) else {
                return false;
            };
            let key = match key {
                Some(k) => match walk.eval_with(node, ri.module(), Some(ctx), |ev| ev.eval(k)) {
                    Some(Ok(v)) => match v.unmarked() {
                        Value::String(s) => Some(InstanceKey::Str(s.clone())),
                        Value::Number(n) => n.to_i64().map(|i| InstanceKey::Int(i as u64)),
                        _ => None,
                    },
                    _ => None,
                },
                None => None,
            };
            let target = ResourceAddr {
                module: ri.module().clone(),
                mode: Mode::Managed,
                type_name: target.type_name.to_string(),
                name: target.name.to_string(),
            };
            self.changes_of(&target, key.as_ref()).into_iter().any(|c| {
                if attrs.is_empty() {
                    return matches!(c.action, Action::Update) || c.action.is_replace();
                }
                let at = |v: &Option<Value>| {
                    v.as_ref().and_then(|v| {
                        attrs
                            .iter()
                            .try_fold(v.clone(), |v, a| v.unmarked().entries()?.get(*a).cloned())
                    })
                };
                match (at(&c.before), at(&c.after)) {
                    (Some(b), Some(a)) => !a.is_wholly_known() || !diff::same(&b, &a),
                    (None, None) => false,
                    _ => true,
                }
            })
        })
    }

    /// The planned changes of `addr` (all its instances when no key).
    fn changes_of(&self, addr: &ResourceAddr, key: Option<&InstanceKey>) -> Vec<&ResourceChange> {
        match key {
            Some(k) => {
                let a = addr.instance(Some(k.clone()));
                self.by_addr
                    .get(&self.changes, &a)
                    .map(|i| &self.changes[i])
                    .into_iter()
                    .collect()
            }
            None => self
                .changes
                .iter()
                .filter(|c| c.deposed.is_none() && c.addr.id == *addr)
                .collect(),
        }
    }

    fn removed_rule(&self, addr: &Address) -> Option<&'a crate::config::Removed> {
        removed_rule(self.req.root, addr)
    }

    /// A `removed` block may not name what the configuration still has.
    fn removed_still_configured(&mut self) {
        for r in &self.req.root.removed {
            let Some(from) = moved::text(&r.from) else {
                continue;
            };
            let still = match (Address::parse(&from), ModulePath::parse(&from)) {
                (Some(a), _) => self.configs.contains_key(&a.id.config()),
                (None, Some(m)) if !m.is_root() => {
                    self.configs.keys().any(|k| k.module.starts_with(&m))
                }
                _ => false,
            };
            if still {
                self.diags.push(
                    Diag::new(
                        "strata::plan::removed",
                        "Removed resource still exists",
                        format!("This statement declares that {from} was removed, but it is still declared in configuration."),
                    )
                    .at(r.span),
                );
            }
        }
    }

    /// Deletes for every prior object the walk did not claim, and for
    /// deposed objects; everything when destroying.
    fn orphans(&mut self, walk: &Walk<'_>) {
        if self.req.mode.is_refresh_only() {
            return;
        }
        // Whether the module instance an object is in is still expanded.
        let alive = |path: &ModulePath| path.is_root() || expanded(walk, path);
        let (claims, changes) = (&self.claims, &self.changes);
        let mut gone: Vec<PriorInstance> = self
            .prior
            .drain()
            .filter(|(a, _)| !claims.contains(changes, a))
            .map(|(_, p)| *p)
            .collect();
        gone.append(&mut self.deposed);
        gone.retain(|p| self.coverage.covers(&p.addr));
        for p in gone {
            let cfg = self.configs.get(&p.addr.id.config()).copied();
            let reason = if self.req.mode.is_destroy() {
                Reason::Destroy
            } else {
                match (cfg, &p.addr.key) {
                    (None, _) => Reason::NoResourceConfig,
                    (Some(_), _) if p.deposed.is_some() => Reason::NoResourceConfig,
                    (Some(_), _) if !alive(&p.addr.id.module) => Reason::NoModule,
                    (Some(r), None) if r.lifecycle.enabled.is_some() => Reason::EnabledFalse,
                    (Some(r), Some(InstanceKey::Int(_))) if r.count.is_some() => Reason::CountIndex,
                    (Some(r), Some(InstanceKey::Str(_))) if r.for_each.is_some() => Reason::EachKey,
                    (Some(r), Some(InstanceKey::Int(_))) if r.count.is_none() => {
                        Reason::WrongRepetition
                    }
                    (Some(r), Some(InstanceKey::Str(_))) if r.for_each.is_none() => {
                        Reason::WrongRepetition
                    }
                    (Some(_), _) if !p.addr.id.module.is_root() => Reason::NoModule,
                    (Some(_), _) => Reason::NoResourceConfig,
                }
            };
            if let Some(r) = cfg {
                if r.lifecycle.prevent_destroy && p.deposed.is_none() {
                    self.diags.push(prevent_destroy(r, &p.addr));
                }
            }
            let previous_addr = self.moves.get(&p.addr).cloned();
            let removed = !self.req.mode.is_destroy()
                && self.removed_rule(&p.addr).is_some_and(|r| !r.destroy);
            // `lifecycle { destroy = false }`: the configuration's word, or
            // (its block gone) what the state recorded of it.
            let kept = cfg.map_or(p.skip_destroy, |r| r.lifecycle.skip_destroy);
            let forget = p.deposed.is_none() && (removed || kept);
            let lasting =
                super::lasting::lasting(self.req.drivers, &p.addr.id.type_name, &p.value).is_some();
            let reason = if lasting { Reason::Lasting } else { reason };
            let change = ResourceChange {
                addr: p.addr,
                deposed: p.deposed,
                tainted: p.tainted,
                previous_addr: previous_addr.map(Box::new),
                provider: p.provider,
                action: if forget || lasting {
                    Action::Forget
                } else {
                    Action::Delete
                },
                reason: Some(reason),
                before: Some(p.value),
                after: None,
                replace_paths: Vec::new(),
                schema_version: p.schema_version,
                kept_before: p.kept,
                kept_after: Kept::default(),
                dependencies: p.dependencies,
                create_before_destroy: p.create_before_destroy,
                skip_destroy: p.skip_destroy,
                importing: None,
            };
            if let (Some(r), Action::Delete) = (cfg, change.action) {
                if alive(&change.addr.id.module) {
                    let graph = self.req.graph;
                    let drivers = self.req.drivers;
                    let actions = super::triggers::plan_delete(
                        walk,
                        graph,
                        r,
                        &change,
                        drivers,
                        &mut self.diags,
                    );
                    self.actions.extend(actions);
                }
            }
            self.push(change);
        }
    }

    fn outputs(&mut self, walk: &Walk) -> Vec<OutputChange> {
        let mut out = Vec::new();
        let state = self.req.state;
        let before = |name: &str| {
            state.outputs.get(name).and_then(|o| {
                let ty = crate::lang::json::type_from_json(&o.ty).ok()?;
                value_from_json(&o.value, &ty)
                    .ok()
                    .map(|v| v.mark_if(o.sensitive))
            })
        };
        let mut seen = HashSet::new();
        let scoped = !self.req.scope.is_everything();
        if self.req.mode.is_destroy() && scoped {
            // A destroy of part of the configuration leaves outputs be.
            return out;
        }
        // What a narrowed graph left out is not planned.
        let planned: HashSet<&str> = self
            .req
            .graph
            .graph
            .node_weights()
            .filter(|n| n.kind == NodeKind::Output && n.module.is_root())
            .map(|n| n.local_addr.trim_start_matches("output."))
            .collect();
        if !self.req.mode.is_destroy() {
            for o in &self.req.root.outputs {
                seen.insert(o.name.as_str());
                if !planned.contains(o.name.as_str()) {
                    continue;
                }
                let after = walk.root_output(&o.name);
                // validate sees variables' marks; only the plan sees those
                // of resources' sensitive attributes.
                if !o.sensitive && after.as_ref().is_some_and(Value::contains_sensitive) {
                    self.diags.push(
                        Diag::new(
                            "strata::plan::sensitive_output",
                            "Output refers to sensitive values",
                            "This output's value is derived from sensitive values (a resource attribute its driver marks sensitive). As in Terraform, an output containing sensitive data must be marked sensitive, so a secret is never printed by accident. If you do intend to export this data, add to the output block:\n    sensitive = true",
                        )
                        .at(o.decl),
                    );
                }
                out.push(OutputChange {
                    name: o.name.clone(),
                    before: before(&o.name),
                    after,
                    sensitive: o.sensitive,
                });
            }
        }
        for (name, o) in &state.outputs {
            if !seen.contains(name.as_str()) && !scoped {
                out.push(OutputChange {
                    name: name.clone(),
                    before: before(name),
                    after: None,
                    sensitive: o.sensitive,
                });
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

/// The objects the root module's import blocks adopt, added to `prior`,
/// their ids kept for the plan to show.
fn import_root(
    req: &Request<'_>,
    p: &mut Planner<'_, '_>,
    prior: &mut Vec<PriorInstance>,
    rt: &tokio::runtime::Runtime,
) -> Result<(), Diags> {
    if req.mode.is_destroy() {
        return Ok(());
    }
    let site = import::Site {
        root: req.root,
        vars: &req.vars,
        run: &req.run,
        drivers: req.drivers,
    };
    let managed: HashSet<Address> = prior
        .iter()
        .filter(|i| i.deposed.is_none())
        .map(|i| i.addr.clone())
        .collect();
    // Already managed, or out of the plan's scope: the block has done its
    // work, or waits.
    let adopts =
        |a: &Address| !managed.contains(a) && p.coverage.covers(a) && !req.mode.is_refresh_only();
    let (adopted, imported) = import::root_imports(&site, &adopts, rt)?;
    prior.extend(adopted);
    p.imported = imported;
    Ok(())
}

/// `t.n`, `t.n[k]`, `t.n.attr`, `t.n[k].attr`: the resource, the attribute
/// path and the index expression of a `replace_triggered_by` entry.
/// The resource a `replace_triggered_by` entry names, in the module of
/// the resource it is on.
struct Trigger<'e> {
    type_name: &'e str,
    name: &'e str,
}

fn trigger_target(e: &Expr) -> Option<(Trigger<'_>, Vec<&str>, Option<&Expr>)> {
    let mut attrs = Vec::new();
    let mut cur = e;
    let mut key = None;
    loop {
        match &cur.kind {
            ExprKind::GetAttr(inner, a) => {
                if let ExprKind::Variable(t) = &inner.kind {
                    attrs.reverse();
                    let resource = Trigger {
                        type_name: t,
                        name: a,
                    };
                    return Some((resource, attrs, key));
                }
                attrs.push(a.as_str());
                cur = inner;
            }
            ExprKind::Index(inner, k) => {
                key = Some(&**k);
                cur = inner;
            }
            _ => return None,
        }
    }
}

/// A type its provider declares in a schema strata cannot read.
fn unusable(r: &Resource, why: String) -> Diag {
    let what = crate::builtin::mode_noun(r.mode);
    Diag::new(
        "strata::plan::resource_type",
        format!("Unsupported {what} {:?}", r.type_name),
        why,
    )
}

fn unserved(r: &Resource, module: Option<&crate::config::Module>) -> Diag {
    let what = crate::builtin::mode_noun(r.mode);
    Diag::new(
        "strata::plan::resource_type",
        format!("Invalid {what}"),
        crate::walk::unserved_detail(r, module),
    )
}
