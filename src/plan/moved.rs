//! `moved` blocks: renaming objects of the prior state before planning, so
//! a renamed resource, a new instance key or a renamed module call plans as
//! a move rather than a delete and a create.

use super::refresh::PriorInstance;
use crate::builtin::Drivers;
use crate::config::Module;
use crate::diag::{Diag, Diags, Span};
use crate::syntax::ast::Expr;
use std::collections::{HashMap, HashSet};
use strata_state::model::{Address, ModulePath, ResourceAddr};

/// A static reference written out as an address: `t.n["k"]`, `module.a[0]`.
pub fn text(e: &Expr) -> Option<String> {
    e.address_text()
}

enum Move {
    Resource {
        from: Address,
        to: Address,
        span: Span,
    },
    Module {
        from: ModulePath,
        to: ModulePath,
        span: Span,
    },
}

fn collect(m: &Module, prefix: &str, out: &mut Vec<Move>, diags: &mut Diags) {
    for mv in &m.moved {
        let (Some(from), Some(to)) = (text(&mv.from), text(&mv.to)) else {
            // validate reports non-static addresses.
            continue;
        };
        let (from, to) = (format!("{prefix}{from}"), format!("{prefix}{to}"));
        let modules = (ModulePath::parse(&from), ModulePath::parse(&to));
        match (Address::parse(&from), Address::parse(&to), modules) {
            (Some(from), Some(to), _) => out.push(Move::Resource {
                from,
                to,
                span: mv.span,
            }),
            (_, _, (Some(from), Some(to))) if !from.is_root() && !to.is_root() => {
                out.push(Move::Module {
                    from,
                    to,
                    span: mv.span,
                })
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

/// Where a module move `from` → `to` takes `path`: `module.a` →
/// `module.b` carries `module.a[0].module.c` to `module.b[0].module.c`
/// (a keyless `from` matches every instance, which keeps its key unless
/// `to` names one); `None` when the move is not about `path`.
fn moved_module(path: &ModulePath, from: &ModulePath, to: &ModulePath) -> Option<ModulePath> {
    let (from_last, from_parents) = from.steps().split_last()?;
    let (head, rest) = path.steps().split_at_checked(from.steps().len())?;
    let (last, parents) = head.split_last()?;
    let same_call = last.call == from_last.call;
    let same_key = from_last.key.is_none() || from_last.key == last.key;
    if parents != from_parents || !same_call || !same_key {
        return None;
    }
    let mut steps = to.steps().to_vec();
    if let Some(moved) = steps.last_mut() {
        if moved.key.is_none() && from_last.key.is_none() {
            moved.key = last.key.clone();
        }
    }
    steps.extend_from_slice(rest);
    Some(steps.into())
}

/// The call that makes the module at `path` (keys not looked at).
fn call_at<'m>(root: &'m Module, path: &ModulePath) -> Option<&'m crate::config::ModuleCall> {
    let (last, parents) = path.steps().split_last()?;
    let parent = root.module_at(&parents.to_vec().into())?;
    parent.module_calls.iter().find(|c| c.name == last.call)
}

/// Terraform's "Moved object still exists": a move whose `from` the
/// configuration still declares would rename the object and then make
/// another where it was, destroying what was real.
fn still_exists(mv: &Move, what: &str, declared: Span) -> Diag {
    let (from, to, span, noun) = match mv {
        Move::Resource { from, to, span } => (from.to_string(), to.to_string(), *span, "resource"),
        Move::Module { from, to, span } => (from.to_string(), to.to_string(), *span, "call"),
    };
    let noun = if what.ends_with("instance") {
        "instance"
    } else {
        noun
    };
    Diag::new(
        "strata::plan::moved",
        "Moved object still exists",
        format!("This statement declares a move from {from}, but that {what} is still declared.\n\nChange your configuration so that this {noun} will be declared as {to} instead."),
    )
    .at(span)
    .also("still declared here", declared)
}

/// Moves from a whole resource or a module call the configuration still
/// declares; a move from one instance is judged once instances are known
/// ([`instances_still_declared`]).
fn declarations_still_there(root: &Module, moves: &[Move], diags: &mut Diags) {
    for mv in moves {
        match mv {
            // A keyless `from` names the one instance of a resource or call
            // without count or for_each; one with them has no such
            // instance (`from = module.a`, `to = module.a[0]` is how count
            // is added to a call, as Terraform documents).
            Move::Resource { from, .. } if from.key.is_none() => {
                let single = root
                    .resource_at(&from.id)
                    .filter(|r| r.count.is_none() && r.for_each.is_none());
                if let Some(r) = single {
                    diags.push(still_exists(mv, "resource", r.span));
                }
            }
            Move::Module { from, .. } if from.steps().last().is_some_and(|s| s.key.is_none()) => {
                let single =
                    call_at(root, from).filter(|c| c.count.is_none() && c.for_each.is_none());
                if let Some(c) = single {
                    diags.push(still_exists(mv, "module call", c.span));
                }
            }
            _ => {}
        }
    }
}

/// Moves from one instance (`a[1]`, `module.m["x"]`) that the plan still
/// expands: `planned` says whether a resource instance was planned,
/// `expanded` whether a module instance exists.
pub fn instances_still_declared(
    root: &Module,
    planned: &dyn Fn(&Address) -> bool,
    expanded: &dyn Fn(&ModulePath) -> bool,
) -> Vec<Diag> {
    let mut moves = Vec::new();
    collect(root, "", &mut moves, &mut Diags::default());
    let mut out = Vec::new();
    for mv in &moves {
        match mv {
            Move::Resource { from, .. } if from.key.is_some() && planned(from) => {
                if let Some(r) = root.resource_at(&from.id) {
                    let repeat = r.count.as_ref().or(r.for_each.as_ref());
                    out.push(still_exists(
                        mv,
                        "resource instance",
                        repeat.map_or(r.span, |e| e.span),
                    ));
                }
            }
            Move::Module { from, .. }
                if from.steps().last().is_some_and(|s| s.key.is_some()) && expanded(from) =>
            {
                if let Some(c) = call_at(root, from) {
                    let repeat = c.count.as_ref().or(c.for_each.as_ref());
                    out.push(still_exists(
                        mv,
                        "module call instance",
                        repeat.map_or(c.span, |e| e.span),
                    ));
                }
            }
            _ => {}
        }
    }
    out
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
    declarations_still_there(root, &moves, &mut diags);
    let mut moved: HashMap<Address, Address> = HashMap::new();
    for mv in &moves {
        let taken: HashSet<Address> = prior
            .iter()
            .filter(|p| p.deposed.is_none())
            .map(|p| p.addr.clone())
            .collect();
        for p in prior.iter_mut().filter(|p| p.deposed.is_none()) {
            let new = match mv {
                Move::Resource { from, to, .. } => {
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
                Move::Module { from, to, .. } => {
                    let Some(module) = moved_module(&p.addr.id.module, from, to) else {
                        continue;
                    };
                    let mut a = p.addr.clone();
                    a.id.module = module;
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

/// The resources `moved` blocks take to another type: their objects are
/// decoded by the new type's driver, not their own.
pub fn retyped(root: &Module) -> Vec<ResourceAddr> {
    let mut moves = Vec::new();
    collect(root, "", &mut moves, &mut Diags::default());
    moves
        .into_iter()
        .filter_map(|m| match m {
            Move::Resource { from, to, .. } if from.id.type_name != to.id.type_name => {
                Some(from.id)
            }
            _ => None,
        })
        .collect()
}

/// Objects moved to another resource type, converted by the new type's
/// driver as Terraform's `MoveResourceState` does: one whose driver takes
/// no such moves is an error at the `moved` block. Objects kept as stored
/// for a move that did not take them are decoded where they are.
pub fn retype(
    root: &Module,
    prior: &mut [PriorInstance],
    moved: &HashMap<Address, Address>,
    drivers: &Drivers,
) -> Result<(), Diags> {
    let mut moves = Vec::new();
    collect(root, "", &mut moves, &mut Diags::default());
    let mut diags = Diags::default();
    for p in prior.iter_mut().filter(|p| p.deposed.is_none()) {
        let Some(old) = moved.get(&p.addr) else {
            continue;
        };
        if old.id.type_name == p.addr.id.type_name {
            continue;
        }
        let span = moves
            .iter()
            .find_map(|m| match m {
                Move::Resource { to, span, .. } if to.id == p.addr.id => Some(*span),
                _ => None,
            })
            .unwrap_or_default();
        if let Err(d) = convert(p, old, drivers) {
            diags.push(d.at(span));
        }
    }
    for p in prior.iter_mut() {
        if let Err(d) = super::refresh::decode_left(p, drivers) {
            diags.push(d);
        }
    }
    diags.into_result(())
}

/// `p` (stored as `old`'s type) as its new type's driver stores it.
fn convert(p: &mut PriorInstance, old: &Address, drivers: &Drivers) -> Result<(), Diag> {
    let target = &p.addr.id.type_name;
    let Some((driver, schema)) = drivers.resource(target) else {
        // The plan reports a type nothing serves.
        return Ok(());
    };
    let source_provider = strata_state::provider_of_config(&p.provider).to_string();
    let json = match p.as_stored.take() {
        Some(stored) => stored.json,
        None => p
            .value
            .clone()
            .unmark_deep()
            .0
            .to_json()
            .map_err(|e| Diag::new("strata::plan::moved", "Cannot move an object", e))?,
    };
    let req = strata_provider::MoveRequest {
        source_provider: &source_provider,
        source_type: &old.id.type_name,
        source_schema_version: p.schema_version,
        source_json: &json,
        source_kept: &p.kept,
        target_type: target,
    };
    let stored = match driver.move_state(req) {
        Some(Ok(stored)) => stored,
        Some(Err(e)) => {
            return Err(Diag::new(
                "strata::plan::moved",
                format!("Cannot move {old} to {}", p.addr),
                e.to_string(),
            ))
        }
        None => {
            return Err(Diag::new(
                "strata::plan::moved",
                "Unsupported `moved` across resource types",
                format!(
                    "The provider {:?} does not support moved operations across resource types and providers.",
                    crate::builtin::source_of(driver.as_ref())
                ),
            ))
        }
    };
    p.value = super::diff::with_marks(stored.value, None, schema);
    p.kept = stored.kept;
    p.schema_version = schema.version;
    p.provider = driver.provider_address();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(s: &str) -> ModulePath {
        ModulePath::parse(s).unwrap_or_else(|| panic!("{s} is no module path"))
    }

    #[test]
    fn module_moves_carry_keys_and_what_is_inside() {
        // (instance, from, to, where it goes)
        let rows = [
            ("module.a", "module.a", "module.b", Some("module.b")),
            ("module.a[0]", "module.a", "module.b", Some("module.b[0]")),
            (
                r#"module.a["x"].module.c"#,
                "module.a",
                "module.b",
                Some(r#"module.b["x"].module.c"#),
            ),
            ("module.a[1]", "module.a[1]", "module.b", Some("module.b")),
            ("module.a[1]", "module.a[0]", "module.b", None),
            (
                "module.a[0]",
                "module.a",
                "module.b[3]",
                Some("module.b[3]"),
            ),
            ("module.ab", "module.a", "module.b", None),
            ("module.x.module.a", "module.a", "module.b", None),
            (
                "module.x.module.a[2]",
                "module.x.module.a",
                "module.x.module.b",
                Some("module.x.module.b[2]"),
            ),
            ("", "module.a", "module.b", None),
        ];
        for (at, from, to, want) in rows {
            let got = moved_module(&path(at), &path(from), &path(to));
            assert_eq!(
                got.map(|p| p.to_string()).as_deref(),
                want,
                "{at} moved by {from} -> {to}"
            );
        }
    }
}
