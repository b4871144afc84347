//! Actions (protocol 6.11, Terraform 1.14): something a provider does that
//! leaves no object behind — drain a node before its capacity ends, call a
//! function — planned, then invoked with its progress reported.

use crate::DriverError;
use strata_value::value::Value;

/// One action to plan or invoke: its type and its `config` block, of the
/// action schema's type.
#[derive(Debug, Clone, Copy)]
pub struct ActionRequest<'a> {
    pub type_name: &'a str,
    pub config: &'a Value,
}

/// What an invocation said as it went, in order, and how it ended.
#[derive(Debug)]
pub struct Invoked {
    pub progress: Vec<String>,
    /// Why it failed, when it did (what it said before still stands).
    pub failure: Option<DriverError>,
}
