//! `deprecated` on variables and outputs (Terraform 1.15, OpenTofu 1.10):
//! a warning, with the author's reason, where a deprecated variable is
//! given a value — the root's from the command line, a variables file or
//! the environment; a child's by its module call's argument — and where a
//! caller uses a deprecated output of its child (`module.NAME.OUTPUT`).
//! Inside the module that declares them nothing is said, and a module
//! call with `ignore_nested_deprecations = true` silences what its child
//! (and the modules under it) would say.

use super::{Module, ModuleCall};
use crate::diag::{Diag, Span};
use crate::syntax::Expr;
use std::collections::BTreeSet;

/// The warnings of the configuration `root`, whose variables named in
/// `root_given` were given values.
pub fn warnings(root: &Module, root_given: &BTreeSet<String>) -> Vec<Diag> {
    let mut out: Vec<Diag> = root
        .variables
        .iter()
        .filter(|v| root_given.contains(&v.name))
        .filter_map(|v| Some(variable(&v.name, v.deprecated.as_ref()?, v.span)))
        .collect();
    module(root, &mut out);
    out
}

fn variable(name: &str, why: &str, at: Span) -> Diag {
    Diag::new(
        "strata::config::deprecated_variable",
        "Deprecated variable got a value",
        format!("The variable {name:?} is marked as deprecated by the module's author: {why}"),
    )
    .at(at)
    .warning()
}

/// What `m`'s own expressions and calls say, and (unless a call silences
/// it) what its children's do.
fn module(m: &Module, out: &mut Vec<Diag>) {
    for call in &m.module_calls {
        for a in &call.inputs {
            if let Some(why) = call
                .module
                .variable(&a.name)
                .and_then(|v| v.deprecated.as_ref())
            {
                out.push(variable(&a.name, why, a.name_span));
            }
        }
        if !call.ignore_nested_deprecations {
            module(&call.module, out);
        }
    }
    // Only a call with a deprecated output can be warned of: a module
    // calling none has its expressions left unread.
    let deprecating = m
        .module_calls
        .iter()
        .any(|c| c.module.outputs.iter().any(|o| o.deprecated.is_some()));
    if !deprecating {
        return;
    }
    for e in expressions(m) {
        e.visit_references(&mut |root, attrs, span| {
            if root != "module" {
                return;
            }
            if let Some(d) = output_used(m, attrs, span) {
                out.push(d);
            }
        });
    }
}

/// `module.CALL.OUTPUT` naming a deprecated output of `m`'s call.
fn output_used(m: &Module, attrs: &[&str], at: Span) -> Option<Diag> {
    let (call, output) = (attrs.first()?, attrs.get(1)?);
    let child: &ModuleCall = m.module_calls.iter().find(|c| c.name == *call)?;
    let o = child.module.outputs.iter().find(|o| o.name == *output)?;
    let why = o.deprecated.as_ref()?;
    Some(
        Diag::new(
            "strata::config::deprecated_output",
            "Deprecated output used",
            format!("The output {output:?} of module.{call} is marked as deprecated by the module's author: {why}"),
        )
        .at(at)
        .warning(),
    )
}

/// Every expression of `m` a reference to a child's output (or to a
/// resource's attribute) may be in.
pub fn expressions(m: &Module) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = Vec::new();
    out.extend(m.locals.iter().map(|l| &l.expr));
    out.extend(m.outputs.iter().map(|o| &o.expr));
    for call in &m.module_calls {
        out.extend(call.inputs.iter().map(|a| &a.expr));
        out.extend(call.count.iter().chain(&call.for_each));
    }
    for r in &m.resources {
        out.extend(r.body.expressions());
        out.extend(r.count.iter().chain(&r.for_each));
    }
    out
}
