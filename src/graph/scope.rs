//! Planning part of a configuration: Terraform's `-target` and OpenTofu's
//! `-exclude`.
//!
//! As in both tools the choice is made on the graph before anything is
//! planned: a target keeps its resources and everything they depend on,
//! an exclusion drops its resources and everything that depends on them,
//! and a root output stays when every resource it depends on stayed (an
//! output cannot be targeted itself). Instances are chosen afterwards:
//! of a resource a target names, only the instances it contains; of one
//! kept as a dependency, every instance. A destroy runs the other way:
//! what depends on a target goes with it, what an exclusion depends on
//! stays with it.

use super::{Graph, NodeKind};
use petgraph::graph::NodeIndex;
use petgraph::visit::{Dfs, Reversed, Walker};
use petgraph::Direction;
use std::collections::HashSet;
use strata_state::model::{Address, Mode, ModulePath, ResourceAddr};

/// One `-target` or `-exclude` address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `module.a` (every instance) or `module.a[0]`, and what is inside.
    Module(ModulePath),
    /// `aws_vpc.main`, `module.a[0].aws_vpc.main`: every instance.
    Resource(ResourceAddr),
    /// `aws_subnet.a[0]`: that instance alone.
    Instance(Address),
}

impl Target {
    /// Reads a target as Terraform does, with its reasons for refusing one.
    pub fn parse(text: &str) -> Result<Target, String> {
        // `data.x` reads as a resource of type "data": it is not one.
        let data_alone = |a: &Address| a.id.type_name == "data" && a.id.mode == Mode::Managed;
        if let Some(a) = Address::parse(text).filter(|a| !data_alone(a)) {
            return Ok(match a.key {
                Some(_) => Target::Instance(a),
                None => Target::Resource(a.id),
            });
        }
        match ModulePath::parse(text) {
            Some(m) if !m.is_root() => Ok(Target::Module(m)),
            _ => Err(why_not_an_address(text).to_string()),
        }
    }

    /// Whether the instance `a` is inside this target. A module target's
    /// last call without a key holds each of its instances.
    pub fn contains(&self, a: &Address) -> bool {
        match self {
            Target::Module(m) => module_holds(m, &a.id.module),
            Target::Resource(r) => *r == a.id,
            Target::Instance(i) => i == a,
        }
    }

    /// Whether this target, as written, holds every instance of the
    /// configuration's resource `config`: no instance key narrows it.
    fn holds_whole(&self, config: &ResourceAddr) -> bool {
        let keyless = |m: &ModulePath| m.steps().iter().all(|s| s.key.is_none());
        match self {
            Target::Module(m) => keyless(m) && config.module.starts_with(m),
            Target::Resource(r) => keyless(&r.module) && r == config,
            Target::Instance(_) => false,
        }
    }

    /// Whether, its instance keys set aside, this target holds the
    /// configuration's resource `config` (a resource address without keys).
    fn holds(&self, config: &ResourceAddr) -> bool {
        match self {
            Target::Module(m) => config.module.starts_with(&m.without_keys()),
            Target::Resource(r) => r.config() == *config,
            Target::Instance(i) => i.id.config() == *config,
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Module(m) => write!(f, "{m}"),
            Target::Resource(r) => write!(f, "{r}"),
            Target::Instance(a) => write!(f, "{a}"),
        }
    }
}

/// `module.a` holds `module.a[1].module.b`: every step the same, the
/// last step without a key standing for any of its instances.
fn module_holds(target: &ModulePath, path: &ModulePath) -> bool {
    let (want, have) = (target.steps(), path.steps());
    have.len() >= want.len()
        && want.iter().zip(have).enumerate().all(|(i, (w, h))| {
            w.call == h.call && (w.key == h.key || (i + 1 == want.len() && w.key.is_none()))
        })
}

/// Terraform's explanation of an address it cannot read.
fn why_not_an_address(text: &str) -> &'static str {
    let mut parts: Vec<&str> = text.split('.').collect();
    if text.contains('[') {
        let balanced = text.matches('[').count() == text.matches(']').count();
        if !balanced || Address::parse(text.split('[').next().unwrap_or_default()).is_some() {
            return "Index brackets must contain either a literal number or a literal string.";
        }
    }
    while parts.first() == Some(&"module") && parts.len() >= 2 {
        parts.drain(..2);
    }
    if parts.first() == Some(&"data") {
        parts.remove(0);
    }
    match parts.len() {
        0..=1 => "Resource specification must include a resource type and name.",
        _ => "Resource instance key must be given in square brackets.",
    }
}

/// What a plan covers: everything, or what `-target` or `-exclude` say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub targets: Vec<Target>,
    pub excludes: Vec<Target>,
}

impl Scope {
    /// Whether the plan covers the whole configuration.
    pub fn is_everything(&self) -> bool {
        self.targets.is_empty() && self.excludes.is_empty()
    }

    /// The graph with only what the scope plans: Terraform's targeting
    /// transform (OpenTofu's for exclusions). The whole graph when the
    /// scope is everything.
    pub fn narrow(&self, g: &Graph) -> Graph {
        if self.is_everything() {
            return Graph {
                graph: g.graph.clone(),
            };
        }
        let mut keep = self.kept(g);
        keep.extend(outputs_within(g, &keep));
        Graph {
            graph: g.graph.filter_map(
                |n, node| keep.contains(&n).then(|| node.clone()),
                |_, ()| Some(()),
            ),
        }
    }

    /// The nodes a target names and what they depend on; or every node
    /// left when what depends on an exclusion is dropped.
    fn kept(&self, g: &Graph) -> HashSet<NodeIndex> {
        let resources = g
            .graph
            .node_indices()
            .filter_map(|n| Some((n, g.graph[n].resource_addr()?)));
        if !self.targets.is_empty() {
            let named = resources
                .filter(|(_, r)| self.targets.iter().any(|t| t.holds(r)))
                .map(|(n, _)| n);
            return reach(g, named, Direction::Incoming);
        }
        let excluded_from: Vec<(NodeIndex, &ResourceAddr)> = resources
            .filter(|(_, r)| self.excludes.iter().any(|t| t.holds(r)))
            .collect();
        let mut dropped = reach(
            g,
            excluded_from.iter().map(|(n, _)| *n),
            Direction::Outgoing,
        );
        // What depends on an exclusion goes; a resource an exclusion names
        // with instance keys stays, its other instances planned.
        for (n, r) in &excluded_from {
            if !self.excludes.iter().any(|t| t.holds_whole(r)) {
                dropped.remove(n);
            }
        }
        let left = g
            .graph
            .node_indices()
            .filter(|n| g.graph[*n].is_resource() && !dropped.contains(n));
        reach(g, left, Direction::Incoming)
    }

    /// Whether a plan covering this scope plans the instance `addr`, given
    /// whether its resource is in the narrowed graph and whether the
    /// configuration has it at all (an object only the state has).
    pub fn plans(&self, addr: &Address, in_graph: bool, configured: bool) -> bool {
        if !self.targets.is_empty() {
            let config = addr.id.config();
            let named = self.targets.iter().any(|t| t.holds(&config));
            return self.targets.iter().any(|t| t.contains(addr)) || (in_graph && !named);
        }
        !self.excludes.iter().any(|t| t.contains(addr)) && (in_graph || !configured)
    }

    /// What a destroy in this scope deletes, worked out once over the
    /// whole graph `g`: what depends on a target goes with it, what an
    /// exclusion depends on stays with it.
    pub fn destroying(&self, g: &Graph) -> Destroying<'_> {
        let (named, direction) = match self.targets.is_empty() {
            false => (&self.targets, Direction::Outgoing),
            true => (&self.excludes, Direction::Incoming),
        };
        let held = |r: &ResourceAddr| named.iter().any(|t| t.holds(r));
        let start = g
            .graph
            .node_indices()
            .filter(|n| g.graph[*n].resource_addr().is_some_and(held));
        let whole = reach(g, start, direction)
            .into_iter()
            .filter_map(|n| g.graph[n].resource_addr())
            .filter(|r| !held(r))
            .cloned()
            .collect();
        Destroying { scope: self, whole }
    }
}

/// What a scoped destroy deletes (see [`Scope::destroying`]).
pub struct Destroying<'s> {
    scope: &'s Scope,
    /// Resources every instance of which follows a target (deleted) or an
    /// exclusion (kept), without being named themselves.
    whole: HashSet<ResourceAddr>,
}

impl Destroying<'_> {
    pub fn destroys(&self, addr: &Address) -> bool {
        let Scope { targets, excludes } = self.scope;
        let follows = self.whole.contains(&addr.id.config());
        match targets.is_empty() {
            false => follows || targets.iter().any(|t| t.contains(addr)),
            true => !follows && !excludes.iter().any(|t| t.contains(addr)),
        }
    }
}

/// `from` and every node reached from them against (`Incoming`: what they
/// depend on) or along (`Outgoing`: what depends on them) the edges.
fn reach(
    g: &Graph,
    from: impl IntoIterator<Item = NodeIndex>,
    direction: Direction,
) -> HashSet<NodeIndex> {
    let mut seen = HashSet::new();
    for start in from {
        if seen.contains(&start) {
            continue;
        }
        let found: Vec<NodeIndex> = match direction {
            Direction::Outgoing => Dfs::new(&g.graph, start).iter(&g.graph).collect(),
            Direction::Incoming => Dfs::new(Reversed(&g.graph), start)
                .iter(Reversed(&g.graph))
                .collect(),
        };
        seen.extend(found);
    }
    seen
}

/// Root outputs every resource of which is kept, with what they use: an
/// output derived only from what the plan covers is brought up to date.
fn outputs_within(g: &Graph, kept: &HashSet<NodeIndex>) -> HashSet<NodeIndex> {
    let mut out = HashSet::new();
    for n in g.graph.node_indices() {
        let node = &g.graph[n];
        if node.kind != NodeKind::Output || !node.module.is_root() {
            continue;
        }
        let uses = reach(g, [n], Direction::Incoming);
        let resources: Vec<&NodeIndex> =
            uses.iter().filter(|u| g.graph[**u].is_resource()).collect();
        if !resources.is_empty() && resources.iter().all(|r| kept.contains(r)) {
            out.extend(uses);
        }
    }
    out
}

#[cfg(test)]
mod tests;
