//! The provider's schemas, as protocol messages and as value types.

use std::collections::BTreeMap;
use strata_plugin::proto::tfplugin6::schema::{
    nested_block, object, Attribute, Block, NestedBlock, Object,
};
use strata_plugin::proto::tfplugin6::Schema;
use strata_value::json::type_to_json;
use strata_value::types::Type;

pub const OBJECT: &str = "stratatest_object";
/// The stored layout's version: 0 called `labels` `tags`.
pub const OBJECT_VERSION: i64 = 1;

/// How an attribute is set.
#[derive(Clone, Copy)]
enum Role {
    Required,
    Optional,
    Computed,
    OptionalComputed,
}

fn attribute(name: &str, ty: &Type, role: Role) -> Attribute {
    Attribute {
        name: name.to_string(),
        r#type: type_to_json(ty).to_string().into_bytes(),
        required: matches!(role, Role::Required),
        optional: matches!(role, Role::Optional | Role::OptionalComputed),
        computed: matches!(role, Role::Computed | Role::OptionalComputed),
        ..Attribute::default()
    }
}

fn nested_block(
    name: &str,
    attributes: Vec<Attribute>,
    nesting: nested_block::NestingMode,
) -> NestedBlock {
    NestedBlock {
        type_name: name.into(),
        block: Some(Block {
            attributes,
            ..Block::default()
        }),
        nesting: nesting as i32,
        ..NestedBlock::default()
    }
}

fn object_type(attrs: &[(&str, Type)]) -> Type {
    Type::object(
        attrs
            .iter()
            .map(|(k, t)| (k.to_string(), t.clone()))
            .collect::<BTreeMap<_, _>>(),
    )
}

fn spec_type() -> Type {
    object_type(&[("image", Type::String), ("replicas", Type::Number)])
}

fn port_type() -> Type {
    object_type(&[
        ("name", Type::String),
        ("number", Type::Number),
        ("protocol", Type::String),
    ])
}

/// `stratatest_object`'s value type.
pub fn object_value_type() -> Type {
    object_type(&[
        ("id", Type::String),
        ("name", Type::String),
        ("labels", Type::map(Type::String)),
        ("size", Type::Number),
        ("secret", Type::String),
        ("revision", Type::Number),
        ("spec", spec_type()),
        ("ports", Type::list(port_type())),
        ("token_wo", Type::String),
    ])
}

pub fn object_schema() -> Schema {
    let mut secret = attribute("secret", &Type::String, Role::Optional);
    secret.sensitive = true;
    let mut token = attribute("token_wo", &Type::String, Role::Optional);
    token.write_only = true;
    token.description = "Sent to the store when the object is written; never kept in state.".into();
    let mut size = attribute("size", &Type::Number, Role::Optional);
    size.description = "Changing it replaces the object.".into();
    let ports = Attribute {
        nested_type: Some(Object {
            attributes: vec![
                attribute("name", &Type::String, Role::Required),
                attribute("number", &Type::Number, Role::Required),
                attribute("protocol", &Type::String, Role::OptionalComputed),
            ],
            nesting: object::NestingMode::List as i32,
        }),
        r#type: Vec::new(),
        ..attribute("ports", &Type::Dynamic, Role::Optional)
    };
    let spec = nested_block(
        "spec",
        vec![
            attribute("image", &Type::String, Role::Required),
            attribute("replicas", &Type::Number, Role::OptionalComputed),
        ],
        nested_block::NestingMode::Single,
    );
    Schema {
        version: OBJECT_VERSION,
        block: Some(Block {
            attributes: vec![
                attribute("id", &Type::String, Role::Computed),
                attribute("name", &Type::String, Role::Required),
                attribute("labels", &Type::map(Type::String), Role::Optional),
                size,
                secret,
                attribute("revision", &Type::Number, Role::Computed),
                ports,
                token,
            ],
            block_types: vec![spec],
            ..Block::default()
        }),
    }
}

/// `stratatest_rules`: a named set of rules written as blocks nested as a
/// map (`rule "NAME" { port = … }`).
pub const RULES: &str = "stratatest_rules";

pub fn rules_value_type() -> Type {
    let rule = object_type(&[("port", Type::Number), ("protocol", Type::String)]);
    object_type(&[
        ("id", Type::String),
        ("name", Type::String),
        ("rule", Type::map(rule)),
    ])
}

pub fn rules_schema() -> Schema {
    let rule = nested_block(
        "rule",
        vec![
            attribute("port", &Type::Number, Role::Required),
            attribute("protocol", &Type::String, Role::OptionalComputed),
        ],
        nested_block::NestingMode::Map,
    );
    Schema {
        version: 0,
        block: Some(Block {
            attributes: vec![
                attribute("id", &Type::String, Role::Computed),
                attribute("name", &Type::String, Role::Required),
            ],
            block_types: vec![rule],
            ..Block::default()
        }),
    }
}

/// `stratatest_loose_rules`: named rules whose `value` may be of any
/// type, in blocks nested as a map (`rule "KEY" { … }`) and as a list
/// (`step { … }`). Terraform types those blocks as an object keyed by
/// label and a tuple, so that each block's value keeps its own type, and
/// sends them with their types.
pub const LOOSE_RULES: &str = "stratatest_loose_rules";

pub fn loose_rules_value_type() -> Type {
    object_type(&[
        ("id", Type::String),
        ("name", Type::String),
        ("rule", Type::Dynamic),
        ("step", Type::Dynamic),
    ])
}

pub fn loose_rules_schema() -> Schema {
    let value = || vec![attribute("value", &Type::Dynamic, Role::Required)];
    Schema {
        version: 0,
        block: Some(Block {
            attributes: vec![
                attribute("id", &Type::String, Role::Computed),
                attribute("name", &Type::String, Role::Required),
            ],
            block_types: vec![
                nested_block("rule", value(), nested_block::NestingMode::Map),
                nested_block("step", value(), nested_block::NestingMode::List),
            ],
            ..Block::default()
        }),
    }
}

/// `stratatest_odd`, declared only when `STRATATEST_ODD_SCHEMA` is set:
/// its `when` is of a type cty does not have, as a provider with a bug
/// might declare, so no client can read the type.
pub const ODD: &str = "stratatest_odd";

pub fn odd_schema() -> Schema {
    let mut when = attribute("when", &Type::String, Role::Optional);
    when.r#type = b"\"uuid\"".to_vec();
    Schema {
        version: 0,
        block: Some(Block {
            attributes: vec![when],
            ..Block::default()
        }),
    }
}

/// `stratatest_token`: an ephemeral resource (see `token.rs`).
pub const TOKEN: &str = "stratatest_token";

pub fn token_value_type() -> Type {
    object_type(&[("audience", Type::String), ("value", Type::String)])
}

pub fn token_schema() -> Schema {
    let mut value = attribute("value", &Type::String, Role::Computed);
    value.sensitive = true;
    Schema {
        version: 0,
        block: Some(Block {
            attributes: vec![attribute("audience", &Type::String, Role::Required), value],
            description: "A short-lived token; never stored.".into(),
            ..Block::default()
        }),
    }
}

/// The data source `stratatest_object`: an object found by name.
/// `stratatest_lookup` is the same lookup under a name no resource type
/// has, as most providers' data sources are (`aws_ami`, `aws_caller_identity`).
pub const LOOKUP: &str = "stratatest_lookup";

pub fn lookup_value_type() -> Type {
    object_type(&[
        ("id", Type::String),
        ("name", Type::String),
        ("labels", Type::map(Type::String)),
        ("size", Type::Number),
    ])
}

pub fn lookup_schema() -> Schema {
    Schema {
        version: 0,
        block: Some(Block {
            attributes: vec![
                attribute("name", &Type::String, Role::Required),
                attribute("id", &Type::String, Role::Computed),
                attribute("labels", &Type::map(Type::String), Role::Computed),
                attribute("size", &Type::Number, Role::Computed),
            ],
            ..Block::default()
        }),
    }
}

pub fn provider_value_type() -> Type {
    object_type(&[("store", Type::String)])
}

pub fn provider_schema() -> Schema {
    let mut store = attribute("store", &Type::String, Role::Optional);
    store.description = "Directory holding the objects; STRATATEST_STORE when not set.".into();
    Schema {
        version: 0,
        block: Some(Block {
            attributes: vec![store],
            ..Block::default()
        }),
    }
}
