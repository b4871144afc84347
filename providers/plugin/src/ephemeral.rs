//! A provider's ephemeral resources through the protocol's
//! `OpenEphemeralResource`, `RenewEphemeralResource` and
//! `CloseEphemeralResource` (protocol 6.7 and 5.7).

use crate::driver::{capabilities, check, PluginDriver};
use crate::proto::tfplugin6 as v6;
use crate::wire::{dynamic, value};
use async_trait::async_trait;
use std::time::{Duration, SystemTime};
use strata_provider::{DriverError, Opened, Renewed, TypeMode};
use strata_value::value::Value;

/// The wire's time as a point in time; `None` for one before the epoch
/// (no provider means that).
fn time(t: Option<&v6::Timestamp>) -> Option<SystemTime> {
    let t = t?;
    let secs = u64::try_from(t.seconds).ok()?;
    let nanos = u32::try_from(t.nanos).unwrap_or(0);
    SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
}

#[async_trait]
impl strata_provider::Ephemerals for PluginDriver {
    async fn open(&self, type_name: &str, config: &Value) -> Result<Opened, DriverError> {
        self.ready()?;
        let kind = self.kind(type_name, TypeMode::Ephemeral)?;
        let operation = format!("opening {type_name}");
        let request = v6::open_ephemeral_resource::Request {
            type_name: type_name.to_string(),
            config: dynamic(config, &kind.ty)?,
            client_capabilities: capabilities(),
        };
        let r = self
            .call_async(&operation, |p| {
                Box::pin(async move { p.open_ephemeral_resource(request).await })
            })
            .await?;
        check(&operation, &r.diagnostics)?;
        Ok(Opened {
            result: value(r.result.as_ref(), &kind.ty, &operation)?,
            private: r.private,
            renew_at: time(r.renew_at.as_ref()),
        })
    }

    async fn renew(&self, type_name: &str, private: Option<&[u8]>) -> Result<Renewed, DriverError> {
        let operation = format!("renewing {type_name}");
        let request = v6::renew_ephemeral_resource::Request {
            type_name: type_name.to_string(),
            private: private.map(<[u8]>::to_vec),
        };
        let r = self
            .call_async(&operation, |p| {
                Box::pin(async move { p.renew_ephemeral_resource(request).await })
            })
            .await?;
        check(&operation, &r.diagnostics)?;
        Ok(Renewed {
            private: r.private,
            renew_at: time(r.renew_at.as_ref()),
        })
    }

    async fn close(&self, type_name: &str, private: Option<&[u8]>) -> Result<(), DriverError> {
        let operation = format!("closing {type_name}");
        let request = v6::close_ephemeral_resource::Request {
            type_name: type_name.to_string(),
            private: private.map(<[u8]>::to_vec),
        };
        let r = self
            .call_async(&operation, |p| {
                Box::pin(async move { p.close_ephemeral_resource(request).await })
            })
            .await?;
        check(&operation, &r.diagnostics)
    }
}
