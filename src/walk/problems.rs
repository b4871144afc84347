//! A driver's problems (a provider plugin's diagnostics) as strata's, at
//! the place in the resource block their attribute path leads to, found as
//! Terraform 1.11 finds it: through nested blocks to the argument the
//! path's last name gives (an element of it when the path ends in an
//! index or key), else the block the path stopped in.

use crate::config::Resource;
use crate::diag::{Diag, Span};
use crate::syntax::ast::{Expr, ExprKind, ObjectKey, TemplatePart};
use crate::syntax::Body;
use strata_provider::{path_text, PathStep, Problem};

fn diag(p: &Problem, r: &Resource) -> Diag {
    // A problem deep inside a value (`ports[0].number`) says where.
    let detail = match p.path.len() {
        0 | 1 => p.detail.clone(),
        _ => format!("{}\n\n(at {})", p.detail, path_text(&p.path))
            .trim_start()
            .to_string(),
    };
    let span = place(&p.path, &r.body, r.span);
    Diag::new("strata::provider", p.summary.clone(), detail).at(span)
}

/// Each problem placed (see [`diag`]), warnings as warnings.
pub fn diags<'p>(problems: &'p [Problem], r: &'p Resource) -> impl Iterator<Item = Diag> + 'p {
    problems.iter().map(move |p| {
        let d = diag(p, r);
        if p.error {
            d
        } else {
            d.warning()
        }
    })
}

/// Where `path` points inside `body` (a block whose own place is `at`).
fn place(path: &[PathStep], body: &Body, at: Span) -> Span {
    let Some(PathStep::Attribute(_)) = path.first() else {
        return at;
    };
    let (last, rest) = match path.split_last() {
        Some(split) => split,
        None => return at,
    };
    let (name, element, through) = match (last, rest.last()) {
        (PathStep::Index(_) | PathStep::Key(_), Some(PathStep::Attribute(n))) => {
            (n, Some(last), &rest[..rest.len() - 1])
        }
        (PathStep::Attribute(n), _) => (n, None, rest),
        _ => return at,
    };
    let (body, at) = if through.is_empty() {
        (body, at)
    } else {
        into_blocks(through, body, at)
    };
    let Some(attr) = body.attr(name) else {
        return at;
    };
    match element {
        Some(step) => element_span(&attr.expr, step).unwrap_or(attr.expr.span),
        None => attr.expr.span,
    }
}

/// The nested block `steps` lead to (a name, and an index when there are
/// several), as far as they lead.
fn into_blocks<'b>(steps: &[PathStep], body: &'b Body, at: Span) -> (&'b Body, Span) {
    let (mut body, mut at) = (body, at);
    let mut i = 0;
    while let Some(PathStep::Attribute(name)) = steps.get(i) {
        let found: Vec<_> = body.blocks.iter().filter(|b| b.kind == *name).collect();
        let chosen = match steps.get(i + 1) {
            Some(PathStep::Index(n)) => {
                i += 1;
                usize::try_from(*n).ok().and_then(|n| found.get(n).copied())
            }
            Some(PathStep::Key(k)) => {
                i += 1;
                found
                    .into_iter()
                    .find(|b| b.labels.first().is_some_and(|(l, _)| l == k))
            }
            _ if found.len() == 1 => found.first().copied(),
            _ => None,
        };
        match chosen {
            Some(b) => (body, at) = (&b.body, b.span),
            None => return (body, at),
        }
        i += 1;
    }
    (body, at)
}

/// The element of a tuple or object written in the configuration.
fn element_span(expr: &Expr, step: &PathStep) -> Option<Span> {
    match (&expr.kind, step) {
        (ExprKind::Tuple(items), PathStep::Index(n)) => {
            items.get(usize::try_from(*n).ok()?).map(|e| e.span)
        }
        (ExprKind::Object(pairs), PathStep::Key(k)) => pairs
            .iter()
            .find(|(key, _)| key_text(key).as_deref() == Some(k.as_str()))
            .map(|(_, v)| v.span),
        _ => None,
    }
}

fn key_text(key: &ObjectKey) -> Option<String> {
    match key {
        ObjectKey::Name(n) => Some(n.clone()),
        ObjectKey::Expr(e) => match &e.kind {
            ExprKind::Template(parts) => match parts.as_slice() {
                [TemplatePart::Literal(s)] => Some(s.clone()),
                [] => Some(String::new()),
                _ => None,
            },
            ExprKind::Literal(v) => v.as_str().map(str::to_string),
            _ => None,
        },
    }
}

/// A provider that could not answer a block's check, said at the block.
pub fn validate_failed(r: &Resource, e: &strata_provider::DriverError) -> Diag {
    Diag::new(
        "strata::driver::validate",
        format!("Validating {} failed", r.type_name),
        e.to_string(),
    )
    .at(r.span)
}

/// A driver's failure to close an ephemeral resource it opened.
pub fn close_failed(f: &super::CloseFailed) -> Diag {
    Diag::new(
        "strata::driver::close",
        format!("Closing {} failed", f.addr),
        f.error.to_string(),
    )
}
