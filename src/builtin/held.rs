//! Provider configurations held for their first use: the run evaluates
//! every `provider` block before anything else, but a driver that costs
//! something to configure (a plugin's process) is configured when the
//! walk first needs it, as Terraform's provider nodes are, so that twenty
//! aliases are not twenty processes alive at once. Asked before a
//! configuration's first call, its refusal is told once, at its block.

use crate::diag::{Diag, Span};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use strata_provider::{Driver, DriverError};

/// The configurations waiting, by the driver instance's identity and the
/// configuration's address.
#[derive(Default)]
pub(super) struct Holding(RwLock<BTreeMap<(usize, String), Held>>);

struct Held {
    /// Where its `provider` block is (none for an implied default).
    block: Option<Span>,
    refused: bool,
}

impl Holding {
    pub(super) fn hold(&self, key: (usize, String), block: Option<Span>) {
        if let Ok(mut all) = self.0.write() {
            let refused = false;
            all.insert(key, Held { block, refused });
        }
    }

    /// Configures `driver` if its configuration is held: `Err(Some)` the
    /// first time it is refused, at its block; `Err(None)` after that, for
    /// calls that have nothing more to say.
    pub(super) fn ready(
        &self,
        key: (usize, String),
        driver: &Arc<dyn Driver>,
    ) -> Result<(), Option<Diag>> {
        match self
            .0
            .read()
            .ok()
            .and_then(|all| all.get(&key).map(|h| h.refused))
        {
            None => return Ok(()),
            Some(true) => return Err(None),
            Some(false) => {}
        }
        // Not held locked while configuring: a process starts. Two calls
        // at once both ask the driver, which configures once.
        let configured = driver.ready();
        let Ok(mut all) = self.0.write() else {
            return configured.map_err(|_| None);
        };
        let e = match configured {
            Ok(()) => {
                all.remove(&key);
                return Ok(());
            }
            Err(e) => e,
        };
        let Some(held) = all.get_mut(&key).filter(|h| !h.refused) else {
            return Err(None);
        };
        held.refused = true;
        Err(Some(refused(driver.name(), &e, held.block)))
    }
}

/// A configuration its driver `name` refused, at its block when it has one.
pub fn refused(name: &str, e: &DriverError, block: Option<Span>) -> Diag {
    let d = Diag::new(
        "strata::provider::configure",
        format!("Invalid {name} provider configuration"),
        e.to_string(),
    );
    match block {
        Some(span) => d.at(span),
        None => d,
    }
}
