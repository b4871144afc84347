//! Resource schemas, with the attribute roles Terraform providers declare.

use std::collections::{BTreeMap, BTreeSet};
use strata_value::types::{ObjectType, Type};

#[derive(Debug, Clone, PartialEq)]
pub struct ResourceSchema {
    /// Bumped when the stored attribute layout changes; kept in state.
    pub version: u64,
    pub attributes: BTreeMap<String, AttributeSchema>,
    pub blocks: BTreeMap<String, BlockSchema>,
}

impl ResourceSchema {
    /// A schema of attributes only.
    pub fn of_attributes(attributes: Vec<(&str, AttributeSchema)>) -> ResourceSchema {
        ResourceSchema {
            version: 0,
            attributes: attributes
                .into_iter()
                .map(|(k, a)| (k.to_string(), a))
                .collect(),
            blocks: BTreeMap::new(),
        }
    }

    /// The object type of an instance: every attribute, and every block as
    /// an object, a list, a set or a map of objects.
    pub fn object_type(&self) -> Type {
        let mut attrs: BTreeMap<String, Type> = self
            .attributes
            .iter()
            .map(|(k, a)| (k.clone(), a.ty.clone()))
            .collect();
        for (k, b) in &self.blocks {
            attrs.insert(k.clone(), b.value_type());
        }
        Type::object(attrs)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AttributeSchema {
    pub ty: Type,
    pub required: bool,
    pub optional: bool,
    /// Set by the driver (alone, or when the configuration leaves it out if
    /// also optional).
    pub computed: bool,
    /// A change to it cannot be made in place.
    pub force_new: bool,
    /// Redacted in every rendering.
    pub sensitive: bool,
    /// A nested attribute of Terraform's protocol 6 (an object type of
    /// its own): written as an argument only, never as blocks, unlike
    /// the list-of-object attributes older providers declare.
    pub nested: bool,
    /// Sent to the provider from the configuration and never kept: a
    /// provider plugin's write-only attribute (always null in plans and
    /// state), the one kind of resource argument an ephemeral value may
    /// set.
    pub write_only: bool,
    /// The provider means to remove it: generated configuration leaves
    /// it out, as Terraform's does.
    pub deprecated: bool,
    pub description: &'static str,
}

impl AttributeSchema {
    fn base(ty: Type, description: &'static str) -> AttributeSchema {
        AttributeSchema {
            ty,
            required: false,
            optional: false,
            computed: false,
            force_new: false,
            sensitive: false,
            nested: false,
            write_only: false,
            deprecated: false,
            description,
        }
    }
    pub fn required(ty: Type, description: &'static str) -> AttributeSchema {
        AttributeSchema {
            required: true,
            ..AttributeSchema::base(ty, description)
        }
    }
    pub fn optional(ty: Type, description: &'static str) -> AttributeSchema {
        AttributeSchema {
            optional: true,
            ..AttributeSchema::base(ty, description)
        }
    }
    pub fn computed(ty: Type, description: &'static str) -> AttributeSchema {
        AttributeSchema {
            computed: true,
            ..AttributeSchema::base(ty, description)
        }
    }
    /// Optional, and set by the driver when the configuration leaves it out.
    pub fn and_computed(mut self) -> AttributeSchema {
        self.computed = true;
        self
    }
    pub fn force_new(mut self) -> AttributeSchema {
        self.force_new = true;
        self
    }
    pub fn sensitive(mut self) -> AttributeSchema {
        self.sensitive = true;
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockNesting {
    Single,
    List,
    Set,
    /// Labelled blocks (`rule "NAME" { … }`), a map by label.
    Map,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BlockSchema {
    pub nesting: BlockNesting,
    pub min_items: usize,
    pub max_items: Option<usize>,
    pub schema: ResourceSchema,
    /// Optional and computed: a block the configuration leaves out is the
    /// API's (GKE's release channel), kept from the prior object rather
    /// than planned away.
    pub computed: bool,
    /// The provider means to remove it (a plugin's word; native types
    /// have none): generated configuration leaves it out.
    pub deprecated: bool,
}

impl BlockSchema {
    /// The type of all the blocks of this type in one object: one object,
    /// or a list, set or map of them; of any type when they are loose.
    pub fn value_type(&self) -> Type {
        let o = self.schema.object_type();
        match self.nesting {
            _ if self.loose() => Type::Dynamic,
            BlockNesting::Single => o,
            BlockNesting::List => Type::list(o),
            BlockNesting::Set => Type::set(o),
            BlockNesting::Map => Type::map(o),
        }
    }

    /// Whether the blocks are a tuple (nested as a list) or an object
    /// keyed by label (as a map) rather than a collection: Terraform's
    /// typing when an attribute in them may be of any type, so that each
    /// block may hold a value of a type of its own.
    pub fn loose(&self) -> bool {
        matches!(self.nesting, BlockNesting::List | BlockNesting::Map)
            && self.schema.object_type().has_dynamic()
    }

    /// The same block, left to the API when the configuration omits it.
    pub fn and_computed(self) -> BlockSchema {
        BlockSchema {
            computed: true,
            ..self
        }
    }
}

/// A managed resource type's identity schema (protocol 6.9): the
/// attributes that tell its objects apart, versioned apart from the
/// resource's own schema.
#[derive(Debug, Clone, PartialEq)]
pub struct IdentitySchema {
    pub version: u64,
    pub attributes: BTreeMap<String, IdentityAttribute>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct IdentityAttribute {
    pub ty: Type,
    /// An `import` block's `identity` must give it.
    pub required_for_import: bool,
    /// An `import` block's `identity` may give it.
    pub optional_for_import: bool,
    pub description: String,
}

impl IdentitySchema {
    /// The type of an identity object.
    pub fn object_type(&self) -> Type {
        Type::object(
            self.attributes
                .iter()
                .map(|(k, a)| (k.clone(), a.ty.clone()))
                .collect(),
        )
    }

    /// The type an `import` block's `identity` is converted to: every
    /// attribute not required for import may be left out (Terraform's
    /// `ConfigType` of the identity schema).
    pub fn import_type(&self) -> Type {
        let optional: BTreeSet<String> = self
            .attributes
            .iter()
            .filter(|(_, a)| !a.required_for_import)
            .map(|(k, _)| k.clone())
            .collect();
        Type::Object(std::sync::Arc::new(ObjectType {
            attrs: self
                .attributes
                .iter()
                .map(|(k, a)| (k.clone(), a.ty.clone()))
                .collect(),
            optional,
        }))
    }
}
