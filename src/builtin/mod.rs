//! Drivers built into the engine: `terraform_data`, with Terraform's own
//! semantics, so the same `.tf` files run under Terraform and strata; and
//! the registry that finds the driver of a resource type.

pub mod remote_state;
pub mod terraform_data;

use std::sync::Arc;
use strata_provider::{Driver, ResourceSchema};

/// The drivers a run may use, found by the resource types they declare.
#[derive(Clone)]
pub struct Drivers {
    list: Vec<Arc<dyn Driver>>,
}

impl Drivers {
    /// The drivers every build has.
    pub fn builtin() -> Drivers {
        Drivers {
            list: vec![Arc::new(terraform_data::TerraformData)],
        }
    }

    /// Adds a driver; tests use this to plug in drivers of their own.
    pub fn with(mut self, driver: Arc<dyn Driver>) -> Drivers {
        self.list.push(driver);
        self
    }

    /// The driver of a managed resource type and its schema.
    /// The driver configured by `provider "NAME"` blocks.
    pub fn named(&self, name: &str) -> Option<&Arc<dyn Driver>> {
        self.list.iter().find(|d| d.name() == name)
    }

    /// Every driver.
    pub fn all(&self) -> impl Iterator<Item = &Arc<dyn Driver>> {
        self.list.iter()
    }

    pub fn resource(&self, type_name: &str) -> Option<(&Arc<dyn Driver>, &ResourceSchema)> {
        self.list
            .iter()
            .find_map(|d| d.resource_schemas().get(type_name).map(|s| (d, s)))
    }

    /// The driver of a data source type and its schema.
    pub fn data(&self, type_name: &str) -> Option<(&Arc<dyn Driver>, &ResourceSchema)> {
        self.list
            .iter()
            .find_map(|d| d.data_schemas().get(type_name).map(|s| (d, s)))
    }
}
