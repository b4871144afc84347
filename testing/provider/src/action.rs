//! `stratatest_note`, an action (protocol 6.11): it appends its `message`
//! to `actions.log` in the store, saying so as it goes, so tests can see
//! what was invoked and in which order. `fail = true` makes it fail after
//! its first progress event; `pause_ms` spaces its events by that much;
//! an empty message is refused when planned.

use std::io::Write;
use strata_plugin::proto::tfplugin6::schema::{Attribute, Block};
use strata_plugin::proto::tfplugin6::{ActionSchema, Schema};
use strata_value::json::type_to_json;
use strata_value::types::Type;
use strata_value::value::Value;

pub const NOTE: &str = "stratatest_note";

pub fn schema() -> ActionSchema {
    let attribute = |name: &str, ty: &Type, required: bool| Attribute {
        name: name.into(),
        r#type: type_to_json(ty).to_string().into_bytes(),
        required,
        optional: !required,
        ..Attribute::default()
    };
    ActionSchema {
        schema: Some(Schema {
            version: 0,
            block: Some(Block {
                attributes: vec![
                    attribute("message", &Type::String, true),
                    attribute("fail", &Type::Bool, false),
                    attribute("pause_ms", &Type::Number, false),
                ],
                ..Block::default()
            }),
        }),
    }
}

pub fn config_type() -> Type {
    Type::object(
        [
            ("message".to_string(), Type::String),
            ("fail".to_string(), Type::Bool),
            ("pause_ms".to_string(), Type::Number),
        ]
        .into(),
    )
}

pub fn message(config: &Value) -> String {
    config
        .entries()
        .and_then(|a| a.get("message").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default()
}

/// How long to wait between events.
pub fn pause(config: &Value) -> Option<std::time::Duration> {
    let ms = config.entries()?.get("pause_ms")?.as_number()?.to_i64()?;
    Some(std::time::Duration::from_millis(u64::try_from(ms).ok()?))
}

pub fn fails(config: &Value) -> bool {
    matches!(
        config.entries().and_then(|a| a.get("fail")),
        Some(Value::Bool(true))
    )
}

/// Appends `message` to the store's `actions.log`.
pub fn note(store: &std::path::Path, message: &str) -> Result<(), String> {
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(store.join("actions.log"))
        .map_err(|e| e.to_string())?;
    writeln!(log, "{message}").map_err(|e| e.to_string())
}
