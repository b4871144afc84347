//! The commands that read a state or a saved plan and show it: `show`,
//! `state show`, and the values `console` evaluates over.

use super::apply::saved_plan;
use super::plan::{planned, Planned, Planning};
use super::session::Operation;
use super::view::View;
use super::Options;
use crate::builtin::Drivers;
use crate::config;
use crate::diag::{Diag, Diags, Sources};
use crate::lang::value::Value;
use crate::statecmd::state_err;
use std::collections::BTreeMap;
use std::path::Path;
use strata_state::model::{ModulePath, OutputState};
use strata_state::Store;

/// A state read and decoded for showing.
/// A state decoded by its drivers' schemas, as `show` shows it.
pub struct Decoded {
    /// Each object, by its driver's schema.
    pub objects: Vec<crate::plan::ResourceChange>,
    /// The outputs, by their recorded types.
    pub outputs: Vec<crate::plan::OutputChange>,
    /// Whether there was a state at all (none: "No state.").
    pub existed: bool,
}

/// What `show` found, for the printer to render.
pub enum Showing {
    /// A saved plan.
    Plan(Box<crate::plan::Plan>),
    /// The workspace's state, with the schemas its objects are laid out by.
    State {
        state: Decoded,
        schemas: crate::plan::Schemas,
    },
}

/// One instance of the state, as `state show` prints it.
pub struct StateObject {
    pub object: crate::plan::ResourceChange,
    pub schemas: crate::plan::Schemas,
}

fn shown_state(store: &Store, drivers: &Drivers) -> Result<Decoded, Diags> {
    let loaded = store.load().map_err(state_err)?;
    // A state only a killed run's journal holds is a state all the same.
    let existed = loaded.existed || loaded.replay.applied > 0;
    let state = loaded.state;
    Ok(Decoded {
        objects: crate::plan::state_objects(&state, drivers)?,
        outputs: state_outputs(&state.outputs),
        existed,
    })
}

/// The state's outputs, each as a change that changes nothing.
pub fn state_outputs(outputs: &BTreeMap<String, OutputState>) -> Vec<crate::plan::OutputChange> {
    outputs
        .iter()
        .map(|(name, o)| {
            let value = crate::lang::json::type_from_json(&o.ty)
                .and_then(|t| crate::lang::json::value_from_json(&o.value, &t))
                .ok();
            crate::plan::OutputChange {
                name: name.clone(),
                before: value.clone(),
                after: value,
                sensitive: o.sensitive,
            }
        })
        .collect()
}

/// The root module's resources as a state holds them, by the address an
/// expression names them with (`aws_vpc.main`, `data.t.n`): one object,
/// or the instances by index (a tuple) or key (an object). The console
/// evaluates over them, as Terraform's does.
#[derive(Default)]
pub struct StateValues(BTreeMap<String, Value>);

impl StateValues {
    /// With `local_addr` (`module.net`) known as `value`.
    pub(super) fn knowing(mut self, local_addr: String, value: Value) -> StateValues {
        self.0.insert(local_addr, value);
        self
    }

    /// With every repeated resource of `module` that has no instance here
    /// an empty tuple (`count`) or object (`for_each`): what a whole plan
    /// or apply that made none of them leaves, as Terraform sees it.
    pub fn with_none_of(mut self, module: &config::Module) -> StateValues {
        for r in &module.resources {
            let empty = match (&r.count, &r.for_each) {
                (Some(_), _) => Value::Tuple(Vec::new()),
                (_, Some(_)) => Value::Object(Default::default()),
                _ => continue,
            };
            self.0.entry(r.address()).or_insert(empty);
        }
        self
    }
}

impl config::Known for StateValues {
    fn get(&self, local_addr: &str) -> Option<Value> {
        self.0.get(local_addr).cloned()
    }
}

/// Objects for the console, each module instance's read as its own
/// expressions name them ([`ConsoleObjects::in_module`]).
#[derive(Default)]
pub struct ConsoleObjects(Vec<crate::plan::ResourceChange>);

impl ConsoleObjects {
    /// The objects of module instance `module` (the root's: empty).
    pub fn in_module(&self, module: &ModulePath) -> StateValues {
        console_values(self.0.iter(), module)
    }
}

/// The state `store` holds, decoded for the console.
pub fn state_values(store: &Store, drivers: &Drivers) -> Result<ConsoleObjects, Diags> {
    let Decoded { objects, .. } = shown_state(store, drivers)?;
    let live = objects.into_iter().filter(|c| c.deposed.is_none());
    Ok(ConsoleObjects(live.collect()))
}

/// What a plan of the configuration at `path` would leave, for `console
/// -plan`: each object as planned (unknown where the plan cannot know),
/// what the plan leaves alone as the state holds it.
pub fn planned_values(
    path: &Path,
    opts: &Options,
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<ConsoleObjects, Diags> {
    let how = Planning::plain(Operation::Plan);
    let Planned { session, plan } = planned(path, how, opts, view, sources, drivers)?;
    session.close(view);
    Ok(ConsoleObjects(kept(&plan).cloned().collect()))
}

/// What `plan` would leave, what it leaves alone as the state holds it.
fn kept(plan: &crate::plan::Plan) -> impl Iterator<Item = &crate::plan::ResourceChange> {
    plan.changes.iter().chain(&plan.untouched).filter(|c| {
        c.deposed.is_none()
            && !matches!(
                c.action,
                crate::plan::Action::Delete | crate::plan::Action::Forget
            )
    })
}

/// The objects as `plan` would leave them (unknown where it cannot
/// know), for a test run's assertions.
pub(super) fn plan_objects(plan: &crate::plan::Plan) -> ConsoleObjects {
    ConsoleObjects(kept(plan).cloned().collect())
}

/// The objects and outputs of the state in `store`.
pub(super) fn state_and_outputs(
    store: &Store,
    drivers: &Drivers,
) -> Result<(ConsoleObjects, Vec<crate::plan::OutputChange>), Diags> {
    let Decoded {
        objects, outputs, ..
    } = shown_state(store, drivers)?;
    let live = objects.into_iter().filter(|c| c.deposed.is_none());
    Ok((ConsoleObjects(live.collect()), outputs))
}

/// Module instance `module`'s objects by the address an expression there
/// names them with: one object, or the instances by index (a tuple) or
/// key (an object).
fn console_values<'c>(
    objects: impl Iterator<Item = &'c crate::plan::ResourceChange>,
    module: &ModulePath,
) -> StateValues {
    use strata_state::model::InstanceKey;
    let mut grouped: BTreeMap<String, Vec<(Option<InstanceKey>, Value)>> = BTreeMap::new();
    for c in objects.filter(|c| c.addr.id.module == *module) {
        let id = &c.addr.id;
        let name = id.local();
        let value = c
            .after
            .clone()
            .or_else(|| c.before.clone())
            .unwrap_or_else(Value::null);
        grouped
            .entry(name)
            .or_default()
            .push((c.addr.key.clone(), value));
    }
    let values = grouped
        .into_iter()
        .map(|(name, mut instances)| {
            let value = match instances.first().map(|(k, _)| k.clone()) {
                Some(Some(InstanceKey::Int(_))) => {
                    instances.sort_by(|a, b| a.0.cmp(&b.0));
                    Value::Tuple(instances.into_iter().map(|(_, v)| v).collect())
                }
                Some(Some(InstanceKey::Str(_))) => Value::Object(
                    instances
                        .into_iter()
                        .filter_map(|(k, v)| match k {
                            Some(InstanceKey::Str(s)) => Some((s, v)),
                            _ => None,
                        })
                        .collect(),
                ),
                _ => instances.pop().map(|(_, v)| v).unwrap_or_else(Value::null),
            };
            (name, value)
        })
        .collect();
    StateValues(values)
}

/// `strata state show ADDR`: one instance, and how to lay it out.
pub fn state_show(store: &Store, addr: &str, drivers: &Drivers) -> Result<StateObject, Diags> {
    let Decoded {
        objects, existed, ..
    } = shown_state(store, drivers)?;
    if !existed {
        return Err(crate::statecmd::no_state());
    }
    let wanted = strata_state::model::Address::parse(addr);
    let found = objects.iter().filter(|c| c.deposed.is_none()).find(|c| {
        wanted.as_ref().is_some_and(|a| {
            a.id == c.addr.id
                && (a.key == c.addr.key
                    || (a.key.is_none()
                        && objects.iter().filter(|o| o.addr.id == a.id).count() == 1))
        })
    });
    let schemas = crate::plan::Schemas::gather(found, drivers);
    found
        .map(|c| StateObject {
            object: c.clone(),
            schemas,
        })
        .ok_or_else(|| {
            Diags::from(Diag::new(
                "strata::state::no_instance",
                "No instance found for the given address",
                format!(
                    "The state holds no instance {addr}. `strata state list` shows what it holds."
                ),
            ))
        })
}

/// `strata show [PLANFILE]`: the saved plan, else the workspace's state.
pub fn show(
    planfile: Option<&Path>,
    state: Option<&Path>,
    workspace: &str,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Showing, Diags> {
    match planfile {
        Some(f) if !f.exists() => Err(Diags::from(Diag::new(
            "strata::show",
            format!("No such file: {}", f.display()),
            "Give a file written by `strata plan --out FILE`.",
        ))),
        Some(f) => {
            let saved = saved_plan(f, drivers, sources)?.ok_or_else(|| {
                Diags::from(Diag::new(
                    "strata::show",
                    format!("{} is not a plan file", f.display()),
                    "Give a file written by `strata plan --out`.",
                ))
            })?;
            Ok(Showing::Plan(Box::new(saved.plan)))
        }
        None => {
            let store = crate::backends::open_here(state, workspace, sources)?;
            let state = shown_state(&store, drivers)?;
            let schemas = crate::plan::Schemas::gather(&state.objects, drivers);
            Ok(Showing::State { state, schemas })
        }
    }
}
