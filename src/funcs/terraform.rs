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
        |_, a| Ok(Value::String(expr(&a[0], 0))),
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

/// A string as an HCL literal. As Terraform writes it, `${` is not
/// escaped: what reads it back must not take it as a template.
fn quoted(s: &str) -> String {
    let mut out = String::new();
    crate::lang::display::quoted_line(s, &mut out);
    out
}

/// A key as written in an object: bare when it is an identifier.
fn key(k: &str) -> String {
    if crate::syntax::is_identifier(k) {
        k.to_string()
    } else {
        quoted(k)
    }
}

/// `value` as an HCL expression, laid out as `terraform fmt` lays it out
/// when it is nested `depth` levels deep: sequences on one line, objects
/// one attribute per line with the `=` of consecutive one-line
/// attributes aligned.
fn expr(v: &Value, depth: usize) -> String {
    match v.unmarked() {
        Value::Null(_) | Value::Unknown(_) => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_text(),
        Value::String(s) => quoted(s),
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            let items: Vec<String> = vs.iter().map(|x| expr(x, depth)).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Map(_, m) | Value::Object(m) => {
            if m.is_empty() {
                return "{}".into();
            }
            let pad = "  ".repeat(depth);
            format!("{{\n{}{pad}}}", attributes(m, depth + 1))
        }
        Value::Sensitive(inner) => expr(inner, depth),
    }
}

/// Lines `key = value` at `depth`, aligned in runs of one-line values.
fn attributes(m: &Attrs, depth: usize) -> String {
    let pad = "  ".repeat(depth);
    let lines: Vec<(String, String)> = m.iter().map(|(k, v)| (key(k), expr(v, depth))).collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        // A run of one-line values shares one column for `=`; a multi-line
        // value stands alone.
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
    Ok(attributes(m, 0))
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
            expr(&v, 0),
            "{\n  a     = 1\n  \"b c\" = [true, null]\n  d = {\n    e = \"x\\ny\"\n  }\n}"
        );
        let vars = obj(vec![("a", Value::int(1)), ("b", Value::string("x"))]);
        assert_eq!(tfvars(&vars).ok().as_deref(), Some("a = 1\nb = \"x\"\n"));
        assert!(tfvars(&obj(vec![("bad key", Value::int(1))])).is_err());
    }
}
