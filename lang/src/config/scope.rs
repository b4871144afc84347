//! The names a module's expressions can reference, resolved against the
//! configuration: variables, locals (evaluated on demand, cycles reported),
//! resources and module calls (unknown until applied), `path`, `terraform`,
//! and `count`/`each` inside repeated blocks.

use super::{Mode, Module};
use crate::diag::{Diag, Span};
use crate::eval::{did_you_mean, unknown_root, CallFailure, Evaluator, Scope};
use crate::funcs::Impure;
use crate::lang::value::{Attrs, Value};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::rc::Rc;

/// What a whole run's expressions share, decided before any is
/// evaluated: `path.root`, `terraform.workspace` (the workspace the
/// backend opens, chosen once by the command), and the providers'
/// functions.
#[derive(Clone)]
pub struct Run {
    pub root_dir: PathBuf,
    pub workspace: String,
    functions: Option<Rc<dyn ProviderFunctions>>,
    /// A plan's (`timestamp()` known after apply) unless [`Run::calling`].
    impure: Impure,
}

impl Run {
    pub fn new(root_dir: PathBuf, workspace: &str) -> Rc<Run> {
        Rc::new(Run {
            root_dir,
            workspace: workspace.to_string(),
            functions: None,
            impure: Impure::KnownAfterApply,
        })
    }

    /// The same run where `timestamp()`, `uuid()` and `bcrypt()` are
    /// called: an apply's walk, the console.
    pub fn calling(&self) -> Rc<Run> {
        Rc::new(Run {
            root_dir: self.root_dir.clone(),
            workspace: self.workspace.clone(),
            functions: self.functions.clone(),
            impure: Impure::Called,
        })
    }

    /// A run whose expressions may call the providers' functions.
    pub fn with_functions(
        root_dir: PathBuf,
        workspace: &str,
        functions: Rc<dyn ProviderFunctions>,
    ) -> Rc<Run> {
        Rc::new(Run {
            root_dir,
            workspace: workspace.to_string(),
            functions: Some(functions),
            impure: Impure::KnownAfterApply,
        })
    }
}

/// The functions the providers of a run offer (`provider::NAME::F`),
/// by provider source address.
pub trait ProviderFunctions {
    /// Calls `function` of the provider at `source` with `args`: `None`
    /// when it offers none of that name.
    fn call(
        &self,
        source: &str,
        function: &str,
        args: Vec<Value>,
    ) -> Option<Result<Value, CallFailure>>;
}

enum LocalState {
    InProgress,
    Done(Result<Value, Diag>),
}

/// Values the plan and apply walks have already computed for one module
/// instance, by address within it: `var.x`, `local.y`, `aws_vpc.main`,
/// `data.t.n`, `module.c`.
pub trait Known {
    fn get(&self, local_addr: &str) -> Option<Value>;
}

/// Declared names, hashed once per module so a reference costs O(1) rather
/// than a scan of every resource.
#[derive(Default)]
pub struct Declared<'a> {
    managed: FxHashSet<(&'a str, &'a str)>,
    data: FxHashMap<&'a str, Vec<&'a str>>,
    ephemeral: FxHashMap<&'a str, Vec<&'a str>>,
    calls: FxHashSet<&'a str>,
}

impl<'a> Declared<'a> {
    pub fn of(module: &'a Module) -> Declared<'a> {
        let mut d = Declared::default();
        d.managed.reserve(module.resources.len());
        for r in &module.resources {
            match r.mode {
                Mode::Managed => {
                    d.managed.insert((r.type_name.as_str(), r.name.as_str()));
                }
                Mode::Data => d
                    .data
                    .entry(r.type_name.as_str())
                    .or_default()
                    .push(r.name.as_str()),
                Mode::Ephemeral => d
                    .ephemeral
                    .entry(r.type_name.as_str())
                    .or_default()
                    .push(r.name.as_str()),
            }
        }
        d.calls = module
            .module_calls
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        d
    }
}

enum CallState {
    InProgress,
    Done(Result<Value, Diag>),
}

pub struct ConfigScope<'a> {
    module: &'a Module,
    /// Outputs of module calls, evaluated on first reference.
    calls: RefCell<HashMap<String, CallState>>,
    declared: Rc<Declared<'a>>,
    /// What a walk has computed; names it lacks fall back to the static
    /// rules (resources unknown, locals evaluated on demand).
    known: Option<&'a dyn Known>,
    vars: BTreeMap<String, Value>,
    locals: RefCell<HashMap<String, LocalState>>,
    /// Locals being evaluated, outermost first, to name a cycle's members.
    in_progress: RefCell<Vec<String>>,
    run: Rc<Run>,
    /// `count.index` in a counted block.
    pub count_index: Option<Value>,
    /// `each.key` and `each.value` in a `for_each` block.
    pub each: Option<(Value, Value)>,
    /// `self` in a postcondition: the object planned or made.
    pub self_value: Option<Value>,
    /// `caller` in an action's configuration: the object of the resource
    /// whose `action_trigger` invokes it (bound to `self` too).
    pub caller: Option<Value>,
    /// `list` in a query file's `list` block: what the lists listed
    /// before it found, by type and name.
    pub lists: Option<Value>,
    /// What in this module is ephemeral, found on first need.
    ephemeral: std::cell::OnceCell<super::ephemeral::Ephemeral>,
}

impl<'a> ConfigScope<'a> {
    pub fn new(module: &'a Module, vars: BTreeMap<String, Value>, run: Rc<Run>) -> ConfigScope<'a> {
        ConfigScope {
            module,
            calls: RefCell::new(HashMap::new()),
            declared: Rc::new(Declared::of(module)),
            known: None,
            vars,
            locals: RefCell::new(HashMap::new()),
            in_progress: RefCell::new(Vec::new()),
            run,
            count_index: None,
            each: None,
            self_value: None,
            caller: None,
            lists: None,
            ephemeral: std::cell::OnceCell::new(),
        }
    }

    /// The same scope with `known` values first (the console's resources,
    /// read from a state).
    pub fn knowing(mut self, known: &'a dyn Known) -> ConfigScope<'a> {
        self.known = Some(known);
        self
    }

    /// A scope for one module instance of a plan or apply walk: names
    /// resolve to the values the walk has computed.
    pub fn walking(
        module: &'a Module,
        declared: Rc<Declared<'a>>,
        known: &'a dyn Known,
        run: Rc<Run>,
    ) -> ConfigScope<'a> {
        ConfigScope {
            module,
            calls: RefCell::new(HashMap::new()),
            declared,
            known: Some(known),
            vars: BTreeMap::new(),
            locals: RefCell::new(HashMap::new()),
            in_progress: RefCell::new(Vec::new()),
            run,
            count_index: None,
            each: None,
            self_value: None,
            caller: None,
            lists: None,
            ephemeral: std::cell::OnceCell::new(),
        }
    }

    fn known(&self, local_addr: &str) -> Option<Value> {
        self.known.and_then(|k| k.get(local_addr))
    }

    /// `module.NAME`: the child's outputs as an object, evaluated from the
    /// call's inputs. Repeated calls (count/for_each) and anything unknown
    /// in the inputs give values that are unknown until apply.
    fn module_outputs(&self, name: &str) -> Result<Value, Diag> {
        match self.calls.borrow().get(name) {
            Some(CallState::Done(r)) => return r.clone(),
            // Two calls given each other's outputs: evaluated whole here,
            // each needs the other first. The walk's graph keeps each
            // input and output apart (as Terraform's does) and names a
            // true cycle; this static view just knows less.
            Some(CallState::InProgress) => return Ok(Value::unknown()),
            None => {}
        }
        let Some(call) = self.module.module_calls.iter().find(|c| c.name == name) else {
            return Ok(Value::unknown());
        };
        if call.count.is_some() || call.for_each.is_some() {
            return Ok(Value::unknown());
        }
        self.calls
            .borrow_mut()
            .insert(name.to_string(), CallState::InProgress);
        let r = (|| {
            let mut inputs = BTreeMap::new();
            for a in &call.inputs {
                inputs.insert(
                    a.name.clone(),
                    (self.evaluator().eval(&a.expr)?, a.expr.span),
                );
            }
            let (vars, errors) = super::variables::resolve_inputs(&call.module, &inputs, name);
            if let Some(d) = errors.into_iter().next() {
                return Err(d);
            }
            let child = ConfigScope::new(&call.module, vars, self.run.clone());
            let mut outputs = Attrs::new();
            for o in &call.module.outputs {
                let v = child.evaluator().eval(&o.expr)?;
                // Only the marks the value carries: a child output's own
                // `sensitive` is not passed up (see the walker's outputs).
                outputs.insert(o.name.clone(), v);
            }
            Ok(Value::Object(outputs))
        })();
        self.calls
            .borrow_mut()
            .insert(name.to_string(), CallState::Done(r.clone()));
        r
    }

    pub fn evaluator(&self) -> Evaluator<'_> {
        // As Terraform's: a relative path in `file()` and its kin is the
        // working directory's, in every module (so `path.module`, which
        // is relative to it, prefixes a module's own files).
        Evaluator::new(self, PathBuf::new())
    }

    fn local(&self, name: &str, span: Span) -> Result<Value, Diag> {
        let Some(local) = self.module.local(name) else {
            let known: Vec<&str> = self.module.locals.iter().map(|l| l.name.as_str()).collect();
            return Err(unknown_root("local", Some(name), &known).at(span));
        };
        match self.locals.borrow().get(name) {
            Some(LocalState::Done(r)) => return r.clone(),
            None if self.known.is_some() => {
                if let Some(v) = self.known(&format!("local.{name}")) {
                    return Ok(v);
                }
            }
            Some(LocalState::InProgress) => {
                let stack = self.in_progress.borrow();
                let start = stack.iter().position(|n| n == name).unwrap_or(0);
                let chain: Vec<String> = stack[start..]
                    .iter()
                    .chain(std::iter::once(&name.to_string()))
                    .map(|n| format!("local.{n}"))
                    .collect();
                return Err(Diag::new(
                    "strata::eval::cycle",
                    "Cycle in local values",
                    format!(
                        "These local values refer to each other in a cycle: {}.",
                        chain.join(" → ")
                    ),
                )
                .at(span));
            }
            None => {}
        }
        self.locals
            .borrow_mut()
            .insert(name.to_string(), LocalState::InProgress);
        self.in_progress.borrow_mut().push(name.to_string());
        let r = self.evaluator().eval(&local.expr);
        self.in_progress.borrow_mut().pop();
        self.locals
            .borrow_mut()
            .insert(name.to_string(), LocalState::Done(r.clone()));
        r
    }
}

fn invalid_ref(detail: impl Into<String>, span: Span) -> Diag {
    Diag::new(
        "strata::eval::invalid_reference",
        "Invalid reference",
        detail,
    )
    .at(span)
}

impl Scope for ConfigScope<'_> {
    fn impure(&self) -> Impure {
        self.run.impure
    }

    fn declares_provider(&self, local_name: &str) -> bool {
        self.module
            .settings
            .required_providers
            .iter()
            .any(|p| p == local_name)
    }

    fn provider_function(
        &self,
        provider: &str,
        function: &str,
        args: Vec<Value>,
    ) -> Option<Result<Value, CallFailure>> {
        let source = self.module.provider_source(provider);
        self.run.functions.as_ref()?.call(&source, function, args)
    }

    fn is_ephemeral(&self, root: &str, attrs: &[&str]) -> bool {
        self.ephemeral
            .get_or_init(|| super::ephemeral::Ephemeral::of(self.module))
            .names(root, attrs)
    }

    fn resolve(&self, name: &str, attr: Option<&str>, span: Span) -> Result<(Value, bool), Diag> {
        let needs_attr = |what: &str| {
            invalid_ref(format!("The {what:?} object cannot be accessed directly. Instead, access one of its attributes."), span)
        };
        match name {
            "var" => self.var(attr.ok_or_else(|| needs_attr("var"))?, span),
            "local" => {
                let a = attr.ok_or_else(|| needs_attr("local"))?;
                self.local(a, span).map(|v| (v, true))
            }
            "path" => self.path(attr.ok_or_else(|| needs_attr("path"))?, span),
            "terraform" | "strata" => match attr {
                Some("workspace") => Ok((Value::string(self.run.workspace.as_str()), true)),
                _ => Err(invalid_ref(format!("The {name:?} object has only the attribute \"workspace\"."), span)),
            },
            "count" => match (&self.count_index, attr) {
                (Some(i), Some("index")) => Ok((i.clone(), true)),
                (None, _) => Err(Diag::new(
                    "strata::eval::count",
                    "Reference to \"count\" in non-counted context",
                    "The \"count\" object can only be used in \"module\", \"resource\", and \"data\" blocks, and only when the \"count\" argument is set.",
                ).at(span)),
                _ => Err(invalid_ref("The \"count\" object has only the attribute \"index\".", span)),
            },
            "each" => match (&self.each, attr) {
                (Some((k, _)), Some("key")) => Ok((k.clone(), true)),
                (Some((_, v)), Some("value")) => Ok((v.clone(), true)),
                (None, _) => Err(Diag::new(
                    "strata::eval::each",
                    "each.value cannot be used in this context",
                    "A reference to \"each.key\" or \"each.value\" has been used in a context in which it is unavailable, such as when the configuration no longer contains the value in its \"for_each\" expression.",
                ).at(span)),
                _ => Err(invalid_ref("The \"each\" object has only the attributes \"key\" and \"value\".", span)),
            },
            "caller" if self.caller.is_some() => {
                Ok((self.caller.clone().unwrap_or_else(Value::unknown), false))
            }
            "list" if self.lists.is_some() => {
                let a = attr.ok_or_else(|| needs_attr("list"))?;
                let by_type = self.lists.as_ref().and_then(Value::entries);
                match by_type.and_then(|t| t.get(a)) {
                    Some(v) => Ok((v.clone(), true)),
                    None => Err(invalid_ref(format!("No list block of the query files is of type {a:?}."), span)),
                }
            }
            "self" if self.self_value.is_some() => {
                Ok((self.self_value.clone().unwrap_or_else(Value::unknown), false))
            }
            // Provisioner, connection and postcondition blocks give `self`
            // its meaning; anywhere else it is an error.
            "self" => Err(Diag::new(
                "strata::eval::invalid_reference",
                "Invalid \"self\" reference",
                "The \"self\" object is not available in this context. This object can be used only in resource provisioner, connection, and postcondition blocks.",
            )
            .at(span)),
            "module" => self.module_ref(attr.ok_or_else(|| needs_attr("module"))?, span),
            "data" => self.data_ref(attr.ok_or_else(|| needs_attr("data"))?, span),
            "ephemeral" => self.ephemeral_ref(attr.ok_or_else(|| needs_attr("ephemeral"))?, span),
            _ => {
                let Some(a) = attr else {
                    return Err(unknown_root(name, None, &["var", "local", "module", "data", "ephemeral", "path", "count", "each", "terraform"]).at(span));
                };
                self.managed_ref(name, a, span)
            }
        }
    }
}

/// What each root name of an expression reads.
impl ConfigScope<'_> {
    /// `var.NAME`: as the walk knows it, else as resolved.
    fn var(&self, a: &str, span: Span) -> Result<(Value, bool), Diag> {
        if let Some(v) = self.known(&format!("var.{a}")) {
            return Ok((v, true));
        }
        match self.vars.get(a) {
            Some(v) => Ok((v.clone(), true)),
            None => {
                let known: Vec<&str> = self
                    .module
                    .variables
                    .iter()
                    .map(|v| v.name.as_str())
                    .collect();
                Err(unknown_root("var", Some(a), &known).at(span))
            }
        }
    }

    /// `path.module`, `path.root`, `path.cwd`.
    fn path(&self, a: &str, span: Span) -> Result<(Value, bool), Diag> {
        let p = match a {
            "module" => self.module.dir.display().to_string(),
            "root" => self.run.root_dir.display().to_string(),
            "cwd" => std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default(),
            _ => return Err(invalid_ref(format!("The \"path\" object does not have an attribute named {a:?}. The supported attributes are path.cwd, path.module, and path.root."), span)),
        };
        Ok((
            Value::String(if p.is_empty() { ".".into() } else { p }),
            true,
        ))
    }

    /// `module.NAME`: a declared call's outputs.
    fn module_ref(&self, a: &str, span: Span) -> Result<(Value, bool), Diag> {
        if !self.declared.calls.contains(a) {
            let known: Vec<&str> = self
                .module
                .module_calls
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            return Err(Diag::new(
                "strata::eval::undeclared_module",
                "Reference to undeclared module",
                format!(
                    "No module call named {a:?} is declared in this module.{}",
                    did_you_mean(a, &known)
                ),
            )
            .at(span));
        }
        if let Some(v) = self.known(&format!("module.{a}")) {
            return Ok((v, true));
        }
        self.module_outputs(a).map(|v| (v, true))
    }

    /// `data.TYPE`: the declared data sources of the type, by name.
    fn data_ref(&self, a: &str, span: Span) -> Result<(Value, bool), Diag> {
        self.typed_ref(Mode::Data, a, span)
    }

    /// `ephemeral.TYPE`: the ephemeral resources of that type, by name.
    fn ephemeral_ref(&self, a: &str, span: Span) -> Result<(Value, bool), Diag> {
        self.typed_ref(Mode::Ephemeral, a, span)
    }

    /// `data.TYPE` or `ephemeral.TYPE`: the declared ones of that type.
    fn typed_ref(&self, mode: Mode, a: &str, span: Span) -> Result<(Value, bool), Diag> {
        let (declared, what) = match mode {
            Mode::Ephemeral => (&self.declared.ephemeral, "An ephemeral"),
            _ => (&self.declared.data, "A data"),
        };
        let names: Attrs = declared
            .get(a)
            .into_iter()
            .flatten()
            .map(|n| {
                let v = self.known(&format!("{}{a}.{n}", mode.prefix()));
                (n.to_string(), v.unwrap_or_else(Value::unknown))
            })
            .collect();
        if names.is_empty() {
            return Err(Diag::new(
                "strata::eval::undeclared_resource",
                "Reference to undeclared resource",
                format!("{what} resource of type {a:?} has not been declared in this module."),
            )
            .at(span));
        }
        Ok((Value::Object(names), true))
    }

    /// `TYPE.NAME`: a declared managed resource.
    fn managed_ref(&self, name: &str, a: &str, span: Span) -> Result<(Value, bool), Diag> {
        if self.declared.managed.contains(&(name, a)) {
            let v = self.known(&format!("{name}.{a}"));
            return Ok((v.unwrap_or_else(Value::unknown), true));
        }
        let known: Vec<String> = self
            .module
            .resources
            .iter()
            .filter(|r| r.mode == Mode::Managed)
            .map(|r| format!("{}.{}", r.type_name, r.name))
            .collect();
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        Err(Diag::new(
            "strata::eval::undeclared_resource",
            "Reference to undeclared resource",
            format!(
                "A managed resource {name:?} {a:?} has not been declared in this module.{}",
                did_you_mean(&format!("{name}.{a}"), &known)
            ),
        )
        .at(span))
    }
}
