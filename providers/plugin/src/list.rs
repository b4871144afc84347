//! `ListResource` (protocol 6.10): the objects of a managed type a
//! provider finds, checked as Terraform checks them — every result with an
//! identity of the type's identity schema, a warning without one skipped,
//! the first error ending the list.

use crate::driver::{check, PluginDriver};
use crate::identity::from_wire;
use crate::proto::tfplugin6 as v6;
use crate::wire::{dynamic, value};
use strata_provider::{DriverError, ListRequest, Listed, TypeMode};

impl PluginDriver {
    pub(crate) async fn list_objects(
        &self,
        req: ListRequest<'_>,
    ) -> Result<Vec<Listed>, DriverError> {
        self.ready()?;
        let list = self.kind(req.type_name, TypeMode::List)?;
        let managed = self.kind(req.type_name, TypeMode::Managed)?;
        let operation = format!("listing {}", req.type_name);
        let failed = |detail: String| DriverError::Api {
            operation: operation.clone(),
            detail,
            retryable: false,
        };
        let Some(identity) = &managed.identity else {
            return Err(failed(format!("Identity schema not found for resource type {}; this is a bug in the provider - please report it there", req.type_name)));
        };
        let config = dynamic(req.config, &list.ty)?;
        let validate = v6::validate_list_resource_config::Request {
            type_name: req.type_name.to_string(),
            config: config.clone(),
            include_resource_object: None,
            limit: None,
        };
        let checked = self
            .call_async(&operation, |p| {
                Box::pin(async move { p.validate_list_resource_config(validate).await })
            })
            .await?;
        check(&operation, &checked.diagnostics)?;
        let request = v6::list_resource::Request {
            type_name: req.type_name.to_string(),
            config,
            include_resource_object: req.include_resource,
            limit: i64::try_from(req.limit).unwrap_or(i64::MAX),
        };
        let events = self
            .call_async(&operation, |p| {
                Box::pin(async move { p.list_resource(request).await })
            })
            .await?;
        let mut found = Vec::with_capacity(events.len());
        for event in events {
            check(&operation, &event.diagnostic)?;
            let at = (self.address(), req.type_name);
            let id = from_wire(event.identity.as_ref(), Some(identity), at, &operation)?;
            let Some(id) = id else {
                // A result that only warns may come without an identity.
                if !event.diagnostic.is_empty() {
                    continue;
                }
                return Err(failed(format!(
                    "missing identity data in ListResource event for {}",
                    req.type_name
                )));
            };
            let object = match (&event.resource_object, req.include_resource) {
                (Some(o), true) => Some(value(Some(o), &managed.ty, &operation)?),
                _ => None,
            };
            found.push(Listed {
                identity: id.value,
                display_name: event.display_name,
                object,
            });
        }
        Ok(found)
    }
}
