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

/// What a cloud block's `runtime { checkpoints { … } }` may set: where
/// that cloud's jobs reach its object store (a FIPS or VPC endpoint, say).
const CLOUD_CHECKPOINT_FIELDS: &[&str] = &["endpoint"];

/// The spec's `checkpoints` block: the bucket's name (each cloud's bucket
/// is that name and its region), versioning, when old checkpoints go, and
/// whether destroying the cluster deletes them (by default it stops at a
/// bucket that holds any, as Terraform's `force_destroy` does).
const CHECKPOINT_FIELDS: &[&str] = &["bucket", "versioning", "expire_after_days", "force_destroy"];

/// The cluster's `runtime` block, checked; none when it has none.
pub(super) fn read<'b>(cluster: &'b Body, name: &str, diags: &mut Diags) -> Option<&'b Body> {
    let r = single(cluster, "runtime", diags)?;
    let what = format!("cluster {name:?} runtime");
    allowed(
        r,
        &what,
        CLOUD_FIELDS,
        &["queue", "metrics", "multikueue", "checkpoints"],
        diags,
    );
    single(r, "checkpoints", diags);
    if let Some(c) = r.blocks.iter().find(|b| b.kind == "checkpoints") {
        allowed(
            &c.body,
            "runtime checkpoints",
            CHECKPOINT_FIELDS,
            &[],
            diags,
        );
        if c.body.attr("bucket").is_none() {
            diags.push(diag(
                "Missing required argument",
                "checkpoints needs a bucket: bucket = \"acme-train-ckpt\" gives each cloud a bucket of that name and its region.",
                c.kind_span,
            ));
        }
    }
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

/// The checkpoints block's values where the spec writes them: a bucket
/// name that, with a region after it, every cloud takes (S3's and GCS's
/// bucket rules, an Azure container's), a flag, a number of days. A
/// value known only once planned (a name with a random suffix) is the
/// cloud's to judge; one that does not evaluate is said where the module
/// input is.
pub(super) fn checkpoint_limits(runtime: &Body, scope: &ConfigScope, diags: &mut Diags) {
    let Some(c) = runtime.blocks.iter().find(|b| b.kind == "checkpoints") else {
        return;
    };
    let value = |field: &str| {
        let a = c.body.attr(field)?;
        let v = scope.evaluator().eval(&a.expr).ok()?.unmark_deep().0;
        v.is_wholly_known().then_some((a.expr.span, v))
    };
    if let Some((span, v)) = value("bucket") {
        let name = v
            .as_str()
            .map_or_else(|| v.to_json().unwrap_or_default(), str::to_string);
        let name = name.as_str();
        if !v
            .as_str()
            .is_some_and(|n| (3..=MAX_BUCKET).contains(&n.len()) && dns_label(n))
        {
            diags.push(diag(
                "Invalid bucket name",
                format!("{name:?} cannot name a checkpoint bucket on every cloud: use 3 to {MAX_BUCKET} lowercase letters, digits and hyphens, starting and ending with a letter or digit (each cloud's bucket is this name, a hyphen and its region, within S3's and GCS's 63)."),
                span,
            ));
        }
    }
    for flag in ["versioning", "force_destroy"] {
        if let Some((span, v)) = value(flag) {
            if v.as_bool().is_none() {
                let detail = format!("{flag} is true or false.");
                diags.push(diag(&format!("Invalid {flag}"), detail, span));
            }
        }
    }
    if let Some((span, v)) = value("expire_after_days") {
        let days = v.as_number().and_then(|n| n.to_i64()).filter(|d| *d >= 1);
        if days.is_none() {
            diags.push(diag(
                "Invalid expire_after_days",
                "expire_after_days is a whole number of days, 1 or more: checkpoints older than that are deleted (and, with versioning, old versions that long after they were replaced).",
                span,
            ));
        }
    }
}

/// The longest bucket name: 63 less a hyphen and the longest region name
/// of the three clouds (GCP's `northamerica-northeast1`, 23).
const MAX_BUCKET: usize = 39;

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
    // Always said, null for none: a module tells the two apart with `==
    // null`, which stays known when the bucket's name is known only once
    // planned (where `try` would not).
    let checkpoints = match spec.blocks.iter().find(|b| b.kind == "checkpoints") {
        Some(c) => {
            let own = cloud
                .and_then(|r| r.blocks.iter().find(|b| b.kind == "checkpoints"))
                .map(|b| &b.body);
            let fields = merged(Some(&c.body), own)
                .into_iter()
                .map(|a| (a.name.clone(), a.expr.clone()));
            object(fields.collect(), c.kind_span)
        }
        None => literal(Value::Null(crate::lang::types::Type::Dynamic), span),
    };
    items.push(("checkpoints".into(), checkpoints));
    attribute("runtime", object(items, span))
}

/// The clouds whose modules make a checkpoint store: those strata makes
/// clusters on.
const CHECKPOINT_CLOUDS: &[&str] = &["aws", "gcp", "azure"];

/// Checkpoints only where the cloud's module makes their store (not on an
/// existing cluster): said at the checkpoints block rather than left out
/// of that cloud's clusters.
pub(super) fn checkpoints_on(cloud: &str, spec: &Body, diags: &mut Diags) {
    let Some(c) = spec.blocks.iter().find(|b| b.kind == "checkpoints") else {
        return;
    };
    if !CHECKPOINT_CLOUDS.contains(&cloud) {
        diags.push(diag(
            "Checkpoints not kept on this cloud",
            format!("strata makes checkpoint buckets on {}, where it makes the clusters; on {cloud:?}, a cluster someone else runs, it has nowhere to make one: leave {cloud:?} out of this cluster's clouds, or the checkpoints block out of its runtime.", CHECKPOINT_CLOUDS.join(", ")),
            c.kind_span,
        ));
    }
}

/// A cloud block's `runtime`: the versions, and where its jobs reach
/// their checkpoints when the cluster keeps them.
pub(super) fn cloud_override(r: &Body, what: &str, spec: &Body, diags: &mut Diags) {
    allowed(r, what, CLOUD_FIELDS, &["checkpoints"], diags);
    let Some(c) = r.blocks.iter().find(|b| b.kind == "checkpoints") else {
        return;
    };
    if !spec.blocks.iter().any(|b| b.kind == "checkpoints") {
        diags.push(diag(
            "Checkpoints not kept",
            format!("{what} says where checkpoints go, but the cluster's runtime has no checkpoints block."),
            c.kind_span,
        ));
    }
    allowed(
        &c.body,
        &format!("{what} checkpoints"),
        CLOUD_CHECKPOINT_FIELDS,
        &[],
        diags,
    );
}

/// The runtime without checkpoints: a MultiKueue manager runs no jobs,
/// so it keeps none.
pub(super) fn without_checkpoints(runtime: &Body) -> Body {
    let mut r = runtime.clone();
    r.blocks.retain(|b| b.kind != "checkpoints");
    r
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
