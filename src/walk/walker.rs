//! Evaluating a configuration's graph in dependency order. Each node is
//! evaluated once per instance of its module (`module.a[0]`, `module.a[1]`),
//! its value kept in a table keyed by that instance's path and the node's
//! address inside it, where later nodes' references find it. Plan and apply share this walk: plan asks drivers
//! what would change, apply carries the changes out.

use crate::builtin::doubles::Doubles;
use crate::config::condition::{judge_all, Kind};
use crate::config::{repeat, Declared, Known, Module, Run};
use crate::diag::{Diag, Diags, Span};
use crate::eval::Evaluator;
use crate::graph::{Graph, Node, NodeKind};
use crate::lang::value::{Attrs, Value};
use crate::syntax::Expr;
use petgraph::graph::NodeIndex;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::Arc;
use strata_state::model::{Address, InstanceKey, ModulePath, ResourceAddr};

/// How a repeated block expands.
#[derive(Debug, Clone)]
pub enum Keys {
    Single,
    /// `lifecycle { enabled = false }`: no instance, and the whole is null.
    Disabled,
    Count(usize),
    Each(Vec<(String, Value)>),
}

/// What decides a block's instances: its `count`, `for_each` or
/// `lifecycle { enabled }` (at most one of them).
#[derive(Clone, Copy)]
struct Repeat<'e> {
    count: Option<&'e Expr>,
    for_each: Option<&'e Expr>,
    enabled: Option<&'e Expr>,
}

/// What an evaluation binds beyond its module's names: `self` (a
/// postcondition's, a provisioner's object) and `caller` (an action's
/// triggering object).
#[derive(Default)]
struct Bound {
    self_value: Option<Value>,
    caller: Option<Value>,
}

/// One instance of a resource or module call: its key and what `count`
/// and `each` mean inside it.
#[derive(Debug, Clone)]
pub struct InstanceCtx {
    pub key: Option<InstanceKey>,
    count_index: Option<Value>,
    each: Option<(Value, Value)>,
}

impl InstanceCtx {
    /// An instance its resource's `count` or `for_each` no longer makes
    /// (or that is being destroyed): `count.index` is its key, `each.key`
    /// too, and `each.value` unknown.
    pub fn orphan(key: Option<InstanceKey>) -> InstanceCtx {
        let (count_index, each) = match &key {
            Some(InstanceKey::Int(i)) => (
                Some(Value::int(i64::try_from(*i).unwrap_or(i64::MAX))),
                None,
            ),
            Some(InstanceKey::Str(s)) => (None, Some((Value::String(s.clone()), Value::unknown()))),
            None => (None, None),
        };
        InstanceCtx {
            key,
            count_index,
            each,
        }
    }

    /// Sets `count.index` and `each` in `scope` as this instance has them.
    pub fn bind(&self, scope: &mut crate::config::ConfigScope<'_>) {
        scope.count_index = self.count_index.clone();
        scope.each = self.each.clone();
    }
}

impl Keys {
    pub fn instances(&self) -> Vec<InstanceCtx> {
        match self {
            Keys::Single => vec![InstanceCtx {
                key: None,
                count_index: None,
                each: None,
            }],
            Keys::Disabled => Vec::new(),
            Keys::Count(n) => (0..*n)
                .map(|i| InstanceCtx {
                    key: Some(InstanceKey::Int(i as u64)),
                    count_index: Some(Value::int(i as i64)),
                    each: None,
                })
                .collect(),
            Keys::Each(items) => items
                .iter()
                .map(|(k, v)| InstanceCtx {
                    key: Some(InstanceKey::Str(k.clone())),
                    count_index: None,
                    each: Some((Value::String(k.clone()), v.clone())),
                })
                .collect(),
        }
    }

    /// The whole resource's (or module call's) value from its instances'.
    pub fn assemble(&self, mut values: Vec<Value>) -> Value {
        match self {
            Keys::Single => values.pop().unwrap_or_else(Value::unknown),
            Keys::Disabled => Value::null(),
            Keys::Count(_) => Value::Tuple(values),
            Keys::Each(items) => Value::Object(
                items
                    .iter()
                    .map(|(k, _)| k.clone())
                    .zip(values)
                    .collect::<Attrs>(),
            ),
        }
    }
}

/// A resource block's instances in one module instance: the resource
/// there (`module.a[0].aws_vpc.main`) and how its keys expanded.
pub struct ResourceInstances {
    pub resource: ResourceAddr,
    pub keys: Keys,
}

impl ResourceInstances {
    /// The module instance, `module.a[0]` (the root's is empty).
    pub fn module(&self) -> &ModulePath {
        &self.resource.module
    }

    /// The instance with `key`.
    pub fn address(&self, key: Option<InstanceKey>) -> Address {
        self.resource.instance(key)
    }
}

struct ModuleInfo<'a> {
    module: &'a Module,
    declared: Rc<Declared<'a>>,
}

pub struct Walk<'a> {
    pub graph: &'a Graph,
    run: Rc<Run>,
    /// By the configuration's module path (no keys).
    modules: HashMap<ModulePath, ModuleInfo<'a>>,
    /// A configuration's module path → its instances.
    instances: RefCell<HashMap<ModulePath, Vec<ModulePath>>>,
    /// How each call expanded, keyed by the calling instance's path and
    /// the call's name as a keyless step (`module.a[0].module.b`).
    calls: RefCell<HashMap<ModulePath, Keys>>,
    /// A module instance → its caller and the call's `count`/`each` there,
    /// for evaluating its variables' inputs.
    callers: RefCell<HashMap<ModulePath, (ModulePath, InstanceCtx)>>,
    /// Module instance → address inside it (`var.x`, `aws_vpc.main`) →
    /// value.
    table: RefCell<HashMap<ModulePath, HashMap<String, Value>>>,
    /// A test's stand-ins: module instances it overrides are not walked,
    /// their outputs given.
    doubles: Option<Arc<dyn Doubles>>,
}

/// Name lookups of one module instance, against the walk's table.
struct At<'w, 'a> {
    walk: &'w Walk<'a>,
    path: &'w ModulePath,
    module: &'a Module,
}

impl Known for At<'_, '_> {
    fn get(&self, local_addr: &str) -> Option<Value> {
        if let Some(call) = local_addr.strip_prefix("module.") {
            return self.walk.call_value(self.path, self.module, call);
        }
        self.walk.get(self.path, local_addr)
    }
}

fn count_unknown(span: Span) -> Diag {
    Diag::new(
        "strata::plan::count_unknown",
        "Invalid count argument",
        "The \"count\" value depends on resource attributes that cannot be determined until apply, so strata cannot predict how many instances will be created. Apply the resources that the count depends on first, or use a value known before apply.",
    )
    .at(span)
}

fn for_each_unknown(span: Span) -> Diag {
    Diag::new(
        "strata::plan::for_each_unknown",
        "Invalid for_each argument",
        "The \"for_each\" value depends on resource attributes that cannot be determined until apply, so strata cannot determine the full set of keys that will identify the instances of this resource. Apply the resources that the for_each value depends on first, or use keys known before apply (the values may stay unknown).",
    )
    .at(span)
}

impl<'a> Walk<'a> {
    pub fn new(
        root: &'a Module,
        graph: &'a Graph,
        root_vars: BTreeMap<String, Value>,
        run: Rc<Run>,
    ) -> Walk<'a> {
        let mut modules = HashMap::new();
        fn index<'a>(
            m: &'a Module,
            path: ModulePath,
            out: &mut HashMap<ModulePath, ModuleInfo<'a>>,
        ) {
            for c in &m.module_calls {
                index(&c.module, path.child(&c.name, None), out);
            }
            out.insert(
                path,
                ModuleInfo {
                    module: m,
                    declared: Rc::new(Declared::of(m)),
                },
            );
        }
        index(root, ModulePath::root(), &mut modules);
        let vars = root_vars
            .into_iter()
            .map(|(k, v)| (format!("var.{k}"), v))
            .collect();
        Walk {
            graph,
            run,
            modules,
            instances: RefCell::new(HashMap::from([(
                ModulePath::root(),
                vec![ModulePath::root()],
            )])),
            calls: RefCell::new(HashMap::new()),
            callers: RefCell::new(HashMap::new()),
            table: RefCell::new(HashMap::from([(ModulePath::root(), vars)])),
            doubles: None,
        }
    }

    /// The same walk under a test's stand-ins (`override_module`).
    pub fn doubled(mut self, doubles: Option<Arc<dyn Doubles>>) -> Walk<'a> {
        self.doubles = doubles;
        self
    }

    /// Every node, dependencies first.
    pub fn order(&self) -> Vec<NodeIndex> {
        // The graph stage has already refused cycles.
        petgraph::algo::toposort(&self.graph.graph, None).unwrap_or_default()
    }

    fn module_of(&self, node: &Node) -> Option<&ModuleInfo<'a>> {
        self.modules.get(&node.module)
    }

    pub fn module(&self, node: &Node) -> Option<&'a Module> {
        self.module_of(node).map(|m| m.module)
    }

    /// The instances of the node's module.
    pub fn module_paths(&self, node: &Node) -> Vec<ModulePath> {
        self.module_instances(&node.module)
    }

    fn call_value(&self, path: &ModulePath, module: &Module, call: &str) -> Option<Value> {
        let c = module.module_calls.iter().find(|c| c.name == call)?;
        let keys = self.calls.borrow().get(&path.child(call, None))?.clone();
        let table = self.table.borrow();
        let values = keys
            .instances()
            .into_iter()
            .map(|i| {
                let child = table.get(&path.child(call, i.key));
                Value::Object(
                    c.module
                        .outputs
                        .iter()
                        .map(|o| {
                            let v = child.and_then(|t| t.get(&format!("output.{}", o.name)));
                            (o.name.clone(), v.cloned().unwrap_or_else(Value::unknown))
                        })
                        .collect(),
                )
            })
            .collect();
        Some(keys.assemble(values))
    }

    /// Runs `f` with an evaluator for instance `path` of the node's
    /// module, `count`/`each` set for instance `ctx`.
    pub fn eval_with<R>(
        &self,
        node: &Node,
        path: &ModulePath,
        ctx: Option<&InstanceCtx>,
        f: impl FnOnce(&mut Evaluator) -> R,
    ) -> Option<R> {
        self.eval_at(&node.module, path, ctx, f)
    }

    /// As [`Walk::eval_with`], in instance `path` of the configuration's
    /// module `module`.
    pub fn eval_at<R>(
        &self,
        module: &ModulePath,
        path: &ModulePath,
        ctx: Option<&InstanceCtx>,
        f: impl FnOnce(&mut Evaluator) -> R,
    ) -> Option<R> {
        self.eval_in(module, path, ctx, Bound::default(), f)
    }

    /// As [`Walk::eval_with`], with `self` bound to `object`: a
    /// postcondition looking at the object planned or made.
    pub fn eval_self<R>(
        &self,
        node: &Node,
        path: &ModulePath,
        ctx: Option<&InstanceCtx>,
        object: Value,
        f: impl FnOnce(&mut Evaluator) -> R,
    ) -> Option<R> {
        let bound = Bound {
            self_value: Some(object),
            caller: None,
        };
        self.eval_in(&node.module, path, ctx, bound, f)
    }

    /// Runs `f` with an evaluator for the root module.
    pub fn eval_root<R>(&self, f: impl FnOnce(&mut Evaluator) -> R) -> Option<R> {
        let root = ModulePath::root();
        self.eval_in(&root, &root, None, Bound::default(), f)
    }

    /// The instances of the configuration's module `module`, as the walk
    /// expanded them.
    pub fn module_instances(&self, module: &ModulePath) -> Vec<ModulePath> {
        self.instances
            .borrow()
            .get(module)
            .cloned()
            .unwrap_or_default()
    }

    /// Evaluates in instance `path` of the configuration's module `module`,
    /// outside any resource (a check's assertions).
    pub fn eval_module<R>(
        &self,
        module: &ModulePath,
        path: &ModulePath,
        f: impl FnOnce(&mut Evaluator) -> R,
    ) -> Option<R> {
        self.eval_in(module, path, None, Bound::default(), f)
    }

    /// As [`Walk::eval_module`], with `each` set: an import block's
    /// `for_each` element.
    pub fn eval_module_each<R>(
        &self,
        module: &ModulePath,
        path: &ModulePath,
        each: Option<(Value, Value)>,
        f: impl FnOnce(&mut Evaluator) -> R,
    ) -> Option<R> {
        let ctx = each.map(|each| InstanceCtx {
            key: None,
            count_index: None,
            each: Some(each),
        });
        self.eval_in(module, path, ctx.as_ref(), Bound::default(), f)
    }

    /// Evaluates where module instance `child` is called, with its call's
    /// `count`/`each` for that instance: a module call's `providers`
    /// naming an instance of a provider configuration.
    pub fn eval_in_caller<R>(
        &self,
        child: &ModulePath,
        f: impl FnOnce(&mut Evaluator) -> R,
    ) -> Option<R> {
        let (caller, ctx) = self.callers.borrow().get(child).cloned()?;
        let module = caller.without_keys();
        self.eval_in(&module, &caller, Some(&ctx), Bound::default(), f)
    }

    /// The instances of an `action` block of `node`'s module in module
    /// instance `path` (its `count` or `for_each` evaluated there), each
    /// with its key.
    pub fn action_instances(
        &self,
        node: &Node,
        path: &ModulePath,
        count: Option<&Expr>,
        for_each: Option<&Expr>,
    ) -> Result<Vec<InstanceCtx>, Diag> {
        let by = Repeat {
            count,
            for_each,
            enabled: None,
        };
        Ok(self.keys(node, path, by)?.instances())
    }

    /// As [`Walk::eval_with`] in `node`'s module, with `caller` (and
    /// `self`) bound to `object` and `count`/`each` set for instance `ctx`
    /// of an action: an `action_trigger`'s action configuration.
    pub fn eval_caller<R>(
        &self,
        node: &Node,
        path: &ModulePath,
        ctx: &InstanceCtx,
        object: Value,
        f: impl FnOnce(&mut Evaluator) -> R,
    ) -> Option<R> {
        let bound = Bound {
            self_value: Some(object.clone()),
            caller: Some(object),
        };
        self.eval_in(&node.module, path, Some(ctx), bound, f)
    }

    fn eval_in<R>(
        &self,
        module: &ModulePath,
        path: &ModulePath,
        ctx: Option<&InstanceCtx>,
        bound: Bound,
        f: impl FnOnce(&mut Evaluator) -> R,
    ) -> Option<R> {
        let info = self.modules.get(module)?;
        let at = At {
            walk: self,
            path,
            module: info.module,
        };
        let mut scope = crate::config::ConfigScope::walking(
            info.module,
            info.declared.clone(),
            &at,
            self.run.clone(),
        );
        if let Some(c) = ctx {
            c.bind(&mut scope);
        }
        scope.self_value = bound.self_value;
        scope.caller = bound.caller;
        let mut ev = scope.evaluator();
        Some(f(&mut ev))
    }

    fn eval(
        &self,
        node: &Node,
        path: &ModulePath,
        ctx: Option<&InstanceCtx>,
        e: &Expr,
    ) -> Result<Value, Diag> {
        self.eval_with(node, path, ctx, |ev| ev.eval(e))
            .unwrap_or_else(|| Ok(Value::unknown()))
    }

    /// Records the value of `local_addr` (`var.x`, `aws_vpc.main`) in
    /// module instance `path`.
    pub fn set(&self, path: &ModulePath, local_addr: &str, v: Value) {
        let mut table = self.table.borrow_mut();
        let values = match table.get_mut(path) {
            Some(values) => values,
            None => table.entry(path.clone()).or_default(),
        };
        values.insert(local_addr.to_string(), v);
    }

    pub fn get(&self, path: &ModulePath, local_addr: &str) -> Option<Value> {
        self.table.borrow().get(path)?.get(local_addr).cloned()
    }

    /// How `count` / `for_each` expand in module instance `path`, or
    /// whether `enabled` keeps the single instance.
    fn keys(&self, node: &Node, path: &ModulePath, by: Repeat<'_>) -> Result<Keys, Diag> {
        let Repeat {
            count,
            for_each,
            enabled,
        } = by;
        if let Some(e) = enabled {
            let v = self.eval(node, path, None, e)?;
            return match repeat::enabled(&v, e.span)? {
                true => Ok(Keys::Single),
                false => Ok(Keys::Disabled),
            };
        }
        if let Some(c) = count {
            let v = self.eval(node, path, None, c)?;
            return match repeat::count(&v, c.span)? {
                Some(n) => Ok(Keys::Count(n as usize)),
                None => Err(count_unknown(c.span)),
            };
        }
        if let Some(f) = for_each {
            let v = self.eval(node, path, None, f)?;
            return match repeat::for_each(&v, f.span)? {
                Some(items) => Ok(Keys::Each(items)),
                None => Err(for_each_unknown(f.span)),
            };
        }
        Ok(Keys::Single)
    }

    /// Evaluates a variable, local, output or module call node in every
    /// instance of its module. Resource nodes are the caller's: use
    /// [`Walk::expand`] and [`Walk::eval_with`].
    pub fn visit(&self, n: NodeIndex, diags: &mut Diags) {
        let node = &self.graph.graph[n];
        let Some(module) = self.module(node) else {
            return;
        };
        for path in self.module_paths(node) {
            match node.kind {
                // Root variables are resolved up front; a child's come
                // from its call's input.
                NodeKind::Variable if !node.module.is_root() => {
                    self.input(node, module, &path, diags)
                }
                NodeKind::Variable | NodeKind::Resource | NodeKind::Data | NodeKind::Ephemeral => {}
                NodeKind::Local => {
                    let l = &module.locals[node.index];
                    let v = self.eval(node, &path, None, &l.expr).unwrap_or_else(|d| {
                        diags.push(d);
                        Value::unknown()
                    });
                    self.set(&path, &node.local_addr, v);
                }
                NodeKind::Output => {
                    let o = &module.outputs[node.index];
                    let (failed, _) = self
                        .eval_with(node, &path, None, |ev| {
                            judge_all(ev, &o.preconditions, Kind::OutputPrecondition)
                        })
                        .unwrap_or_default();
                    if !failed.is_empty() {
                        failed.into_iter().for_each(|d| diags.push(d));
                        self.set(&path, &node.local_addr, Value::unknown());
                        continue;
                    }
                    let v = self.eval(node, &path, None, &o.expr).unwrap_or_else(|d| {
                        diags.push(d);
                        Value::unknown()
                    });
                    // A child's `sensitive = true` hides the output where
                    // it would be shown (the root's); the calling module
                    // gets the value with the marks it carries, as in
                    // Terraform (which plans `output "x" { value =
                    // module.m.secret_but_plain }` without complaint).
                    let shown_here = path.is_root() && o.sensitive;
                    self.set(&path, &node.local_addr, v.mark_if(shown_here));
                }
                NodeKind::ModuleCall => self.call(node, module, &path, diags),
            }
        }
    }

    fn call(&self, node: &Node, module: &Module, path: &ModulePath, diags: &mut Diags) {
        let c = &module.module_calls[node.index];
        let by = Repeat {
            count: c.count.as_ref(),
            for_each: c.for_each.as_ref(),
            enabled: c.enabled.as_ref(),
        };
        let keys = match self.keys(node, path, by) {
            Ok(k) => k,
            Err(d) => return diags.push(d),
        };
        let static_child = node.module.child(&c.name, None);
        for ctx in keys.instances() {
            let child = path.child(&c.name, ctx.key.clone());
            // An overridden instance has nothing in it: as in Terraform,
            // what a state holds there is no longer in the configuration.
            if let Some(given) = self.doubles.as_ref().and_then(|d| d.module_outputs(&child)) {
                for o in &c.module.outputs {
                    let v = given.get(&o.name).cloned().unwrap_or_else(Value::null);
                    self.set(&child, &format!("output.{}", o.name), v);
                }
                continue;
            }
            self.callers
                .borrow_mut()
                .insert(child.clone(), (path.clone(), ctx));
            self.instances
                .borrow_mut()
                .entry(static_child.clone())
                .or_default()
                .push(child);
        }
        self.calls
            .borrow_mut()
            .insert(path.child(&c.name, None), keys);
    }

    /// A child module's variable in one instance of it: its call's input,
    /// evaluated where the call is, then admitted and validated. One that
    /// fails is reported and is an unknown of its type inside, so the
    /// module's other references to it still resolve.
    fn input(&self, node: &Node, module: &Module, path: &ModulePath, diags: &mut Diags) {
        let decl = &module.variables[node.index];
        let Some((caller, ctx)) = self.callers.borrow().get(path).cloned() else {
            return;
        };
        let Some((parent, step)) = node.module.split_last() else {
            return;
        };
        let call_name = step.call.as_str();
        let call = self
            .modules
            .get(&parent)
            .and_then(|m| m.module.module_calls.iter().find(|c| c.name == call_name));
        let raw = call
            .and_then(|c| c.inputs.iter().find(|a| a.name == decl.name))
            .map(|a| {
                // An input that fails is reported once, and is unknown
                // inside, not missing.
                let v = self
                    .eval_in(&parent, &caller, Some(&ctx), Bound::default(), |ev| {
                        ev.eval(&a.expr)
                    })
                    .unwrap_or_else(|| Ok(Value::unknown()))
                    .unwrap_or_else(|d| {
                        diags.push(d);
                        Value::unknown()
                    });
                (v, a.expr.span)
            });
        let others: BTreeMap<String, Value> = match decl.validations.is_empty() {
            // Only a validation reads the module's other variables.
            true => BTreeMap::new(),
            false => module
                .variables
                .iter()
                .filter_map(|v| Some((v.name.clone(), self.get(path, &format!("var.{}", v.name))?)))
                .collect(),
        };
        let v = crate::config::variables::input(module, decl, raw, call_name, others)
            .unwrap_or_else(|d| {
                diags.push(d);
                Value::Unknown(crate::lang::convert::strip_optional(&decl.constraint.ty))
            });
        self.set(path, &node.local_addr, v);
    }

    /// A resource node's instances, per instance of its module.
    pub fn expand(&self, n: NodeIndex, diags: &mut Diags) -> Vec<ResourceInstances> {
        let node = &self.graph.graph[n];
        let Some(module) = self.module(node) else {
            return Vec::new();
        };
        let r = &module.resources[node.index];
        let mut out = Vec::new();
        for module in self.module_paths(node) {
            let by = Repeat {
                count: r.count.as_ref(),
                for_each: r.for_each.as_ref(),
                enabled: r.lifecycle.enabled.as_ref(),
            };
            match self.keys(node, &module, by) {
                Ok(keys) => out.push(ResourceInstances {
                    resource: r.addr_in(&module),
                    keys,
                }),
                Err(d) => {
                    diags.push(d);
                    self.set(&module, &node.local_addr, Value::unknown());
                }
            }
        }
        out
    }

    /// A root module output's value, once visited.
    pub fn root_output(&self, name: &str) -> Option<Value> {
        self.get(&ModulePath::root(), &format!("output.{name}"))
    }
}
