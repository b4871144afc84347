//! Terraform's provider plugin protocol, versions 5 and 6 (issue 25).
//!
//! - `proto`: the messages and stubs, generated from `proto/*.proto`.
//! - `handshake`, `tls`, `launch`: go-plugin's handshake, AutoMTLS and
//!   process handling, as its client does them.
//! - `client`: a running provider's RPCs, one API for both versions.
//! - `msgpack`: values as cty's msgpack encoding, which every RPC carries.
//! - `serve` (feature `server`): the plugin side of the handshake, for the
//!   test provider (`testing/provider`).

mod action;
pub mod client;
pub mod convert;
pub mod describe;
pub mod driver;
mod ephemeral;
pub mod handshake;
mod identity;
mod import;
mod kept;
mod kinds;
pub mod launch;
mod list;
pub mod msgpack;
mod packed;
pub mod proposed;
pub mod proto;
mod runtime;
pub mod schema;
mod schema_cache;
#[cfg(feature = "server")]
pub mod serve;
pub mod tls;
mod wire;
mod write_only;

pub use client::{Provider, RpcError};
pub use driver::{Known, PluginDriver};
pub use launch::{Launch, LaunchError};
pub use schema_cache::SchemaCache;

/// The Terraform version strata tells providers it is (ConfigureProvider):
/// the language version it implements, which providers check features by.
pub const TERRAFORM_VERSION: &str = "1.11.4";
