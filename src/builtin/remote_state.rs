//! The builtin `terraform_remote_state` data source: the root outputs of
//! another state, so one configuration can use what another created (the
//! network's subnet ids in the cluster's configuration). It reads strata
//! and Terraform state files alike, from the backends strata keeps state
//! in (`local`, `s3`, `pg`), with the same settings a `backend` block takes,
//! through the [`StateSource`] the command gives it.

use crate::lang::json::{type_from_json, value_from_json};
use crate::lang::types::Type;
use crate::lang::value::{Attrs, Value};
use std::collections::BTreeMap;
use strata_provider::{AttributeSchema, DriverError, ResourceSchema};
use strata_state::model::{Address, Mode};
use strata_state::State;

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

/// What `terraform_remote_state` asks for: a backend as a `backend` block
/// would name it (its type and settings), and a workspace of it.
pub struct RemoteBackend {
    pub kind: String,
    pub settings: BTreeMap<String, Value>,
    pub workspace: String,
}

/// Why a remote state could not be read.
pub enum SourceError {
    /// The settings name no state strata can open.
    Settings(String),
    /// The state is there but could not be read.
    Unreadable { location: String, detail: String },
    /// No state is stored there (a file or object that does not exist, or
    /// is empty): an error, as Terraform's, whatever `defaults` says — a
    /// mistyped path must not read as a state with no outputs.
    Missing { location: String },
}

/// Reads the state a [`RemoteBackend`] names. The backends are a later
/// stage than the drivers, so the command hands the builtin driver one
/// (`backends::RemoteStates`, through `Drivers::with_remote_states`).
pub trait StateSource: Send + Sync {
    /// The state, and where it was read from (for messages), for the
    /// data source named `reader` (see [`name`]).
    fn read(&self, backend: &RemoteBackend, reader: &str) -> Result<(State, String), SourceError>;
}

/// Whether instance `addr` is a `terraform_remote_state` data source.
pub fn reads(addr: &Address) -> bool {
    addr.id.mode == Mode::Data && addr.id.type_name == TYPE
}

/// The name OpenTofu gives a `terraform_remote_state` data source, by
/// which `remote_state_data_source "NAME"` targets it: its address without
/// the type and the first `module.` (`foo[4]`, `submod[1].bar` for
/// `module.submod[1].data.terraform_remote_state.bar`).
pub fn name(addr: &Address) -> String {
    let full = addr.to_string();
    let short = full.replacen(&format!("data.{TYPE}."), "", 1);
    short.strip_prefix("module.").unwrap_or(&short).to_string()
}

/// Reads the outputs of the state the configuration names, as the data
/// source `source.1`.
pub fn read(
    config: &Value,
    source: Option<(&dyn StateSource, &str)>,
) -> Result<Value, DriverError> {
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
    let mut settings: BTreeMap<String, Value> = get(config, "config")
        .and_then(|c| c.unmarked().entries())
        .map(|e| e.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    if kind == "local" && !settings.contains_key("path") {
        // Terraform's default for this data source.
        settings.insert("path".into(), Value::string("terraform.tfstate"));
    }
    let (source, reader) = source.ok_or_else(|| invalid("this strata reads no state backends"))?;
    let backend = RemoteBackend {
        kind,
        settings,
        workspace,
    };
    let (state, path) = source.read(&backend, reader).map_err(|e| match e {
        SourceError::Settings(why) => invalid(why),
        SourceError::Unreadable { location, detail } => DriverError::Api {
            operation: format!("reading the state at {location}"),
            detail,
            retryable: false,
        },
        SourceError::Missing { location } => DriverError::Api {
            operation: format!("reading the state at {location}"),
            detail: "Unable to find remote state: no stored state was found for the given \
                     workspace in the given backend"
                .into(),
            retryable: false,
        },
    })?;
    let mut outputs = Attrs::new();
    if let Some(defaults) = get(config, "defaults").and_then(|d| d.unmarked().entries()) {
        outputs.extend(defaults.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    for (name, o) in &state.outputs {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_source_is_named_as_opentofu_names_it() {
        let named = |a: &str| name(&Address::parse(a).expect("an address"));
        assert_eq!(named("data.terraform_remote_state.foo[4]"), "foo[4]");
        assert_eq!(
            named("data.terraform_remote_state.each[\"b\"]"),
            "each[\"b\"]"
        );
        assert_eq!(
            named("module.submod[1].data.terraform_remote_state.bar"),
            "submod[1].bar"
        );
        // Only the first `module.` goes, as OpenTofu trims it.
        assert_eq!(
            named("module.a.module.b.data.terraform_remote_state.c"),
            "a.module.b.c"
        );
        assert!(reads(
            &Address::parse("data.terraform_remote_state.x").unwrap()
        ));
        assert!(!reads(&Address::parse("terraform_data.x").unwrap()));
    }
}
