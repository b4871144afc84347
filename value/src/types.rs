//! Terraform's type system: primitive, collection and structural types, plus
//! `any` (cty's dynamic pseudo-type) and object attributes marked optional by
//! a type constraint.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    /// `any` in a constraint; the type of `null` and of values not yet known.
    Dynamic,
    Bool,
    Number,
    String,
    List(Box<Type>),
    Set(Box<Type>),
    Map(Box<Type>),
    Tuple(Vec<Type>),
    /// Shared: an object type is large (two maps) and every `Value` holds
    /// a `Type`, so this keeps every value small; a state's values copy the
    /// same few object types thousands of times, each copy a count.
    Object(Arc<ObjectType>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ObjectType {
    pub attrs: BTreeMap<String, Type>,
    /// Attributes a constraint declared with `optional(...)`; empty for value types.
    pub optional: BTreeSet<String>,
}

impl Type {
    pub fn list(t: Type) -> Type {
        Type::List(Box::new(t))
    }
    pub fn set(t: Type) -> Type {
        Type::Set(Box::new(t))
    }
    pub fn map(t: Type) -> Type {
        Type::Map(Box::new(t))
    }
    pub fn object(attrs: BTreeMap<String, Type>) -> Type {
        Type::Object(Arc::new(ObjectType {
            attrs,
            optional: BTreeSet::new(),
        }))
    }

    pub fn is_primitive(&self) -> bool {
        matches!(self, Type::Bool | Type::Number | Type::String)
    }

    pub fn is_collection(&self) -> bool {
        matches!(self, Type::List(_) | Type::Set(_) | Type::Map(_))
    }

    pub fn element(&self) -> Option<&Type> {
        match self {
            Type::List(t) | Type::Set(t) | Type::Map(t) => Some(t),
            _ => None,
        }
    }

    /// Whether `any` appears anywhere in this type.
    pub fn has_dynamic(&self) -> bool {
        match self {
            Type::Dynamic => true,
            Type::Bool | Type::Number | Type::String => false,
            Type::List(t) | Type::Set(t) | Type::Map(t) => t.has_dynamic(),
            Type::Tuple(ts) => ts.iter().any(Type::has_dynamic),
            Type::Object(o) => o.attrs.values().any(Type::has_dynamic),
        }
    }

    /// The name Terraform's error messages use ("list of string", "object").
    pub fn friendly_name(&self) -> String {
        match self {
            Type::Dynamic => "dynamic".into(),
            Type::Bool => "bool".into(),
            Type::Number => "number".into(),
            Type::String => "string".into(),
            Type::List(t) => format!("list of {}", t.friendly_name()),
            Type::Set(t) => format!("set of {}", t.friendly_name()),
            Type::Map(t) => format!("map of {}", t.friendly_name()),
            Type::Tuple(_) => "tuple".into(),
            Type::Object(_) => "object".into(),
        }
    }
}

/// Prints the type as Terraform's `type()` function does, on one line:
/// `object({a: number, b: list(string)})`.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Dynamic => f.write_str("dynamic"),
            Type::Bool => f.write_str("bool"),
            Type::Number => f.write_str("number"),
            Type::String => f.write_str("string"),
            Type::List(t) => write!(f, "list({t})"),
            Type::Set(t) => write!(f, "set({t})"),
            Type::Map(t) => write!(f, "map({t})"),
            Type::Tuple(ts) => {
                f.write_str("tuple([")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str("])")
            }
            Type::Object(o) => {
                f.write_str("object({")?;
                for (i, (k, t)) in o.attrs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    if o.optional.contains(k) {
                        write!(f, "{k}: optional({t})")?;
                    } else {
                        write!(f, "{k}: {t}")?;
                    }
                }
                f.write_str("})")
            }
        }
    }
}
