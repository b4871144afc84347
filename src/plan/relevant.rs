//! Plan JSON's `relevant_attributes`: the resource attributes the
//! configuration of what the plan changes refers to — a changing
//! resource's arguments and a changing root output's value, followed
//! through locals, module inputs and module outputs to the resources
//! they read — as Terraform lists them for tools that tell relevant drift
//! from noise. A resource's own references are not followed further.

use super::{Action, OutputChange, ResourceChange};
use crate::config::{Module, ResourceIndex};
use crate::lang::value::Value;
use crate::syntax::{Body, Expr, ExprKind};
use serde_json::Value as Json;
use std::collections::HashSet;
use strata_state::model::{InstanceKey, Mode, ModulePath};

/// One attribute of one resource (or all of it: an empty path).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct RelevantAttr {
    /// `aws_subnet.a[0]`, `module.net.aws_vpc.main`.
    pub resource: String,
    /// Attribute names and literal keys, as far as the reference names
    /// them statically.
    pub attribute: Vec<Json>,
}

/// What `changes` and `outputs` (of the module tree under `root`) refer to.
pub fn relevant(
    root: &Module,
    changes: &[ResourceChange],
    outputs: &[OutputChange],
) -> Vec<RelevantAttr> {
    let mut walk = Walk {
        root,
        blocks: ResourceIndex::of(root),
        out: Vec::new(),
        seen: HashSet::new(),
        followed: HashSet::new(),
    };
    for c in changes
        .iter()
        .filter(|c| !matches!(c.action, Action::NoOp | Action::Read | Action::Forget))
    {
        let path = &c.addr.id.module;
        let config = c.addr.id.config();
        if let Some(r) = walk.blocks.get(&config) {
            for e in body_exprs(&r.body)
                .into_iter()
                .chain(r.count.iter())
                .chain(r.for_each.iter())
            {
                walk.expr(path, e);
            }
        }
    }
    for o in outputs.iter().filter(|o| o.action() != Action::NoOp) {
        if let Some(decl) = root.outputs.iter().find(|d| d.name == o.name) {
            walk.expr(&ModulePath::root(), &decl.expr);
        }
    }
    // A child module's outputs are never in state, so Terraform counts
    // each as changing in every plan: what they refer to is relevant.
    for path in module_instances(root, changes) {
        if let Some(m) = root.module_at(&path) {
            for o in &m.outputs {
                walk.follow(&path, &format!("output.{}", o.name), &o.expr);
            }
        }
    }
    walk.out
}

/// Every instance of a child module the plan knows: those its objects are
/// in and their callers, and the calls that repeat neither (`count`,
/// `for_each`), which have their one instance with or without objects.
fn module_instances(root: &Module, changes: &[ResourceChange]) -> Vec<ModulePath> {
    fn single(m: &Module, at: &ModulePath, out: &mut Vec<ModulePath>) {
        for c in m
            .module_calls
            .iter()
            .filter(|c| c.count.is_none() && c.for_each.is_none())
        {
            let child = at.child(&c.name, None);
            single(&c.module, &child, out);
            out.push(child);
        }
    }
    let mut out = Vec::new();
    single(root, &ModulePath::root(), &mut out);
    for c in changes {
        let mut path = c.addr.id.module.clone();
        while !path.is_root() {
            let parent = path
                .split_last()
                .map(|(p, _)| p)
                .unwrap_or_else(ModulePath::root);
            out.push(path);
            path = parent;
        }
    }
    let mut seen = HashSet::new();
    out.retain(|p| seen.insert(p.to_string()));
    out
}

struct Walk<'m> {
    root: &'m Module,
    blocks: ResourceIndex<'m>,
    out: Vec<RelevantAttr>,
    seen: HashSet<RelevantAttr>,
    /// Locals, inputs and outputs already followed, by module and name.
    followed: HashSet<String>,
}

/// One step of a traversal after its root.
enum Step<'e> {
    Attr(&'e str),
    Key(Json),
    /// An index known only when evaluated: the static path ends here.
    Dynamic,
}

impl<'m> Walk<'m> {
    fn expr(&mut self, path: &ModulePath, e: &Expr) {
        let mut found = Vec::new();
        e.visit_traversals(&mut |t| found.push(t));
        for t in found {
            self.traversal(path, t);
        }
    }

    fn traversal(&mut self, path: &ModulePath, t: &Expr) {
        let mut steps = Vec::new();
        let Some(root) = decompose(t, &mut steps) else {
            return;
        };
        let Some(module) = self.root.module_at(path) else {
            return;
        };
        let attr = |i: usize| match steps.get(i) {
            Some(Step::Attr(a)) => Some(*a),
            _ => None,
        };
        match root {
            "local" => {
                if let Some(l) = attr(0).and_then(|n| module.local(n)) {
                    self.follow(path, &format!("local.{}", l.name), &l.expr);
                }
            }
            "var" => self.input(path, attr(0)),
            "module" => self.module_output(path, module, &steps),
            "data" => {
                if let (Some(t), Some(n)) = (attr(0), attr(1)) {
                    self.record(path, Mode::Data, (t, n), &steps[2..]);
                }
            }
            "count" | "each" | "path" | "terraform" | "self" => {}
            type_name => {
                let declared = attr(0).filter(|n| {
                    let local = (Mode::Managed, type_name, *n);
                    self.blocks.in_module(path, local).is_some()
                });
                if let Some(n) = declared {
                    self.record(path, Mode::Managed, (type_name, n), &steps[1..]);
                }
            }
        }
    }

    /// Follows `expr` (named `what` in module `path`) once.
    fn follow(&mut self, path: &ModulePath, what: &str, expr: &Expr) {
        if self.followed.insert(format!("{path}/{what}")) {
            self.expr(path, expr);
        }
    }

    /// `var.NAME` in a child module: the caller's input.
    fn input(&mut self, path: &ModulePath, name: Option<&str>) {
        let (Some(name), Some((parent, step))) = (name, path.split_last()) else {
            return;
        };
        let Some(caller) = self.root.module_at(&parent) else {
            return;
        };
        let call = caller.module_calls.iter().find(|c| c.name == step.call);
        if let Some(a) = call.and_then(|c| c.inputs.iter().find(|a| a.name == name)) {
            self.follow(&parent, &format!("module.{}.{name}", step.call), &a.expr);
        }
    }

    /// `module.CALL[KEY].OUTPUT`: the child's output.
    fn module_output(&mut self, path: &ModulePath, module: &Module, steps: &[Step<'_>]) {
        let Some(Step::Attr(call)) = steps.first() else {
            return;
        };
        let (key, rest) = match steps.get(1) {
            Some(Step::Key(k)) => (instance_key(k), &steps[2..]),
            _ => (None, &steps[1..]),
        };
        let Some(Step::Attr(output)) = rest.first() else {
            return;
        };
        let Some(c) = module.module_calls.iter().find(|c| c.name == *call) else {
            return;
        };
        if let Some(o) = c.module.outputs.iter().find(|o| o.name == *output) {
            let child = path.child(call, key);
            self.follow(&child, &format!("output.{output}"), &o.expr);
        }
    }

    /// A resource attribute: `steps` after the resource's name.
    fn record(
        &mut self,
        path: &ModulePath,
        mode: Mode,
        (type_name, name): (&str, &str),
        steps: &[Step<'_>],
    ) {
        let mut resource = String::new();
        if !path.is_root() {
            resource.push_str(&format!("{path}."));
        }
        if mode == Mode::Data {
            resource.push_str("data.");
        }
        resource.push_str(&format!("{type_name}.{name}"));
        let mut rest = steps;
        match rest.first() {
            Some(Step::Key(k)) => {
                if let Some(key) = instance_key(k) {
                    resource.push_str(&key.to_string());
                }
                rest = &rest[1..];
            }
            // An instance chosen only when evaluated: the whole resource.
            Some(Step::Dynamic) => rest = &[],
            _ => {}
        }
        let attribute = rest
            .iter()
            .map_while(|s| match s {
                Step::Attr(a) => Some(Json::String(a.to_string())),
                Step::Key(k) => Some(k.clone()),
                Step::Dynamic => None,
            })
            .collect();
        let found = RelevantAttr {
            resource,
            attribute,
        };
        if self.seen.insert(found.clone()) {
            self.out.push(found);
        }
    }
}

/// A traversal's root name and its steps.
fn decompose<'e>(e: &'e Expr, steps: &mut Vec<Step<'e>>) -> Option<&'e str> {
    match &e.kind {
        ExprKind::Variable(name) => Some(name),
        ExprKind::GetAttr(inner, a) => {
            let root = decompose(inner, steps)?;
            steps.push(Step::Attr(a));
            Some(root)
        }
        ExprKind::Index(inner, key) => {
            let root = decompose(inner, steps)?;
            steps.push(match &key.kind {
                ExprKind::Literal(v) => match v.unmarked() {
                    Value::String(s) => Step::Key(Json::String(s.clone())),
                    Value::Number(n) => {
                        Step::Key(serde_json::from_str(&n.to_text()).unwrap_or(Json::Null))
                    }
                    _ => Step::Dynamic,
                },
                _ => Step::Dynamic,
            });
            Some(root)
        }
        _ => None,
    }
}

fn instance_key(k: &Json) -> Option<InstanceKey> {
    match k {
        Json::String(s) => Some(InstanceKey::Str(s.clone())),
        Json::Number(n) => n.as_u64().map(InstanceKey::Int),
        _ => None,
    }
}

/// Every expression of a body, its nested blocks' too.
fn body_exprs(body: &Body) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = body.attrs.iter().map(|a| &a.expr).collect();
    for b in &body.blocks {
        out.extend(body_exprs(&b.body));
    }
    out
}
