//! Actions (protocol 6.11): `PlanAction` before an invocation, then
//! `InvokeAction`, whose progress events are kept in order and whose
//! completion carries the diagnostics that say whether it worked.

use crate::driver::{capabilities, check, problems, PluginDriver};
use crate::proto::tfplugin6::{self as v6, invoke_action::event::Type as EventType};
use crate::wire::dynamic;
use strata_provider::{ActionRequest, DriverError, Invoked, Problem, TypeMode};

impl PluginDriver {
    pub(crate) fn plan_action_call(
        &self,
        req: ActionRequest<'_>,
    ) -> Result<Vec<Problem>, DriverError> {
        let kind = self.kind(req.type_name, TypeMode::Action)?;
        let operation = format!("planning action {}", req.type_name);
        let request = v6::plan_action::Request {
            action_type: req.type_name.to_string(),
            config: dynamic(req.config, &kind.ty)?,
            client_capabilities: capabilities(),
        };
        let r = self.call(&operation, |p| {
            Box::pin(async move { p.plan_action(request).await })
        })?;
        Ok(problems(&r.diagnostics))
    }

    pub(crate) async fn invoke_action_call(&self, req: ActionRequest<'_>) -> Invoked {
        let mut progress = Vec::new();
        let failure = self.invoke(req, &mut progress).await.err();
        Invoked { progress, failure }
    }

    async fn invoke(
        &self,
        req: ActionRequest<'_>,
        progress: &mut Vec<String>,
    ) -> Result<(), DriverError> {
        let kind = self.kind(req.type_name, TypeMode::Action)?;
        let operation = format!("invoking action {}", req.type_name);
        let request = v6::invoke_action::Request {
            action_type: req.type_name.to_string(),
            config: dynamic(req.config, &kind.ty)?,
            client_capabilities: capabilities(),
        };
        let events = self
            .call_async(&operation, |p| {
                Box::pin(async move { p.invoke_action(request).await })
            })
            .await?;
        for event in events {
            match event.r#type {
                Some(EventType::Progress(p)) => progress.push(p.message),
                Some(EventType::Completed(c)) => return check(&operation, &c.diagnostics),
                None => {}
            }
        }
        Err(DriverError::Api {
            operation,
            detail: "the provider ended the action's stream without saying it completed".into(),
            retryable: false,
        })
    }
}
