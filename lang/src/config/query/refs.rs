//! `list` blocks referring to one another (Terraform 1.14+): a list's
//! `config` may filter by what another found,
//! `list.TYPE.NAME.data[0].state.ATTR` (or `.identity.ATTR`; an instance
//! key after NAME where the other repeats). The blocks are put in the
//! order they must be listed in, and references Terraform refuses are
//! refused with its words: an undeclared list, a traversal not shaped
//! `data[INDEX].state|identity`, and a cycle.

use super::ListBlock;
use crate::diag::{Diag, Diags, Span};
use crate::syntax::ast::{Expr, ExprKind};

const CODE: &str = "strata::config::query";

/// A reference from one list block to another: its address and where.
struct ListRef {
    target: usize,
    span: Span,
}

/// `lists` in an order where each comes after every list it refers to
/// (otherwise as written).
pub(super) fn order(lists: Vec<ListBlock>, diags: &mut Diags) -> Vec<ListBlock> {
    let deps: Vec<Vec<ListRef>> = lists.iter().map(|l| references(l, &lists, diags)).collect();
    let mut placed = vec![false; lists.len()];
    let mut order = Vec::with_capacity(lists.len());
    while order.len() < lists.len() {
        let ready = (0..lists.len())
            .find(|&i| !placed[i] && deps[i].iter().all(|r| placed[r.target] || r.target == i));
        match ready {
            Some(i) => {
                placed[i] = true;
                order.push(i);
            }
            None => {
                cycle(&lists, &deps, &placed, diags);
                order.extend((0..lists.len()).filter(|&i| !placed[i]));
                break;
            }
        }
    }
    for (i, l) in lists.iter().enumerate() {
        if let Some(r) = deps[i].iter().find(|r| r.target == i) {
            diags.push(cycle_error(&[address(l)], r.span));
        }
    }
    let mut slots: Vec<Option<ListBlock>> = lists.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

fn address(l: &ListBlock) -> String {
    format!("list.{}.{}", l.type_name, l.name)
}

fn cycle_error(members: &[String], at: Span) -> Diag {
    Diag::new(CODE, format!("Cycle: {}", members.join(", ")), "").at(at)
}

/// The lists not placed: each waits on another of them.
fn cycle(lists: &[ListBlock], deps: &[Vec<ListRef>], placed: &[bool], diags: &mut Diags) {
    let members: Vec<String> = (0..lists.len())
        .filter(|&i| !placed[i])
        .map(|i| address(&lists[i]))
        .collect();
    let at = (0..lists.len())
        .filter(|&i| !placed[i])
        .find_map(|i| deps[i].first().map(|r| r.span))
        .unwrap_or_default();
    diags.push(cycle_error(&members, at));
}

/// Every expression of `l` that is evaluated before it is listed.
fn expressions(l: &ListBlock) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = [&l.count, &l.for_each, &l.include_resource, &l.limit]
        .into_iter()
        .flatten()
        .collect();
    out.extend(l.config.iter().flat_map(|b| b.expressions()));
    out
}

/// The lists `l` refers to, each reference checked.
fn references(l: &ListBlock, lists: &[ListBlock], diags: &mut Diags) -> Vec<ListRef> {
    let mut out = Vec::new();
    for e in expressions(l) {
        e.visit_traversals(&mut |t| {
            let steps = steps(t);
            if steps.first() != Some(&Step::Attr("list")) {
                return;
            }
            if let Some(r) = reference(&steps, t.span, lists, diags) {
                out.push(r);
            }
        });
    }
    out
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Step<'a> {
    Attr(&'a str),
    Index,
}

/// A traversal's steps from its root: `list`, `T`, `N`, `[…]`, `data`, …
fn steps(e: &Expr) -> Vec<Step<'_>> {
    match &e.kind {
        ExprKind::Variable(name) => vec![Step::Attr(name)],
        ExprKind::GetAttr(inner, name) => {
            let mut s = steps(inner);
            s.push(Step::Attr(name));
            s
        }
        ExprKind::Index(inner, _) => {
            let mut s = steps(inner);
            s.push(Step::Index);
            s
        }
        _ => Vec::new(),
    }
}

/// `list.T.N…`: the list it names, or the error Terraform gives.
fn reference(
    steps: &[Step<'_>],
    span: Span,
    lists: &[ListBlock],
    diags: &mut Diags,
) -> Option<ListRef> {
    let (Some(Step::Attr(type_name)), Some(Step::Attr(name))) = (steps.get(1), steps.get(2)) else {
        diags.push(
            Diag::new(
                CODE,
                "Invalid reference",
                "A reference to a list resource must give its type and name: list.TYPE.NAME.",
            )
            .at(span),
        );
        return None;
    };
    let Some(target) = lists
        .iter()
        .position(|l| l.type_name == *type_name && l.name == *name)
    else {
        diags.push(Diag::new(CODE, "Reference to undeclared resource", format!("A list resource {type_name:?} {name:?} has not been declared in the root module.")).at(span));
        return None;
    };
    let repeats = lists[target].count.is_some() || lists[target].for_each.is_some();
    let mut rest = &steps[3..];
    if repeats && rest.first() == Some(&Step::Index) {
        rest = &rest[1..];
    }
    let shape = |detail: &str| Diag::new(CODE, "Invalid list resource traversal", detail).at(span);
    match rest {
        [] => {}
        [Step::Attr("data"), ..] => match &rest[1..] {
            [] | [Step::Index] => {}
            [Step::Index, Step::Attr("state" | "identity"), ..] => {}
            [Step::Index, ..] => {
                diags.push(shape("The third step in the traversal for a list resource must be an attribute \"state\" or \"identity\"."));
                return None;
            }
            _ => {
                diags.push(shape(
                    "The second step in the traversal for a list resource must be an index.",
                ));
                return None;
            }
        },
        _ => {
            diags.push(shape("The first step in the traversal for a list resource must be an attribute \"data\"."));
            return None;
        }
    }
    Some(ListRef { target, span })
}
