//! What a provider's schema says about values: the type of the object a
//! block describes (Terraform's implied type), which every value of that
//! resource crosses the wire as.

use crate::proto::tfplugin6::schema::{nested_block, object, Attribute, Block};
use std::collections::BTreeMap;
use strata_value::json::type_from_json;
use strata_value::types::Type;

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("the provider's schema for {path}: {why}")]
pub struct SchemaError {
    pub path: String,
    pub why: String,
}

fn broken(path: &str, why: impl Into<String>) -> SchemaError {
    SchemaError {
        path: path.to_string(),
        why: why.into(),
    }
}

/// The object type of a block: its attributes, and its nested blocks as
/// an object (single, group), a list, a set or a map of objects.
pub fn block_type(block: &Block, path: &str) -> Result<Type, SchemaError> {
    let mut attrs = BTreeMap::new();
    for a in &block.attributes {
        let at = format!("{path}.{}", a.name);
        attrs.insert(a.name.clone(), attribute_type(a, &at)?);
    }
    for b in &block.block_types {
        let at = format!("{path}.{}", b.type_name);
        let inner = match &b.block {
            Some(inner) => block_type(inner, &at)?,
            None => Type::object(BTreeMap::new()),
        };
        let ty = match nested_block::NestingMode::try_from(b.nesting) {
            Ok(nested_block::NestingMode::Single | nested_block::NestingMode::Group) => inner,
            // A tuple or an object keyed by label (Terraform's typing of
            // blocks whose attributes may be of any type), sent with its
            // type as any dynamic value is.
            Ok(nested_block::NestingMode::List | nested_block::NestingMode::Map)
                if inner.has_dynamic() =>
            {
                Type::Dynamic
            }
            Ok(nested_block::NestingMode::List) => Type::list(inner),
            Ok(nested_block::NestingMode::Set) => Type::set(inner),
            Ok(nested_block::NestingMode::Map) => Type::map(inner),
            _ => return Err(broken(&at, format!("nesting mode {}", b.nesting))),
        };
        if attrs.insert(b.type_name.clone(), ty).is_some() {
            return Err(broken(&at, "a block and an attribute share the name"));
        }
    }
    Ok(Type::object(attrs))
}

/// An attribute's type: its cty type, or for a nested attribute (protocol
/// 6) its objects in their nesting.
pub fn attribute_type(a: &Attribute, path: &str) -> Result<Type, SchemaError> {
    if let Some(nested) = &a.nested_type {
        let mut attrs = BTreeMap::new();
        for inner in &nested.attributes {
            let at = format!("{path}.{}", inner.name);
            attrs.insert(inner.name.clone(), attribute_type(inner, &at)?);
        }
        let o = Type::object(attrs);
        return match object::NestingMode::try_from(nested.nesting) {
            Ok(object::NestingMode::Single) => Ok(o),
            Ok(object::NestingMode::List) => Ok(Type::list(o)),
            Ok(object::NestingMode::Set) => Ok(Type::set(o)),
            Ok(object::NestingMode::Map) => Ok(Type::map(o)),
            _ => Err(broken(path, format!("nesting mode {}", nested.nesting))),
        };
    }
    let json: serde_json::Value = serde_json::from_slice(&a.r#type)
        .map_err(|e| broken(path, format!("type is not JSON: {e}")))?;
    type_from_json(&json).map_err(|e| broken(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tfplugin6::schema::{NestedBlock, Object};

    fn attr(name: &str, ty: &str) -> Attribute {
        Attribute {
            name: name.into(),
            r#type: ty.as_bytes().to_vec(),
            ..Attribute::default()
        }
    }

    #[test]
    fn blocks_and_nested_attributes_imply_their_types() {
        let block = Block {
            attributes: vec![
                attr("name", "\"string\""),
                attr("tags", "[\"map\",\"string\"]"),
                Attribute {
                    nested_type: Some(Object {
                        attributes: vec![attr("port", "\"number\"")],
                        nesting: object::NestingMode::Set as i32,
                    }),
                    ..attr("rules", "")
                },
            ],
            block_types: vec![NestedBlock {
                type_name: "disk".into(),
                block: Some(Block {
                    attributes: vec![attr("gb", "\"number\"")],
                    ..Block::default()
                }),
                nesting: nested_block::NestingMode::List as i32,
                ..NestedBlock::default()
            }],
            ..Block::default()
        };
        let want = |pairs: Vec<(&str, Type)>| {
            Type::object(pairs.into_iter().map(|(k, t)| (k.to_string(), t)).collect())
        };
        assert_eq!(
            block_type(&block, "x").unwrap(),
            want(vec![
                ("name", Type::String),
                ("tags", Type::map(Type::String)),
                ("rules", Type::set(want(vec![("port", Type::Number)]))),
                ("disk", Type::list(want(vec![("gb", Type::Number)]))),
            ])
        );
    }

    #[test]
    fn a_broken_schema_names_the_attribute() {
        let block = Block {
            attributes: vec![attr("name", "strin")],
            ..Block::default()
        };
        let err = block_type(&block, "aws_thing").unwrap_err();
        assert_eq!(err.path, "aws_thing.name");
    }
}
