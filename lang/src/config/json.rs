//! The configuration as Terraform's plan JSON describes it
//! (`configuration`): modules, resources with their expressions as
//! constants or the references they make, outputs, variables.

use super::{Mode, Module};
use crate::eval::{EmptyScope, Evaluator};
use crate::lang::json::plain_json;
use crate::syntax::ast::{Expr, ExprKind, ObjectKey, TemplatePart};
use crate::syntax::Body;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use strata_provider::{BlockNesting, ResourceSchema};

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
    e.visit_traversals(&mut |t| references(t, &mut refs));
    if refs.is_empty() {
        json!({})
    } else {
        json!({ "references": refs })
    }
}

/// A traversal's root and its static steps as Terraform writes them
/// (`.name`, `[0]`, `["k"]`); an index computed from anything else ends
/// it, as it ends Terraform's.
fn steps(e: &Expr, out: &mut Vec<String>) -> Option<String> {
    match &e.kind {
        ExprKind::Variable(name) => Some(name.clone()),
        ExprKind::GetAttr(inner, attr) => {
            let root = steps(inner, out)?;
            out.push(format!(".{attr}"));
            Some(root)
        }
        ExprKind::Index(inner, key) => {
            let root = steps(inner, out)?;
            let step = match &key.kind {
                ExprKind::Literal(v) => format!("[{}]", plain_json(v)),
                ExprKind::Template(parts) => match parts.as_slice() {
                    [TemplatePart::Literal(k)] => format!("[{}]", json!(k)),
                    _ => String::new(),
                },
                // Where the traversal stops being static: `references`
                // cuts it here.
                _ => String::new(),
            };
            out.push(step);
            Some(root)
        }
        _ => None,
    }
}

/// The references one traversal makes, as Terraform lists them: the whole
/// traversal, then each shorter one down to the object it names, then
/// that object without its instance key (or a module output's call).
fn references(t: &Expr, refs: &mut Vec<String>) {
    let mut path = Vec::new();
    let Some(root) = steps(t, &mut path) else {
        return;
    };
    // Steps from the first computed index on are not part of it.
    if let Some(end) = path.iter().position(String::is_empty) {
        path.truncate(end);
    }
    let is_key = |s: &String| s.starts_with('[');
    let (subject, extra): (usize, Option<usize>) = match root.as_str() {
        "var" | "local" | "count" | "each" | "path" | "terraform" | "self" => (1, None),
        "module" => {
            let keyed = path.get(1).is_some_and(is_key);
            let call = if keyed { 2 } else { 1 };
            match path.get(call) {
                Some(s) if !is_key(s) => (call + 1, Some(call)),
                _ if keyed => (2, Some(1)),
                _ => (1, None),
            }
        }
        "data" | "ephemeral" if path.get(2).is_some_and(is_key) => (3, Some(2)),
        "data" | "ephemeral" => (2, None),
        _ if path.get(1).is_some_and(is_key) => (2, Some(1)),
        _ => (1, None),
    };
    if path.len() < subject {
        return;
    }
    let text = |n: usize| format!("{root}{}", path[..n].concat());
    for n in (subject..=path.len()).rev() {
        refs.push(text(n));
    }
    refs.extend(extra.map(text));
}

/// A body's arguments and blocks as Terraform's `expressions`: by the
/// schema when there is one (its arguments only; each block type as an
/// object, a list, or a map by label, as it nests), `dynamic` blocks left
/// out as Terraform leaves them out.
fn expressions(body: &Body, schema: Option<&ResourceSchema>) -> Json {
    let mut m = Map::new();
    for a in &body.attrs {
        if schema.is_none_or(|s| s.attributes.contains_key(&a.name)) {
            m.insert(a.name.clone(), expression(&a.expr));
        }
    }
    for b in body.blocks.iter().filter(|b| b.kind != "dynamic") {
        let bs = schema.and_then(|s| s.blocks.get(&b.kind));
        if schema.is_some() && bs.is_none() {
            continue;
        }
        let inner = expressions(&b.body, bs.map(|bs| &bs.schema));
        match (bs.map(|bs| bs.nesting), b.labels.first()) {
            (Some(BlockNesting::Single), _) => {
                m.insert(b.kind.clone(), inner);
            }
            (Some(BlockNesting::Map), Some((key, _))) => {
                let entry = m.entry(b.kind.clone()).or_insert_with(|| json!({}));
                if let Json::Object(by_key) = entry {
                    by_key.insert(key.clone(), inner);
                }
            }
            _ => {
                let entry = m.entry(b.kind.clone()).or_insert_with(|| json!([]));
                if let Json::Array(items) = entry {
                    items.push(inner);
                }
            }
        }
    }
    Json::Object(m)
}

/// The schemas the configuration's types have, where a driver gives one.
pub type Schemas<'s> = dyn Fn(Mode, &str) -> Option<&'s ResourceSchema> + 's;

/// `depends_on`'s entries as written (`aws_vpc.main`, `module.net`).
fn depends_on(list: &[Expr]) -> Option<Json> {
    let mut out = Vec::new();
    for e in list {
        let mut path = Vec::new();
        if let Some(root) = steps(e, &mut path) {
            out.push(json!(format!("{root}{}", path.concat())));
        }
    }
    (!out.is_empty()).then_some(Json::Array(out))
}

/// The path of the module `name` calls from the module at `path`.
fn child_path(path: &str, name: &str) -> String {
    if path.is_empty() {
        format!("module.{name}")
    } else {
        format!("{path}.module.{name}")
    }
}

/// A provider configuration's key in `provider_config`: its name
/// (`aws`, `aws.west`), after its module's path outside the root.
fn opaque_key(name: &str, module: &str) -> String {
    if module.is_empty() {
        name.to_string()
    } else {
        format!("{module}:{name}")
    }
}

fn resource(r: &super::Resource, module: &str, schemas: &Schemas) -> Json {
    let schema = schemas(r.mode, &r.type_name);
    let mut e = Map::new();
    // Addresses inside the module, as Terraform writes them.
    e.insert("address".into(), json!(r.address()));
    let mode = match r.mode {
        Mode::Data => "data",
        Mode::Managed => "managed",
        Mode::Ephemeral => "ephemeral",
    };
    e.insert("mode".into(), json!(mode));
    e.insert("type".into(), json!(r.type_name));
    e.insert("name".into(), json!(r.name));
    let local = match &r.provider {
        Some(p) => p
            .alias
            .as_ref()
            .map_or(p.name.clone(), |a| format!("{}.{a}", p.name)),
        None => r.provider_local_name().to_string(),
    };
    e.insert(
        "provider_config_key".into(),
        json!(opaque_key(&local, module)),
    );
    e.insert("expressions".into(), expressions(&r.body, schema));
    e.insert(
        "schema_version".into(),
        json!(schema.map_or(0, |s| s.version)),
    );
    if let Some(c) = &r.count {
        e.insert("count_expression".into(), expression(c));
    }
    if let Some(f) = &r.for_each {
        e.insert("for_each_expression".into(), expression(f));
    }
    if let Some(d) = depends_on(&r.depends_on) {
        e.insert("depends_on".into(), d);
    }
    Json::Object(e)
}

/// Module `m`, at `path` (`module.a.module.b`, empty for the root).
fn module(m: &Module, path: &str, schemas: &Schemas) -> Json {
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
        if let Some(d) = depends_on(&o.depends_on) {
            e.insert("depends_on".into(), d);
        }
        outputs.insert(o.name.clone(), Json::Object(e));
    }
    if !outputs.is_empty() {
        out.insert("outputs".into(), Json::Object(outputs));
    }
    // Managed resources, then data sources, each by address; ephemeral
    // resources are left out, as Terraform leaves them.
    let mut sorted: Vec<&super::Resource> = m
        .resources
        .iter()
        .filter(|r| r.mode != Mode::Ephemeral)
        .collect();
    sorted.sort_by_key(|r| (r.mode == Mode::Data, r.address()));
    let resources: Vec<Json> = sorted
        .into_iter()
        .map(|r| resource(r, path, schemas))
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
            module(&c.module, &child_path(path, &c.name), schemas),
        );
        if let Some(v) = &c.version {
            e.insert("version_constraint".into(), json!(v.constraint));
        }
        if let Some(d) = depends_on(&c.depends_on) {
            e.insert("depends_on".into(), d);
        }
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

/// One entry of `provider_config`, and the configuration (key) it stands
/// for when it is a parent module's, passed down or inherited.
struct ProviderEntry {
    json: Map<String, Json>,
    parent: Option<String>,
}

/// The source address of the local name `name` in `m`; Terraform's
/// builtin provider for `terraform`.
fn full_name(m: &Module, name: &str) -> String {
    match m.declared_source(name) {
        Some(s) => s,
        None if name == "terraform" => "terraform.io/builtin/terraform".into(),
        None => m.provider_source(name),
    }
}

/// The key a configuration inherited from `key` (in the parent) leads to:
/// the furthest ancestor entry of the same provider.
fn source_key(key: String, full: &str, all: &BTreeMap<String, ProviderEntry>) -> Option<String> {
    let mut found = None;
    let mut at = Some(key);
    while let Some(k) = at {
        let Some(e) = all.get(&k).filter(|e| e.json["full_name"] == json!(full)) else {
            break;
        };
        at = e.parent.clone();
        found = Some(k);
    }
    found
}

/// What an entry says of a provider configuration without a block.
fn described(name: &str, full: &str, path: &str, version: Option<String>) -> Map<String, Json> {
    let mut json = Map::new();
    json.insert("name".into(), json!(name));
    json.insert("full_name".into(), json!(full));
    if !path.is_empty() {
        json.insert("module_address".into(), json!(path));
    }
    if let Some(v) = version {
        json.insert("version_constraint".into(), json!(v));
    }
    json
}

/// `provider_config`'s entries for `m` (at `path`, `parent` its caller's
/// path) and the modules it calls, as Terraform gathers them.
fn provider_configs(
    m: &Module,
    path: &str,
    parent: Option<&str>,
    all: &mut BTreeMap<String, ProviderEntry>,
) {
    let version = |name: &str| {
        let p = m.settings.provider_sources.iter().find(|p| p.name == name);
        p.and_then(|p| p.version.clone())
    };
    let entry = |name: &str| described(name, &full_name(m, name), path, version(name));
    for p in &m.providers {
        let mut json = entry(&p.name);
        let mut name = p.name.clone();
        if let Some(a) = &p.alias {
            json.insert("alias".into(), json!(a));
            name = format!("{name}.{a}");
        }
        let exprs = expressions(&p.body, None);
        let exprs = match exprs {
            Json::Object(mut e) => {
                e.remove("alias");
                e.remove("version");
                e
            }
            _ => Map::new(),
        };
        if !exprs.is_empty() {
            json.insert("expressions".into(), Json::Object(exprs));
        }
        let key = opaque_key(&name, path);
        all.insert(key, ProviderEntry { json, parent: None });
    }
    // What the module requires or its resources imply, without a block:
    // a parent's configuration when it has one of the same provider.
    let mut names: Vec<&str> = m
        .settings
        .provider_sources
        .iter()
        .map(|p| p.name.as_str())
        .chain(m.resources.iter().map(|r| r.provider_local_name()))
        .collect();
    names.sort_unstable();
    names.dedup();
    for name in &names {
        let key = opaque_key(name, path);
        if all.contains_key(&key) {
            continue;
        }
        let json = entry(name);
        let parent = parent.and_then(|p| source_key(opaque_key(name, p), &full_name(m, name), all));
        all.insert(key, ProviderEntry { json, parent });
    }
    // And each provider under its type's name, as a default configuration
    // of it would be known, whatever local name the module gives it.
    for full in names.iter().map(|n| full_name(m, n)) {
        let type_name = full.rsplit('/').next().unwrap_or_default();
        let key = opaque_key(type_name, path);
        if all.contains_key(&key) {
            continue;
        }
        let json = described(type_name, &full, path, None);
        let parent = parent.and_then(|p| source_key(opaque_key(type_name, p), &full, all));
        all.insert(key, ProviderEntry { json, parent });
    }
    for c in &m.module_calls {
        let child = child_path(path, &c.name);
        for (inner, outer) in &c.providers {
            let named = |r: &super::ProviderRef| {
                r.alias
                    .as_ref()
                    .map_or(r.name.clone(), |a| format!("{}.{a}", r.name))
            };
            let full = full_name(&c.module, &inner.name);
            let json = described(&named(inner), &full, &child, None);
            let parent = source_key(opaque_key(&named(outer), path), &full, all);
            all.insert(
                opaque_key(&named(inner), &child),
                ProviderEntry { json, parent },
            );
        }
        provider_configs(&c.module, &child, Some(path), all);
    }
}

/// Points each resource at the configuration its key inherits, as
/// Terraform's plan JSON does, through every module.
fn inherited_keys(module: &mut Json, all: &BTreeMap<String, ProviderEntry>) {
    if let Some(rs) = module.get_mut("resources").and_then(Json::as_array_mut) {
        for r in rs {
            let key = r["provider_config_key"].as_str().unwrap_or_default();
            let parent = all.get(key).and_then(|e| e.parent.clone());
            if let Some(p) = parent.filter(|p| all.contains_key(p)) {
                r["provider_config_key"] = json!(p);
            }
        }
    }
    if let Some(calls) = module.get_mut("module_calls").and_then(Json::as_object_mut) {
        for c in calls.values_mut() {
            if let Some(m) = c.get_mut("module") {
                inherited_keys(m, all);
            }
        }
    }
}

/// `configuration` of the plan JSON for the root module `m`, with each
/// type's schema from `schemas`.
pub fn configuration(m: &Module, schemas: &Schemas) -> Json {
    let mut all = BTreeMap::new();
    provider_configs(m, "", None, &mut all);
    let mut root = module(m, "", schemas);
    inherited_keys(&mut root, &all);
    let providers: Map<String, Json> = all
        .into_iter()
        .filter(|(_, e)| e.parent.is_none())
        .map(|(k, e)| (k, Json::Object(e.json)))
        .collect();
    json!({ "provider_config": providers, "root_module": root })
}
