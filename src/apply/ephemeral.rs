//! Ephemeral resources in the apply: opened again when the walk reaches
//! them, now that what their configurations use is known (the plan's
//! objects are gone with the plan), so that provider configurations,
//! provisioners and write-only arguments get them; closed by the walk's
//! end.

use super::conditions::unmet;
use super::Request;
use crate::config::{Mode, Resource};
use crate::diag::{Diag, Diags};
use crate::lang::value::Value;
use crate::walk::{decode, Ephemerals, InstanceCtx, ResourceInstances, Walk};
use petgraph::graph::NodeIndex;
use std::sync::Arc;
use strata_provider::{Driver, ResourceSchema};

/// Opens every instance of the ephemeral resource at `n`, setting their
/// objects in the walk; `false` when one could not be (said in `diags`).
pub(super) fn open(
    req: &Request<'_>,
    (w, n): (&Walk<'_>, NodeIndex),
    held: &Ephemerals,
    diags: &mut Diags,
) -> bool {
    let node = &req.graph.graph[n];
    let Some(r) = w.module(node).and_then(|m| m.resources.get(node.index)) else {
        return true;
    };
    let mut opened = true;
    for ri in w.expand(n, diags) {
        let mut values = Vec::new();
        for ctx in ri.keys.instances() {
            let Some((driver, schema)) = driver(req, (w, node, r), (&ri, &ctx), diags) else {
                return false;
            };
            let at = One { w, n, r, ri: &ri };
            let value = at.open(&ctx, (&driver, schema), (held, req));
            let value = value.unwrap_or_else(|d| {
                diags.push(d);
                opened = false;
                None
            });
            values.push(value.unwrap_or_else(|| Value::Unknown(schema.object_type())));
        }
        w.set(ri.module(), &node.local_addr, ri.keys.assemble(values));
    }
    opened
}

/// The driver of the provider configuration instance `ctx` of `r` uses,
/// configured now if it waited for this apply's values.
fn driver<'d>(
    req: &Request<'d>,
    (w, node, r): (&Walk<'_>, &crate::graph::Node, &Resource),
    (ri, ctx): (&ResourceInstances, &InstanceCtx),
    diags: &mut Diags,
) -> Option<(Arc<dyn Driver>, &'d ResourceSchema)> {
    let (base, _) = req.drivers.ephemeral(&r.type_name)?;
    let what = || ri.address(ctx.key.clone()).to_string();
    let at = (&node.module, ri.module(), Some(ctx));
    let provider = crate::walk::resolve(req.root, &node.module, r, base.as_ref())
        .and_then(|p| p.instance(w, at, req.drivers, &what))
        .map_err(|d| diags.push(d))
        .ok()?;
    match crate::walk::configure_deferred(req.root, w, req.drivers, &provider) {
        Ok(true) => req
            .drivers
            .configured(&r.type_name, &provider, Mode::Ephemeral),
        Ok(false) => {
            diags.push(Diag::new(
                "strata::apply::ephemeral",
                format!("Cannot open {}", r.address()),
                format!("Its provider configuration ({provider}) is still not known: it uses values that this apply did not produce."),
            ).at(r.span));
            None
        }
        Err(d) => {
            diags.push(d);
            None
        }
    }
}

/// One instance's place: the walk, the node, its block and its module
/// instance.
struct One<'a, 'w> {
    w: &'a Walk<'w>,
    n: NodeIndex,
    r: &'a Resource,
    ri: &'a ResourceInstances,
}

impl One<'_, '_> {
    /// Opens the instance `ctx`: its object (`None` while its
    /// configuration is unknown), or why it could not be opened.
    fn open(
        &self,
        ctx: &InstanceCtx,
        (driver, schema): (&Arc<dyn Driver>, &ResourceSchema),
        (held, req): (&Ephemerals, &Request<'_>),
    ) -> Result<Option<Value>, Diag> {
        let (r, module) = (self.r, self.ri.module());
        let node = &req.graph.graph[self.n];
        let addr = self.ri.address(ctx.key.clone());
        let mut problems = Diags::default();
        let config = self
            .w
            .eval_with(node, module, Some(ctx), |ev| {
                decode(&r.body, schema, ev, r.span, &mut problems)
            })
            .unwrap_or_else(Value::unknown);
        if let Some(d) = problems.0.into_iter().next() {
            return Err(d);
        }
        let refused = |why: String| {
            Diag::new(
                "strata::apply::ephemeral",
                format!("Opening {addr} failed"),
                why,
            )
            .at(r.span)
        };
        if let Some(why) = unmet(self.w, (node, module, ctx), None, r) {
            return Err(refused(why));
        }
        let opener = req.drivers.at(&addr, driver);
        let opened = held
            .open(&addr, (&r.type_name, &opener), &config)
            .map_err(|e| refused(e.to_string()))?;
        if let Some(why) = opened
            .as_ref()
            .and_then(|v| unmet(self.w, (node, module, ctx), Some(v), r))
        {
            return Err(refused(why));
        }
        Ok(opened)
    }
}
