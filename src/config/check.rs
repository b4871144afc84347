//! `validate`: evaluate every expression of every module with variables and
//! resources standing in as unknown values of their declared types, so that
//! references, function calls and types are checked without any state.

use super::variables::CliInput;
use super::{ConfigScope, Module};
use crate::diag::{Diags, Sources};
use crate::lang::number::Number;
use crate::lang::value::Value;
use crate::syntax::{Body, Expr};
use std::collections::BTreeMap;

pub fn check_module(module: &Module, _inputs: &[CliInput], _sources: &mut Sources) -> Result<(), Diags> {
    let mut diags = Diags::default();
    check(module, &mut diags);
    diags.into_result(())
}

fn check(module: &Module, diags: &mut Diags) {
    // Like `terraform validate`, values of variables are not used: each is an
    // unknown of its declared type. Defaults must still fit their type.
    let mut vars = BTreeMap::new();
    for v in &module.variables {
        if let Some(def) = &v.default {
            let scope = ConfigScope::new(module, BTreeMap::new(), module.dir.clone());
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
        let ty = crate::lang::convert::strip_optional(&v.constraint.ty);
        vars.insert(v.name.clone(), Value::Unknown(ty).mark_if(v.sensitive));
    }
    let scope = ConfigScope::new(module, vars.clone(), module.dir.clone());
    let mut eval = |e: &Expr, scope: &ConfigScope, diags: &mut Diags| {
        if let Err(d) = scope.evaluator().eval(e) {
            diags.push(d);
        }
    };
    for l in &module.locals {
        eval(&l.expr, &scope, diags);
    }
    for o in &module.outputs {
        eval(&o.expr, &scope, diags);
    }
    for r in &module.resources {
        let mut s = ConfigScope::new(module, vars.clone(), module.dir.clone());
        if let Some(c) = &r.count {
            eval(c, &scope, diags);
            s.count_index = Some(Value::Unknown(crate::lang::types::Type::Number));
        }
        if let Some(f) = &r.for_each {
            eval(f, &scope, diags);
            s.each = Some((Value::Unknown(crate::lang::types::Type::String), Value::unknown()));
        }
        check_body(&r.body, &s, diags, &mut eval);
        for e in r.depends_on.iter().chain(&r.lifecycle.replace_triggered_by) {
            check_reference(e, &s, diags);
        }
    }
    for c in &module.module_calls {
        let mut s = ConfigScope::new(module, vars.clone(), module.dir.clone());
        if c.count.is_some() {
            s.count_index = Some(Value::Number(Number::zero()));
        }
        if c.for_each.is_some() {
            s.each = Some((Value::Unknown(crate::lang::types::Type::String), Value::unknown()));
        }
        for a in &c.inputs {
            eval(&a.expr, &s, diags);
        }
        check(&c.module, diags);
    }
    for p in &module.providers {
        check_body(&p.body, &scope, diags, &mut eval);
    }
}

fn check_body(
    body: &Body,
    scope: &ConfigScope,
    diags: &mut Diags,
    eval: &mut dyn FnMut(&Expr, &ConfigScope, &mut Diags),
) {
    for a in &body.attrs {
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

/// `depends_on` entries must name something that exists.
fn check_reference(e: &Expr, scope: &ConfigScope, diags: &mut Diags) {
    if let Err(d) = scope.evaluator().eval(e) {
        diags.push(d);
    }
}
