//! `provider` blocks: every driver is configured from the root module's
//! block for it (or an empty one) before anything asks it for something —
//! crash recovery, refresh, the plan.
//!
//! Unlike Terraform, which makes provider configurations graph nodes,
//! strata evaluates them up front, so they may use variables and locals
//! but not resources or data sources; a value not known before apply is
//! refused with its location.

use super::decode::decode;
use super::walk::Walk;
use crate::builtin::Drivers;
use crate::config::Module;
use crate::diag::{Diag, Diags};
use crate::graph::{Graph, NodeKind};
use crate::lang::value::Value;
use std::collections::BTreeMap;

pub fn configure(
    root: &Module,
    graph: &Graph,
    vars: &BTreeMap<String, Value>,
    drivers: &Drivers,
) -> Result<(), Diags> {
    let mut diags = Diags::default();
    let walk = Walk::new(root, graph, vars.clone());
    let mut locals_known = false;
    for driver in drivers.all() {
        let schema = driver.provider_schema();
        let blocks: Vec<_> = root
            .providers
            .iter()
            .filter(|p| p.name == driver.name())
            .collect();
        for p in blocks.iter().filter(|p| p.alias.is_some()) {
            diags.push(
                Diag::new(
                    "strata::provider::alias",
                    "Provider aliases are not supported yet",
                    format!("strata configures one {} provider per configuration; put the other region or account in its own configuration for now.", p.name),
                )
                .at(p.span),
            );
        }
        let config = match blocks.iter().find(|p| p.alias.is_none()) {
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
                        if node.module.is_empty() && node.kind == NodeKind::Local {
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
                    diags.push(
                        Diag::new(
                            "strata::provider::unknown",
                            "Provider configuration not known before apply",
                            format!("The {} provider's configuration depends on values known only after apply. strata evaluates provider blocks before planning: use variables and locals here, not resource or data source attributes.", p.name),
                        )
                        .at(p.span),
                    );
                    continue;
                }
                v
            }
        };
        if let Err(e) = driver.configure(&config) {
            let mut d = Diag::new(
                "strata::provider::configure",
                format!("Invalid {} provider configuration", driver.name()),
                e.to_string(),
            );
            if let Some(p) = blocks.first() {
                d = d.at(p.span);
            }
            diags.push(d);
        }
    }
    diags.into_result(())
}
