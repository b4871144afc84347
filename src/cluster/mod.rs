//! The `cluster` block: one GPU cluster spec, expanded per cloud into a
//! call of `modules/<cloud>` (embedded in the binary, or the user's copy)
//! and the provider configurations that call needs. Runs after loading and
//! before the graph: what comes out is plain configuration, planned like
//! anything a user wrote, at addresses such as
//! `module.train_aws.aws_eks_node_group.pool["h100"]`.
//!
//! The spec's cloud-independent parts (network, GPU Operator, node pools)
//! reach every cloud's module alike; a `cloud` block may override any of
//! them for its cloud, which [`portability`] then holds to account.

mod blocks;
mod cloud;
mod clouds;
mod dispatch;
pub mod placement;
pub mod portability;
mod pricing;
mod providers;
mod regions;
mod reserved;
mod rules;
mod runtime;
mod syntax;
#[cfg(test)]
mod tests;

use cloud::{cloud_call, Built, CloudAt, Parts};
pub use clouds::Catalogs;
use clouds::{CloudKind, CLOUDS};
use pricing::cluster_prices;
use providers::{cloud_providers, outputs};
use regions::regions;
use rules::{allowed, divergence, known, part_rules, pool_rules, single, valid_cluster_name};
use syntax::{attribute, get_attr, literal, name_expr, object};

use crate::config::{self, ConfigScope, ModuleCall, Provider, Run};
use crate::diag::{Diag, Diags, Sources, Span};
use crate::lang::value::Value;
use crate::syntax::{Block, Body, Expr, ExprKind};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use strata_provider::billing::Capacity;
use strata_provider::catalog::PriceList;

/// The fields of a node pool, in the order messages list them.
pub const POOL_FIELDS: &[&str] = &[
    "gpu",
    "gpus_per_node",
    "instance_type",
    "min_nodes",
    "max_nodes",
    "capacity",
    "labels",
    "taints",
    "max_price_per_gpu_hour",
    "nodes",
];

/// The price cap: a pool's, a cloud block's for all its pools, or a cloud
/// block's `node_pool` override's.
const CAP: &str = "max_price_per_gpu_hour";

/// A pool's fields that are the spec's own business, not the module's
/// input (`nodes` reaches only the module of the place they go).
const SPEC_ONLY: &[&str] = &[CAP, "nodes"];

/// One cloud a cluster runs on, after expansion.
#[derive(Debug, Clone)]
pub struct CloudCall {
    pub cloud: String,
    /// The module call's name: `train_aws`.
    pub call: String,
    /// The `cloud` block.
    pub span: Span,
    /// Where this cloud's block sets a field the portability check
    /// compares, by (pool, field); pool `""` for cluster-wide fields.
    pub overrides: BTreeMap<(String, String), Span>,
    /// The module's source when the user gave one.
    pub module: Option<String>,
    /// The region, when it is one of the cloud's `regions` past the first.
    pub further_region: Option<String>,
}

impl CloudCall {
    /// `aws`, or `aws us-west-2` for a further region, for messages.
    pub fn place(&self) -> String {
        match &self.further_region {
            Some(r) => format!("{} {r}", self.cloud),
            None => self.cloud.clone(),
        }
    }
}

/// One `cluster` block, expanded.
#[derive(Debug, Clone, Default)]
pub struct Expanded {
    pub name: String,
    pub span: Span,
    pub clouds: Vec<CloudCall>,
    /// Fields allowed to differ between clouds.
    pub allow_divergence: BTreeSet<String>,
    /// Where each pool with `nodes` puts them.
    pub placements: Vec<crate::placement::Decision>,
    /// MultiKueue's manager and the order it tries the workers in.
    pub dispatch: Option<crate::placement::Dispatch>,
}

/// What expansion did, for the portability check after evaluation.
#[derive(Debug, Clone, Default)]
pub struct Expansion {
    pub clusters: Vec<Expanded>,
    /// The prices the clusters' `prices` files give, to price the plan.
    pub prices: PriceList,
}

impl Expansion {
    /// Errors found inside strata's own modules name the cluster spec they
    /// came from: the value at fault is most likely one the spec passed.
    pub fn explain(&self, diags: Diags, sources: &Sources) -> Diags {
        let mut out = Diags::default();
        for mut d in diags.0 {
            let inside = d
                .span
                .and_then(|s| sources.name(s.file).strip_prefix(config::EMBEDDED))
                .map(|rest| {
                    rest.trim_start_matches('/')
                        .split('/')
                        .next()
                        .unwrap_or_default()
                });
            let from = inside.and_then(|module| {
                self.clusters.iter().find_map(|c| {
                    let cloud = c
                        .clouds
                        .iter()
                        .find(|k| k.cloud == module)
                        .or_else(|| c.clouds.first())?;
                    Some((c, cloud))
                })
            });
            if let Some((c, cloud)) = from {
                let place = |s: Span| {
                    let (line, col) = sources.line_col(s.file, s.start);
                    format!("{}:{line}:{col}", sources.name(s.file))
                };
                d.detail.push_str(&format!(
                    "\n\nThis is inside the module cluster {:?} expands into for {} (the cluster at {}, its cloud block at {}): check the values the spec gives it.",
                    c.name,
                    cloud.cloud,
                    place(c.span),
                    place(cloud.span)
                ));
            }
            // Every one, as given: the same words twice are two instances.
            out.0.push(d);
        }
        out
    }

    /// Whether the expansion must be made again with what state holds
    /// (`calls`, the root module calls it has objects of): a cluster's
    /// region the spec no longer lists keeps its provider configurations,
    /// and a MultiKueue manager is held to where state has it (gone from
    /// the spec, or moved, is refused).
    pub fn needs_state(&self, calls: &BTreeSet<String>) -> bool {
        self.clusters.iter().any(|c| {
            // A manager in state is checked against the spec's: gone, or
            // moved.
            let manager = calls.contains(&dispatch::manager_call(&c.name));
            manager
                || calls.iter().any(|call| {
                    CLOUDS
                        .iter()
                        .any(|k| call.starts_with(&format!("{}_{}_", c.name, k.name)))
                        && !c.clouds.iter().any(|cc| cc.call == *call)
                })
        })
    }

    /// Every placed pool's decision.
    pub fn placements(&self) -> impl Iterator<Item = &crate::placement::Decision> {
        self.clusters.iter().flat_map(|c| &c.placements)
    }

    /// Every MultiKueue manager's dispatch.
    pub fn dispatch(&self) -> impl Iterator<Item = &crate::placement::Dispatch> {
        self.clusters.iter().filter_map(|c| c.dispatch.as_ref())
    }

    /// The module outputs the portability check reads:
    /// `module.train_aws.` + `output.portable`.
    pub fn probes(&self) -> Vec<(String, String)> {
        self.clusters
            .iter()
            .flat_map(|c| &c.clouds)
            .map(|c| (format!("module.{}.", c.call), "output.portable".to_string()))
            .collect()
    }
}

/// A list (or tuple, or set) of strings as Rust strings; `None` for
/// anything else.
fn string_list(v: &Value) -> Option<Vec<String>> {
    v.elements()?
        .iter()
        .map(|x| x.as_str().map(str::to_string))
        .collect()
}

fn diag(summary: &str, detail: impl Into<String>, span: Span) -> Diag {
    Diag::new("strata::cluster", summary.to_string(), detail).at(span)
}

/// Which clouds a cluster runs on: its `clouds` list, evaluated now (it may
/// use variables and locals, not resources), or every `cloud` block.
fn active_clouds(
    b: &Block,
    scope: &ConfigScope,
    declared: &[(String, Span)],
    diags: &mut Diags,
) -> Vec<(String, Span)> {
    let Some(a) = b.body.attr("clouds") else {
        return declared.to_vec();
    };
    let v = match scope.evaluator().eval(&a.expr) {
        Ok(v) => v.unmark_deep().0,
        Err(d) => {
            diags.push(d.or_at(a.expr.span));
            return Vec::new();
        }
    };
    let Some(items) = v.elements().filter(|_| v.is_wholly_known()) else {
        diags.push(diag(
            "Invalid clouds",
            "`clouds` must be a list of cloud names known before planning (variables and locals only), such as [\"aws\", \"gcp\"].",
            a.expr.span,
        ));
        return Vec::new();
    };
    let mut out: Vec<(String, Span)> = Vec::new();
    for item in items {
        let Some(name) = item.as_str() else {
            diags.push(diag(
                "Invalid clouds",
                "Each of `clouds` must be a string.",
                a.expr.span,
            ));
            continue;
        };
        if clouds::kind(name).is_none() {
            diags.push(diag(
                "Unknown cloud",
                format!("{name:?} is not a cloud strata builds clusters on; the clouds are aws, gcp, azure and kubernetes (an existing cluster)."),
                a.expr.span,
            ));
            continue;
        }
        if out.iter().any(|(n, _)| n == name) {
            diags.push(diag(
                "Duplicate cloud",
                format!("{name:?} is listed twice in `clouds`; each cloud runs the cluster once."),
                a.expr.span,
            ));
            continue;
        }
        out.push((name.to_string(), a.expr.span));
    }
    out
}

/// Expands every `cluster` block of the root module into module calls and
/// provider configurations. `vars` are the root variables' values (for
/// `clouds` and the catalog's inputs); `catalogs` the drivers' GPU
/// catalogs and the command's prices.
pub fn expand(
    root: &mut config::Module,
    vars: BTreeMap<String, Value>,
    run: &Rc<Run>,
    catalogs: &Catalogs<'_>,
    recorded: &placement::Recorded<'_>,
    sources: &mut Sources,
) -> Result<Expansion, Diags> {
    let mut expansion = Expansion::default();
    // Nothing to expand: no scope made (it indexes every resource's name).
    if root.clusters.is_empty() {
        return Ok(expansion);
    }
    let mut diags = Diags::default();
    let blocks = std::mem::take(&mut root.clusters);
    let mut calls = Vec::new();
    let mut providers = Vec::new();
    let mut removed = Vec::new();
    {
        let scope = ConfigScope::new(root, vars, run.clone());
        for b in &blocks {
            let own = cluster_prices(b, &scope, &root.dir, &mut diags);
            let catalogs = Catalogs {
                by_provider: catalogs.by_provider,
                prices: own.clone().then(catalogs.prices.clone()),
            };
            expansion.prices = std::mem::take(&mut expansion.prices).then(own);
            if let Some(mut g) = cluster(b, &scope, &catalogs, recorded, &mut diags) {
                expansion.clusters.push(g.expanded);
                calls.append(&mut g.calls);
                providers.append(&mut g.providers);
                removed.append(&mut g.removed);
            }
        }
    }
    for mut call in calls {
        if root.module_calls.iter().any(|c| c.name == call.name) {
            diags.push(diag(
                "Duplicate module call",
                format!(
                    "The cluster expands into module {:?}, which this configuration already calls.",
                    call.name
                ),
                call.span,
            ));
            continue;
        }
        // strata's own modules: nothing of them is in a manifest.
        let dir = root.dir.clone();
        let none = config::installed::Manifest::default();
        let caller = config::Site {
            depth: 0,
            key: String::new(),
            root: &dir,
            manifest: &none,
        };
        // Embedded modules take no const variables from the root.
        let none_given = config::dynamic::Consts::new();
        config::load_call((root, &none_given), &mut call, sources, &caller, &mut diags);
        root.module_calls.push(call);
    }
    root.providers.extend(providers);
    root.removed.extend(removed);
    for c in &expansion.clusters {
        outputs(root, c);
    }
    root.clusters = blocks;
    diags.into_result(expansion)
}

/// What one `cluster` block expands into.
#[derive(Default)]
struct Generated {
    expanded: Expanded,
    calls: Vec<ModuleCall>,
    providers: Vec<Provider>,
    removed: Vec<config::Removed>,
}

/// A cluster block's spec, read: its name, parts and pools.
pub(super) struct Spec<'b> {
    name: String,
    /// Fields allowed to differ between clouds.
    allow_divergence: BTreeSet<String>,
    network: Option<&'b Body>,
    gpu_operator: Option<&'b Body>,
    runtime: Option<&'b Body>,
    multikueue: Option<dispatch::MultiKueue<'b>>,
    pools: Vec<(String, &'b Block)>,
    /// Pools with `nodes`, which their placement puts somewhere.
    wanted: BTreeMap<String, placement::Wanted>,
    /// The `cloud` blocks, and the clouds they name.
    cloud_blocks: Vec<&'b Block>,
    declared: Vec<(String, Span)>,
}

fn cluster(
    b: &Block,
    scope: &ConfigScope,
    catalogs: &Catalogs<'_>,
    recorded: &placement::Recorded<'_>,
    diags: &mut Diags,
) -> Option<Generated> {
    let spec = spec(b, scope, diags)?;
    let active = active_clouds(b, scope, &spec.declared, diags);
    let mut out = Generated {
        expanded: Expanded {
            name: spec.name.clone(),
            span: b.kind_span,
            allow_divergence: spec.allow_divergence.clone(),
            ..Expanded::default()
        },
        ..Generated::default()
    };
    retire_clouds(&spec, &active, &mut out);
    let parts = Parts {
        cluster: &spec.name,
        body: &b.body,
        network: spec.network,
        gpu_operator: spec.gpu_operator,
        runtime: spec.runtime,
        pools: &spec.pools,
        placed: &spec.wanted,
    };
    let mut built = cloud_calls(&spec, active, &parts, (scope, catalogs), diags);
    retire_regions(&spec, &built, &recorded.calls, &mut out);
    out.expanded.placements = placements(&spec, &built, catalogs, recorded, scope, diags);
    let manager = runtime_inputs(
        &spec,
        &parts,
        &mut built,
        &mut out,
        (scope, catalogs, recorded),
        diags,
    );
    for b in built {
        finish(b, &spec.wanted, &mut out);
    }
    match manager {
        Some(m) => finish_manager(m, &mut out),
        None => dispatch::manager_left(&spec, b, &recorded.calls, diags),
    }
    Some(out)
}

/// One module call per cloud and region the cluster runs in; a cloud the
/// spec uses without its `cloud` block is an error at the first use.
fn cloud_calls(
    spec: &Spec<'_>,
    active: Vec<(String, Span)>,
    parts: &Parts<'_>,
    (scope, catalogs): (&ConfigScope, &Catalogs<'_>),
    diags: &mut Diags,
) -> Vec<Built<'static>> {
    let mut built = Vec::new();
    for (cloud, used_at) in active {
        if clouds::kind(&cloud).is_none() {
            continue;
        }
        let Some((kind, block)) = cloud_block(&spec.cloud_blocks, &cloud) else {
            diags.push(diag(
                "Missing cloud block",
                format!("cluster {:?} runs on {cloud} but has no cloud {cloud:?} block to say where (its region, project or cluster).", spec.name),
                used_at,
            ));
            continue;
        };
        for at in regions(kind, block, &spec.name, scope, diags) {
            let c = CloudAt {
                kind,
                block,
                at: &at,
                parts,
                scope,
                catalogs,
            };
            built.extend(cloud_call(&c, diags));
        }
    }
    built
}

/// Where each pool with `nodes` goes, among the sites the calls offer.
fn placements(
    spec: &Spec<'_>,
    built: &[Built<'_>],
    catalogs: &Catalogs<'_>,
    recorded: &placement::Recorded<'_>,
    scope: &ConfigScope,
    diags: &mut Diags,
) -> Vec<crate::placement::Decision> {
    let sites: Vec<&placement::Site> = built.iter().filter_map(|b| b.site.as_ref()).collect();
    let mut decided = Vec::new();
    for (pname, w) in &spec.wanted {
        let Some((_, p)) = spec.pools.iter().find(|(n, _)| n == pname) else {
            continue;
        };
        decided.push(placement::decide(
            &spec.name, p, pname, w, &sites, catalogs, recorded, scope, diags,
        ));
    }
    decided
}

/// With a runtime, each created cluster gets untainted CPU nodes for
/// Kueue's and KubeRay's controllers (`system_pool`); with MultiKueue, each is a worker
/// and the manager's call is built over them, in dispatch order.
fn runtime_inputs<'k>(
    spec: &Spec<'_>,
    parts: &Parts<'_>,
    built: &mut [Built<'k>],
    out: &mut Generated,
    (scope, catalogs, recorded): (&ConfigScope, &Catalogs<'_>, &placement::Recorded<'_>),
    diags: &mut Diags,
) -> Option<Built<'k>> {
    spec.runtime?;
    for b in built.iter_mut().filter(|b| b.cc.cloud != "kubernetes") {
        let pool = dispatch::system_pool(None, b.cc.span);
        b.call.inputs.push(pool);
    }
    let mk = spec.multikueue.as_ref()?;
    for b in built.iter_mut() {
        if let Some((_, block)) = cloud_block(&spec.cloud_blocks, &b.cc.cloud) {
            dispatch::worker_inputs(mk, b, block);
        }
    }
    let (workers, left_out) = dispatch::order(
        &spec.name,
        built,
        &spec.pools,
        &out.expanded.placements,
        (scope, catalogs),
    );
    let first = built.first()?;
    let m = dispatch::ManagerOf {
        cluster: &spec.name,
        mk,
        parts,
        cloud_blocks: &spec.cloud_blocks,
        workers: &workers,
        pools: dispatch::flavour_pools(&first.pools, first.cc.span),
        was: recorded
            .managers
            .get(&dispatch::manager_call(&spec.name))
            .map(String::as_str),
    };
    let manager = dispatch::manager(&m, scope, catalogs, diags)?;
    out.expanded.dispatch = Some(crate::placement::Dispatch {
        cluster: spec.name.clone(),
        manager: manager.cc.call.clone(),
        workers,
        left_out,
    });
    Some(manager)
}

/// The manager's call finished: no GPU pools. It is no cloud of the
/// cluster's (not compared, not among the clouds' outputs).
fn finish_manager(b: Built<'_>, out: &mut Generated) {
    let mut call = b.call;
    call.inputs
        .push(attribute("node_pools", object(Vec::new(), b.cc.span)));
    out.calls.push(call);
    out.providers.extend(b.providers);
}

/// The cluster block read: its name, its parts checked, its pools and
/// cloud blocks; `None` when it has no usable name.
fn spec<'b>(b: &'b Block, scope: &ConfigScope, diags: &mut Diags) -> Option<Spec<'b>> {
    let name = cluster_name(b, diags)?;
    allowed(
        &b.body,
        &format!("cluster {name:?}"),
        &["clouds", "kubernetes_version", "allow_divergence", "prices"],
        &["network", "gpu_operator", "runtime", "node_pool", "cloud"],
        diags,
    );
    let allow_divergence = divergence(b, diags);
    let runtime = runtime::read(&b.body, &name, diags);
    let multikueue = runtime.and_then(|r| dispatch::read(r, scope, diags));
    let network = single(&b.body, "network", diags);
    let gpu_operator = single(&b.body, "gpu_operator", diags);
    part_rules(network, gpu_operator, scope, diags);
    if gpu_operator.is_none() {
        diags.push(diag(
            "Missing gpu_operator block",
            format!("cluster {name:?} needs a gpu_operator block: version, driver_version, cuda_version and mig_strategy are what every cloud's nodes share."),
            b.kind_span,
        ));
    }
    let (pools, wanted) = spec_pools(b, scope, diags);
    for (_, p) in pools.iter().filter(|_| runtime.is_some()) {
        runtime::pool_limits(p, scope, diags);
    }
    if let Some(r) = runtime {
        runtime::checkpoint_limits(r, scope, diags);
    }
    let cloud_blocks: Vec<&Block> = b.body.blocks.iter().filter(|x| x.kind == "cloud").collect();
    let declared = declared_clouds(&cloud_blocks, diags);
    Some(Spec {
        name,
        allow_divergence,
        network,
        gpu_operator,
        runtime,
        multikueue,
        pools,
        wanted,
        cloud_blocks,
        declared,
    })
}

/// The cluster's one label, a name every cloud takes.
fn cluster_name(b: &Block, diags: &mut Diags) -> Option<String> {
    match b.labels.as_slice() {
        [(n, span)] if !valid_cluster_name(n) => {
            diags.push(diag(
                "Invalid cluster name",
                format!("{n:?} cannot name a cluster on every cloud: a name is 1 to 40 lowercase letters, digits and hyphens, starting with a letter and not ending with a hyphen (GKE's rule, the strictest of the clouds)."),
                *span,
            ));
            None
        }
        [(n, _)] => Some(n.clone()),
        _ => {
            diags.push(diag(
                "Missing name for cluster",
                "A cluster block has one label, its name: cluster \"train\" { … }.",
                b.kind_span,
            ));
            None
        }
    }
}

/// The spec's node pools, checked, and what the placed ones want.
type SpecPools<'b> = (
    Vec<(String, &'b Block)>,
    BTreeMap<String, placement::Wanted>,
);

fn spec_pools<'b>(b: &'b Block, scope: &ConfigScope, diags: &mut Diags) -> SpecPools<'b> {
    let mut pools = Vec::new();
    let mut wanted = BTreeMap::new();
    for p in b.body.blocks.iter().filter(|x| x.kind == "node_pool") {
        let Some((pname, _)) = p.labels.first() else {
            diags.push(diag(
                "Missing name for node_pool",
                "A node_pool block has one label, its name: node_pool \"h100\" { … }.",
                p.kind_span,
            ));
            continue;
        };
        let what = format!("node_pool {pname:?}");
        allowed(&p.body, &what, POOL_FIELDS, &["placement"], diags);
        pool_rules(p, scope, diags);
        if let Some(w) = placement::wanted(p, scope, diags) {
            wanted.insert(pname.clone(), w);
        }
        pools.push((pname.clone(), p));
    }
    (pools, wanted)
}

/// The clouds the cloud blocks name, each a cloud strata builds on.
fn declared_clouds(cloud_blocks: &[&Block], diags: &mut Diags) -> Vec<(String, Span)> {
    let mut declared = Vec::new();
    for c in cloud_blocks {
        match c.labels.first() {
            Some((n, s)) if clouds::kind(n).is_some() => declared.push((n.clone(), *s)),
            Some((n, s)) => diags.push(diag(
                "Unknown cloud",
                format!("{n:?} is not a cloud strata builds clusters on; the clouds are aws, gcp, azure and kubernetes (an existing cluster)."),
                *s,
            )),
            None => diags.push(diag(
                "Missing name for cloud",
                "A cloud block names its cloud: cloud \"aws\" { region = … }.",
                c.kind_span,
            )),
        }
    }
    declared
}

/// The cloud named `cloud` and its block, when both exist.
fn cloud_block<'b>(
    cloud_blocks: &[&'b Block],
    cloud: &str,
) -> Option<(&'static CloudKind, &'b Block)> {
    let kind = clouds::kind(cloud)?;
    let block = cloud_blocks
        .iter()
        .find(|c| c.labels.first().is_some_and(|(n, _)| n == cloud))?;
    Some((kind, block))
}

/// A cloud with a block but not in `clouds` keeps its provider
/// configurations, so what state still holds there can be deleted.
/// The objects inside a cluster the module created go with the
/// cluster: they are forgotten, not deleted one by one through an API
/// server that is about to disappear (and that nothing reaches any
/// more, its address being the removed module's output).
fn retire_clouds(spec: &Spec<'_>, active: &[(String, Span)], out: &mut Generated) {
    let dropped = spec
        .declared
        .iter()
        .filter(|(c, _)| !active.iter().any(|(a, _)| a == c));
    for (cloud, _) in dropped {
        if let Some((kind, block)) = cloud_block(&spec.cloud_blocks, cloud) {
            let call = format!("{}_{cloud}", spec.name);
            retire((kind, block), &call, None, out);
        }
    }
}

/// Regions state still holds clusters in but the spec no longer lists
/// (or whose cloud it dropped) keep their provider configurations, so
/// those clusters can be deleted where they are.
fn retire_regions(
    spec: &Spec<'_>,
    built: &[Built<'_>],
    recorded: &BTreeSet<String>,
    out: &mut Generated,
) {
    for (cloud, _) in &spec.declared {
        let Some((kind, block)) = cloud_block(&spec.cloud_blocks, cloud) else {
            continue;
        };
        let prefix = format!("{}_{cloud}_", spec.name);
        for call in recorded {
            let Some(suffix) = call.strip_prefix(&prefix) else {
                continue;
            };
            if !built.iter().any(|b| b.cc.call == *call) {
                let region = suffix.replace('_', "-");
                retire((kind, block), call, Some(&region), out);
            }
        }
    }
}

/// A cloud's call finished: its pools as placement decided them.
fn finish(b: Built<'_>, wanted: &BTreeMap<String, placement::Wanted>, out: &mut Generated) {
    let mut call = b.call;
    let pools = b
        .pools
        .into_iter()
        .map(|p| {
            let items = placed_items(&b.cc, &p.name, p.items, wanted, &out.expanded, p.span);
            (p.name, object(items, p.span))
        })
        .collect();
    call.inputs
        .push(attribute("node_pools", object(pools, b.cc.span)));
    if let Some(blocks) = purchases(&b.cc.call, &out.expanded, b.cc.span) {
        call.inputs.push(attribute("capacity_blocks", blocks));
    }
    out.calls.push(call);
    out.providers.extend(b.providers);
    out.expanded.clouds.push(b.cc);
}

/// A cloud region the spec no longer builds a cluster in, whose objects
/// state may still hold: its cloud's provider configuration stays (in
/// `region` when it was one of a cloud block's `regions`), so they are
/// deleted there; the GPU Operator's objects inside the cluster are
/// forgotten with it rather than deleted through an API server about to
/// go.
fn retire(
    (kind, block): (&CloudKind, &Block),
    call: &str,
    region: Option<&str>,
    out: &mut Generated,
) {
    let (providers, _) = cloud_providers(kind, block, call, false, region);
    out.providers.extend(providers);
    if kind.created {
        let span = block.kind_span;
        out.removed.push(config::Removed {
            from: get_attr(
                get_attr(get_attr(name_expr("module", span), call), "module"),
                "gpu_operator",
            ),
            destroy: false,
            span,
        });
    }
}

/// The Capacity Blocks a region's cluster buys, by pool, as the cloud's
/// module takes them (`{ h100 = { offering_id = "cb-…" } }`); `None` when
/// it buys none.
fn purchases(call: &str, expanded: &Expanded, span: Span) -> Option<Expr> {
    let prefix = format!("{}.", expanded.name);
    let items: Vec<(String, Expr)> = expanded
        .placements
        .iter()
        .filter_map(|d| {
            let p = d.purchase.as_ref().filter(|p| p.call == call)?;
            let pool = d.pool.strip_prefix(&prefix)?.to_string();
            let offering = literal(Value::string(&p.offering), span);
            Some((pool, object(vec![("offering_id".into(), offering)], span)))
        })
        .collect();
    (!items.is_empty()).then(|| object(items, span))
}

/// The reservation a pool's nodes launch into, as the cloud's module takes
/// it: its id and, when known, its zone (the node group's subnets keep to
/// it).
fn held_input(h: &crate::placement::HeldAt, span: Span) -> Expr {
    let zone = h.facts.as_ref().and_then(|f| f.zone.as_deref());
    object(
        vec![
            ("id".into(), literal(Value::string(&h.id), span)),
            (
                "zone".into(),
                literal(
                    zone.map_or(Value::Null(crate::lang::types::Type::String), Value::string),
                    span,
                ),
            ),
        ],
        span,
    )
}

/// A pool's module input on one cloud, with what its placement decides:
/// the place its nodes go gets `nodes`, the capacity type chosen and the
/// zones to leave out; elsewhere it stays at its minimum, on the first
/// capacity type it would try there.
fn placed_items(
    cc: &CloudCall,
    pool: &str,
    mut items: Vec<(String, Expr)>,
    wanted: &BTreeMap<String, placement::Wanted>,
    expanded: &Expanded,
    span: Span,
) -> Vec<(String, Expr)> {
    let (Some(w), Some(d)) = (
        wanted.get(pool),
        expanded
            .placements
            .iter()
            .find(|d| d.pool == format!("{}.{pool}", expanded.name)),
    ) else {
        return items;
    };
    items.retain(|(k, _)| k != "capacity");
    let lit = |v: Value| literal(v, span);
    let kind = clouds::kind(&cc.cloud);
    if let Some(run) = w
        .max_run
        .filter(|_| kind.is_some_and(|k| k.offers(Capacity::FlexStart)))
    {
        items.push((
            "max_run_seconds".into(),
            lit(Value::int(run.as_secs() as i64)),
        ));
    }
    match d.chosen().filter(|c| c.call == cc.call) {
        Some(c) => {
            items.push(("nodes".into(), lit(Value::int(d.nodes as i64))));
            items.push(("capacity".into(), lit(Value::string(&c.at.capacity))));
            let zones = d
                .without_zones
                .iter()
                .map(|z| lit(Value::string(z)))
                .collect();
            items.push((
                "exclude_zones".into(),
                Expr::new(ExprKind::Tuple(zones), span),
            ));
            if let Some(h) = &c.held {
                items.push(("reservation".into(), held_input(h, span)));
            }
        }
        None => {
            let offered = |c: &Capacity| kind.is_none_or(|k| k.offers(*c));
            let first = w.capacity.iter().copied().find(offered);
            let first = first.unwrap_or(Capacity::OnDemand);
            items.push(("capacity".into(), lit(Value::string(first.name()))));
        }
    }
    items
}
