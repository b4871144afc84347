//! The `null` provider (hashicorp/null): `null_resource`, which only
//! exists in state and is replaced when its `triggers` change, and the
//! deprecated `null_data_source`, which echoes its inputs.

use crate::common::{computed_string, failed, random_bytes, replacing_map, with};
use crate::provider::{DataSource, Provider, Resource};
use async_trait::async_trait;
use strata_provider::{AttributeSchema, DriverError, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;

pub(crate) fn provider() -> Provider {
    Provider::new("null", "hashicorp/null")
        .resource("null_resource", NullResource)
        .data_source("null_data_source", NullData)
}

/// A random non-negative 63-bit integer in decimal, as the provider's ids
/// are (Go's `rand.Int()`).
fn random_decimal(type_name: &str) -> Result<String, DriverError> {
    let bytes = random_bytes(type_name, 8)?;
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes);
    Ok((u64::from_be_bytes(word) >> 1).to_string())
}

struct NullResource;

#[async_trait]
impl Resource for NullResource {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            (
                "triggers",
                replacing_map("Values that replace the resource when they change."),
            ),
            ("id", computed_string("A random value set on create.")),
        ])
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let id = random_decimal("null_resource")?;
        Ok(with(planned, vec![("id", Value::string(id))]))
    }
}

struct NullData;

#[async_trait]
impl DataSource for NullData {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            (
                "inputs",
                AttributeSchema::optional(Type::map(Type::String), "Values copied to outputs."),
            ),
            (
                "outputs",
                AttributeSchema::computed(Type::map(Type::String), "The inputs."),
            ),
            (
                "random",
                computed_string("A random value, new at each read."),
            ),
            (
                "has_computed_default",
                AttributeSchema::optional(Type::String, "\"default\" unless set.").and_computed(),
            ),
            ("id", computed_string("Always \"static\".")),
        ])
    }

    async fn read(&self, config: &Value) -> Result<Value, DriverError> {
        let inputs = crate::common::get(config, "inputs")
            .cloned()
            .unwrap_or_else(|| Value::Null(Type::map(Type::String)));
        let default = match crate::common::string(config, "has_computed_default") {
            Some(s) => Value::string(s),
            None => Value::string("default"),
        };
        let random = random_decimal("null_data_source")
            .map_err(|e| failed("null_data_source", "read", e.to_string()))?;
        Ok(with(
            config,
            vec![
                ("outputs", inputs),
                ("random", Value::string(random)),
                ("has_computed_default", default),
                ("id", Value::string("static")),
            ],
        ))
    }
}
