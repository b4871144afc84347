//! The portability check: after evaluation, every cloud's node pools must
//! agree on what a job moving between them depends on. Each cloud module
//! reports its pools through its `portable` output, read back from the
//! resources it plans, so a `cloud` block override and an edit to the
//! module itself are caught alike; so must their job runtimes (the
//! `runtime` output: Kueue's and KubeRay's versions, the flavours, the
//! queues and their quotas, the checkpoint Secret's name and keys and the
//! service account's). A field listed in the spec's
//! `allow_divergence` may differ.

use super::{CloudCall, Expanded, Expansion};
use crate::diag::{Diag, Diags};
use crate::lang::value::{Attrs, Value};
use strata_state::model::ModulePath;

/// The fields compared, in the order problems are reported.
pub const FIELDS: &[&str] = &[
    "gpu",
    "gpus_per_node",
    "driver_version",
    "cuda_version",
    "gpu_operator",
    "labels",
    "taints",
];

/// The runtime's fields compared (`modules/runtime`'s `portable` output,
/// which each cloud module reports as `runtime`).
pub const RUNTIME_FIELDS: &[&str] = &[
    "kueue_version",
    "kuberay_version",
    "flavors",
    "queues",
    "checkpoints",
];

/// Every field `allow_divergence` may name.
pub fn compared() -> impl Iterator<Item = &'static str> {
    FIELDS.iter().chain(RUNTIME_FIELDS).copied()
}

/// How a value reads in a message.
fn show(v: &Value) -> String {
    match v {
        Value::Null(_) => "nothing".to_string(),
        v => v.to_json().unwrap_or_else(|_| "?".into()),
    }
}

/// Taints compare as a set: the order they are written in means nothing.
fn normal(field: &str, v: Value) -> Value {
    match (field, v) {
        ("taints", Value::List(_, mut items) | Value::Set(_, mut items)) => {
            items.sort_by_key(|t| t.to_json().unwrap_or_default());
            Value::Tuple(items)
        }
        ("taints", Value::Tuple(mut items)) => {
            items.sort_by_key(|t| t.to_json().unwrap_or_default());
            Value::Tuple(items)
        }
        (_, v) => v,
    }
}

fn field(pools: &Attrs, pool: &str, f: &str) -> Option<Value> {
    match pools.get(pool)? {
        Value::Object(m) => m.get(f).cloned().map(|v| normal(f, v.unmark_deep().0)),
        _ => None,
    }
}

/// Equal as Kubernetes sees them: numbers by value, strings as written,
/// maps and objects alike.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Map(_, x), Value::Object(y))
        | (Value::Object(y), Value::Map(_, x))
        | (Value::Map(_, x), Value::Map(_, y))
        | (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (
            Value::List(_, x) | Value::Tuple(x) | Value::Set(_, x),
            Value::List(_, y) | Value::Tuple(y) | Value::Set(_, y),
        ) => x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w)),
        (Value::Null(_), Value::Null(_)) => true,
        // An API that keeps no labels reads back none where `{}` was
        // written: the same to Kubernetes.
        (Value::Null(_), x) | (x, Value::Null(_)) => x.is_empty(),
        _ => a.to_json().ok() == b.to_json().ok(),
    }
}

fn pools_of(v: Option<Value>) -> Attrs {
    match v.map(|v| v.unmark_deep().0) {
        Some(Value::Object(m)) | Some(Value::Map(_, m)) => m,
        _ => Attrs::new(),
    }
}

/// Compares the clouds of every expanded cluster; `read` gives a module
/// output's value by (module instance, `output.NAME`).
pub fn check(expansion: &Expansion, read: &dyn Fn(&ModulePath, &str) -> Option<Value>) -> Diags {
    let mut diags = Diags::default();
    for c in &expansion.clusters {
        cluster(c, read, &mut diags);
    }
    diags
}

fn cluster(c: &Expanded, read: &dyn Fn(&ModulePath, &str) -> Option<Value>, diags: &mut Diags) {
    let root = ModulePath::root();
    let views: Vec<(&CloudCall, Option<Value>)> = c
        .clouds
        .iter()
        .map(|cc| (cc, read(&root.child(&cc.call, None), "output.portable")))
        .collect();
    unreported(c, &views, diags);
    let Some(((first, first_v), rest)) = views.split_first() else {
        return;
    };
    let base = pools_of(first_v.clone());
    // Clouds whose pools' labels or taints differ: their flavours do too,
    // which says nothing more.
    let mut placed_apart = std::collections::BTreeSet::new();
    for (cc, v) in rest {
        let Some(v) = v else { continue };
        if !v.is_wholly_known() && !matches!(v, Value::Object(_) | Value::Map(..)) {
            continue;
        }
        let other = pools_of(Some(v.clone()));
        for pool in base
            .keys()
            .chain(other.keys().filter(|k| !base.contains_key(*k)))
        {
            if !base.contains_key(pool) || !other.contains_key(pool) {
                let (has, lacks): (&CloudCall, &CloudCall) = if base.contains_key(pool) {
                    (first, cc)
                } else {
                    (cc, first)
                };
                diags.push(
                    Diag::new(
                        "strata::cluster::portability",
                        format!("cluster {:?} is not portable: node pool {pool:?}", c.name),
                        format!(
                            "{} has node pool {pool:?} and {} does not.",
                            has.place(),
                            lacks.place()
                        ),
                    )
                    .at(lacks.span),
                );
                continue;
            }
            for f in FIELDS {
                if c.allow_divergence.contains(*f) {
                    continue;
                }
                let (Some(a), Some(b)) = (field(&base, pool, f), field(&other, pool, f)) else {
                    continue;
                };
                if !a.is_wholly_known() || !b.is_wholly_known() || same(&a, &b) {
                    continue;
                }
                if matches!(*f, "labels" | "taints") {
                    placed_apart.insert(cc.call.clone());
                }
                let what = What::Pool(pool);
                diags.push(divergent(c, (first, &a), (cc, &b), what, f));
            }
        }
    }
    runtimes(c, read, &placed_apart, diags);
}

/// A cloud whose module has no `portable` output cannot be compared.
fn unreported(c: &Expanded, views: &[(&CloudCall, Option<Value>)], diags: &mut Diags) {
    for (cc, v) in views {
        if v.is_none() {
            diags.push(
                Diag::new(
                    "strata::cluster::portability",
                    format!("cluster {:?}: the {} module reports no pools", c.name, cc.place()),
                    format!(
                        "The module for {} ({}) has no `portable` output, so the portability check cannot compare its node pools with the other clouds'. Every cloud module reports its pools there; see modules/aws.",
                        cc.cloud,
                        cc.module
                            .clone()
                            .unwrap_or_else(|| format!("modules/{}", cc.cloud))
                    ),
                )
                .at(cc.span),
            );
        }
    }
}

/// The clouds' runtimes, field by field, against the first cloud's (a
/// cloud whose module reports none is not compared).
fn runtimes(
    c: &Expanded,
    read: &dyn Fn(&ModulePath, &str) -> Option<Value>,
    placed_apart: &std::collections::BTreeSet<String>,
    diags: &mut Diags,
) {
    let root = ModulePath::root();
    let views: Vec<(&CloudCall, Attrs)> = c
        .clouds
        .iter()
        .filter_map(|cc| {
            let v = read(&root.child(&cc.call, None), "output.runtime")?;
            Some((cc, pools_of(Some(v))))
        })
        .filter(|(_, r)| !r.is_empty())
        .collect();
    let Some(((first, base), rest)) = views.split_first() else {
        return;
    };
    for (cc, other) in rest {
        for f in RUNTIME_FIELDS {
            // A flavour is its pool's labels and taints, compared above.
            let pools_differ = c.allow_divergence.contains("labels")
                || c.allow_divergence.contains("taints")
                || placed_apart.contains(&cc.call);
            if c.allow_divergence.contains(*f) || (*f == "flavors" && pools_differ) {
                continue;
            }
            let (Some(a), Some(b)) = (base.get(*f), other.get(*f)) else {
                continue;
            };
            let (a, b) = (without_quotas(a), without_quotas(b));
            if !a.is_wholly_known() || !b.is_wholly_known() || same(&a, &b) {
                continue;
            }
            diags.push(divergent(c, (first, &a), (cc, &b), What::Runtime, f));
        }
    }
}

/// A queue without its quotas: a quota is its pools' nodes × GPUs, and a
/// cloud may run a pool at another size (the manager's quota is the sum);
/// the queues, flavours and resources must be the same.
fn without_quotas(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "nominalQuota")
                .map(|(k, x)| (k.clone(), without_quotas(x)))
                .collect(),
        ),
        Value::Map(_, m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), without_quotas(x)))
                .collect(),
        ),
        Value::Tuple(items) | Value::List(_, items) => {
            Value::Tuple(items.iter().map(without_quotas).collect())
        }
        other => other.clone(),
    }
}

/// What differs: a node pool's field, or the runtime's.
#[derive(Clone, Copy)]
enum What<'p> {
    Pool(&'p str),
    Runtime,
}

impl What<'_> {
    fn subject(self) -> String {
        match self {
            What::Pool(pool) => format!("node pool {pool:?}"),
            What::Runtime => "the runtime".to_string(),
        }
    }
}

/// The error for one field that differs, pointing at the override that
/// made it differ (or at the cloud, when its module does).
fn divergent(
    c: &Expanded,
    (first, a): (&CloudCall, &Value),
    (cc, b): (&CloudCall, &Value),
    what: What<'_>,
    f: &str,
) -> Diag {
    let key_field = match (what, f) {
        (What::Pool(pool), f)
            if !matches!(f, "gpu_operator" | "driver_version" | "cuda_version") =>
        {
            (pool.to_string(), f.to_string())
        }
        _ => (String::new(), f.to_string()),
    };
    let subject = what.subject();
    let (span, why) = match (
        cc.overrides.get(&key_field),
        first.overrides.get(&key_field),
    ) {
        (Some(s), _) => (*s, format!("cloud {:?} overrides it here", cc.cloud)),
        (None, Some(s)) => (*s, format!("cloud {:?} overrides it here", first.cloud)),
        (None, None) => (
            cc.span,
            format!(
                "the {} module ({}) makes it so",
                cc.cloud,
                cc.module
                    .clone()
                    .unwrap_or_else(|| format!("modules/{}", cc.cloud))
            ),
        ),
    };
    Diag::new(
        "strata::cluster::portability",
        format!(
            "cluster {:?} is not portable: {subject} differs in {f} on {}",
            c.name,
            cc.place()
        ),
        format!(
            "On {} {subject} has {f} = {}, on {} {}; {why}. A job moved between them would not find the same {}. Make them equal, or say the difference is intended with allow_divergence = [\"{f}\"] in cluster {:?}.",
            cc.place(),
            show(b),
            first.place(),
            show(a),
            match what {
                What::Pool(_) => "nodes",
                What::Runtime if f == "checkpoints" => "checkpoint Secret",
                What::Runtime => "queues",
            },
            c.name
        ),
    )
    .at(span)
    .labelled(format!("{f} differs on {}", cc.place()))
}
