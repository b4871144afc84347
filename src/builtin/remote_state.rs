//! The builtin `terraform_remote_state` data source: the root outputs of
//! another state, so one configuration can use what another created (the
//! network's subnet ids in the cluster's configuration). It reads strata
//! and Terraform state files alike; the `local` backend only, for now.

use crate::lang::json::{type_from_json, value_from_json};
use crate::lang::types::Type;
use crate::lang::value::{Attrs, Value};
use std::collections::BTreeMap;
use strata_provider::{AttributeSchema, DriverError, ResourceSchema};

pub const TYPE: &str = "terraform_remote_state";

pub fn schema() -> ResourceSchema {
    ResourceSchema {
        version: 0,
        attributes: BTreeMap::from([
            (
                "backend".to_string(),
                AttributeSchema::required(
                    Type::String,
                    "The backend holding the state: \"local\".",
                ),
            ),
            (
                "config".to_string(),
                AttributeSchema::optional(
                    Type::Dynamic,
                    "The backend's settings: { path = \"…\" }.",
                ),
            ),
            (
                "defaults".to_string(),
                AttributeSchema::optional(Type::Dynamic, "Values for outputs the state lacks."),
            ),
            (
                "outputs".to_string(),
                AttributeSchema::computed(Type::Dynamic, "The state's root module outputs."),
            ),
            (
                "workspace".to_string(),
                AttributeSchema::optional(Type::String, "The workspace; only \"default\"."),
            ),
        ]),
        blocks: BTreeMap::new(),
    }
}

fn invalid(detail: impl Into<String>) -> DriverError {
    DriverError::InvalidConfig {
        type_name: TYPE.into(),
        detail: detail.into(),
    }
}

fn get<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    v.unmarked().entries()?.get(name).filter(|x| !x.is_null())
}

/// Reads the outputs of the state the configuration names.
pub fn read(config: &Value) -> Result<Value, DriverError> {
    let backend = get(config, "backend").and_then(Value::as_str).unwrap_or("");
    if backend != "local" {
        return Err(invalid(format!(
            "backend {backend:?} is not supported yet; strata reads \"local\" state files"
        )));
    }
    if let Some(w) = get(config, "workspace").and_then(Value::as_str) {
        if w != "default" {
            return Err(invalid(format!(
                "workspace {w:?}: only \"default\" is supported"
            )));
        }
    }
    let path = get(config, "config")
        .and_then(|c| get(c, "path"))
        .and_then(Value::as_str)
        .unwrap_or("terraform.tfstate")
        .to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| DriverError::Api {
        operation: format!("reading the state {path}"),
        detail: e.to_string(),
        retryable: false,
    })?;
    let doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| invalid(format!("{path} is not a state file: {e}")))?;
    let mut outputs = Attrs::new();
    if let Some(defaults) = get(config, "defaults").and_then(|d| d.unmarked().entries()) {
        outputs.extend(defaults.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    for (name, o) in doc["outputs"].as_object().into_iter().flatten() {
        let ty = type_from_json(&o["type"])
            .map_err(|e| invalid(format!("{path}: output {name}: {e}")))?;
        let v = value_from_json(&o["value"], &ty)
            .map_err(|e| invalid(format!("{path}: output {name}: {e}")))?;
        let sensitive = o["sensitive"].as_bool().unwrap_or(false);
        outputs.insert(name.clone(), v.mark_if(sensitive));
    }
    let mut out = config.unmarked().entries().cloned().unwrap_or_default();
    out.insert("outputs".into(), Value::Object(outputs));
    Ok(Value::Object(out))
}
