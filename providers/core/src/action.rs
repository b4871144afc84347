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

/// Where an invocation's progress messages go, each as it comes.
pub type Progress = Box<dyn Fn(String) + Send + Sync>;

/// How an invocation ended: `Err` says why it failed (what it said
/// before, through its [`Progress`], still stands).
pub type Invoked = Result<(), DriverError>;
