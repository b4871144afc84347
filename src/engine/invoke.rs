//! `-invoke=action.TYPE.NAME` (Terraform 1.14): a plan that changes no
//! resource and invokes one action — its configuration evaluated over the
//! state, checked by the provider (`PlanAction`) — and the apply that
//! invokes it, saying its progress as Terraform says it.

use super::prepare::Prepared;
use super::view::{ActionSaid, Notice, View};
use super::Options;
use crate::builtin::Drivers;
use crate::config::Action;
use crate::diag::{Diag, Diags};
use crate::plan::{ActionInvocation, ActionTrigger, Failed, Mode, Plan};
use std::sync::Arc;
use strata_provider::{ActionRequest, Driver};

fn refused(summary: &str, detail: String) -> Diags {
    Diags::from(Diag::new("strata::invoke", summary, detail))
}

/// What an invocation is planned over: the configuration, the state (and
/// where it is stored: its objects are what the configuration may use)
/// and the session's runtime.
pub(super) struct Over<'s> {
    pub p: &'s Prepared,
    pub state: &'s strata_state::State,
    pub store: &'s strata_state::Store,
    pub rt: &'s tokio::runtime::Runtime,
}

/// A plan that leaves every object as the state holds it (nothing read
/// back, nothing changed) and invokes `addr`.
pub(super) fn plan(
    session: &Over<'_>,
    opts: &Options,
    addr: &str,
    described: bool,
    drivers: &Drivers,
) -> Result<Plan, Failed> {
    let quiet = Options {
        mode: Mode::RefreshOnly,
        refresh: false,
        invoke: None,
        ..opts.clone()
    };
    let mut plan = super::prepare::make_plan(
        session.p,
        session.state,
        &quiet,
        drivers,
        session.rt,
        described,
    )?;
    plan.actions = vec![invocation(session, addr, drivers)?];
    Ok(plan)
}

/// The root module's action `addr` names, evaluated and planned.
fn invocation(
    session: &Over<'_>,
    addr: &str,
    drivers: &Drivers,
) -> Result<ActionInvocation, Diags> {
    let module = &session.p.module;
    let action = find(module, addr)?;
    let (driver, provider) = driver_of(action, module, drivers)?;
    let Some(schema) = driver.action_schemas().get(&action.type_name) else {
        return Err(Diag::new(
            "strata::invoke",
            "Invalid action type",
            format!(
                "The provider {} has no action type {:?}.",
                driver.provider_address(),
                action.type_name
            ),
        )
        .at(action.span)
        .into());
    };
    let objects = super::show::state_values(session.store, drivers)?;
    let run = session.p.run.clone();
    let over = super::console_scope::Over {
        objects: &objects,
        run: &run,
    };
    let root = super::console_scope::root(module, session.p.vars.clone(), &over);
    let scope =
        crate::config::ConfigScope::new(root.module, root.vars, run.clone()).knowing(&root.known);
    let mut ev = scope.evaluator();
    let unknown = ("strata::invoke", "Invalid action configuration");
    let config = crate::walk::decode_known(
        action.config.as_ref(),
        schema,
        &mut ev,
        action.span,
        unknown,
    )?;
    let req = ActionRequest {
        type_name: &action.type_name,
        config: &config,
    };
    let problems = driver.plan_action(req).map_err(|e| {
        Diag::new(
            "strata::invoke",
            format!("Planning {addr} failed"),
            e.to_string(),
        )
        .at(action.span)
    })?;
    let errors: Vec<_> = problems.iter().filter(|p| p.error).collect();
    if let Some(first) = errors.first() {
        return Err(Diag::new(
            "strata::invoke",
            first.summary.clone(),
            first.detail.clone(),
        )
        .at(action.span)
        .into());
    }
    Ok(ActionInvocation {
        addr: addr.to_string(),
        type_name: action.type_name.clone(),
        name: action.name.clone(),
        provider,
        config,
        trigger: ActionTrigger::Cli,
    })
}

/// The action block `addr` (`action.TYPE.NAME`) names in the root module.
fn find<'m>(module: &'m crate::config::Module, addr: &str) -> Result<&'m Action, Diags> {
    let parts: Vec<&str> = addr.split('.').collect();
    let ["action", type_name, name] = parts[..] else {
        return Err(refused(
            &format!("Invalid target {addr:?}"),
            "An action is named as action.TYPE.NAME.".into(),
        ));
    };
    let found = module
        .actions
        .iter()
        .find(|a| a.type_name == type_name && a.name == name);
    let found = found.ok_or_else(|| {
        refused(
            "Action not found",
            format!("There is no action {addr:?} in the root module's configuration."),
        )
    })?;
    if found.count.is_some() || found.for_each.is_some() {
        return Err(Diag::new(
            "strata::invoke",
            "Not supported yet",
            "strata does not yet invoke an action whose block has count or for_each.",
        )
        .at(found.span)
        .into());
    }
    Ok(found)
}

/// The driver that serves `action`, configured, and its provider
/// configuration's address: its `provider`, else the one its type's
/// prefix implies.
fn driver_of(
    action: &Action,
    module: &crate::config::Module,
    drivers: &Drivers,
) -> Result<(Arc<dyn Driver>, String), Diags> {
    let (local, alias) = match &action.provider {
        Some(p) => (p.name.clone(), p.alias.clone()),
        None => (
            action
                .type_name
                .split('_')
                .next()
                .unwrap_or_default()
                .to_string(),
            None,
        ),
    };
    let _ = module;
    let Some(base) = drivers.named(&local) else {
        return Err(Diag::new(
            "strata::invoke",
            "Provider not found",
            format!(
                "No provider {local:?} serves action type {:?}.",
                action.type_name
            ),
        )
        .at(action.span)
        .into());
    };
    let address = crate::builtin::provider_address(&**base, alias.as_deref());
    let driver = drivers.by_address(&address).unwrap_or_else(|| base.clone());
    Ok((driver, address))
}

/// What the apply's invocations came to.
#[derive(Debug, Default, Clone, Copy)]
pub struct Invocations {
    pub invoked: usize,
    pub failed: usize,
}

/// Invokes the plan's actions in order, saying each one's progress; a
/// failure is an error, and the actions after it are not invoked.
pub(super) fn invoke(
    rt: &tokio::runtime::Runtime,
    actions: &[ActionInvocation],
    view: &mut dyn View,
    drivers: &Drivers,
) -> (Invocations, Diags) {
    let mut done = Invocations::default();
    for a in actions {
        let said = |step: ActionSaid| Notice::Action {
            addr: a.addr.clone(),
            type_name: a.type_name.clone(),
            name: a.name.clone(),
            said: a.said(),
            step,
        };
        let Some(driver) = drivers.by_address(&a.provider) else {
            let why = format!("no driver serves {}", a.provider);
            return (done, refused(&format!("Invoking {} failed", a.addr), why));
        };
        view.notice(said(ActionSaid::Started));
        let invoked = rt.block_on(driver.invoke_action(ActionRequest {
            type_name: &a.type_name,
            config: &a.config,
        }));
        for message in invoked.progress {
            view.notice(said(ActionSaid::Progress(message)));
        }
        done.invoked += 1;
        if let Some(e) = invoked.failure {
            done.failed += 1;
            view.notice(said(ActionSaid::Failed(e.to_string())));
            return (
                done,
                refused(&format!("Invoking {} failed", a.addr), e.to_string()),
            );
        }
        view.notice(said(ActionSaid::Complete));
    }
    (done, Diags::default())
}
