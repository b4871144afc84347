//! Drivers built into the engine: `terraform_data`, with Terraform's own
//! semantics, so the same `.tf` files run under Terraform and strata; the
//! offline utility providers (`random`, `null`, `time`, `local`, crate
//! `strata-utility`), which need no cloud and no download; and the
//! registry that finds the driver of a resource type.

pub mod offline;
pub mod remote_state;
pub mod terraform_data;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use strata_provider::{Driver, ResourceSchema};

/// The drivers a run may use, found by the resource types they declare;
/// and the further instances configured by aliased `provider` blocks,
/// found by their provider address (`provider["…/kubernetes"].east`).
#[derive(Clone)]
pub struct Drivers {
    list: Vec<Arc<dyn Driver>>,
    aliases: Arc<RwLock<BTreeMap<String, Arc<dyn Driver>>>>,
    /// Provider configurations not known yet (they use resources'
    /// attributes), by address: the index of their root `provider` block.
    deferred: Arc<RwLock<BTreeMap<String, usize>>>,
}

/// The provider address of `driver`'s configuration `alias` (the default
/// one when `None`), as state files record it.
pub fn provider_address(driver: &dyn Driver, alias: Option<&str>) -> String {
    match alias {
        Some(a) => format!("{}.{a}", driver.provider_address()),
        None => driver.provider_address(),
    }
}

impl Drivers {
    /// The drivers every build has.
    pub fn builtin() -> Drivers {
        Drivers {
            list: std::iter::once(
                Arc::new(terraform_data::TerraformData::default()) as Arc<dyn Driver>
            )
            .chain(strata_utility::providers())
            .collect(),
            aliases: Default::default(),
            deferred: Default::default(),
        }
    }

    /// The same drivers, offline (see [`offline`]).
    pub fn offline(&self) -> Drivers {
        Drivers {
            list: self
                .list
                .iter()
                .map(|d| Arc::new(offline::Offline(d.clone())) as Arc<dyn Driver>)
                .collect(),
            aliases: Default::default(),
            deferred: Default::default(),
        }
    }

    /// The builtin driver reading `terraform_remote_state` through
    /// `states` (the command gives the backends; see [`remote_state`]).
    pub fn with_remote_states(mut self, states: Arc<dyn remote_state::StateSource>) -> Drivers {
        for d in &mut self.list {
            if d.name() == "terraform" {
                *d = Arc::new(terraform_data::TerraformData::reading(states.clone()));
            }
        }
        self
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

    /// Marks the configuration at `address` (root `provider` block number
    /// `block`) as waiting for values known later in the walk.
    pub fn defer(&self, address: String, block: usize) {
        if let Ok(mut d) = self.deferred.write() {
            d.insert(address, block);
        }
    }

    /// The root `provider` block of a configuration still waiting.
    pub fn deferred(&self, address: &str) -> Option<usize> {
        self.deferred.read().ok()?.get(address).copied()
    }

    /// The configuration at `address` is configured now.
    pub fn undefer(&self, address: &str) {
        if let Ok(mut d) = self.deferred.write() {
            d.remove(address);
        }
    }

    /// The driver instance of a provider configuration, by its address.
    pub fn by_address(&self, address: &str) -> Option<Arc<dyn Driver>> {
        if let Some(d) = self.aliases.read().ok()?.get(address) {
            return Some(d.clone());
        }
        self.list
            .iter()
            .find(|d| d.provider_address() == address)
            .cloned()
    }

    /// Records the driver instance of an aliased provider configuration.
    pub fn add_alias(&self, address: String, driver: Arc<dyn Driver>) {
        if let Ok(mut all) = self.aliases.write() {
            all.insert(address, driver);
        }
    }

    /// The driver instance for a managed (or, with `data`, data source)
    /// type under the provider configuration `provider` (an address as
    /// state records it): the aliased instance when there is one, else
    /// the type's driver.
    pub fn configured(
        &self,
        type_name: &str,
        provider: &str,
        data: bool,
    ) -> Option<(Arc<dyn Driver>, &ResourceSchema)> {
        let (base, schema) = if data {
            self.data(type_name)?
        } else {
            self.resource(type_name)?
        };
        let aliased = self
            .aliases
            .read()
            .ok()
            .and_then(|all| all.get(provider).cloned());
        Some((aliased.unwrap_or_else(|| base.clone()), schema))
    }

    /// The driver of a data source type and its schema.
    pub fn data(&self, type_name: &str) -> Option<(&Arc<dyn Driver>, &ResourceSchema)> {
        self.list
            .iter()
            .find_map(|d| d.data_schemas().get(type_name).map(|s| (d, s)))
    }
}
