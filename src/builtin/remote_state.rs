//! The builtin `terraform_remote_state` data source: the root outputs of
//! another state, so one configuration can use what another created (the
//! network's subnet ids in the cluster's configuration). It reads strata
//! and Terraform state files alike, from the backends strata keeps state
//! in (`local`, `s3`, `pg`), with the same settings a `backend` block takes.

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
                    "The backend holding the state: \"local\", \"s3\" or \"pg\".",
                ),
            ),
            (
                "config".to_string(),
                AttributeSchema::optional(
                    Type::Dynamic,
                    "The backend's settings, as its backend block takes them.",
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
                AttributeSchema::optional(Type::String, "The workspace (\"default\" when unset)."),
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
    let kind = get(config, "backend")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let workspace = get(config, "workspace")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_string();
    // The settings as a backend block would hold them; errors are worded
    // for the data source (its block is where the user looks).
    let mut settings = std::collections::BTreeMap::new();
    if let Some(entries) = get(config, "config").and_then(|c| c.unmarked().entries()) {
        for (k, v) in entries.iter() {
            settings.insert(k.clone(), (v.clone(), crate::diag::Span::default()));
        }
    }
    if kind == "local" && !settings.contains_key("path") {
        // Terraform's default for this data source.
        settings.insert(
            "path".into(),
            (
                Value::string("terraform.tfstate"),
                crate::diag::Span::default(),
            ),
        );
    }
    let backend = crate::config::Backend {
        kind: kind.clone(),
        span: crate::diag::Span::default(),
        settings,
    };
    let words = |d: crate::diag::Diags| {
        d.0.iter()
            .map(|d| format!("{}: {}", d.summary, d.detail))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let store = crate::backends::open_backend(None, Some(&backend), workspace)
        .map_err(|d| invalid(words(d)))?;
    let state = store.load().map_err(|e| DriverError::Api {
        operation: format!("reading the state at {}", store.location()),
        detail: e.to_string(),
        retryable: false,
    })?;
    let path = store.location();
    let mut outputs = Attrs::new();
    if let Some(defaults) = get(config, "defaults").and_then(|d| d.unmarked().entries()) {
        outputs.extend(defaults.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    for (name, o) in &state.state.outputs {
        let ty =
            type_from_json(&o.ty).map_err(|e| invalid(format!("{path}: output {name}: {e}")))?;
        let v = value_from_json(&o.value, &ty)
            .map_err(|e| invalid(format!("{path}: output {name}: {e}")))?;
        outputs.insert(name.clone(), v.mark_if(o.sensitive));
    }
    let mut out = config.unmarked().entries().cloned().unwrap_or_default();
    out.insert("outputs".into(), Value::Object(outputs));
    Ok(Value::Object(out))
}
