//! The console's scope over a state: a module instance's variables (what
//! its call gives them, evaluated where the call is, down from the root),
//! its locals, its resources as the state (or a plan) holds them, and its
//! module calls' outputs (each child evaluated the same way), as
//! Terraform's console evaluates them. `console -scope=module.net[0]`
//! (Terraform 1.16, hashicorp/terraform#38820) starts in that instance; a
//! scope the configuration does not make is an error.

use super::show::{ConsoleObjects, StateValues};
use crate::config::{self, variables, ConfigScope, Module, ModuleCall, Run};
use crate::diag::{Diag, Diags};
use crate::eval::Evaluator;
use crate::lang::value::Value;
use std::collections::BTreeMap;
use std::rc::Rc;
use strata_state::model::{InstanceKey, ModulePath};

/// Where the console evaluates: a module, its variables, its objects.
pub struct Scoped<'m> {
    pub module: &'m Module,
    pub vars: BTreeMap<String, Value>,
    pub known: StateValues,
}

/// What the console needs to evaluate anywhere: the objects and the run.
pub struct Over<'o> {
    pub objects: &'o ConsoleObjects,
    pub run: &'o Rc<Run>,
    pub missing: Missing,
}

/// What a repeated resource is when the objects hold no instance of it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Not known: the objects may predate it (a state read as it is).
    Unknown,
    /// None: the objects are what a whole plan or apply made (a test
    /// run's), so it has no instances.
    Empty,
}

impl Over<'_> {
    /// The objects of module instance `path`, which runs `module`.
    fn known_in(&self, module: &Module, path: &ModulePath) -> StateValues {
        let known = self.objects.in_module(path);
        match self.missing {
            Missing::Unknown => known,
            Missing::Empty => known.with_none_of(module),
        }
    }
}

fn invalid(text: &str, detail: String) -> Diags {
    Diags::from(Diag::new(
        "strata::console::scope",
        format!("Invalid scope {text:?}"),
        detail,
    ))
}

/// The root module's scope, its module calls' outputs known.
pub fn root<'m>(root: &'m Module, vars: BTreeMap<String, Value>, over: &Over<'_>) -> Scoped<'m> {
    let here = ModulePath::root();
    with_calls(
        Scoped {
            module: root,
            vars,
            known: over.known_in(root, &here),
        },
        &here,
        over,
    )
}

/// The module instance `text` names, starting from `root`'s scope.
pub fn instance<'m>(text: &str, root: Scoped<'m>, over: &Over<'_>) -> Result<Scoped<'m>, Diags> {
    let Some(path) = ModulePath::parse(text).filter(|p| !p.is_root()) else {
        let detail = "A scope is a module instance's address, such as module.network or module.pools[\"h100\"].".to_string();
        return Err(invalid(text, detail));
    };
    let mut at = root;
    let mut here = ModulePath::root();
    for step in path.steps() {
        let Some(call) = at.module.module_calls.iter().find(|c| c.name == step.call) else {
            let detail = format!("{}calls no module {:?}.", where_(&here), step.call);
            return Err(invalid(text, detail));
        };
        let found = instances(&at, call, over.run).map_err(Diags::from)?;
        let Some((_, repetition)) = found
            .into_iter()
            .find(|(k, _)| k.as_ref() == step.key.as_ref())
        else {
            let detail = format!("{text} is not an instance the configuration makes: check the module call's count or for_each.");
            return Err(invalid(text, detail));
        };
        let vars = inputs(&at, call, repetition, over.run).map_err(Diags::from)?;
        here = here.child(&call.name, step.key.clone());
        at = with_calls(
            Scoped {
                module: &call.module,
                vars,
                known: over.known_in(&call.module, &here),
            },
            &here,
            over,
        );
    }
    Ok(at)
}

fn where_(path: &ModulePath) -> String {
    match path.is_root() {
        true => "The root module ".to_string(),
        false => format!("{path} "),
    }
}

/// `at` with each of its module calls known as its instances' outputs
/// (unknown where a child cannot be evaluated over the state).
fn with_calls<'m>(mut at: Scoped<'m>, here: &ModulePath, over: &Over<'_>) -> Scoped<'m> {
    for call in &at.module.module_calls {
        let value = call_value(&at, call, here, over).unwrap_or_else(|_| Value::unknown());
        at.known = std::mem::take(&mut at.known).knowing(format!("module.{}", call.name), value);
    }
    at
}

/// `module.NAME` where `at` is: one object of outputs, or a tuple or an
/// object of them by instance.
fn call_value(
    at: &Scoped<'_>,
    call: &ModuleCall,
    here: &ModulePath,
    over: &Over<'_>,
) -> Result<Value, Diag> {
    let found = instances(at, call, over.run)?;
    let mut by_key = Vec::new();
    for (key, repetition) in found {
        let vars = inputs(at, call, repetition, over.run)?;
        let path = here.child(&call.name, key.clone());
        let child = with_calls(
            Scoped {
                module: &call.module,
                vars,
                known: over.known_in(&call.module, &path),
            },
            &path,
            over,
        );
        by_key.push((key, outputs(&child, over.run)));
    }
    Ok(match (&call.count, &call.for_each) {
        (Some(_), _) => Value::Tuple(by_key.into_iter().map(|(_, v)| v).collect()),
        (_, Some(_)) => Value::Object(
            by_key
                .into_iter()
                .filter_map(|(k, v)| match k {
                    Some(InstanceKey::Str(s)) => Some((s, v)),
                    _ => None,
                })
                .collect(),
        ),
        _ => by_key.pop().map(|(_, v)| v).unwrap_or_else(Value::null),
    })
}

/// A module instance's outputs, each evaluated in its scope.
fn outputs(at: &Scoped<'_>, run: &Rc<Run>) -> Value {
    let scope = ConfigScope::new(at.module, at.vars.clone(), run.clone()).knowing(&at.known);
    let values = at.module.outputs.iter().map(|o| {
        let v = Evaluator::new(&scope, at.module.dir.clone()).eval(&o.expr);
        let v = v.unwrap_or_else(|_| Value::unknown());
        (o.name.clone(), v.mark_if(o.sensitive))
    });
    Value::Object(values.collect())
}

/// What `count.index` and `each` are in one instance of a call.
type Repetition = (Option<Value>, Option<(Value, Value)>);

/// The instances `call` makes where `at` is, by key.
fn instances(
    at: &Scoped<'_>,
    call: &ModuleCall,
    run: &Rc<Run>,
) -> Result<Vec<(Option<InstanceKey>, Repetition)>, Diag> {
    let scope = ConfigScope::new(at.module, at.vars.clone(), run.clone()).knowing(&at.known);
    let eval = |e| Evaluator::new(&scope, at.module.dir.clone()).eval(e);
    Ok(match (&call.count, &call.for_each) {
        (Some(c), _) => {
            let n = config::repeat::count(&eval(c)?, c.span)?.unwrap_or(0);
            (0..n)
                .map(|i| {
                    let key = InstanceKey::Int(u64::try_from(i).unwrap_or(0));
                    (Some(key), (Some(Value::int(i)), None))
                })
                .collect()
        }
        (_, Some(f)) => config::repeat::for_each(&eval(f)?, f.span)?
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| {
                let each = (Value::String(k.clone()), v);
                (Some(InstanceKey::Str(k)), (None, Some(each)))
            })
            .collect(),
        _ => vec![(None, (None, None))],
    })
}

/// The variables of one instance of `call` (`count.index` and `each` as
/// `repetition` says), as the call gives them where `at` is.
fn inputs(
    at: &Scoped<'_>,
    call: &ModuleCall,
    (count_index, each): Repetition,
    run: &Rc<Run>,
) -> Result<BTreeMap<String, Value>, Diag> {
    let mut scope = ConfigScope::new(at.module, at.vars.clone(), run.clone()).knowing(&at.known);
    scope.count_index = count_index;
    scope.each = each;
    let mut vars = BTreeMap::new();
    for decl in &call.module.variables {
        let given = call.inputs.iter().find(|a| a.name == decl.name);
        let raw = match given {
            Some(a) => {
                let v = Evaluator::new(&scope, at.module.dir.clone()).eval(&a.expr)?;
                Some((v, a.expr.span))
            }
            None => None,
        };
        let v = variables::input(&call.module, decl, raw, &call.name, vars.clone())?;
        vars.insert(decl.name.clone(), v);
    }
    Ok(vars)
}
