//! The offline utility providers Terraform configurations use everywhere
//! (`random`, `null`, `time`, `local`), built into strata as drivers:
//! they need no cloud and no plugin download, and they keep the
//! providers' type names, attribute names, defaults, replacement rules and
//! stored layout (schema versions included), so a state the real
//! provider wrote plans no changes here and the other way round.
//!
//! Each provider is a [`provider::Provider`]: a table of types, each
//! implementing [`provider::Resource`] or [`provider::DataSource`].

mod archive;
mod cloudinit;
mod common;
mod external;
mod http;
mod local;
mod null;
mod provider;
mod random;
mod time;
mod tls;

use std::sync::Arc;
use strata_provider::Driver;

/// Every utility provider, one driver each.
pub fn providers() -> Vec<Arc<dyn Driver>> {
    vec![
        Arc::new(random::provider()),
        Arc::new(null::provider()),
        Arc::new(time::provider()),
        Arc::new(local::provider()),
        Arc::new(cloudinit::provider()),
        Arc::new(external::provider()),
        Arc::new(http::provider()),
        Arc::new(archive::provider()),
        Arc::new(tls::provider()),
    ]
}
