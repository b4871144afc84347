//! Planning one resource instance: the step the planner takes for every
//! instance, and the apply takes again for each one it changes, once what
//! the configuration references is known. One function, so the apply can
//! never plan differently from the plan it checks itself against.

use super::diff::{decide, keep_all, keep_prior, path_of, Decision};
use super::{Action, Reason};
use crate::config::Lifecycle;
use crate::lang::value::Value;
use strata_provider::{Driver, DriverError, Kept, PlanRequest, Planned, ResourceSchema};

/// The prior object an instance is planned against.
#[derive(Debug, Clone, Copy)]
pub struct Prior<'a> {
    pub value: &'a Value,
    /// What its driver keeps beside it (a plugin provider's private data
    /// and the object's identity).
    pub kept: &'a Kept,
    /// A failed create left it: it is replaced whatever the plan says.
    pub tainted: bool,
}

/// What one instance is planned from.
pub struct InstanceRequest<'a> {
    pub driver: &'a dyn Driver,
    pub type_name: &'a str,
    pub schema: &'a ResourceSchema,
    pub lifecycle: &'a Lifecycle,
    /// The body decoded against the schema (`decode`).
    pub config: Value,
    pub prior: Option<Prior<'a>>,
    /// A `replace_triggered_by` reference changes.
    pub triggered: bool,
    /// `-replace` names this instance.
    pub requested: bool,
}

/// One instance planned.
#[derive(Debug, Clone)]
pub struct PlannedInstance {
    /// The configuration after `ignore_changes` kept the prior's values
    /// (as written, for a replacement).
    pub config: Value,
    /// The driver's plan; for a replacement, planned as a new object so
    /// nothing of the old one (its id) carries over.
    pub planned: Planned,
    pub decision: Decision,
}

/// `ignore_changes`, the driver's plan and the action, for one instance.
pub fn plan_instance(req: InstanceRequest<'_>) -> Result<PlannedInstance, DriverError> {
    let prior = req.prior.map(|p| p.value);
    let nothing = Kept::default();
    let prior_kept = req.prior.map_or(&nothing, |p| p.kept);
    let forced = forced(&req);
    let ignores = req.lifecycle.ignore_all_changes || !req.lifecycle.ignore_changes.is_empty();
    // As written, for a replacement: ignore_changes keeps an existing
    // object's values, and the new object has none (Terraform plans it
    // from the configuration alone too).
    let written = (ignores && prior.is_some()).then(|| req.config.clone());
    let config = ignore_changes(req.config, prior, req.lifecycle);
    let plan = |prior: Option<&Value>, config: &Value| {
        req.driver.plan(PlanRequest {
            type_name: req.type_name,
            prior,
            config,
            prior_kept: if prior.is_some() {
                prior_kept
            } else {
                &nothing
            },
        })
    };
    let planned = plan(prior, &config)?;
    let mut decision = decide(
        prior,
        &config,
        &planned,
        req.schema,
        req.lifecycle.create_before_destroy,
        forced,
    );
    // `destroy = false`: a replacement leaves the old object where it is
    // and forgets it, as OpenTofu does and Terraform does for a tainted
    // one (its `CreateThenForget`).
    if decision.action.is_replace() && req.lifecycle.skip_destroy {
        decision.action = Action::CreateThenForget;
    }
    if !decision.action.is_replace() {
        return Ok(PlannedInstance {
            config,
            planned,
            decision,
        });
    }
    let config = written.unwrap_or(config);
    let planned = match plan(None, &config) {
        Ok(p) => Planned {
            requires_replace: planned.requires_replace,
            ..p
        },
        Err(_) => planned,
    };
    Ok(PlannedInstance {
        config,
        planned,
        decision,
    })
}

/// Why the instance is replaced whatever its attributes say, if it is:
/// a tainted object first, then the user's `-replace`, then
/// `replace_triggered_by`. A tainted object the cloud cannot delete (a
/// purchase whose create "failed" after it was made) is kept: replacing it
/// would buy another while it stays (the plan warns of it instead).
fn forced(req: &InstanceRequest<'_>) -> Option<Reason> {
    let prior = req.prior?;
    let lasting = || req.driver.lasting(req.type_name, prior.value).is_some();
    [
        (prior.tainted && !lasting(), Reason::Tainted),
        (req.requested, Reason::ReplaceByRequest),
        (req.triggered, Reason::ReplaceTriggered),
    ]
    .into_iter()
    .find_map(|(yes, why)| yes.then_some(why))
}

/// The configuration with the prior's values where `lifecycle`'s
/// `ignore_changes` says the configuration does not decide.
fn ignore_changes(config: Value, prior: Option<&Value>, lifecycle: &Lifecycle) -> Value {
    match prior {
        Some(p) if lifecycle.ignore_all_changes => keep_all(config, p),
        Some(p) => lifecycle
            .ignore_changes
            .iter()
            .fold(config, |c, e| match path_of(e) {
                Some(path) => keep_prior(c, p, &path),
                None => c,
            }),
        None => config,
    }
}
