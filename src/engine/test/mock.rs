//! `mock_provider` (Terraform 1.7's test mocks): a provider whose objects
//! are never asked of its cloud; and an `override_resource` or
//! `override_data` block's stand-in for one object, which is the same
//! mock over the object's own provider. Its schemas are the real driver's, so
//! configurations are checked as ever; a plan keeps what the
//! configuration sets and leaves computed attributes unknown (unless
//! `override_during = plan` gives them already); an apply
//! fills each unknown from the block's `mock_resource`/`mock_data`/`mock_ephemeral`
//! `defaults`, else with a value of its type as Terraform makes one (a
//! string of eight random letters and digits, 0, false, empty
//! collections, objects attribute by attribute); reads return what the
//! state holds, deletes do nothing.

use crate::config::testfile::During;
use async_trait::async_trait;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};
use strata_provider::{
    Billing, Driver, DriverError, PlanRequest, Planned, Recovery, ResourceSchema, Tags, TypeMode,
};
use strata_value::types::Type;
use strata_value::value::{Attrs, Value};

/// A mocked provider, or a stand-in for one object.
pub(super) struct MockDriver {
    /// The provider mocked: its name and address are the mock's.
    real: Arc<dyn Driver>,
    schemas: Schemas,
    given: Given,
    /// When the values are given: at apply, or already in the plan.
    during: During,
}

/// The values a mock gives its objects.
#[derive(Clone)]
enum Given {
    /// `mock_resource "TYPE"` and `mock_data "TYPE"` `defaults`, by type.
    ByType(Defaults),
    /// An `override_resource` or `override_data` block's `values`: one
    /// object's.
    Object(Attrs),
}

/// The defaults a `mock_provider` block gives, by type.
#[derive(Default, Clone)]
pub(super) struct Defaults {
    pub resources: BTreeMap<String, Attrs>,
    pub data: BTreeMap<String, Attrs>,
    pub ephemeral: BTreeMap<String, Attrs>,
}

/// A mocked provider's schemas: the real ones, but no argument forces a
/// replacement — a mock is never asked, so, as in Terraform, a change to
/// any argument is an update. Each is taken from its driver when first
/// asked for: a provider of thousands of types (the AWS plugin's) has only
/// those a test uses converted and copied.
#[derive(Clone)]
pub(super) struct Schemas(Arc<BTreeMap<TypeMode, BTreeMap<String, Taken>>>);

/// One type's schema: the driver it comes from, and the schema once taken.
struct Taken {
    from: Arc<dyn Driver>,
    schema: OnceLock<Option<ResourceSchema>>,
}

/// The families of types a mock serves.
const MODES: [TypeMode; 4] = [
    TypeMode::Managed,
    TypeMode::Data,
    TypeMode::Ephemeral,
    TypeMode::Action,
];

impl Schemas {
    pub(super) fn of(real: &Arc<dyn Driver>) -> Schemas {
        Schemas::of_all(&[real], &[])
    }

    /// The schemas of every driver serving one provider (its native
    /// driver, and plugins), the first's where two have a type — but a
    /// type routed to a plugin (one the native driver lacks, or whose
    /// configuration sets what the native schema lacks) is the plugin's,
    /// as a plan has it: a mock stands in for all of them.
    fn of_all(
        serving: &[&Arc<dyn Driver>],
        routes: &[(&Arc<dyn Driver>, &BTreeSet<String>)],
    ) -> Schemas {
        let mut all: BTreeMap<TypeMode, BTreeMap<String, Taken>> = BTreeMap::new();
        for d in serving.iter().rev() {
            for mode in MODES {
                let of_mode = all.entry(mode).or_default();
                for name in d.type_names(mode) {
                    of_mode.insert(name, Taken::from(d));
                }
            }
        }
        for (d, types) in routes {
            for t in *types {
                let (mode, name) = match t.strip_prefix("data.") {
                    Some(name) => (TypeMode::Data, name),
                    None => (TypeMode::Managed, t.as_str()),
                };
                // A route whose plugin cannot give the schema leaves the
                // serving driver's in place.
                if d.schema(mode, name).is_some() {
                    all.entry(mode)
                        .or_default()
                        .insert(name.to_string(), Taken::from(d));
                }
            }
        }
        Schemas(Arc::new(all))
    }

    fn get(&self, mode: TypeMode, name: &str) -> Option<&ResourceSchema> {
        let taken = self.0.get(&mode)?.get(name)?;
        let schema = taken.schema.get_or_init(|| {
            let mut schema = taken.from.schema(mode, name)?.clone();
            if mode == TypeMode::Managed {
                schema
                    .attributes
                    .values_mut()
                    .for_each(|a| a.force_new = false);
            }
            Some(schema)
        });
        schema.as_ref()
    }

    fn names(&self, mode: TypeMode) -> Vec<String> {
        self.0
            .get(&mode)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }
}

impl Taken {
    fn from(d: &Arc<dyn Driver>) -> Taken {
        Taken {
            from: d.clone(),
            schema: OnceLock::new(),
        }
    }
}

impl MockDriver {
    /// A stand-in, over `real` (whose `schemas` these are), for one
    /// object given `values`.
    pub(super) fn standing_in(
        (real, schemas): (Arc<dyn Driver>, Schemas),
        values: Attrs,
        during: During,
    ) -> MockDriver {
        MockDriver {
            real,
            schemas,
            given: Given::Object(values),
            during,
        }
    }

    fn schema(&self, type_name: &str) -> Result<&ResourceSchema, DriverError> {
        [TypeMode::Managed, TypeMode::Data, TypeMode::Ephemeral]
            .into_iter()
            .find_map(|mode| self.schemas.get(mode, type_name))
            .ok_or_else(|| DriverError::InvalidConfig {
                type_name: type_name.into(),
                detail: format!("the mocked provider {} has no such type", self.real.name()),
            })
    }

    /// What the mock gives an object of `type_name`.
    fn given(&self, type_name: &str, mode: TypeMode) -> Option<&Attrs> {
        match &self.given {
            Given::Object(values) => Some(values),
            Given::ByType(d) => match mode {
                TypeMode::Managed => d.resources.get(type_name),
                TypeMode::Data => d.data.get(type_name),
                TypeMode::Ephemeral => d.ephemeral.get(type_name),
                TypeMode::List | TypeMode::Action => None,
            },
        }
    }
}

/// Where generated values come from: fresh each time (at apply), or
/// fixed by what is planned (at plan: the apply plans the object again
/// and must find the same values).
enum Gen {
    Random,
    Seeded { seed: u64, drawn: u64 },
}

impl Gen {
    /// Seeded by `what` (the type and the configuration).
    fn seeded(what: &str) -> Gen {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        what.hash(&mut h);
        Gen::Seeded {
            seed: h.finish(),
            drawn: 0,
        }
    }

    /// Eight letters and digits.
    fn text(&mut self) -> String {
        match self {
            Gen::Random => uuid::Uuid::new_v4().simple().to_string()[..8].to_string(),
            Gen::Seeded { seed, drawn } => {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                (*seed, *drawn).hash(&mut h);
                *drawn += 1;
                let mut n = h.finish();
                (0..8)
                    .map(|_| {
                        let c = b"abcdefghijklmnopqrstuvwxyz0123456789"[(n % 36) as usize];
                        n /= 36;
                        c as char
                    })
                    .collect()
            }
        }
    }
}

/// `v` with each unknown filled: from `defaults` at the top level, else
/// generated for its type.
fn filled(v: &Value, defaults: Option<&Attrs>, gen: &mut Gen) -> Value {
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
                    let v = match given {
                        Some(g) => typed(g),
                        None => filled(a, None, gen),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::List(t, items) => Value::List(t.clone(), filled_all(items, gen)),
        Value::Set(t, items) => Value::Set(t.clone(), filled_all(items, gen)),
        Value::Tuple(items) => Value::Tuple(filled_all(items, gen)),
        Value::Map(t, attrs) => Value::Map(
            t.clone(),
            attrs
                .iter()
                .map(|(k, v)| (k.clone(), filled(v, None, gen)))
                .collect(),
        ),
        Value::Sensitive(inner) => Value::Sensitive(Box::new(filled(inner, defaults, gen))),
        Value::Unknown(ty) => generated(ty, gen),
        other => other.clone(),
    }
}

fn filled_all(items: &[Value], gen: &mut Gen) -> Vec<Value> {
    items.iter().map(|v| filled(v, None, gen)).collect()
}

/// A value of `ty` as Terraform's mocks make one.
fn generated(ty: &Type, gen: &mut Gen) -> Value {
    match ty {
        Type::String => Value::string(gen.text()),
        Type::Number => Value::int(0),
        Type::Bool => Value::Bool(false),
        Type::List(t) => Value::List((**t).clone(), Vec::new()),
        Type::Set(t) => Value::Set((**t).clone(), Vec::new()),
        Type::Map(t) => Value::Map((**t).clone(), Attrs::new()),
        Type::Tuple(ts) => Value::Tuple(ts.iter().map(|t| generated(t, gen)).collect()),
        Type::Object(o) => Value::Object(
            o.attrs
                .iter()
                .map(|(k, t)| (k.clone(), generated(t, gen)))
                .collect(),
        ),
        Type::Dynamic => Value::null(),
    }
}

#[async_trait]
impl Driver for MockDriver {
    fn name(&self) -> &str {
        self.real.name()
    }

    fn reads(&self) -> strata_provider::Reads {
        strata_provider::Reads::Fixed
    }

    fn provider_address(&self) -> String {
        self.real.provider_address()
    }

    fn schema(&self, mode: TypeMode, type_name: &str) -> Option<&ResourceSchema> {
        self.schemas.get(mode, type_name)
    }

    fn type_names(&self, mode: TypeMode) -> Vec<String> {
        self.schemas.names(mode)
    }

    fn provider_schema(&self) -> ResourceSchema {
        self.real.provider_schema()
    }

    /// A mock plans every invocation of a real action (its schema served
    /// by [`Driver::schema`]) as fine and invokes it at once, saying
    /// nothing, as Terraform's mock does.
    fn plan_action(
        &self,
        _req: strata_provider::ActionRequest<'_>,
    ) -> Result<Vec<strata_provider::Problem>, DriverError> {
        Ok(Vec::new())
    }

    async fn invoke_action(
        &self,
        _req: strata_provider::ActionRequest<'_>,
        _progress: strata_provider::Progress,
    ) -> strata_provider::Invoked {
        Ok(())
    }

    /// A mock serves every configuration of its provider (an aliased
    /// one too), as Terraform's does.
    fn another(&self) -> Option<Result<Arc<dyn Driver>, DriverError>> {
        Some(Ok(Arc::new(MockDriver {
            real: self.real.clone(),
            schemas: self.schemas.clone(),
            given: self.given.clone(),
            during: self.during,
        })))
    }

    fn plan(&self, req: PlanRequest<'_>) -> Result<Planned, DriverError> {
        let schema = self.schema(req.type_name)?;
        let mut planned = strata_provider::plan_by_schema(schema, req.prior, req.config);
        // A configuration known only at apply gives its values then, so
        // the apply's plan of it finds what this one promised.
        if self.during == During::Plan && req.config.is_wholly_known() {
            let mut gen = Gen::seeded(&format!("{}{:?}", req.type_name, req.config));
            let given = self.given(req.type_name, TypeMode::Managed);
            planned.planned = filled(&planned.planned, given, &mut gen);
        }
        Ok(planned)
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
        Ok(filled(
            planned,
            self.given(type_name, TypeMode::Managed),
            &mut Gen::Random,
        ))
    }

    async fn update(
        &self,
        type_name: &str,
        _prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        Ok(filled(
            planned,
            self.given(type_name, TypeMode::Managed),
            &mut Gen::Random,
        ))
    }

    async fn delete(&self, _type_name: &str, _prior: &Value) -> Result<(), DriverError> {
        Ok(())
    }

    async fn read_data(&self, type_name: &str, config: &Value) -> Result<Value, DriverError> {
        let schema = self.schema(type_name)?;
        let planned = strata_provider::plan_by_schema(schema, None, config).planned;
        Ok(filled(
            &planned,
            self.given(type_name, TypeMode::Data),
            &mut Gen::Random,
        ))
    }
}

#[async_trait]
impl Recovery for MockDriver {
    async fn find_tagged(&self, _type_name: &str, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }
}

/// The real driver's GPU catalog and billing: published data and pure
/// functions of an object, nothing asked of a cloud — so a cluster spec's
/// pools are placed, and priced, under a mock as in a plan.
impl Billing for MockDriver {
    fn gpu_catalog(&self) -> Option<&strata_provider::catalog::Catalog> {
        self.real.gpu_catalog()
    }

    fn billing(
        &self,
        type_name: &str,
        object: &Value,
        today: &str,
    ) -> Vec<strata_provider::billing::Billed> {
        self.real.billing(type_name, object, today)
    }
}
/// A mocked ephemeral resource opens as a mocked data source is read:
/// what the configuration says, the rest from `mock_ephemeral` defaults
/// or generated (hashicorp/terraform#38928).
#[async_trait]
impl strata_provider::Ephemerals for MockDriver {
    async fn open(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<strata_provider::Opened, DriverError> {
        let schema = self.schema(type_name)?;
        let planned = strata_provider::plan_by_schema(schema, None, config).planned;
        let given = self.given(type_name, TypeMode::Ephemeral);
        Ok(strata_provider::Opened {
            result: filled(&planned, given, &mut Gen::Random),
            private: None,
            renew_at: None,
        })
    }
}

/// A `mock_provider` block's provider, what it gives and when.
pub(super) struct Mock {
    pub name: String,
    pub defaults: Defaults,
    pub during: During,
}

/// `drivers` with each provider `mocks` names served by its mock.
pub(super) fn mocked(
    drivers: &crate::builtin::Drivers,
    mocks: Vec<Mock>,
) -> Result<crate::builtin::Drivers, (String, String)> {
    let mut out = drivers.clone();
    for m in mocks {
        let real = drivers.named(&m.name).ok_or_else(|| {
            let why = format!("strata has no provider {:?} here to mock (run `strata init` for a plugin provider).", m.name);
            (m.name.clone(), why)
        })?;
        let address = real.provider_address();
        let serving = drivers.serving(&address);
        let routes: Vec<_> = drivers.routes_of(&address).collect();
        let mock = MockDriver {
            schemas: Schemas::of_all(&serving, &routes),
            real: real.clone(),
            given: Given::ByType(m.defaults),
            during: m.during,
        };
        out = out.with_plugin(Arc::new(mock), crate::builtin::Route::Whole);
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
        assert!(filled(&planned, None, &mut Gen::Random).is_wholly_known());
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
        let got = filled(&planned, Some(&defaults), &mut Gen::Random);
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
