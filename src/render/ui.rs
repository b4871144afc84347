//! A plan as Terraform's machine-readable UI tells it (`plan -json`): a
//! refresh message pair for each object read back, a `planned_change` for
//! each change, the `change_summary`, and the `outputs`; and an apply's
//! closing messages. The envelope is `crate::ui`'s.

use crate::plan::{Action, EphemeralStep, OutputChange, Plan, Reason, ResourceChange};
use crate::ui::{line, resource};
use serde_json::{json, Map, Value as Json};

/// The refresh messages, then the planned changes, the summary and the
/// outputs, one line each.
pub fn plan(p: &Plan) -> Vec<String> {
    let closes = |s: &&crate::plan::EphemeralSaid| {
        matches!(
            s.step,
            EphemeralStep::Closing | EphemeralStep::Closed { .. }
        )
    };
    let ephemeral = |close: bool| {
        p.ephemeral
            .iter()
            .filter(move |s| closes(s) == close)
            .filter_map(|s| s.step.json(&s.addr))
    };
    let mut out: Vec<String> = ephemeral(false).collect();
    for c in p.read_back() {
        let id = c.before.as_ref().and_then(crate::ui::id_of);
        let id = id.unwrap_or_default();
        let hook = json!({"resource": resource(&c.addr), "id_key": "id", "id_value": id});
        let addr = &c.addr;
        out.push(line(
            "info",
            &format!("{addr}: Refreshing state... [id={id}]"),
            "refresh_start",
            json!({"hook": hook}),
        ));
        out.push(line(
            "info",
            &format!("{addr}: Refresh complete [id={id}]"),
            "refresh_complete",
            json!({"hook": hook}),
        ));
    }
    out.extend(ephemeral(true));
    out.extend(planned_changes(p));
    out.extend(p.actions.iter().map(planned_invocation));
    let n = p.counts();
    let mut said = format!(
        "Plan: {} to add, {} to change, {} to destroy.",
        n.add, n.change, n.destroy
    );
    let mut changes = json!({"add": n.add, "change": n.change, "import": n.import, "remove": n.destroy, "operation": "plan"});
    // Terraform 1.14's counts of actions, where the plan invokes any.
    if !p.actions.is_empty() {
        said.push_str(&format!(" Actions: {} to invoke.", p.actions.len()));
        changes["action_invocation"] = json!(p.actions.len());
        changes["action_fail"] = json!(0);
    }
    out.push(line(
        "info",
        &said,
        "change_summary",
        json!({ "changes": changes }),
    ));
    out.extend(outputs(&p.outputs, false));
    out
}

/// Terraform 1.14's `planned_action_invocation` for an action the plan
/// invokes.
fn planned_invocation(a: &crate::plan::ActionInvocation) -> String {
    let mut invocation = json!({
        "action_addr": crate::ui::action_addr(&a.addr, &a.type_name, &a.name),
    });
    match a.lifecycle() {
        None => invocation["action_trigger"] = json!({}),
        Some(l) => {
            invocation["lifecycle_trigger"] = json!({
                "triggering_resource": resource(&l.resource),
                "triggering_event": crate::plan::action_event_name(l.event),
                "action_trigger_block_index": l.block,
                "actions_list_index": l.index,
                "on_failure": crate::plan::action_on_failure_name(l.on_failure),
            });
        }
    }
    line(
        "info",
        &format!("planned action invocation: {}", a.addr),
        "planned_action_invocation",
        json!({ "invocation": invocation }),
    )
}

/// A `planned_change` for every change that does something.
pub fn planned_changes(p: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    for c in &p.changes {
        let Some(action) = action(c) else {
            continue;
        };
        let mut change = json!({"resource": resource(&c.addr), "action": action});
        if let Some(prev) = &c.previous_addr {
            change["previous_resource"] = resource(prev);
        }
        if let Some(why) = c.reason.and_then(reason) {
            change["reason"] = json!(why);
        }
        // The streamed view names an id only (Terraform's `Importing`).
        match &c.importing {
            Some(strata_provider::ImportBy::Id(id)) => change["importing"] = json!({"id": id}),
            Some(strata_provider::ImportBy::Identity(_)) => change["importing"] = json!({}),
            None => {}
        }
        let said = format!("{}: Plan to {action}", c.addr);
        out.push(line(
            "info",
            &said,
            "planned_change",
            json!({"change": change}),
        ));
    }
    out
}

/// The change's action in the UI's words; `None` for one doing nothing.
fn action(c: &ResourceChange) -> Option<&'static str> {
    Some(match c.action {
        Action::Create => "create",
        Action::Read => "read",
        Action::Update => "update",
        Action::DeleteThenCreate | Action::CreateThenDelete | Action::CreateThenForget => "replace",
        Action::Delete => "delete",
        Action::Forget => "remove",
        Action::NoOp if c.importing.is_some() => "import",
        Action::NoOp if c.previous_addr.is_some() => "move",
        Action::NoOp => return None,
    })
}

/// Why, in the UI's words.
fn reason(r: Reason) -> Option<&'static str> {
    Some(match r {
        Reason::Tainted => "tainted",
        Reason::ReplaceByRequest => "requested",
        Reason::CannotUpdate => "cannot_update",
        Reason::ReplaceTriggered => "replace_by_triggers",
        Reason::NoResourceConfig => "delete_because_no_resource_config",
        Reason::CountIndex => "delete_because_count_index",
        Reason::WrongRepetition => "delete_because_wrong_repetition",
        Reason::EachKey => "delete_because_each_key",
        Reason::EnabledFalse => "delete_because_enabled_false",
        Reason::NoModule => "delete_because_no_module",
        Reason::ReadConfigUnknown => "read_because_config_unknown",
        Reason::ReadDependencyPending => "read_because_dependency_pending",
        Reason::Lasting => "forget_because_cannot_delete",
        Reason::Destroy => return None,
    })
}

/// The `outputs` message: each output's action (a plan), or its value
/// (after an apply, `values`).
pub fn outputs(outputs: &[OutputChange], values: bool) -> Option<String> {
    if outputs.is_empty() {
        return None;
    }
    let mut m = Map::new();
    for o in outputs {
        let entry = match (values, &o.after) {
            (true, None) => continue,
            (true, Some(v)) => {
                let (plain, marked) = v.clone().unmark_deep();
                let ty = plain.ty();
                json!({
                    "sensitive": o.sensitive || marked,
                    "type": crate::lang::json::type_to_json(&ty),
                    "value": crate::lang::json::value_to_json(&plain, &ty).unwrap_or(Json::Null),
                })
            }
            (false, _) => json!({"sensitive": o.sensitive, "action": match o.action() {
                Action::Create => "create",
                Action::Delete => "delete",
                Action::Update => "update",
                _ => "noop",
            }}),
        };
        m.insert(o.name.clone(), entry);
    }
    let said = format!("Outputs: {}", m.len());
    Some(line("info", &said, "outputs", json!({"outputs": m})))
}

/// The apply's `change_summary`.
pub fn applied(
    (added, changed, destroyed, imported): (usize, usize, usize, usize),
    (invoked, failed): (usize, usize),
    mode: crate::plan::Mode,
) -> String {
    let (mut said, operation) = match mode {
        crate::plan::Mode::Destroy => (
            format!("Destroy complete! Resources: {destroyed} destroyed."),
            "destroy",
        ),
        _ => (
            format!("Apply complete! Resources: {added} added, {changed} changed, {destroyed} destroyed."),
            "apply",
        ),
    };
    let mut changes = json!({"add": added, "change": changed, "import": imported, "remove": destroyed, "operation": operation});
    if invoked > 0 {
        said.push_str(&match failed {
            0 => format!(" Actions: {invoked} invoked."),
            f => format!(" Actions: {invoked} invoked, {f} failed."),
        });
        changes["action_invocation"] = json!(invoked);
        changes["action_fail"] = json!(failed);
    }
    line(
        "info",
        &said,
        "change_summary",
        json!({ "changes": changes }),
    )
}
