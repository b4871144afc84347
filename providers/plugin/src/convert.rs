//! A provider's schemas as strata's (`strata_provider::ResourceSchema`),
//! which configuration decoding, state decoding and rendering read.
//! Nested attributes (protocol 6) become attributes of object types whose
//! optional attributes may be left out, as the provider's own
//! configuration decoding allows.

use crate::proto::tfplugin6::schema::{nested_block, Attribute, Block};
use crate::schema::{attribute_type, SchemaError};
use std::collections::BTreeMap;
use strata_provider::{AttributeSchema, BlockNesting, BlockSchema, ResourceSchema};
use strata_value::types::Type;

/// `block` (a resource's, a data source's or the provider's) with the
/// schema's version.
pub fn resource_schema(
    version: i64,
    block: &Block,
    path: &str,
) -> Result<ResourceSchema, SchemaError> {
    let mut schema = block_schema(block, path)?;
    schema.version = u64::try_from(version).unwrap_or(0);
    Ok(schema)
}

fn block_schema(block: &Block, path: &str) -> Result<ResourceSchema, SchemaError> {
    let mut attributes = BTreeMap::new();
    for a in &block.attributes {
        let at = format!("{path}.{}", a.name);
        attributes.insert(a.name.clone(), attribute(a, &at)?);
    }
    let mut blocks = BTreeMap::new();
    for b in &block.block_types {
        let at = format!("{path}.{}", b.type_name);
        let inner = match &b.block {
            Some(inner) => block_schema(inner, &at)?,
            None => ResourceSchema::of_attributes(Vec::new()),
        };
        let nesting = match nested_block::NestingMode::try_from(b.nesting) {
            // A group is a single block that is never null; strata's
            // decoding gives an absent single block null attributes alike.
            Ok(nested_block::NestingMode::Single | nested_block::NestingMode::Group) => {
                BlockNesting::Single
            }
            Ok(nested_block::NestingMode::List) => BlockNesting::List,
            Ok(nested_block::NestingMode::Set) => BlockNesting::Set,
            // Terraform types such blocks as an object keyed by label
            // when an attribute in them may be of any type, so that each
            // block may differ; a map of one object type cannot hold that.
            Ok(nested_block::NestingMode::Map) if inner.object_type().has_dynamic() => {
                return Err(SchemaError {
                    path: at,
                    why: "blocks nested as a map with attributes of any type".into(),
                })
            }
            Ok(nested_block::NestingMode::Map) => BlockNesting::Map,
            _ => {
                return Err(SchemaError {
                    path: at,
                    why: format!("nesting mode {}", b.nesting),
                })
            }
        };
        blocks.insert(
            b.type_name.clone(),
            BlockSchema {
                nesting,
                min_items: usize::try_from(b.min_items).unwrap_or(0),
                max_items: usize::try_from(b.max_items).ok().filter(|&m| m > 0),
                schema: inner,
                computed: false,
            },
        );
    }
    Ok(ResourceSchema {
        version: 0,
        attributes,
        blocks,
    })
}

fn attribute(a: &Attribute, path: &str) -> Result<AttributeSchema, SchemaError> {
    let ty = match &a.nested_type {
        Some(_) => with_optional(attribute_type(a, path)?, a),
        None => attribute_type(a, path)?,
    };
    Ok(AttributeSchema {
        ty,
        required: a.required,
        optional: a.optional,
        computed: a.computed,
        // Replacement is the provider's to say, in each plan.
        force_new: false,
        sensitive: a.sensitive,
        nested: a.nested_type.is_some(),
        description: "",
    })
}

/// A nested attribute's object type with its non-required attributes
/// marked optional, so a configuration may leave them out.
fn with_optional(ty: Type, a: &Attribute) -> Type {
    let Some(nested) = &a.nested_type else {
        return ty;
    };
    let mark = |t: Type| match t {
        Type::Object(mut o) => {
            for inner in &nested.attributes {
                if !inner.required {
                    o.optional.insert(inner.name.clone());
                }
                if inner.nested_type.is_some() {
                    if let Some(t) = o.attrs.remove(&inner.name) {
                        o.attrs.insert(inner.name.clone(), with_optional(t, inner));
                    }
                }
            }
            Type::Object(o)
        }
        other => other,
    };
    match ty {
        Type::List(e) => Type::list(mark(*e)),
        Type::Set(e) => Type::set(mark(*e)),
        Type::Map(e) => Type::map(mark(*e)),
        other => mark(other),
    }
}
