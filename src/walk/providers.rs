//! `provider` blocks: every driver is configured from the root module's
//! block for it (or an empty one) before anything asks it for something —
//! crash recovery, refresh, the plan. A block with an `alias` configures
//! another instance of the driver (another cluster, region or account);
//! resources choose it with `provider = kubernetes.east`, modules receive
//! it with `providers = { kubernetes = kubernetes.east }`, and [`resolve`]
//! follows those to the root's configuration.
//!
//! A configuration known up front (variables, locals, files) is applied
//! before anything else. One that uses resources' attributes (a cluster's
//! endpoint and CA) is deferred: the graph makes the resources under it
//! wait for those attributes, and [`configure_deferred`] configures it when
//! the walk reaches the first of them — in the plan when the values are
//! known then (the cluster exists), else in the apply.

use super::decode::decode;
use super::walker::Walk;
use crate::builtin::{provider_address, source_of, Drivers};
use crate::config::{Module, ProviderRef, Resource, Run};
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
    let mut locals_known = false;
    for driver in drivers.all() {
        let schema = driver.provider_schema();
        let blocks: Vec<_> = root
            .providers
            .iter()
            .filter(|p| configures(root, &p.name, driver.as_ref()))
            .collect();
        let mut default_seen = false;
        for p in &blocks {
            if p.alias.is_none() {
                if default_seen {
                    diags.push(
                        Diag::new(
                            "strata::provider::duplicate",
                            "Duplicate provider configuration",
                            format!("A default (non-aliased) {} provider is configured twice; give one an `alias`.", p.name),
                        )
                        .at(p.span),
                    );
                }
                default_seen = true;
            }
        }
        let configs: Vec<Option<&&crate::config::Provider>> =
            std::iter::once(blocks.iter().find(|p| p.alias.is_none()))
                .chain(blocks.iter().filter(|p| p.alias.is_some()).map(Some))
                .collect();
        for block in configs {
            let target = match block.and_then(|p| p.alias.as_deref()) {
                None => driver.clone(),
                Some(alias) => match driver.another() {
                    Some(Err(e)) => {
                        let span = block.map(|p| p.span).unwrap_or_default();
                        let summary = "Cannot start the provider for this configuration";
                        diags.push(
                            Diag::new("strata::provider::alias", summary, e.to_string()).at(span),
                        );
                        continue;
                    }
                    Some(Ok(d)) => {
                        drivers.add_alias(
                            driver,
                            provider_address(driver.as_ref(), Some(alias)),
                            d.clone(),
                        );
                        d
                    }
                    None => {
                        diags.push(
                        Diag::new(
                            "strata::provider::alias",
                            "Provider aliases are not supported by this driver",
                            format!("The {} driver takes one configuration; put the other configuration in its own root module.", driver.name()),
                        )
                        .at(block.map(|p| p.span).unwrap_or_default()),
                    );
                        continue;
                    }
                },
            };
            let config = match block {
                None => Value::Object(
                    schema
                        .attributes
                        .iter()
                        .map(|(k, a)| (k.clone(), Value::Null(a.ty.clone())))
                        .chain(
                            schema
                                .blocks
                                .iter()
                                .map(|(k, b)| (k.clone(), Value::Null(b.schema.object_type()))),
                        )
                        .collect(),
                ),
                Some(p) => {
                    if !locals_known {
                        // Root locals in dependency order; what needs a
                        // resource stays unknown and is refused below.
                        for n in walk.order() {
                            let node = &graph.graph[n];
                            if node.module.is_root() && node.kind == NodeKind::Local {
                                walk.visit(n, &mut Diags::default());
                            }
                        }
                        locals_known = true;
                    }
                    let mut local = Diags::default();
                    let v = walk
                        .eval_root(|ev| decode(&p.body, &schema, ev, p.span, &mut local))
                        .unwrap_or_else(Value::unknown);
                    if !local.is_empty() {
                        local.0.into_iter().for_each(|d| diags.push(d));
                        continue;
                    }
                    if !v.is_wholly_known() {
                        // It uses what only the walk will know (a cluster's
                        // endpoint): configured when the walk gets there.
                        if let Some(i) = root.providers.iter().position(|q| std::ptr::eq(q, *p)) {
                            let address = provider_address(driver.as_ref(), p.alias.as_deref());
                            drivers.defer(address, i);
                        }
                        continue;
                    }
                    v
                }
            };
            if let Err(e) = target.configure(&config) {
                let mut d = Diag::new(
                    "strata::provider::configure",
                    format!("Invalid {} provider configuration", driver.name()),
                    e.to_string(),
                );
                if let Some(p) = block {
                    d = d.at(p.span);
                }
                diags.push(d);
            }
        }
    }
    diags.into_result(())
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
    let Some(i) = drivers.deferred(address) else {
        return Ok(true);
    };
    let (Some(p), Some(driver)) = (root.providers.get(i), drivers.by_address(address)) else {
        return Ok(true);
    };
    let schema = driver.provider_schema();
    let mut local = Diags::default();
    let v = walk
        .eval_root(|ev| decode(&p.body, &schema, ev, p.span, &mut local))
        .unwrap_or_else(Value::unknown);
    if let Some(d) = local.0.into_iter().next() {
        return Err(d);
    }
    if !v.is_wholly_known() {
        return Ok(false);
    }
    driver.configure(&v).map_err(|e| {
        Diag::new(
            "strata::provider::configure",
            format!("Invalid {} provider configuration", driver.name()),
            e.to_string(),
        )
        .at(p.span)
    })?;
    drivers.undefer(address);
    Ok(true)
}

/// The provider configuration (its address, as state records it) that a
/// resource of `driver` in the configuration's module `module` uses: its `provider` argument or the default one,
/// followed up through each module call's `providers` map to the root's
/// `provider` blocks.
pub fn resolve(
    root: &Module,
    module: &ModulePath,
    r: &Resource,
    driver: &dyn strata_provider::Driver,
) -> Result<String, Diag> {
    let mut chain = Vec::new();
    let mut m = root;
    for step in module.steps() {
        let Some(call) = m.module_calls.iter().find(|c| c.name == step.call) else {
            break;
        };
        chain.push(call);
        m = &call.module;
    }
    let mut local: ProviderRef = r.provider.clone().unwrap_or_else(|| ProviderRef {
        name: driver.name().to_string(),
        alias: None,
        span: r.span,
    });
    let shown = |p: &ProviderRef| match &p.alias {
        Some(a) => format!("{}.{a}", p.name),
        None => p.name.clone(),
    };
    for call in chain.iter().rev() {
        let passed = call
            .providers
            .iter()
            .find(|(k, _)| k.name == local.name && k.alias == local.alias);
        match passed {
            Some((_, parent)) => local = parent.clone(),
            None if local.alias.is_none() => {}
            None => {
                return Err(Diag::new(
                    "strata::provider::not_passed",
                    "Provider configuration not passed to the module",
                    format!("A resource of module.{} uses the provider configuration {}, which the module call does not pass: add it to the call's providers argument, e.g. providers = {{ {} = {}.<alias> }}.", call.name, shown(&local), shown(&local), local.name),
                )
                .at(call.span));
            }
        }
    }
    if let Some(alias) = &local.alias {
        let known = root
            .providers
            .iter()
            .any(|p| p.name == local.name && p.alias.as_deref() == Some(alias.as_str()));
        if !known {
            return Err(Diag::new(
                "strata::provider::undeclared",
                "Reference to an undefined provider configuration",
                format!("There is no provider \"{}\" block with alias = \"{alias}\" in the root module.", local.name),
            )
            .at(local.span));
        }
    }
    Ok(provider_address(driver, local.alias.as_deref()))
}
