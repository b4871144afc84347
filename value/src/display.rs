//! Values written as Terraform's console writes them: HCL-like literals,
//! `tolist([...])` for typed collections, `(sensitive value)`, `(known after apply)`.

use super::value::Value;

pub fn show(v: &Value) -> String {
    let mut out = String::new();
    let console = Style {
        unit: "  ",
        bare_keys: false,
    };
    write(v, 0, console, &mut out);
    out
}

/// The same with four spaces a level, starting `depth` levels in, and
/// keys that are identifiers left unquoted, as `terraform show` lays out
/// a state's attributes and outputs.
pub fn show_wide(v: &Value, depth: usize) -> String {
    let mut out = String::new();
    let shown = Style {
        unit: "    ",
        bare_keys: true,
    };
    write(v, depth, shown, &mut out);
    out
}

/// How a value is laid out.
#[derive(Clone, Copy)]
struct Style {
    /// One level of indentation.
    unit: &'static str,
    /// Keys that are identifiers written without quotes.
    bare_keys: bool,
}

/// Whether `s` is an HCL identifier: a letter or `_`, then letters,
/// digits, `_` and `-`.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
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

/// `v` at nesting depth `indent`, laid out as `style` says.
fn write(v: &Value, indent: usize, style: Style, out: &mut String) {
    let pad = style.unit.repeat(indent + 1);
    let end = style.unit.repeat(indent);
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
                write(x, indent + 1, style, out);
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
            let keys: Vec<String> = m
                .keys()
                .map(|k| {
                    let mut key = String::new();
                    match style.bare_keys && is_identifier(k) {
                        true => key.push_str(k),
                        false => quote(k, &mut key),
                    }
                    key
                })
                .collect();
            let width = keys.iter().map(|k| k.chars().count()).max().unwrap_or(0);
            for (key, x) in keys.iter().zip(m.values()) {
                out.push_str(&pad);
                out.push_str(&format!("{key:width$} = "));
                write(x, indent + 1, style, out);
                out.push('\n');
            }
            out.push_str(&end);
            out.push_str(close);
        }
    }
}
