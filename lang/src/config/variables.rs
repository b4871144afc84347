//! Input variable values, from every source, with Terraform's precedence
//! (later wins): declared defaults, `STRATA_VAR_name` environment variables,
//! `terraform.tfvars`, `terraform.tfvars.json`, `*.auto.tfvars(.json)` in name
//! order, then `--var` and `--var-file` in the order given on the command line.

use super::{Module, Variable};
use crate::diag::{Diag, Diags, Sources, Span};
use crate::eval::{EmptyScope, Evaluator, MapScope};
use crate::lang::types::Type;
use crate::lang::value::{Attrs, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One `--var` or `--var-file` argument, in command-line order.
#[derive(Debug, Clone)]
pub enum CliInput {
    Var(String),
    File(PathBuf),
    /// A value a caller evaluated itself (a test run's `variables`), at
    /// its place; ignored where the module declares no such variable, as
    /// a test file's variables serve every run's module.
    Given {
        name: String,
        value: Value,
        span: Span,
    },
}

/// Where a value came from, for error messages.
#[derive(Debug, Clone)]
struct Raw {
    value: Value,
    span: Option<Span>,
    origin: String,
}

pub const ENV_PREFIX: &str = "STRATA_VAR_";

/// Terraform's prefix, read too (a script's `TF_VAR_region` works
/// unchanged); `STRATA_VAR_` wins where both name a variable.
pub const TERRAFORM_ENV_PREFIX: &str = "TF_VAR_";

/// The process's environment variables that set variables.
pub fn environment() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| k.starts_with(ENV_PREFIX) || k.starts_with(TERRAFORM_ENV_PREFIX))
        .collect()
}

fn decl_is_string(v: &Variable) -> bool {
    v.constraint.ty == Type::String || !v.typed
}

/// Parses a raw string as the variable wants it: verbatim for string and
/// untyped variables, as an HCL expression otherwise (so `--var 'n=3'` is a number and
/// `--var 'l=["a"]'` a list).
fn parse_raw(
    decl: Option<&Variable>,
    name: &str,
    raw: &str,
    origin: &str,
    sources: &mut Sources,
) -> Result<Raw, Diag> {
    if decl.is_none_or(decl_is_string) {
        return Ok(Raw {
            value: Value::String(raw.to_string()),
            span: None,
            origin: origin.to_string(),
        });
    }
    let file = sources.add(format!("<value for var.{name}>"), raw.to_string());
    if decl.is_some_and(|d| d.sensitive) {
        sources.hide(Span::new(file, 0, raw.len()));
    }
    let text = sources.text(file).to_string();
    let expr = crate::syntax::parse_expr(file, &text)?;
    let mut names = false;
    expr.visit_references(&mut |_, _, _| names = true);
    if names {
        // A bare word is no expression here (there is nothing to refer
        // to): it is the text itself, which the type then judges, as in
        // Terraform (`--var n=abc` for a number: "a number is required").
        return Ok(Raw {
            value: Value::String(raw.to_string()),
            span: None,
            origin: origin.to_string(),
        });
    }
    let value = Evaluator::new(&EmptyScope, PathBuf::new()).eval(&expr)?;
    Ok(Raw {
        value,
        span: Some(expr.span),
        origin: origin.to_string(),
    })
}

/// The assignments in a variables file; the values of the variables
/// `module` declares sensitive are hidden from every diagnostic.
fn read_var_file(
    path: &Path,
    module: &Module,
    sources: &mut Sources,
) -> Result<Vec<(String, Raw)>, Diag> {
    let bytes = std::fs::read(path).map_err(|e| {
        Diag::new(
            "strata::config::var_file",
            "Failed to read variables file",
            format!("{}: {e}", path.display()),
        )
    })?;
    let origin = path.display().to_string();
    let text = String::from_utf8(bytes).map_err(|e| super::not_utf8(&origin, e, sources))?;
    if path.extension().and_then(|e| e.to_str()) == Some("json") {
        let j: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            Diag::new(
                "strata::config::var_file",
                "Invalid variables file",
                format!("{origin}: {e}"),
            )
        })?;
        let serde_json::Value::Object(m) = j else {
            return Err(Diag::new(
                "strata::config::var_file",
                "Invalid variables file",
                format!("{origin}: the root must be a JSON object"),
            ));
        };
        let mut out = Vec::new();
        for (k, v) in m {
            let value = crate::funcs::json_value(&v).map_err(|e| {
                Diag::new(
                    "strata::config::var_file",
                    "Invalid variables file",
                    format!("{origin}: {e}"),
                )
            })?;
            out.push((
                k,
                Raw {
                    value,
                    span: None,
                    origin: origin.clone(),
                },
            ));
        }
        return Ok(out);
    }
    let file = sources.add(origin.clone(), text);
    let text = sources.text(file).to_string();
    let body = crate::syntax::parse_body(file, &text).inspect_err(|_| {
        // Which value is whose cannot be told in text that does not
        // parse: none of it is quoted when any variable is a secret.
        if module.variables.iter().any(|v| v.sensitive) {
            sources.hide(Span::new(file, 0, text.len()));
        }
    })?;
    if let Some(b) = body.blocks.first() {
        return Err(Diag::new(
            "strata::config::var_file",
            "Unexpected block in variables file",
            "A variables file assigns values to variables (name = value); it may not contain blocks.",
        )
        .at(b.kind_span));
    }
    for a in &body.attrs {
        if module.variable(&a.name).is_some_and(|v| v.sensitive) {
            sources.hide(a.expr.span);
        }
    }
    let mut out = Vec::new();
    for a in &body.attrs {
        let value = Evaluator::new(&EmptyScope, PathBuf::new()).eval(&a.expr)?;
        out.push((
            a.name.clone(),
            Raw {
                value,
                span: Some(a.expr.span),
                origin: origin.clone(),
            },
        ));
    }
    Ok(out)
}

/// The values of the module's variables, admitted through their type
/// constraints and checked by their validation blocks.
pub fn resolve(
    module: &Module,
    cli: &[CliInput],
    env: impl IntoIterator<Item = (String, String)>,
    sources: &mut Sources,
) -> Result<BTreeMap<String, Value>, Diags> {
    resolve_noting(module, cli, env, sources).map(|(values, _)| values)
}

/// [`resolve`], with the names of the variables given a value (from the
/// environment, a variables file or the command line) rather than left
/// to their defaults.
pub fn resolve_noting(
    module: &Module,
    cli: &[CliInput],
    env: impl IntoIterator<Item = (String, String)>,
    sources: &mut Sources,
) -> Result<(BTreeMap<String, Value>, std::collections::BTreeSet<String>), Diags> {
    let mut diags = Diags::default();
    // Later sources win, as in Terraform: the environment, then the
    // automatic files, then the command line in its order.
    let mut raw: BTreeMap<String, Raw> = BTreeMap::new();
    from_environment(module, env, &mut raw, sources, &mut diags);
    for f in &auto_files(&module.dir) {
        match read_var_file(f, module, sources) {
            Ok(vals) => raw.extend(vals),
            Err(d) => diags.push(d),
        }
    }
    for input in cli {
        from_command_line(module, input, &mut raw, sources, &mut diags);
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let given = raw.keys().cloned().collect();
    let mut out = BTreeMap::new();
    let mut froms = BTreeMap::new();
    for decl in &module.variables {
        let given = raw.remove(&decl.name);
        froms.insert(decl.name.clone(), from(decl, given.as_ref()));
        match admit(decl, given) {
            Ok(v) => {
                out.insert(decl.name.clone(), v);
            }
            Err(d) => diags.push(d),
        }
    }
    // Validations may refer to other variables, so they run once all are known.
    for decl in &module.variables {
        if let (Some(v), Some(at)) = (out.get(&decl.name), froms.get(&decl.name)) {
            if let Err(d) = validate(decl, v, *at, &out, &module.dir) {
                diags.push(d);
            }
        }
    }
    diags.into_result((out, given))
}

/// `TF_VAR_name` (and strata's own prefix, which wins) for the variables
/// the module declares; others are ignored, as in Terraform: the
/// environment is shared by many configurations.
fn from_environment(
    module: &Module,
    env: impl IntoIterator<Item = (String, String)>,
    raw: &mut BTreeMap<String, Raw>,
    sources: &mut Sources,
    diags: &mut Diags,
) {
    let mut env: Vec<(String, String)> = env.into_iter().collect();
    env.sort_by_key(|(k, _)| !k.starts_with(TERRAFORM_ENV_PREFIX));
    for (k, v) in env {
        let name = k
            .strip_prefix(ENV_PREFIX)
            .or_else(|| k.strip_prefix(TERRAFORM_ENV_PREFIX));
        let Some((name, decl)) = name.and_then(|n| Some((n, module.variable(n)?))) else {
            continue;
        };
        let origin = format!("environment variable {k}");
        match parse_raw(Some(decl), name, &v, &origin, sources) {
            Ok(r) => {
                raw.insert(name.to_string(), r);
            }
            Err(d) => diags.push(d),
        }
    }
}

/// `terraform.tfvars`, `terraform.tfvars.json`, then the `*.auto.tfvars`
/// and `*.auto.tfvars.json` files in name order.
fn auto_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["terraform.tfvars", "terraform.tfvars.json"]
        .iter()
        .map(|f| dir.join(f))
        .filter(|p| p.is_file())
        .collect();
    if let Ok(rd) = std::fs::read_dir(dir) {
        let mut autos: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.ends_with(".auto.tfvars") || n.ends_with(".auto.tfvars.json")
                })
            })
            .collect();
        autos.sort();
        files.extend(autos);
    }
    files
}

/// One `--var` or `--var-file`: only declared variables may be set.
fn from_command_line(
    module: &Module,
    input: &CliInput,
    raw: &mut BTreeMap<String, Raw>,
    sources: &mut Sources,
    diags: &mut Diags,
) {
    match input {
        CliInput::Var(kv) => {
            let Some((k, v)) = kv.split_once('=') else {
                diags.push(Diag::new(
                    "strata::config::var_flag",
                    "Invalid --var option",
                    format!("The given --var option {kv:?} is not correctly specified. It must be a variable name and value separated by an equals sign, like --var key=value."),
                ));
                return;
            };
            let Some(decl) = module.variable(k) else {
                let names: Vec<&str> = module.variables.iter().map(|v| v.name.as_str()).collect();
                diags.push(Diag::new(
                    "strata::config::undeclared_variable",
                    "Value for undeclared variable",
                    format!("A variable named {k:?} was assigned on the command line, but the root module does not declare a variable of that name.{}", crate::eval::did_you_mean(k, &names)),
                ));
                return;
            };
            match parse_raw(Some(decl), k, v, "command line", sources) {
                Ok(r) => {
                    raw.insert(k.to_string(), r);
                }
                Err(d) => diags.push(d),
            }
        }
        CliInput::Given { name, value, span } => {
            if module.variable(name).is_some() {
                let given = Raw {
                    value: value.clone(),
                    span: Some(*span),
                    origin: "the test file".into(),
                };
                raw.insert(name.clone(), given);
            }
        }
        CliInput::File(p) => match read_var_file(p, module, sources) {
            Ok(vals) => {
                for (k, r) in vals {
                    if module.variable(&k).is_none() {
                        diags.push(Diag::new(
                            "strata::config::undeclared_variable",
                            "Value for undeclared variable",
                            format!("The variables file {} assigns {k:?}, but the root module does not declare a variable of that name.", p.display()),
                        ).or_at(r.span.unwrap_or_default()));
                        continue;
                    }
                    raw.insert(k, r);
                }
            }
            Err(d) => diags.push(d),
        },
    }
}

/// A child module's variables from the call's input values (already
/// evaluated in the caller): defaults, type constraints and validations
/// apply exactly as for a root module.
/// Every variable gets a value: one that is refused is an unknown of its
/// type, so the module's other references to it still resolve and only
/// the refusal is reported.
pub fn resolve_inputs(
    module: &Module,
    inputs: &BTreeMap<String, (Value, Span)>,
    call_name: &str,
) -> (BTreeMap<String, Value>, Vec<Diag>) {
    let mut out = BTreeMap::new();
    let mut errors = Vec::new();
    let unknown =
        |decl: &Variable| Value::Unknown(crate::lang::convert::strip_optional(&decl.constraint.ty));
    for decl in &module.variables {
        let raw = inputs.get(&decl.name).map(|(v, span)| Raw {
            value: v.clone(),
            span: Some(*span),
            origin: format!("module {call_name:?}"),
        });
        let v = admit(decl, raw).unwrap_or_else(|d| {
            errors.push(d);
            unknown(decl)
        });
        out.insert(decl.name.clone(), v);
    }
    for decl in &module.variables {
        let at = inputs.get(&decl.name).map_or(decl.span, |(_, span)| *span);
        let refused = out
            .get(&decl.name)
            .and_then(|v| validate(decl, v, at, &out, &module.dir).err());
        if let Some(d) = refused {
            errors.push(d);
            out.insert(decl.name.clone(), unknown(decl));
        }
    }
    (out, errors)
}

/// One variable of a module instance from its call's input (evaluated in
/// the caller), admitted and validated; `others` are the module's
/// variables known so far, which its validation may read.
pub fn input(
    module: &Module,
    decl: &Variable,
    given: Option<(Value, Span)>,
    call_name: &str,
    mut others: BTreeMap<String, Value>,
) -> Result<Value, Diag> {
    let raw = given.map(|(value, span)| Raw {
        value,
        span: Some(span),
        origin: format!("module {call_name:?}"),
    });
    let at = from(decl, raw.as_ref());
    let v = admit(decl, raw)?;
    others.insert(decl.name.clone(), v.clone());
    validate(decl, &v, at, &others, &module.dir)?;
    Ok(v)
}

/// Where a variable's value came from, as Terraform reports a failed
/// validation there: the module call's argument or the variables file's
/// line, else the declaration (a `-var`, the environment, the default).
fn from(decl: &Variable, raw: Option<&Raw>) -> Span {
    // A `-var` or environment value's own span is the value alone, in a
    // source of its own: the declaration says more.
    let in_a_file =
        |r: &&Raw| !(r.origin == "command line" || r.origin.starts_with("environment variable"));
    raw.filter(in_a_file)
        .and_then(|r| r.span)
        .unwrap_or(decl.span)
}

fn admit(decl: &Variable, raw: Option<Raw>) -> Result<Value, Diag> {
    let default = || -> Result<Option<Value>, Diag> {
        decl.default
            .as_ref()
            .map(|e| Evaluator::new(&EmptyScope, PathBuf::new()).eval(e))
            .transpose()
    };
    let (value, span, origin) = match raw {
        Some(r) if r.value.is_null() && !decl.nullable => match default()? {
            Some(d) => (d, decl.default.as_ref().map(|e| e.span), "default".to_string()),
            None => (r.value, r.span, r.origin),
        },
        Some(r) => (r.value, r.span, r.origin),
        None => match default()? {
            Some(d) => (d, decl.default.as_ref().map(|e| e.span), "default".to_string()),
            None => {
                return Err(Diag::new(
                    "strata::config::missing_variable",
                    "No value for required variable",
                    format!(
                        "The root module input variable {:?} is not set, and has no default value. Use a --var or --var-file command line argument, or a {}{} (or {}{}) environment variable, to provide a value for this variable.",
                        decl.name, ENV_PREFIX, decl.name, TERRAFORM_ENV_PREFIX, decl.name
                    ),
                )
                .at(decl.span))
            }
        },
    };
    if value.is_null() && !decl.nullable {
        return Err(Diag::new(
            "strata::config::null_variable",
            "Required variable not set",
            format!("Unsuitable value for var.{} set from {origin}: required variable may not be set to null.", decl.name),
        )
        .at(span.unwrap_or(decl.span)));
    }
    let admitted = decl.constraint.admit(&value).map_err(|e| {
        Diag::new(
            "strata::config::variable_type",
            "Invalid value for input variable",
            format!(
                "The value for var.{} from {origin} is not suitable: {e}.",
                decl.name
            ),
        )
        .at(span.unwrap_or(decl.span))
    })?;
    Ok(admitted.mark_if(decl.sensitive))
}

fn validate(
    decl: &Variable,
    value: &Value,
    from: Span,
    all: &BTreeMap<String, Value>,
    dir: &Path,
) -> Result<(), Diag> {
    let vars = Attrs::from([(
        "var".to_string(),
        Value::Object(all.clone().into_iter().collect()),
    )]);
    let scope = MapScope(&vars);
    for v in &decl.validations {
        let mut ev = Evaluator::new(&scope, dir.to_path_buf());
        let ok = ev.eval(&v.condition)?;
        let ok = ok.unmarked();
        if !ok.is_known() {
            continue;
        }
        match ok.as_bool() {
            Some(true) => {}
            Some(false) => {
                let msg = ev.eval(&v.error_message)?;
                let msg = msg
                    .as_str()
                    .unwrap_or("The value is not valid.")
                    .to_string();
                // One line in a sentence: the JSON form where there is one.
                let shown = if value.contains_sensitive() {
                    "(sensitive value)".to_string()
                } else {
                    value
                        .to_json()
                        .unwrap_or_else(|_| crate::lang::display::show(value))
                };
                // Terraform's place for it: the validation block's keyword.
                let rule = Span {
                    end: v.span.start + "validation".len() as u32,
                    ..v.span
                };
                return Err(Diag::new(
                    "strata::config::validation_failed",
                    "Invalid value for variable",
                    format!("{msg}\n\nvar.{} is {shown}. This was checked by the validation rule of variable {:?}.", decl.name, decl.name),
                )
                .at(from)
                .also("the validation rule", rule));
            }
            None => {
                return Err(Diag::new(
                    "strata::config::validation",
                    "Invalid validation result",
                    "The condition must produce a boolean value, true or false.",
                )
                .at(v.condition.span))
            }
        }
    }
    Ok(())
}
