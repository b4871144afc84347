//! The spec's `runtime` block: Kueue's queues over the GPU pools,
//! KubeRay's operator and GPU metrics on every cloud of the cluster
//! (`modules/runtime`). Read and checked here, and handed to each cloud's
//! module as its `runtime` input, a cloud block's own `runtime` versions
//! laid over the cluster's. Each pool's nodes carry [`POOL_LABEL`], the
//! label its Kueue flavour selects them by on every cloud.

use super::diag;
use super::rules::{allowed, single};
use super::syntax::{attribute, literal, merged, object};
use crate::config::ConfigScope;
use crate::diag::{Diags, Span};
use crate::lang::value::Value;
use crate::syntax::{Attribute, Block, Body, Expr, ExprKind};

/// The label every pool's nodes carry when the cluster has a runtime.
pub(super) const POOL_LABEL: &str = "strata.dev/pool";

/// What a cloud block's `runtime` may set: the versions.
pub(super) const CLOUD_FIELDS: &[&str] = &["kueue_version", "kuberay_version"];

/// The cluster's `runtime` block, checked; none when it has none.
pub(super) fn read<'b>(cluster: &'b Body, name: &str, diags: &mut Diags) -> Option<&'b Body> {
    let r = single(cluster, "runtime", diags)?;
    let what = format!("cluster {name:?} runtime");
    allowed(
        r,
        &what,
        CLOUD_FIELDS,
        &["queue", "metrics", "multikueue"],
        diags,
    );
    let mut seen: Vec<&str> = Vec::new();
    for q in r.blocks.iter().filter(|b| b.kind == "queue") {
        if let Some(n) = queue_name(q, diags) {
            if seen.contains(&n) {
                let detail = format!("A queue named {n:?} is already declared in this runtime.");
                diags.push(diag("Duplicate queue", detail, q.kind_span));
            }
            seen.push(n);
        }
        allowed(
            &q.body,
            "a runtime queue",
            &["namespaces", "gpus"],
            &[],
            diags,
        );
        if q.body.attr("namespaces").is_none() {
            diags.push(diag(
                "Missing required argument",
                "A queue takes jobs from the namespaces it names: namespaces = [\"ml\"] makes a LocalQueue of the queue's name in each, on every cloud.",
                q.kind_span,
            ));
        }
    }
    if let Some(m) = single(r, "metrics", diags) {
        allowed(m, "runtime metrics", &["service_monitor"], &[], diags);
    }
    Some(r)
}

/// Kueue's limits on a flavour (its CRD: at most eight node labels and
/// eight tolerations), held to each pool where the spec writes it, with
/// strata's own label one of the eight and not the user's to set.
pub(super) fn pool_limits(p: &Block, scope: &ConfigScope, diags: &mut Diags) {
    let name = p
        .labels
        .first()
        .map(|(n, _)| n.as_str())
        .unwrap_or_default();
    let value = |field: &str| {
        let a = p.body.attr(field)?;
        let v = scope.evaluator().eval(&a.expr).ok()?.unmark_deep().0;
        Some((a.expr.span, v))
    };
    if let Some((span, v)) = value("labels") {
        let keys: Vec<&String> = v.entries().map(|m| m.keys().collect()).unwrap_or_default();
        if keys.iter().any(|k| *k == POOL_LABEL) {
            diags.push(diag(
                "Reserved label",
                format!("{POOL_LABEL} is the label strata gives node pool {name:?}'s nodes when the cluster has a runtime (its Kueue flavour selects them by it): name your label otherwise."),
                span,
            ));
        } else if keys.len() > MAX_FLAVOR_ITEMS - 1 {
            diags.push(diag(
                "Too many labels for a Kueue flavour",
                format!("node_pool {name:?} has {} labels; with strata's own {POOL_LABEL} that is {}, and Kueue's ResourceFlavor takes at most {MAX_FLAVOR_ITEMS} node labels. Keep at most {}.", keys.len(), keys.len() + 1, MAX_FLAVOR_ITEMS - 1),
                span,
            ));
        }
    }
    if let Some((span, v)) = value("taints") {
        let n = v.elements().map(|e| e.len()).unwrap_or_default();
        if n > MAX_FLAVOR_ITEMS {
            diags.push(diag(
                "Too many taints for a Kueue flavour",
                format!("node_pool {name:?} has {n} taints; its Kueue flavour tolerates each, and a ResourceFlavor takes at most {MAX_FLAVOR_ITEMS} tolerations."),
                span,
            ));
        }
    }
}

/// Kueue 0.19's `maxProperties` of a flavour's `nodeLabels` and
/// `maxItems` of its `tolerations`.
const MAX_FLAVOR_ITEMS: usize = 8;

/// A queue's one label: a name Kubernetes takes for a ClusterQueue and a
/// LocalQueue (a DNS-1123 label).
fn queue_name<'b>(q: &'b Block, diags: &mut Diags) -> Option<&'b str> {
    let [(n, span)] = q.labels.as_slice() else {
        let detail = "A queue block takes one label, its name: queue \"training\" { … }.";
        diags.push(diag("Missing queue name", detail, q.kind_span));
        return None;
    };
    if !dns_label(n) {
        diags.push(diag(
            "Invalid queue name",
            format!("{n:?} cannot name a Kueue queue: a name is 1 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit."),
            *span,
        ));
        return None;
    }
    Some(n)
}

fn dns_label(n: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    (1..=63).contains(&n.len())
        && n.chars().all(|c| ok(c) || c == '-')
        && n.starts_with(ok)
        && n.ends_with(ok)
}

/// The cloud module's `runtime` input: the versions (the cloud block's
/// over the cluster's), the queues and the metrics.
pub(super) fn input(spec: &Body, cloud: Option<&Body>, span: Span) -> Attribute {
    let mut items: Vec<(String, Expr)> = merged(Some(spec), cloud)
        .into_iter()
        .map(|a| (a.name.clone(), a.expr.clone()))
        .collect();
    let queues = spec
        .blocks
        .iter()
        .filter(|b| b.kind == "queue")
        .filter_map(|q| {
            let (name, _) = q.labels.first()?;
            let fields = q
                .body
                .attrs
                .iter()
                .map(|a| (a.name.clone(), a.expr.clone()));
            Some((name.clone(), object(fields.collect(), q.kind_span)))
        })
        .collect();
    items.push(("queues".into(), object(queues, span)));
    if let Some(m) = spec.blocks.iter().find(|b| b.kind == "metrics") {
        let fields = m
            .body
            .attrs
            .iter()
            .map(|a| (a.name.clone(), a.expr.clone()));
        items.push(("metrics".into(), object(fields.collect(), m.kind_span)));
    }
    attribute("runtime", object(items, span))
}

/// A pool's `labels` input with [`POOL_LABEL`] set to its name, over what
/// the spec gives it.
pub(super) fn labelled(items: &mut Vec<(String, Expr)>, pool: &str, span: Span) {
    let own = object(
        vec![(POOL_LABEL.into(), literal(Value::string(pool), span))],
        span,
    );
    let labels = match items.iter().position(|(k, _)| k == "labels") {
        Some(at) => {
            let (_, given) = items.remove(at);
            let call = ExprKind::Call {
                name: "merge".into(),
                args: vec![given, own],
                expand_final: false,
            };
            Expr::new(call, span)
        }
        None => own,
    };
    items.push(("labels".into(), labels));
}
