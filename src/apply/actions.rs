//! Actions a resource's change triggers (`lifecycle { action_trigger }`,
//! Terraform 1.14), invoked around its driver call: the before events
//! first (a failure stops the change), the after events once the object
//! is made, each as its `on_failure` says — `halt` fails the instance
//! (the object made stays as made), `taint` taints a new object, and
//! `continue` makes the failure a warning (always, in a destroy run).

use super::progress::Progress;
use crate::config::{ActionEvent, ActionOnFailure};
use crate::diag::Diag;
use crate::plan::ActionInvocation;
use crate::ui::ActionStep;
use std::sync::Arc;
use strata_provider::{ActionRequest, Driver};

/// An invocation with its configuration final, and the driver that
/// invokes it.
pub struct Invoke {
    pub invocation: ActionInvocation,
    pub driver: Arc<dyn Driver>,
}

/// The actions an op invokes before and after its driver call.
#[derive(Default)]
pub struct Triggered {
    pub before: Vec<Invoke>,
    pub after: Vec<Invoke>,
    pub failures: Failures,
}

/// What a failed action does to the run.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
pub enum Failures {
    /// As each trigger's `on_failure` says.
    #[default]
    AsConfigured,
    /// Warnings, whatever they say: nothing may block a destroy run.
    Warnings,
}

/// A failure that ends the instance: the error, and whether the object
/// made is to be tainted.
pub struct Halted {
    pub error: Diag,
    pub taint: bool,
}

/// How many actions were invoked, and how many of them failed.
#[derive(Debug, Default, Clone, Copy)]
pub struct Invocations {
    pub invoked: usize,
    pub failed: usize,
}

impl Invocations {
    pub fn add(&mut self, more: Invocations) {
        self.invoked += more.invoked;
        self.failed += more.failed;
    }
}

/// What invoking a list of actions came to: the counts, warnings for the
/// failures that let the run go on, or the one that stops it.
pub struct Invoked {
    pub invoked: Invocations,
    pub warnings: Vec<Diag>,
    pub halted: Option<Halted>,
}

/// Invokes `list` in order; the first failure whose `on_failure` is not
/// `continue` ends it. In a destroy run nothing may block the destroy:
/// every failure is a warning, as in Terraform.
pub(super) async fn invoke(list: &[Invoke], progress: Progress, failures: Failures) -> Invoked {
    let mut done = Invoked {
        invoked: Invocations::default(),
        warnings: Vec::new(),
        halted: None,
    };
    for one in list {
        done.invoked.invoked += 1;
        let Err(why) = invoke_one(one, progress).await else {
            continue;
        };
        done.invoked.failed += 1;
        let a = &one.invocation;
        let summary = format!("Invoking {} failed", a.said());
        let diag = Diag::new("strata::apply::action", summary, why);
        let (on_failure, event) = a.lifecycle().map_or((ActionOnFailure::Halt, None), |l| {
            (l.on_failure, Some(l.event))
        });
        if failures == Failures::Warnings || on_failure == ActionOnFailure::Continue {
            done.warnings.push(diag.warning());
            continue;
        }
        done.halted = Some(Halted {
            // Only a new object can be made again from scratch.
            taint: on_failure == ActionOnFailure::Taint && event == Some(ActionEvent::AfterCreate),
            error: diag,
        });
        break;
    }
    done
}

/// One invocation, each step said as it comes; the driver's error text
/// when it fails.
async fn invoke_one(one: &Invoke, progress: Progress) -> Result<(), String> {
    let a = Arc::new(one.invocation.clone());
    progress.action(&a, ActionStep::Started);
    let said = a.clone();
    let told: strata_provider::Progress =
        Box::new(move |m| progress.action(&said, ActionStep::Progress(&m)));
    let req = ActionRequest {
        type_name: &a.type_name,
        config: &a.config,
    };
    match one.driver.invoke_action(req, told).await {
        Ok(()) => {
            progress.action(&a, ActionStep::Complete);
            Ok(())
        }
        Err(e) => {
            let why = e.to_string();
            progress.action(&a, ActionStep::Errored(&why));
            Err(why)
        }
    }
}

impl<'p> super::Exec<'_, 'p> {
    /// The plan's invocations that `c`'s change triggers on the events
    /// `pick` takes, in their blocks' and lists' order.
    pub(super) fn planned_actions(
        &self,
        c: &crate::plan::ResourceChange,
        pick: fn(ActionEvent) -> bool,
    ) -> Vec<&'p ActionInvocation> {
        let plan: &'p crate::plan::Plan = self.req.plan;
        let mut mine: Vec<&'p ActionInvocation> = plan
            .actions
            .iter()
            .filter(|a| {
                a.lifecycle()
                    .is_some_and(|l| l.resource == c.addr && pick(l.event))
            })
            .collect();
        mine.sort_by_key(|a| a.lifecycle().map(|l| (l.block, l.index)));
        mine
    }

    /// Each invocation with the driver that invokes it.
    pub(super) fn invokes(&self, list: Vec<ActionInvocation>) -> Result<Vec<Invoke>, String> {
        list.into_iter()
            .map(|invocation| {
                let driver = self
                    .req
                    .drivers
                    .by_address(&invocation.provider)
                    .ok_or_else(|| {
                        format!(
                            "no driver serves {}, which invokes {}",
                            invocation.provider, invocation.addr
                        )
                    })?;
                Ok(Invoke { invocation, driver })
            })
            .collect()
    }

    /// The destroy events' invocations of `c` (configured at plan), around
    /// its delete.
    pub(super) fn destroy_actions(
        &self,
        c: &crate::plan::ResourceChange,
    ) -> Result<Triggered, String> {
        let before = self.planned_actions(c, |e| e == ActionEvent::BeforeDestroy);
        let after = self.planned_actions(c, |e| e == ActionEvent::AfterDestroy);
        Ok(Triggered {
            before: self.invokes(before.into_iter().cloned().collect())?,
            after: self.invokes(after.into_iter().cloned().collect())?,
            failures: self.failures(),
        })
    }

    /// How failed actions count in this run.
    pub(super) fn failures(&self) -> Failures {
        match self.req.plan.mode.is_destroy() {
            true => Failures::Warnings,
            false => Failures::AsConfigured,
        }
    }
}
