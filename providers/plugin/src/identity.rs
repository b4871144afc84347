//! Resource identity (protocol 6.9): the object that tells a managed
//! resource's objects apart, declared per type by
//! `GetResourceIdentitySchemas`, kept beside each object in state, sent
//! with every read, plan and apply of it, and accepted by an import in
//! place of an id.
//!
//! The engine keeps an identity as JSON (as the state holds it); here it
//! becomes the wire's value of the identity schema's type and back, and a
//! provider's identity is checked as Terraform checks it: wholly known and
//! of the schema's type.

use crate::proto::tfplugin6 as v6;
use crate::schema::SchemaError;
use crate::wire::{dynamic, value};
use std::collections::{BTreeMap, HashMap};
use strata_provider::{DriverError, Identity, IdentityAttribute, IdentitySchema, Kept};
use strata_value::json::{type_from_json, value_from_json, value_to_json};
use strata_value::types::Type;

/// The identity schemas a provider declares, by resource type; a type
/// whose schema cannot be read is left out with why.
pub(crate) fn schemas(
    r: &v6::get_resource_identity_schemas::Response,
) -> HashMap<String, Result<IdentitySchema, SchemaError>> {
    r.identity_schemas
        .iter()
        .map(|(name, s)| (name.clone(), schema(s, name)))
        .collect()
}

fn schema(s: &v6::ResourceIdentitySchema, type_name: &str) -> Result<IdentitySchema, SchemaError> {
    let mut attributes = BTreeMap::new();
    for a in &s.identity_attributes {
        let path = format!("{type_name} identity.{}", a.name);
        let broken = |why: String| SchemaError {
            path: path.clone(),
            why,
        };
        let json: serde_json::Value = serde_json::from_slice(&a.r#type)
            .map_err(|e| broken(format!("type is not JSON: {e}")))?;
        let ty = type_from_json(&json).map_err(broken)?;
        attributes.insert(
            a.name.clone(),
            IdentityAttribute {
                ty,
                required_for_import: a.required_for_import,
                optional_for_import: a.optional_for_import,
                description: a.description.clone(),
            },
        );
    }
    Ok(IdentitySchema {
        version: u64::try_from(s.version).unwrap_or(0),
        attributes,
    })
}

/// The identity kept beside an object as the wire carries it: none when
/// the type declares no identity or the object has none yet.
pub(crate) fn to_wire(
    kept: &Kept,
    schema: Option<&IdentitySchema>,
) -> Result<Option<v6::ResourceIdentityData>, DriverError> {
    let (Some(identity), Some(schema)) = (&kept.identity, schema) else {
        return Ok(None);
    };
    object_to_wire(&identity.value, schema)
}

/// An identity object (JSON) as the wire's value of `schema`'s type.
pub(crate) fn object_to_wire(
    json: &serde_json::Value,
    schema: &IdentitySchema,
) -> Result<Option<v6::ResourceIdentityData>, DriverError> {
    let ty = schema.object_type();
    let v = value_from_json(json, &ty).map_err(|e| DriverError::Api {
        operation: "encoding an identity for the provider".into(),
        detail: e,
        retryable: false,
    })?;
    Ok(Some(v6::ResourceIdentityData {
        identity_data: dynamic(&v, &ty)?,
    }))
}

/// The identity a provider sent for an object of `type_name`: `None` when
/// it sent none (or the type declares none), an error when it is not one
/// Terraform would keep (unknown, or not of the schema's type).
pub(crate) fn from_wire(
    d: Option<&v6::ResourceIdentityData>,
    schema: Option<&IdentitySchema>,
    (provider, type_name): (&str, &str),
    operation: &str,
) -> Result<Option<Identity>, DriverError> {
    let (Some(data), Some(schema)) = (d.and_then(|d| d.identity_data.as_ref()), schema) else {
        return Ok(None);
    };
    let ty: Type = schema.object_type();
    let invalid = |detail: String| DriverError::Api {
        operation: operation.to_string(),
        detail,
        retryable: false,
    };
    let v = value(Some(data), &ty, operation).map_err(|e| {
        invalid(format!(
            "Provider produced an identity that doesn't match the schema: provider {provider:?} returned an identity for {type_name} that doesn't match the identity schema: {e}. This is a bug in the provider, which should be reported in the provider's own issue tracker."
        ))
    })?;
    if v.is_null() {
        return Ok(None);
    }
    if !v.is_wholly_known() {
        return Err(invalid(format!(
            "Provider produced invalid identity: provider {provider:?} returned an identity with unknown values for {type_name}. This is a bug in the provider, which should be reported in the provider's own issue tracker."
        )));
    }
    let json = value_to_json(&v, &ty).map_err(invalid)?;
    Ok(Some(Identity {
        version: schema.version,
        value: json,
    }))
}

/// What to keep beside an object a call returned: its private bytes and
/// identity.
pub(crate) fn kept(private: Vec<u8>, identity: Option<Identity>) -> Kept {
    Kept {
        private,
        identity: identity.map(Box::new),
    }
}
