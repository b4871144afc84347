//! One utility provider as a strata driver: a table of resource and data
//! source types, each with the provider's schema, and the plan every
//! Terraform plugin-framework provider makes before its own adjustments
//! (configured values, then the schema's defaults for what the
//! configuration leaves out, then what the prior object keeps).

use async_trait::async_trait;
use std::collections::BTreeMap;
use strata_provider::{
    plan_by_schema, Driver, DriverError, PlanRequest, Planned, Problem, ResourceSchema, Tags,
};
use strata_value::value::Value;

/// A managed resource type of a utility provider.
#[async_trait]
pub(crate) trait Resource: Send + Sync {
    fn schema(&self) -> ResourceSchema;

    /// Values the provider plans for optional attributes the
    /// configuration leaves null (the framework's `Default`).
    fn defaults(&self) -> Vec<(&'static str, Value)> {
        Vec::new()
    }

    /// Problems in a configuration, which may hold unknowns (the
    /// provider's validators).
    fn validate(&self, config: &Value) -> Vec<Problem> {
        let _ = config;
        Vec::new()
    }

    /// Changes to the schema's plan the type makes itself (the
    /// framework's plan modifiers), given what was configured.
    fn adjust(&self, plan: Planning<'_>) -> Result<Value, DriverError> {
        Ok(plan.planned)
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError>;

    /// The planned object is the new one unless the type says otherwise.
    async fn update(&self, prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        let _ = prior;
        Ok(planned.clone())
    }

    /// The object now; `None` once gone. Most of these types exist only
    /// in state, so what was stored is what there is.
    async fn read(&self, stored: &Value) -> Result<Option<Value>, DriverError> {
        Ok(Some(stored.clone()))
    }

    async fn delete(&self, prior: &Value) -> Result<(), DriverError> {
        let _ = prior;
        Ok(())
    }

    /// Whether the object exists in the state alone (a random number, a
    /// key, a timestamp), not somewhere a lost record would leave it
    /// behind (a file on disk).
    fn only_in_state(&self) -> bool {
        true
    }

    /// The object an `import` block's id stands for; `None` for types the
    /// provider cannot import.
    fn import(&self, id: &str) -> Option<Result<Value, DriverError>> {
        let _ = id;
        None
    }

    /// A stored object of an older schema version as the current one has
    /// it; `None` when the type never changed its layout.
    fn upgrade(&self, version: u64, stored: &serde_json::Value) -> Option<Result<Value, String>> {
        let _ = (version, stored);
        None
    }
}

/// A plan from the schema, for a type to adjust.
pub(crate) struct Planning<'a> {
    pub prior: Option<&'a Value>,
    /// The configuration as written (defaults not filled in).
    pub config: &'a Value,
    pub planned: Value,
}

/// A data source type of a utility provider.
#[async_trait]
pub(crate) trait DataSource: Send + Sync {
    fn schema(&self) -> ResourceSchema;

    fn validate(&self, config: &Value) -> Vec<Problem> {
        let _ = config;
        Vec::new()
    }

    async fn read(&self, config: &Value) -> Result<Value, DriverError>;
}

/// A utility provider: its name, registry source and types.
pub(crate) struct Provider {
    name: &'static str,
    source: &'static str,
    resources: BTreeMap<String, Box<dyn Resource>>,
    resource_schemas: BTreeMap<String, ResourceSchema>,
    data: BTreeMap<String, Box<dyn DataSource>>,
    data_schemas: BTreeMap<String, ResourceSchema>,
    /// Ephemeral types: opened as a data source is read, with nothing to
    /// renew or close.
    ephemeral: BTreeMap<String, Box<dyn DataSource>>,
    ephemeral_schemas: BTreeMap<String, ResourceSchema>,
}

impl Provider {
    /// `source` is the provider's address in the public registry
    /// (`hashicorp/random`), which state files record.
    pub(crate) fn new(name: &'static str, source: &'static str) -> Provider {
        Provider {
            name,
            source,
            resources: BTreeMap::new(),
            resource_schemas: BTreeMap::new(),
            data: BTreeMap::new(),
            data_schemas: BTreeMap::new(),
            ephemeral: BTreeMap::new(),
            ephemeral_schemas: BTreeMap::new(),
        }
    }

    pub(crate) fn ephemeral(mut self, type_name: &str, d: impl DataSource + 'static) -> Provider {
        self.ephemeral_schemas
            .insert(type_name.to_string(), d.schema());
        self.ephemeral.insert(type_name.to_string(), Box::new(d));
        self
    }

    pub(crate) fn resource(mut self, type_name: &str, r: impl Resource + 'static) -> Provider {
        self.resource_schemas
            .insert(type_name.to_string(), r.schema());
        self.resources.insert(type_name.to_string(), Box::new(r));
        self
    }

    pub(crate) fn data_source(mut self, type_name: &str, d: impl DataSource + 'static) -> Provider {
        self.data_schemas.insert(type_name.to_string(), d.schema());
        self.data.insert(type_name.to_string(), Box::new(d));
        self
    }

    fn unknown_type(&self, type_name: &str) -> DriverError {
        DriverError::UnknownType {
            driver: self.name.to_string(),
            type_name: type_name.to_string(),
        }
    }

    fn managed(&self, type_name: &str) -> Result<&dyn Resource, DriverError> {
        self.resources
            .get(type_name)
            .map(Box::as_ref)
            .ok_or_else(|| self.unknown_type(type_name))
    }
}

/// `config` with each default standing where the configuration has null.
pub(crate) fn with_defaults(config: &Value, defaults: Vec<(&'static str, Value)>) -> Value {
    let Value::Object(attrs) = config.unmarked() else {
        return config.clone();
    };
    let mut attrs = attrs.clone();
    for (name, value) in defaults {
        if attrs.get(name).is_none_or(Value::is_null) {
            attrs.insert(name.to_string(), value);
        }
    }
    Value::Object(attrs)
}

#[async_trait]
impl Driver for Provider {
    fn name(&self) -> &str {
        self.name
    }

    fn provider_address(&self) -> String {
        format!("provider[\"registry.terraform.io/{}\"]", self.source)
    }

    fn resource_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        &self.resource_schemas
    }

    fn data_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        &self.data_schemas
    }

    fn plan(&self, req: PlanRequest<'_>) -> Result<Planned, DriverError> {
        let r = self.managed(req.type_name)?;
        let schema = &self.resource_schemas[req.type_name];
        let config = with_defaults(req.config, r.defaults());
        let planned = plan_by_schema(schema, req.prior, &config).planned;
        if !planned.is_known() {
            // A configuration not known as a whole: nothing to adjust yet.
            return Ok(Planned {
                planned,
                requires_replace: Vec::new(),
                kept: strata_provider::Kept::default(),
            });
        }
        let plan = Planning {
            prior: req.prior,
            config: req.config,
            planned,
        };
        Ok(Planned {
            planned: r.adjust(plan)?,
            requires_replace: Vec::new(),
            kept: strata_provider::Kept::default(),
        })
    }

    async fn read(
        &self,
        type_name: &str,
        instances: &[Value],
    ) -> Result<Vec<Option<Value>>, DriverError> {
        let r = self.managed(type_name)?;
        let mut out = Vec::with_capacity(instances.len());
        for stored in instances {
            out.push(r.read(stored).await?);
        }
        Ok(out)
    }

    async fn create(
        &self,
        type_name: &str,
        planned: &Value,
        _tags: &Tags,
    ) -> Result<Value, DriverError> {
        self.managed(type_name)?.create(planned).await
    }

    async fn update(
        &self,
        type_name: &str,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        self.managed(type_name)?.update(prior, planned).await
    }

    async fn delete(&self, type_name: &str, prior: &Value) -> Result<(), DriverError> {
        self.managed(type_name)?.delete(prior).await
    }

    async fn import(&self, type_name: &str, id: &str) -> Result<Option<Value>, DriverError> {
        match self.managed(type_name)?.import(id) {
            Some(imported) => imported.map(Some),
            None => Err(DriverError::InvalidConfig {
                type_name: type_name.to_string(),
                detail: format!("the {} provider cannot import {type_name}", self.name),
            }),
        }
    }

    async fn read_data(&self, type_name: &str, config: &Value) -> Result<Value, DriverError> {
        self.data
            .get(type_name)
            .ok_or_else(|| self.unknown_type(type_name))?
            .read(config)
            .await
    }

    fn validate(
        &self,
        type_name: &str,
        mode: strata_provider::TypeMode,
        config: &Value,
    ) -> Result<Vec<Problem>, DriverError> {
        match mode {
            strata_provider::TypeMode::Managed => Ok(self.managed(type_name)?.validate(config)),
            strata_provider::TypeMode::Data => {
                let d = self.data.get(type_name);
                Ok(d.map(|d| d.validate(config)).unwrap_or_default())
            }
            strata_provider::TypeMode::Ephemeral => {
                let e = self.ephemeral.get(type_name);
                Ok(e.map(|e| e.validate(config)).unwrap_or_default())
            }
            // The utility providers list nothing.
            strata_provider::TypeMode::List | strata_provider::TypeMode::Action => Ok(Vec::new()),
        }
    }

    fn upgrade(
        &self,
        type_name: &str,
        version: u64,
        attributes: &str,
    ) -> Option<Result<Value, DriverError>> {
        let r = self.resources.get(type_name)?;
        if version >= self.resource_schemas.get(type_name)?.version {
            return None;
        }
        let invalid = |detail: String| DriverError::InvalidConfig {
            type_name: type_name.to_string(),
            detail: format!("cannot upgrade a stored object of schema version {version}: {detail}"),
        };
        let stored: serde_json::Value = match serde_json::from_str(attributes) {
            Ok(j) => j,
            Err(e) => return Some(Err(invalid(e.to_string()))),
        };
        r.upgrade(version, &stored).map(|o| o.map_err(invalid))
    }
}

#[async_trait]
impl strata_provider::Recovery for Provider {
    async fn find_tagged(&self, type_name: &str, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        // Nothing these types make carries tags: a crashed create is made
        // again, as Terraform would.
        self.managed(type_name).map(|_| Vec::new())
    }

    fn only_in_state(&self, type_name: &str) -> bool {
        self.managed(type_name).is_ok_and(|r| r.only_in_state())
    }
}

impl strata_provider::Billing for Provider {}
#[async_trait]
impl strata_provider::Ephemerals for Provider {
    fn ephemeral_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        &self.ephemeral_schemas
    }

    async fn open(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<strata_provider::Opened, DriverError> {
        let e = self
            .ephemeral
            .get(type_name)
            .ok_or_else(|| self.unknown_type(type_name))?;
        Ok(strata_provider::Opened {
            result: e.read(config).await?,
            private: None,
            renew_at: None,
        })
    }
}
