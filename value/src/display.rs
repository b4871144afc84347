//! Values written as Terraform's console writes them: HCL-like literals,
//! `tolist([...])` for typed collections, `(sensitive value)`, `(known after apply)`.

use super::types::Type;
use super::value::Value;
use std::fmt::Write as _;

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
        return shown_line(s, out);
    }
    let pad = style.unit.repeat(indent);
    if !style.aligned && indent == 0 {
        out.push_str("<<EOT\n");
        for (i, line) in s.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            shown_heredoc_line(line, out);
        }
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
        shown_heredoc_line(line, out);
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
/// characters escaped (`\u001b`, as Terraform's `encode_expr` writes
/// them; `${` is left as written, as Terraform writes it).
pub fn quoted_line(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `s` quoted for the terminal as Terraform shows a string (Go's `%q`):
/// a value read from the cloud may hold an escape sequence, which must
/// never reach the terminal as one.
pub fn shown_line(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => escaped_control(c, out),
        }
    }
    out.push('"');
}

/// `c`, or Go's escape for it when it is a control character.
fn escaped_control(c: char, out: &mut String) {
    match c {
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c == '\u{7f}' => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if c.is_control() => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    }
}

/// A line of a heredoc shown on the terminal: tabs kept, other control
/// characters escaped (Terraform writes them raw; a terminal acts on them).
pub fn shown_heredoc_line(line: &str, out: &mut String) {
    for c in line.chars() {
        match c {
            '\t' => out.push('\t'),
            c => escaped_control(c, out),
        }
    }
}

/// A null of type `ty` as the console writes it: converted to its type
/// where a conversion function names it (`tostring(null)`, `tolist(null)
/// /* of string */`), else with the type in a comment.
fn typed_null(ty: &Type) -> String {
    let of = |f: &str, t: &Type| format!("{f}(null) /* of {} */", t.friendly_name());
    match ty {
        Type::Dynamic => "null".into(),
        Type::String => "tostring(null)".into(),
        Type::Number => "tonumber(null)".into(),
        Type::Bool => "tobool(null)".into(),
        Type::List(t) => of("tolist", t),
        Type::Set(t) => of("toset", t),
        Type::Map(t) => of("tomap", t),
        Type::Tuple(_) | Type::Object(_) => format!("null /* {} */", ty.friendly_name()),
    }
}

/// `v` at nesting depth `indent`, laid out as `style` says.
fn write(v: &Value, indent: usize, style: Style, out: &mut String) {
    let pad = style.unit.repeat(indent + 1);
    let end = style.unit.repeat(indent);
    match v {
        Value::Sensitive(_) => out.push_str("(sensitive value)"),
        Value::Unknown(_) => out.push_str("(known after apply)"),
        // The console names a null's type, so it reads back as it was.
        Value::Null(ty) if !style.aligned => out.push_str(&typed_null(ty)),
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
                        false => shown_line(k, &mut key),
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

#[cfg(test)]
mod control_tests {
    use super::*;

    #[test]
    fn control_characters_never_reach_the_terminal_raw() {
        let s = "x\u{1b}[31mred\u{7}bel\ttab\u{85}é\u{7f}";
        let mut shown = String::new();
        shown_line(s, &mut shown);
        // Go's %q, as Terraform shows a string.
        assert_eq!(shown, r#""x\x1b[31mred\abel\ttab\u0085é\x7f""#);
        let mut literal = String::new();
        quoted_line(s, &mut literal);
        // An HCL literal, as encode_expr writes one.
        assert_eq!(literal, r#""x\u001b[31mred\u0007bel\ttab\u0085é\u007f""#);
        let mut line = String::new();
        shown_heredoc_line("a\tb\u{1b}c", &mut line);
        assert_eq!(line, "a\tb\\x1bc");
        assert!(!show(&Value::String(format!("{s}\n{s}"))).contains('\u{1b}'));
    }
}
