//! List resources (protocol 6.10, Terraform 1.14's `query`): a provider
//! asked for the objects it finds of a managed resource type, each told
//! by its identity, for a user to adopt what was made by hand.

use strata_value::value::Value;

/// What a `list` block asks of its provider.
#[derive(Debug, Clone, Copy)]
pub struct ListRequest<'a> {
    /// The managed resource type whose objects are listed.
    pub type_name: &'a str,
    /// The block's `config` block, of the list schema's type (every
    /// attribute null when the block has none).
    pub config: &'a Value,
    /// Whether each result is to carry the whole object.
    pub include_resource: bool,
    /// The most results wanted.
    pub limit: u64,
}

/// One object a list found.
#[derive(Debug, Clone)]
pub struct Listed {
    /// Its identity, of the type's identity schema, as JSON.
    pub identity: serde_json::Value,
    /// What a person would call it.
    pub display_name: String,
    /// The object itself, when it was asked for.
    pub object: Option<Value>,
}
