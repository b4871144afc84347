//! When an ephemeral resource is closed: once every node that depends on
//! it, directly or through others, has finished — Terraform's close node
//! waits for the last of them — so a token is not held open for the rest
//! of a long apply. One a root `provider` block uses stays open to the end
//! of the walk: the provider may be called with what it gave until then
//! (deletes after the walk).

use crate::config::Module;
use crate::graph::{Graph, NodeKind};
use petgraph::graph::NodeIndex;
use petgraph::visit::Dfs;
use std::collections::HashSet;
use strata_state::model::ResourceAddr;

/// The ephemeral resources still waiting for what uses them.
pub struct Closing {
    waiting: Vec<Waiting>,
}

struct Waiting {
    config: ResourceAddr,
    /// The nodes not finished yet: the ephemeral resource's own and every
    /// node that depends on it.
    left: HashSet<NodeIndex>,
}

impl Closing {
    pub fn new(graph: &Graph, root: &Module) -> Closing {
        let kept = used_by_providers(root);
        let g = &graph.graph;
        let waiting = g
            .node_indices()
            .filter(|&n| g[n].kind == NodeKind::Ephemeral)
            .filter_map(|n| {
                let config = g[n].resource_addr()?.clone();
                if config.module.is_root()
                    && kept.contains(&(config.type_name.clone(), config.name.clone()))
                {
                    return None;
                }
                // What depends on a node is reached along its outgoing
                // edges (the apply starts a node's dependents after it).
                let mut left = HashSet::new();
                let mut dfs = Dfs::new(g, n);
                while let Some(d) = dfs.next(g) {
                    left.insert(d);
                }
                Some(Waiting { config, left })
            })
            .collect();
        Closing { waiting }
    }

    /// Node `n` has finished: the ephemeral resources nothing unfinished
    /// uses any more, to close now.
    pub fn finished(&mut self, n: NodeIndex) -> Vec<ResourceAddr> {
        for w in &mut self.waiting {
            w.left.remove(&n);
        }
        let (done, waiting) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|w| w.left.is_empty());
        self.waiting = waiting;
        done.into_iter().map(|w: Waiting| w.config).collect()
    }
}

/// The root module's ephemeral resources (type, name) a `provider` block
/// refers to.
fn used_by_providers(root: &Module) -> HashSet<(String, String)> {
    let mut out = HashSet::new();
    for p in &root.providers {
        visit(&p.body, &mut |root_name, attrs| {
            if let ("ephemeral", [t, n, ..]) = (root_name, attrs) {
                out.insert((t.to_string(), n.to_string()));
            }
        });
    }
    out
}

fn visit(body: &crate::syntax::Body, f: &mut dyn FnMut(&str, &[&str])) {
    for a in &body.attrs {
        a.expr
            .visit_references(&mut |root, attrs, _| f(root, attrs));
    }
    for b in &body.blocks {
        visit(&b.body, f);
    }
}
