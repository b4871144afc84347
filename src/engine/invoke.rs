//! `-invoke=action.TYPE.NAME` (Terraform 1.14): a plan that changes no
//! resource and invokes one action — its configuration evaluated over the
//! state, checked by the provider (`PlanAction`) — and the apply that
//! invokes it, saying its progress as Terraform says it.

use super::prepare::Prepared;
use super::view::{ActionSaid, Notice, View};
use super::Options;
use crate::apply::Invocations;
use crate::builtin::Drivers;
use crate::config::Action;
use crate::diag::{Diag, Diags};
use crate::plan::{ActionInvocation, ActionTrigger, Failed, Mode, Plan};
use std::sync::Arc;
use strata_provider::{ActionRequest, Driver, TypeMode};
use strata_state::model::InstanceKey;

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
    purpose: crate::plan::Purpose,
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
        purpose,
    )?;
    plan.actions = invocations(session, addr, drivers)?;
    Ok(plan)
}

/// The instances of the root module's action `addr` names (one, or every
/// instance of a repeated block when no key is given), each evaluated
/// and planned.
fn invocations(
    session: &Over<'_>,
    addr: &str,
    drivers: &Drivers,
) -> Result<Vec<ActionInvocation>, Diags> {
    let module = &session.p.module;
    let (action, key) = find(module, addr)?;
    let (driver, provider) = driver_of(action, drivers)?;
    let Some(schema) = driver.schema(TypeMode::Action, &action.type_name) else {
        let detail = format!(
            "The provider {} has no action type {:?}.",
            crate::builtin::source_of(driver.as_ref()),
            action.type_name
        );
        return Err(Diag::new("strata::invoke", "Invalid action type", detail)
            .at(action.span)
            .into());
    };
    let objects = super::show::state_values(session.store, drivers)?;
    let run = session.p.run.clone();
    let over = super::console_scope::Over {
        objects: &objects,
        run: &run,
        missing: super::console_scope::Missing::Unknown,
    };
    let root = super::console_scope::root(module, session.p.vars.clone(), &over);
    let scope = || {
        crate::config::ConfigScope::new(root.module, root.vars.clone(), run.clone())
            .knowing(&root.known)
    };
    let mut out = Vec::new();
    for (at, scope) in instances(action, key.as_ref(), &scope)? {
        let mut ev = scope.evaluator();
        let unknown = ("strata::invoke", "Invalid action configuration");
        let config = crate::walk::decode_known(
            action.config.as_ref(),
            schema,
            &mut ev,
            action.span,
            unknown,
        )?;
        crate::plan::action_planned(driver.as_ref(), action, &config).map_err(Diags::from)?;
        out.push(ActionInvocation {
            addr: at,
            type_name: action.type_name.clone(),
            name: action.name.clone(),
            provider: provider.clone(),
            config,
            trigger: ActionTrigger::Cli,
        });
    }
    Ok(out)
}

/// The instances of `action` an invocation names (its address and the
/// scope its configuration is evaluated in): every instance, or the one
/// `key` names.
fn instances<'m>(
    action: &Action,
    key: Option<&InstanceKey>,
    scope: &dyn Fn() -> crate::config::ConfigScope<'m>,
) -> Result<Vec<(String, crate::config::ConfigScope<'m>)>, Diags> {
    let base = format!("action.{}.{}", action.type_name, action.name);
    let value =
        |e: &crate::syntax::ast::Expr| scope().evaluator().eval(e).map(|v| v.unmarked().clone());
    let mut all: Vec<(InstanceKey, crate::config::ConfigScope<'m>)> = Vec::new();
    if let Some(count) = &action.count {
        let n = value(count)?
            .as_number()
            .and_then(|n| n.to_i64())
            .unwrap_or(-1);
        if n < 0 {
            let detail = "The given \"count\" argument value is unsuitable: a whole number, zero or more, known before the plan is required.";
            return Err(
                Diag::new("strata::invoke", "Invalid count argument", detail)
                    .at(count.span)
                    .into(),
            );
        }
        for i in 0..n {
            let mut s = scope();
            s.count_index = Some(crate::lang::value::Value::int(i));
            all.push((InstanceKey::Int(i.unsigned_abs()), s));
        }
    } else if let Some(each) = &action.for_each {
        for (k, v) in crate::plan::for_each_elements(&value(each)?, each.span)? {
            let name = k
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| crate::lang::display::show(&k));
            let mut s = scope();
            s.each = Some((k, v));
            all.push((InstanceKey::Str(name), s));
        }
    } else {
        if key.is_some() {
            return Err(refused(
                "Action not found",
                format!("{base} has no count or for_each: it has no instance keys."),
            ));
        }
        return Ok(vec![(base, scope())]);
    }
    let addr = |k: &InstanceKey| format!("{base}{k}");
    let chosen: Vec<_> = all
        .into_iter()
        .filter(|(k, _)| key.is_none_or(|want| want == k))
        .map(|(k, s)| (addr(&k), s))
        .collect();
    if chosen.is_empty() {
        let named = key.map(addr).unwrap_or(base);
        return Err(refused(
            "Action not found",
            format!("The configuration makes no instance {named}."),
        ));
    }
    Ok(chosen)
}

/// The action block `addr` (`action.TYPE.NAME`, with an instance key
/// where repeated) names in the root module, and the key.
fn find<'m>(
    module: &'m crate::config::Module,
    addr: &str,
) -> Result<(&'m Action, Option<InstanceKey>), Diags> {
    let invalid = || {
        refused(
            &format!("Invalid target {addr:?}"),
            "An action is named as action.TYPE.NAME, with an instance key where it repeats.".into(),
        )
    };
    let rest = addr.strip_prefix("action.").ok_or_else(invalid)?;
    let parsed = strata_state::model::Address::parse(rest).ok_or_else(invalid)?;
    let (type_name, name) = (&parsed.id.type_name, &parsed.id.name);
    if !parsed.id.module.is_root() {
        return Err(invalid());
    }
    let found = module
        .actions
        .iter()
        .find(|a| &a.type_name == type_name && &a.name == name);
    let found = found.ok_or_else(|| {
        refused(
            "Action not found",
            format!("There is no action {addr:?} in the root module's configuration."),
        )
    })?;
    Ok((found, parsed.key))
}

/// The driver that serves `action` and its provider configuration's
/// address; no driver of that name is an error at the block.
fn driver_of(action: &Action, drivers: &Drivers) -> Result<(Arc<dyn Driver>, String), Diags> {
    drivers
        .for_action(
            &action.type_name,
            action
                .provider
                .as_ref()
                .map(|p| (p.name.as_str(), p.alias.as_deref())),
        )
        .ok_or_else(|| {
            let local = match &action.provider {
                Some(p) => p.name.clone(),
                None => action
                    .type_name
                    .split('_')
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            };
            let detail = format!(
                "No provider {local:?} serves action type {:?}.",
                action.type_name
            );
            Diag::new("strata::invoke", "Provider not found", detail)
                .at(action.span)
                .into()
        })
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
        let req = ActionRequest {
            type_name: &a.type_name,
            config: &a.config,
        };
        let invoked = streamed(rt, driver.as_ref(), req, &mut |m| {
            view.notice(said(ActionSaid::Progress(m)))
        });
        done.invoked += 1;
        if let Err(e) = invoked {
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

/// Invokes one action on `rt`, saying each progress message as it comes
/// while the invocation runs.
fn streamed(
    rt: &tokio::runtime::Runtime,
    driver: &dyn Driver,
    req: ActionRequest<'_>,
    say: &mut dyn FnMut(String),
) -> strata_provider::Invoked {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let progress: strata_provider::Progress = Box::new(move |m| {
        let _ = tx.send(m);
    });
    rt.block_on(async {
        let invoked = driver.invoke_action(req, progress);
        tokio::pin!(invoked);
        loop {
            tokio::select! {
                Some(m) = rx.recv() => say(m),
                done = &mut invoked => {
                    while let Ok(m) = rx.try_recv() {
                        say(m);
                    }
                    return done;
                }
            }
        }
    })
}
