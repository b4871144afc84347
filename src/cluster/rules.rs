//! The spec's rules: which blocks and arguments each part takes, what a
//! pool's size and shape may be, and where a cloud block departs from the
//! cluster's spec.

use super::{diag, portability};
use crate::config::ConfigScope;
use crate::diag::{Diags, Span};
use crate::lang::value::Value;
use crate::syntax::{Attribute, Block, Body, Expr, ExprKind};
use std::collections::BTreeSet;

pub(super) fn single<'a>(body: &'a Body, kind: &str, diags: &mut Diags) -> Option<&'a Body> {
    let mut found = body.blocks.iter().filter(|b| b.kind == kind);
    let first = found.next()?;
    if let Some(dup) = found.next() {
        diags.push(diag(
            "Duplicate block",
            format!("Only one {kind} block is allowed here."),
            dup.kind_span,
        ));
    }
    Some(&first.body)
}

/// Checks a body's attribute and block names against what it may hold.
pub(super) fn allowed(body: &Body, what: &str, attrs: &[&str], blocks: &[&str], diags: &mut Diags) {
    for a in &body.attrs {
        if !attrs.contains(&a.name.as_str()) {
            diags.push(diag(
                "Unsupported argument",
                format!(
                    "An argument named {:?} is not expected in {what}; it takes {}.",
                    a.name,
                    attrs.join(", ")
                ),
                a.name_span,
            ));
        }
    }
    for b in &body.blocks {
        if !blocks.contains(&b.kind.as_str()) {
            diags.push(diag(
                "Unsupported block type",
                format!(
                    "Blocks of type {:?} are not expected in {what}{}.",
                    b.kind,
                    if blocks.is_empty() {
                        String::new()
                    } else {
                        format!("; it takes {}", blocks.join(", "))
                    }
                ),
                b.kind_span,
            ));
        }
    }
}

/// A value that must be known before planning (the catalog is asked about
/// it while expanding).
pub(super) fn known(scope: &ConfigScope, a: &Attribute, diags: &mut Diags) -> Option<Value> {
    match scope.evaluator().eval(&a.expr) {
        Ok(v) if v.is_wholly_known() => Some(v.unmark_deep().0),
        Ok(_) => {
            diags.push(diag(
                "Value not known before planning",
                format!(
                    "{:?} decides how the cluster spec expands (instance types, regions, placement, the manager), which strata does before planning, so it must be known then: use variables and locals, not resources' attributes.",
                    a.name
                ),
                a.expr.span,
            ));
            None
        }
        Err(d) => {
            diags.push(d.or_at(a.expr.span));
            None
        }
    }
}

/// A string argument of `body`, known before planning; `None` when it is
/// not there, or (with an error at it) not a known string.
pub(super) fn known_string(
    body: &Body,
    name: &str,
    scope: &ConfigScope,
    diags: &mut Diags,
) -> Option<String> {
    let a = body.attr(name)?;
    let s = known(scope, a, diags)?.as_str().map(str::to_string);
    if s.is_none() {
        diags.push(diag(
            &format!("Invalid {name}"),
            format!("{name} is a string."),
            a.expr.span,
        ));
    }
    s
}

pub(super) fn divergence(b: &Block, diags: &mut Diags) -> BTreeSet<String> {
    let Some(a) = b.body.attr("allow_divergence") else {
        return BTreeSet::new();
    };
    let items: Vec<&Expr> = match &a.expr.kind {
        ExprKind::Tuple(items) => items.iter().collect(),
        _ => {
            diags.push(diag(
                "Invalid allow_divergence",
                "allow_divergence is a list of field names written out, such as [\"labels\"].",
                a.expr.span,
            ));
            return BTreeSet::new();
        }
    };
    let mut out = BTreeSet::new();
    for e in items {
        match &e.kind {
            ExprKind::Literal(v) if v.as_str().is_some() => {
                let f = v.as_str().unwrap_or_default();
                if portability::compared().any(|c| c == f) {
                    out.insert(f.to_string());
                } else {
                    diags.push(diag(
                        "Unknown field in allow_divergence",
                        format!(
                            "{f:?} is not a field the portability check compares; they are {}.",
                            portability::compared().collect::<Vec<_>>().join(", ")
                        ),
                        e.span,
                    ));
                }
            }
            _ => diags.push(diag(
                "Invalid allow_divergence",
                "Each entry of allow_divergence is a field name as a literal string.",
                e.span,
            )),
        }
    }
    out
}

/// What a pool's fields may be, checked where they are written.
/// Whether `n` can name the cluster on every cloud.
pub(super) fn valid_cluster_name(n: &str) -> bool {
    let b = n.as_bytes();
    (1..=40).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b[b.len() - 1] != b'-'
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// A field's value, when it is set and known before planning.
pub(super) fn field<'b>(
    body: &'b Body,
    name: &str,
    scope: &ConfigScope,
) -> Option<(&'b Attribute, Value)> {
    let a = body.attr(name)?;
    let v = scope.evaluator().eval(&a.expr).ok()?;
    let v = v.unmark_deep().0;
    v.is_wholly_known().then_some((a, v))
}

/// `network` and `gpu_operator` fields that every cloud's module relies
/// on, checked where the spec writes them.
pub(super) fn part_rules(
    network: Option<&Body>,
    operator: Option<&Body>,
    scope: &ConfigScope,
    diags: &mut Diags,
) {
    if let Some((a, v)) = network.and_then(|n| field(n, "cidr", scope)) {
        let prefix = v
            .as_str()
            .and_then(|s| s.parse::<ipnet::Ipv4Net>().ok())
            .map(|n| n.prefix_len());
        if !prefix.is_some_and(|p| (8..=24).contains(&p)) {
            diags.push(diag(
                "Invalid network cidr",
                format!("cidr is {}; it must be an IPv4 range from /8 to /24, such as \"10.40.0.0/16\": the modules cut three zones' public and private subnets out of it.", crate::lang::display::show(&v)),
                a.expr.span,
            ));
        }
    }
    const MIG: &[&str] = &["none", "single", "mixed"];
    if let Some((a, v)) = operator.and_then(|o| field(o, "mig_strategy", scope)) {
        if !v.as_str().is_some_and(|s| MIG.contains(&s)) {
            diags.push(diag(
                "Invalid mig_strategy",
                format!(
                    "mig_strategy is {}; the GPU Operator accepts {}.",
                    crate::lang::display::show(&v),
                    MIG.join(", ")
                ),
                a.expr.span,
            ));
        }
    }
}

/// A node pool's sizes: whole numbers, at least 0 nodes and at most as
/// many as its maximum, at least one GPU per node.
fn size_rules(p: &Block, scope: &ConfigScope, diags: &mut Diags) {
    let whole = |name: &str, least: i64, diags: &mut Diags| -> Option<(i64, Span)> {
        let (a, v) = field(&p.body, name, scope)?;
        match v
            .as_number()
            .filter(|n| n.is_integer())
            .and_then(|n| n.to_i64())
        {
            Some(n) if n >= least => Some((n, a.expr.span)),
            _ => {
                diags.push(diag(
                    &format!("Invalid {name}"),
                    format!(
                        "{name} is {}; it must be a whole number of at least {least}.",
                        crate::lang::display::show(&v)
                    ),
                    a.expr.span,
                ));
                None
            }
        }
    };
    whole("gpus_per_node", 1, diags);
    let min = whole("min_nodes", 0, diags);
    let max = whole("max_nodes", 1, diags);
    if let (Some((lo, _)), Some((hi, span))) = (min, max) {
        if lo > hi {
            diags.push(diag(
                "Invalid node pool size",
                format!("max_nodes is {hi}, below min_nodes ({lo}): a pool cannot hold fewer nodes than its minimum."),
                span,
            ));
        }
    }
}

pub(super) fn pool_rules(p: &Block, scope: &ConfigScope, diags: &mut Diags) {
    size_rules(p, scope, diags);
    let one_of = |name: &str, options: &[&str], diags: &mut Diags| {
        let Some(a) = p.body.attr(name) else { return };
        if let Ok(v) = scope.evaluator().eval(&a.expr) {
            if let Some(s) = v.unmarked().as_str() {
                if !options.contains(&s) {
                    diags.push(diag(
                        &format!("Invalid {name}"),
                        format!("{name} is {s:?}; it must be one of {}.", options.join(", ")),
                        a.expr.span,
                    ));
                }
            }
        }
    };
    one_of("capacity", &["on_demand", "spot"], diags);
    if let Some(a) = p.body.attr("taints") {
        if let Ok(v) = scope.evaluator().eval(&a.expr) {
            for t in v.unmark_deep().0.elements().unwrap_or_default() {
                if let Value::Object(m) = t {
                    let effect = m.get("effect").and_then(Value::as_str);
                    if let Some(e) = effect
                        .filter(|e| !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(e))
                    {
                        diags.push(diag(
                            "Invalid taint effect",
                            format!("A taint's effect is {e:?}; Kubernetes knows NoSchedule, PreferNoSchedule and NoExecute."),
                            a.expr.span,
                        ));
                    }
                }
            }
        }
    }
}
