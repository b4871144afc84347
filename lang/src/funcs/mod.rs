//! Terraform's function library.
//!
//! Each function declares its parameters (type, whether null, unknown and
//! sensitive values may reach it); [`call`] does what cty's function calls do
//! for all of them: arity checks, argument conversion, an unknown result for
//! unknown arguments, and the sensitive mark carried from arguments to result.

mod collection;
mod datetime;
mod encoding;
mod filesystem;
mod format;
mod hash;
mod ipnet;
mod numeric;
mod rsa_decrypt;
mod string;
mod terraform;
pub use hash::random_uuid;
pub use terraform::{hcl_expr, hcl_lines, plan_timestamp, set_plan_timestamp, Templates};
mod typeconv;
mod yaml;

use crate::diag::{Diag, Span};
use crate::lang::convert::convert;
use crate::lang::number::Number;
use crate::lang::types::Type;
use crate::lang::value::{Attrs, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

pub struct CallCtx<'a> {
    pub base_dir: &'a Path,
    /// The evaluator making the call, for the functions that evaluate.
    pub eval: &'a dyn Evaluate,
    pub impure: Impure,
}

/// When the functions whose result differs on every call (`timestamp`,
/// `uuid`, `bcrypt`) give one. A plan cannot promise a value its apply
/// would compute again differently, so there they are known after apply,
/// as Terraform has them; an apply and the console call them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Impure {
    KnownAfterApply,
    Called,
}

/// The functions [`Impure`] is about, as Terraform lists them.
const IMPURE: [&str; 3] = ["bcrypt", "timestamp", "uuid"];

/// What a few functions need of the evaluator that calls them:
/// `templatefile` and `templatestring` render a template, `decode_tfvars`
/// evaluates constant expressions. The evaluator hands itself over in
/// [`CallCtx`], so this library does not depend on it.
pub trait Evaluate {
    /// `text` as a template with `vars` in scope, relative to `base_dir`.
    fn template(&self, text: &str, vars: &Attrs, base_dir: &Path) -> Result<Value, Diag>;
    /// An expression that refers to nothing.
    fn constant(&self, expr: &crate::syntax::Expr) -> Result<Value, Diag>;
}

pub type Impl = fn(&mut CallCtx, &[Value]) -> Result<Value, FnError>;

#[derive(Clone)]
pub struct Param {
    pub name: &'static str,
    pub ty: Type,
    pub allow_null: bool,
    pub allow_unknown: bool,
    /// Unknown elements are passed through (the collection itself must
    /// be known): the result keeps what is known of keys and lengths.
    pub allow_unknown_elements: bool,
    pub allow_marked: bool,
    /// Marks inside the argument stay where they are; only its own mark
    /// goes to the result (Terraform's `merge`).
    pub marks_inside: bool,
}

impl Param {
    pub fn new(name: &'static str, ty: Type) -> Param {
        Param {
            name,
            ty,
            allow_null: false,
            allow_unknown: false,
            allow_unknown_elements: false,
            allow_marked: false,
            marks_inside: false,
        }
    }
    pub fn nullable(mut self) -> Param {
        self.allow_null = true;
        self
    }
    pub fn unknown_ok(mut self) -> Param {
        self.allow_unknown = true;
        self
    }
    pub fn unknown_elements_ok(mut self) -> Param {
        self.allow_unknown_elements = true;
        self
    }
    pub fn marked_ok(mut self) -> Param {
        self.allow_marked = true;
        self
    }
    pub fn marks_inside(mut self) -> Param {
        self.marks_inside = true;
        self
    }
}

pub struct FuncDef {
    pub name: &'static str,
    pub params: Vec<Param>,
    pub variadic: Option<Param>,
    /// The result type when an unknown argument makes the result unknown.
    pub ret: Type,
    pub imp: Impl,
}

/// A failed call: which argument was wrong, if one was, and why.
#[derive(Debug, Clone)]
pub struct FnError {
    pub arg: Option<usize>,
    pub message: String,
    /// Set for arity errors, which Terraform reports under their own summary.
    pub arity: Option<&'static str>,
}

impl FnError {
    pub fn arg(i: usize, message: impl Into<String>) -> FnError {
        FnError {
            arg: Some(i),
            message: message.into(),
            arity: None,
        }
    }
    pub fn call(message: impl Into<String>) -> FnError {
        FnError {
            arg: None,
            message: message.into(),
            arity: None,
        }
    }

    fn arity(summary: &'static str, message: String) -> FnError {
        FnError {
            arg: None,
            message,
            arity: Some(summary),
        }
    }

    pub fn into_diag(self, fname: &str, span: Span, arg_spans: &[Span]) -> Diag {
        if let Some(summary) = self.arity {
            return Diag::new("strata::funcs::arity", summary, self.message).at(span);
        }
        match self.arg {
            Some(i) => {
                let def = lookup(fname);
                let pname = def
                    .and_then(|d| d.params.get(i).or(d.variadic.as_ref()))
                    .map_or("argument", |p| p.name);
                Diag::new(
                    "strata::funcs::argument",
                    "Invalid function argument",
                    format!(
                        "Invalid value for {pname:?} parameter: {}.",
                        self.message.trim_end_matches('.')
                    ),
                )
                .at(arg_spans.get(i).copied().unwrap_or(span))
            }
            None => Diag::new(
                "strata::funcs::call",
                "Error in function call",
                format!(
                    "Call to function {fname:?} failed: {}.",
                    self.message.trim_end_matches('.')
                ),
            )
            .at(span),
        }
    }
}

fn table() -> &'static HashMap<&'static str, FuncDef> {
    static TABLE: OnceLock<HashMap<&'static str, FuncDef>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut defs = Vec::new();
        numeric::register(&mut defs);
        string::register(&mut defs);
        format::register(&mut defs);
        collection::register(&mut defs);
        datetime::register(&mut defs);
        encoding::register(&mut defs);
        filesystem::register(&mut defs);
        hash::register(&mut defs);
        rsa_decrypt::register(&mut defs);
        ipnet::register(&mut defs);
        typeconv::register(&mut defs);
        terraform::register(&mut defs);
        defs.into_iter().map(|d| (d.name, d)).collect()
    })
}

pub fn lookup(name: &str) -> Option<&'static FuncDef> {
    table().get(name)
}

/// Every function name, sorted: for suggestions and documentation.
pub fn names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = table().keys().copied().collect();
    v.extend(["try", "can"]);
    v.sort_unstable();
    v
}

/// Shorthand used by the per-category modules to declare a function.
pub(crate) fn def(name: &'static str, params: Vec<Param>, ret: Type, imp: Impl) -> FuncDef {
    FuncDef {
        name,
        params,
        variadic: None,
        ret,
        imp,
    }
}

pub(crate) fn def_var(
    name: &'static str,
    params: Vec<Param>,
    variadic: Param,
    ret: Type,
    imp: Impl,
) -> FuncDef {
    FuncDef {
        name,
        params,
        variadic: Some(variadic),
        ret,
        imp,
    }
}

pub fn call(def: &FuncDef, args: Vec<Value>, ctx: &mut CallCtx) -> Result<Value, FnError> {
    let n = def.params.len();
    if args.len() < n {
        return Err(FnError::arity(
            "Not enough function arguments",
            format!(
                "Function {:?} expects {}{} argument{}. Missing value for {:?}.",
                def.name,
                if def.variadic.is_some() {
                    "at least "
                } else {
                    ""
                },
                n,
                if n == 1 { "" } else { "s" },
                def.params[args.len()].name
            ),
        ));
    }
    if args.len() > n && def.variadic.is_none() {
        return Err(FnError::arity(
            "Too many function arguments",
            format!(
                "Function {:?} expects only {} argument{}.",
                def.name,
                n,
                if n == 1 { "" } else { "s" }
            ),
        ));
    }
    let mut marked = false;
    let mut unknown = false;
    let mut secrets = Vec::new();
    let mut converted = Vec::with_capacity(args.len());
    for (i, arg) in args.into_iter().enumerate() {
        sensitive_texts(&arg, false, &mut secrets);
        let p = def
            .params
            .get(i)
            .or(def.variadic.as_ref())
            .ok_or_else(|| FnError::call("too many arguments"))?;
        let arg = if p.allow_marked {
            arg
        } else if p.marks_inside {
            let (v, m) = arg.unmark();
            marked |= m;
            v
        } else {
            let (v, m) = arg.unmark_deep();
            marked |= m;
            v
        };
        if arg.is_null() && !p.allow_null {
            return Err(FnError::arg(i, "argument must not be null"));
        }
        let v = convert(&arg, &p.ty).map_err(|e| redact(FnError::arg(i, e.message), &secrets))?;
        let known_enough = if p.allow_unknown_elements {
            shallow_known(&v)
        } else {
            v.is_wholly_known()
        };
        if !p.allow_unknown && !known_enough {
            unknown = true;
        }
        converted.push(v);
    }
    let deferred = ctx.impure == Impure::KnownAfterApply && IMPURE.contains(&def.name);
    if unknown || deferred {
        return Ok(Value::Unknown(def.ret.clone()).mark_if(marked));
    }
    let out = (def.imp)(ctx, &converted).map_err(|e| redact(e, &secrets))?;
    if let Some(why) = crate::limits::oversized(&out) {
        return Err(FnError::call(why));
    }
    Ok(out.mark_if(marked))
}

/// Whether a collection is known enough to work on element by element:
/// itself known, and, for a set, every element (an unknown element of a
/// set may equal another, so not even its length is known).
fn shallow_known(v: &Value) -> bool {
    match v.unmarked() {
        Value::Set(_, vs) => vs.iter().all(Value::is_wholly_known),
        other => other.is_known(),
    }
}

/// The text of every sensitive leaf in `v`, as an error message could
/// quote it.
fn sensitive_texts(v: &Value, inside: bool, out: &mut Vec<String>) {
    let inside = inside || v.is_sensitive();
    match v.unmarked() {
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            vs.iter().for_each(|x| sensitive_texts(x, inside, out))
        }
        Value::Map(_, m) | Value::Object(m) => {
            m.values().for_each(|x| sensitive_texts(x, inside, out))
        }
        Value::String(s) if inside => out.push(s.to_string()),
        Value::Number(n) if inside => out.push(n.to_string()),
        Value::Bool(b) if inside => out.push(b.to_string()),
        _ => {}
    }
}

/// An error about sensitive arguments, without their values: each is
/// named "(sensitive value)", or, when one is too short to find safely in
/// the text, the message says only that the value is sensitive.
fn redact(mut e: FnError, secrets: &[String]) -> FnError {
    if secrets.is_empty() {
        return e;
    }
    let mut secrets: Vec<&String> = secrets.iter().collect();
    // Longest first, so a secret inside another is not half replaced.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    if secrets.iter().any(|s| s.chars().count() < 4) {
        e.message = "the value is sensitive, so the reason is not shown".into();
        return e;
    }
    for s in secrets {
        for form in [format!("{s:?}"), s.to_string()] {
            e.message = e.message.replace(&form, "(sensitive value)");
        }
    }
    e
}

// Small accessors the implementations share; arguments are already converted
// to the declared parameter types, so a mismatch here is a table bug.

pub(crate) fn str_arg(args: &[Value], i: usize) -> &str {
    args[i].as_str().unwrap_or("")
}

pub(crate) fn num_arg(args: &[Value], i: usize) -> Number {
    args[i].as_number().cloned().unwrap_or_else(Number::zero)
}

/// A whole number argument that fits in an i64, as cty's gocty conversion requires.
pub(crate) fn int_arg(args: &[Value], i: usize) -> Result<i64, FnError> {
    let n = num_arg(args, i);
    if !n.is_integer() {
        return Err(FnError::arg(i, "value must be a whole number"));
    }
    n.to_i64().ok_or_else(|| {
        FnError::arg(
            i,
            "value must be a whole number, between -9223372036854775808 and 9223372036854775807",
        )
    })
}

pub(crate) fn p(name: &'static str, ty: Type) -> Param {
    Param::new(name, ty)
}

/// A JSON document as a value, the way `jsondecode` reads it.
pub fn json_value(j: &serde_json::Value) -> Result<Value, String> {
    encoding::from_json(j).map_err(|e| e.message)
}
