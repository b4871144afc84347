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
                deprecated: b.block.as_ref().is_some_and(|b| b.deprecated),
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
        write_only: a.write_only,
        deprecated: a.deprecated,
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
        Type::Object(mut shared) => {
            let o = std::sync::Arc::make_mut(&mut shared);
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
            Type::Object(shared)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tfplugin6::schema::NestedBlock;
    use strata_value::json::type_to_json;

    fn attribute(name: &str, ty: &Type) -> Attribute {
        Attribute {
            name: name.into(),
            r#type: type_to_json(ty).to_string().into_bytes(),
            required: true,
            ..Attribute::default()
        }
    }

    /// A resource with one `rule` block type of `nesting`, whose `value`
    /// is of type `ty`.
    fn with_rule(nesting: nested_block::NestingMode, ty: &Type) -> Block {
        Block {
            block_types: vec![NestedBlock {
                type_name: "rule".into(),
                block: Some(Block {
                    attributes: vec![attribute("value", ty)],
                    ..Block::default()
                }),
                nesting: nesting as i32,
                ..NestedBlock::default()
            }],
            ..Block::default()
        }
    }

    #[test]
    fn blocks_nested_as_a_map_are_a_map_of_objects() {
        let block = with_rule(nested_block::NestingMode::Map, &Type::Number);
        let schema = resource_schema(0, &block, "r").expect("converts");
        assert_eq!(schema.blocks["rule"].nesting, BlockNesting::Map);
        let rule = Type::object(BTreeMap::from([("value".to_string(), Type::Number)]));
        let want = Type::object(BTreeMap::from([("rule".to_string(), Type::map(rule))]));
        assert_eq!(schema.object_type(), want);
    }

    #[test]
    fn a_list_or_map_of_blocks_of_any_type_is_of_any_type_as_on_the_wire() {
        use nested_block::NestingMode;
        for nesting in [NestingMode::Map, NestingMode::List] {
            let block = with_rule(nesting, &Type::Dynamic);
            let schema = resource_schema(0, &block, "r").expect("converts");
            assert!(schema.blocks["rule"].loose());
            let want = Type::object(BTreeMap::from([("rule".to_string(), Type::Dynamic)]));
            assert_eq!(schema.object_type(), want);
            assert_eq!(crate::schema::block_type(&block, "r"), Ok(want));
        }
        let single = with_rule(NestingMode::Single, &Type::Dynamic);
        let schema = resource_schema(0, &single, "r").expect("converts");
        assert!(!schema.blocks["rule"].loose());
    }
}
