//! What `stratatest_object` does: validation, planning, and its life in
//! the store.

use crate::schema::object_value_type;
use crate::store::Store;
use serde_json::Value as Json;
use strata_value::json::{value_from_json, value_to_json};
use strata_value::types::Type;
use strata_value::value::{Attrs, Value};

/// One step of a diagnostic's attribute path.
#[derive(Debug, Clone)]
pub enum Step {
    Attr(&'static str),
    Key(String),
    Index(i64),
}

/// A problem the provider reports, with where it is.
#[derive(Debug, Clone)]
pub struct Problem {
    pub summary: String,
    pub detail: String,
    pub path: Vec<Step>,
}

impl Problem {
    pub fn whole(summary: &str, detail: impl Into<String>) -> Problem {
        Problem {
            summary: summary.into(),
            detail: detail.into(),
            path: Vec::new(),
        }
    }
}

/// The attributes a user sets; a change to any of them is a new revision.
const SETTABLE: [&str; 6] = ["name", "labels", "size", "secret", "spec", "ports"];

fn attrs(v: &Value) -> Attrs {
    v.unmarked().entries().cloned().unwrap_or_default()
}

fn get<'a>(a: &'a Attrs, k: &str) -> Option<&'a Value> {
    a.get(k).map(Value::unmarked)
}

/// Names are lowercase letters, digits and hyphens; labels have keys;
/// port numbers are ports. Unknown values are checked at apply.
pub fn validate(config: &Value) -> Vec<Problem> {
    let config = attrs(config);
    let mut problems = Vec::new();
    if let Some(name) = get(&config, "name").and_then(Value::as_str) {
        let fine = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !fine {
            problems.push(Problem {
                summary: "Invalid object name".into(),
                detail: format!(
                    "{name:?} is not a name: use lowercase letters, digits and hyphens."
                ),
                path: vec![Step::Attr("name")],
            });
        }
    }
    if let Some(labels) = get(&config, "labels").and_then(Value::entries) {
        for (key, _) in labels.iter() {
            if key.trim().is_empty() {
                problems.push(Problem {
                    summary: "Empty label key".into(),
                    detail: "A label needs a key.".into(),
                    path: vec![Step::Attr("labels"), Step::Key(key.clone())],
                });
            }
        }
    }
    if let Some(ports) = get(&config, "ports").and_then(Value::elements) {
        for (i, port) in ports.iter().enumerate() {
            let number = get(&attrs(port), "number").and_then(|n| n.as_number()?.to_i64());
            if matches!(number, Some(n) if !(1..=65535).contains(&n)) {
                problems.push(Problem {
                    summary: "Invalid port number".into(),
                    detail: "A port number is between 1 and 65535.".into(),
                    path: vec![
                        Step::Attr("ports"),
                        Step::Index(i as i64),
                        Step::Attr("number"),
                    ],
                });
            }
        }
    }
    problems
}

/// Fills the defaults of optional, computed attributes the configuration
/// left null: one replica, ports over TCP.
fn with_defaults(mut object: Attrs) -> Attrs {
    if let Some(Value::Object(spec)) = object.get_mut("spec") {
        if matches!(spec.get("replicas"), Some(Value::Null(_))) {
            spec.insert("replicas".into(), Value::int(1));
        }
    }
    if let Some(Value::List(_, ports)) = object.get_mut("ports") {
        for port in ports {
            if let Value::Object(p) = port {
                if matches!(p.get("protocol"), Some(Value::Null(_))) {
                    p.insert("protocol".into(), Value::string("tcp"));
                }
            }
        }
    }
    object
}

/// Whether `object` is one this provider makes and then fails (its name
/// starts with "broken"), for the tests of a failed create.
pub fn is_broken(object: &Value) -> bool {
    name_starts(object, "broken")
}

/// Whether applying `object` crashes the provider (its name starts with
/// "crash"), for the tests of a provider that dies mid-call.
pub fn crashes(object: &Value) -> bool {
    name_starts(object, "crash")
}

fn name_starts(object: &Value, prefix: &str) -> bool {
    get(&attrs(object), "name")
        .and_then(Value::as_str)
        .is_some_and(|n| n.starts_with(prefix))
}

/// The plan for one object: what it will be, which changed attributes
/// force its replacement, and what the plan refuses.
pub struct Planned {
    pub planned: Value,
    pub requires_replace: Vec<&'static str>,
    pub problems: Vec<Problem>,
}

/// A label named `reject` is refused when applying (as a cloud refuses a
/// value no check could foresee), with its path; nothing is done.
pub fn refused(planned: &Value) -> Option<Problem> {
    let labels = get(&attrs(planned), "labels")?
        .unmarked()
        .entries()?
        .clone();
    labels.get("reject")?;
    Some(Problem {
        summary: "Label refused".into(),
        detail: "The store refuses a label named \"reject\".".into(),
        path: vec![Step::Attr("labels"), Step::Key("reject".into())],
    })
}

/// A label named `frozen` may not change once the object exists: a check
/// only a plan can make (it needs the prior object), with a path.
fn frozen_label(prior: &Attrs, planned: &Attrs) -> Option<Problem> {
    let label = |o: &Attrs| {
        let labels = o.get("labels")?.unmarked().entries()?.clone();
        labels.get("frozen").cloned()
    };
    let (was, now) = (label(prior)?, label(planned));
    if now.as_ref().is_some_and(|n| n.raw_equal(&was))
        || now.as_ref().is_some_and(|n| !n.is_known())
    {
        return None;
    }
    Some(Problem {
        summary: "Frozen label changed".into(),
        detail: "The label \"frozen\" cannot change once the object exists.".into(),
        path: vec![Step::Attr("labels"), Step::Key("frozen".into())],
    })
}

pub fn plan(prior: &Value, proposed: &Value) -> Planned {
    if proposed.is_null() {
        return Planned {
            planned: proposed.clone(),
            requires_replace: Vec::new(),
            problems: Vec::new(),
        };
    }
    let mut planned = with_defaults(attrs(proposed));
    // Write-only: never planned, never stored; but an object whose name
    // starts "leaky" keeps it, as a provider with that bug would, for the
    // tests of a client refusing such a plan.
    if !name_starts(proposed, "leaky") {
        planned.insert("token_wo".into(), Value::Null(Type::String));
    }
    let mut requires_replace = Vec::new();
    let mut problems = Vec::new();
    if prior.is_null() {
        planned.insert("id".into(), Value::Unknown(Type::String));
        planned.insert("revision".into(), Value::Unknown(Type::Number));
    } else {
        let prior = attrs(prior);
        problems.extend(frozen_label(&prior, &planned));
        let same = |planned: &Attrs, k: &str| match (prior.get(k), planned.get(k)) {
            (Some(a), Some(b)) => a.raw_equal(b),
            _ => false,
        };
        let resized = !same(&planned, "size");
        if !SETTABLE.iter().all(|k| same(&planned, k)) {
            planned.insert("revision".into(), Value::Unknown(Type::Number));
        }
        if resized {
            requires_replace.push("size");
            planned.insert("id".into(), Value::Unknown(Type::String));
        }
    }
    Planned {
        planned: Value::Object(planned),
        requires_replace,
        problems,
    }
}

/// The object as the store keeps it, with the write-only `token_wo` the
/// configuration sent (as an API keeps a password it is given).
fn stored(object: &Value, token: &Value) -> Result<Json, String> {
    let mut object = attrs(object);
    object.insert("token_wo".into(), token.clone());
    value_to_json(&Value::Object(object), &object_value_type())
}

/// An object as the store has it, less its write-only `token_wo`, which
/// a provider never hands back.
fn from_store(json: &Json) -> Result<Value, String> {
    let mut object = attrs(&value_from_json(json, &object_value_type())?);
    object.insert("token_wo".into(), Value::Null(Type::String));
    Ok(Value::Object(object))
}

/// Carries out a planned change with its configuration (where the
/// write-only `token_wo` comes from); the object as it now is (null when
/// destroyed).
pub fn apply(
    store: &Store,
    prior: &Value,
    planned: &Value,
    config: &Value,
) -> Result<Value, String> {
    let token = get(&attrs(config), "token_wo")
        .cloned()
        .unwrap_or(Value::Null(Type::String));
    if planned.is_null() {
        if let Some(id) = get(&attrs(prior), "id").and_then(Value::as_str) {
            store.delete(id)?;
        }
        return Ok(planned.clone());
    }
    let mut object = attrs(planned);
    if prior.is_null() {
        object.insert("revision".into(), Value::int(1));
        let mut made = None;
        let name = get(&object, "name")
            .and_then(Value::as_str)
            .unwrap_or("obj")
            .to_string();
        let id = store.create(&name, |id| {
            let mut object = object.clone();
            object.insert("id".into(), Value::string(id));
            let json = stored(&Value::Object(object.clone()), &token).unwrap_or(Json::Null);
            made = Some(object);
            json
        })?;
        return made
            .map(Value::Object)
            .ok_or_else(|| format!("object {id} was not written"));
    }
    let prior = attrs(prior);
    let id = get(&prior, "id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let revision = get(&prior, "revision")
        .and_then(|r| r.as_number()?.to_i64())
        .unwrap_or(0);
    if matches!(object.get("revision"), Some(Value::Unknown(_))) {
        object.insert("revision".into(), Value::int(revision + 1));
    }
    let object = Value::Object(object);
    if !store.write(&id, &stored(&object, &token)?)? {
        return Err(format!("object {id} no longer exists"));
    }
    Ok(object)
}

/// The object as the store has it now, `None` when it is gone.
pub fn read(store: &Store, state: &Value) -> Result<Option<Value>, String> {
    let state = attrs(state);
    let Some(id) = get(&state, "id").and_then(Value::as_str) else {
        return Ok(None);
    };
    store.read(id)?.map(|j| from_store(&j)).transpose()
}

pub fn import(store: &Store, id: &str) -> Result<Option<Value>, String> {
    store.read(id)?.map(|j| from_store(&j)).transpose()
}

/// A stored object of an older schema version, as the current one.
pub fn upgrade(version: i64, raw: &Json) -> Result<Value, String> {
    let mut raw = raw.clone();
    if version == 0 {
        // Version 0 called the labels `tags`.
        if let Some(obj) = raw.as_object_mut() {
            if let Some(tags) = obj.remove("tags") {
                obj.insert("labels".into(), tags);
            }
        }
    } else if version != crate::schema::OBJECT_VERSION {
        return Err(format!(
            "schema version {version} is newer than this provider"
        ));
    }
    from_store(&raw)
}

/// Where a moved object comes from.
pub struct Source<'a> {
    pub provider: &'a str,
    pub type_name: &'a str,
    pub version: i64,
}

/// The type this provider's 0.0 releases called `stratatest_object`.
const OLD_NAME: &str = "stratatest_item";

/// An object moved to `stratatest_object` from another type: only from
/// this provider's old name for it, whose objects have the layout of
/// schema version 0.
pub fn moved(source: &Source, raw: &Json) -> Result<Value, String> {
    if source.provider != crate::SOURCE || source.type_name != OLD_NAME {
        return Err(format!(
            "stratatest_object cannot take the state of {} from {}.",
            source.type_name, source.provider
        ));
    }
    if source.version != 0 {
        return Err(format!(
            "{OLD_NAME} had only schema version 0, not {}.",
            source.version
        ));
    }
    upgrade(0, raw)
}

/// The data source: the object with the configured name.
pub fn lookup(store: &Store, config: &Value) -> Result<Value, String> {
    let config = attrs(config);
    let name = get(&config, "name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    for json in store.all()? {
        let object = attrs(&from_store(&json)?);
        if get(&object, "name").and_then(Value::as_str) == Some(name) {
            let keep = |k: &str| {
                (
                    k.to_string(),
                    object.get(k).cloned().unwrap_or(Value::null()),
                )
            };
            let found: Attrs = ["id", "name", "labels", "size"]
                .into_iter()
                .map(keep)
                .collect();
            return Ok(Value::Object(found));
        }
    }
    Err(format!("no object is named {name:?}"))
}

/// Every object in the store.
pub fn all(store: &Store) -> Result<Vec<Value>, String> {
    store.all()?.iter().map(from_store).collect()
}
