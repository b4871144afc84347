//! Test doubles: what a test (`override_resource`, `override_data`,
//! `override_module`) puts in place of single objects and module calls.
//! The plan and the apply ask here, by address, before they ask a
//! driver; outside `strata test` there are none.

use std::sync::Arc;
use strata_provider::Driver;
use strata_state::model::{Address, ModulePath};
use strata_value::value::Attrs;

/// A test's stand-ins, by address.
pub trait Doubles: Send + Sync {
    /// The driver that serves instance `addr` in place of `real` (the
    /// driver its provider configuration would use), when one does.
    fn driver_at(&self, addr: &Address, real: &Arc<dyn Driver>) -> Option<Arc<dyn Driver>>;

    /// Whether instance `addr` has a stand-in: its object is never read
    /// back through its provider.
    fn stands_in(&self, addr: &Address) -> bool;

    /// The outputs module instance `path` gives in place of everything
    /// in it, when the test overrides the call (an output it does not
    /// name is null).
    fn module_outputs(&self, path: &ModulePath) -> Option<Attrs>;
}
