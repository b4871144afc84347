//! Action invocations a plan holds (Terraform 1.14): an `action` block's
//! instance, its configuration as evaluated and planned, and what
//! triggered it, for the apply to invoke.

use crate::config::{ActionEvent, ActionOnFailure};
use crate::lang::value::Value;
use strata_state::model::Address;

#[derive(Debug, Clone)]
pub struct ActionInvocation {
    /// `action.TYPE.NAME`, with its key when the block repeats.
    pub addr: String,
    pub type_name: String,
    pub name: String,
    /// The provider configuration that invokes it,
    /// `provider["registry.terraform.io/hashicorp/aws"]`.
    pub provider: String,
    /// The `config` block, evaluated: wholly known for `-invoke` and the
    /// destroy events; unknown parts of others are known again at apply.
    pub config: Value,
    pub trigger: Trigger,
}

/// What asked for an invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// `-invoke` on the command line.
    Cli,
    /// A managed resource's `lifecycle { action_trigger }`.
    Lifecycle(Lifecycle),
}

/// Which `action_trigger` of which resource instance, on which event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifecycle {
    pub resource: Address,
    pub event: ActionEvent,
    /// The `action_trigger` block's index among the resource's.
    pub block: usize,
    /// The action's index in that block's `actions`.
    pub index: usize,
    pub on_failure: ActionOnFailure,
}

impl ActionInvocation {
    /// How Terraform's lines name it: `action.x.y (triggered by CLI)`,
    /// `action.x.y (triggered by aws_instance.a)`.
    pub fn said(&self) -> String {
        match &self.trigger {
            Trigger::Cli => format!("{} (triggered by CLI)", self.addr),
            Trigger::Lifecycle(l) => format!("{} (triggered by {})", self.addr, l.resource),
        }
    }

    /// The lifecycle trigger, when a resource's change invokes it.
    pub fn lifecycle(&self) -> Option<&Lifecycle> {
        match &self.trigger {
            Trigger::Lifecycle(l) => Some(l),
            Trigger::Cli => None,
        }
    }
}

/// Terraform's names for the events and failure modes, as its plan JSON
/// and machine-readable UI write them.
pub fn event_name(e: ActionEvent) -> &'static str {
    match e {
        ActionEvent::BeforeCreate => "BeforeCreate",
        ActionEvent::AfterCreate => "AfterCreate",
        ActionEvent::BeforeUpdate => "BeforeUpdate",
        ActionEvent::AfterUpdate => "AfterUpdate",
        ActionEvent::BeforeDestroy => "BeforeDestroy",
        ActionEvent::AfterDestroy => "AfterDestroy",
    }
}

pub fn event_from(name: &str) -> Option<ActionEvent> {
    [
        ActionEvent::BeforeCreate,
        ActionEvent::AfterCreate,
        ActionEvent::BeforeUpdate,
        ActionEvent::AfterUpdate,
        ActionEvent::BeforeDestroy,
        ActionEvent::AfterDestroy,
    ]
    .into_iter()
    .find(|e| event_name(*e) == name)
}

pub fn on_failure_name(f: ActionOnFailure) -> &'static str {
    match f {
        ActionOnFailure::Halt => "ActionOnFailureHalt",
        ActionOnFailure::Taint => "ActionOnFailureTaint",
        ActionOnFailure::Continue => "ActionOnFailureContinue",
    }
}

pub fn on_failure_from(name: &str) -> Option<ActionOnFailure> {
    [
        ActionOnFailure::Halt,
        ActionOnFailure::Taint,
        ActionOnFailure::Continue,
    ]
    .into_iter()
    .find(|f| on_failure_name(*f) == name)
}

/// Whether `e` fires before its resource's change (else after).
pub fn is_before(e: ActionEvent) -> bool {
    matches!(
        e,
        ActionEvent::BeforeCreate | ActionEvent::BeforeUpdate | ActionEvent::BeforeDestroy
    )
}

pub fn is_destroy(e: ActionEvent) -> bool {
    matches!(e, ActionEvent::BeforeDestroy | ActionEvent::AfterDestroy)
}
