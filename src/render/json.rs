//! The plan as Terraform's plan JSON (format 1.2, what `terraform show
//! -json PLANFILE` prints), so policy and cost tools that read Terraform
//! plans read strata's.

use crate::lang::json::{mask, plain_json, type_to_json};
use crate::lang::value::Value;
use crate::plan::{Action, OutputChange, Plan, ResourceChange};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use strata_provider::ImportBy;
use strata_state::model::{InstanceKey, Mode, ModulePath};

/// A value as the plan JSON shows it, with its sensitive parts left out:
/// `null` where the `*_sensitive` masks say `true`. (Terraform prints them
/// in clear; strata's renderings never show a secret.) `known_only` leaves
/// unknown attributes out, as Terraform's `after` does.
fn shown(v: &Value, known_only: bool) -> Json {
    if v.is_sensitive() {
        return Json::Null;
    }
    match v.unmarked() {
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            Json::Array(vs.iter().map(|x| shown(x, known_only)).collect())
        }
        Value::Map(_, m) | Value::Object(m) => Json::Object(
            m.iter()
                .filter(|(_, x)| !known_only || x.is_known())
                .map(|(k, x)| (k.clone(), shown(x, known_only)))
                .collect(),
        ),
        other => plain_json(other),
    }
}

fn unknown_mask(v: Option<&Value>) -> Json {
    match v {
        Some(v) => mask(v, &|x| !x.is_known()),
        None => Json::Bool(false),
    }
}

fn sensitive_mask(v: Option<&Value>) -> Json {
    match v {
        Some(v) => shaped_unknowns(mask(v, &Value::is_sensitive), v),
        None => Json::Bool(false),
    }
}

/// Terraform gives an unknown collection an empty collection in the
/// sensitivity mask (`"output": {}`), not `false`.
fn shaped_unknowns(m: Json, v: &Value) -> Json {
    use crate::lang::types::Type;
    match (m, v.unmarked()) {
        (Json::Bool(false), Value::Unknown(t)) => match t {
            Type::Object(_) | Type::Map(_) => json!({}),
            Type::List(_) | Type::Set(_) | Type::Tuple(_) => json!([]),
            _ => Json::Bool(false),
        },
        (Json::Object(mut o), Value::Object(vs) | Value::Map(_, vs)) => {
            for (k, x) in vs {
                let inner = shaped_unknowns(o.remove(k).unwrap_or(Json::Bool(false)), x);
                if inner != Json::Bool(false) {
                    o.insert(k.clone(), inner);
                }
            }
            Json::Object(o)
        }
        (Json::Array(a), Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs)) => Json::Array(
            a.into_iter()
                .zip(vs)
                .map(|(m, x)| shaped_unknowns(m, x))
                .collect(),
        ),
        (m, _) => m,
    }
}

fn identity(c: &ResourceChange, out: &mut Map<String, Json>) {
    out.insert("address".into(), json!(c.addr.to_string()));
    if !c.addr.id.module.is_root() {
        out.insert("module_address".into(), json!(c.addr.id.module.to_string()));
    }
    out.insert(
        "mode".into(),
        json!(if c.addr.id.mode == Mode::Data {
            "data"
        } else {
            "managed"
        }),
    );
    out.insert("type".into(), json!(c.addr.id.type_name));
    out.insert("name".into(), json!(c.addr.id.name));
    match &c.addr.key {
        Some(InstanceKey::Int(i)) => {
            out.insert("index".into(), json!(i));
        }
        Some(InstanceKey::Str(s)) => {
            out.insert("index".into(), json!(s));
        }
        None => {}
    }
    out.insert(
        "provider_name".into(),
        json!(strata_state::provider_of_config(&c.provider)),
    );
}

pub(crate) fn resource_change(c: &ResourceChange) -> Json {
    let mut o = Map::new();
    o.insert("address".into(), json!(c.addr.to_string()));
    if let Some(p) = &c.previous_addr {
        o.insert("previous_address".into(), json!(p.to_string()));
    }
    let mut id = Map::new();
    identity(c, &mut id);
    id.remove("address");
    o.extend(id);
    if let Some(d) = &c.deposed {
        o.insert("deposed".into(), json!(d));
    }
    let (before, after) = (c.before.as_ref(), c.after.as_ref());
    let mut change = Map::new();
    change.insert("actions".into(), json!(c.action.json_actions()));
    change.insert(
        "before".into(),
        before.map(|b| shown(b, false)).unwrap_or(Json::Null),
    );
    change.insert(
        "after".into(),
        after.map(|a| shown(a, true)).unwrap_or(Json::Null),
    );
    change.insert(
        "after_unknown".into(),
        // A wholly known object has nothing unknown to mark: `{}`, as
        // Terraform writes it, rather than the shape of its collections.
        match after {
            Some(a) if !a.is_wholly_known() => unknown_mask(Some(a)),
            _ => json!({}),
        },
    );
    change.insert(
        "before_sensitive".into(),
        match before {
            Some(b) => sensitive_mask(Some(b)),
            None => Json::Bool(false),
        },
    );
    change.insert("after_sensitive".into(), sensitive_mask(after));
    if !c.replace_paths.is_empty() {
        change.insert("replace_paths".into(), json!(c.replace_paths));
    }
    if let Some(by) = &c.importing {
        change.insert("importing".into(), importing(by));
    }
    for (key, kept) in [
        ("before_identity", &c.kept_before),
        ("after_identity", &c.kept_after),
    ] {
        if let Some(identity) = &kept.identity {
            change.insert(key.into(), identity.value.clone());
        }
    }
    o.insert("change".into(), Json::Object(change));
    if let Some(r) = c.reason {
        if c.action != Action::NoOp && r != crate::plan::Reason::Destroy {
            o.insert("action_reason".into(), json!(r.json()));
        }
    }
    Json::Object(o)
}

/// A mask with nothing in it is `false` for an output, as Terraform has it.
fn collapse(m: Json) -> Json {
    fn any_true(m: &Json) -> bool {
        match m {
            Json::Bool(b) => *b,
            Json::Array(a) => a.iter().any(any_true),
            Json::Object(o) => o.values().any(any_true),
            _ => false,
        }
    }
    if any_true(&m) {
        m
    } else {
        Json::Bool(false)
    }
}

fn output_change(o: &OutputChange) -> Json {
    let mark = |v: &Value| v.clone().mark_if(o.sensitive);
    let (before, after) = (o.before.as_ref().map(mark), o.after.as_ref().map(mark));
    let sens = |v: &Option<Value>| match v {
        Some(v) if v.is_sensitive() => Json::Bool(true),
        Some(v) => collapse(mask(v, &Value::is_sensitive)),
        None => Json::Bool(o.sensitive),
    };
    let mut change = json!({
        "actions": o.action().json_actions(),
        "before": before.as_ref().map(|b| shown(b, false)).unwrap_or(Json::Null),
        "after": after.as_ref().map(|a| shown(a, true)).unwrap_or(Json::Null),
        "after_unknown": after.as_ref().map(|a| collapse(unknown_mask(Some(a)))).unwrap_or(Json::Bool(false)),
        "before_sensitive": sens(&before),
        "after_sensitive": sens(&after),
    });
    // A value not known until apply has no `after` at all in Terraform's
    // plan JSON (its `after_unknown` says so).
    if after.as_ref().is_some_and(|a| !a.is_known()) {
        if let Some(m) = change.as_object_mut() {
            m.remove("after");
        }
    }
    change
}

/// Resources grouped into `root_module` / `child_modules` as Terraform
/// nests them.
fn module_tree(items: Vec<(ModulePath, Json)>) -> Json {
    let mut by_module: BTreeMap<ModulePath, Vec<Json>> = BTreeMap::new();
    for (m, j) in items {
        by_module.entry(m).or_default().push(j);
    }
    let root = by_module.remove(&ModulePath::root()).unwrap_or_default();
    let mut out = Map::new();
    out.insert("resources".into(), Json::Array(root));
    if !by_module.is_empty() {
        out.insert(
            "child_modules".into(),
            Json::Array(
                by_module
                    .into_iter()
                    .map(|(address, resources)| {
                        json!({"address": address.to_string(), "resources": resources})
                    })
                    .collect(),
            ),
        );
    }
    Json::Object(out)
}

/// Which of a change's objects a values entry shows.
#[derive(Clone, Copy, PartialEq)]
enum Object {
    /// What the plan makes.
    Planned,
    /// What the state holds: with what it depends on, whether it is
    /// tainted, and its deposed key.
    Prior,
}

fn resource_values(c: &ResourceChange, v: &Value, object: Object) -> Json {
    let mut o = Map::new();
    identity(c, &mut o);
    o.insert("schema_version".into(), json!(c.schema_version));
    o.insert("values".into(), shown(v, true));
    o.insert("sensitive_values".into(), sensitive_mask(Some(v)));
    if object == Object::Prior {
        if !c.dependencies.is_empty() {
            let deps: Vec<String> = c.dependencies.iter().map(ToString::to_string).collect();
            o.insert("depends_on".into(), json!(deps));
        }
        if c.tainted {
            o.insert("tainted".into(), json!(true));
        }
        if let Some(d) = &c.deposed {
            o.insert("deposed_key".into(), json!(d));
        }
    }
    // Terraform 1.12's resource identity, where the object has one.
    let kept = match object {
        Object::Prior => &c.kept_before,
        Object::Planned => &c.kept_after,
    };
    if let Some(identity) = &kept.identity {
        o.insert("identity_schema_version".into(), json!(identity.version));
        o.insert("identity".into(), identity.value.clone());
    }
    Json::Object(o)
}

/// `state show -json` (Terraform 1.15, hashicorp/terraform#38341): one
/// instance as `show -json` writes a resource, in a document that has
/// the same shape when it could not be shown (its fields empty) and
/// carries the diagnostics.
pub fn state_object(c: Option<&ResourceChange>, diagnostics: &[Json]) -> String {
    let resource = match c.and_then(|c| Some((c, c.before.as_ref()?))) {
        Some((c, v)) => resource_values(c, v, Object::Planned),
        None => json!({
            "address": "",
            "mode": "",
            "type": "",
            "name": "",
            "provider_name": "",
            "schema_version": 0,
            "values": null,
            "sensitive_values": null,
        }),
    };
    let doc = json!({"format_version": "1.0", "resource": resource, "diagnostics": diagnostics});
    format!(
        "{}\n",
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    )
}

/// Outputs as values. The prior state's are the refreshed ones, which
/// (as Terraform does) are evaluated again: the new value where known.
fn outputs_values(outputs: &[OutputChange], after: bool) -> Json {
    let mut m = Map::new();
    for o in outputs {
        let v = match (&o.before, &o.after) {
            (Some(_), Some(a)) if !after && a.is_wholly_known() => &o.after,
            _ if after => &o.after,
            _ => &o.before,
        };
        if let Some(v) = v {
            if !v.is_wholly_known() && !after {
                continue;
            }
            let mut e = Map::new();
            e.insert("sensitive".into(), json!(o.sensitive));
            if v.is_wholly_known() {
                e.insert("value".into(), shown(v, false));
                e.insert("type".into(), type_to_json(&v.clone().unmark_deep().0.ty()));
            }
            m.insert(o.name.clone(), Json::Object(e));
        }
    }
    Json::Object(m)
}

/// A state as `terraform show -json` writes one: its objects and outputs
/// as values (`{"format_version":"1.0"}` alone when there is no state).
/// `language` is the Terraform language version strata implements.
pub fn state(
    objects: &[ResourceChange],
    outputs: &[OutputChange],
    exists: bool,
    language: &str,
) -> String {
    if !exists {
        return "{\"format_version\":\"1.0\"}\n".into();
    }
    // Each instance's current object, then its deposed ones, as
    // Terraform lists them.
    let mut sorted: Vec<&ResourceChange> = objects.iter().collect();
    sorted.sort_by_key(|c| (c.addr.to_string(), c.deposed.clone()));
    let resources: Vec<(ModulePath, Json)> = sorted
        .into_iter()
        .filter_map(|c| {
            Some((
                c.addr.id.module.clone(),
                resource_values(c, c.after.as_ref()?, Object::Prior),
            ))
        })
        .collect();
    let doc = json!({
        "format_version": "1.0",
        "terraform_version": language,
        "values": {
            "outputs": outputs_values(outputs, true),
            "root_module": module_tree(resources),
        },
    });
    format!("{doc}\n")
}

/// Terraform's plan JSON; `language` as for [`state`].
pub fn plan(p: &Plan, language: &str) -> String {
    let (planned, prior) = (objects(p, Object::Planned), objects(p, Object::Prior));
    let mut out = Map::new();
    out.insert("format_version".into(), json!("1.2"));
    // The language version strata implements, which tools reading plan
    // JSON look at as they would at Terraform's.
    out.insert("terraform_version".into(), json!(language));
    out.insert("strata_version".into(), json!(env!("CARGO_PKG_VERSION")));
    if !p.variables.is_empty() {
        out.insert("variables".into(), variables(p));
    }
    out.insert(
        "planned_values".into(),
        json!({"outputs": outputs_values(&p.outputs, true), "root_module": module_tree(planned)}),
    );
    if !p.drift.is_empty() {
        out.insert(
            "resource_drift".into(),
            Json::Array(p.drift.iter().map(resource_change).collect()),
        );
    }
    // Data sources read while planning are values, not changes. Both
    // lists are left out when empty, as Terraform leaves them.
    let changes: Vec<Json> = p
        .changes
        .iter()
        .filter(|c| !(c.addr.id.mode == Mode::Data && c.action == Action::NoOp))
        .map(resource_change)
        .collect();
    if !changes.is_empty() {
        out.insert("resource_changes".into(), Json::Array(changes));
    }
    if !p.relevant_attributes.is_empty() {
        out.insert("relevant_attributes".into(), json!(p.relevant_attributes));
    }
    if !p.outputs.is_empty() {
        let changes = p.outputs.iter().map(|o| (o.name.clone(), output_change(o)));
        out.insert("output_changes".into(), Json::Object(changes.collect()));
    }
    if !p.actions.is_empty() {
        let mut all: Vec<&crate::plan::ActionInvocation> = p.actions.iter().collect();
        // Terraform's order: the command line's first, then by the
        // triggering resource, its block, the list.
        all.sort_by_key(|a| {
            a.lifecycle()
                .map(|l| (l.resource.to_string(), l.block, l.index))
        });
        let invoked = all.into_iter().map(invocation_json);
        out.insert("action_invocations".into(), Json::Array(invoked.collect()));
    }
    out.insert(
        "prior_state".into(),
        json!({
            "format_version": "1.0",
            "values": {"outputs": outputs_values(&p.outputs, false), "root_module": module_tree(prior)},
        }),
    );
    if !p.configuration.is_null() {
        out.insert("configuration".into(), configuration(p));
    }
    strata_keys(p, &mut out);
    out.insert("timestamp".into(), json!(&p.timestamp));
    // A narrowed plan leaves changes for a later one.
    out.insert("applyable".into(), json!(p.applyable()));
    out.insert("complete".into(), json!(p.scope.is_everything()));
    out.insert("errored".into(), json!(p.errored));
    let mut text = serde_json::to_string(&Json::Object(out)).unwrap_or_default();
    text.push('\n');
    text
}

/// The objects after the plan (`Planned`), or before it (`Prior`, with
/// what they depend on), by their module.
fn objects(p: &Plan, object: Object) -> Vec<(ModulePath, Json)> {
    p.changes
        .iter()
        .filter(|c| c.deposed.is_none())
        .filter_map(|c| {
            let v = match object {
                Object::Planned => c.after.as_ref(),
                Object::Prior => c.before.as_ref(),
            }?;
            Some((c.addr.id.module.clone(), resource_values(c, v, object)))
        })
        .collect()
}

/// The root variables' values; a sensitive one's is left out like any
/// other secret.
fn variables(p: &Plan) -> Json {
    let declared = &p.configuration["root_module"]["variables"];
    let secret = |k: &str| declared[k]["sensitive"] == Json::Bool(true);
    let values = p.variables.iter().map(|(k, v)| {
        let value = match secret(k) {
            true => Json::Null,
            false => shown(v, false),
        };
        (k.clone(), json!({ "value": value }))
    });
    Json::Object(values.collect())
}

/// The configuration as the plan describes it, a sensitive variable's
/// default left out.
fn configuration(p: &Plan) -> Json {
    let mut configuration = p.configuration.clone();
    // `get_mut`, as indexing would add the keys it does not find.
    let vars = configuration
        .get_mut("root_module")
        .and_then(|m| m.get_mut("variables"))
        .and_then(Json::as_object_mut);
    for v in vars.into_iter().flat_map(|vars| vars.values_mut()) {
        if v["sensitive"] == Json::Bool(true) {
            if let Some(d) = v.get_mut("default") {
                *d = Json::Null;
            }
        }
    }
    configuration
}

/// strata's own keys, which tools that read Terraform's format ignore:
/// the cost, the placed pools, and which plugin served what in place of
/// strata's own drivers.
fn strata_keys(p: &Plan, out: &mut Map<String, Json>) {
    out.insert("cost".into(), p.cost.to_json());
    if !p.dispatch.is_empty() {
        let all = p.dispatch.iter().map(|d| d.to_json()).collect();
        out.insert("dispatch".into(), Json::Array(all));
    }
    if !p.placements.is_empty() {
        let placements = crate::placement::to_json(&p.placements);
        out.insert("placements".into(), placements);
    }
    if !p.plugin_served.is_empty() {
        let served: Vec<Json> = p
            .plugin_served
            .iter()
            .map(|s| json!({"provider": s.provider, "types": s.types}))
            .collect();
        out.insert("plugin_served".into(), Json::Array(served));
    }
}

/// A change's `importing`, as Terraform's JSON gives it: the id, or
/// (Terraform 1.12) the identity.
fn importing(by: &ImportBy) -> Json {
    match by {
        ImportBy::Id(id) => json!({ "id": id }),
        ImportBy::Identity(identity) => json!({ "identity": identity }),
    }
}

/// One action invocation as Terraform 1.14's plan JSON writes it.
fn invocation_json(a: &crate::plan::ActionInvocation) -> Json {
    let mut j = json!({
        "address": a.addr,
        "type": a.type_name,
        "name": a.name,
        "config_values": shown(&a.config, true),
        "config_sensitive": sensitive_mask(Some(&a.config)),
        "provider_name": strata_state::provider_of_config(&a.provider),
    });
    match a.lifecycle() {
        None => j["invoke_action_trigger"] = json!({}),
        Some(l) => {
            j["config_unknown"] = unknown_mask(Some(&a.config));
            j["lifecycle_action_trigger"] = json!({
                "triggering_resource_address": l.resource.to_string(),
                "action_trigger_event": crate::plan::action_event_name(l.event),
                "action_trigger_block_index": l.block,
                "actions_list_index": l.index,
                "on_failure": crate::plan::action_on_failure_name(l.on_failure),
            });
        }
    }
    j
}
