//! strata's state: the model (Terraform's format version 4 layout), the
//! [`Backend`] trait every place that keeps state implements, and the
//! [`Store`] that keeps the rules for all of them:
//! - lock before any write, and say who holds a lock;
//! - a write is whole or absent, the previous version kept as a backup,
//!   and it fails rather than overwrite a version it did not read;
//! - during an apply every finished operation is durable at once through an
//!   append-only journal, folded into the state when the run ends and
//!   replayed if it did not.
//!
//! The local file backend lives here; the S3 and PostgreSQL ones are
//! crates of their own (`state/s3`, `state/pg`) so that their clients
//! build only where they are used. `conformance` is the suite every
//! backend passes. This crate knows nothing of configuration, plans or
//! drivers.

mod addr;
mod adopt;
mod backend;
#[cfg(feature = "conformance")]
pub mod conformance;
mod error;
mod filelock;
pub mod history;
pub mod journal;
pub mod local;
pub mod model;
mod sealed;
mod split;
mod store;

pub use addr::{
    as_text, provider_of_config, provider_parts, provider_source, split_provider_instance, Address,
    InstanceKey, Mode, ModulePath, ModuleStep, ResourceAddr,
};
pub use adopt::{adopt, Adopted, Adoption};
pub use backend::{
    on_own_thread, Acquired, Backend, FileStamp, JournalAfter, LockInfo, LockKind, Reread, Stored,
    Version,
};
pub use error::StateError;
pub use journal::{open_intents, Entry, Replay};
pub use local::{Layout, LocalBackend};
pub use model::{
    Attributes, InstanceState, Location, OutputState, Placed, PlacementFailure, PoolPlacement,
    ResourceState, State,
};
pub use store::{parse, Early, Journal, Loaded, Lock, Store};
pub use strata_encryption as encryption;
