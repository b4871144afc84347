//! The `random` provider (hashicorp/random): values generated once, on
//! create, and kept in state until the `keepers` change. Values come from
//! the operating system's generator, or, where a type takes a `seed`,
//! from a generator seeded by it (the same seed gives the same value
//! here, though not the value Go's generator gives in the real provider).

mod id;
mod numbers;
mod pet;
mod string;

use crate::common::{failed, replacing_map};
use crate::provider::Provider;
use rand::rngs::StdRng;
use rand::SeedableRng;
use sha2::{Digest, Sha256};
use strata_provider::{AttributeSchema, DriverError};

pub(crate) fn provider() -> Provider {
    Provider::new("random", "hashicorp/random")
        .resource("random_string", string::RandomString::string())
        .resource("random_password", string::RandomString::password())
        .resource("random_id", id::RandomId)
        .resource("random_uuid", id::RandomUuid)
        .resource("random_pet", pet::RandomPet)
        .resource("random_integer", numbers::RandomInteger)
        .resource("random_shuffle", numbers::RandomShuffle)
        .ephemeral("random_password", string::EphemeralPassword)
}

fn keepers() -> (&'static str, AttributeSchema) {
    (
        "keepers",
        replacing_map("Values that generate a new value when they change."),
    )
}

/// The generator for a `seed`; empty or absent, one seeded from the
/// operating system (a failure to get randomness is the type's error).
fn generator(type_name: &str, seed: Option<&str>) -> Result<StdRng, DriverError> {
    match seed.filter(|s| !s.is_empty()) {
        Some(s) => Ok(StdRng::from_seed(Sha256::digest(s.as_bytes()).into())),
        None => StdRng::from_rng(rand::rngs::OsRng)
            .map_err(|e| failed(type_name, "create", format!("no randomness available: {e}"))),
    }
}
