//! `moved` blocks: renaming objects of the prior state before planning, so
//! a renamed resource, a new instance key or a renamed module call plans as
//! a move rather than a delete and a create.

use super::refresh::PriorInstance;
use crate::config::Module;
use crate::diag::{Diag, Diags};
use crate::lang::value::Value;
use crate::syntax::ast::{Expr, ExprKind};
use std::collections::{HashMap, HashSet};
use strata_state::model::Address;

/// A static reference written out as an address: `t.n["k"]`, `module.a[0]`.
pub fn text(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Variable(n) => Some(n.clone()),
        ExprKind::GetAttr(inner, a) => Some(format!("{}.{a}", text(inner)?)),
        ExprKind::Index(inner, key) => {
            let k = match &key.kind {
                ExprKind::Literal(v) => match v.unmarked() {
                    Value::String(s) => serde_json::Value::String(s.clone()).to_string(),
                    Value::Number(n) => n.to_text(),
                    _ => return None,
                },
                _ => return None,
            };
            Some(format!("{}[{k}]", text(inner)?))
        }
        _ => None,
    }
}

enum Move {
    Resource { from: Address, to: Address },
    Module { from: String, to: String },
}

fn collect(m: &Module, prefix: &str, out: &mut Vec<Move>, diags: &mut Diags) {
    for mv in &m.moved {
        let (Some(from), Some(to)) = (text(&mv.from), text(&mv.to)) else {
            // validate reports non-static addresses.
            continue;
        };
        let (from, to) = (format!("{prefix}{from}"), format!("{prefix}{to}"));
        match (Address::parse(&from), Address::parse(&to)) {
            (Some(from), Some(to)) => out.push(Move::Resource { from, to }),
            _ if from
                .rsplit('.')
                .nth(1)
                .is_some_and(|s| s.ends_with("module")) =>
            {
                out.push(Move::Module { from, to })
            }
            _ => diags.push(
                Diag::new(
                    "strata::plan::moved",
                    "Invalid \"moved\" address",
                    format!("Cannot tell what {from:?} or {to:?} names."),
                )
                .at(mv.span),
            ),
        }
    }
    for c in &m.module_calls {
        // Moves inside a repeated module would need one rule per instance;
        // they apply where the module is called once.
        if c.count.is_none() && c.for_each.is_none() {
            collect(
                &c.module,
                &format!("{prefix}module.{}.", c.name),
                out,
                diags,
            );
        }
    }
}

/// Renames prior objects as the `moved` blocks say. Returns, for each
/// object that moved, its new address and its old one.
pub fn apply(
    root: &Module,
    prior: &mut [PriorInstance],
) -> Result<HashMap<Address, Address>, Diags> {
    let mut moves = Vec::new();
    let mut diags = Diags::default();
    collect(root, "", &mut moves, &mut diags);
    let mut moved: HashMap<Address, Address> = HashMap::new();
    for mv in &moves {
        let taken: HashSet<Address> = prior
            .iter()
            .filter(|p| p.deposed.is_none())
            .map(|p| p.addr.clone())
            .collect();
        for p in prior.iter_mut().filter(|p| p.deposed.is_none()) {
            let new = match mv {
                Move::Resource { from, to } => {
                    if p.addr.id != from.id {
                        continue;
                    }
                    match (&from.key, &to.key) {
                        (None, None) => Address {
                            id: to.id.clone(),
                            key: p.addr.key.clone(),
                        },
                        (Some(k), _) if p.addr.key.as_ref() == Some(k) => to.clone(),
                        (None, Some(_)) if p.addr.key.is_none() => to.clone(),
                        _ => continue,
                    }
                }
                Move::Module { from, to } => {
                    let Some(m) = &p.addr.id.module else { continue };
                    let Some(rest) = m.strip_prefix(from.as_str()) else {
                        continue;
                    };
                    if !(rest.is_empty() || rest.starts_with('.') || rest.starts_with('[')) {
                        continue;
                    }
                    let mut a = p.addr.clone();
                    a.id.module = Some(format!("{to}{rest}"));
                    a
                }
            };
            // An object already at the new address wins; the move is stale.
            if taken.contains(&new) {
                continue;
            }
            let old = std::mem::replace(&mut p.addr, new);
            let first = moved.remove(&old).unwrap_or(old);
            moved.insert(p.addr.clone(), first);
        }
    }
    diags.into_result(moved)
}
