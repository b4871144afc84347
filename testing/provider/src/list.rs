//! `stratatest_object` as a list resource (protocol 6.10), declared with
//! its identity (`STRATATEST_IDENTITY`): every object in the store whose
//! name starts with the `config` block's `name_prefix`, in name order, as
//! one event each — its identity, its name to show, and the object when
//! asked. A prefix `refuse` is the provider's own error, for the tests of
//! errors said where the block is.

use strata_plugin::proto::tfplugin6::schema::{Attribute, Block};
use strata_plugin::proto::tfplugin6::Schema;
use strata_value::json::type_to_json;
use strata_value::types::Type;
use strata_value::value::Value;

/// The `config` block's schema.
pub fn schema() -> Schema {
    Schema {
        version: 0,
        block: Some(Block {
            attributes: vec![Attribute {
                name: "name_prefix".into(),
                r#type: type_to_json(&Type::String).to_string().into_bytes(),
                optional: true,
                description: "Only objects whose name starts so.".into(),
                ..Attribute::default()
            }],
            ..Block::default()
        }),
    }
}

pub fn config_type() -> Type {
    Type::object([("name_prefix".to_string(), Type::String)].into())
}

/// The prefix a `config` value asks for ("" when none).
pub fn prefix(config: &Value) -> String {
    config
        .entries()
        .and_then(|a| a.get("name_prefix"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// An object's name, which a list result shows.
pub fn name(o: &Value) -> String {
    o.entries()
        .and_then(|a| a.get("name").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default()
}

/// The objects whose name starts with `prefix`, in name order.
pub fn found(objects: Vec<Value>, prefix: &str) -> Vec<Value> {
    let mut out: Vec<Value> = objects
        .into_iter()
        .filter(|o| name(o).starts_with(prefix))
        .collect();
    out.sort_by_key(name);
    out
}
