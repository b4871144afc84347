//! What `stratatest_rules` does: a named set of firewall rules, each a
//! `rule "NAME" { port = … }` block nested as a map, kept in the store's
//! `rules` folder. It is what exercises a client's reading of labelled
//! blocks: their keys, a computed default inside each (`protocol`), a
//! diagnostic whose path goes through a block's key, and replacement.

use crate::object::{Problem, Step};
use crate::store::Store;
use strata_value::json::{value_from_json, value_to_json};
use strata_value::types::Type;
use strata_value::value::{Attrs, Value};

fn attrs(v: &Value) -> Attrs {
    v.unmarked().entries().cloned().unwrap_or_default()
}

/// The rules held by `object` (its `rule` blocks, by name).
fn rules(object: &Attrs) -> Attrs {
    object.get("rule").map(attrs).unwrap_or_default()
}

/// A rule's port is a port; an unknown one is checked at apply.
pub fn validate(config: &Value) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (name, rule) in rules(&attrs(config)).iter() {
        let port = attrs(rule)
            .get("port")
            .and_then(|p| p.unmarked().as_number()?.to_i64());
        if matches!(port, Some(p) if !(1..=65535).contains(&p)) {
            problems.push(Problem {
                summary: "Invalid port number".into(),
                detail: "A port number is between 1 and 65535.".into(),
                path: vec![
                    Step::Attr("rule"),
                    Step::Key(name.clone()),
                    Step::Attr("port"),
                ],
            });
        }
    }
    problems
}

/// The planned object, and whether it must be replaced: a rule without a
/// protocol is TCP, and a new name is a new set of rules.
pub fn plan(prior: &Value, proposed: &Value) -> (Value, Vec<&'static str>) {
    if proposed.is_null() {
        return (proposed.clone(), Vec::new());
    }
    let mut planned = attrs(proposed);
    if let Some(Value::Map(ty, items)) = planned.get("rule").map(|r| r.unmarked().clone()) {
        let items = items
            .into_iter()
            .map(|(k, rule)| {
                let mut rule = attrs(&rule);
                if matches!(rule.get("protocol"), Some(Value::Null(_))) {
                    rule.insert("protocol".into(), Value::string("tcp"));
                }
                (k, Value::Object(rule))
            })
            .collect();
        planned.insert("rule".into(), Value::Map(ty, items));
    }
    let prior = attrs(prior);
    let renamed = prior
        .get("name")
        .is_some_and(|was| planned.get("name").is_some_and(|now| !was.raw_equal(now)));
    if prior.is_empty() || renamed {
        planned.insert("id".into(), Value::Unknown(Type::String));
    }
    let replace = if renamed { vec!["name"] } else { Vec::new() };
    (Value::Object(planned), replace)
}

/// Carries out a planned change; the rules as they now are.
/// `ty` is the type's value type (`stratatest_rules` or
/// `stratatest_loose_rules`).
pub fn apply(store: &Store, prior: &Value, planned: &Value, ty: &Type) -> Result<Value, String> {
    let id = attrs(prior)
        .get("id")
        .and_then(|i| i.as_str().map(str::to_string));
    if planned.is_null() {
        if let Some(id) = id {
            store.delete(&id)?;
        }
        return Ok(planned.clone());
    }
    let object = attrs(planned);
    let Some(id) = id else {
        let name = object
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("rules");
        let mut made = None;
        store.create(name, |id| {
            let mut object = object.clone();
            object.insert("id".into(), Value::string(id));
            let object = Value::Object(object);
            let json = value_to_json(&object, ty).unwrap_or_default();
            made = Some(object);
            json
        })?;
        return made.ok_or_else(|| "the rules were not written".into());
    };
    let object = Value::Object(object);
    if !store.write(&id, &value_to_json(&object, ty)?)? {
        return Err(format!("rules {id} no longer exist"));
    }
    Ok(object)
}

/// The rules as the store has them now, `None` when they are gone.
pub fn read(store: &Store, state: &Value, ty: &Type) -> Result<Option<Value>, String> {
    let Some(id) = attrs(state)
        .get("id")
        .and_then(|i| i.as_str().map(str::to_string))
    else {
        return Ok(None);
    };
    store
        .read(&id)?
        .map(|j| value_from_json(&j, ty))
        .transpose()
}
