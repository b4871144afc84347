//! What a query found (Terraform keeps it in a plan's changes, apart
//! from resources): per `list` block instance, the objects its provider
//! listed and, when asked, the configuration that adopts them.

use crate::lang::value::Value;
use std::path::PathBuf;
use strata_provider::Listed;

/// What one list block instance found.
#[derive(Debug)]
pub struct ListFound {
    /// `list.TYPE.NAME`, with its key when the block repeats.
    pub address: String,
    pub type_name: String,
    /// The block's `config`, as evaluated and sent.
    pub config: Value,
    /// The version of the type's identity schema the identities are of.
    pub identity_version: u64,
    pub found: Vec<Listed>,
    /// The generated blocks for each object found, in order, when asked.
    pub generated: Vec<Generated>,
}

/// The configuration written for one object found.
#[derive(Debug, Clone)]
pub struct Generated {
    pub resource: String,
    pub import: String,
}

/// What a query did.
#[derive(Debug)]
pub struct Queried {
    pub lists: Vec<ListFound>,
    /// Where `-generate-config-out` wrote, when it wrote.
    pub written: Option<PathBuf>,
}
