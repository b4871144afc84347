//! Ephemeral values (`ephemeral = true` variables and module outputs, and
//! ephemeral resources: `ephemeral.TYPE.NAME`) may reach providers,
//! locals, provisioners, a resource's write-only arguments and other
//! ephemeral places, never a resource's other arguments, a persisted
//! output or a module input that does not accept them: those end up in
//! the state, which outlives the run.
//!
//! What is ephemeral follows references, as Terraform's marks follow
//! values through every operator and function: an expression is derived
//! from an ephemeral value when it references one (directly or through
//! locals), outside an `ephemeralasnull(…)` call.

use super::{Mode, Module, ModuleCall, Resource};
use crate::diag::{Diag, Diags, Span};
use crate::syntax::Expr;
use std::collections::HashSet;

/// The ephemeral names of one module: `var.x`, `local.y`, `module.m.z`.
pub(super) struct Ephemeral {
    names: HashSet<String>,
}

impl Ephemeral {
    /// Whether the reference `root.attrs…` names an ephemeral value.
    pub(super) fn names(&self, root: &str, attrs: &[&str]) -> bool {
        let name = match (root, attrs) {
            ("module", [call, output, ..]) => format!("module.{call}.{output}"),
            ("ephemeral", [type_name, name, ..]) => format!("ephemeral.{type_name}.{name}"),
            ("ephemeral", _) => return true,
            (_, [a, ..]) => format!("{root}.{a}"),
            _ => return false,
        };
        self.names.contains(&name)
    }

    pub(super) fn of(m: &Module) -> Ephemeral {
        let mut names: HashSet<String> = m
            .variables
            .iter()
            .filter(|v| v.ephemeral)
            .map(|v| format!("var.{}", v.name))
            .collect();
        for r in m.resources.iter().filter(|r| r.mode == Mode::Ephemeral) {
            names.insert(r.address());
        }
        for c in &m.module_calls {
            for o in c.module.outputs.iter().filter(|o| o.ephemeral) {
                names.insert(format!("module.{}.{}", c.name, o.name));
            }
        }
        let mut e = Ephemeral { names };
        // Locals derived from ephemeral values, until nothing changes.
        loop {
            let found: Vec<String> = m
                .locals
                .iter()
                .filter(|l| !e.names.contains(&format!("local.{}", l.name)) && e.uses(&l.expr))
                .map(|l| format!("local.{}", l.name))
                .collect();
            if found.is_empty() {
                return e;
            }
            e.names.extend(found);
        }
    }

    fn uses(&self, e: &Expr) -> bool {
        let mut found = false;
        e.visit_references_outside("ephemeralasnull", &mut |root, attrs, _| {
            found |= self.names(root, attrs);
        });
        found
    }
}

/// Whether an argument of a resource is write-only, as its provider's
/// schema says: given the resource and the names leading to the argument
/// (its nested blocks', then its own). The caller knows the schemas; the
/// configuration does not.
pub type WriteOnly<'a> = &'a dyn Fn(&Resource, &[String]) -> bool;

fn not_allowed(summary: &str, detail: String, span: Span) -> Diag {
    Diag::new("strata::config::ephemeral", summary, detail).at(span)
}

/// Reports every place in `m` (and the modules it calls) where an
/// ephemeral value would be persisted; `root` says whether `m` is the root.
pub fn check(m: &Module, root: bool, write_only: WriteOnly<'_>, diags: &mut Diags) {
    let eph = Ephemeral::of(m);
    // With nothing ephemeral declared nothing can derive from it (a
    // reference to an undeclared ephemeral resource is refused as such),
    // so a large module's expressions are not walked for nothing.
    let any = !eph.names.is_empty();
    for r in m.resources.iter().filter(|_| any) {
        let meta = [
            ("count", &r.count),
            ("for_each", &r.for_each),
            ("enabled", &r.lifecycle.enabled),
        ];
        for (what, e) in meta {
            if let Some(e) = e.as_ref().filter(|e| eph.uses(e)) {
                diags.push(not_allowed(
                    &format!("Invalid {what} argument"),
                    format!("The {what} value is derived from an ephemeral value, which cannot be kept between the plan and the apply. Use only values that are not ephemeral to say how many instances there are."),
                    e.span,
                ));
            }
        }
        // An ephemeral resource's arguments may be ephemeral: it is
        // itself opened anew in every run.
        if r.mode != Mode::Ephemeral {
            body(r, &r.body, &mut Vec::new(), (&eph, write_only), diags);
        }
    }
    for o in &m.outputs {
        if root && o.ephemeral {
            diags.push(not_allowed(
                "Ephemeral output not allowed",
                "A root module's outputs are kept in the state, so they cannot be ephemeral."
                    .into(),
                o.span,
            ));
        } else if any && !o.ephemeral && eph.uses(&o.expr) {
            diags.push(not_allowed(
                "Ephemeral value not allowed",
                "This output is not declared ephemeral, so its value cannot be derived from an ephemeral value: it would be kept in the state.".into(),
                o.expr.span,
            ));
        }
    }
    for c in &m.module_calls {
        if any {
            inputs(c, &eph, diags);
        }
        check(&c.module, false, write_only, diags);
    }
}

/// A resource's arguments, nested blocks included (`path`: the blocks
/// `b` is inside).
fn body(
    r: &Resource,
    b: &crate::syntax::Body,
    path: &mut Vec<String>,
    check: (&Ephemeral, WriteOnly<'_>),
    diags: &mut Diags,
) {
    arguments(r, &b.attrs, path, check, diags);
    for nb in &b.blocks {
        match (nb.kind.as_str(), nb.labels.first()) {
            // A `dynamic` block stands for blocks of its label's type:
            // its `content` is their body.
            ("dynamic", Some((label, _))) => {
                path.push(label.clone());
                arguments(r, &nb.body.attrs, path, check, diags);
                for c in nb.body.blocks.iter().filter(|c| c.kind == "content") {
                    body(r, &c.body, path, check, diags);
                }
            }
            _ => {
                path.push(nb.kind.clone());
                body(r, &nb.body, path, check, diags);
            }
        }
        path.pop();
    }
}

fn arguments(
    r: &Resource,
    attrs: &[crate::syntax::Attribute],
    path: &mut Vec<String>,
    (eph, write_only): (&Ephemeral, WriteOnly<'_>),
    diags: &mut Diags,
) {
    for a in attrs {
        path.push(a.name.clone());
        if eph.uses(&a.expr) && !write_only(r, path) {
            diags.push(not_allowed(
                "Invalid use of ephemeral value",
                format!("Ephemeral values are not valid for {:?}, because it is not a write-only attribute and must be persisted to state.", a.name),
                a.expr.span,
            ));
        }
        path.pop();
    }
}

/// A module call's inputs: ephemeral only into ephemeral variables.
fn inputs(c: &ModuleCall, eph: &Ephemeral, diags: &mut Diags) {
    for a in &c.inputs {
        let accepts = c.module.variable(&a.name).is_some_and(|v| v.ephemeral);
        if !accepts && eph.uses(&a.expr) {
            diags.push(not_allowed(
                "Ephemeral value not allowed",
                format!("The input variable {:?} of module {:?} is not declared ephemeral, so it cannot be set to a value derived from an ephemeral value.", a.name, c.name),
                a.expr.span,
            ));
        }
    }
}
