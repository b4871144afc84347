//! Values written as Terraform's console writes them: HCL-like literals,
//! `tolist([...])` for typed collections, `(sensitive value)`, `(known after apply)`.

use super::value::Value;

pub fn show(v: &Value) -> String {
    let mut out = String::new();
    write(v, 0, &mut out);
    out
}

fn quote(s: &str, out: &mut String) {
    if s.contains('\n') && s.len() > 1 {
        out.push_str("<<-EOT\n");
        for line in s.trim_end_matches('\n').split('\n') {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("EOT");
        return;
    }
    quoted_line(s, out);
}

/// `s` as a one-line HCL string literal: quotes, backslashes and control
/// whitespace escaped (`${` is left as written, as Terraform writes it).
pub fn quoted_line(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write(v: &Value, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent + 1);
    let end = "  ".repeat(indent);
    match v {
        Value::Sensitive(_) => out.push_str("(sensitive value)"),
        Value::Unknown(_) => out.push_str("(known after apply)"),
        Value::Null(_) => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_text()),
        Value::String(s) => quote(s, out),
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            let (open, close) = match v {
                Value::List(..) => ("tolist([", "])"),
                Value::Set(..) => ("toset([", "])"),
                _ => ("[", "]"),
            };
            if vs.is_empty() {
                out.push_str(open);
                out.push_str(close);
                return;
            }
            out.push_str(open);
            out.push('\n');
            for x in vs {
                out.push_str(&pad);
                write(x, indent + 1, out);
                out.push_str(",\n");
            }
            out.push_str(&end);
            out.push_str(close);
        }
        Value::Map(_, m) | Value::Object(m) => {
            let (open, close) = if matches!(v, Value::Map(..)) {
                ("tomap({", "})")
            } else {
                ("{", "}")
            };
            if m.is_empty() {
                out.push_str(open);
                out.push_str(close);
                return;
            }
            out.push_str(open);
            out.push('\n');
            let width = m.keys().map(|k| k.chars().count() + 2).max().unwrap_or(0);
            for (k, x) in m {
                out.push_str(&pad);
                let mut key = String::new();
                quote(k, &mut key);
                out.push_str(&format!("{key:width$} = "));
                write(x, indent + 1, out);
                out.push('\n');
            }
            out.push_str(&end);
            out.push_str(close);
        }
    }
}
