//! What the utility types share: reading and writing attributes of an
//! object, the `keepers`/`triggers` attribute, randomness, and errors in
//! the providers' words.

use rand::RngCore;
use strata_provider::{AttributeSchema, DriverError, PathStep, Problem};
use strata_value::types::Type;
use strata_value::value::{Attrs, Value};

pub(crate) use strata_provider::values::{boolean, get, number, string};

/// `object` with the given attributes replaced.
pub(crate) fn with(object: &Value, pairs: Vec<(&str, Value)>) -> Value {
    let mut attrs = object
        .unmarked()
        .entries()
        .cloned()
        .unwrap_or_else(Attrs::new);
    for (name, value) in pairs {
        attrs.insert(name.to_string(), value);
    }
    Value::Object(attrs)
}

/// A map of strings whose change replaces the object (`keepers`,
/// `triggers`).
pub(crate) fn replacing_map(description: &'static str) -> AttributeSchema {
    AttributeSchema::optional(Type::map(Type::String), description).force_new()
}

/// A computed string the provider keeps once set.
pub(crate) fn computed_string(description: &'static str) -> AttributeSchema {
    AttributeSchema::computed(Type::String, description)
}

/// `n` bytes from the operating system's generator.
pub(crate) fn random_bytes(type_name: &str, n: usize) -> Result<Vec<u8>, DriverError> {
    let mut out = vec![0u8; n];
    rand::rngs::OsRng
        .try_fill_bytes(&mut out)
        .map_err(|e| failed(type_name, "create", format!("no randomness available: {e}")))?;
    Ok(out)
}

/// A failure the provider reports for one of its calls.
pub(crate) fn failed(type_name: &str, operation: &str, detail: String) -> DriverError {
    DriverError::Api {
        operation: format!("{type_name} {operation}"),
        detail,
        retryable: false,
    }
}

/// A configured value the provider refuses, at its attribute.
pub(crate) fn invalid(attribute: &str, detail: String) -> Problem {
    Problem {
        error: true,
        summary: "Invalid Attribute Value".to_string(),
        detail,
        path: vec![PathStep::Attribute(attribute.to_string())],
    }
}

/// An import id the provider cannot read.
pub(crate) fn bad_import(type_name: &str, detail: String) -> DriverError {
    DriverError::InvalidConfig {
        type_name: type_name.to_string(),
        detail,
    }
}
