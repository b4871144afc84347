//! Values written as Terraform's console writes them: HCL-like literals,
//! `tolist([...])` for typed collections, `(sensitive value)`, `(known after apply)`.

use super::value::Value;

pub fn show(v: &Value) -> String {
    let mut out = String::new();
    let console = Style {
        unit: "  ",
        bare_keys: false,
        aligned: false,
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
        aligned: true,
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
    /// `terraform show`'s layout rather than the console's: the `=` of an
    /// object's attributes in one column, its heredocs.
    aligned: bool,
}

/// Whether `s` is an HCL identifier: a letter or `_`, then letters,
/// digits, `_` and `-`.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// A string value at `indent` levels: one quoted line, or a heredoc when
/// it has line breaks — the console's (`<<EOT` at the top, as it is;
/// `<<-EOT` inside, each line at the element's indentation) or `terraform
/// show`'s (`<<-EOT`, lines one level in, the last line break dropped).
fn string(s: &str, indent: usize, style: Style, out: &mut String) {
    // `terraform show` writes a JSON document as the call that made it.
    if style.aligned {
        if let Some(doc) = json_document(s) {
            let pad = style.unit.repeat(indent);
            out.push_str("jsonencode(\n");
            out.push_str(&pad);
            out.push_str(style.unit);
            write(&doc, indent + 1, style, out);
            out.push('\n');
            out.push_str(&pad);
            out.push(')');
            return;
        }
    }
    if !s.contains('\n') {
        return quoted_line(s, out);
    }
    let pad = style.unit.repeat(indent);
    if !style.aligned && indent == 0 {
        out.push_str("<<EOT\n");
        out.push_str(s);
        out.push_str("\nEOT");
        return;
    }
    let (body, inner) = match style.aligned {
        true => (s.strip_suffix('\n').unwrap_or(s), style.unit),
        false => (s, ""),
    };
    out.push_str("<<-EOT\n");
    for line in body.split('\n') {
        // `show` leaves an empty line empty; the console indents it.
        if !(style.aligned && line.is_empty()) {
            out.push_str(&pad);
            out.push_str(inner);
        }
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&pad);
    out.push_str("EOT");
}

/// `s` as a value when it is a JSON object or array (Terraform's
/// renderers write such strings as `jsonencode(...)`).
pub fn json_document(s: &str) -> Option<Value> {
    let t = s.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    let j: serde_json::Value = serde_json::from_str(s).ok()?;
    Some(decoded(&j))
}

/// A JSON document as `jsondecode` makes it a value.
fn decoded(j: &serde_json::Value) -> Value {
    use serde_json::Value as Json;
    match j {
        Json::Null => Value::null(),
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => crate::number::Number::parse(&n.to_string())
            .map(Value::Number)
            .unwrap_or_else(|_| Value::null()),
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Tuple(items.iter().map(decoded).collect()),
        Json::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), decoded(v))).collect()),
    }
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
        Value::String(s) => string(s, indent, style, out),
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            // The console names a collection's type; `show` does not.
            let (open, close) = match v {
                Value::List(..) if !style.aligned => ("tolist([", "])"),
                Value::Set(..) if !style.aligned => ("toset([", "])"),
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
            let (open, close) = if matches!(v, Value::Map(..)) && !style.aligned {
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
                    // An object's attribute names bare, a map's keys quoted.
                    let object = matches!(v, Value::Object(_));
                    match style.bare_keys && object && is_identifier(k) {
                        true => key.push_str(k),
                        false => quoted_line(k, &mut key),
                    }
                    key
                })
                .collect();
            let width = match style.aligned {
                true => keys.iter().map(|k| k.chars().count()).max().unwrap_or(0),
                false => 0,
            };
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
