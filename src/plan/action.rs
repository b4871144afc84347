//! Action invocations a plan holds (Terraform 1.14): an `action` block's
//! instance, its configuration as evaluated and planned, and what
//! triggered it, for the apply to invoke.

use crate::lang::value::Value;

#[derive(Debug, Clone)]
pub struct ActionInvocation {
    /// `action.TYPE.NAME`, with its key when the block repeats.
    pub addr: String,
    pub type_name: String,
    pub name: String,
    /// The provider configuration that invokes it,
    /// `provider["registry.terraform.io/hashicorp/aws"]`.
    pub provider: String,
    /// The `config` block, evaluated: wholly known.
    pub config: Value,
    pub trigger: Trigger,
}

/// What asked for an invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// `-invoke` on the command line.
    Cli,
}

impl ActionInvocation {
    /// How Terraform's lines name it: `action.x.y (triggered by CLI)`.
    pub fn said(&self) -> String {
        match self.trigger {
            Trigger::Cli => format!("{} (triggered by CLI)", self.addr),
        }
    }
}
