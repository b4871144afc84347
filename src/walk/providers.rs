//! `provider` blocks: every driver is given its configuration from the
//! root module's block for it (or an empty one) before anything asks it
//! for something — crash recovery, refresh, the plan. A driver that costs
//! something to configure (a plugin: a process) holds it until its first
//! call needs it, when the engine asks for it first
//! ([`Drivers::ready`](crate::builtin::Drivers::ready)) so a refusal is
//! told at the block; one nothing calls starts no process. A block with
//! an `alias` configures another instance of the driver (another cluster,
//! region or account); resources choose it with
//! `provider = kubernetes.east`, modules receive it with
//! `providers = { kubernetes = kubernetes.east }`, and
//! [`resolve`](super::resolve::resolve) follows those to the root's
//! configuration.
//!
//! A configuration known up front (variables, locals, files) is evaluated
//! before anything else. One that uses resources' attributes (a cluster's
//! endpoint and CA) is deferred: the graph makes the resources under it
//! wait for those attributes, and [`configure_deferred`] configures it when
//! the walk reaches the first of them — in the plan when the values are
//! known then (the cluster exists), else in the apply.

use super::decode::decode;
use super::resolve::instance_address;
use super::walker::Walk;
use crate::builtin::{provider_address, refused, source_of, Deferred, Drivers};
use crate::config::{Module, Provider, Run};
use crate::diag::{Diag, Diags};
use crate::graph::{Graph, NodeKind};
use crate::lang::value::Value;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use strata_state::model::ModulePath;

pub fn configure(
    root: &Module,
    graph: &Graph,
    vars: &BTreeMap<String, Value>,
    run: &Rc<Run>,
    drivers: &Drivers,
) -> Result<(), Diags> {
    let mut diags = Diags::default();
    let walk = Walk::new(root, graph, vars.clone(), run.clone());
    let mut blocks = Blocks {
        root,
        graph,
        walk,
        locals_known: false,
    };
    for driver in drivers.all() {
        let of_driver: Vec<&Provider> = root
            .providers
            .iter()
            .filter(|p| configures(root, &p.name, driver.as_ref()))
            .collect();
        one_default(&of_driver, &mut diags);
        // The default configuration (an empty one when no block says it),
        // then each alias.
        let configs = std::iter::once(of_driver.iter().copied().find(|p| p.alias.is_none())).chain(
            of_driver
                .iter()
                .copied()
                .filter(|p| p.alias.is_some())
                .map(Some),
        );
        for block in configs {
            let each = match block.and_then(|p| Some((p, p.for_each.as_ref()?))) {
                Some((p, e)) => match blocks.elements(p, e) {
                    Ok(elements) => elements.into_iter().map(Some).collect(),
                    Err(d) => {
                        diags.push(d);
                        continue;
                    }
                },
                None => vec![None],
            };
            for each in each {
                blocks.configure_one(driver, block, each, drivers, &mut diags);
            }
        }
    }
    diags.into_result(())
}

/// `each.key` and `each.value` of one instance of a provider
/// configuration with `for_each`.
type Each = (Value, Value);

/// A driver has one default (non-aliased) configuration.
fn one_default(blocks: &[&Provider], diags: &mut Diags) {
    let mut defaults = blocks.iter().filter(|p| p.alias.is_none());
    let _first = defaults.next();
    for p in defaults {
        diags.push(
            Diag::new(
                "strata::provider::duplicate",
                "Duplicate provider configuration",
                format!(
                    "A default (non-aliased) {} provider is configured twice; give one an `alias`.",
                    p.name
                ),
            )
            .at(p.span),
        );
    }
}

/// The driver instance `block` (with `each`, one instance of it)
/// configures, and its address: the driver itself for its default
/// configuration, another instance of it (recorded under the
/// configuration's address) for an aliased one; `None`, said, when there
/// can be none.
fn instance(
    driver: &Arc<dyn strata_provider::Driver>,
    block: Option<&Provider>,
    each: Option<&Each>,
    drivers: &Drivers,
    diags: &mut Diags,
) -> Option<(Arc<dyn strata_provider::Driver>, String)> {
    let Some(alias) = block.and_then(|p| p.alias.as_deref()) else {
        return Some((driver.clone(), driver.provider_address()));
    };
    let span = block.map(|p| p.span).unwrap_or_default();
    let mut address = provider_address(driver.as_ref(), Some(alias));
    if let Some(key) = each.and_then(|(k, _)| k.as_str()) {
        address = instance_address(&address, key);
    }
    match driver.another() {
        Some(Ok(d)) => {
            drivers.add_alias(driver, address.clone(), d.clone());
            Some((d, address))
        }
        Some(Err(e)) => {
            let summary = "Cannot start the provider for this configuration";
            diags.push(Diag::new("strata::provider::alias", summary, e.to_string()).at(span));
            None
        }
        None => {
            diags.push(
                Diag::new(
                    "strata::provider::alias",
                    "Provider aliases are not supported by this driver",
                    format!("The {} driver takes one configuration; put the other configuration in its own root module.", driver.name()),
                )
                .at(span),
            );
            None
        }
    }
}

/// The configuration of a driver no block configures: every attribute
/// and block null.
fn unset(schema: &strata_provider::ResourceSchema) -> Value {
    let attributes = schema
        .attributes
        .iter()
        .map(|(k, a)| (k.clone(), Value::Null(a.ty.clone())));
    let blocks = schema
        .blocks
        .iter()
        .map(|(k, b)| (k.clone(), Value::Null(b.schema.object_type())));
    Value::Object(attributes.chain(blocks).collect())
}

/// The root module's `provider` blocks evaluated, the root locals they may
/// use evaluated first (once).
struct Blocks<'a> {
    root: &'a Module,
    graph: &'a Graph,
    walk: Walk<'a>,
    locals_known: bool,
}

impl Blocks<'_> {
    /// One configuration of `driver` made: `block`'s (an empty one when
    /// there is none), for instance `each` of a block with `for_each`.
    /// It is applied when something (a resource the walk reaches, an
    /// object in the state, an import) first needs it: a plugin starts no
    /// process for a configuration nothing calls, and the implied default
    /// of a provider that requires an argument is not refused for lacking
    /// it.
    fn configure_one(
        &mut self,
        driver: &Arc<dyn strata_provider::Driver>,
        block: Option<&Provider>,
        each: Option<Each>,
        drivers: &Drivers,
        diags: &mut Diags,
    ) -> Option<()> {
        let (target, address) = instance(driver, block, each.as_ref(), drivers, diags)?;
        let config = match block {
            None => unset(&driver.provider_schema()),
            Some(p) => self.config(p, driver, (address.clone(), each), drivers, diags)?,
        };
        let span = block.map(|p| p.span);
        match target.configure_on_use(&config) {
            Ok(()) if target.holds_a_process() => drivers.hold(&target, address, span),
            Ok(()) => {}
            Err(e) => diags.push(refused(driver.name(), &e, span)),
        }
        Some(())
    }

    /// The elements of a block's `for_each`, which must be known before
    /// anything is planned: variables and locals only, as OpenTofu
    /// evaluates it.
    fn elements(&mut self, p: &Provider, e: &crate::syntax::Expr) -> Result<Vec<Each>, Diag> {
        self.root_locals();
        let v = self
            .walk
            .eval_root(|ev| ev.eval(e))
            .unwrap_or_else(|| Ok(Value::unknown()))?;
        if !v.is_wholly_known() {
            let detail = format!("The for_each of provider \"{}\" with alias \"{}\" must be known before the plan: it may use variables and locals, not resources' attributes or other values known only during apply.", p.name, p.alias.as_deref().unwrap_or_default());
            let d = Diag::new(
                "strata::config::for_each",
                "Invalid for_each argument",
                detail,
            );
            return Err(d.at(e.span));
        }
        let elements = crate::config::repeat::for_each(&v, e.span)?.unwrap_or_default();
        Ok(elements
            .into_iter()
            .map(|(k, v)| (Value::String(k), v))
            .collect())
    }

    /// Block `p`'s value for the configuration at `address` (`each` set
    /// for an instance of a block with `for_each`); `None` when it has
    /// errors (said) or uses what only the walk will know (a cluster's
    /// endpoint), when it is configured as the walk gets there.
    fn config(
        &mut self,
        p: &Provider,
        driver: &Arc<dyn strata_provider::Driver>,
        (address, each): (String, Option<Each>),
        drivers: &Drivers,
        diags: &mut Diags,
    ) -> Option<Value> {
        self.root_locals();
        let schema = driver.provider_schema();
        let mut local = Diags::default();
        let root = ModulePath::root();
        let v = self
            .walk
            .eval_module_each(&root, &root, each.clone(), |ev| {
                decode(&p.body, &schema, ev, p.span, &mut local)
            })
            .unwrap_or_else(Value::unknown);
        if !local.is_empty() {
            local.0.into_iter().for_each(|d| diags.push(d));
            return None;
        }
        if !v.is_wholly_known() {
            if let Some(block) = self.root.providers.iter().position(|q| std::ptr::eq(q, p)) {
                drivers.defer(address, Deferred { block, each });
            }
            return None;
        }
        Some(v)
    }

    /// Root locals in dependency order; what needs a resource stays
    /// unknown, and a block using it is deferred.
    fn root_locals(&mut self) {
        if std::mem::replace(&mut self.locals_known, true) {
            return;
        }
        for n in self.walk.order() {
            let node = &self.graph.graph[n];
            if node.module.is_root() && node.kind == NodeKind::Local {
                self.walk.visit(n, &mut Diags::default());
            }
        }
    }
}

/// The driver a module's `provider "NAME"` block configures: one of the
/// provider its `required_providers` gives the local name NAME, or (NAME
/// undeclared) the driver named NAME, Terraform's implied `hashicorp/NAME`.
pub fn block_driver<'d>(
    m: &Module,
    drivers: &'d Drivers,
    name: &str,
) -> Option<&'d Arc<dyn strata_provider::Driver>> {
    drivers.all().find(|d| configures(m, name, d.as_ref()))
}

fn configures(m: &Module, name: &str, driver: &dyn strata_provider::Driver) -> bool {
    match m.declared_source(name) {
        Some(source) => source == source_of(driver),
        None => driver.name() == name,
    }
}

/// Configures the deferred configuration at `address` from the walk's
/// values, if they are all known now: `Ok(true)` when it is configured
/// (or was not deferred), `Ok(false)` when it must wait longer.
pub fn configure_deferred(
    root: &Module,
    walk: &Walk<'_>,
    drivers: &Drivers,
    address: &str,
) -> Result<bool, Diag> {
    let Some(waiting) = drivers.deferred(address) else {
        return Ok(true);
    };
    let (Some(p), Some(driver)) = (
        root.providers.get(waiting.block),
        drivers.by_address(address),
    ) else {
        return Ok(true);
    };
    let schema = driver.provider_schema();
    let mut local = Diags::default();
    let top = ModulePath::root();
    let v = walk
        .eval_module_each(&top, &top, waiting.each, |ev| {
            decode(&p.body, &schema, ev, p.span, &mut local)
        })
        .unwrap_or_else(Value::unknown);
    if let Some(d) = local.0.into_iter().next() {
        return Err(d);
    }
    if !v.is_wholly_known() {
        return Ok(false);
    }
    driver
        .configure(&v)
        .map_err(|e| refused(driver.name(), &e, Some(p.span)))?;
    drivers.undefer(address);
    Ok(true)
}
