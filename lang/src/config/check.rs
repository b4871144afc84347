//! `validate`: evaluate every expression of every module with variables and
//! resources standing in as unknown values of their declared types, so that
//! references, function calls and types are checked without any state.

use super::{ConfigScope, Module, Run};
use crate::diag::Diags;
use crate::lang::types::Type;
use crate::lang::value::Value;
use crate::syntax::{Body, Expr};
use std::collections::BTreeMap;
use std::rc::Rc;

/// `write_only` says which resource arguments are write-only (ephemeral
/// values may set them), from the providers' schemas.
pub fn check_module(
    module: &Module,
    run: &Rc<Run>,
    write_only: super::ephemeral::WriteOnly<'_>,
) -> Result<(), Diags> {
    let mut diags = Diags::default();
    check(module, run, Level::Root, &mut diags);
    super::ephemeral::check(module, true, write_only, &mut diags);
    let root_aliases: Vec<Aliased> = module
        .providers
        .iter()
        .filter_map(|p| {
            Some(Aliased {
                name: p.name.clone(),
                alias: p.alias.clone()?,
                instanced: p.for_each.is_some(),
            })
        })
        .collect();
    check_provider_refs(module, &root_aliases, &mut diags);
    diags.into_result(())
}

/// An aliased provider configuration a module has: a root `provider`
/// block, or one its call passes in (never with instances: a collection
/// of them cannot be passed).
struct Aliased {
    name: String,
    alias: String,
    instanced: bool,
}

/// Every aliased provider configuration a resource or a module call
/// names must exist where it is named: in the root, a `provider` block
/// with that alias; in a module, one its call passes in `providers`.
/// `available` is what the module at hand has. An instance key goes with
/// a configuration that has `for_each`, and only there, as OpenTofu
/// checks it.
fn check_provider_refs(module: &Module, available: &[Aliased], diags: &mut Diags) {
    use crate::diag::Diag;
    let check = |r: &super::ProviderRef, block: &str, diags: &mut Diags| {
        let Some(alias) = &r.alias else { return };
        let Some(found) = available
            .iter()
            .find(|a| a.name == r.name && a.alias == *alias)
        else {
            diags.push(
                Diag::new(
                    "strata::provider::undeclared",
                    "Reference to an undefined provider configuration",
                    format!("There is no provider configuration {}.{alias} here: declare it with a provider \"{}\" block with alias = \"{alias}\" in the root module, and pass it to modules in their providers argument.", r.name, r.name),
                )
                .at(r.span),
            );
            return;
        };
        let summary = format!("Invalid {block} provider configuration");
        match (&r.key, found.instanced) {
            (Some(k), false) => diags.push(
                Diag::new("strata::provider::instance", summary, "An instance key can be specified only for a provider configuration that uses for_each.").at(k.span),
            ),
            (None, true) => diags.push(
                Diag::new("strata::provider::instance", summary, "A reference to a provider configuration which uses for_each requires an instance key. Passing a collection of provider instances into a child module is not allowed.").at(r.span),
            ),
            _ => {}
        }
    };
    for r in &module.resources {
        if let Some(p) = &r.provider {
            check(p, "resource", diags);
        }
    }
    for c in &module.module_calls {
        let mut passed = Vec::new();
        for (child, parent) in &c.providers {
            check(parent, "module", diags);
            if let Some(k) = &child.key {
                diags.push(
                    Diag::new(
                        "strata::provider::instance",
                        "Invalid module provider configuration",
                        "Instance keys are not allowed on the left side of a provider configuration assignment.",
                    )
                    .at(k.span),
                );
            }
            if let Some(a) = &child.alias {
                passed.push(Aliased {
                    name: child.name.clone(),
                    alias: a.clone(),
                    instanced: false,
                });
            }
        }
        check_provider_refs(&c.module, &passed, diags);
    }
}

/// What a `moved` address names.
#[derive(PartialEq, Eq)]
enum MovedKind {
    Resource,
    Module,
}

/// A static reference (names, and indexes by constant keys only) as its
/// segments; `None` for anything computed.
fn static_segments(e: &Expr, out: &mut Vec<Option<String>>) -> bool {
    use crate::syntax::ast::ExprKind;
    match &e.kind {
        ExprKind::Variable(n) => {
            out.push(Some(n.clone()));
            true
        }
        ExprKind::GetAttr(inner, a) => {
            let ok = static_segments(inner, out);
            out.push(Some(a.clone()));
            ok
        }
        ExprKind::Index(inner, key) => {
            let ok = static_segments(inner, out) && matches!(key.kind, ExprKind::Literal(_));
            out.push(None);
            ok
        }
        _ => false,
    }
}

fn moved_kind(e: &Expr) -> Result<MovedKind, crate::diag::Diag> {
    let mut segs = Vec::new();
    if !static_segments(e, &mut segs) {
        return Err(crate::diag::Diag::new(
            "strata::config::moved",
            "Invalid expression",
            "A single static variable reference is required: only attribute access and indexing with constant keys. No calculations, function calls, template expressions, etc are allowed here.",
        )
        .at(e.span));
    }
    let mut i = 0;
    while segs.get(i).is_some_and(|s| s.as_deref() == Some("module"))
        && segs.get(i + 1).is_some_and(Option::is_some)
    {
        i += 2;
        if segs.get(i).is_some_and(Option::is_none) {
            i += 1;
        }
    }
    Ok(if i == segs.len() {
        MovedKind::Module
    } else {
        MovedKind::Resource
    })
}

/// `moved` blocks: both addresses static, both resources or both modules
/// (the checks Terraform's validate makes; the rest happen when planning).
fn check_moved(module: &Module, diags: &mut Diags) {
    for m in &module.moved {
        match (moved_kind(&m.from), moved_kind(&m.to)) {
            (Ok(a), Ok(b)) if a != b => diags.push(
                crate::diag::Diag::new(
                    "strata::config::moved",
                    "Invalid \"moved\" addresses",
                    "The \"from\" and \"to\" addresses must either both refer to resources or both refer to modules.",
                )
                .at(m.span),
            ),
            (Ok(_), Ok(_)) => {}
            (a, b) => {
                for r in [a, b] {
                    if let Err(d) = r {
                        diags.push(d);
                    }
                }
            }
        }
    }
}

/// A scope of `module` as `validate` sees it: each variable an unknown
/// of its declared type (sensitive when declared so), resources unknown.
pub fn static_scope<'m>(module: &'m Module, run: &Rc<Run>) -> ConfigScope<'m> {
    let vars = module
        .variables
        .iter()
        .map(|v| {
            let ty = crate::lang::convert::strip_optional(&v.constraint.ty);
            (v.name.clone(), Value::Unknown(ty).mark_if(v.sensitive))
        })
        .collect();
    ConfigScope::new(module, vars, run.clone())
}

/// Where a module is: the root's outputs are shown, a child's are not.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Child,
}

fn check(module: &Module, run: &Rc<Run>, level: Level, diags: &mut Diags) {
    check_moved(module, diags);
    check_defaults(module, run, diags);
    // One scope for the whole module, so locals are evaluated once and the
    // declared names are indexed once; count/each are set per block.
    let mut scope = static_scope(module, run);
    for l in &module.locals {
        eval(&l.expr, &scope, diags);
    }
    for o in &module.outputs {
        check_output(o, &scope, level, diags);
    }
    for p in &module.providers {
        if let Some(e) = &p.for_each {
            eval(e, &scope, diags);
        }
        repeated(&mut scope, (false, p.for_each.is_some()));
        check_body(&p.body, &scope, diags, &eval);
        repeated(&mut scope, (false, false));
    }
    for r in &module.resources {
        check_resource(r, &mut scope, diags);
    }
    super::action::check_triggers(module, diags);
    for c in &module.checks {
        for a in &c.asserts {
            eval(&a.condition, &scope, diags);
            eval(&a.error_message, &scope, diags);
        }
    }
    for c in &module.module_calls {
        check_repetition(c.count.as_ref(), c.for_each.as_ref(), &scope, diags);
        repeated(&mut scope, (c.count.is_some(), c.for_each.is_some()));
        check_inputs(c, &scope, diags);
        for k in c.providers.iter().filter_map(|(_, p)| p.key.as_ref()) {
            eval(k, &scope, diags);
        }
        repeated(&mut scope, (false, false));
        check(&c.module, run, Level::Child, diags);
    }
}

/// An expression that must evaluate (to anything, unknowns included).
fn eval(e: &Expr, scope: &ConfigScope, diags: &mut Diags) {
    if let Err(d) = scope.evaluator().eval(e) {
        diags.push(d);
    }
}

/// `count.index` and `each` as unknowns of their types while a block
/// with `count` or `for_each` is checked; gone after.
fn repeated(scope: &mut ConfigScope, (count, for_each): (bool, bool)) {
    scope.count_index = count.then_some(Value::Unknown(Type::Number));
    scope.each = for_each.then(|| (Value::Unknown(Type::String), Value::unknown()));
}

/// Like `terraform validate`, values of variables are not used: each is
/// an unknown of its declared type. Defaults must still fit their type.
fn check_defaults(module: &Module, run: &Rc<Run>, diags: &mut Diags) {
    // One scope for every default (a scope indexes the module's names:
    // 10 000 resources' worth, once).
    let mut scope = None;
    for v in &module.variables {
        let Some(def) = &v.default else {
            continue;
        };
        let scope =
            scope.get_or_insert_with(|| ConfigScope::new(module, BTreeMap::new(), run.clone()));
        match scope.evaluator().eval(def) {
            Ok(dv) => {
                if let Err(e) = v.constraint.admit(&dv) {
                    diags.push(
                        crate::diag::Diag::new(
                            "strata::config::variable_default",
                            "Invalid default value for variable",
                            format!("This default value is not compatible with the variable's type constraint: {e}."),
                        )
                        .at(def.span),
                    );
                }
            }
            Err(d) => diags.push(d),
        }
    }
}

/// An output's preconditions and value; as Terraform does, a root
/// module's output must say it is sensitive when its value is, so a
/// secret is never printed by accident (a child's is never printed: its
/// value keeps its marks where it is used).
fn check_output(o: &super::Output, scope: &ConfigScope, level: Level, diags: &mut Diags) {
    for c in &o.preconditions {
        eval(&c.condition, scope, diags);
        eval(&c.error_message, scope, diags);
    }
    match scope.evaluator().eval(&o.expr) {
        Ok(v) if level == Level::Root && v.contains_sensitive() && !o.sensitive => diags.push(
            crate::diag::Diag::new(
                "strata::config::sensitive_output",
                "Output refers to sensitive values",
                "This output's value is derived from sensitive values. As in Terraform, an output containing sensitive data must be marked sensitive, so a secret is never printed by accident. If you do intend to export this data, add to the output block:\n    sensitive = true",
            )
            .at(o.decl),
        ),
        Ok(_) => {}
        Err(d) => diags.push(d),
    }
}

/// A resource's arguments, meta-arguments and conditions.
fn check_resource(r: &super::Resource, scope: &mut ConfigScope, diags: &mut Diags) {
    check_repetition(r.count.as_ref(), r.for_each.as_ref(), scope, diags);
    repeated(scope, (r.count.is_some(), r.for_each.is_some()));
    check_body(&r.body, scope, diags, &eval);
    let key = r.provider.iter().flat_map(|p| &p.key);
    for e in r
        .depends_on
        .iter()
        .chain(&r.lifecycle.replace_triggered_by)
        .chain(key)
    {
        eval(e, scope, diags);
    }
    for c in &r.lifecycle.preconditions {
        eval(&c.condition, scope, diags);
        eval(&c.error_message, scope, diags);
    }
    // `self` is the object, not known before it is planned.
    scope.self_value = Some(Value::unknown());
    for c in &r.lifecycle.postconditions {
        eval(&c.condition, scope, diags);
        eval(&c.error_message, scope, diags);
    }
    scope.self_value = None;
    repeated(scope, (false, false));
}

/// A module call's inputs evaluate, and those known already are held to
/// the child's type constraints and validation rules, as Terraform's
/// `validate` holds them (the root's variables are unknown here, so only
/// what the configuration itself fixes is judged). A missing input is
/// the decoder's to report.
fn check_inputs(call: &super::ModuleCall, scope: &ConfigScope, diags: &mut Diags) {
    let mut inputs = BTreeMap::new();
    for a in &call.inputs {
        match scope.evaluator().eval(&a.expr) {
            Ok(v) => {
                inputs.insert(a.name.clone(), (v, a.expr.span));
            }
            Err(d) => diags.push(d),
        }
    }
    let (_, errors) = super::variables::resolve_inputs(&call.module, &inputs, &call.name);
    errors
        .into_iter()
        .filter(|d| d.code != "strata::config::missing_variable")
        .for_each(|d| diags.push(d));
}

/// `count` and `for_each` evaluate, and when known must be acceptable.
fn check_repetition(
    count: Option<&Expr>,
    for_each: Option<&Expr>,
    scope: &ConfigScope,
    diags: &mut Diags,
) {
    if let Some(c) = count {
        match scope.evaluator().eval(c) {
            Ok(v) => {
                if let Err(d) = super::repeat::count(&v, c.span) {
                    diags.push(d);
                }
            }
            Err(d) => diags.push(d),
        }
    }
    if let Some(f) = for_each {
        match scope.evaluator().eval(f) {
            Ok(v) => {
                if let Err(d) = super::repeat::for_each(&v, f.span) {
                    diags.push(d);
                }
            }
            Err(d) => diags.push(d),
        }
    }
}

fn check_body(
    body: &Body,
    scope: &ConfigScope,
    diags: &mut Diags,
    eval: &dyn Fn(&Expr, &ConfigScope, &mut Diags),
) {
    for a in &body.attrs {
        // In JSON these blocks are still arguments until their schema is known.
        if body.json && matches!(a.name.as_str(), "dynamic" | "provisioner" | "connection") {
            continue;
        }
        eval(&a.expr, scope, diags);
    }
    for b in &body.blocks {
        // `dynamic` blocks and provisioners introduce their own iterator names;
        // their bodies are checked when those stages exist.
        if b.kind == "dynamic" || b.kind == "provisioner" || b.kind == "connection" {
            continue;
        }
        check_body(&b.body, scope, diags, eval);
    }
}
