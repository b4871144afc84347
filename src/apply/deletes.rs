//! Phases 1 and 3: deleting objects, each after the deletes of everything
//! that depends on it (by the dependencies state records).

use super::op::OpKind;
use super::record::remove;
use super::runner::{Op, OpError, Provision, Runner};
use super::schedule::{Edge, Schedule};
use super::Exec;
use crate::diag::Diag;
use crate::diag::Diags;
use crate::lang::value::Value;
use crate::plan::ResourceChange;
use std::collections::HashMap;
use std::sync::Arc;
use strata_provider::Driver;
use strata_state::model::ResourceAddr;

/// One object to delete: a change's current object, or its deposed one.
pub struct Doomed<'p> {
    pub change: &'p ResourceChange,
    pub deposed: Option<String>,
}

/// `after` waits for `before` where `before`'s object depends on
/// `after`'s resource: dependents go first.
fn order(doomed: &[Doomed<'_>]) -> Vec<Edge> {
    let mut by_config: HashMap<ResourceAddr, Vec<usize>> = HashMap::new();
    for (i, d) in doomed.iter().enumerate() {
        by_config.entry(d.change.config_addr()).or_default().push(i);
    }
    let mut edges = Vec::new();
    for (before, d) in doomed.iter().enumerate() {
        for dep in &d.change.dependencies {
            for &after in by_config.get(dep).into_iter().flatten() {
                edges.push(Edge { before, after });
            }
        }
    }
    edges
}

impl<'p> Exec<'_, 'p> {
    pub(super) async fn deletes(
        &mut self,
        runner: &mut Runner,
        doomed: Vec<Doomed<'p>>,
    ) -> Result<(), Diags> {
        let mut schedule = Schedule::new(doomed.len(), order(&doomed));
        while !schedule.is_done() {
            while let Some(i) = schedule.next_ready() {
                if let Err(failed) = self.start_delete(runner, &doomed[i], i, &schedule) {
                    schedule.finish(i, failed);
                }
            }
            if schedule.is_done() {
                break;
            }
            let done = runner.next().await;
            if done.is_empty() {
                break;
            }
            let mut batch = Vec::new();
            let mut finished = Vec::new();
            for r in done {
                let Doomed { change, deposed } = &doomed[r.op];
                self.report.invoked.add(r.invoked);
                self.report.warnings.extend(r.notes);
                match r.result {
                    Ok(_) => {
                        batch.push(remove(change, deposed.clone()));
                        // Every object deleted is counted where it goes,
                        // so a replacement whose create then fails still
                        // reports its destroy.
                        self.report.destroyed += 1;
                        // An action after it that halts fails it; what
                        // depends on it stays.
                        let halted = r.halted.is_some();
                        if let Some(h) = r.halted {
                            self.fail(&change.addr, h.error);
                        }
                        finished.push((r.op, halted));
                    }
                    Err(e) => {
                        self.fail(&change.addr, e);
                        finished.push((r.op, true));
                    }
                }
            }
            self.record.commit(batch)?;
            for (i, failed) in finished {
                schedule.finish(i, failed);
            }
        }
        Ok(())
    }

    /// Starts deleting `d`, or says it will not be (`Err(failed)`): a
    /// dependent failed to go, so it must stay, or it has no driver.
    fn start_delete(
        &mut self,
        runner: &mut Runner,
        d: &Doomed<'p>,
        id: usize,
        schedule: &Schedule,
    ) -> Result<(), bool> {
        let c = d.change;
        if schedule.is_poisoned(id) || self.broken.contains(&c.addr) && d.deposed.is_none() {
            self.report.skipped.push(c.addr.clone());
            return Err(true);
        }
        let driver = self.delete_driver(c).map_err(|why| {
            self.fail(&c.addr, why);
            true
        })?;
        let provisions = self.destroy_provisions(c).map_err(|d| {
            let why = OpError::from(d);
            self.fail(&c.addr, why);
            true
        })?;
        let actions = self.destroy_actions(c).map_err(|why| {
            self.fail(&c.addr, why);
            true
        })?;
        // Terraform names a deposed object's delete by its key too.
        let addr = match &d.deposed {
            Some(key) => format!("{} (deposed object {key})", c.addr),
            None => c.addr.to_string(),
        };
        runner.start(Op {
            id,
            kind: OpKind::Delete,
            addr,
            driver,
            type_name: c.addr.id.type_name.clone(),
            prior: c.before.clone().unwrap_or_else(Value::null),
            wanted: None,
            config: Value::null(),
            kept: c.kept_before.clone(),
            provisions,
            provisioned_next: false,
            actions,
        });
        Ok(())
    }

    /// The destroy-time provisioners of `c`'s resource, with `self` its
    /// object; none when the configuration no longer has the resource
    /// (as in Terraform: they live in its block).
    fn destroy_provisions(&self, c: &ResourceChange) -> Result<Vec<Provision>, Diag> {
        let req = self.req;
        let id = c.config_addr();
        let (Some(r), Some(module), Some(object)) = (
            self.blocks.get(&id),
            req.root.module_at(&id.module),
            c.before.as_ref(),
        ) else {
            return Ok(Vec::new());
        };
        let provisions =
            super::provisioning::destroying(r, module, &req.run, object, c.addr.key.as_ref())?;
        if !provisions.is_empty() && without_provisioners(c) {
            return Ok(Vec::new());
        }
        Ok(provisions)
    }

    fn delete_driver(&self, c: &ResourceChange) -> Result<Arc<dyn Driver>, String> {
        if self.req.drivers.deferred(&c.provider).is_some() {
            return Err(format!("its provider configuration ({}) uses values known only later in this apply, so it cannot be deleted before them; apply the change that makes them known first", c.provider));
        }
        self.driver(c)
            .ok_or_else(|| "no driver for this resource type".to_string())
    }
}

/// Whether `c`'s object is destroyed without its destroy-time
/// provisioners, as Terraform destroys it: a tainted object (what they
/// undo may never have been done), whether it is replaced, destroyed or
/// dropped from the configuration; and a deposed one (the old object of a
/// `create_before_destroy` replacement, or one an earlier run left
/// deposed), which Terraform destroys without them
/// (hashicorp/terraform#31266).
fn without_provisioners(c: &ResourceChange) -> bool {
    c.tainted
        || c.reason == Some(crate::plan::Reason::Tainted)
        || c.deposed.is_some()
        || c.action == crate::plan::Action::CreateThenDelete
}
