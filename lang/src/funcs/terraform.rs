//! The built-in `terraform` provider's functions (`provider::terraform::…`,
//! Terraform 1.8+): values written as HCL, as a variables file or one
//! expression, and a variables file read back. Also `plantimestamp()`.

use super::{def, p, str_arg, Evaluate, FnError, FuncDef};
use crate::lang::types::Type;
use crate::lang::value::{Attrs, Value};
use std::sync::OnceLock;

pub fn register(defs: &mut Vec<FuncDef>) {
    let any = || Type::Dynamic;
    defs.push(def(
        "provider::terraform::encode_expr",
        vec![p("value", any())],
        Type::String,
        |_, a| Ok(Value::String(hcl_expr(&a[0], 0, Templates::Kept))),
    ));
    defs.push(def(
        "provider::terraform::encode_tfvars",
        vec![p("value", any())],
        Type::String,
        |_, a| tfvars(&a[0]).map(Value::String),
    ));
    defs.push(def(
        "provider::terraform::decode_tfvars",
        vec![p("src", Type::String)],
        any(),
        |ctx, a| decode_tfvars(ctx.eval, str_arg(a, 0)),
    ));
    defs.push(def("plantimestamp", vec![], Type::String, |_, _| {
        Ok(Value::String(plan_timestamp().to_string()))
    }));
}

static PLAN_TIME: OnceLock<String> = OnceLock::new();

/// The time the plan was made, the same for every call in a run: what
/// `plantimestamp()` answers. The first call fixes it, unless a saved
/// plan already did ([`set_plan_timestamp`]).
pub fn plan_timestamp() -> &'static str {
    PLAN_TIME.get_or_init(|| {
        // Whole seconds, as Terraform's RFC 3339 times are.
        let now = time::OffsetDateTime::now_utc();
        now.replace_nanosecond(0)
            .unwrap_or(now)
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default()
    })
}

/// Applying a saved plan: `plantimestamp()` is the plan's time, so the
/// configuration evaluates as it did when it was planned.
pub fn set_plan_timestamp(t: &str) {
    let _ = PLAN_TIME.set(t.to_string());
}

/// What becomes of `${` and `%{` in a string written as HCL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Templates {
    /// Left as they are, as `encode_expr` writes them: what reads the
    /// text back must not take it as a template.
    Kept,
    /// Doubled (`$${`), so the text reads back as the same string, as
    /// Terraform writes generated configuration.
    Escaped,
}

/// A string as an HCL literal.
fn quoted(s: &str, t: Templates) -> String {
    let mut out = String::new();
    crate::lang::display::quoted_line(s, &mut out);
    match t {
        Templates::Kept => out,
        Templates::Escaped => out.replace("${", "$${").replace("%{", "%%{"),
    }
}

/// A key as written in an object: bare when it is an identifier.
fn key(k: &str, t: Templates) -> String {
    if crate::syntax::is_identifier(k) {
        k.to_string()
    } else {
        quoted(k, t)
    }
}

/// `value` as an HCL expression, laid out as `terraform fmt` lays it out
/// when it is nested `depth` levels deep: sequences on one line, objects
/// one attribute per line with the `=` of consecutive one-line
/// attributes aligned. Null and unknown parts are `null`.
pub fn hcl_expr(v: &Value, depth: usize, t: Templates) -> String {
    match v.unmarked() {
        Value::Null(_) | Value::Unknown(_) => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_text(),
        Value::String(s) => quoted(s, t),
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            let items: Vec<String> = vs.iter().map(|x| hcl_expr(x, depth, t)).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Map(_, m) | Value::Object(m) => {
            if m.is_empty() {
                return "{}".into();
            }
            let pad = "  ".repeat(depth);
            format!("{{\n{}{pad}}}", attributes(m, depth + 1, t))
        }
        Value::Sensitive(inner) => hcl_expr(inner, depth, t),
    }
}

/// Lines `key = value` at `depth`, aligned in runs of one-line values.
fn attributes(m: &Attrs, depth: usize, t: Templates) -> String {
    let lines: Vec<(String, String)> = m
        .iter()
        .map(|(k, v)| (key(k, t), hcl_expr(v, depth, t)))
        .collect();
    hcl_lines(&lines, depth)
}

/// `key = value` lines (keys and values already written) at `depth`, as
/// `terraform fmt` aligns them: a run of one-line values shares one column
/// for `=`; a multi-line value stands alone.
pub fn hcl_lines(lines: &[(String, String)], depth: usize) -> String {
    let pad = "  ".repeat(depth);
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let run = lines[i..]
            .iter()
            .take_while(|(_, v)| !v.contains('\n'))
            .count()
            .max(1);
        let width = lines[i..i + run]
            .iter()
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0);
        for (k, v) in &lines[i..i + run] {
            let fill = if v.contains('\n') {
                0
            } else {
                width - k.chars().count()
            };
            out.push_str(&format!("{pad}{k}{} = {v}\n", " ".repeat(fill)));
        }
        i += run;
    }
    out
}

fn tfvars(v: &Value) -> Result<String, FnError> {
    let (Value::Object(m) | Value::Map(_, m)) = v.unmarked() else {
        return Err(FnError::arg(
            0,
            "must be an object or a map of variable values",
        ));
    };
    if let Some(bad) = m.keys().find(|k| !crate::syntax::is_identifier(k)) {
        return Err(FnError::call(format!(
            "invalid variable name {bad:?}: must be a valid identifier, per Terraform's rules for input variable declarations"
        )));
    }
    Ok(attributes(m, 0, Templates::Kept))
}

fn decode_tfvars(eval: &dyn Evaluate, src: &str) -> Result<Value, FnError> {
    let file = crate::diag::FileId(u32::MAX);
    let body = crate::syntax::parse_body(file, src)
        .map_err(|d| FnError::call(format!("invalid tfvars syntax: {}", d.one_line())))?;
    if !body.blocks.is_empty() {
        return Err(FnError::call("a variables file may not contain blocks"));
    }
    let mut out = Attrs::new();
    for a in &body.attrs {
        let v = eval.constant(&a.expr).map_err(|d| {
            FnError::call(format!(
                "invalid expression for variable {:?}: {}",
                a.name,
                d.one_line()
            ))
        })?;
        out.insert(a.name.clone(), v);
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_terraform_writes_them() {
        let obj = |items: Vec<(&str, Value)>| {
            Value::Object(items.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
        };
        let v = obj(vec![
            ("a", Value::int(1)),
            ("b c", Value::Tuple(vec![Value::Bool(true), Value::null()])),
            ("d", obj(vec![("e", Value::string("x\ny"))])),
        ]);
        assert_eq!(
            hcl_expr(&v, 0, Templates::Kept),
            "{\n  a     = 1\n  \"b c\" = [true, null]\n  d = {\n    e = \"x\\ny\"\n  }\n}"
        );
        let vars = obj(vec![("a", Value::int(1)), ("b", Value::string("x"))]);
        assert_eq!(tfvars(&vars).ok().as_deref(), Some("a = 1\nb = \"x\"\n"));
        assert!(tfvars(&obj(vec![("bad key", Value::int(1))])).is_err());
    }
}
