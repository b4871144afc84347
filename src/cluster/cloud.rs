//! One cloud of a cluster at one of its regions: the module call built
//! from the spec's parts with the cloud block's overrides laid over them,
//! each pool's instance type and price cap, the cloud's own arguments
//! split between its provider and its module, and the place it offers a
//! placed pool's nodes.

use super::clouds::{Catalogs, CloudKind};
use super::pricing::{instance_type, price_cap, Pool};
use super::providers::cloud_providers;
use super::rules::{allowed, known, part_rules, single};
use super::syntax::{attribute, literal, merged, object};
use super::{diag, placement, runtime, string_list, CloudCall, CAP, POOL_FIELDS, SPEC_ONLY};
use crate::config::{self, ConfigScope, ModuleCall, Provider};
use crate::diag::{Diags, Span};
use crate::lang::value::Value;
use crate::syntax::{Attribute, Block, Body, Expr, ExprKind};
use std::collections::BTreeMap;
use strata_provider::billing::Capacity;

/// The spec's cloud-independent parts, as written.
pub(super) struct Parts<'a> {
    pub cluster: &'a str,
    pub body: &'a Body,
    pub network: Option<&'a Body>,
    pub gpu_operator: Option<&'a Body>,
    /// Kueue, KubeRay and metrics (`runtime.rs`).
    pub runtime: Option<&'a Body>,
    pub pools: &'a [(String, &'a Block)],
    /// Pools with `nodes`, which their placement puts somewhere.
    pub placed: &'a BTreeMap<String, placement::Wanted>,
}

/// One region of a cloud, with a cluster of its own from the cloud's
/// module.
pub(super) struct Region {
    /// `train_aws`; `train_aws_us_west_2` for a region after the first.
    pub call: String,
    /// The module's `name`: the cluster's, and past the first region the
    /// region after it (IAM roles, GCP networks and service accounts,
    /// Azure resource groups are not regional: two clusters cannot share
    /// their names).
    pub name: String,
    /// The region and where it is written; `None` for a cloud without one.
    pub at: Option<(String, Span)>,
    /// Whether it comes from `regions` (then the module's and the
    /// provider's region are set to it).
    pub listed: bool,
    pub primary: bool,
}

/// A cloud block at one of its regions, with what its call is built from.
pub(super) struct CloudAt<'a, 'k, 's, 'c> {
    pub kind: &'k CloudKind,
    pub block: &'a Block,
    pub at: &'a Region,
    pub parts: &'a Parts<'a>,
    pub scope: &'a ConfigScope<'s>,
    pub catalogs: &'a Catalogs<'c>,
}

/// A pool's module input on one cloud, before placement finishes it.
pub(super) struct PoolInput {
    pub name: String,
    pub items: Vec<(String, Expr)>,
    /// The spec's `node_pool` block.
    pub span: Span,
}

/// One cloud's module call, before its pools are finished by placement.
pub(super) struct Built<'k> {
    pub call: ModuleCall,
    pub providers: Vec<Provider>,
    pub cc: CloudCall,
    pub pools: Vec<PoolInput>,
    /// The cloud as a place for nodes, when it has a region and catalog.
    pub site: Option<placement::Site<'k>>,
}

/// Where a cloud block sets a field the portability check compares, by
/// (pool, field); pool `""` for cluster-wide fields.
type Overrides = BTreeMap<(String, String), Span>;

/// The pools' inputs on one cloud, and the instance type and capacity
/// type each runs on.
struct Pools {
    inputs: Vec<PoolInput>,
    instance_types: BTreeMap<String, String>,
    capacities: BTreeMap<String, Capacity>,
}

/// One pool on one cloud: its module input, the instance type it runs on
/// (none when the catalog has none) and its capacity type, the cloud
/// block's override over the spec's.
struct PoolOnCloud {
    input: PoolInput,
    instance_type: Option<String>,
    capacity: Capacity,
}

pub(super) fn cloud_call<'k>(c: &CloudAt<'_, 'k, '_, '_>, diags: &mut Diags) -> Option<Built<'k>> {
    let span = c.block.kind_span;
    let mut overrides = Overrides::new();
    let module_source = module_source(c.block, diags);
    let mut inputs = spec_inputs(c, &mut overrides, diags);
    let pools = pools(c, &mut overrides, diags);
    inputs.extend(module_arguments(c));
    unsupported_blocks(c, diags);
    let listed = c.at.listed.then_some(c.at.at.as_ref()).flatten();
    if let (Some(r), Some((region, rspan))) = (c.kind.region, listed) {
        inputs.push(attribute(r, literal(Value::string(region), *rspan)));
    }
    let region = listed.map(|(r, _)| r.as_str());
    let (providers, mapping) = cloud_providers(c.kind, c.block, &c.at.call, true, region);
    let source = module_source
        .as_ref()
        .map(|(s, _)| s.clone())
        .unwrap_or_else(|| format!("{}/{}", config::EMBEDDED, c.kind.name));
    let call = ModuleCall {
        name: c.at.call.clone(),
        span,
        source,
        source_span: module_source.as_ref().map_or(span, |(_, s)| *s),
        source_expr: None,
        version: None,
        version_expr: None,
        count: None,
        for_each: None,
        depends_on: Vec::new(),
        inputs,
        providers: mapping,
        module: Box::default(),
        ignore_nested_deprecations: false,
        enabled: None,
    };
    let site = site(c, (pools.instance_types, pools.capacities), diags);
    let cc = CloudCall {
        cloud: c.kind.name.to_string(),
        call: c.at.call.clone(),
        span,
        overrides,
        module: module_source.map(|(s, _)| s),
        further_region: (!c.at.primary)
            .then(|| c.at.at.as_ref().map(|(r, _)| r.clone()))
            .flatten(),
    };
    Some(Built {
        call,
        providers,
        cc,
        pools: pools.inputs,
        site,
    })
}

/// The cloud block's `module`, a literal path.
fn module_source(block: &Block, diags: &mut Diags) -> Option<(String, Span)> {
    let a = block.body.attr("module")?;
    match &a.expr.kind {
        ExprKind::Literal(v) => v.as_str().map(|s| (s.to_string(), a.expr.span)),
        _ => {
            diags.push(diag(
                "Invalid module",
                "module is a literal path to the module to use for this cloud, such as \"./modules/aws\".",
                a.expr.span,
            ));
            None
        }
    }
}

/// The module's inputs from the spec's cluster-wide parts, the cloud
/// block's overrides laid over them: `name`, `kubernetes_version`,
/// `network`, `gpu_operator`.
fn spec_inputs(
    c: &CloudAt<'_, '_, '_, '_>,
    overrides: &mut Overrides,
    diags: &mut Diags,
) -> Vec<Attribute> {
    let (kind, span) = (c.kind, c.block.kind_span);
    let cloud_network = single(&c.block.body, "network", diags);
    let cloud_operator = single(&c.block.body, "gpu_operator", diags);
    part_rules(cloud_network, cloud_operator, c.scope, diags);
    let mut inputs = vec![attribute("name", literal(Value::string(&c.at.name), span))];
    let own_version = c.block.body.attr("kubernetes_version");
    if let Some(a) = own_version {
        overrides.insert((String::new(), "kubernetes_version".into()), a.span);
    }
    if let Some(a) = own_version.or_else(|| c.parts.body.attr("kubernetes_version")) {
        inputs.push(attribute("kubernetes_version", a.expr.clone()));
    }
    if kind.created && c.parts.network.is_none() && cloud_network.is_none() {
        diags.push(diag(
            "Missing network block",
            format!(
                "cluster {:?} runs on {}, where strata makes the cluster's network: say its address range with network {{ cidr = \"10.40.0.0/16\" }} in the cluster (or in cloud {:?}).",
                c.parts.cluster, kind.name, kind.name
            ),
            span,
        ));
    }
    for a in cloud_operator.iter().flat_map(|o| &o.attrs) {
        let field = match a.name.as_str() {
            "version" => "gpu_operator",
            other => other,
        };
        overrides.insert((String::new(), field.to_string()), a.span);
    }
    let network = part_input("network", c.parts.network, cloud_network, span);
    let operator = part_input("gpu_operator", c.parts.gpu_operator, cloud_operator, span);
    inputs.extend(network.into_iter().chain(operator));
    if let Some(spec_runtime) = c.parts.runtime {
        let cloud_runtime = single(&c.block.body, "runtime", diags);
        for a in cloud_runtime.iter().flat_map(|r| &r.attrs) {
            overrides.insert((String::new(), a.name.clone()), a.span);
        }
        runtime::checkpoints_on(c.kind.name, spec_runtime, diags);
        inputs.push(runtime::input(spec_runtime, cloud_runtime, span));
    }
    inputs
}

/// A part of the spec (`network`, `gpu_operator`) as one object input,
/// the cloud's block over the cluster's; none when neither has it.
fn part_input(
    name: &str,
    spec: Option<&Body>,
    cloud: Option<&Body>,
    span: Span,
) -> Option<Attribute> {
    if spec.is_none() && cloud.is_none() {
        return None;
    }
    let items = merged(spec, cloud)
        .iter()
        .map(|a| (a.name.clone(), a.expr.clone()))
        .collect();
    Some(attribute(name, object(items, span)))
}

/// The spec's pools, each with this cloud's overrides laid over it and
/// the instance type the catalog gives for its GPU shape.
fn pools(c: &CloudAt<'_, '_, '_, '_>, overrides: &mut Overrides, diags: &mut Diags) -> Pools {
    let cloud_pools: Vec<&Block> = c
        .block
        .body
        .blocks
        .iter()
        .filter(|b| b.kind == "node_pool")
        .collect();
    unknown_pools(c, &cloud_pools, diags);
    let mut out = Pools {
        inputs: Vec::new(),
        instance_types: BTreeMap::new(),
        capacities: BTreeMap::new(),
    };
    for (name, spec) in c.parts.pools {
        let over = cloud_pools
            .iter()
            .find(|p| p.labels.first().is_some_and(|(n, _)| n == name))
            .map(|p| &p.body);
        if let Some(o) = over {
            let what = format!("cloud {:?} node_pool {name:?}", c.kind.name);
            allowed(o, &what, POOL_FIELDS, &[], diags);
            for a in &o.attrs {
                overrides.insert((name.clone(), a.name.clone()), a.span);
            }
        }
        let on = pool(c, (name, spec), over, diags);
        if let Some(t) = on.instance_type {
            out.instance_types.insert(name.clone(), t);
        }
        out.capacities.insert(name.clone(), on.capacity);
        out.inputs.push(on.input);
    }
    out
}

/// A cloud block's `node_pool` must override a pool the spec declares.
fn unknown_pools(c: &CloudAt<'_, '_, '_, '_>, cloud_pools: &[&Block], diags: &mut Diags) {
    let declared = |n: &String| c.parts.pools.iter().any(|(p, _)| p == n);
    for cp in cloud_pools {
        if cp.labels.first().is_some_and(|(n, _)| declared(n)) {
            continue;
        }
        let names: Vec<&str> = c.parts.pools.iter().map(|(p, _)| p.as_str()).collect();
        diags.push(diag(
            "Unknown node pool",
            format!(
                "cloud {:?} overrides a node pool the cluster does not declare; its pools are {}.",
                c.kind.name,
                names.join(", ")
            ),
            cp.kind_span,
        ));
    }
}

/// One pool on this cloud: its input, the instance type it runs on
/// (given, or the catalog's for its GPU shape), checked against its cap,
/// and its capacity type.
fn pool(
    c: &CloudAt<'_, '_, '_, '_>,
    (name, spec): (&String, &Block),
    over: Option<&Body>,
    diags: &mut Diags,
) -> PoolOnCloud {
    let attrs = merged(Some(&spec.body), over);
    let mut items: Vec<(String, Expr)> = attrs
        .iter()
        .filter(|a| !SPEC_ONLY.contains(&a.name.as_str()))
        .map(|a| (a.name.clone(), a.expr.clone()))
        .collect();
    let region = c.at.at.as_ref().map(|(r, span)| (r.as_str(), *span));
    let chosen = match attrs.iter().find(|a| a.name == "instance_type") {
        Some(a) => known(c.scope, a, diags).and_then(|v| v.as_str().map(str::to_string)),
        None => {
            let t = instance_type(c.kind, &attrs, region, spec, c.scope, c.catalogs, diags);
            if let Some(t) = &t {
                let typed = literal(Value::string(t), spec.kind_span);
                items.push(("instance_type".into(), typed));
            }
            t
        }
    };
    // The cloud block's cap is over the spec's pool's, under the cloud
    // block's own override of the pool.
    let capacity = Pool {
        name,
        attrs: &attrs,
        cloud: c.kind,
    }
    .capacity(c.scope);
    let mut capped = attrs.clone();
    let cloud_cap = c.block.body.attr(CAP);
    if let Some(cap) = cloud_cap.filter(|_| over.is_none_or(|o| o.attr(CAP).is_none())) {
        capped.retain(|a| a.name != CAP);
        capped.push(cap);
    }
    // A placed pool's cap rules out candidates instead.
    if let (Some(t), Some((r, _)), false) = (&chosen, region, c.parts.placed.contains_key(name)) {
        let pool = Pool {
            name,
            attrs: &capped,
            cloud: c.kind,
        };
        price_cap(&pool, t, r, c.scope, c.catalogs, diags);
    }
    if c.parts.runtime.is_some() {
        runtime::labelled(&mut items, name, spec.kind_span);
    }
    let input = PoolInput {
        name: name.clone(),
        items,
        span: spec.kind_span,
    };
    PoolOnCloud {
        input,
        instance_type: chosen,
        capacity,
    }
}

/// The cloud block's own attributes that are the module's inputs: the
/// provider's arguments configure the provider, the rest go to the module.
fn module_arguments(c: &CloudAt<'_, '_, '_, '_>) -> Vec<Attribute> {
    let (kind, at) = (c.kind, c.at);
    let (_, provider_args) = kind.provider;
    let mut out = Vec::new();
    for a in &c.block.body.attrs {
        if matches!(a.name.as_str(), "module" | "kubernetes_version") || a.name == CAP {
            continue;
        }
        // A listed region replaces `region` (given by the caller); `zones`
        // are the primary region's.
        let regional =
            kind.region == Some(a.name.as_str()) || kind.regions == Some(a.name.as_str());
        if (at.listed && regional) || (!at.primary && a.name == "zones") {
            continue;
        }
        // Region and project are the module's business too (zones,
        // resource names); anything the provider does not take is.
        if !provider_args.contains(&a.name.as_str())
            || kind.region == Some(a.name.as_str())
            || a.name == "project"
        {
            out.push(a.clone());
        }
    }
    out
}

/// A cloud block holds only the blocks that override the cluster's.
fn unsupported_blocks(c: &CloudAt<'_, '_, '_, '_>, diags: &mut Diags) {
    for b in &c.block.body.blocks {
        if b.kind == "runtime" && c.parts.runtime.is_some() {
            let what = format!("cloud {:?} runtime", c.kind.name);
            if let Some(spec) = c.parts.runtime {
                runtime::cloud_override(&b.body, &what, spec, diags);
            }
        } else if !matches!(b.kind.as_str(), "network" | "gpu_operator" | "node_pool") {
            diags.push(diag(
                "Unsupported block type",
                format!(
                    "Blocks of type {:?} are not expected in cloud {:?}; it takes network, gpu_operator, node_pool and (when the cluster has one) runtime blocks that override the cluster's.",
                    b.kind, c.kind.name
                ),
                b.kind_span,
            ));
        }
    }
}

/// The cloud at this region as a place for placed pools' nodes, when it
/// has a region and a GPU catalog.
fn site<'k>(
    c: &CloudAt<'_, 'k, '_, '_>,
    (instance_types, capacities): (BTreeMap<String, String>, BTreeMap<String, Capacity>),
    diags: &mut Diags,
) -> Option<placement::Site<'k>> {
    let (region, _) = c.at.at.clone()?;
    c.catalogs.of(c.kind)?;
    let zones = c
        .block
        .body
        .attr("zones")
        .filter(|_| c.at.primary)
        .and_then(|a| known(c.scope, a, diags))
        .and_then(|v| string_list(&v))
        .unwrap_or_else(|| (c.kind.zones)(&region));
    Some(placement::Site {
        kind: c.kind,
        call: c.at.call.clone(),
        zones,
        region,
        instance_types,
        capacities,
    })
}
