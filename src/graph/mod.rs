//! The dependency graph of a configuration: one node per variable, local,
//! output, resource, data source and module call (in every module), edges
//! from the references in their expressions and from `depends_on`. Cycles
//! are reported naming every node in them. `strata graph` prints the
//! resource view as DOT, the way `terraform graph` does.

mod scope;

pub use scope::{Destroying, Scope, Target};

use crate::config::{Condition, Mode, Module, ModuleCall, Resource};
use crate::diag::{Diag, Diags, Sources, Span};
use crate::syntax::{Body, Expr};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::{BTreeSet, HashMap};
use strata_state::model::{ModulePath, ResourceAddr};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NodeKind {
    Variable,
    Local,
    Output,
    Resource,
    Data,
    /// An `ephemeral` block: opened when the walk reaches it, never kept.
    Ephemeral,
    ModuleCall,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub kind: NodeKind,
    /// The module the node is in (no instance keys: this is the
    /// configuration), the root's empty.
    pub module: ModulePath,
    /// The address within the module: `var.x`, `local.y`, `output.z`,
    /// `aws_vpc.main`, `data.aws_ami.gpu`, `module.net`.
    pub local_addr: String,
    /// Position of the item in its module's list of that kind
    /// (`Module::resources[index]` for a resource).
    pub index: usize,
    pub span: Span,
    /// A resource or data node's address in the configuration.
    resource: Option<ResourceAddr>,
    /// A data source's: the managed resources a change to which makes it
    /// read during apply rather than now (see [`read_waits`]).
    read_waits: Vec<ResourceAddr>,
}

impl Node {
    /// The full address, `module.net.aws_vpc.main`.
    pub fn addr(&self) -> String {
        format!("{}{}", addr_prefix(&self.module), self.local_addr)
    }

    /// A resource or data node's address in the configuration.
    pub fn resource_addr(&self) -> Option<&ResourceAddr> {
        self.resource.as_ref()
    }

    /// A resource, data source or ephemeral resource: what the resource
    /// view shows and what objects record as their dependencies.
    pub fn is_resource(&self) -> bool {
        matches!(
            self.kind,
            NodeKind::Resource | NodeKind::Data | NodeKind::Ephemeral
        )
    }

    /// For a data source, the managed resources (configuration addresses)
    /// whose planned change defers its read to apply; empty otherwise.
    pub fn read_waits(&self) -> &[ResourceAddr] {
        &self.read_waits
    }
}

/// `module.net.` for addresses inside that module; empty at the root.
pub fn addr_prefix(module: &ModulePath) -> String {
    match module.is_root() {
        true => String::new(),
        false => format!("{module}."),
    }
}

/// Edges point from a dependency to what depends on it.
pub struct Graph {
    pub graph: DiGraph<Node, ()>,
}

struct Builder {
    graph: DiGraph<Node, ()>,
    index: HashMap<String, NodeIndex>,
    /// (dependent, dependency address) pairs, resolved once all nodes exist.
    pending: Vec<(NodeIndex, String)>,
    /// (dependent, module prefix) pairs: the dependent waits for every
    /// resource under the prefix (`depends_on = [module.net]`).
    on_modules: Vec<(NodeIndex, String)>,
    /// (module call, its prefix) pairs: every resource inside waits for the
    /// call, and so for the call's depends_on.
    inside: Vec<(NodeIndex, String)>,
    /// Resources their own provider's configuration uses.
    self_configured: Vec<Diag>,
    /// What decides when data sources are read: their own references and
    /// `depends_on` entries, and module calls' `depends_on` entries.
    waits: Vec<(NodeIndex, Wait)>,
}

/// One thing a data source's read may wait for, before it is resolved.
enum Wait {
    /// A reference in the data source's own expressions.
    Reference(String),
    /// A `depends_on` entry naming a node.
    DependsOn(String),
    /// A `depends_on` entry naming a module call: everything under the
    /// prefix.
    DependsOnModule(String),
}

impl Builder {
    fn add(
        &mut self,
        kind: NodeKind,
        module: &ModulePath,
        (index, local_addr): (usize, String),
        span: Span,
    ) -> NodeIndex {
        let node = Node {
            kind,
            module: module.clone(),
            local_addr,
            index,
            span,
            resource: None,
            read_waits: Vec::new(),
        };
        let addr = node.addr();
        if let Some(&i) = self.index.get(&addr) {
            return i;
        }
        let i = self.graph.add_node(node);
        self.index.insert(addr, i);
        i
    }

    /// Records the dependencies of `owner` found in `expr`; a data
    /// source's are kept as what its read waits for too.
    fn refs(&mut self, owner: NodeIndex, module: &Module, prefix: &str, expr: &Expr) {
        let found = references(module, prefix, expr);
        if self.graph[owner].kind == NodeKind::Data {
            let waits = found.iter().map(|t| (owner, Wait::Reference(t.clone())));
            self.waits.extend(waits);
        }
        for t in found {
            self.pending.push((owner, t));
        }
    }

    /// `depends_on` entries: like references, except that naming a module
    /// means everything in it, not only its outputs.
    fn depends_on(&mut self, owner: NodeIndex, module: &Module, prefix: &str, exprs: &[Expr]) {
        let decides = matches!(
            self.graph[owner].kind,
            NodeKind::Data | NodeKind::ModuleCall
        );
        for e in exprs {
            let found = references(module, prefix, e);
            let call = match &e.kind {
                crate::syntax::ast::ExprKind::GetAttr(inner, name) if matches!(&inner.kind, crate::syntax::ast::ExprKind::Variable(m) if m == "module") => {
                    Some(format!("{prefix}module.{name}."))
                }
                _ => None,
            };
            if decides {
                match &call {
                    Some(p) => self.waits.push((owner, Wait::DependsOnModule(p.clone()))),
                    None => {
                        let waits = found.iter().map(|t| (owner, Wait::DependsOn(t.clone())));
                        self.waits.extend(waits);
                    }
                }
            }
            self.pending.extend(found.into_iter().map(|t| (owner, t)));
            if let Some(p) = call {
                self.on_modules.push((owner, p));
            }
        }
    }

    fn conditions(&mut self, owner: NodeIndex, module: &Module, prefix: &str, conds: &[Condition]) {
        for c in conds {
            self.refs(owner, module, prefix, &c.condition);
            self.refs(owner, module, prefix, &c.error_message);
        }
    }

    fn body_refs(&mut self, owner: NodeIndex, module: &Module, prefix: &str, body: &Body) {
        for a in &body.attrs {
            self.refs(owner, module, prefix, &a.expr);
        }
        for b in &body.blocks {
            self.body_refs(owner, module, prefix, &b.body);
        }
    }

    /// What each provider configuration a module can use depends on:
    /// (local name, alias) → the addresses its root `provider` block
    /// references. A resource waits for them, so a provider configured
    /// from a cluster's outputs is configured once the cluster exists.
    fn provider_deps(root: &Module) -> ProviderDeps {
        let mut out = ProviderDeps::new();
        for p in &root.providers {
            let mut found = Vec::new();
            for a in &p.body.attrs {
                collect_refs(root, &a.expr, &mut found);
            }
            let mut blocks: Vec<&Body> = p.body.blocks.iter().map(|b| &b.body).collect();
            while let Some(b) = blocks.pop() {
                for a in &b.attrs {
                    collect_refs(root, &a.expr, &mut found);
                }
                blocks.extend(b.blocks.iter().map(|x| &x.body));
            }
            out.insert((p.name.clone(), p.alias.clone()), (found, p.span));
        }
        out
    }

    fn module(&mut self, m: &Module, path: &ModulePath, providers: &ProviderDeps) {
        let prefix = &addr_prefix(path);
        let here = Here { m, path, prefix };
        self.values(&here);
        for (n, r) in m.resources.iter().enumerate() {
            self.resource(&here, (n, r), providers);
        }
        for (n, c) in m.module_calls.iter().enumerate() {
            self.call(&here, (n, c), providers);
        }
    }

    /// The module's variables, locals and outputs.
    fn values(&mut self, here: &Here<'_>) {
        let (m, path, prefix) = (here.m, here.path, here.prefix);
        for (n, v) in m.variables.iter().enumerate() {
            let at = (n, format!("var.{}", v.name));
            let i = self.add(NodeKind::Variable, path, at, v.span);
            if let Some(d) = &v.default {
                self.refs(i, m, prefix, d);
            }
            // A validation may read the module's other variables (not
            // its own: that is the value being checked).
            for c in &v.validations {
                c.condition.visit_references(&mut |root, attrs, _| {
                    if let ("var", [other, ..]) = (root, attrs) {
                        if *other != v.name {
                            self.pending.push((i, format!("{prefix}var.{other}")));
                        }
                    }
                });
            }
        }
        for (n, l) in m.locals.iter().enumerate() {
            let at = (n, format!("local.{}", l.name));
            let i = self.add(NodeKind::Local, path, at, l.span);
            self.refs(i, m, prefix, &l.expr);
        }
        for (n, o) in m.outputs.iter().enumerate() {
            let at = (n, format!("output.{}", o.name));
            let i = self.add(NodeKind::Output, path, at, o.span);
            self.refs(i, m, prefix, &o.expr);
            self.conditions(i, m, prefix, &o.preconditions);
            self.depends_on(i, m, prefix, &o.depends_on);
        }
    }

    /// A resource's node, with what its arguments, conditions,
    /// creation-time provisioners and provider configuration use.
    fn resource(&mut self, here: &Here<'_>, (n, r): (usize, &Resource), providers: &ProviderDeps) {
        let (m, path, prefix) = (here.m, here.path, here.prefix);
        let kind = match r.mode {
            Mode::Data => NodeKind::Data,
            Mode::Managed => NodeKind::Resource,
            Mode::Ephemeral => NodeKind::Ephemeral,
        };
        let i = self.add(kind, path, (n, r.address()), r.span);
        self.graph[i].resource = Some(r.addr_in(path));
        let meta = r
            .count
            .iter()
            .chain(&r.for_each)
            .chain(&r.lifecycle.enabled)
            .chain(r.provider.iter().flat_map(|p| &p.key));
        for e in meta.chain(&r.lifecycle.replace_triggered_by) {
            self.refs(i, m, prefix, e);
        }
        self.depends_on(i, m, prefix, &r.depends_on);
        self.body_refs(i, m, prefix, &r.body);
        // A child module's import block is read when the resource it names
        // is planned: what it uses comes first (the root's are read before
        // the walk).
        if !path.is_root() {
            for im in m.imports.iter().filter(|im| im.names(r)) {
                let keys = im.to.address_keys().into_iter();
                for e in keys.chain([im.by.expr()]).chain(&im.for_each) {
                    self.refs(i, m, prefix, e);
                }
            }
        }
        // What its creation-time provisioners use is needed before they
        // run, as what its arguments use is before its create.
        let provisioning = r
            .provisioners
            .iter()
            .filter(|p| p.when == crate::config::When::Create)
            .flat_map(|p| std::iter::once(&p.body).chain(&p.connection))
            .chain(&r.connection);
        for body in provisioning {
            self.body_refs(i, m, prefix, body);
        }
        self.conditions(i, m, prefix, &r.lifecycle.preconditions);
        self.conditions(i, m, prefix, &r.lifecycle.postconditions);
        self.triggered_actions(i, m, prefix, r);
        self.provider_of(i, here, r, providers);
    }

    /// What the actions a resource's `action_trigger` blocks name use (and
    /// their conditions and keys), which the resource's plan evaluates: all
    /// of it comes first. The resource itself they reach as `caller`; a
    /// reference to it by name would be a cycle, and is left out.
    fn triggered_actions(&mut self, i: NodeIndex, m: &Module, prefix: &str, r: &Resource) {
        if r.lifecycle.action_triggers.is_empty() {
            return;
        }
        let me = self.graph[i].addr();
        for t in &r.lifecycle.action_triggers {
            let mut found = Vec::new();
            for e in t.condition.iter().chain(&t.actions) {
                found.extend(references(m, prefix, e));
            }
            let named = m.actions.iter().filter(|a| {
                t.actions.iter().any(|e| {
                    crate::config::action::reference(e)
                        .is_some_and(|(ty, name, _)| ty == a.type_name && name == a.name)
                })
            });
            for a in named {
                for e in a.count.iter().chain(&a.for_each) {
                    found.extend(references(m, prefix, e));
                }
                if let Some(body) = &a.config {
                    body_references(m, prefix, body, &mut found);
                }
            }
            let found = found.into_iter().filter(|t| *t != me);
            self.pending.extend(found.map(|t| (i, t)));
        }
    }

    /// What the configuration of the resource at node `i`'s provider uses,
    /// which the resource waits for; a configuration that uses the
    /// resource itself is an error.
    fn provider_of(
        &mut self,
        i: NodeIndex,
        here: &Here<'_>,
        r: &Resource,
        providers: &ProviderDeps,
    ) {
        // Terraform's rule: a type's provider is the name before its
        // first underscore, unless the resource names one.
        let local = match &r.provider {
            Some(p) => (p.name.clone(), p.alias.clone()),
            None => {
                let implied = r.type_name.split('_').next().unwrap_or_default();
                (implied.to_string(), None)
            }
        };
        let Some((deps, span)) = providers.get(&local) else {
            return;
        };
        let me = format!("{}{}", here.prefix, r.address());
        if deps.contains(&me) {
            self.self_configured.push(
                Diag::new(
                    "strata::graph::provider_cycle",
                    "Provider configuration uses its own resource",
                    format!("The {} provider's configuration uses {me}, which that provider manages: it cannot be configured before the resource exists, nor the resource made before it is configured. Configure the provider from variables, or from a resource another provider manages.", local.0),
                )
                .at(*span),
            );
            return;
        }
        for dep in deps {
            self.pending.push((i, dep.clone()));
        }
    }

    /// A module call's node and the child module's graph inside it.
    fn call(&mut self, here: &Here<'_>, (n, c): (usize, &ModuleCall), providers: &ProviderDeps) {
        let (m, path, prefix) = (here.m, here.path, here.prefix);
        let at = (n, format!("module.{}", c.name));
        let call = self.add(NodeKind::ModuleCall, path, at, c.span);
        // An instance key in `providers` is evaluated where the call is.
        let keys = c.providers.iter().flat_map(|(_, p)| &p.key);
        for e in c
            .count
            .iter()
            .chain(&c.for_each)
            .chain(&c.enabled)
            .chain(keys)
        {
            self.refs(call, m, prefix, e);
        }
        self.depends_on(call, m, prefix, &c.depends_on);
        let child_prefix = format!("{prefix}module.{}.", c.name);
        // The child has the caller's default configurations, and those the
        // call passes under the names it gives them.
        let mut child: ProviderDeps = providers
            .iter()
            .filter(|((_, alias), _)| alias.is_none())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (to, from) in &c.providers {
            let deps = providers
                .get(&(from.name.clone(), from.alias.clone()))
                .cloned()
                .unwrap_or_else(|| (Vec::new(), from.span));
            child.insert((to.name.clone(), to.alias.clone()), deps);
        }
        self.module(&c.module, &path.child(&c.name, None), &child);
        // Everything inside waits for the call: its instances (count,
        // for_each) are known there, and its depends_on holds them back.
        self.inside.push((call, child_prefix.clone()));
        // Each of the child's variables is evaluated from its input, as its
        // own node, so an input and an output of one module are apart in
        // the graph (as in Terraform): a resource may use an output of a
        // module whose other input uses the resource.
        for v in &c.module.variables {
            let var = self.index[&format!("{child_prefix}var.{}", v.name)];
            self.pending
                .push((var, format!("{prefix}module.{}", c.name)));
            if let Some(a) = c.inputs.iter().find(|a| a.name == v.name) {
                self.refs(var, m, prefix, &a.expr);
            }
        }
    }
}

/// Where in the configuration the graph is being built: the module, its
/// path, and the prefix of its nodes' addresses.
struct Here<'a> {
    m: &'a Module,
    path: &'a ModulePath,
    prefix: &'a str,
}

/// The node addresses a reference points at, if any.
fn target(module: &Module, prefix: &str, root: &str, attrs: &[&str]) -> Option<Vec<String>> {
    let first = attrs.first()?;
    Some(match root {
        "var" => vec![format!("{prefix}var.{first}")],
        "local" => vec![format!("{prefix}local.{first}")],
        "data" => vec![format!("{prefix}data.{first}.{}", attrs.get(1)?)],
        "ephemeral" => vec![format!("{prefix}ephemeral.{first}.{}", attrs.get(1)?)],
        "module" => {
            let call = module.module_calls.iter().find(|c| c.name == *first)?;
            let child = format!("{prefix}module.{first}.");
            match attrs.get(1) {
                Some(out) if call.module.outputs.iter().any(|o| o.name == *out) => {
                    vec![format!("{child}output.{out}")]
                }
                _ => call
                    .module
                    .outputs
                    .iter()
                    .map(|o| format!("{child}output.{}", o.name))
                    .collect(),
            }
        }
        "count" | "each" | "path" | "terraform" | "strata" | "self" => return None,
        resource_type => vec![format!("{prefix}{resource_type}.{first}")],
    })
}

/// Builds the graph of `root` and its modules. A cycle is an error naming
/// every node in it.
/// (provider local name, alias) → the addresses its configuration uses.
type ProviderDeps = HashMap<(String, Option<String>), (Vec<String>, Span)>;

/// The node addresses `expr`, in the module at `prefix`, refers to.
fn references(module: &Module, prefix: &str, expr: &Expr) -> Vec<String> {
    let mut found = Vec::new();
    expr.visit_references(&mut |root, attrs, _span| {
        if let Some(t) = target(module, prefix, root, attrs) {
            found.extend(t);
        }
    });
    found
}

/// The node addresses the expressions of `body` (and its blocks') refer to.
fn body_references(module: &Module, prefix: &str, body: &Body, out: &mut Vec<String>) {
    for a in &body.attrs {
        out.extend(references(module, prefix, &a.expr));
    }
    for b in &body.blocks {
        body_references(module, prefix, &b.body, out);
    }
}

/// The addresses `expr` (in the root module) refers to.
fn collect_refs(root: &Module, expr: &Expr, out: &mut Vec<String>) {
    expr.visit_references(&mut |r, attrs, _span| {
        if let Some(t) = target(root, "", r, attrs) {
            out.extend(t);
        }
    });
}

pub fn build(root: &Module, sources: &Sources) -> Result<Graph, Diags> {
    let mut b = Builder {
        graph: DiGraph::new(),
        index: HashMap::new(),
        pending: Vec::new(),
        on_modules: Vec::new(),
        inside: Vec::new(),
        self_configured: Vec::new(),
        waits: Vec::new(),
    };
    let providers = Builder::provider_deps(root);
    b.module(root, &ModulePath::root(), &providers);
    // Whole-module dependencies, resolved against every resource node.
    let resources: Vec<(NodeIndex, String)> = b
        .graph
        .node_indices()
        .filter(|&i| b.graph[i].is_resource())
        .map(|i| (i, b.graph[i].addr()))
        .collect();
    for (owner, prefix) in std::mem::take(&mut b.on_modules) {
        for (_, addr) in &resources {
            if addr.starts_with(&prefix) {
                b.pending.push((owner, addr.clone()));
            }
        }
    }
    let all: Vec<(NodeIndex, String)> = b
        .graph
        .node_indices()
        .map(|i| (i, b.graph[i].addr()))
        .collect();
    for (call, prefix) in std::mem::take(&mut b.inside) {
        let call_addr = b.graph[call].addr();
        for (n, addr) in &all {
            if addr.starts_with(&prefix) {
                b.pending.push((*n, call_addr.clone()));
            }
        }
    }
    let mut seen = BTreeSet::new();
    for (owner, dep) in std::mem::take(&mut b.pending) {
        // References to undeclared things are validate's to report.
        if let Some(&d) = b.index.get(&dep) {
            if seen.insert((d, owner)) {
                b.graph.add_edge(d, owner, ());
            }
        }
    }
    let mut diags = Diags::default();
    for d in std::mem::take(&mut b.self_configured) {
        diags.push(d);
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    for scc in petgraph::algo::tarjan_scc(&b.graph) {
        let self_loop = scc.len() == 1 && b.graph.contains_edge(scc[0], scc[0]);
        if scc.len() < 2 && !self_loop {
            continue;
        }
        diags.push(cycle_diag(&b.graph, &scc, sources));
    }
    if diags.is_empty() {
        read_waits(&mut b);
    }
    diags.into_result(Graph { graph: b.graph })
}

/// What defers each data source's read to apply, as Terraform decides it
/// (`transform_reference.go`'s `dependsOn`): a managed resource its own
/// expressions refer to, or its `depends_on` names (a module, output or
/// variable named standing for every managed resource it depends on), or
/// any managed resource a containing module call's `depends_on` reaches.
/// A reference through a local, variable or module output is not enough:
/// a known configuration is read now even when what it came from changes.
fn read_waits(b: &mut Builder) {
    let mut of: HashMap<NodeIndex, Vec<Wait>> = HashMap::new();
    for (owner, w) in std::mem::take(&mut b.waits) {
        of.entry(owner).or_default().push(w);
    }
    let data: Vec<NodeIndex> = b
        .graph
        .node_indices()
        .filter(|&n| b.graph[n].kind == NodeKind::Data)
        .collect();
    // What a call's depends_on reaches, once per call however many data
    // sources are inside it.
    let mut by_call: HashMap<NodeIndex, Vec<NodeIndex>> = HashMap::new();
    for d in data {
        let mut found = BTreeSet::new();
        for w in of.get(&d).into_iter().flatten() {
            match w {
                Wait::Reference(a) => found.extend(b.index.get(a).copied()),
                Wait::DependsOn(a) => found.extend(named(b, a)),
                Wait::DependsOnModule(p) => found.extend(under(b, p)),
            }
        }
        // Every call the data source is inside, outward.
        let module = b.graph[d].module.clone();
        let steps = module.steps();
        for depth in (1..=steps.len()).rev() {
            let call = ModulePath::from(steps[..depth].to_vec()).to_string();
            let Some(&c) = b.index.get(&call) else {
                continue;
            };
            let reached = by_call.entry(c).or_insert_with(|| {
                let mut reached = Vec::new();
                for w in of.get(&c).into_iter().flatten() {
                    match w {
                        Wait::DependsOn(a) => reached.extend(named(b, a)),
                        Wait::DependsOnModule(p) => reached.extend(under(b, p)),
                        Wait::Reference(_) => {}
                    }
                }
                let mut all = ancestors(&b.graph, &reached);
                all.extend(reached);
                all
            });
            found.extend(reached.iter().copied());
        }
        let mut waits: Vec<ResourceAddr> = found
            .into_iter()
            .filter(|&n| b.graph[n].kind == NodeKind::Resource)
            .filter_map(|n| b.graph[n].resource.clone())
            .collect();
        waits.sort_by_cached_key(ToString::to_string);
        waits.dedup();
        b.graph[d].read_waits = waits;
    }
}

/// A `depends_on` entry's node: itself when a resource, else every
/// resource it depends on.
fn named(b: &Builder, addr: &str) -> Vec<NodeIndex> {
    let Some(&n) = b.index.get(addr) else {
        return Vec::new();
    };
    if b.graph[n].is_resource() {
        return vec![n];
    }
    ancestors(&b.graph, &[n])
}

/// Every resource under a module prefix, and every resource those depend on.
fn under(b: &Builder, prefix: &str) -> Vec<NodeIndex> {
    let inside: Vec<NodeIndex> = b
        .graph
        .node_indices()
        .filter(|&n| b.graph[n].is_resource() && b.graph[n].addr().starts_with(prefix))
        .collect();
    let mut all = ancestors(&b.graph, &inside);
    all.extend(inside);
    all
}

/// The resources anything in `from` depends on, through any path.
fn ancestors(g: &DiGraph<Node, ()>, from: &[NodeIndex]) -> Vec<NodeIndex> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<NodeIndex> = from.to_vec();
    while let Some(n) = stack.pop() {
        for up in g.neighbors_directed(n, petgraph::Direction::Incoming) {
            if seen.insert(up) {
                stack.push(up);
            }
        }
    }
    seen.into_iter().filter(|&n| g[n].is_resource()).collect()
}

fn cycle_diag(g: &DiGraph<Node, ()>, scc: &[NodeIndex], sources: &Sources) -> Diag {
    let mut nodes: Vec<&Node> = scc.iter().map(|&i| &g[i]).collect();
    nodes.sort_by_key(|n| (n.span.file.0, n.span.start));
    let list: Vec<String> = nodes
        .iter()
        .map(|n| {
            let (line, col) = sources.line_col(n.span.file, n.span.start);
            format!(
                "  {} ({}:{line}:{col})",
                n.addr(),
                sources.name(n.span.file)
            )
        })
        .collect();
    // A block's first line is enough to point at it.
    let head = |s: Span| sources.first_line(s);
    let members: Vec<String> = nodes.iter().map(|n| n.addr()).collect();
    let mut d = Diag::new(
        "strata::graph::cycle",
        format!("Cycle: {}", members.join(", ")),
        format!(
            "These depend on each other, so none can be evaluated first:\n{}",
            list.join("\n")
        ),
    )
    .at(head(nodes[0].span))
    .labelled(nodes[0].addr());
    for n in &nodes[1..] {
        d = d.also(n.addr(), head(n.span));
    }
    d
}

impl Graph {
    /// The resources `r` depends on directly or through variables, locals,
    /// outputs and module calls (not through other resources).
    pub fn resource_deps(&self, r: NodeIndex) -> BTreeSet<NodeIndex> {
        let mut found = BTreeSet::new();
        let mut stack: Vec<NodeIndex> = self
            .graph
            .neighbors_directed(r, petgraph::Direction::Incoming)
            .collect();
        let mut visited = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if !visited.insert(n) {
                continue;
            }
            if self.graph[n].is_resource() {
                found.insert(n);
            } else {
                stack.extend(
                    self.graph
                        .neighbors_directed(n, petgraph::Direction::Incoming),
                );
            }
        }
        found
    }
}

/// The resource view `terraform graph` prints: resources and data sources
/// only, an edge from each to the nearest resources it depends on (through
/// variables, locals, outputs and module calls), the edges of the
/// transitive reduction, grouped by module.
struct ResourceView {
    /// Module prefix (`module.net.`, empty for the root) → its resources
    /// as (address, label), in address order.
    by_module: std::collections::BTreeMap<String, Vec<(String, String)>>,
    /// (dependent, dependency) addresses, sorted.
    edges: Vec<(String, String)>,
}

fn resource_view(g: &Graph) -> ResourceView {
    let resources: Vec<NodeIndex> = g
        .graph
        .node_indices()
        .filter(|&i| g.graph[i].is_resource())
        .collect();
    // For each resource, the resources it depends on through any path of
    // non-resource nodes.
    let mut deps: HashMap<NodeIndex, BTreeSet<NodeIndex>> = HashMap::new();
    for &r in &resources {
        deps.insert(r, g.resource_deps(r));
    }
    // Transitive reduction: drop r -> d when another dependency of r reaches d.
    let reaches = |from: NodeIndex, to: NodeIndex| -> bool {
        let mut stack = vec![from];
        let mut visited = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if n == to {
                return true;
            }
            if visited.insert(n) {
                stack.extend(deps.get(&n).into_iter().flatten().copied());
            }
        }
        false
    };
    let mut edges: Vec<(String, String, String)> = Vec::new();
    for &r in &resources {
        let ds = &deps[&r];
        for &d in ds {
            if ds.iter().any(|&other| other != d && reaches(other, d)) {
                continue;
            }
            edges.push((
                addr_prefix(&g.graph[r].module),
                g.graph[r].addr(),
                g.graph[d].addr(),
            ));
        }
    }
    edges.sort();
    let mut by_module: std::collections::BTreeMap<String, Vec<(String, String)>> =
        Default::default();
    for &r in &resources {
        let n = &g.graph[r];
        by_module
            .entry(addr_prefix(&n.module))
            .or_default()
            .push((n.addr(), n.local_addr.clone()));
    }
    for nodes in by_module.values_mut() {
        nodes.sort();
    }
    // In module order (the root's first), then by address.
    let edges = edges.into_iter().map(|(_, from, to)| (from, to)).collect();
    ResourceView { by_module, edges }
}

/// The resource view as DOT, as `terraform graph` prints it, modules as
/// clusters.
pub fn to_dot(g: &Graph) -> String {
    let view = resource_view(g);
    let mut out = String::from(
        "digraph G {\n  rankdir = \"RL\";\n  node [shape = rect, fontname = \"sans-serif\"];\n",
    );
    for (module, nodes) in &view.by_module {
        let indent = match module.is_empty() {
            true => "  ",
            false => {
                let name = module.trim_end_matches('.');
                out.push_str(&format!("  subgraph \"cluster_{name}\" {{\n    label = \"{name}\"\n    fontname = \"sans-serif\"\n"));
                "    "
            }
        };
        for (addr, label) in nodes {
            out.push_str(&format!("{indent}\"{addr}\" [label=\"{label}\"];\n"));
        }
        if !module.is_empty() {
            out.push_str("  }\n");
        }
    }
    for (from, to) in &view.edges {
        out.push_str(&format!("  \"{from}\" -> \"{to}\";\n"));
    }
    out.push_str("}\n");
    out
}

/// The resource view as a Mermaid flowchart (`graph -format=mermaid`,
/// Terraform 1.15): the same nodes, modules as subgraphs, the same edges,
/// each node by a stable id and labelled with its address (quotes written
/// `&quot;`, as Terraform writes them).
pub fn to_mermaid(g: &Graph) -> String {
    let view = resource_view(g);
    let mut ids: std::collections::BTreeMap<&str, String> = Default::default();
    let quoted = |t: &str| t.replace('"', "&quot;");
    let mut out = String::from("flowchart LR\n");
    for (m, (module, nodes)) in view.by_module.iter().enumerate() {
        let indent = match module.is_empty() {
            true => "  ",
            false => {
                let name = module.trim_end_matches('.');
                out.push_str(&format!("  subgraph m{m}[\"{}\"]\n", quoted(name)));
                "    "
            }
        };
        for (addr, label) in nodes {
            let id = format!("n{}", ids.len());
            out.push_str(&format!("{indent}{id}[\"{}\"]\n", quoted(label)));
            ids.insert(addr, id);
        }
        if !module.is_empty() {
            out.push_str("  end\n");
        }
    }
    for (from, to) in &view.edges {
        if let (Some(a), Some(b)) = (ids.get(from.as_str()), ids.get(to.as_str())) {
            out.push_str(&format!("  {a} --> {b}\n"));
        }
    }
    out
}
