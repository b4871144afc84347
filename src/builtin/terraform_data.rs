//! The builtin provider, `terraform`: the `terraform_data` resource, as
//! Terraform's builtin provider defines it: `input` is stored and echoed as `output`; `output` is unknown
//! in a plan whenever `input` changes; a change to `triggers_replace`
//! replaces the instance; `id` is a random UUID. Its data source,
//! `terraform_remote_state`, is in `remote_state.rs`.

use super::remote_state::StateSource;
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use strata_provider::Kept;
use strata_provider::{
    AttributeSchema, Driver, DriverError, MoveRequest, PlanRequest, Planned, ResourceSchema,
    Stored, Tags,
};
use strata_value::types::Type;
use strata_value::value::{Attrs, Value};

pub const TYPE: &str = "terraform_data";

#[derive(Clone, Default)]
pub struct TerraformData {
    /// Where `terraform_remote_state` reads states (none: it cannot), and
    /// the name of the data source reading them.
    states: Option<(Arc<dyn StateSource>, String)>,
}

impl TerraformData {
    /// The builtin driver as the `terraform_remote_state` data source
    /// `name` (see [`super::remote_state::name`]), reading from `states`.
    pub fn reading(states: Arc<dyn StateSource>, name: String) -> TerraformData {
        TerraformData {
            states: Some((states, name)),
        }
    }
}

fn schemas() -> &'static BTreeMap<String, ResourceSchema> {
    static S: OnceLock<BTreeMap<String, ResourceSchema>> = OnceLock::new();
    S.get_or_init(|| {
        let attributes = BTreeMap::from([
            (
                "id".to_string(),
                AttributeSchema::computed(Type::String, "A unique ID for this resource instance."),
            ),
            (
                "input".to_string(),
                AttributeSchema::optional(Type::Dynamic, "A value to store; reflected in output."),
            ),
            (
                "output".to_string(),
                AttributeSchema::computed(Type::Dynamic, "The stored input value."),
            ),
            (
                "triggers_replace".to_string(),
                AttributeSchema::optional(
                    Type::Dynamic,
                    "A value that replaces the instance when it changes.",
                )
                .force_new(),
            ),
        ]);
        BTreeMap::from([(
            TYPE.to_string(),
            ResourceSchema {
                version: 0,
                attributes,
                blocks: BTreeMap::new(),
            },
        )])
    })
}

fn attr(v: &Value, name: &str) -> Value {
    v.entries()
        .and_then(|m| m.get(name))
        .cloned()
        .unwrap_or_else(Value::null)
}

fn check_type(type_name: &str) -> Result<(), DriverError> {
    if type_name == TYPE {
        Ok(())
    } else {
        Err(DriverError::UnknownType {
            driver: "terraform".into(),
            type_name: type_name.into(),
        })
    }
}

/// Unknown of the input's type, or the null input itself: the output's type
/// always follows the input's.
fn pending_output(input: &Value) -> Value {
    if input.is_null() {
        input.clone()
    } else {
        Value::Unknown(input.ty())
    }
}

fn object(id: Value, input: Value, output: Value, triggers: Value) -> Value {
    Value::Object(Attrs::from([
        ("id".to_string(), id),
        ("input".to_string(), input),
        ("output".to_string(), output),
        ("triggers_replace".to_string(), triggers),
    ]))
}

#[async_trait]
impl Driver for TerraformData {
    fn name(&self) -> &str {
        "terraform"
    }

    fn provider_address(&self) -> String {
        "provider[\"terraform.io/builtin/terraform\"]".to_string()
    }

    fn resource_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        schemas()
    }

    fn plan(&self, req: PlanRequest<'_>) -> Result<Planned, DriverError> {
        check_type(req.type_name)?;
        let input = attr(req.config, "input");
        let triggers = attr(req.config, "triggers_replace");
        // A new instance: id and (for a non-null input) output unknown.
        let fresh = |input: Value, triggers: Value| {
            let output = pending_output(&input);
            object(Value::Unknown(Type::String), input, output, triggers)
        };
        let Some(prior) = req.prior else {
            return Ok(Planned {
                kept: Kept::default(),
                planned: fresh(input, triggers),
                requires_replace: Vec::new(),
            });
        };
        if !attr(prior, "triggers_replace").raw_equal(&triggers) {
            return Ok(Planned {
                kept: Kept::default(),
                planned: fresh(input, triggers),
                requires_replace: vec![vec!["triggers_replace".to_string()]],
            });
        }
        let output = if attr(prior, "input").raw_equal(&input) {
            attr(prior, "output")
        } else {
            Value::Unknown(input.ty())
        };
        Ok(Planned {
            kept: Kept::default(),
            planned: object(attr(prior, "id"), input, output, triggers),
            requires_replace: Vec::new(),
        })
    }

    async fn read(
        &self,
        type_name: &str,
        instances: &[Value],
    ) -> Result<Vec<Option<Value>>, DriverError> {
        check_type(type_name)?;
        // Nothing exists outside the state: what was stored is what there is.
        Ok(instances.iter().cloned().map(Some).collect())
    }

    async fn create(
        &self,
        type_name: &str,
        planned: &Value,
        _tags: &Tags,
    ) -> Result<Value, DriverError> {
        check_type(type_name)?;
        let id = crate::funcs::random_uuid().map_err(|e| DriverError::Api {
            operation: "terraform_data create".into(),
            detail: format!("no randomness available: {e}"),
            retryable: true,
        })?;
        let input = attr(planned, "input");
        Ok(object(
            Value::String(id),
            input.clone(),
            input,
            attr(planned, "triggers_replace"),
        ))
    }

    async fn update(
        &self,
        type_name: &str,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        check_type(type_name)?;
        let input = attr(planned, "input");
        Ok(object(
            attr(prior, "id"),
            input.clone(),
            input,
            attr(planned, "triggers_replace"),
        ))
    }

    async fn delete(&self, type_name: &str, _prior: &Value) -> Result<(), DriverError> {
        check_type(type_name)
    }

    async fn import(&self, type_name: &str, id: &str) -> Result<Option<Value>, DriverError> {
        check_type(type_name)?;
        // As Terraform's builtin provider imports one: the id alone, since
        // nothing outside the state holds the rest.
        let null = Value::null;
        Ok(Some(object(
            Value::String(id.into()),
            null(),
            null(),
            null(),
        )))
    }

    /// As Terraform's builtin provider: a `null_resource` of the official
    /// null provider becomes a `terraform_data` with the same id and its
    /// `triggers` as `triggers_replace` (an object, as configurations write
    /// one, so the next plan sees no change).
    fn move_state(&self, req: MoveRequest<'_>) -> Option<Result<Stored, DriverError>> {
        let refused = |detail: &str| DriverError::InvalidConfig {
            type_name: TYPE.to_string(),
            detail: detail.to_string(),
        };
        if !req.source_provider.ends_with("hashicorp/null") {
            return Some(Err(refused("Only moving from the official hashicorp/null provider to terraform_data is supported.")));
        }
        if req.source_type != "null_resource" {
            return Some(Err(refused("Only moving from the null_resource managed resource to terraform_data is supported.")));
        }
        let source: serde_json::Value = match serde_json::from_str(req.source_json) {
            Ok(v) => v,
            Err(e) => {
                return Some(Err(refused(&format!(
                    "the stored null_resource is not JSON: {e}"
                ))))
            }
        };
        let id = source
            .get("id")
            .and_then(|v| v.as_str())
            .map_or_else(|| Value::Null(Type::String), Value::string);
        let triggers = match source.get("triggers").and_then(|t| t.as_object()) {
            Some(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), Value::string(v.as_str().unwrap_or_default())))
                    .collect(),
            ),
            None => Value::Null(Type::Dynamic),
        };
        let null = || Value::Null(Type::Dynamic);
        Some(Ok(Stored {
            value: object(id, null(), null(), triggers),
            kept: Kept::default(),
        }))
    }

    fn data_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        static S: OnceLock<BTreeMap<String, ResourceSchema>> = OnceLock::new();
        S.get_or_init(|| {
            BTreeMap::from([(
                super::remote_state::TYPE.to_string(),
                super::remote_state::schema(),
            )])
        })
    }

    async fn read_data(&self, type_name: &str, config: &Value) -> Result<Value, DriverError> {
        if type_name != super::remote_state::TYPE {
            return Err(DriverError::UnknownType {
                driver: "terraform".into(),
                type_name: type_name.into(),
            });
        }
        let source = self.states.as_ref().map(|(s, name)| (&**s, name.as_str()));
        super::remote_state::read(config, source)
    }
}

#[async_trait]
impl strata_provider::Recovery for TerraformData {
    async fn find_tagged(&self, type_name: &str, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        // Nothing outside the state can hold a terraform_data.
        check_type(type_name).map(|_| Vec::new())
    }

    fn only_in_state(&self, type_name: &str) -> bool {
        check_type(type_name).is_ok()
    }
}

impl strata_provider::Billing for TerraformData {}
impl strata_provider::Ephemerals for TerraformData {}
