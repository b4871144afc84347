//! `ImportResourceState`: an object an `import` block names, by the
//! provider's import id or (protocol 6.9) by an identity, read back
//! before use as Terraform reads it.

use crate::driver::{capabilities, check, PluginDriver};
use crate::identity;
use crate::proto::tfplugin6 as v6;
use crate::wire::value;
use crate::write_only::{refuse_values, Moment};
use strata_provider::{DriverError, ImportBy, Stored, TypeMode};

impl PluginDriver {
    pub(crate) async fn import_by(
        &self,
        type_name: &str,
        by: &ImportBy,
    ) -> Result<Option<Stored>, DriverError> {
        self.ready()?;
        let kind = self.kind(type_name, TypeMode::Managed)?;
        let (operation, id, wanted) = match by {
            ImportBy::Id(id) => (format!("importing {type_name} {id:?}"), id.clone(), None),
            ImportBy::Identity(json) => {
                let Some(schema) = &kind.identity else {
                    return Err(DriverError::InvalidConfig {
                        type_name: type_name.to_string(),
                        detail: format!(
                            "the provider {} declares no identity for {type_name}, so its objects can only be imported by id",
                            self.address()
                        ),
                    });
                };
                let operation = format!("importing {type_name} by identity");
                (
                    operation,
                    String::new(),
                    identity::object_to_wire(json, schema)?,
                )
            }
        };
        let by_identity = wanted.is_some();
        let request = v6::import_resource_state::Request {
            type_name: type_name.to_string(),
            id,
            client_capabilities: capabilities(),
            identity: wanted,
        };
        let r = self
            .call_async(&operation, |p| {
                Box::pin(async move { p.import_resource_state(request).await })
            })
            .await?;
        check(&operation, &r.diagnostics)?;
        let Some(found) = r
            .imported_resources
            .iter()
            .find(|i| i.type_name == type_name)
        else {
            return Ok(None);
        };
        let identity = self.identity_of(found.identity.as_ref(), kind, type_name, &operation)?;
        if by_identity && identity.is_none() {
            return Err(DriverError::Api {
                operation,
                detail: "the provider returned no identity for what it imported by identity".into(),
                retryable: false,
            });
        }
        let imported = Stored {
            value: value(found.state.as_ref(), &kind.ty, &operation)?,
            kept: identity::kept(found.private.clone(), identity),
        };
        let at = (self.address(), Moment::Import);
        refuse_values(&kind.schema, &imported.value, at, &operation)?;
        // As Terraform does: what an import finds is read before use.
        self.read_one(type_name, &imported).await
    }
}
