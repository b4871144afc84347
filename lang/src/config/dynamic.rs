//! Module sources and versions written as expressions (Terraform 1.15):
//! evaluated while the configuration is loaded — before any module is
//! installed or anything is planned — from literal values, `path.*`,
//! `const = true` variables (given on the command line, in variables
//! files, the environment, by default, or by the calling module) and the
//! locals made of them. Anything known only later (resources, module
//! outputs, `count`, `each`, `terraform.*`) cannot be used there.

use super::variables::{resolve, CliInput};
use super::{ConfigScope, Module, ModuleCall, ModuleVersion, ProviderSource, Run};
use crate::diag::{Diag, Diags, Sources, Span};
use crate::eval::Evaluator;
use crate::lang::value::Value;
use crate::syntax::Attribute;
use crate::syntax::Expr;
use std::collections::{BTreeMap, HashSet};

/// The values of one module's const variables, by name.
pub type Consts = BTreeMap<String, Value>;

/// What a root module's const variables are given from: the command
/// line's `-var` and `-var-file` in order, and the environment.
#[derive(Debug, Clone, Default)]
pub struct Given {
    pub cli: Vec<CliInput>,
    pub env: Vec<(String, String)>,
}

impl Given {
    /// The command line's `cli`, and the process's environment.
    pub fn with_environment(cli: Vec<CliInput>) -> Given {
        Given {
            cli,
            env: super::variables::environment(),
        }
    }
}

/// The root module's const variables, from what the command was given
/// (its other variables are not needed to load, so not asked for).
pub fn root_consts(root: &Module, given: &Given, sources: &mut Sources) -> Result<Consts, Diags> {
    root_values(root, given, sources, |name| {
        root.variable(name).is_some_and(|v| v.constant)
    })
}

/// The root module's variables that `wanted` names, resolved from what
/// the command was given as a plan resolves them (the others declared,
/// so a `-var` for one is no mistake, but not asked for or judged).
pub fn root_values(
    root: &Module,
    given: &Given,
    sources: &mut Sources,
    wanted: impl Fn(&str) -> bool,
) -> Result<Consts, Diags> {
    if !root.variables.iter().any(|v| wanted(&v.name)) {
        return Ok(Consts::new());
    }
    let mut only_wanted = Module {
        dir: root.dir.clone(),
        variables: root.variables.clone(),
        ..Module::default()
    };
    for v in only_wanted
        .variables
        .iter_mut()
        .filter(|v| !wanted(&v.name))
    {
        v.default = Some(null_literal(v.span));
        v.validations.clear();
    }
    let mut values = resolve(&only_wanted, &given.cli, given.env.clone(), sources)?;
    values.retain(|name, _| wanted(name));
    Ok(values)
}

fn null_literal(span: Span) -> Expr {
    Expr {
        kind: crate::syntax::ast::ExprKind::Literal(Box::new(Value::null())),
        span,
    }
}

/// The const variables of `child`, called by `call` from `parent` (whose
/// own are `consts`): what the call gives them, else their defaults.
pub fn child_consts(parent: &Module, consts: &Consts, call: &ModuleCall, child: &Module) -> Consts {
    let run = Run::new(parent.dir.clone(), "default");
    let scope = ConfigScope::new(parent, scope_vars(parent, consts), run);
    let mut out = Consts::new();
    for v in child.variables.iter().filter(|v| v.constant) {
        let given = call.inputs.iter().find(|a| a.name == v.name);
        let value = match (given, &v.default) {
            (Some(a), _) => Evaluator::new(&scope, parent.dir.clone()).eval(&a.expr),
            (None, Some(d)) => Evaluator::new(&scope, child.dir.clone()).eval(d),
            (None, None) => continue,
        };
        out.insert(v.name.clone(), value.unwrap_or_else(|_| Value::unknown()));
    }
    out
}

/// Every variable of `m` as a scope sees it while loading: a const one's
/// value, the others unknown.
fn scope_vars(m: &Module, consts: &Consts) -> BTreeMap<String, Value> {
    m.variables
        .iter()
        .map(|v| {
            let value = consts.get(&v.name).cloned();
            (v.name.clone(), value.unwrap_or_else(Value::unknown))
        })
        .collect()
}

/// Each call of `m` whose source or version is an expression gets them
/// evaluated, and so does each `required_providers` entry made of const
/// variables; what cannot be is said in `diags` (the call then has no
/// source, the provider no entry).
pub fn resolve_calls(m: &mut Module, consts: &Consts, diags: &mut Diags) {
    let pending = std::mem::take(&mut m.settings.pending_providers);
    let calls_dynamic = m
        .module_calls
        .iter()
        .any(|c| c.source_expr.is_some() || c.version_expr.is_some());
    if pending.is_empty() && !calls_dynamic {
        return;
    }
    let mut calls = std::mem::take(&mut m.module_calls);
    let mut providers = Vec::new();
    {
        let run = Run::new(m.dir.clone(), "default");
        let scope = ConfigScope::new(m, scope_vars(m, consts), run);
        let at = Here { m, scope: &scope };
        for a in &pending {
            providers.extend(at.provider(a, diags));
        }
        for call in &mut calls {
            if let Some(e) = &call.source_expr {
                call.source = at.string(e, "source", diags).unwrap_or_default();
            }
            if let Some(e) = &call.version_expr {
                call.version = at
                    .string(e, "version", diags)
                    .map(|constraint| ModuleVersion {
                        constraint,
                        span: e.span,
                    });
            }
        }
    }
    m.module_calls = calls;
    m.settings.provider_sources.extend(providers);
}

/// A module being loaded and its scope.
struct Here<'a> {
    m: &'a Module,
    scope: &'a ConfigScope<'a>,
}

impl Here<'_> {
    /// A `required_providers` entry made of const variables.
    fn provider(&self, a: &Attribute, diags: &mut Diags) -> Option<ProviderSource> {
        let mut fields = crate::lang::value::Attrs::new();
        for (name, e) in super::decode::provider_items(&a.expr) {
            let what = format!("provider {name}");
            let v = self.known(e, &what, diags)?;
            fields.insert(name.to_string(), v.unmarked().clone());
        }
        let value = Value::Object(fields);
        super::decode::provider_source(&a.name, &value, a.expr.span, diags)
    }

    /// `e`'s value, when it can be known while loading (else said as the
    /// module's or provider's `what`).
    fn known(&self, e: &Expr, what: &str, diags: &mut Diags) -> Option<Value> {
        if let Some(d) = self.unusable(e, what) {
            diags.push(d);
            return None;
        }
        let v = match Evaluator::new(self.scope, self.m.dir.clone()).eval(e) {
            Ok(v) => v,
            Err(d) => {
                diags.push(d);
                return None;
            }
        };
        if !v.is_wholly_known() {
            let detail = "Only literal values and const variables can be evaluated during init.";
            diags.push(unknown(what, detail.into(), e.span));
            return None;
        }
        Some(v)
    }

    /// `e` as the text of a call's `what` (`source`, `version`).
    fn string(&self, e: &Expr, what: &str, diags: &mut Diags) -> Option<String> {
        let v = self.known(e, what, diags)?;
        match v.unmarked().as_str() {
            Some(s) => Some(s.to_string()),
            None => {
                let detail = format!("The {} must be a string.", noun(what));
                diags.push(
                    Diag::new(
                        "strata::config::module_source",
                        format!("Invalid {}", noun(what)),
                        detail,
                    )
                    .at(e.span),
                );
                None
            }
        }
    }

    /// Why `e` can never be known while loading, following locals: a
    /// reference to what only a plan knows, or to a variable that is not
    /// const.
    fn unusable(&self, e: &Expr, what: &str) -> Option<Diag> {
        let mut seen = HashSet::new();
        let mut pending = vec![e];
        while let Some(e) = pending.pop() {
            let mut found = None;
            e.visit_references(&mut |root, attrs, span| {
                if found.is_some() {
                    return;
                }
                let first = attrs.first().copied().unwrap_or_default();
                match root {
                    "path" => {}
                    "var" => match self.m.variable(first) {
                        Some(v) if !v.constant => {
                            let detail = format!("The {} refers to var.{first}, which is not declared with const = true: only literal values, const variables and locals made of them are known when modules and providers are installed.", noun(what));
                            found = Some(unknown(what, detail, span));
                        }
                        _ => {}
                    },
                    "local" => {
                        if let Some(l) = self.m.local(first) {
                            if seen.insert(first.to_string()) {
                                pending.push(&l.expr);
                            }
                        }
                    }
                    _ => {
                        let detail = format!("The {} refers to {root}{}, which is not known until the configuration is planned: it may use only literal values, const variables, locals made of them and path.", noun(what), attrs.first().map(|a| format!(".{a}")).unwrap_or_default());
                        // Terraform calls a provider's "unknown" either way.
                        found = Some(match what.starts_with("provider") {
                            true => unknown(what, detail, span),
                            false => Diag::new("strata::config::module_source", format!("Invalid {}", noun(what)), detail).at(span),
                        });
                    }
                }
            });
            if found.is_some() {
                return found;
            }
        }
        None
    }
}

fn unknown(what: &str, detail: String, span: Span) -> Diag {
    Diag::new(
        "strata::config::module_source",
        format!("Unknown {}", noun(what)),
        detail,
    )
    .at(span)
}

/// `source` → "module source"; a provider's own noun as it is.
fn noun(what: &str) -> String {
    match what.starts_with("provider") {
        true => what.to_string(),
        false => format!("module {what}"),
    }
}
