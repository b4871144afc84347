//! Actions (protocol 6.11): `PlanAction` before an invocation, then
//! `InvokeAction`, whose progress events are handed on as they come and whose
//! completion carries the diagnostics that say whether it worked.

use crate::driver::{capabilities, check, problems, PluginDriver};
use crate::proto::tfplugin6::{self as v6, invoke_action::event::Type as EventType};
use crate::wire::dynamic;
use strata_provider::{ActionRequest, DriverError, Invoked, Problem, Progress, TypeMode};

impl PluginDriver {
    pub(crate) fn plan_action_call(
        &self,
        req: ActionRequest<'_>,
    ) -> Result<Vec<Problem>, DriverError> {
        self.ready()?;
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

    /// `InvokeAction`: each progress message handed on as it comes, the
    /// completion's diagnostics deciding how it ended.
    pub(crate) async fn invoke_action_call(
        &self,
        req: ActionRequest<'_>,
        progress: Progress,
    ) -> Invoked {
        self.ready()?;
        let kind = self.kind(req.type_name, TypeMode::Action)?;
        let operation = format!("invoking action {}", req.type_name);
        let request = v6::invoke_action::Request {
            action_type: req.type_name.to_string(),
            config: dynamic(req.config, &kind.ty)?,
            client_capabilities: capabilities(),
        };
        let completed: std::sync::Arc<std::sync::Mutex<Option<Vec<v6::Diagnostic>>>> =
            Default::default();
        let seen = completed.clone();
        self.call_async(&operation, |p| {
            Box::pin(async move {
                let each = |event: v6::invoke_action::Event| match event.r#type {
                    Some(EventType::Progress(m)) => progress(m.message),
                    Some(EventType::Completed(c)) => {
                        *seen.lock().unwrap_or_else(|e| e.into_inner()) = Some(c.diagnostics);
                    }
                    None => {}
                };
                p.invoke_action(request, &each).await
            })
        })
        .await?;
        let completed = completed.lock().unwrap_or_else(|e| e.into_inner()).take();
        match completed {
            Some(diagnostics) => check(&operation, &diagnostics),
            None => Err(DriverError::Api {
                operation,
                detail: "the provider ended the action's stream without saying it completed".into(),
                retryable: false,
            }),
        }
    }
}
