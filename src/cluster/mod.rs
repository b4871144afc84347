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

mod clouds;
pub mod placement;
pub mod portability;
mod pricing;
mod providers;
mod rules;
mod syntax;
#[cfg(test)]
mod tests;

pub use clouds::Catalogs;
use clouds::{CloudKind, CLOUDS};
use pricing::{cluster_prices, instance_type, price_cap, Pool};
use providers::{cloud_providers, outputs};
use rules::{allowed, divergence, known, part_rules, pool_rules, single, valid_cluster_name};
use syntax::{attribute, get_attr, literal, merged, name_expr, object};

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
#[derive(Debug, Clone)]
pub struct Expanded {
    pub name: String,
    pub span: Span,
    pub clouds: Vec<CloudCall>,
    /// Fields allowed to differ between clouds.
    pub allow_divergence: BTreeSet<String>,
    /// Where each pool with `nodes` puts them.
    pub placements: Vec<crate::placement::Decision>,
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

    /// Whether state holds a cluster's region the spec no longer lists
    /// (among `calls`): expanded again with them, it keeps their
    /// provider configurations.
    pub fn retires(&self, calls: &BTreeSet<String>) -> bool {
        self.clusters.iter().any(|c| {
            calls.iter().any(|call| {
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
        if !CLOUDS.iter().any(|c| c.name == name) {
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
    let mut diags = Diags::default();
    let mut expansion = Expansion::default();
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
            if let Some((expanded, mut c, mut p, mut r)) =
                cluster(b, &scope, &catalogs, recorded, &mut diags)
            {
                expansion.clusters.push(expanded);
                calls.append(&mut c);
                providers.append(&mut p);
                removed.append(&mut r);
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
        config::load_call(&dir, &mut call, sources, &caller, &mut diags);
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

type Expansions = (
    Expanded,
    Vec<ModuleCall>,
    Vec<Provider>,
    Vec<config::Removed>,
);

fn cluster(
    b: &Block,
    scope: &ConfigScope,
    catalogs: &Catalogs<'_>,
    recorded: &placement::Recorded<'_>,
    diags: &mut Diags,
) -> Option<Expansions> {
    let name = match b.labels.as_slice() {
        [(n, span)] if !valid_cluster_name(n) => {
            diags.push(diag(
                "Invalid cluster name",
                format!("{n:?} cannot name a cluster on every cloud: a name is 1 to 40 lowercase letters, digits and hyphens, starting with a letter and not ending with a hyphen (GKE's rule, the strictest of the clouds)."),
                *span,
            ));
            return None;
        }
        [(n, _)] => n.clone(),
        _ => {
            diags.push(diag(
                "Missing name for cluster",
                "A cluster block has one label, its name: cluster \"train\" { … }.",
                b.kind_span,
            ));
            return None;
        }
    };
    allowed(
        &b.body,
        &format!("cluster {name:?}"),
        &["clouds", "kubernetes_version", "allow_divergence", "prices"],
        &["network", "gpu_operator", "node_pool", "cloud"],
        diags,
    );
    let allow_divergence = divergence(b, diags);
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
    let mut pools: Vec<(String, &Block)> = Vec::new();
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
        allowed(
            &p.body,
            &format!("node_pool {pname:?}"),
            POOL_FIELDS,
            &["placement"],
            diags,
        );
        pool_rules(p, scope, diags);
        if let Some(w) = placement::wanted(p, scope, diags) {
            wanted.insert(pname.clone(), w);
        }
        pools.push((pname.clone(), p));
    }
    let cloud_blocks: Vec<&Block> = b.body.blocks.iter().filter(|x| x.kind == "cloud").collect();
    let mut declared = Vec::new();
    for c in &cloud_blocks {
        match c.labels.first() {
            Some((n, s)) if CLOUDS.iter().any(|k| k.name == n) => declared.push((n.clone(), *s)),
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
    let active = active_clouds(b, scope, &declared, diags);
    let mut expanded = Expanded {
        name: name.clone(),
        span: b.kind_span,
        clouds: Vec::new(),
        allow_divergence,
        placements: Vec::new(),
    };
    let mut calls = Vec::new();
    let mut built = Vec::new();
    let mut providers = Vec::new();
    let mut removed = Vec::new();
    // A cloud with a block but not in `clouds` keeps its provider
    // configurations, so what state still holds there can be deleted.
    // The objects inside a cluster the module created go with the
    // cluster: they are forgotten, not deleted one by one through an API
    // server that is about to disappear (and that nothing reaches any
    // more, its address being the removed module's output).
    let declared_block = |cloud: &str| -> Option<(&'static CloudKind, &Block)> {
        let kind = CLOUDS.iter().find(|k| k.name == cloud)?;
        let block = cloud_blocks
            .iter()
            .find(|c| c.labels.first().is_some_and(|(n, _)| n == cloud))?;
        Some((kind, block))
    };
    for (cloud, _) in declared
        .iter()
        .filter(|(c, _)| !active.iter().any(|(a, _)| a == c))
    {
        let Some((kind, block)) = declared_block(cloud) else {
            continue;
        };
        let call = format!("{name}_{cloud}");
        retire(kind, block, &call, None, &mut providers, &mut removed);
    }
    for (cloud, used_at) in active {
        let Some(kind) = CLOUDS.iter().find(|k| k.name == cloud) else {
            continue;
        };
        let Some(block) = cloud_blocks
            .iter()
            .find(|c| c.labels.first().is_some_and(|(n, _)| *n == cloud))
        else {
            diags.push(diag(
                "Missing cloud block",
                format!("cluster {name:?} runs on {cloud} but has no cloud {cloud:?} block to say where (its region, project or cluster)."),
                used_at,
            ));
            continue;
        };
        let parts = Parts {
            cluster: &name,
            body: &b.body,
            network,
            gpu_operator,
            pools: &pools,
            placed: &wanted,
        };
        for at in regions(kind, block, &name, scope, diags) {
            if let Some(b) = cloud_call(kind, block, &at, &parts, scope, catalogs, diags) {
                built.push(b);
            }
        }
    }
    // Regions state still holds clusters in but the spec no longer lists
    // (or whose cloud it dropped) keep their provider configurations, so
    // those clusters can be deleted where they are.
    for (cloud, _) in &declared {
        let Some((kind, block)) = declared_block(cloud) else {
            continue;
        };
        let prefix = format!("{name}_{cloud}_");
        for call in &recorded.calls {
            let Some(suffix) = call.strip_prefix(&prefix) else {
                continue;
            };
            if !built.iter().any(|b| b.cc.call == *call) {
                let region = suffix.replace('_', "-");
                retire(
                    kind,
                    block,
                    call,
                    Some(&region),
                    &mut providers,
                    &mut removed,
                );
            }
        }
    }
    let sites: Vec<&placement::Site> = built.iter().filter_map(|b| b.site.as_ref()).collect();
    for (pname, w) in &wanted {
        let Some((_, p)) = pools.iter().find(|(n, _)| n == pname) else {
            continue;
        };
        let d = placement::decide(&name, p, pname, w, &sites, catalogs, recorded, scope, diags);
        expanded.placements.push(d);
    }
    for b in built {
        let mut call = b.call;
        let pools = b
            .pools
            .into_iter()
            .map(|(pname, items, span)| {
                let items = placed_items(&b.cc.call, &pname, items, &wanted, &expanded, span);
                (pname, object(items, span))
            })
            .collect();
        call.inputs
            .push(attribute("node_pools", object(pools, b.cc.span)));
        calls.push(call);
        providers.extend(b.providers);
        expanded.clouds.push(b.cc);
    }
    Some((expanded, calls, providers, removed))
}

/// A cloud region the spec no longer builds a cluster in, whose objects
/// state may still hold: its cloud's provider configuration stays (in
/// `region` when it was one of a cloud block's `regions`), so they are
/// deleted there; the GPU Operator's objects inside the cluster are
/// forgotten with it rather than deleted through an API server about to
/// go.
fn retire(
    kind: &CloudKind,
    block: &Block,
    call: &str,
    region: Option<&str>,
    providers: &mut Vec<Provider>,
    removed: &mut Vec<config::Removed>,
) {
    providers.extend(cloud_providers(kind, block, call, false, region).0);
    if kind.created {
        let span = block.kind_span;
        removed.push(config::Removed {
            from: get_attr(
                get_attr(get_attr(name_expr("module", span), call), "module"),
                "gpu_operator",
            ),
            destroy: false,
            span,
        });
    }
}

/// One region of a cloud, with a cluster of its own from the cloud's
/// module.
struct Region {
    /// `train_aws`; `train_aws_us_west_2` for a region after the first.
    call: String,
    /// The module's `name`: the cluster's, and past the first region the
    /// region after it (IAM roles, GCP networks and service accounts,
    /// Azure resource groups are not regional: two clusters cannot share
    /// their names).
    name: String,
    /// The region and where it is written; `None` for a cloud without one.
    at: Option<(String, Span)>,
    /// Whether it comes from `regions` (then the module's and the
    /// provider's region are set to it).
    listed: bool,
    primary: bool,
}

/// The regions a cloud block asks for: its `regions` (or Azure's
/// `locations`) in order, else its one `region`.
fn regions(
    kind: &CloudKind,
    block: &Block,
    cluster: &str,
    scope: &ConfigScope,
    diags: &mut Diags,
) -> Vec<Region> {
    let call = format!("{cluster}_{}", kind.name);
    let one = kind.region.and_then(|r| block.body.attr(r));
    let Some(list) = kind.regions.and_then(|r| block.body.attr(r)) else {
        let at = one
            .and_then(|a| Some((known(scope, a, diags)?, a.expr.span)))
            .and_then(|(v, span)| Some((v.as_str()?.to_string(), span)));
        return vec![Region {
            call,
            name: cluster.to_string(),
            at,
            listed: false,
            primary: true,
        }];
    };
    let (one_name, many) = (kind.region.unwrap_or_default(), &list.name);
    if let Some(a) = one {
        diags.push(diag(
            &format!("Both {one_name} and {many}"),
            format!("cloud {:?} says {one_name} and {many}: {many} lists every region this cloud may run the cluster in, the first its primary, so {one_name} goes.", kind.name),
            a.span,
        ));
    }
    let names = known(scope, list, diags).and_then(|v| string_list(&v));
    let span = list.expr.span;
    let Some(names) = names.filter(|n| !n.is_empty()) else {
        diags.push(diag(
            &format!("Invalid {many}"),
            format!("{many} is a list of at least one region, such as [\"us-east-1\", \"us-west-2\"]: the first is the primary, the rest are tried in order when it has no capacity."),
            span,
        ));
        return Vec::new();
    };
    let mut out: Vec<Region> = Vec::new();
    for (i, region) in names.into_iter().enumerate() {
        let name = match i {
            0 => cluster.to_string(),
            _ => format!("{cluster}-{region}"),
        };
        let slug = region.replace('-', "_");
        let well_formed = !region.is_empty()
            && region
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !well_formed
            || out
                .iter()
                .any(|r| r.at.as_ref().is_some_and(|(x, _)| *x == region))
        {
            diags.push(diag(
                &format!("Invalid {many}"),
                format!("{region:?} is not a region to add: regions are lowercase letters, digits and hyphens, each listed once."),
                span,
            ));
            continue;
        }
        if !valid_cluster_name(&name) {
            diags.push(diag(
                "Cluster name too long for a second region",
                format!("The cluster in {region} is named {name:?} (the cluster's name, then its region, since some of what the module makes is named across regions), which is not a cluster name on every cloud: at most 40 lowercase letters, digits and hyphens. Shorten the cluster's name."),
                span,
            ));
            continue;
        }
        out.push(Region {
            call: match i {
                0 => call.clone(),
                _ => format!("{call}_{slug}"),
            },
            name,
            at: Some((region, span)),
            listed: true,
            primary: i == 0,
        });
    }
    out
}

/// A pool's module input on one cloud, with what its placement decides:
/// the place its nodes go gets `nodes`, the capacity type chosen and the
/// zones to leave out; elsewhere it stays at its minimum, on the first
/// capacity type it would try.
fn placed_items(
    call: &str,
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
    match d.chosen().filter(|c| c.call == call) {
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
        }
        None => {
            let first = w.capacity.first().copied().unwrap_or(Capacity::OnDemand);
            items.push(("capacity".into(), lit(Value::string(first.name()))));
        }
    }
    items
}

/// The spec's cloud-independent parts, as written.
struct Parts<'a> {
    cluster: &'a str,
    body: &'a Body,
    network: Option<&'a Body>,
    gpu_operator: Option<&'a Body>,
    pools: &'a [(String, &'a Block)],
    /// Pools with `nodes`, which their placement puts somewhere.
    placed: &'a BTreeMap<String, placement::Wanted>,
}

/// A pool's module input items (name, items, the pool block's span).
type PoolInput = (String, Vec<(String, Expr)>, Span);

/// One cloud's module call, before its pools are finished by placement.
struct Built<'k> {
    call: ModuleCall,
    providers: Vec<Provider>,
    cc: CloudCall,
    /// Each pool's module input items, by name.
    pools: Vec<PoolInput>,
    /// The cloud as a place for nodes, when it has a region and catalog.
    site: Option<placement::Site<'k>>,
}

fn cloud_call<'k>(
    kind: &'k CloudKind,
    block: &Block,
    at: &Region,
    parts: &Parts,
    scope: &ConfigScope,
    catalogs: &Catalogs<'_>,
    diags: &mut Diags,
) -> Option<Built<'k>> {
    let span = block.kind_span;
    let call_name = at.call.clone();
    let mut overrides = BTreeMap::new();
    let cloud_network = single(&block.body, "network", diags);
    let cloud_operator = single(&block.body, "gpu_operator", diags);
    part_rules(cloud_network, cloud_operator, scope, diags);
    let module_source = block.body.attr("module").and_then(|a| match &a.expr.kind {
        ExprKind::Literal(v) => v.as_str().map(|s| (s.to_string(), a.expr.span)),
        _ => {
            diags.push(diag(
                "Invalid module",
                "module is a literal path to the module to use for this cloud, such as \"./modules/aws\".",
                a.expr.span,
            ));
            None
        }
    });
    let mut inputs = vec![attribute("name", literal(Value::string(&at.name), span))];
    let version = block
        .body
        .attr("kubernetes_version")
        .inspect(|a| {
            overrides.insert((String::new(), "kubernetes_version".into()), a.span);
        })
        .or_else(|| parts.body.attr("kubernetes_version"));
    if let Some(a) = version {
        inputs.push(attribute("kubernetes_version", a.expr.clone()));
    }
    if kind.created && parts.network.is_none() && cloud_network.is_none() {
        diags.push(diag(
            "Missing network block",
            format!(
                "cluster {:?} runs on {}, where strata makes the cluster's network: say its address range with network {{ cidr = \"10.40.0.0/16\" }} in the cluster (or in cloud {:?}).",
                parts.cluster, kind.name, kind.name
            ),
            span,
        ));
    }
    if parts.network.is_some() || cloud_network.is_some() {
        let attrs = merged(parts.network, cloud_network);
        inputs.push(attribute(
            "network",
            object(
                attrs
                    .iter()
                    .map(|a| (a.name.clone(), a.expr.clone()))
                    .collect(),
                span,
            ),
        ));
    }
    if let Some(over) = cloud_operator {
        for a in &over.attrs {
            let field = match a.name.as_str() {
                "version" => "gpu_operator",
                other => other,
            };
            overrides.insert((String::new(), field.to_string()), a.span);
        }
    }
    if parts.gpu_operator.is_some() || cloud_operator.is_some() {
        let attrs = merged(parts.gpu_operator, cloud_operator);
        inputs.push(attribute(
            "gpu_operator",
            object(
                attrs
                    .iter()
                    .map(|a| (a.name.clone(), a.expr.clone()))
                    .collect(),
                span,
            ),
        ));
    }
    // Pools: the spec's, each with this cloud's overrides laid over it and
    // the instance type the catalog gives for its GPU shape.
    let cloud_pools: Vec<&Block> = block
        .body
        .blocks
        .iter()
        .filter(|b| b.kind == "node_pool")
        .collect();
    for cp in &cloud_pools {
        let known_pool = cp
            .labels
            .first()
            .is_some_and(|(n, _)| parts.pools.iter().any(|(p, _)| p == n));
        if !known_pool {
            diags.push(diag(
                "Unknown node pool",
                format!(
                    "cloud {:?} overrides a node pool the cluster does not declare; its pools are {}.",
                    kind.name,
                    parts
                        .pools
                        .iter()
                        .map(|(p, _)| p.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                cp.kind_span,
            ));
        }
    }
    let region = at.at.clone();
    let mut pool_items = Vec::new();
    let mut instance_types = BTreeMap::new();
    for (pname, pblock) in parts.pools {
        let over = cloud_pools
            .iter()
            .find(|c| c.labels.first().is_some_and(|(n, _)| n == pname))
            .map(|c| &c.body);
        if let Some(o) = over {
            allowed(
                o,
                &format!("cloud {:?} node_pool {pname:?}", kind.name),
                POOL_FIELDS,
                &[],
                diags,
            );
            for a in &o.attrs {
                overrides.insert((pname.clone(), a.name.clone()), a.span);
            }
        }
        let attrs = merged(Some(&pblock.body), over);
        let mut items: Vec<(String, Expr)> = attrs
            .iter()
            .filter(|a| !SPEC_ONLY.contains(&a.name.as_str()))
            .map(|a| (a.name.clone(), a.expr.clone()))
            .collect();
        let region = region.as_ref().map(|(r, span)| (r.as_str(), *span));
        let chosen = match attrs.iter().find(|a| a.name == "instance_type") {
            Some(a) => known(scope, a, diags).and_then(|v| v.as_str().map(str::to_string)),
            None => {
                let t = instance_type(kind, &attrs, region, pblock, scope, catalogs, diags);
                if let Some(t) = &t {
                    items.push((
                        "instance_type".into(),
                        literal(Value::string(t), pblock.kind_span),
                    ));
                }
                t
            }
        };
        // The cloud block's cap is over the spec's pool's, under the cloud
        // block's own override of the pool.
        let mut capped = attrs.clone();
        if let Some(cap) = block
            .body
            .attr(CAP)
            .filter(|_| over.is_none_or(|o| o.attr(CAP).is_none()))
        {
            capped.retain(|a| a.name != CAP);
            capped.push(cap);
        }
        if let (Some(t), Some((r, _))) = (&chosen, region) {
            let pool = Pool {
                name: pname,
                attrs: &capped,
                cloud: kind,
            };
            // A placed pool's cap rules out candidates instead.
            if !parts.placed.contains_key(pname) {
                price_cap(&pool, t, r, scope, catalogs, diags);
            }
        }
        if let Some(t) = chosen {
            instance_types.insert(pname.clone(), t);
        }
        pool_items.push((pname.clone(), items, pblock.kind_span));
    }
    // The cloud block's own attributes: the provider's arguments configure
    // the provider; the rest are the module's inputs.
    let (_, pargs) = kind.provider;
    for a in &block.body.attrs {
        if matches!(a.name.as_str(), "module" | "kubernetes_version") || a.name == CAP {
            continue;
        }
        // A listed region replaces `region` (given below); `zones` are
        // the primary region's.
        let regional =
            kind.region == Some(a.name.as_str()) || kind.regions == Some(a.name.as_str());
        if (at.listed && regional) || (!at.primary && a.name == "zones") {
            continue;
        }
        // Region and project are the module's business too (zones,
        // resource names); anything the provider does not take is.
        if !pargs.contains(&a.name.as_str())
            || kind.region == Some(a.name.as_str())
            || a.name == "project"
        {
            inputs.push(a.clone());
        }
    }
    for b in &block.body.blocks {
        if !matches!(b.kind.as_str(), "network" | "gpu_operator" | "node_pool") {
            diags.push(diag(
                "Unsupported block type",
                format!(
                    "Blocks of type {:?} are not expected in cloud {:?}; it takes network, gpu_operator and node_pool blocks that override the cluster's.",
                    b.kind, kind.name
                ),
                b.kind_span,
            ));
        }
    }
    if let (true, Some(r), Some((region, rspan))) = (at.listed, kind.region, &at.at) {
        inputs.push(attribute(r, literal(Value::string(region), *rspan)));
    }
    let listed = at
        .listed
        .then(|| at.at.as_ref().map(|(r, _)| r.as_str()))
        .flatten();
    let (providers, mapping) = cloud_providers(kind, block, &call_name, true, listed);
    let source = module_source
        .as_ref()
        .map(|(s, _)| s.clone())
        .unwrap_or_else(|| format!("{}/{}", config::EMBEDDED, kind.name));
    let call = ModuleCall {
        name: call_name.clone(),
        span,
        source: source.clone(),
        source_span: module_source.as_ref().map_or(span, |(_, s)| *s),
        version: None,
        count: None,
        for_each: None,
        depends_on: Vec::new(),
        inputs,
        providers: mapping,
        module: Box::default(),
    };
    let site = region
        .filter(|_| catalogs.of(kind).is_some())
        .map(|(r, _)| placement::Site {
            kind,
            call: call_name.clone(),
            zones: block
                .body
                .attr("zones")
                .filter(|_| at.primary)
                .and_then(|a| known(scope, a, diags))
                .and_then(|v| string_list(&v))
                .unwrap_or_else(|| (kind.zones)(&r)),
            region: r,
            instance_types,
        });
    let cc = CloudCall {
        cloud: kind.name.to_string(),
        call: call_name,
        span,
        overrides,
        module: module_source.map(|(s, _)| s),
        further_region: (!at.primary)
            .then(|| at.at.as_ref().map(|(r, _)| r.clone()))
            .flatten(),
    };
    Some(Built {
        call,
        providers,
        cc,
        pools: pool_items,
        site,
    })
}
