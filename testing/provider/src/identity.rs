//! `stratatest_object`'s resource identity (protocol 6.9), declared only
//! when `STRATATEST_IDENTITY` is set, so the tests that hold strata to
//! Terraform 1.11 (which knows no identities) see the provider they always
//! saw.
//!
//! The identity is `{ id, name }`: `id` required for an import by
//! identity, `name` optional (checked against the object when given). Its
//! version is 1; version 0 called `id` `object_id`, so a stored identity
//! of version 0 exercises `UpgradeResourceIdentity`. A read whose stored
//! identity names another object than the state's is refused, as the
//! plugin framework refuses an identity that changed: the proof that a
//! client sends the identity it stored.

use crate::schema::OBJECT;
use std::collections::BTreeMap;
use strata_plugin::proto::tfplugin6 as v6;
use strata_value::json::type_to_json;
use strata_value::types::Type;
use strata_value::value::Value;

pub const VERSION: i64 = 1;

/// Whether the provider declares identities in this run.
pub fn declared() -> bool {
    std::env::var_os("STRATATEST_IDENTITY").is_some()
}

pub fn identity_type() -> Type {
    Type::object(BTreeMap::from([
        ("id".to_string(), Type::String),
        ("name".to_string(), Type::String),
    ]))
}

/// `GetResourceIdentitySchemas`' answer.
pub fn schemas() -> v6::get_resource_identity_schemas::Response {
    let attribute = |name: &str, required: bool, description: &str| {
        v6::resource_identity_schema::IdentityAttribute {
            name: name.into(),
            r#type: type_to_json(&Type::String).to_string().into_bytes(),
            required_for_import: required,
            optional_for_import: !required,
            description: description.into(),
        }
    };
    let schema = v6::ResourceIdentitySchema {
        version: VERSION,
        identity_attributes: vec![
            attribute("id", true, "The object's id in the store."),
            attribute("name", false, "The object's name."),
        ],
    };
    let identity_schemas = match declared() {
        true => [(OBJECT.to_string(), schema)].into(),
        false => Default::default(),
    };
    v6::get_resource_identity_schemas::Response {
        identity_schemas,
        diagnostics: Vec::new(),
    }
}

fn attr(v: &Value, k: &str) -> Value {
    v.entries()
        .and_then(|a| a.get(k).cloned())
        .unwrap_or(Value::Null(Type::String))
}

/// The identity of `object` (null when there is no object, or when
/// identities are not declared); its id may be unknown in a plan.
pub fn of(object: &Value) -> Value {
    if !declared() || object.is_null() {
        return Value::Null(identity_type());
    }
    Value::Object(
        [("id", attr(object, "id")), ("name", attr(object, "name"))]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// The id a stored identity names, when one was sent.
pub fn id_in(identity: &Value) -> Option<String> {
    attr(identity, "id").as_str().map(str::to_string)
}

/// Why a read must refuse `state` given the `stored` identity: it names
/// another object.
pub fn changed(stored: &Value, state: &Value) -> Option<String> {
    let named = id_in(stored)?;
    let id = attr(state, "id");
    let id = id.as_str()?;
    (named != id).then(|| {
        format!("The stored identity names object {named:?}, but the state's object is {id:?}: the identity changed.")
    })
}

/// A stored identity of version `version` (its JSON) as version 1.
pub fn upgrade(version: i64, raw: &serde_json::Value) -> Result<Value, String> {
    let text = |k: &str| raw.get(k).and_then(serde_json::Value::as_str);
    let (id, name) = match version {
        0 => (text("object_id"), None),
        VERSION => (text("id"), text("name")),
        v => return Err(format!("no identity version {v}")),
    };
    let id = id.ok_or("the stored identity has no id")?;
    let string = |s: Option<&str>| s.map_or(Value::Null(Type::String), Value::string);
    Ok(Value::Object(
        [("id", Value::string(id)), ("name", string(name))]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    ))
}
