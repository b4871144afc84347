//! The configuration as Terraform's plan JSON describes it
//! (`configuration`): modules, resources with their expressions as
//! constants or the references they make, outputs, variables.

use super::{Mode, Module};
use crate::eval::{EmptyScope, Evaluator};
use crate::lang::json::plain_json;
use crate::syntax::ast::{Expr, ExprKind, ObjectKey, TemplatePart};
use crate::syntax::Body;
use serde_json::{json, Map, Value as Json};
use std::path::PathBuf;

/// Whether `e` is made of literals only (no references, no calls), so its
/// value is known without any context, as Terraform's `constant_value`.
fn constant(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Literal(_) => true,
        ExprKind::Template(parts) => parts.iter().all(|p| matches!(p, TemplatePart::Literal(_))),
        ExprKind::Tuple(items) => items.iter().all(constant),
        ExprKind::Object(items) => items
            .iter()
            .all(|(k, v)| matches!(k, ObjectKey::Name(_)) && constant(v)),
        ExprKind::Parens(e) | ExprKind::Unary(_, e) => constant(e),
        ExprKind::Binary(chain) => {
            constant(&chain.first) && chain.rest.iter().all(|o| constant(&o.rhs))
        }
        _ => false,
    }
}

/// One expression: `{"constant_value": V}`, `{"references": [...]}`, or
/// `{}` for a computation that references nothing.
pub fn expression(e: &Expr) -> Json {
    if constant(e) {
        if let Ok(v) = Evaluator::new(&EmptyScope, PathBuf::new()).eval(e) {
            return json!({ "constant_value": plain_json(&v) });
        }
    }
    let mut refs: Vec<String> = Vec::new();
    e.visit_references(&mut |root, attrs, _| {
        let mut add = |s: String| {
            if !refs.contains(&s) {
                refs.push(s);
            }
        };
        match (root, attrs) {
            ("var" | "local" | "count" | "each" | "path" | "terraform" | "self", [a, ..]) => {
                add(format!("{root}.{a}"))
            }
            ("module" | "data", [a, b, ..]) => {
                add(format!("{root}.{a}.{b}"));
                add(format!("{root}.{a}"));
            }
            (_, [a, b, ..]) => {
                add(format!("{root}.{a}.{b}"));
                add(format!("{root}.{a}"));
            }
            (_, [a]) => add(format!("{root}.{a}")),
            _ => add(root.to_string()),
        }
    });
    if refs.is_empty() {
        json!({})
    } else {
        json!({ "references": refs })
    }
}

fn expressions(body: &Body) -> Json {
    let mut m = Map::new();
    for a in &body.attrs {
        m.insert(a.name.clone(), expression(&a.expr));
    }
    for b in &body.blocks {
        let entry = m.entry(b.kind.clone()).or_insert_with(|| json!([]));
        if let Json::Array(items) = entry {
            items.push(expressions(&b.body));
        }
    }
    Json::Object(m)
}

fn provider_key(type_name: &str) -> String {
    type_name.split('_').next().unwrap_or(type_name).to_string()
}

fn module(m: &Module, prefix: &str) -> Json {
    let mut out = Map::new();
    let mut outputs = Map::new();
    for o in &m.outputs {
        let mut e = Map::new();
        e.insert("expression".into(), expression(&o.expr));
        if o.sensitive {
            e.insert("sensitive".into(), json!(true));
        }
        if let Some(d) = &o.description {
            e.insert("description".into(), json!(d));
        }
        outputs.insert(o.name.clone(), Json::Object(e));
    }
    if !outputs.is_empty() {
        out.insert("outputs".into(), Json::Object(outputs));
    }
    let mut sorted: Vec<&super::Resource> = m.resources.iter().collect();
    sorted.sort_by_key(|r| r.address());
    let resources: Vec<Json> = sorted
        .into_iter()
        .map(|r| {
            let mut e = Map::new();
            e.insert("address".into(), json!(format!("{prefix}{}", r.address())));
            e.insert(
                "mode".into(),
                json!(if r.mode == Mode::Data {
                    "data"
                } else {
                    "managed"
                }),
            );
            e.insert("type".into(), json!(r.type_name));
            e.insert("name".into(), json!(r.name));
            e.insert(
                "provider_config_key".into(),
                json!(provider_key(&r.type_name)),
            );
            e.insert("expressions".into(), expressions(&r.body));
            e.insert("schema_version".into(), json!(0));
            if let Some(c) = &r.count {
                e.insert("count_expression".into(), expression(c));
            }
            if let Some(f) = &r.for_each {
                e.insert("for_each_expression".into(), expression(f));
            }
            Json::Object(e)
        })
        .collect();
    if !resources.is_empty() {
        out.insert("resources".into(), Json::Array(resources));
    }
    let mut calls = Map::new();
    for c in &m.module_calls {
        let mut e = Map::new();
        e.insert("source".into(), json!(c.source));
        let mut exprs = Map::new();
        for a in &c.inputs {
            exprs.insert(a.name.clone(), expression(&a.expr));
        }
        e.insert("expressions".into(), Json::Object(exprs));
        if let Some(x) = &c.count {
            e.insert("count_expression".into(), expression(x));
        }
        if let Some(x) = &c.for_each {
            e.insert("for_each_expression".into(), expression(x));
        }
        e.insert(
            "module".into(),
            module(&c.module, &format!("{prefix}module.{}.", c.name)),
        );
        calls.insert(c.name.clone(), Json::Object(e));
    }
    if !calls.is_empty() {
        out.insert("module_calls".into(), Json::Object(calls));
    }
    let mut vars = Map::new();
    for v in &m.variables {
        let mut e = Map::new();
        if let Some(d) = &v.default {
            if let Ok(val) = Evaluator::new(&EmptyScope, PathBuf::new()).eval(d) {
                e.insert("default".into(), plain_json(&val));
            }
        }
        if let Some(d) = &v.description {
            e.insert("description".into(), json!(d));
        }
        if v.sensitive {
            e.insert("sensitive".into(), json!(true));
        }
        vars.insert(v.name.clone(), Json::Object(e));
    }
    if !vars.is_empty() {
        out.insert("variables".into(), Json::Object(vars));
    }
    Json::Object(out)
}

/// `configuration` of the plan JSON for the root module `m`.
pub fn configuration(m: &Module) -> Json {
    let mut providers = Map::new();
    fn types(m: &Module, out: &mut Vec<String>) {
        out.extend(m.resources.iter().map(|r| provider_key(&r.type_name)));
        for c in &m.module_calls {
            types(&c.module, out);
        }
    }
    let mut keys = Vec::new();
    types(m, &mut keys);
    keys.sort();
    keys.dedup();
    for k in keys {
        let full = if k == "terraform" {
            "terraform.io/builtin/terraform".to_string()
        } else {
            format!("registry.terraform.io/hashicorp/{k}")
        };
        providers.insert(k.clone(), json!({"name": k, "full_name": full}));
    }
    json!({ "provider_config": providers, "root_module": module(m, "") })
}
