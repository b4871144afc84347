//! When the plan's walk starts and stops each provider configuration: a
//! plugin's is a process (a quarter of a gigabyte for the AWS provider),
//! so twenty aliases alive together held twenty of them, as in Terraform
//! (hashicorp/terraform#32744). A configuration is configured a little
//! before the walk reaches its first resource — the next few side by
//! side, in the background — and, while others wait their turn, released
//! once the walk has passed its last (Terraform's close-provider step).
//! Whatever calls it after that (the apply of the same run) starts another
//! process, configured as this one was.

use super::resolve::resolve;
use super::walker::Walk;
use crate::builtin::{identity, Drivers};
use crate::config::Module;
use crate::graph::{Graph, NodeKind};
use petgraph::graph::NodeIndex;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::thread::JoinHandle;
use strata_provider::Driver;

/// How many configurations are configured ahead of the walk at once: a
/// plugin's is a process started, handshaken and configured, mostly CPU,
/// so a few side by side fill this machine's cores without holding many
/// processes.
const AHEAD: usize = 4;

/// The configurations a walk uses that hold a process, in the order it
/// first needs them; `T` is what opening one gives the walk (the plan
/// reads its objects back then).
pub struct Lifetimes<T> {
    uses: Vec<Use>,
    /// How many of `uses` have been opened.
    started: usize,
    /// Of those, how many the walk has passed (released, or kept for the
    /// apply that follows).
    passed: usize,
    /// Opened and not yet joined.
    starting: HashMap<usize, JoinHandle<T>>,
    /// Each node's configuration, by its index in `uses`.
    by_node: HashMap<NodeIndex, usize>,
}

struct Use {
    driver: Arc<dyn Driver>,
    address: String,
    /// The positions in the walk's order of its first and last node.
    first: usize,
    last: usize,
    /// How many of its nodes have not finished.
    left: usize,
    /// Kept past its last node: the apply in the same run calls it.
    kept: bool,
}

/// How a configuration is opened: a thread that configures it (and does
/// what else the walk wants done then).
pub type Open<'o, T> = dyn FnMut(&Arc<dyn Driver>, &str) -> JoinHandle<T> + 'o;

impl<T> Lifetimes<T> {
    /// The configurations the nodes of `order` use whose drivers hold a
    /// process, each with exactly one instance (one of a block with
    /// `for_each` is chosen per resource instance, and left as it was:
    /// started when first called, stopped with the run). Left out too:
    /// one a `check` block's data source or an ephemeral resource uses
    /// (read, or closed, after the walk's node), and one configured from
    /// resources' attributes, and what `kept` says the walk's caller
    /// needs after it.
    pub fn new(
        (root, graph, walk): (&Module, &Graph, &Walk<'_>),
        drivers: &Drivers,
        order: &[NodeIndex],
        kept: &dyn Fn(&str) -> bool,
    ) -> Lifetimes<T> {
        // Most runs have no such driver: no node is looked at.
        let any = drivers.all().any(|d| d.holds_a_process());
        let order = if any { order } else { &[] };
        let mut spans: BTreeMap<(usize, String), (Use, Vec<NodeIndex>)> = BTreeMap::new();
        let mut to_the_end = BTreeSet::new();
        for (at, &n) in order.iter().enumerate() {
            let Some(used) = configuration(root, walk, drivers, graph, n) else {
                continue;
            };
            let key = (identity(&used.driver), used.address.clone());
            if used.to_the_end || kept(&used.address) {
                to_the_end.insert(key.clone());
            }
            let (span, nodes) = spans.entry(key).or_insert_with(|| {
                let (driver, address) = (used.driver, used.address);
                let (first, last, left) = (at, at, 0);
                let u = Use {
                    driver,
                    address,
                    first,
                    last,
                    left,
                    kept: false,
                };
                (u, Vec::new())
            });
            span.last = at;
            span.left += 1;
            nodes.push(n);
        }
        let mut uses: Vec<(Use, Vec<NodeIndex>)> = spans
            .into_iter()
            .filter(|(key, (u, _))| {
                !to_the_end.contains(key) && drivers.deferred(&u.address).is_none()
            })
            .map(|(_, u)| u)
            .collect();
        uses.sort_by_key(|(u, _)| u.first);
        let by_node = uses
            .iter()
            .enumerate()
            .flat_map(|(i, (_, nodes))| nodes.iter().map(move |&n| (n, i)))
            .collect();
        Lifetimes {
            uses: uses.into_iter().map(|(u, _)| u).collect(),
            started: 0,
            passed: 0,
            starting: HashMap::new(),
            by_node,
        }
    }

    /// The addresses of the configurations the walk opens.
    pub fn addresses(&self) -> impl Iterator<Item = &str> {
        self.uses.iter().map(|u| u.address.as_str())
    }

    /// Before the node at `at`: the configurations after it opened ahead,
    /// while fewer than [`AHEAD`] are open; and what opening those the
    /// node may need gave.
    pub fn before(&mut self, at: usize, open: &mut Open<'_, T>) -> Vec<T> {
        while self.started < self.uses.len() && self.started - self.passed < AHEAD {
            let u = &self.uses[self.started];
            self.starting
                .insert(self.started, open(&u.driver, &u.address));
            self.started += 1;
        }
        let now: Vec<usize> = self
            .starting
            .keys()
            .copied()
            .filter(|&i| self.uses[i].first <= at)
            .collect();
        now.into_iter()
            .filter_map(|i| self.starting.remove(&i)?.join().ok())
            .collect()
    }

    /// Node `n` planned a change that the same run applies: its
    /// configuration is not released after its last node, since the
    /// apply would start its process again (a quarter second and more of
    /// CPU for the AWS provider). Where the configurations' changes are
    /// independent, the apply holds them all at once anyway, so this costs
    /// its peak nothing; where they wait on each other in a chain, the
    /// apply would have held fewer at a time, and keeping them is the price
    /// of starting none twice.
    pub fn keep(&mut self, n: NodeIndex) {
        if let Some(&i) = self.by_node.get(&n) {
            self.uses[i].kept = true;
        }
    }

    /// After the node at `at`: the configurations it was the last to use,
    /// released while others wait to be opened, unless [`Self::keep`]
    /// kept them. The last few are kept too: an apply that follows the
    /// plan in the same run may call them again, and a process kept is a
    /// start saved. (A configuration's first node comes before its last,
    /// so it has been joined.)
    pub fn after(&mut self, at: usize) {
        if self.started == self.uses.len() {
            return;
        }
        for u in &self.uses[..self.started] {
            if u.last == at {
                if !u.kept {
                    u.driver.release();
                }
                self.passed += 1;
            }
        }
    }

    /// For a walk that runs nodes side by side (the apply's), which opens
    /// nothing ahead (its calls start what they need): node `n` has
    /// finished, and a configuration all of whose nodes have is released.
    pub fn finished(&mut self, n: NodeIndex) {
        let Some(i) = self.by_node.remove(&n) else {
            return;
        };
        let u = &mut self.uses[i];
        u.left = u.left.saturating_sub(1);
        if u.left == 0 {
            u.driver.release();
        }
    }
}

/// A walk that ends early (an interrupt) waits for what it was opening:
/// a thread left running would hold its provider past the run's end.
impl<T> Drop for Lifetimes<T> {
    fn drop(&mut self) {
        for (_, opening) in self.starting.drain() {
            let _ = opening.join();
        }
    }
}

/// The configuration a resource node uses.
struct Used {
    driver: Arc<dyn Driver>,
    address: String,
    /// Called after the walk has passed the node: a `check` block's data
    /// source is read then, an ephemeral resource closed.
    to_the_end: bool,
}

/// The provider configuration resource node `n` uses, when it is one
/// configuration (not a block with `for_each`) of a driver that holds a
/// process.
fn configuration(
    root: &Module,
    walk: &Walk<'_>,
    drivers: &Drivers,
    graph: &Graph,
    n: NodeIndex,
) -> Option<Used> {
    let node = &graph.graph[n];
    if !node.is_resource() {
        return None;
    }
    let r = walk.module(node)?.resources.get(node.index)?;
    let (base, _) = drivers.of_mode(r.mode, &r.type_name)?;
    let resolved = resolve(root, &node.module, r, base.as_ref()).ok()?;
    let address = resolved.single()?.to_string();
    let (driver, _) = drivers.configured(&r.type_name, &address, r.mode)?;
    if !driver.holds_a_process() {
        return None;
    }
    Some(Used {
        driver,
        address,
        to_the_end: node.kind == NodeKind::Ephemeral || r.check.is_some(),
    })
}
