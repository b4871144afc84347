//! `check` blocks: each check's data sources are read and its assertions
//! evaluated after a plan and after an apply; a false one is a warning, as
//! in Terraform, never an error. After an apply a failing check is looked
//! at again for a while (`settle`), because controllers converge after
//! their objects are written: a GPU Operator's ClusterPolicy reports
//! `ready` minutes after its release is installed.

use super::decode::decode;
use super::providers::configure_deferred;
use super::resolve::resolve;
use super::walker::Walk;
use crate::builtin::Drivers;
use crate::config::{Check, Module, Resource};
use crate::diag::{Diag, Diags};
use crate::lang::value::Value;
use std::time::Duration;
use strata_state::model::{ModulePath, ResourceAddr};

/// Every check of every module instance; the warnings of those that fail
/// (after `settle` at most, when given).
/// `pending` says whether a check's data source (by its address in the
/// configuration, `module.m.data.t.n`) waits for a planned change: its
/// check is then left for the apply.
pub async fn run(
    root: &Module,
    walk: &Walk<'_>,
    drivers: &Drivers,
    settle: Option<Duration>,
    pending: &dyn Fn(&ResourceAddr) -> bool,
) -> Vec<Diag> {
    let mut modules = Vec::new();
    collect(root, ModulePath::root(), &mut modules);
    if modules.iter().all(|(_, m)| m.checks.is_empty()) {
        return Vec::new();
    }
    let started = tokio::time::Instant::now();
    let mut pause = Duration::from_millis(500);
    loop {
        let mut failing = Vec::new();
        for (path, m) in &modules {
            for instance in walk.module_instances(path) {
                for c in &m.checks {
                    let waits = m
                        .resources
                        .iter()
                        .filter(|r| r.check.as_deref() == Some(&c.name))
                        .any(|r| pending(&r.addr_in(path)));
                    if !waits {
                        let at = Place {
                            module: path,
                            instance: &instance,
                            config: m,
                        };
                        failing.extend(one(root, walk, drivers, at, c).await);
                    }
                }
            }
        }
        match settle {
            Some(limit) if !failing.is_empty() && started.elapsed() + pause < limit => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(15));
            }
            _ => return failing,
        }
    }
}

fn collect<'m>(m: &'m Module, path: ModulePath, out: &mut Vec<(ModulePath, &'m Module)>) {
    for c in &m.module_calls {
        collect(&c.module, path.child(&c.name, None), out);
    }
    out.push((path, m));
}

/// One instance of a module: the configuration's module path, the
/// instance's, and the module.
#[derive(Clone, Copy)]
struct Place<'p> {
    module: &'p ModulePath,
    instance: &'p ModulePath,
    config: &'p Module,
}

/// One check in one module instance: its data sources read, its
/// assertions evaluated.
async fn one(
    root: &Module,
    walk: &Walk<'_>,
    drivers: &Drivers,
    at: Place<'_>,
    c: &Check,
) -> Vec<Diag> {
    let place = if at.instance.is_root() {
        format!("check \"{}\"", c.name)
    } else {
        format!("check \"{}\" of {}", c.name, at.instance)
    };
    for r in at
        .config
        .resources
        .iter()
        .filter(|r| r.check.as_deref() == Some(&c.name))
    {
        match read(root, walk, drivers, at, r).await {
            Ok(v) => walk.set(at.instance, &r.address(), v),
            Err(d) => {
                return vec![Diag::new(
                    "strata::check::data",
                    "Check block data source could not be read",
                    format!("{place}: {}", d.detail),
                )
                .or_at(r.span)
                .warning()]
            }
        }
    }
    let mut out = Vec::new();
    for a in &c.asserts {
        let verdict = walk.eval_module(at.module, at.instance, |ev| ev.eval(&a.condition));
        let holds = match verdict {
            Some(Ok(v)) => match v.unmarked() {
                Value::Bool(b) => *b,
                // Not known yet (after apply): nothing to say.
                _ => true,
            },
            Some(Err(d)) => {
                out.push(d.warning());
                continue;
            }
            None => true,
        };
        if holds {
            continue;
        }
        let message = walk
            .eval_module(at.module, at.instance, |ev| ev.eval(&a.error_message))
            .and_then(Result::ok)
            .and_then(|v| v.unmarked().as_str().map(str::to_string))
            .unwrap_or_else(|| "the condition is false".to_string());
        out.push(
            Diag::new(
                "strata::check::failed",
                "Check block assertion failed",
                format!("{place}: {message}"),
            )
            .at(a.condition.span)
            .warning(),
        );
    }
    out
}

/// A check's data source, read now; unknown when its configuration or its
/// provider's is not known yet.
async fn read(
    root: &Module,
    walk: &Walk<'_>,
    drivers: &Drivers,
    at: Place<'_>,
    r: &Resource,
) -> Result<Value, Diag> {
    let Some((base, schema)) = drivers.data(&r.type_name) else {
        return Err(Diag::new(
            "strata::check::data",
            "Invalid data source",
            super::unserved_detail(r, Some(root)),
        ));
    };
    let what = || r.addr_in(at.instance).to_string();
    let provider = resolve(root, at.module, r, base.as_ref())?.instance(
        walk,
        (at.module, at.instance, None),
        drivers,
        &what,
    )?;
    if !configure_deferred(root, walk, drivers, &provider)? {
        return Ok(Value::Unknown(schema.object_type()));
    }
    let mut d = Diags::default();
    let config = walk
        .eval_module(at.module, at.instance, |ev| {
            decode(&r.body, schema, ev, r.span, &mut d)
        })
        .unwrap_or_else(Value::unknown);
    if let Some(e) = d.0.into_iter().next() {
        return Err(e);
    }
    if !config.is_wholly_known() {
        return Ok(Value::Unknown(schema.object_type()));
    }
    let (driver, _) = drivers
        .configured(&r.type_name, &provider, crate::config::Mode::Data)
        .ok_or_else(|| Diag::new("strata::check::data", "No driver", r.type_name.clone()))?;
    driver
        .read_data(&r.type_name, &config)
        .await
        .map_err(|e| Diag::new("strata::check::data", "Read failed", e.to_string()))
}
