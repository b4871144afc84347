//! A managed resource's `lifecycle { action_trigger }` (Terraform 1.14)
//! planned for one instance's change: which events the change fires,
//! whether each block's `condition` holds, and each action it names
//! evaluated with `caller` bound to the object and checked by its provider
//! (`PlanAction`), as Terraform plans them
//! (`NodeAbstractResourceInstance.planActionTriggers`).

use super::action::{is_destroy, ActionInvocation, Lifecycle, Trigger};
use super::{Action, ResourceChange};
use crate::builtin::Drivers;
use crate::config::{Action as ActionBlock, ActionEvent, ActionTrigger, Resource};
use crate::diag::{Diag, Diags, Span};
use crate::graph::Node;
use crate::lang::value::Value;
use crate::syntax::ast::Expr;
use crate::walk::{InstanceCtx, ResourceInstances, Walk};
use strata_provider::{ActionRequest, TypeMode};
use strata_state::model::InstanceKey;

/// The instance whose change triggers actions, and where it is evaluated.
pub struct Triggering<'w, 'a> {
    pub walk: &'w Walk<'a>,
    pub node: &'w Node,
    pub r: &'w Resource,
    pub ri: &'w ResourceInstances,
    pub ctx: &'w InstanceCtx,
}

/// The destroy events' actions of `change`, the delete of an instance
/// whose resource block `r` is still in the configuration (a destroy run,
/// or an instance its `count` or `for_each` no longer makes).
pub(super) fn plan_delete(
    walk: &Walk<'_>,
    graph: &crate::graph::Graph,
    r: &Resource,
    change: &ResourceChange,
    drivers: &Drivers,
    diags: &mut Diags,
) -> Vec<ActionInvocation> {
    if r.lifecycle.action_triggers.is_empty() || change.deposed.is_some() {
        return Vec::new();
    }
    let config = change.addr.id.config();
    let node = graph
        .graph
        .node_indices()
        .map(|i| &graph.graph[i])
        .find(|n| n.resource_addr() == Some(&config));
    let Some(node) = node else {
        return Vec::new();
    };
    let ri = ResourceInstances {
        resource: change.addr.id.clone(),
        keys: crate::walk::Keys::Single,
    };
    let ctx = InstanceCtx::orphan(change.addr.key.clone());
    let at = Triggering {
        walk,
        node,
        r,
        ri: &ri,
        ctx: &ctx,
    };
    plan(&at, change, drivers, diags)
}

/// Whether `event` fires for a change that does `action`
/// (Terraform's `eventsForPlannedAction`).
fn fires(event: ActionEvent, action: Action) -> bool {
    match event {
        ActionEvent::BeforeCreate | ActionEvent::AfterCreate => {
            action == Action::Create || action.is_replace()
        }
        ActionEvent::BeforeUpdate | ActionEvent::AfterUpdate => action == Action::Update,
        ActionEvent::BeforeDestroy | ActionEvent::AfterDestroy => action.deletes(),
    }
}

fn error(summary: impl Into<String>, detail: impl Into<String>, at: Span) -> Diag {
    Diag::new("strata::plan::action_trigger", summary, detail).at(at)
}

/// The actions `change` invokes, in Terraform's order: block by block,
/// each fired event, each action of the block's list.
pub(super) fn plan(
    at: &Triggering<'_, '_>,
    change: &ResourceChange,
    drivers: &Drivers,
    diags: &mut Diags,
) -> Vec<ActionInvocation> {
    let mut out = Vec::new();
    for (block, t) in at.r.lifecycle.action_triggers.iter().enumerate() {
        let fired: Vec<ActionEvent> = t
            .events
            .iter()
            .copied()
            .filter(|e| fires(*e, change.action))
            .collect();
        if fired.is_empty() {
            continue;
        }
        // `self` in a condition is the object as planned (a deleted
        // one's as it was).
        let object = change.after.clone().or_else(|| change.before.clone());
        match condition(at, t, object.unwrap_or_else(Value::null)) {
            Ok(false) => continue,
            Ok(true) => {}
            Err(d) => {
                diags.push(d);
                continue;
            }
        }
        for event in fired {
            for (index, e) in t.actions.iter().enumerate() {
                let lifecycle = Lifecycle {
                    resource: change.addr.clone(),
                    event,
                    block,
                    index,
                    on_failure: t.on_failure,
                };
                let caller = match is_destroy(event) {
                    true => change.before.clone(),
                    false => change.after.clone(),
                };
                let caller = caller.unwrap_or_else(Value::null);
                let planned = invocation(at, e, lifecycle, caller, drivers).and_then(|r| {
                    planned(&*r.driver, r.block, &r.invocation.config)?;
                    Ok(r.invocation)
                });
                match planned {
                    Ok(ai) => out.push(ai),
                    Err(d) => diags.push(d),
                }
            }
        }
    }
    out
}

/// A trigger's `condition` in its resource instance's scope, `self` the
/// object: false skips it; unknown plans it (the apply judges it again).
fn condition(at: &Triggering<'_, '_>, t: &ActionTrigger, object: Value) -> Result<bool, Diag> {
    let Some(cond) = &t.condition else {
        return Ok(true);
    };
    let v = at
        .walk
        .eval_self(at.node, at.ri.module(), Some(at.ctx), object, |ev| {
            ev.eval(cond)
        })
        .unwrap_or_else(|| Ok(Value::unknown()))?;
    judged(v.unmarked(), cond.span)
}

/// A condition's value: a boolean, or unknown (planned as true).
fn judged(v: &Value, at: Span) -> Result<bool, Diag> {
    if !v.is_known() {
        return Ok(true);
    }
    v.as_bool().ok_or_else(|| {
        error(
            "Incorrect value type",
            "Invalid expression value: a bool is required.",
            at,
        )
    })
}

/// A planned lifecycle invocation evaluated again at apply, with `caller`
/// the object as it now is (Terraform evaluates the condition and the
/// configuration again for every event but the destroy ones): `None` when
/// its condition no longer holds; its configuration must be wholly known.
pub fn again(
    at: &Triggering<'_, '_>,
    planned: &ActionInvocation,
    caller: Value,
    drivers: &Drivers,
) -> Result<Option<ActionInvocation>, Diag> {
    let Some(l) = planned.lifecycle() else {
        return Ok(Some(planned.clone()));
    };
    if is_destroy(l.event) {
        return Ok(Some(planned.clone()));
    }
    let t = at.r.lifecycle.action_triggers.get(l.block);
    let (Some(t), Some(e)) = (t, t.and_then(|t| t.actions.get(l.index))) else {
        return Ok(Some(planned.clone()));
    };
    if !condition(at, t, caller.clone())? {
        return Ok(None);
    }
    let Resolved {
        invocation: ai,
        block,
        ..
    } = invocation(at, e, l.clone(), caller, drivers)?;
    if !ai.config.is_wholly_known() {
        let detail = format!("The action {} was not fully known during apply. This may be caused by using the caller object in conjunction with a before event.", ai.addr);
        return Err(error(
            "Action configuration unknown during apply",
            detail,
            block.span,
        ));
    }
    Ok(Some(ai))
}

/// An invocation, with the block and the driver it was resolved to.
struct Resolved<'a> {
    invocation: ActionInvocation,
    block: &'a ActionBlock,
    driver: std::sync::Arc<dyn strata_provider::Driver>,
}

/// One action of a trigger's list, for `lifecycle`'s event, its
/// configuration evaluated with `caller`.
fn invocation<'a>(
    at: &Triggering<'_, 'a>,
    e: &Expr,
    lifecycle: Lifecycle,
    caller: Value,
    drivers: &Drivers,
) -> Result<Resolved<'a>, Diag> {
    let (type_name, name, key) = crate::config::action::reference(e).ok_or_else(|| {
        error(
            "Invalid action argument",
            "The actions list may only contain references to actions declared in this module: action.TYPE.NAME.",
            e.span,
        )
    })?;
    let block = at
        .walk
        .module(at.node)
        .and_then(|m| {
            m.actions
                .iter()
                .find(|a| a.type_name == type_name && a.name == name)
        })
        .ok_or_else(|| {
            let detail = format!("The lifecycle action_trigger actions list contains a reference to the action \"action.{type_name}.{name}\" that does not exist in the configuration of this module.");
            error(
                "action_trigger actions references non-existent action",
                detail,
                e.span,
            )
        })?;
    let key = match key {
        Some(k) => Some(instance_key(at, k)?),
        None => None,
    };
    let path = at.ri.module();
    let prefix = match path.is_root() {
        true => String::new(),
        false => format!("{path}."),
    };
    let base = format!("{prefix}action.{type_name}.{name}");
    let addr = format!(
        "{base}{}",
        key.as_ref().map(ToString::to_string).unwrap_or_default()
    );
    let instances =
        at.walk
            .action_instances(at.node, path, block.count.as_ref(), block.for_each.as_ref())?;
    let actx = instances
        .into_iter()
        .find(|i| i.key == key)
        .ok_or_else(|| {
            let detail = format!("The address {addr} does not identify an instance of {base}");
            error("Reference to non-existent action instance", detail, e.span)
        })?;
    let (driver, provider) = drivers
        .for_action(
            &block.type_name,
            block
                .provider
                .as_ref()
                .map(|p| (p.name.as_str(), p.alias.as_deref())),
        )
        .ok_or_else(|| {
            let detail = format!("No provider serves action type {type_name:?}.");
            error("Provider not found", detail, block.span)
        })?;
    let config = configured(at, (block, &actx), &*driver, caller)?;
    if is_destroy(lifecycle.event) && !config.is_wholly_known() {
        return Err(error(
            "Unknown action config",
            "Action configuration must be known to plan a destroy action.",
            block.span,
        ));
    }
    let invocation = ActionInvocation {
        addr,
        type_name: type_name.to_string(),
        name: name.to_string(),
        provider,
        config,
        trigger: Trigger::Lifecycle(lifecycle),
    };
    Ok(Resolved {
        invocation,
        block,
        driver,
    })
}

/// An action reference's key, evaluated in the triggering instance's
/// scope (`action.x.y[each.key]`).
fn instance_key(at: &Triggering<'_, '_>, k: &Expr) -> Result<InstanceKey, Diag> {
    let v = at
        .walk
        .eval_with(at.node, at.ri.module(), Some(at.ctx), |ev| ev.eval(k))
        .unwrap_or_else(|| Ok(Value::unknown()))?;
    match v.unmarked() {
        Value::String(s) => Ok(InstanceKey::Str(s.clone())),
        v => v
            .as_number()
            .and_then(|n| n.to_i64())
            .and_then(|i| u64::try_from(i).ok())
            .map(InstanceKey::Int)
            .ok_or_else(|| {
                error(
                    "Invalid action instance key",
                    "An action's key must be a known string or whole number.",
                    k.span,
                )
            }),
    }
}

/// The action instance's `config` block evaluated with `caller` (and
/// `self`) the triggering object.
pub fn configured(
    at: &Triggering<'_, '_>,
    (block, actx): (&ActionBlock, &InstanceCtx),
    driver: &dyn strata_provider::Driver,
    caller: Value,
) -> Result<Value, Diag> {
    let Some(schema) = driver.schema(TypeMode::Action, &block.type_name) else {
        let detail = format!(
            "The provider {} has no action type {:?}.",
            crate::builtin::source_of(driver),
            block.type_name
        );
        return Err(error("Invalid action type", detail, block.span));
    };
    let decoded = at
        .walk
        .eval_caller(at.node, at.ri.module(), actx, caller, |ev| {
            crate::walk::decode_config(block.config.as_ref(), schema, ev, block.span)
        })
        .unwrap_or_else(|| Ok(Value::unknown()));
    decoded.map_err(|d| {
        d.0.into_iter()
            .next()
            .unwrap_or_else(|| error("Invalid action configuration", "", block.span))
    })
}

/// The provider's check of one invocation (`PlanAction`): its first
/// error, at the action block.
pub fn planned(
    driver: &dyn strata_provider::Driver,
    block: &ActionBlock,
    config: &Value,
) -> Result<(), Diag> {
    let req = ActionRequest {
        type_name: &block.type_name,
        config,
    };
    let problems = driver.plan_action(req).map_err(|e| {
        let summary = format!("Planning action {} failed", block.name);
        error(summary, e.to_string(), block.span)
    })?;
    match problems.into_iter().find(|p| p.error) {
        Some(first) => Err(error(first.summary, first.detail, block.span)),
        None => Ok(()),
    }
}
