//! strata's state: the model (Terraform's format version 4 layout) and the
//! backends that keep it. The rules every backend keeps:
//! - lock before any write, and say who holds a lock;
//! - a write is whole or absent (temp file, fsync, rename), the previous
//!   version kept as a backup, files private to their owner;
//! - during an apply every finished operation is durable at once through an
//!   append-only journal, folded into the state when the run ends and
//!   replayed if it did not.
//!
//! This crate knows nothing of configuration, plans or drivers.

mod error;
pub mod journal;
pub mod local;
pub mod model;

pub use error::StateError;
pub use journal::{Entry, Replay};
pub use local::{Journal, Loaded, LocalStore, Lock, LockInfo};
pub use model::{
    Address, Attributes, InstanceKey, InstanceState, Mode, OutputState, ResourceId, ResourceState,
    State,
};
