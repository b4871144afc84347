//! Reading configuration values and building objects: the small vocabulary
//! every resource here speaks.

use std::collections::BTreeMap;
use strata_provider::DriverError;
use strata_value::types::Type;
use strata_value::value::Value;

pub fn get<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    v.unmarked()
        .entries()?
        .get(name)
        .filter(|x| !x.unmarked().is_null())
}

pub fn string(v: &Value, name: &str) -> Option<String> {
    get(v, name).and_then(|x| x.as_str()).map(str::to_string)
}

/// A string the configuration must hold; the schema makes it required, so
/// its absence is the engine's bug or a driver's, reported as such.
pub fn required(v: &Value, type_name: &str, name: &str) -> Result<String, DriverError> {
    string(v, name).ok_or_else(|| DriverError::InvalidConfig {
        type_name: type_name.to_string(),
        detail: format!("{name:?} is required"),
    })
}

pub fn boolean(v: &Value, name: &str) -> Option<bool> {
    get(v, name).and_then(Value::as_bool)
}

pub fn number(v: &Value, name: &str) -> Option<i64> {
    get(v, name)
        .and_then(Value::as_number)
        .and_then(|n| n.to_i64())
}

/// A `map(string)` attribute as pairs.
pub fn string_map(v: &Value, name: &str) -> BTreeMap<String, String> {
    get(v, name)
        .and_then(|m| m.unmarked().entries().cloned())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(k, x)| x.as_str().map(|s| (k, s.to_string())))
        .collect()
}

pub fn str_value(s: Option<&str>) -> Value {
    match s {
        Some(s) => Value::string(s),
        None => Value::Null(Type::String),
    }
}

pub fn bool_value(b: Option<bool>) -> Value {
    match b {
        Some(b) => Value::Bool(b),
        None => Value::Null(Type::Bool),
    }
}

pub fn map_value(m: &BTreeMap<String, String>) -> Value {
    Value::Map(
        Type::String,
        m.iter()
            .map(|(k, v)| (k.clone(), Value::string(v)))
            .collect(),
    )
}

/// An object from pairs.
pub fn object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}
