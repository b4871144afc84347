//! The walk stage: evaluating a configuration's graph against the drivers,
//! shared by plan and apply.
//!
//! [`Walk`] evaluates the graph's nodes in dependency order once per module
//! instance, keeping each value where later references find it; [`decode`]
//! turns a resource body into the object its schema describes; provider
//! configurations are evaluated before anything calls a driver
//! ([`configure`]), or when the walk reaches what they use
//! ([`configure_deferred`]), and a plugin's process lives from a little
//! before the walk's first resource of its configuration to its last
//! ([`Lifetimes`]); `check` blocks are judged after a walk
//! ([`run_checks`]); [`check_schemas`] is `validate`'s offline decode of
//! every block; [`Ephemerals`] holds the ephemeral resources a walk opens
//! until it closes them. Nothing here decides an action: that is the plan
//! stage's.

mod checks;
mod closing;
mod decode;
mod ephemeral;
mod functions;
mod lifetime;
mod problems;
mod providers;
mod resolve;
mod schemas;
mod walker;

pub use checks::run as run_checks;
pub use closing::Closing;
pub use decode::{decode, decode_config, decode_known};
pub use ephemeral::{CloseFailed, EphemeralSaid, EphemeralStep, Ephemerals, Tell};
pub use functions::Functions;
pub use lifetime::Lifetimes;
pub use problems::{close_failed, diags as provider_problems, validate_failed};
pub use providers::{block_driver, configure, configure_deferred};
pub use resolve::{instance_address, missing_instance, resolve, Resolution};
pub use schemas::{check as check_schemas, unserved_detail, write_only};
pub use walker::{InstanceCtx, Keys, ResourceInstances, Walk};
