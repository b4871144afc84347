//! The plan as people read it, laid out as Terraform lays it out so a
//! Terraform user reads it at once.

use super::diff::{resource_body, Unchanged};
use crate::lang::value::Value;
use crate::plan::{
    Action, ActionInvocation, EphemeralSaid, EphemeralStep, OutputChange, Plan, Reason,
    ResourceChange, Schemas,
};
use strata_provider::ImportBy;
use strata_state::model::{InstanceKey, Mode, ModulePath};

fn symbol(a: Action) -> &'static str {
    match a {
        Action::Create => "+",
        Action::Update => "~",
        Action::Delete => "-",
        Action::DeleteThenCreate => "-/+",
        Action::CreateThenDelete => "+/-",
        Action::Read => "<=",
        Action::Forget => ".",
        Action::CreateThenForget => "+/.",
        Action::NoOp => " ",
    }
}

const LEGEND: [(Action, &str); 6] = [
    (Action::Create, "create"),
    (Action::Update, "update in-place"),
    (Action::Delete, "destroy"),
    (
        Action::DeleteThenCreate,
        "destroy and then create replacement",
    ),
    (
        Action::CreateThenDelete,
        "create replacement and then destroy",
    ),
    (Action::Read, "read (data resources)"),
];

fn header(c: &ResourceChange) -> String {
    let mut addr = c.addr.to_string();
    if let Some(d) = &c.deposed {
        addr.push_str(&format!(" (deposed object {d})"));
    }
    let what = match (c.action, c.reason) {
        (Action::Create, _) => "will be created",
        (Action::Update, _) => "will be updated in-place",
        (Action::Delete, _) => "will be destroyed",
        (Action::Read, _) => "will be read during apply",
        (a, Some(Reason::ReplaceTriggered)) if a.is_replace() => {
            "will be replaced due to changes in replace_triggered_by"
        }
        (a, Some(Reason::Tainted)) if a.is_replace() => "is tainted, so must be replaced",
        (a, Some(Reason::ReplaceByRequest)) if a.is_replace() => "will be replaced, as requested",
        (a, _) if a.is_replace() => "must be replaced",
        _ => "",
    };
    if c.action == Action::CreateThenForget {
        return format!(" # {addr} must be replaced, but the existing object will not be destroyed\n # (destroy = false is set in the configuration)\n");
    }
    if c.action == Action::Forget {
        let why = match c.reason {
            Some(Reason::Lasting) => "its provider cannot delete it: see the warning below",
            _ => "destroy = false is set in the configuration",
        };
        return format!(" # {addr} will no longer be managed by strata, but will not be destroyed\n # ({why})\n");
    }
    if c.action == Action::NoOp && c.importing.is_some() {
        return format!("  # {addr} will be imported\n");
    }
    if c.action == Action::NoOp {
        let from = c
            .previous_addr
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        return format!("  # {from} has moved to {addr}\n");
    }
    let mut out = format!("  # {addr} {what}\n");
    if let Some(by) = &c.importing {
        // Terraform names an id; an identity is not shown here.
        out.push_str(&match by {
            ImportBy::Id(id) => format!(
                "  # (imported from {})\n",
                serde_json::Value::String(id.clone())
            ),
            ImportBy::Identity(_) => "  # (will be imported first)\n".to_string(),
        });
    }
    if let Some(prev) = &c.previous_addr {
        out.push_str(&format!("  # (moved from {prev})\n"));
    }
    let because = match (c.reason, &c.addr.key) {
        (Some(Reason::NoResourceConfig), _) => {
            Some(format!("{} is not in configuration", c.config_addr()))
        }
        (Some(Reason::WrongRepetition), Some(InstanceKey::Int(_))) => {
            Some("resource does not use count".to_string())
        }
        (Some(Reason::WrongRepetition), _) => Some("resource does not use for_each".to_string()),
        (Some(Reason::CountIndex), Some(InstanceKey::Int(i))) => {
            Some(format!("index [{i}] is out of range for count"))
        }
        (Some(Reason::EachKey), Some(InstanceKey::Str(k))) => Some(format!(
            "key [{}] is not in for_each map",
            serde_json::Value::String(k.clone())
        )),
        (Some(Reason::ReadConfigUnknown), _) => {
            Some("config refers to values not yet known".to_string())
        }
        (Some(Reason::ReadDependencyPending), _) => {
            Some("depends on a resource or a module with changes pending".to_string())
        }
        (Some(Reason::EnabledFalse), _) => Some("lifecycle.enabled is false".to_string()),
        (Some(Reason::NoModule), _) => {
            Some(format!("{} is not in configuration", c.addr.id.module))
        }
        _ => None,
    };
    if let (Some(b), None) = (because, &c.deposed) {
        if c.action == Action::Read {
            out.push_str(&format!("  # ({b})\n"));
        } else {
            out.push_str(&format!("  # (because {b})\n"));
        }
    }
    out
}

/// One resource instance's change: comment lines and the block.
pub fn resource_change(c: &ResourceChange, schemas: &Schemas) -> String {
    let mut out = header(c);
    let schema = schemas.of(c);
    let kind = if c.addr.id.mode == Mode::Data {
        "data"
    } else {
        "resource"
    };
    // Terraform sets the forget marks one column left of the others.
    let width = match c.action {
        Action::Forget => 2,
        Action::CreateThenForget => 4,
        _ => 3,
    };
    out.push_str(&format!(
        "{:>width$} {kind} \"{}\" \"{}\" ",
        symbol(c.action),
        c.addr.id.type_name,
        c.addr.id.name
    ));
    let (before, after) = match c.action {
        Action::Create | Action::Read => (None, c.after.as_ref()),
        Action::Delete => (c.before.as_ref(), None),
        Action::Forget => (c.before.as_ref(), c.before.as_ref()),
        _ => (c.before.as_ref(), c.after.as_ref()),
    };
    // An object imported is shown whole, as Terraform shows it.
    let unchanged = match c.importing {
        Some(_) => Unchanged::Shown,
        None => Unchanged::Hidden,
    };
    resource_body(
        before,
        after,
        schema,
        (&c.replace_paths, unchanged),
        2,
        &mut out,
    );
    out.push('\n');
    out
}

fn output_change(o: &OutputChange, width: usize) -> String {
    let sym = match o.action() {
        Action::Create => '+',
        Action::Delete => '-',
        _ => '~',
    };
    let mut out = format!("  {sym} {:width$} = ", o.name);
    let mark = |v: Option<&crate::lang::value::Value>| v.map(|v| v.clone().mark_if(o.sensitive));
    super::diff::output_value(
        mark(o.before.as_ref()).as_ref(),
        mark(o.after.as_ref()).as_ref(),
        2,
        &mut out,
    );
    out.push('\n');
    out
}

/// What refresh found changed outside strata, as Terraform reports it
/// before the plan.
fn drift(p: &Plan) -> String {
    if p.drift.is_empty() {
        return String::new();
    }
    if p.mode.is_refresh_only() {
        let mut out = drift_section(&p.drift, &p.schemas, "");
        out.push_str("\nThis is a refresh-only plan, so strata will not take any actions to undo\nthese. If you were expecting these changes then you can apply this plan to\nrecord the updated values in the strata state without changing any remote\nobjects.\n");
        return out;
    }
    let mut out = drift_section(&p.drift, &p.schemas, " which may have affected this plan");
    out.push_str("\nUnless you have made equivalent changes to your configuration, or ignored the\nrelevant attributes using ignore_changes, the following plan may include\nactions to undo or respond to these changes.\n\n─────────────────────────────────────────────────────────────────────────────\n\n");
    out
}

/// Each object changed or deleted outside strata, with its diff; `why`
/// ends the introduction's sentence.
pub fn drift_section(drift: &[ResourceChange], schemas: &Schemas, why: &str) -> String {
    let mut out = format!("\nNote: Objects have changed outside of strata\n\nstrata detected the following changes made outside of strata since the\nlast \"strata apply\"{why}:\n\n");
    for c in drift {
        let what = if c.after.is_some() {
            "has changed"
        } else {
            "has been deleted"
        };
        out.push_str(&format!("  # {} {what}\n", c.addr));
        let mut block = resource_change(c, schemas);
        // resource_change's own header line is the plan's; drop it.
        if let Some(i) = block.find('\n') {
            block.drain(..=i);
        }
        out.push_str(&block);
        out.push('\n');
    }
    out
}

/// The line between a plan and what is said after it.
pub const RULE: &str =
    "─────────────────────────────────────────────────────────────────────────────";

/// What a plan says before it is shown, as Terraform starts one: a
/// `Refreshing state...` line for each object read back (with `refresh`),
/// an imported one's `Preparing import...` line before its own, a data
/// source read while planning as `Reading...` and `Read complete`; in
/// address order; then a blank line.
pub fn refreshing(p: &Plan, refresh: bool) -> String {
    let id_of = |v: Option<&crate::lang::value::Value>| {
        v.and_then(crate::ui::id_of)
            .map(|i| format!(" [id={i}]"))
            .unwrap_or_default()
    };
    let read = p.read_back().filter(|_| refresh).map(|c| {
        let id = id_of(c.before.as_ref());
        (
            c.addr.to_string(),
            format!("{}: Refreshing state...{id}\n", c.addr),
        )
    });
    let imported = p.changes.iter().filter_map(|c| {
        let lines = match c.importing.as_ref()? {
            ImportBy::Id(id) => format!(
                "{0}: Preparing import... [id={id}]\n{0}: Refreshing state... [id={id}]\n",
                c.addr
            ),
            ImportBy::Identity(identity) => format!(
                "{0}: Preparing import... [identity={1}]\n{0}: Refreshing state...{2}\n",
                c.addr,
                crate::plan::identity_text(identity),
                id_of(c.before.as_ref()),
            ),
        };
        Some((c.addr.to_string(), lines))
    });
    let data = p
        .changes
        .iter()
        .filter(|c| c.addr.id.mode == Mode::Data && c.action == Action::NoOp && c.after.is_some())
        .map(|c| {
            let id = id_of(c.after.as_ref());
            let lines = format!("{0}: Reading...\n{0}: Read complete after 0s{id}\n", c.addr);
            (c.addr.to_string(), lines)
        });
    let mut lines: Vec<(String, String)> = read.chain(imported).chain(data).collect();
    lines.sort();
    // Ephemeral resources are opened before what uses them is read, and
    // closed after: their lines around the others, in the walk's order.
    let (closing, opening): (Vec<_>, Vec<_>) = p.ephemeral.iter().partition(|s| {
        matches!(
            s.step,
            EphemeralStep::Closing | EphemeralStep::Closed { .. }
        )
    });
    let said = |s: &&EphemeralSaid| format!("{}\n", s.step.line(&s.addr));
    opening
        .iter()
        .map(said)
        .chain(lines.into_iter().map(|(_, l)| l))
        .chain(closing.iter().map(said))
        .chain(["\n".to_string()])
        .collect()
}

/// The whole plan, as `strata plan` prints it.
pub fn plan(p: &Plan) -> String {
    let mut out = drift(p);
    let changes: Vec<&ResourceChange> = p
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp || c.previous_addr.is_some() || c.importing.is_some())
        .collect();
    let outputs: Vec<&OutputChange> = p
        .outputs
        .iter()
        .filter(|o| o.action() != Action::NoOp)
        .collect();
    if changes.is_empty() && outputs.is_empty() && p.actions.is_empty() {
        out.push_str(&nothing_to_do(p));
        return out;
    }
    out.push_str(&legend(&changes));
    if !changes.is_empty() || !p.actions.is_empty() {
        out.push_str(&actions(p, &changes));
    }
    out.push_str(&invocations(p));
    out.push_str(&super::placement::human(&p.placements));
    out.push_str(&super::placement::dispatch_human(&p.dispatch));
    out.push_str(&super::cost::human(&p.cost));
    out.push_str(&forgotten(&changes));
    if !outputs.is_empty() {
        // After what came before it, an empty line; first, none (the
        // plan's opening line is there).
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&output_changes(p, &outputs));
        // Moves and imports alone change no infrastructure either.
        if changes.iter().all(|c| c.action == Action::NoOp) {
            out.push_str("\nYou can apply this plan to save these new output values to the strata\nstate, without changing any real infrastructure.\n");
        }
    }
    out
}

/// What a plan that changes nothing says: why, by its mode, and where
/// its placed pools stand.
fn nothing_to_do(p: &Plan) -> String {
    if p.errored {
        return "Planning failed. strata encountered an error while generating this plan.\n\n"
            .into();
    }
    if p.mode.is_refresh_only() {
        return match p.drift.is_empty() {
            true => "No changes. Your infrastructure still matches the configuration.\n\nstrata has checked that the real remote objects still match the result of\nyour most recent changes, and found no differences.\n",
            false => "",
        }
        .into();
    }
    if p.mode.is_destroy() {
        return "No changes. No objects need to be destroyed.\n\nEither you have not created any objects yet or the existing objects were\nalready deleted outside of strata.\n".into();
    }
    let mut out = String::new();
    if p.unplaced().next().is_some() {
        // Not "No changes": the nodes the spec wants run nowhere.
        for d in p.unplaced() {
            out.push_str(&format!(
                "Node pool {} wants {} node(s) and has no place with capacity: the configuration is not met.\n",
                d.pool, d.nodes
            ));
        }
        out.push('\n');
    } else {
        out.push_str("No changes. Your infrastructure matches the configuration.\n\n");
        out.push_str("strata has compared your real infrastructure against your configuration\nand found no differences, so no changes are needed.\n");
    }
    out.push_str(&super::placement::human(&p.placements));
    out.push_str(&super::placement::dispatch_human(&p.dispatch));
    out.push_str(&super::cost::human(&p.cost));
    out
}

/// The symbols of the actions the plan takes.
fn legend(changes: &[&ResourceChange]) -> String {
    let actions: Vec<Action> = changes.iter().map(|c| c.action).collect();
    if actions.iter().all(|a| *a == Action::NoOp) {
        return String::new();
    }
    let mut out = String::from("strata used the selected providers to generate the following execution\nplan. Resource actions are indicated with the following symbols:\n");
    for (a, text) in LEGEND {
        if actions.contains(&a) {
            out.push_str(&format!("{:>3} {text}\n", symbol(a)));
        }
    }
    out.push('\n');
    out
}

/// Each change, then the counts.
fn actions(p: &Plan, changes: &[&ResourceChange]) -> String {
    let mut out = String::from(match p.errored {
        true => "strata planned the following actions, but then encountered a problem:\n\n",
        false => "strata will perform the following actions:\n\n",
    });
    for c in changes {
        let mut shown = resource_change(c, &p.schemas);
        if p.generated_config.contains_key(&c.addr.to_string()) {
            // After the "will be imported" line, as Terraform says it.
            let at = shown.find('\n').map_or(shown.len(), |i| i + 1);
            shown.insert_str(at, "  # (config will be generated)\n");
        }
        out.push_str(&shown);
        let actions = triggered(p, c);
        if !actions.is_empty() {
            // Terraform ends a diff with actions on a blank line of its
            // own, before the one that parts each change.
            out.push_str(&actions);
            out.push('\n');
        }
        out.push('\n');
    }
    let n = p.counts();
    out.push_str("Plan: ");
    if n.import > 0 {
        out.push_str(&format!("{} to import, ", n.import));
    }
    out.push_str(&format!(
        "{} to add, {} to change, {} to destroy.",
        n.add, n.change, n.destroy
    ));
    if !p.actions.is_empty() {
        out.push_str(&format!(" Actions: {} to invoke.", p.actions.len()));
    }
    out.push('\n');
    out
}

/// The actions the plan invokes from the command line, as Terraform
/// lists them.
fn invocations(p: &Plan) -> String {
    let cli: Vec<&ActionInvocation> = p
        .actions
        .iter()
        .filter(|a| a.lifecycle().is_none())
        .collect();
    if cli.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nstrata will invoke the following action(s):\n\n");
    for a in cli {
        out.push_str(&invocation(a));
    }
    out
}

/// The actions `c`'s change triggers, inside its diff as Terraform 1.14
/// shows them: those before it, then those after, each in its
/// `action_trigger` block's and list's order.
fn triggered(p: &Plan, c: &ResourceChange) -> String {
    let mut mine: Vec<(&ActionInvocation, &crate::plan::LifecycleTrigger)> = p
        .actions
        .iter()
        .filter_map(|a| Some((a, a.lifecycle().filter(|l| l.resource == c.addr)?)))
        .collect();
    mine.sort_by_key(|(_, l)| (l.block, l.index));
    let mut out = String::new();
    for (before, when) in [(true, "before"), (false, "after")] {
        let these: Vec<_> = mine
            .iter()
            .filter(|(_, l)| crate::plan::action_is_before(l.event) == before)
            .collect();
        if these.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n    # Actions to be invoked {when} this change in order:\n"
        ));
        for (a, _) in these {
            out.push_str(&invocation(a));
        }
    }
    out
}

/// One invocation: its address, its block and its configuration's set
/// arguments, aligned.
fn invocation(a: &ActionInvocation) -> String {
    let mut out = format!("    # {}\n", a.addr);
    out.push_str(&format!("    action {:?} {:?} {{\n", a.type_name, a.name));
    let set: Vec<(&String, &Value)> = match a.config.unmarked() {
        Value::Object(m) => m.iter().filter(|(_, v)| !v.is_null()).collect(),
        _ => Vec::new(),
    };
    if !set.is_empty() {
        let width = set.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        out.push_str("        config {\n");
        for (k, v) in set {
            let shown = match v {
                Value::Sensitive(_) => "(sensitive value)".to_string(),
                v if !v.is_known() => "(known after apply)".to_string(),
                v => crate::lang::display::show(v),
            };
            out.push_str(&format!("            {k:<width$} = {shown}\n"));
        }
        out.push_str("        }\n");
    }
    out.push_str("    }\n");
    out
}

/// The warning for objects `removed` blocks forget.
fn forgotten(changes: &[&ResourceChange]) -> String {
    let forgotten: Vec<String> = changes
        .iter()
        .filter(|c| matches!(c.action, Action::Forget | Action::CreateThenForget))
        .map(|c| format!(" - {}\n", c.addr))
        .collect();
    if forgotten.is_empty() {
        return String::new();
    }
    format!("\nWarning: Some objects will no longer be managed by strata\n\nIf you apply this plan, strata will discard its tracking information for\nthe following objects, but it will not delete them:\n{}\nAfter applying this plan, strata will no longer manage these objects. You\nwill need to import them into strata to manage them again.\n", forgotten.concat())
}

/// "Changes to Outputs:", aligned over every output, changed or not, as
/// Terraform aligns them.
fn output_changes(p: &Plan, outputs: &[&OutputChange]) -> String {
    let width = p
        .outputs
        .iter()
        .map(|o| o.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::from("Changes to Outputs:\n");
    for o in outputs {
        out.push_str(&output_change(o, width));
    }
    out
}

/// One object of a state as `terraform state show` prints it: its
/// non-null attributes, aligned, values laid out four spaces a level; an
/// attribute of any type as its JSON (a map's keys bare, as an object's),
/// as Terraform shows one.
pub fn state_object(c: &ResourceChange, schemas: &Schemas) -> String {
    let kind = match c.addr.id.mode {
        Mode::Data => "data",
        Mode::Managed => "resource",
        Mode::Ephemeral => "ephemeral",
    };
    let status = match (&c.deposed, c.tainted) {
        (Some(key), _) => format!(" (deposed object {key})"),
        (None, true) => " (tainted)".to_string(),
        (None, false) => String::new(),
    };
    let mut out = format!(
        "# {}:{status}\n{kind} \"{}\" \"{}\" {{\n",
        c.addr, c.addr.id.type_name, c.addr.id.name
    );
    let value = c.after.as_ref().or(c.before.as_ref());
    let attrs: Vec<(&String, &crate::lang::value::Value)> = value
        .and_then(|v| v.entries())
        .map(|m| m.iter().filter(|(_, v)| !v.is_null()).collect())
        .unwrap_or_default();
    let width = attrs
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    for (k, v) in attrs {
        let shown = match super::diff::of_any_type(schemas.of(c), k) {
            true => crate::lang::display::show_wide(&super::diff::as_object(v), 1),
            false => crate::lang::display::show_wide(v, 1),
        };
        out.push_str(&format!("    {k:width$} = {shown}\n"));
    }
    out.push_str("}\n");
    out
}

/// A state as `terraform show` prints it: every object, then the outputs
/// (by their types: an object's null attributes not shown); what it says
/// when there is no state (`existed` false) or nothing in it.
pub fn state(
    objects: &[ResourceChange],
    schemas: &Schemas,
    outputs: &[OutputChange],
    existed: bool,
) -> String {
    if !existed {
        return "No state.\n".into();
    }
    if objects.is_empty() && outputs.is_empty() {
        return "The state file is empty. No resources are represented.\n".into();
    }
    // As Terraform lays a state out: the root module's objects first, then
    // each module instance's, depth first.
    // Each instance's current object, then its deposed ones.
    let mut sorted: Vec<&ResourceChange> = objects.iter().collect();
    sorted.sort_by_key(|c| {
        (
            !c.addr.id.module.is_root(),
            c.addr.id.module.to_string(),
            c.addr.to_string(),
            c.deposed.clone(),
        )
    });
    let with_objects: std::collections::HashSet<&ModulePath> =
        sorted.iter().map(|c| &c.addr.id.module).collect();
    let mut out = String::new();
    let mut last: Option<&ModulePath> = None;
    let mut first = true;
    for c in sorted {
        let module = &c.addr.id.module;
        if last != Some(module) {
            // Terraform's renderer walks the module tree with a flag
            // "nothing shown yet" that each module inherits from its
            // caller as the caller's own objects left it: the blank lines
            // before an object follow from it, oddities included (two
            // modules under an empty root run together).
            first = nothing_shown_before(module, &with_objects);
            if !first {
                out.push('\n');
            }
            last = Some(module);
        }
        if !first {
            out.push('\n');
        }
        first = false;
        out.push_str(&state_object(c, schemas));
    }
    if !outputs.is_empty() {
        out.push_str("\n\nOutputs:\n\n");
        for o in outputs {
            let shown = match (&o.after, o.sensitive) {
                (_, true) => "(sensitive value)".to_string(),
                (Some(v), false) => crate::lang::display::show_wide(&set_attributes(v), 0),
                (None, false) => "null".to_string(),
            };
            out.push_str(&format!("{} = {shown}\n", o.name));
        }
    }
    out
}

/// `v` without the null attributes of its objects, at any depth (a map's
/// null elements stay: they are elements).
fn set_attributes(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !x.unmarked().is_null())
                .map(|(k, x)| (k.clone(), set_attributes(x)))
                .collect(),
        ),
        Value::Map(t, m) => Value::Map(
            t.clone(),
            m.iter()
                .map(|(k, x)| (k.clone(), set_attributes(x)))
                .collect(),
        ),
        Value::List(t, xs) => Value::List(t.clone(), xs.iter().map(set_attributes).collect()),
        Value::Tuple(xs) => Value::Tuple(xs.iter().map(set_attributes).collect()),
        Value::Sensitive(x) => Value::Sensitive(Box::new(set_attributes(x))),
        other => other.clone(),
    }
}

/// Whether Terraform's state renderer enters module instance `module`
/// with nothing shown yet: true at the root, and in a module whose
/// callers, up to the root, hold no objects of their own.
fn nothing_shown_before(
    module: &ModulePath,
    with_objects: &std::collections::HashSet<&ModulePath>,
) -> bool {
    let mut at = module.split_last().map(|(parent, _)| parent);
    while let Some(parent) = at {
        if with_objects.contains(&parent) {
            return false;
        }
        at = parent.split_last().map(|(p, _)| p);
    }
    true
}
