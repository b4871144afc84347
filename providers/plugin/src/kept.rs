//! The identities a provider's calls return (protocol 6.9), taken as
//! the driver keeps them: checked against the type's identity schema, a
//! planned one kept only when wholly known, a stored one of an older
//! version upgraded by the provider.

use crate::driver::{check, PluginDriver};
use crate::identity::from_wire;
use crate::kinds::Kind;
use crate::proto::tfplugin6 as v6;
use crate::wire::value;
use strata_provider::{DriverError, Identity, TypeMode};

impl PluginDriver {
    /// The identity a call returned for an object of `kind`.
    pub(crate) fn identity_of(
        &self,
        d: Option<&v6::ResourceIdentityData>,
        kind: &Kind,
        type_name: &str,
        operation: &str,
    ) -> Result<Option<Identity>, DriverError> {
        from_wire(
            d,
            kind.identity.as_ref(),
            (self.address(), type_name),
            operation,
        )
    }

    /// The identity a plan returned: one not wholly known yet (a create's
    /// or a replacement's, which the apply fills) is not kept.
    pub(crate) fn planned_identity(
        &self,
        r: &v6::plan_resource_change::Response,
        kind: &Kind,
        type_name: &str,
        operation: &str,
    ) -> Result<Option<Identity>, DriverError> {
        let Some(schema) = &kind.identity else {
            return Ok(None);
        };
        let data = r
            .planned_identity
            .as_ref()
            .and_then(|d| d.identity_data.as_ref());
        let planned = value(data, &schema.object_type(), operation)?;
        if !planned.is_wholly_known() {
            return Ok(None);
        }
        self.identity_of(r.planned_identity.as_ref(), kind, type_name, operation)
    }

    /// A stored identity written under an older version of its type's
    /// identity schema, as the provider upgrades it
    /// (`UpgradeResourceIdentity`); `None` when it is current.
    pub(crate) fn upgrade_identity_of(
        &self,
        type_name: &str,
        stored: &Identity,
    ) -> Option<Result<Identity, DriverError>> {
        let kind = match self.kind(type_name, TypeMode::Managed) {
            Ok(k) => k,
            Err(e) => return Some(Err(e)),
        };
        let schema = kind.identity.as_ref()?;
        if schema.version == stored.version {
            return None;
        }
        let operation = format!("upgrading the stored identity of a {type_name}");
        let request = v6::upgrade_resource_identity::Request {
            type_name: type_name.to_string(),
            version: i64::try_from(stored.version).unwrap_or(i64::MAX),
            raw_identity: Some(v6::RawState {
                json: stored.value.to_string().into_bytes(),
                flatmap: Default::default(),
            }),
        };
        let upgraded = self
            .call(&operation, |p| {
                Box::pin(async move { p.upgrade_resource_identity(request).await })
            })
            .and_then(|r| {
                check(&operation, &r.diagnostics)?;
                self.identity_of(r.upgraded_identity.as_ref(), kind, type_name, &operation)?
                    .ok_or_else(|| DriverError::Api {
                        operation: operation.clone(),
                        detail:
                            "Invalid resource identity upgrade: the provider returned no identity"
                                .into(),
                        retryable: false,
                    })
            });
        Some(upgraded)
    }
}
