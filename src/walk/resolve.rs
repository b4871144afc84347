//! Which provider configuration a block uses: its `provider` argument (or
//! the default one its type implies), followed up through each module
//! call's `providers` map to the root's `provider` blocks. With OpenTofu's
//! provider `for_each` the reference names one instance of a
//! configuration by a key expression (`aws.by_region[each.key]`), so the
//! address is known only per instance of the block, or of the module
//! call that passes it.

use super::walker::{InstanceCtx, Walk};
use crate::builtin::{provider_address, Drivers};
use crate::config::{Module, ProviderRef, Resource, Run};
use crate::diag::Diag;
use crate::lang::convert::convert;
use crate::lang::types::Type;
use crate::lang::value::Value;
use crate::syntax::Expr;
use std::collections::BTreeMap;
use std::rc::Rc;
use strata_state::model::{Address, InstanceKey, ModulePath};

/// The address of instance `key` of the provider configuration at
/// `config`: `provider["…"].by_region["us-east-1"]`, as OpenTofu writes it.
pub fn instance_address(config: &str, key: &str) -> String {
    format!("{config}{}", InstanceKey::Str(key.to_string()))
}

/// The key expression choosing an instance, and where it is written.
#[derive(Clone, Copy)]
struct KeyChoice<'a> {
    expr: &'a Expr,
    /// Whether it is written in a root module call's `providers` (else in
    /// the block's own `provider` argument).
    in_call: bool,
}

/// A block's provider configuration: one address, or an instance of a
/// configuration with `for_each`, chosen per instance of the block.
pub struct Resolution<'a> {
    /// The configuration's address, as state records it.
    address: String,
    key: Option<KeyChoice<'a>>,
}

impl Resolution<'_> {
    /// The address, when every instance uses the same configuration.
    pub fn single(&self) -> Option<&str> {
        self.key.is_none().then_some(self.address.as_str())
    }

    /// The configuration's address, whichever instance of it is chosen.
    pub fn configuration(&self) -> &str {
        &self.address
    }

    /// The address of the configuration instance `(path, ctx)` of a
    /// block of the configuration's module `module` uses, which must
    /// exist; `what` names the instance in an error (spelled only then:
    /// a plan asks this of every instance).
    pub fn instance(
        &self,
        walk: &Walk<'_>,
        (module, path, ctx): (&ModulePath, &ModulePath, Option<&InstanceCtx>),
        drivers: &Drivers,
        what: &dyn Fn() -> String,
    ) -> Result<String, Diag> {
        self.choose(drivers, what, |k| match k.in_call {
            false => walk.eval_at(module, path, ctx, |ev| ev.eval(k.expr)),
            true => {
                let first = path.steps().first();
                let call = first.map(|s| ModulePath::root().child(&s.call, s.key.clone()));
                call.and_then(|c| walk.eval_in_caller(&c, |ev| ev.eval(k.expr)))
            }
        })
    }

    /// As [`Resolution::instance`] outside a walk (an import of a root
    /// resource's instance `addr`): the key evaluated in the root module,
    /// with `count.index` or `each.key` from the address (`each.value`
    /// unknown).
    pub fn instance_in_root(
        &self,
        root: &Module,
        (vars, run): (&BTreeMap<String, Value>, &Rc<Run>),
        addr: &Address,
        drivers: &Drivers,
    ) -> Result<String, Diag> {
        let what = addr.to_string();
        self.choose(drivers, &|| what.clone(), |k| {
            if k.in_call {
                let detail = format!("The provider instance {what} uses is chosen by its module call; import it with an import block, planned with the rest of the configuration.");
                return Some(Err(invalid_key(detail, k.expr)));
            }
            let ctx = InstanceCtx::orphan(addr.key.clone());
            let mut scope = crate::config::ConfigScope::new(root, vars.clone(), run.clone());
            ctx.bind(&mut scope);
            Some(scope.evaluator().eval(k.expr))
        })
    }

    /// The address of the instance the key (evaluated by `eval`) chooses.
    fn choose(
        &self,
        drivers: &Drivers,
        what: &dyn Fn() -> String,
        eval: impl FnOnce(&KeyChoice<'_>) -> Option<Result<Value, Diag>>,
    ) -> Result<String, Diag> {
        let Some(k) = self.key else {
            return Ok(self.address.clone());
        };
        let v = eval(&k).unwrap_or_else(|| Ok(Value::unknown()))?;
        let key = instance_key(&v, k.expr, what)?;
        let address = instance_address(&self.address, &key);
        if drivers.by_address(&address).is_none() {
            let detail = format!("The provider configuration {} has no instance with the key {key:?}: its for_each has no such element.", self.address);
            return Err(invalid_key(detail, k.expr));
        }
        Ok(address)
    }
}

fn invalid_key(detail: String, e: &Expr) -> Diag {
    Diag::new(
        "strata::provider::instance_key",
        "Invalid provider instance key",
        detail,
    )
    .at(e.span)
}

/// The instance key a key expression's value gives, held to OpenTofu's
/// rules: known, not null, not sensitive, a string (numbers and bools
/// converted).
fn instance_key(v: &Value, e: &Expr, what: &dyn Fn() -> String) -> Result<String, Diag> {
    let said = |detail: &str| invalid_key(detail.to_string(), e);
    if v.is_sensitive() {
        return Err(said(
            "A provider instance key must not be derived from a sensitive value.",
        ));
    }
    if !v.is_known() {
        let what = what();
        return Err(invalid_key(format!("The provider instance key for {what} depends on values that cannot be determined until apply, and so strata cannot select a provider instance to create a plan for this resource instance."), e));
    }
    if v.is_null() {
        return Err(said("A provider instance key must not be null."));
    }
    match convert(v.unmarked(), &Type::String) {
        Ok(Value::String(s)) => Ok(s),
        Ok(_) => Err(said(
            "The given instance key is unsuitable: a string is required.",
        )),
        Err(e2) => Err(invalid_key(
            format!("The given instance key is unsuitable: {e2}."),
            e,
        )),
    }
}

/// The provider configuration that a block of `driver` in the
/// configuration's module `module` uses: its `provider` argument or the
/// default one, followed up through each module call's `providers` map to
/// the root's `provider` blocks.
pub fn resolve<'a>(
    root: &'a Module,
    module: &ModulePath,
    r: &'a Resource,
    driver: &dyn strata_provider::Driver,
) -> Result<Resolution<'a>, Diag> {
    let mut chain = Vec::new();
    let mut m = root;
    for step in module.steps() {
        let Some(call) = m.module_calls.iter().find(|c| c.name == step.call) else {
            break;
        };
        chain.push(call);
        m = &call.module;
    }
    let mut named: Option<&'a ProviderRef> = r.provider.as_ref();
    let name_of = |p: Option<&'a ProviderRef>| match p {
        Some(p) => (p.name.clone(), p.alias.clone()),
        None => (driver.name().to_string(), None),
    };
    let shown = |(name, alias): &(String, Option<String>)| match alias {
        Some(a) => format!("{name}.{a}"),
        None => name.clone(),
    };
    for call in chain.iter().rev() {
        let (name, alias) = name_of(named);
        let passed = call
            .providers
            .iter()
            .find(|(k, _)| k.name == name && k.alias == alias);
        match passed {
            Some((_, parent)) => named = Some(parent),
            None if alias.is_none() => {}
            None => {
                let local = shown(&(name.clone(), alias));
                return Err(Diag::new(
                    "strata::provider::not_passed",
                    "Provider configuration not passed to the module",
                    format!("A resource of module.{} uses the provider configuration {local}, which the module call does not pass: add it to the call's providers argument, e.g. providers = {{ {local} = {name}.<alias> }}.", call.name),
                )
                .at(call.span));
            }
        }
    }
    let (name, alias) = name_of(named);
    if let Some(alias) = &alias {
        let known = root
            .providers
            .iter()
            .any(|p| p.name == name && p.alias.as_deref() == Some(alias.as_str()));
        if !known {
            return Err(Diag::new(
                "strata::provider::undeclared",
                "Reference to an undefined provider configuration",
                format!("There is no provider \"{name}\" block with alias = \"{alias}\" in the root module."),
            )
            .at(named.map(|p| p.span).unwrap_or(r.span)));
        }
    }
    // A keyed reference is written in the root module (only the root's
    // blocks have instances; validation refuses a key anywhere else).
    let key = named.and_then(|p| p.key.as_ref()).map(|expr| KeyChoice {
        expr,
        in_call: !chain.is_empty(),
    });
    Ok(Resolution {
        address: provider_address(driver, alias.as_deref()),
        key,
    })
}

/// Why the object at `addr`, recorded under provider configuration
/// (instance) `provider`, cannot be worked with: that instance of a
/// configuration with `for_each` is gone (its element removed), or the
/// configuration gained `for_each` while the object belongs to it as it
/// was. `None` when the run has it. OpenTofu refuses both the same way:
/// guessing another instance would read or delete in the wrong place.
pub fn missing_instance(
    root: &Module,
    drivers: &Drivers,
    addr: &Address,
    provider: &str,
) -> Option<Diag> {
    let (config, key) = strata_state::split_provider_instance(provider);
    let detail = match key {
        Some(_) if drivers.by_address(provider).is_none() => format!(
            "To work with {addr} its original provider instance at {provider} is required, but it has been removed. This occurs when an element is removed from the provider configuration's for_each collection while objects created by that provider instance still exist in the state. Re-add the for_each element to destroy {addr}, after which you can remove the provider configuration again.\n\nThis is commonly caused by using the same for_each collection both for a resource (or its containing module) and its associated provider configuration. To remove an instance of a resource, remove its element from the resource's for_each collection while keeping it in the provider's for_each collection."
        ),
        None if instanced(root, config) => format!(
            "To work with {addr} its original provider instance at {provider} is required, but it has been removed. This suggests that for_each was added to this provider configuration while there are existing objects that need to be destroyed by the original single-instance provider configuration.\n\nTo proceed, return to the previous single-instance configuration and make sure {addr} has been destroyed or forgotten before using for_each with this provider."
        ),
        _ => return None,
    };
    Some(Diag::new(
        "strata::provider::instance_missing",
        "Provider instance not present",
        detail,
    ))
}

/// Whether the configuration at `config` is a root block with `for_each`.
fn instanced(root: &Module, config: &str) -> bool {
    let Some((_, alias)) = config.rsplit_once("\"].") else {
        return false;
    };
    root.providers.iter().any(|p| {
        p.for_each.is_some()
            && p.alias.as_deref() == Some(alias)
            && config.ends_with(&format!("/{}\"].{alias}", p.name))
    })
}
