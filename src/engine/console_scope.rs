//! `console -scope=module.net[0]` (Terraform 1.16, hashicorp/terraform#38820):
//! the console evaluates in a module instance — its variables (what its
//! call gives them, evaluated where the call is, down from the root), its
//! locals and its resources as the state (or a plan) holds them. A scope
//! that is not a module instance the configuration makes is an error.

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

fn invalid(text: &str, detail: String) -> Diags {
    Diags::from(Diag::new(
        "strata::console::scope",
        format!("Invalid scope {text:?}"),
        detail,
    ))
}

/// The module instance `text` names, with `root`'s variables given.
pub fn instance<'m>(
    text: &str,
    (root, root_vars): (&'m Module, BTreeMap<String, Value>),
    objects: &ConsoleObjects,
    run: &Rc<Run>,
) -> Result<Scoped<'m>, Diags> {
    let Some(path) = ModulePath::parse(text).filter(|p| !p.is_root()) else {
        let detail = "A scope is a module instance's address, such as module.network or module.pools[\"h100\"].".to_string();
        return Err(invalid(text, detail));
    };
    let mut at = Scoped {
        module: root,
        vars: root_vars,
        known: objects.in_module(&ModulePath::root()),
    };
    let mut here = ModulePath::root();
    for step in path.steps() {
        let Some(call) = at.module.module_calls.iter().find(|c| c.name == step.call) else {
            let detail = format!(
                "{here_text}calls no module {:?}.",
                step.call,
                here_text = where_(&here)
            );
            return Err(invalid(text, detail));
        };
        let vars = inputs(&at, call, step.key.as_ref(), run).map_err(|d| match d {
            Some(d) => Diags::from(d),
            None => invalid(text, format!("{text} is not an instance the configuration makes: check the module call's count or for_each.")),
        })?;
        here = here.child(&call.name, step.key.clone());
        at = Scoped {
            module: &call.module,
            vars,
            known: objects.in_module(&here),
        };
    }
    Ok(at)
}

fn where_(path: &ModulePath) -> String {
    match path.is_root() {
        true => "The root module ".to_string(),
        false => format!("{path} "),
    }
}

/// The variables of `call`'s instance `key`, as the call gives them
/// where it is (`at`); `None` when the call makes no such instance.
fn inputs(
    at: &Scoped<'_>,
    call: &ModuleCall,
    key: Option<&InstanceKey>,
    run: &Rc<Run>,
) -> Result<BTreeMap<String, Value>, Option<Diag>> {
    let mut scope = ConfigScope::new(at.module, at.vars.clone(), run.clone()).knowing(&at.known);
    let exists = instance_of(&scope, at.module, call, key).map_err(Some)?;
    let Some((count_index, each)) = exists else {
        return Err(None);
    };
    scope.count_index = count_index;
    scope.each = each;
    let mut vars = BTreeMap::new();
    for decl in &call.module.variables {
        let given = call.inputs.iter().find(|a| a.name == decl.name);
        let raw = match given {
            Some(a) => {
                let v = Evaluator::new(&scope, at.module.dir.clone()).eval(&a.expr);
                Some((v.map_err(Some)?, a.expr.span))
            }
            None => None,
        };
        let v = variables::input(&call.module, decl, raw, &call.name, vars.clone());
        vars.insert(decl.name.clone(), v.map_err(Some)?);
    }
    Ok(vars)
}

/// What `count.index` and `each` are in `call`'s instance `key`, when the
/// call makes it.
type Repetition = (Option<Value>, Option<(Value, Value)>);

fn instance_of(
    scope: &ConfigScope<'_>,
    module: &Module,
    call: &ModuleCall,
    key: Option<&InstanceKey>,
) -> Result<Option<Repetition>, Diag> {
    let eval = |e| Evaluator::new(scope, module.dir.clone()).eval(e);
    match (key, &call.count, &call.for_each) {
        (None, None, None) => Ok(Some((None, None))),
        (Some(InstanceKey::Int(i)), Some(c), _) => {
            let n = config::repeat::count(&eval(c)?, c.span)?.unwrap_or(0);
            let i = i64::try_from(*i).unwrap_or(i64::MAX);
            Ok((i < n).then(|| (Some(Value::int(i)), None)))
        }
        (Some(InstanceKey::Str(k)), _, Some(f)) => {
            let items = config::repeat::for_each(&eval(f)?, f.span)?.unwrap_or_default();
            Ok(items
                .into_iter()
                .find(|(name, _)| name == k)
                .map(|(name, v)| (None, Some((Value::String(name), v)))))
        }
        _ => Ok(None),
    }
}
