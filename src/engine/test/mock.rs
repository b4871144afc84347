//! `mock_provider` (Terraform 1.7's test mocks): a provider whose objects
//! are never asked of its cloud. Its schemas are the real driver's, so
//! configurations are checked as ever; a plan keeps what the
//! configuration sets and leaves computed attributes unknown; an apply
//! fills each unknown from the block's `mock_resource`/`mock_data`
//! `defaults`, else with a value of its type as Terraform makes one (a
//! string of eight random letters and digits, 0, false, empty
//! collections, objects attribute by attribute); reads return what the
//! state holds, deletes do nothing.

use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Arc;
use strata_provider::{
    Billing, Driver, DriverError, PlanRequest, Planned, Recovery, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::{Attrs, Value};

/// A mocked provider.
pub(super) struct MockDriver {
    name: String,
    address: String,
    provider_schema: ResourceSchema,
    resources: BTreeMap<String, ResourceSchema>,
    data: BTreeMap<String, ResourceSchema>,
    /// `mock_resource "TYPE" { defaults = {…} }`, by type.
    resource_defaults: BTreeMap<String, Attrs>,
    /// `mock_data "TYPE" { defaults = {…} }`, by type.
    data_defaults: BTreeMap<String, Attrs>,
}

/// The defaults a `mock_provider` block gives, by type.
#[derive(Default)]
pub(super) struct Defaults {
    pub resources: BTreeMap<String, Attrs>,
    pub data: BTreeMap<String, Attrs>,
}

impl MockDriver {
    /// A mock of `real`, with `defaults`.
    pub(super) fn of(real: &dyn Driver, defaults: Defaults) -> MockDriver {
        MockDriver {
            name: real.name().to_string(),
            address: real.provider_address(),
            provider_schema: real.provider_schema(),
            resources: real.resource_schemas().clone(),
            data: real.data_schemas().clone(),
            resource_defaults: defaults.resources,
            data_defaults: defaults.data,
        }
    }

    fn schema(&self, type_name: &str) -> Result<&ResourceSchema, DriverError> {
        self.resources
            .get(type_name)
            .or_else(|| self.data.get(type_name))
            .ok_or_else(|| DriverError::InvalidConfig {
                type_name: type_name.into(),
                detail: format!("the mocked provider {} has no such type", self.name),
            })
    }
}

/// `v` with each unknown filled: from `defaults` at the top level, else
/// generated for its type.
fn filled(v: &Value, defaults: Option<&Attrs>) -> Value {
    match v {
        Value::Object(attrs) => Value::Object(
            attrs
                .iter()
                .map(|(k, a)| {
                    let given = defaults.and_then(|d| d.get(k)).filter(|_| !a.is_known());
                    // A default takes the attribute's type (a tuple of
                    // objects for a list of them, say).
                    let typed = |g: &Value| match a {
                        Value::Unknown(ty) => {
                            crate::lang::convert::convert(g, ty).unwrap_or_else(|_| g.clone())
                        }
                        _ => g.clone(),
                    };
                    (
                        k.clone(),
                        given.map(typed).unwrap_or_else(|| filled(a, None)),
                    )
                })
                .collect(),
        ),
        Value::List(t, items) => {
            Value::List(t.clone(), items.iter().map(|v| filled(v, None)).collect())
        }
        Value::Set(t, items) => {
            Value::Set(t.clone(), items.iter().map(|v| filled(v, None)).collect())
        }
        Value::Tuple(items) => Value::Tuple(items.iter().map(|v| filled(v, None)).collect()),
        Value::Map(t, attrs) => Value::Map(
            t.clone(),
            attrs
                .iter()
                .map(|(k, v)| (k.clone(), filled(v, None)))
                .collect(),
        ),
        Value::Sensitive(inner) => Value::Sensitive(Box::new(filled(inner, defaults))),
        Value::Unknown(ty) => generated(ty),
        other => other.clone(),
    }
}

/// A value of `ty` as Terraform's mocks make one.
fn generated(ty: &Type) -> Value {
    match ty {
        Type::String => Value::string(random_text()),
        Type::Number => Value::int(0),
        Type::Bool => Value::Bool(false),
        Type::List(t) => Value::List((**t).clone(), Vec::new()),
        Type::Set(t) => Value::Set((**t).clone(), Vec::new()),
        Type::Map(t) => Value::Map((**t).clone(), Attrs::new()),
        Type::Tuple(ts) => Value::Tuple(ts.iter().map(generated).collect()),
        Type::Object(o) => Value::Object(
            o.attrs
                .iter()
                .map(|(k, t)| (k.clone(), generated(t)))
                .collect(),
        ),
        Type::Dynamic => Value::null(),
    }
}

/// Eight letters and digits, different each time.
fn random_text() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
}

#[async_trait]
impl Driver for MockDriver {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider_address(&self) -> String {
        self.address.clone()
    }

    fn resource_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        &self.resources
    }

    fn data_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        &self.data
    }

    fn provider_schema(&self) -> ResourceSchema {
        self.provider_schema.clone()
    }

    fn plan(&self, req: PlanRequest<'_>) -> Result<Planned, DriverError> {
        let schema = self.schema(req.type_name)?;
        Ok(strata_provider::plan_by_schema(
            schema, req.prior, req.config,
        ))
    }

    async fn read(
        &self,
        _type_name: &str,
        instances: &[Value],
    ) -> Result<Vec<Option<Value>>, DriverError> {
        Ok(instances.iter().cloned().map(Some).collect())
    }

    async fn create(
        &self,
        type_name: &str,
        planned: &Value,
        _tags: &Tags,
    ) -> Result<Value, DriverError> {
        Ok(filled(planned, self.resource_defaults.get(type_name)))
    }

    async fn update(
        &self,
        type_name: &str,
        _prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        Ok(filled(planned, self.resource_defaults.get(type_name)))
    }

    async fn delete(&self, _type_name: &str, _prior: &Value) -> Result<(), DriverError> {
        Ok(())
    }

    async fn read_data(&self, type_name: &str, config: &Value) -> Result<Value, DriverError> {
        let schema = self.schema(type_name)?;
        let planned = strata_provider::plan_by_schema(schema, None, config).planned;
        Ok(filled(&planned, self.data_defaults.get(type_name)))
    }
}

#[async_trait]
impl Recovery for MockDriver {
    async fn find_tagged(&self, _type_name: &str, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }
}

impl Billing for MockDriver {}

/// `drivers` with each provider `mocks` names served by its mock.
pub(super) fn mocked(
    drivers: &crate::builtin::Drivers,
    mocks: Vec<(String, Defaults)>,
) -> Result<crate::builtin::Drivers, (String, String)> {
    let mut out = drivers.clone();
    for (name, defaults) in mocks {
        let real = drivers.named(&name).ok_or_else(|| {
            let why = format!("strata has no provider {name:?} here to mock (run `strata init` for a plugin provider).");
            (name.clone(), why)
        })?;
        let mock = Arc::new(MockDriver::of(real.as_ref(), defaults)) as Arc<dyn Driver>;
        out = out.with_plugin(mock, crate::builtin::Route::Whole);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknowns_inside_nested_blocks_are_filled_too() {
        let block = Value::Object(Attrs::from([(
            "uid".to_string(),
            Value::Unknown(Type::String),
        )]));
        let planned = Value::Object(Attrs::from([(
            "metadata".to_string(),
            Value::List(Type::Dynamic, vec![block]),
        )]));
        assert!(filled(&planned, None).is_wholly_known());
    }

    #[test]
    fn unknowns_are_filled_from_defaults_else_by_type() {
        let planned = Value::Object(Attrs::from([
            ("name".to_string(), Value::string("set")),
            ("arn".to_string(), Value::Unknown(Type::String)),
            ("id".to_string(), Value::Unknown(Type::String)),
            ("size".to_string(), Value::Unknown(Type::Number)),
            ("on".to_string(), Value::Unknown(Type::Bool)),
        ]));
        let defaults = Attrs::from([("arn".to_string(), Value::string("arn:aws:x"))]);
        let got = filled(&planned, Some(&defaults));
        let field = |k: &str| got.entries().expect("object")[k].clone();
        assert_eq!(field("name").as_str(), Some("set"));
        assert_eq!(field("arn").as_str(), Some("arn:aws:x"));
        let id = field("id");
        let id = id.as_str().expect("a string");
        assert!(
            id.len() == 8 && id.chars().all(|c| c.is_ascii_alphanumeric()),
            "{id}"
        );
        assert!(field("size").raw_equal(&Value::int(0)));
        assert_eq!(field("on").as_bool(), Some(false));
    }
}
