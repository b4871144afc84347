//! A provider's schemas as the driver keeps them: what
//! `GetProviderSchema` and `GetResourceIdentitySchemas` said, converted
//! once per provider binary (a second process of it shares them).

use crate::convert::resource_schema;
use crate::identity;
use crate::proto::tfplugin6 as v6;
use crate::schema::{block_type, SchemaError};
use std::collections::{BTreeMap, HashMap};
use strata_provider::{FunctionParam, FunctionSig, IdentitySchema, ResourceSchema, TypeMode};
use strata_value::types::Type;

/// One kind of object the provider has: its protocol schema (for the
/// proposed new object), strata's form of it and its value type.
pub(crate) struct Kind {
    pub(crate) block: v6::schema::Block,
    pub(crate) schema: ResourceSchema,
    pub(crate) ty: Type,
    /// A managed type's identity schema, when it declares one.
    pub(crate) identity: Option<IdentitySchema>,
}

impl Kind {
    pub(crate) fn of(s: &v6::Schema, path: &str) -> Result<Kind, SchemaError> {
        let mut block = s.block.clone().unwrap_or_default();
        without_descriptions(&mut block);
        Ok(Kind {
            schema: resource_schema(s.version, &block, path)?,
            ty: block_type(&block, path)?,
            block,
            identity: None,
        })
    }
}

/// `block` less its documentation: what is kept is for planning, and the
/// descriptions are most of a large provider's schema (`providers schema`
/// asks the provider again for them).
fn without_descriptions(block: &mut v6::schema::Block) {
    block.description = String::new();
    for a in &mut block.attributes {
        without_attribute_description(a);
    }
    for b in &mut block.block_types {
        if let Some(inner) = b.block.as_mut() {
            without_descriptions(inner);
        }
    }
}

fn without_attribute_description(a: &mut v6::schema::Attribute) {
    a.description = String::new();
    if let Some(nested) = a.nested_type.as_mut() {
        for inner in &mut nested.attributes {
            without_attribute_description(inner);
        }
    }
}

/// Everything `GetProviderSchema` said, converted once.
pub(crate) struct Schemas {
    pub(crate) provider: Kind,
    pub(crate) resources: HashMap<String, Kind>,
    pub(crate) data: HashMap<String, Kind>,
    pub(crate) resource_schemas: BTreeMap<String, ResourceSchema>,
    pub(crate) data_schemas: BTreeMap<String, ResourceSchema>,
    pub(crate) ephemeral: HashMap<String, Kind>,
    pub(crate) ephemeral_schemas: BTreeMap<String, ResourceSchema>,
    /// List resource types' `config` blocks (protocol 6.10).
    pub(crate) list: HashMap<String, Kind>,
    pub(crate) list_schemas: BTreeMap<String, ResourceSchema>,
    /// Action types' `config` blocks (protocol 6.11).
    pub(crate) actions: HashMap<String, Kind>,
    pub(crate) action_schemas: BTreeMap<String, ResourceSchema>,
    /// Types whose schemas strata cannot read, and why: left out, so one
    /// such type does not cost the provider's others.
    pub(crate) unusable: HashMap<(TypeMode, String), SchemaError>,
    pub(crate) functions: BTreeMap<String, FunctionSig>,
}

/// What a new provider process is asked before any other call.
#[derive(Default)]
pub(crate) struct Asked {
    pub(crate) schema: v6::get_provider_schema::Response,
    pub(crate) identity: v6::get_resource_identity_schemas::Response,
}

impl Asked {
    /// The schemas less their documentation, as they are kept on disk:
    /// a later run reads a fraction of the provider's answer.
    pub(crate) fn without_descriptions(&mut self) {
        let r = &mut self.schema;
        let all = r
            .resource_schemas
            .values_mut()
            .chain(r.data_source_schemas.values_mut())
            .chain(r.ephemeral_resource_schemas.values_mut())
            .chain(r.list_resource_schemas.values_mut())
            .chain(r.provider.as_mut())
            .chain(r.provider_meta.as_mut())
            .chain(
                r.action_schemas
                    .values_mut()
                    .filter_map(|a| a.schema.as_mut()),
            );
        for s in all {
            if let Some(block) = s.block.as_mut() {
                without_descriptions(block);
            }
        }
    }
}

pub(crate) fn convert_schemas(
    r: &v6::get_provider_schema::Response,
    identities: &v6::get_resource_identity_schemas::Response,
) -> Result<Schemas, SchemaError> {
    let mut unusable = HashMap::new();
    let mut kinds = |m: &HashMap<String, v6::Schema>, mode: TypeMode| -> HashMap<String, Kind> {
        let mut out = HashMap::new();
        for (k, s) in m {
            match Kind::of(s, k) {
                Ok(kind) => {
                    out.insert(k.clone(), kind);
                }
                Err(e) => {
                    unusable.insert((mode, k.clone()), e);
                }
            }
        }
        out
    };
    let mut resources = kinds(&r.resource_schemas, TypeMode::Managed);
    let data = kinds(&r.data_source_schemas, TypeMode::Data);
    let ephemeral = kinds(&r.ephemeral_resource_schemas, TypeMode::Ephemeral);
    let list = kinds(&r.list_resource_schemas, TypeMode::List);
    let action_blocks: HashMap<String, v6::Schema> = r
        .action_schemas
        .iter()
        .map(|(k, a)| (k.clone(), a.schema.clone().unwrap_or_default()))
        .collect();
    let actions = kinds(&action_blocks, TypeMode::Action);
    for (name, schema) in identity::schemas(identities) {
        match (schema, resources.get_mut(&name)) {
            (Ok(schema), Some(kind)) => kind.identity = Some(schema),
            (Err(e), Some(_)) => {
                resources.remove(&name);
                unusable.insert((TypeMode::Managed, name), e);
            }
            (_, None) => {}
        }
    }
    let strata_form = |m: &HashMap<String, Kind>| {
        m.iter()
            .map(|(k, kind)| (k.clone(), kind.schema.clone()))
            .collect()
    };
    Ok(Schemas {
        provider: Kind::of(&r.provider.clone().unwrap_or_default(), "provider")?,
        resource_schemas: strata_form(&resources),
        data_schemas: strata_form(&data),
        ephemeral_schemas: strata_form(&ephemeral),
        list_schemas: strata_form(&list),
        action_schemas: strata_form(&actions),
        actions,
        list,
        resources,
        data,
        ephemeral,
        unusable,
        // A function whose types cannot be read is left out (a call to it
        // is then an unknown function), not the provider.
        functions: r
            .functions
            .iter()
            .filter_map(|(name, f)| Some((name.clone(), function_sig(f, name).ok()?)))
            .collect(),
    })
}

fn function_sig(f: &v6::Function, name: &str) -> Result<FunctionSig, SchemaError> {
    let ty = |bytes: &[u8], what: &str| -> Result<Type, SchemaError> {
        let bad = |why: String| SchemaError {
            path: format!("function {name} ({what})"),
            why,
        };
        let json: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
        strata_value::json::type_from_json(&json).map_err(bad)
    };
    let param = |p: &v6::function::Parameter| -> Result<FunctionParam, SchemaError> {
        Ok(FunctionParam {
            name: p.name.clone(),
            ty: ty(&p.r#type, &p.name)?,
            allow_null: p.allow_null_value,
            allow_unknown: p.allow_unknown_values,
        })
    };
    Ok(FunctionSig {
        params: f.parameters.iter().map(param).collect::<Result<_, _>>()?,
        variadic: f.variadic_parameter.as_ref().map(param).transpose()?,
        returns: ty(
            &f.r#return
                .as_ref()
                .map(|r| r.r#type.clone())
                .unwrap_or_default(),
            "return",
        )?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every description goes, nested attributes' and blocks' too; what
    /// planning reads stays.
    #[test]
    fn descriptions_are_left_out_of_what_is_kept() {
        let attribute = |name: &str| v6::schema::Attribute {
            name: name.into(),
            r#type: b"\"string\"".to_vec(),
            description: "words".into(),
            optional: true,
            ..Default::default()
        };
        let nested = v6::schema::Attribute {
            nested_type: Some(v6::schema::Object {
                attributes: vec![attribute("inner")],
                ..Default::default()
            }),
            ..attribute("outer")
        };
        let mut block = v6::schema::Block {
            description: "a block".into(),
            attributes: vec![attribute("a"), nested],
            block_types: vec![v6::schema::NestedBlock {
                type_name: "b".into(),
                block: Some(v6::schema::Block {
                    description: "inner block".into(),
                    attributes: vec![attribute("c")],
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        without_descriptions(&mut block);
        let text = format!("{block:?}");
        assert!(
            !text.contains("words") && !text.contains("block\""),
            "{text}"
        );
        assert!(
            text.contains("inner") && text.contains("optional: true"),
            "{text}"
        );
    }
}
