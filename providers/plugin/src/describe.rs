//! A provider's schemas in the words it gave them, as Terraform's
//! `providers schema -json` shows them: descriptions and their kind,
//! deprecation, nested attributes and nesting modes kept as the provider
//! declared them, which the schemas strata converts for itself
//! (`convert.rs`) do not all keep.

use crate::proto::tfplugin6::schema::{
    nested_block, object, Attribute, Block, NestedBlock, Object,
};
use crate::proto::tfplugin6::{self as v6, Function, Schema, StringKind};
use serde_json::{json, Map, Value as Json};

/// `provider_schemas`' entry for one provider.
pub fn provider_json(r: &v6::get_provider_schema::Response) -> Json {
    let mut out = Map::new();
    out.insert("provider".into(), schema(r.provider.as_ref()));
    let schemas = |all: &std::collections::HashMap<String, Schema>| {
        let mut sorted: Vec<(&String, &Schema)> = all.iter().collect();
        sorted.sort_by_key(|(k, _)| *k);
        sorted
            .into_iter()
            .map(|(k, s)| (k.clone(), schema(Some(s))))
            .collect::<Map<String, Json>>()
    };
    put_map(&mut out, "resource_schemas", schemas(&r.resource_schemas));
    put_map(
        &mut out,
        "data_source_schemas",
        schemas(&r.data_source_schemas),
    );
    put_map(
        &mut out,
        "ephemeral_resource_schemas",
        schemas(&r.ephemeral_resource_schemas),
    );
    put_map(
        &mut out,
        "list_resource_schemas",
        schemas(&r.list_resource_schemas),
    );
    let mut functions: Vec<(&String, &Function)> = r.functions.iter().collect();
    functions.sort_by_key(|(k, _)| *k);
    let functions = functions
        .into_iter()
        .map(|(k, f)| (k.clone(), function(f)))
        .collect();
    put_map(&mut out, "functions", functions);
    // Each action's `config` block, under `block` (Terraform 1.14).
    let mut actions: Vec<_> = r.action_schemas.iter().collect();
    actions.sort_by_key(|(k, _)| *k);
    let actions = actions
        .into_iter()
        .map(|(k, a)| {
            let s = schema(a.schema.as_ref());
            (k.clone(), json!({ "block": s["block"] }))
        })
        .collect();
    put_map(&mut out, "action_schemas", actions);
    Json::Object(out)
}

/// `provider_json`'s entry with Terraform 1.12's `resource_identity_schemas`
/// added: each managed type's identity schema, as the driver read it.
pub fn with_identities<'s>(
    mut described: Json,
    identities: impl Iterator<Item = (&'s str, &'s strata_provider::IdentitySchema)>,
) -> Json {
    let mut sorted: Vec<_> = identities.collect();
    sorted.sort_by_key(|(k, _)| *k);
    let schemas: Map<String, Json> = sorted
        .into_iter()
        .map(|(k, s)| {
            let attributes: Map<String, Json> = s
                .attributes
                .iter()
                .map(|(name, a)| {
                    let mut o = Map::new();
                    o.insert("type".into(), strata_value::json::type_to_json(&a.ty));
                    put_str(&mut o, "description", &a.description);
                    put_flag(&mut o, "required_for_import", a.required_for_import);
                    put_flag(&mut o, "optional_for_import", a.optional_for_import);
                    (name.clone(), Json::Object(o))
                })
                .collect();
            let mut o = Map::new();
            o.insert("version".into(), json!(s.version));
            put_map(&mut o, "attributes", attributes);
            (k.to_string(), Json::Object(o))
        })
        .collect();
    if let Json::Object(out) = &mut described {
        // After the functions and before the actions, where Terraform
        // writes it.
        let actions = out.shift_remove("action_schemas");
        put_map(out, "resource_identity_schemas", schemas);
        if let Some(a) = actions {
            out.insert("action_schemas".into(), a);
        }
    }
    described
}

/// Sets `key` to `m` unless it is empty, as Terraform leaves empty
/// collections out.
fn put_map(out: &mut Map<String, Json>, key: &str, m: Map<String, Json>) {
    if !m.is_empty() {
        out.insert(key.into(), Json::Object(m));
    }
}

fn put_str(out: &mut Map<String, Json>, key: &str, s: &str) {
    if !s.is_empty() {
        out.insert(key.into(), json!(s));
    }
}

fn put_flag(out: &mut Map<String, Json>, key: &str, on: bool) {
    if on {
        out.insert(key.into(), json!(true));
    }
}

fn kind(k: i32) -> &'static str {
    match StringKind::try_from(k) {
        Ok(StringKind::Markdown) => "markdown",
        _ => "plain",
    }
}

/// A type in cty's JSON notation, as the provider sent it.
fn type_json(bytes: &[u8]) -> Json {
    serde_json::from_slice(bytes).unwrap_or(Json::Null)
}

fn schema(s: Option<&Schema>) -> Json {
    let Some(s) = s else {
        return json!({ "version": 0 });
    };
    let mut out = Map::new();
    out.insert("version".into(), json!(s.version.max(0)));
    if let Some(b) = &s.block {
        out.insert("block".into(), block(b));
    }
    Json::Object(out)
}

fn block(b: &Block) -> Json {
    let mut out = Map::new();
    put_map(&mut out, "attributes", attributes(&b.attributes));
    let block_types = b
        .block_types
        .iter()
        .map(|n| (n.type_name.clone(), block_type(n)))
        .collect();
    put_map(&mut out, "block_types", block_types);
    put_str(&mut out, "description", &b.description);
    out.insert("description_kind".into(), json!(kind(b.description_kind)));
    put_flag(&mut out, "deprecated", b.deprecated);
    put_str(&mut out, "deprecation_message", &b.deprecation_message);
    Json::Object(out)
}

fn attributes(all: &[Attribute]) -> Map<String, Json> {
    all.iter().map(|a| (a.name.clone(), attribute(a))).collect()
}

fn attribute(a: &Attribute) -> Json {
    let mut out = Map::new();
    match &a.nested_type {
        Some(nested) => {
            out.insert("nested_type".into(), nested_type(nested));
        }
        None => {
            out.insert("type".into(), type_json(&a.r#type));
        }
    }
    put_str(&mut out, "description", &a.description);
    out.insert("description_kind".into(), json!(kind(a.description_kind)));
    put_flag(&mut out, "deprecated", a.deprecated);
    put_str(&mut out, "deprecation_message", &a.deprecation_message);
    put_flag(&mut out, "required", a.required);
    put_flag(&mut out, "optional", a.optional);
    put_flag(&mut out, "computed", a.computed);
    put_flag(&mut out, "sensitive", a.sensitive);
    put_flag(&mut out, "write_only", a.write_only);
    Json::Object(out)
}

fn nested_type(o: &Object) -> Json {
    let nesting = match object::NestingMode::try_from(o.nesting) {
        Ok(object::NestingMode::Single) => "single",
        Ok(object::NestingMode::List) => "list",
        Ok(object::NestingMode::Set) => "set",
        Ok(object::NestingMode::Map) => "map",
        _ => "invalid",
    };
    let mut out = Map::new();
    put_map(&mut out, "attributes", attributes(&o.attributes));
    out.insert("nesting_mode".into(), json!(nesting));
    Json::Object(out)
}

fn block_type(n: &NestedBlock) -> Json {
    let nesting = match nested_block::NestingMode::try_from(n.nesting) {
        Ok(nested_block::NestingMode::Single) => "single",
        Ok(nested_block::NestingMode::Group) => "group",
        Ok(nested_block::NestingMode::List) => "list",
        Ok(nested_block::NestingMode::Set) => "set",
        Ok(nested_block::NestingMode::Map) => "map",
        _ => "invalid",
    };
    let mut out = Map::new();
    out.insert("nesting_mode".into(), json!(nesting));
    let inner = n
        .block
        .as_ref()
        .map_or_else(|| block(&Block::default()), block);
    out.insert("block".into(), inner);
    if n.min_items > 0 {
        out.insert("min_items".into(), json!(n.min_items));
    }
    if n.max_items > 0 {
        out.insert("max_items".into(), json!(n.max_items));
    }
    Json::Object(out)
}

fn function(f: &Function) -> Json {
    let mut out = Map::new();
    put_str(&mut out, "description", &f.description);
    put_str(&mut out, "summary", &f.summary);
    put_str(&mut out, "deprecation_message", &f.deprecation_message);
    let returns = f
        .r#return
        .as_ref()
        .map_or(Json::Null, |r| type_json(&r.r#type));
    out.insert("return_type".into(), returns);
    if !f.parameters.is_empty() {
        let params = f.parameters.iter().map(parameter).collect();
        out.insert("parameters".into(), Json::Array(params));
    }
    if let Some(p) = &f.variadic_parameter {
        out.insert("variadic_parameter".into(), parameter(p));
    }
    Json::Object(out)
}

fn parameter(p: &v6::function::Parameter) -> Json {
    let mut out = Map::new();
    put_str(&mut out, "name", &p.name);
    put_str(&mut out, "description", &p.description);
    put_flag(&mut out, "is_nullable", p.allow_null_value);
    out.insert("type".into(), type_json(&p.r#type));
    Json::Object(out)
}
