//! OpenTofu's warning about a provider configuration's `for_each` that is
//! the very `for_each` of a resource or module call using its instances
//! (OpenTofu's `providerIterationIdenticalWarning`): removing an element
//! later removes the provider instance in the same run as the objects it
//! must destroy, which then cannot be planned. Said where the configuration
//! is judged (`validate`, and with a plan), not an error.

use super::{Module, ProviderRef};
use crate::diag::{Diag, Sources};
use crate::syntax::Expr;

/// The warnings of the root module `root` (only its `provider` blocks
/// have instances).
pub fn warnings(root: &Module, sources: &Sources) -> Vec<Diag> {
    let mut out = Vec::new();
    for r in root
        .resources
        .iter()
        .filter(|r| r.mode == super::Mode::Managed)
    {
        if let (Some(p), Some(each)) = (&r.provider, &r.for_each) {
            let target = format!("-target={}", r.address());
            out.extend(matching(root, p, each, ("resource", &target), sources));
        }
    }
    for c in &root.module_calls {
        let Some(each) = &c.for_each else { continue };
        for (_, p) in &c.providers {
            let target = format!("-target=module.{}", c.name);
            out.extend(matching(root, p, each, ("module", &target), sources));
        }
    }
    out
}

/// The warning for block `(kind, target)` whose `for_each` is `each`
/// when `p` names an instance of a configuration with the same one.
fn matching(
    root: &Module,
    p: &ProviderRef,
    each: &Expr,
    (kind, target): (&str, &str),
    sources: &Sources,
) -> Option<Diag> {
    p.key.as_ref()?;
    let block = root
        .providers
        .iter()
        .find(|b| b.name == p.name && b.alias == p.alias)?;
    let theirs = block.for_each.as_ref()?;
    if !(uses_anything(each) && uses_anything(theirs)) {
        return None;
    }
    if spelled(each, sources)? != spelled(theirs, sources)? {
        return None;
    }
    Some(
        Diag::new(
            "strata::provider::for_each_matches",
            format!("Provider configuration for_each matches {kind}"),
            format!("This provider configuration uses the same for_each expression as a {kind}, which means that subsequent removal of elements from this collection would cause a planning error.\n\nstrata relies on a provider instance to destroy resource instances that are associated with it, and so the provider instance must outlive all of its resource instances by at least one plan/apply round. For removal of instances to succeed in future you must structure the configuration so that the provider block's for_each expression can produce a superset of the instances of the resources associated with the provider configuration.\n\nTo destroy this object before removing the provider configuration, consider first performing a targeted destroy:\n    strata apply -destroy {target}"),
        )
        .at(each.span)
        .warning(),
    )
}

fn uses_anything(e: &Expr) -> bool {
    let mut any = false;
    e.visit_references(&mut |_, _, _| any = true);
    any
}

/// The expression's text without spaces or enclosing parentheses: two
/// spellings of one expression compare equal, as OpenTofu's best-effort
/// comparison of the two does.
fn spelled(e: &Expr, sources: &Sources) -> Option<String> {
    let text = sources.text(e.span.file);
    let raw = text.get(e.span.start as usize..e.span.end as usize)?;
    let mut s: String = raw.chars().filter(|c| !c.is_whitespace()).collect();
    while s.starts_with('(') && s.ends_with(')') {
        s = s[1..s.len() - 1].to_string();
    }
    Some(s)
}
