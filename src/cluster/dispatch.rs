//! MultiKueue across the cluster's clouds (`runtime { multikueue { … } }`):
//! every cluster the spec makes is a worker, and one manager, which cannot
//! be a worker itself, takes the jobs and sends each to the first worker
//! in its order with room. The manager is a small CPU-only cluster strata
//! makes in a named cloud and region (`manager { cloud = "aws", region =
//! "us-east-1" }`), or an existing cluster (`manager { cloud =
//! "kubernetes", config_path = … }`).
//!
//! The workers' order is the placement's where a pool is placed (its
//! `placement.order`, else cheapest first, places over the cap left out),
//! else each worker's cheapest pool by the GPU-hour, from the same prices
//! the cost table uses. The modules do the rest (modules/runtime's
//! multikueue.tf): the workers' service accounts and rotated tokens, the
//! manager's kubeconfig Secrets, MultiKueueClusters, MultiKueueConfig,
//! AdmissionCheck and queues.

use super::cloud::{cloud_call, Built, CloudAt, Parts, Region};
use super::clouds::{kind, Catalogs, CloudKind};
use super::rules::{allowed, known, single};
use super::syntax::{attribute, get_attr, literal, name_expr, object};
use super::{diag, runtime};
use crate::config::ConfigScope;
use crate::diag::{Diags, Span};
use crate::lang::value::Value;
use crate::placement::{LeftOut, Worker};
use crate::syntax::{Attribute, Block, Body, Expr};
use std::collections::BTreeMap;
use strata_provider::catalog::quote;
use strata_provider::money::Usd;

/// How long a worker's token lives by default: 30 days.
const ROTATE_AFTER_MINUTES: u64 = 30 * 24 * 60;

/// What the manager block may set besides its cloud's own arguments: the
/// size of its one CPU pool.
const MANAGER_POOL: &[&str] = &["instance_type", "nodes"];

/// The spec's `multikueue` block, read.
pub(super) struct MultiKueue<'b> {
    manager: Option<&'b Block>,
    rotate_after_minutes: u64,
}

/// The runtime's `multikueue` block, checked; none when it has none.
pub(super) fn read<'b>(
    runtime: &'b Body,
    scope: &ConfigScope,
    diags: &mut Diags,
) -> Option<MultiKueue<'b>> {
    single(runtime, "multikueue", diags)?;
    let block = runtime.blocks.iter().find(|b| b.kind == "multikueue")?;
    allowed(
        &block.body,
        "runtime multikueue",
        &["rotate_after"],
        &["manager"],
        diags,
    );
    single(&block.body, "manager", diags);
    let manager = block.body.blocks.iter().find(|b| b.kind == "manager");
    if manager.is_none() {
        diags.push(diag(
            "Missing manager block",
            "MultiKueue needs a manager, which cannot be one of its workers: manager { cloud = \"aws\", region = \"us-east-1\" } makes a small CPU-only cluster for it; manager { cloud = \"kubernetes\", config_path = \"~/.kube/config\", config_context = \"…\" } uses one you run.",
            block.kind_span,
        ));
    }
    let rotate_after_minutes = block
        .body
        .attr("rotate_after")
        .and_then(|a| minutes(scope, a, diags))
        .unwrap_or(ROTATE_AFTER_MINUTES);
    Some(MultiKueue {
        manager,
        rotate_after_minutes,
    })
}

/// `rotate_after`: days (`30d`) or a duration (`720h`, `90m`), at least a
/// minute, in whole minutes.
fn minutes(scope: &ConfigScope, a: &Attribute, diags: &mut Diags) -> Option<u64> {
    let v = known(scope, a, diags)?;
    let text = v.as_str().unwrap_or_default();
    let secs = match text.strip_suffix('d').map(str::parse::<u64>) {
        Some(Ok(days)) => Some(days.saturating_mul(86_400)),
        _ => strata_provider::wait::parse_duration(text).map(|d| d.as_secs()),
    };
    match secs.map(|s| s / 60).filter(|m| *m >= 1) {
        Some(m) => Some(m),
        None => {
            diags.push(diag(
                "Invalid rotate_after",
                "rotate_after is how old a worker's token may grow before apply replaces it: days such as \"30d\", or a duration such as \"720h\", at least a minute.",
                a.expr.span,
            ));
            None
        }
    }
}

/// The worker inputs every cloud's call gets: its part in MultiKueue, and
/// where the manager reaches an existing cluster's API server.
pub(super) fn worker_inputs(mk: &MultiKueue<'_>, b: &mut Built<'_>, block: &Block) {
    let span = b.cc.span;
    let role = vec![
        ("role".into(), literal(Value::string("worker"), span)),
        (
            "rotate_after_minutes".into(),
            literal(Value::int(mk.rotate_after_minutes as i64), span),
        ),
    ];
    b.call
        .inputs
        .push(attribute("multikueue", object(role, span)));
    if b.cc.cloud == "kubernetes" {
        for (from, to) in [
            ("host", "endpoint"),
            ("config_path", "kubeconfig_path"),
            ("config_context", "kubeconfig_context"),
        ] {
            if let Some(a) = block.body.attr(from) {
                b.call.inputs.push(attribute(to, a.expr.clone()));
            }
        }
    }
}

/// The worker's MultiKueueCluster name: the cluster's name, its cloud and
/// its region (`train-aws-us-east-1`; `train-kubernetes` for an existing
/// cluster).
pub(super) fn worker_name(cluster: &str, b: &Built<'_>) -> String {
    match &b.site {
        Some(s) => format!("{cluster}-{}-{}", b.cc.cloud, s.region),
        None => format!("{cluster}-{}", b.cc.cloud),
    }
}

/// The workers in the order jobs try them, and those left out.
pub(super) fn order(
    cluster: &str,
    built: &[Built<'_>],
    pools: &[(String, &Block)],
    placements: &[crate::placement::Decision],
    (scope, catalogs): (&ConfigScope, &Catalogs<'_>),
) -> (Vec<Worker>, Vec<LeftOut>) {
    let mut workers: Vec<Worker> = built
        .iter()
        .map(|b| Worker {
            name: worker_name(cluster, b),
            call: b.cc.call.clone(),
            gpu_hour: cheapest(b, pools, scope, catalogs),
        })
        .collect();
    let mut left_out = Vec::new();
    match placements.first() {
        // A placed pool orders the places it may go: its workers in that
        // order, those it may not go to (over the cap) left out.
        Some(d) => {
            let rank = |call: &str| d.candidates.iter().position(|c| c.call == call);
            let (placed, rest): (Vec<Worker>, Vec<Worker>) =
                workers.into_iter().partition(|w| rank(&w.call).is_some());
            for w in rest {
                let why = d
                    .skipped
                    .iter()
                    .find(|s| s.candidate.call == w.call)
                    .map_or(
                        "the placement of its pool never goes there".to_string(),
                        |s| s.why.clone(),
                    );
                left_out.push(LeftOut { worker: w, why });
            }
            workers = placed;
            workers.sort_by_key(|w| rank(&w.call));
        }
        // Cheapest first; a worker nothing prices goes last.
        None => workers.sort_by_key(|w| (w.gpu_hour.is_none(), w.gpu_hour)),
    }
    (workers, left_out)
}

/// A worker's cheapest pool by the GPU-hour, as its capacity type says.
fn cheapest(
    b: &Built<'_>,
    pools: &[(String, &Block)],
    scope: &ConfigScope,
    catalogs: &Catalogs<'_>,
) -> Option<Usd> {
    let site = b.site.as_ref()?;
    pools
        .iter()
        .filter_map(|(name, p)| {
            let instance_type = site.instance_types.get(name)?;
            let capacity = *site.capacities.get(name)?;
            let gpus = p
                .body
                .attr("gpus_per_node")
                .and_then(|a| scope.evaluator().eval(&a.expr).ok())
                .and_then(|v| v.unmarked().as_number().and_then(|n| n.to_i64()))
                .unwrap_or(8)
                .max(1) as u32;
            let q = quote(
                catalogs.of(site.kind),
                &catalogs.prices,
                instance_type,
                &site.region,
                capacity,
            );
            q.ok()?.node_hour.per(gpus)
        })
        .min()
}

/// What the manager's call is built from besides the spec.
pub(super) struct ManagerOf<'a, 'b> {
    pub cluster: &'a str,
    pub mk: &'a MultiKueue<'b>,
    pub parts: &'a Parts<'a>,
    pub cloud_blocks: &'a [&'b Block],
    pub workers: &'a [Worker],
    /// The first worker's pools (labels, taints, sizes): the manager's
    /// flavours.
    pub pools: Expr,
    /// Where state says the manager runs (`aws us-east-1`), if it does.
    pub was: Option<&'a str>,
}

/// The manager's module call: a cluster of its own (`<cluster>_manager`)
/// from its cloud's module, with no GPU pools, a CPU pool for Kueue, and
/// MultiKueue's manager objects over the workers in order.
pub(super) fn manager<'k>(
    m: &ManagerOf<'_, '_>,
    scope: &ConfigScope,
    catalogs: &Catalogs<'_>,
    diags: &mut Diags,
) -> Option<Built<'k>> {
    let block = m.mk.manager?;
    let (kind, cloud_span) = manager_cloud(block, scope, diags)?;
    let what = "the MultiKueue manager";
    allowed(&block.body, what, &manager_fields(kind), &[], diags);
    let call = manager_call(m.cluster);
    let name = format!("{}-manager", m.cluster);
    let body = manager_body(kind, block, m.cloud_blocks);
    if !kind.created {
        not_a_worker(block, m, scope, diags);
    }
    let region = kind
        .region
        .and_then(|r| body.attr(r))
        .and_then(|a| Some((known(scope, a, diags)?.as_str()?.to_string(), a.expr.span)));
    if let Some(was) = m.was {
        let (now, span) = match &region {
            Some((r, span)) => (format!("{} {r}", kind.name), *span),
            None => (kind.name.to_string(), cloud_span),
        };
        moved_manager(m.cluster, was, &now, span, diags);
    }
    if kind.created && region.is_none() {
        diags.push(diag(
            "Missing manager region",
            format!(
                "The manager is a cluster strata makes on {}: say where with {} = \"…\".",
                kind.name,
                kind.region.unwrap_or("region")
            ),
            cloud_span,
        ));
        return None;
    }
    let synthetic = Block {
        kind: "cloud".into(),
        kind_span: block.kind_span,
        labels: vec![(kind.name.to_string(), cloud_span)],
        body,
        span: block.span,
    };
    let at = Region {
        call,
        name,
        listed: region.is_some(),
        at: region,
        primary: true,
    };
    let empty = BTreeMap::new();
    let runtime = m.parts.runtime.map(runtime::without_checkpoints);
    let parts = Parts {
        pools: &[],
        placed: &empty,
        runtime: runtime.as_ref(),
        ..*m.parts
    };
    let c = CloudAt {
        kind,
        block: &synthetic,
        at: &at,
        parts: &parts,
        scope,
        catalogs,
    };
    let mut b = cloud_call(&c, diags)?;
    b.site = None;
    b.call.inputs.extend(manager_inputs(m, block.kind_span));
    if kind.created {
        b.call
            .inputs
            .push(system_pool(Some(block), block.kind_span));
    }
    Some(b)
}

/// What a manager block may say on `kind`: its cloud, the cloud's own
/// arguments (a cloud block's), and on a cloud strata makes clusters on,
/// its CPU pool's size.
fn manager_fields(kind: &CloudKind) -> Vec<&'static str> {
    let (_, provider_args) = kind.provider;
    let mut fields = vec!["cloud"];
    fields.extend(provider_args);
    fields.extend(kind.region.iter().chain(&kind.regions).copied());
    if kind.created {
        fields.extend(["zones"].iter().chain(MANAGER_POOL));
    }
    if kind.name == "aws" {
        fields.extend(["node_image_owners", "node_image_name"]);
    }
    fields.sort_unstable();
    fields.dedup();
    fields
}

/// The manager block's cloud.
fn manager_cloud(
    block: &Block,
    scope: &ConfigScope,
    diags: &mut Diags,
) -> Option<(&'static CloudKind, Span)> {
    let Some(a) = block.body.attr("cloud") else {
        diags.push(diag(
            "Missing manager cloud",
            "Say where the manager runs: cloud = \"aws\" (or gcp, azure: a small cluster strata makes), or \"kubernetes\" (one you run).",
            block.kind_span,
        ));
        return None;
    };
    let name = known(scope, a, diags)?;
    let name = name.as_str().unwrap_or_default();
    match kind(name) {
        Some(k) => Some((k, a.expr.span)),
        None => {
            diags.push(diag(
                "Unknown cloud",
                format!("{name:?} is not a cloud strata runs a MultiKueue manager on; the clouds are aws, gcp, azure and kubernetes (an existing cluster)."),
                a.expr.span,
            ));
            None
        }
    }
}

/// An existing cluster as the manager must not be the spec's existing
/// cluster, which is a worker: MultiKueue cannot dispatch to itself.
fn not_a_worker(block: &Block, m: &ManagerOf<'_, '_>, scope: &ConfigScope, diags: &mut Diags) {
    let Some(worker) = m
        .cloud_blocks
        .iter()
        .find(|b| b.labels.first().is_some_and(|(n, _)| n == "kubernetes"))
    else {
        return;
    };
    if !m.workers.iter().any(|w| w.call.ends_with("_kubernetes")) {
        return;
    }
    let value = |b: &Body, n: &str| {
        b.attr(n)
            .and_then(|a| scope.evaluator().eval(&a.expr).ok())
            .map(|v| v.unmark_deep().0)
    };
    let same = ["config_path", "config_context", "host"].iter().all(|n| {
        match (value(&block.body, n), value(&worker.body, n)) {
            (Some(a), Some(b)) => a.raw_equal(&b),
            (a, b) => a.is_none() && b.is_none(),
        }
    });
    if same {
        diags.push(diag(
            "Manager is a worker",
            "The manager block names the same cluster as cloud \"kubernetes\", which is one of the workers; MultiKueue's manager cannot dispatch to itself. Name another cluster (config_context), or let strata make one (cloud = \"aws\", region = …).",
            block.kind_span,
        ));
    }
}

/// The manager block as a cloud block: its own arguments over those of
/// the spec's block for the same cloud (credentials, project,
/// subscription), without where that cluster runs.
fn manager_body(kind: &CloudKind, block: &Block, cloud_blocks: &[&Block]) -> Body {
    let own = |n: &str| n == "cloud" || MANAGER_POOL.contains(&n);
    let mut attrs: Vec<Attribute> = block
        .body
        .attrs
        .iter()
        .filter(|a| !own(&a.name))
        .cloned()
        .collect();
    let same = cloud_blocks
        .iter()
        .find(|b| b.labels.first().is_some_and(|(n, _)| n == kind.name));
    let placed = |n: &str| {
        [kind.region, kind.regions, Some("zones"), Some("module")].contains(&Some(n))
            || kind.name == "kubernetes"
    };
    for a in same.map(|b| b.body.attrs.as_slice()).unwrap_or_default() {
        let (_, provider_args) = kind.provider;
        if provider_args.contains(&a.name.as_str())
            && !placed(&a.name)
            && !attrs.iter().any(|x| x.name == a.name)
        {
            attrs.push(a.clone());
        }
    }
    Body {
        attrs,
        blocks: Vec::new(),
        span: block.body.span,
        json: false,
    }
}

/// A manager block that names another place than the one state holds
/// the manager's cluster in: the call keeps its name, so the old cluster
/// would be looked for where the new one goes, found missing, and left
/// running out of reach. Refused, with the way to move it.
fn moved_manager(cluster: &str, was: &str, now: &str, span: Span, diags: &mut Diags) {
    if was == now {
        return;
    }
    let call = manager_call(cluster);
    diags.push(diag(
        "MultiKueue manager moves",
        format!("State holds cluster {cluster:?}'s MultiKueue manager in {was}; the manager block now puts it in {now}. strata would not find the old cluster there and would leave it running out of its reach. Move it in two steps: with the block as it was, run `strata destroy -target=module.{call}`; then change the block."),
        span,
    ));
}

/// The module call a cluster's MultiKueue manager is.
pub(super) fn manager_call(cluster: &str) -> String {
    format!("{cluster}_manager")
}

/// A manager that state still holds but the spec no longer has: its
/// provider configurations came from the manager block (its cloud and
/// region, or its kubeconfig), so without the block nothing can reach
/// that cluster to delete it. Said at the cluster, with the way out, as
/// Terraform refuses a removed provider configuration that objects in
/// state still need.
pub(super) fn manager_left(
    spec: &super::Spec<'_>,
    cluster: &Block,
    recorded: &std::collections::BTreeSet<String>,
    diags: &mut Diags,
) {
    let call = manager_call(&spec.name);
    // A multikueue block that is there but wrong is said where it is.
    let block = spec
        .runtime
        .and_then(|r| r.blocks.iter().find(|b| b.kind == "multikueue"));
    if block.is_some() || !recorded.contains(&call) {
        return;
    }
    let at = cluster
        .body
        .blocks
        .iter()
        .find(|b| b.kind == "runtime")
        .map_or(cluster.kind_span, |r| r.kind_span);
    diags.push(diag(
        "MultiKueue manager still in state",
        format!("State holds cluster {:?}'s MultiKueue manager (module.{call}), but its runtime has no multikueue manager any more. Its cloud, region or kubeconfig came from that block, so strata could not reach it to delete it: put the block back, run `strata destroy -target=module.{call}`, then remove the block.", spec.name),
        at,
    ));
}

/// The manager's `multikueue` input (its workers in order, each one's
/// quotas from its module, the flavours) and, apart since they are
/// sensitive, the workers' kubeconfigs.
fn manager_inputs(m: &ManagerOf<'_, '_>, span: Span) -> Vec<Attribute> {
    let lit = |s: &str| literal(Value::string(s), span);
    let of_worker = |output: &str| {
        let items = m
            .workers
            .iter()
            .map(|w| {
                let module = get_attr(name_expr("module", span), &w.call);
                (w.name.clone(), get_attr(module, output))
            })
            .collect();
        object(items, span)
    };
    let names = m.workers.iter().map(|w| lit(&w.name)).collect();
    let items = vec![
        ("role".into(), lit("manager")),
        (
            "workers".into(),
            Expr::new(crate::syntax::ExprKind::Tuple(names), span),
        ),
        ("quotas".into(), of_worker("dispatch_quotas")),
        ("pools".into(), m.pools.clone()),
    ];
    vec![
        attribute("multikueue", object(items, span)),
        attribute("multikueue_kubeconfigs", of_worker("dispatch_kubeconfig")),
    ]
}

/// The cluster's untainted CPU pool: the manager block's `instance_type`
/// and `nodes` when given.
pub(super) fn system_pool(manager: Option<&Block>, span: Span) -> Attribute {
    let items = manager
        .map(|b| {
            b.body
                .attrs
                .iter()
                .filter(|a| MANAGER_POOL.contains(&a.name.as_str()))
                .map(|a| (a.name.clone(), a.expr.clone()))
                .collect()
        })
        .unwrap_or_default();
    attribute("system_pool", object(items, span))
}

/// The manager's flavours: each pool's labels, taints and sizes as the
/// first worker's module gets them.
pub(super) fn flavour_pools(first: &[super::cloud::PoolInput], span: Span) -> Expr {
    let keep = ["gpus_per_node", "max_nodes", "labels", "taints"];
    let pools = first
        .iter()
        .map(|p| {
            let items = p
                .items
                .iter()
                .filter(|(k, _)| keep.contains(&k.as_str()))
                .cloned()
                .collect();
            (p.name.clone(), object(items, p.span))
        })
        .collect();
    object(pools, span)
}
