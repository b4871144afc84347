//! Values as the wire carries them: cty's msgpack encoding of a value of
//! a schema's type (JSON from old providers), in both directions.

use crate::msgpack;
use crate::proto::tfplugin6 as v6;
use strata_provider::DriverError;
use strata_value::types::Type;
use strata_value::value::Value;

/// `v` (marks dropped: the provider knows what is sensitive) as the wire's
/// value of type `ty`.
pub(crate) fn dynamic(v: &Value, ty: &Type) -> Result<Option<v6::DynamicValue>, DriverError> {
    let (plain, _) = v.clone().unmark_deep();
    let msgpack = msgpack::encode(&plain, ty).map_err(|e| DriverError::Api {
        operation: "encoding a value for the provider".into(),
        detail: e.to_string(),
        retryable: false,
    })?;
    Ok(Some(v6::DynamicValue {
        msgpack,
        json: Vec::new(),
    }))
}

/// A value the provider sent, read as type `ty`; absent is null.
pub(crate) fn value(
    d: Option<&v6::DynamicValue>,
    ty: &Type,
    operation: &str,
) -> Result<Value, DriverError> {
    let bad = |detail: String| DriverError::Api {
        operation: operation.to_string(),
        detail: format!("the provider sent a value strata cannot read: {detail}"),
        retryable: false,
    };
    let Some(d) = d else {
        return Ok(Value::Null(ty.clone()));
    };
    if !d.msgpack.is_empty() {
        return msgpack::decode(&d.msgpack, ty).map_err(|e| bad(e.to_string()));
    }
    if d.json.is_empty() {
        return Ok(Value::Null(ty.clone()));
    }
    let json: serde_json::Value =
        serde_json::from_slice(&d.json).map_err(|e| bad(e.to_string()))?;
    strata_value::json::value_from_json(&json, ty).map_err(bad)
}
