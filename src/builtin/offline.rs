//! Drivers that never leave the machine: `validate` plans a configuration
//! through them to evaluate what only a plan evaluates (a cluster's module
//! outputs, for the portability check) without credentials or network.
//! Planning is the real driver's (it is pure computation); reads answer
//! "not known yet", and nothing is ever written.

use async_trait::async_trait;
use std::sync::Arc;
use strata_provider::billing::Billed;
use strata_provider::catalog::Catalog;
use strata_provider::{
    Driver, DriverError, PlanRequest, Planned, Problem, ResourceSchema, Tags, TypeMode,
};
use strata_value::value::Value;

pub struct Offline(pub Arc<dyn Driver>);

fn refused(type_name: &str) -> DriverError {
    DriverError::InvalidConfig {
        type_name: type_name.to_string(),
        detail: "offline: validate never calls the cloud".to_string(),
    }
}

#[async_trait]
impl Driver for Offline {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn provider_address(&self) -> String {
        self.0.provider_address()
    }

    /// Resources and data sources, which validate plans; no ephemeral
    /// resource is opened offline.
    fn schema(&self, mode: TypeMode, type_name: &str) -> Option<&ResourceSchema> {
        match mode {
            TypeMode::Managed | TypeMode::Data => self.0.schema(mode, type_name),
            _ => None,
        }
    }

    fn type_names(&self, mode: TypeMode) -> Vec<String> {
        match mode {
            TypeMode::Managed | TypeMode::Data => self.0.type_names(mode),
            _ => Vec::new(),
        }
    }

    fn provider_schema(&self) -> ResourceSchema {
        self.0.provider_schema()
    }

    fn configure(&self, _config: &Value) -> Result<(), DriverError> {
        Ok(())
    }

    fn plan(&self, req: PlanRequest<'_>) -> Result<Planned, DriverError> {
        self.0.plan(req)
    }

    /// A provider's own check of a block calls no cloud.
    fn validate(
        &self,
        type_name: &str,
        data: TypeMode,
        config: &Value,
    ) -> Result<Vec<Problem>, DriverError> {
        self.0.validate(type_name, data, config)
    }

    async fn read(
        &self,
        type_name: &str,
        _instances: &[Value],
    ) -> Result<Vec<Option<Value>>, DriverError> {
        Err(refused(type_name))
    }

    async fn create(&self, type_name: &str, _: &Value, _: &Tags) -> Result<Value, DriverError> {
        Err(refused(type_name))
    }

    async fn update(&self, type_name: &str, _: &Value, _: &Value) -> Result<Value, DriverError> {
        Err(refused(type_name))
    }

    async fn delete(&self, type_name: &str, _: &Value) -> Result<(), DriverError> {
        Err(refused(type_name))
    }

    fn another(&self) -> Option<Result<Arc<dyn Driver>, DriverError>> {
        Some(Ok(Arc::new(Offline(self.0.clone()))))
    }

    async fn read_data(&self, type_name: &str, _config: &Value) -> Result<Value, DriverError> {
        match self.0.schema(TypeMode::Data, type_name) {
            Some(s) => Ok(Value::Unknown(s.object_type())),
            None => Err(refused(type_name)),
        }
    }
}

#[async_trait]
impl strata_provider::Recovery for Offline {
    async fn find_tagged(&self, type_name: &str, _: &Tags) -> Result<Vec<Value>, DriverError> {
        Err(refused(type_name))
    }
}

impl strata_provider::Ephemerals for Offline {}

impl strata_provider::Billing for Offline {
    fn gpu_catalog(&self) -> Option<&Catalog> {
        self.0.gpu_catalog()
    }

    fn billing(&self, type_name: &str, object: &Value, today: &str) -> Vec<Billed> {
        self.0.billing(type_name, object, today)
    }
}
