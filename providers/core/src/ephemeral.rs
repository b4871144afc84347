//! Ephemeral resources (Terraform 1.10's `ephemeral` blocks): something a
//! run opens, uses and closes — a token, a secret read, a tunnel — that is
//! never planned as a change and never kept in a state or a saved plan.
//! The engine opens one whenever a run reaches it, renews it while the run
//! still holds it past the time its driver gave, and closes it once the
//! run is done with it.

use crate::{DriverError, ResourceSchema};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::time::SystemTime;
use strata_value::value::Value;

/// What an open returned.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The resource's object, which references read.
    pub result: Value,
    /// What the driver needs to renew and close it, handed back as given.
    pub private: Option<Vec<u8>>,
    /// When it must be renewed if it is still held then.
    pub renew_at: Option<SystemTime>,
}

/// What a renewal returned: the new private data and the next time.
#[derive(Debug, Clone, Default)]
pub struct Renewed {
    pub private: Option<Vec<u8>>,
    pub renew_at: Option<SystemTime>,
}

/// The ephemeral resource types a driver serves; by default none.
#[async_trait]
pub trait Ephemerals: Send + Sync {
    /// Schemas of the ephemeral resource types, by type name.
    fn ephemeral_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        static NONE: BTreeMap<String, ResourceSchema> = BTreeMap::new();
        &NONE
    }

    /// Opens one instance from its configuration (wholly known).
    async fn open(&self, type_name: &str, config: &Value) -> Result<Opened, DriverError> {
        let _ = config;
        Err(DriverError::UnknownType {
            driver: "this".into(),
            type_name: type_name.to_string(),
        })
    }

    /// Keeps an open instance alive past its `renew_at`.
    async fn renew(&self, type_name: &str, private: Option<&[u8]>) -> Result<Renewed, DriverError> {
        let _ = (type_name, private);
        Ok(Renewed::default())
    }

    /// Lets an open instance go.
    async fn close(&self, type_name: &str, private: Option<&[u8]>) -> Result<(), DriverError> {
        let _ = (type_name, private);
        Ok(())
    }
}
