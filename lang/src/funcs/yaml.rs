//! `yamldecode` and `yamlencode` as Terraform's go-cty-yaml does them.
//!
//! Decoding follows YAML 1.1 resolution for plain (unquoted) scalars, which
//! is what go-cty-yaml inherits from go-yaml v2: `y`, `yes` and `on` are
//! true, `0x10` is 16, `~` is null. yaml-rust2's event stream is used because
//! it says whether each scalar was quoted, which resolution depends on.

use super::FnError;
use crate::lang::number::Number;
use crate::lang::value::{Attrs, Value};
use num_bigint::BigInt;
use std::collections::HashMap;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

#[derive(Default)]
struct Builder {
    /// Open sequences and mappings; a mapping holds its pending key.
    stack: Vec<Frame>,
    anchors: HashMap<usize, Value>,
    docs: Vec<Value>,
    error: Option<String>,
}

enum Frame {
    Seq(usize, Vec<Value>),
    Map(usize, Attrs, Option<String>),
}

impl Builder {
    fn push_value(&mut self, v: Value, anchor: usize) {
        if anchor > 0 {
            self.anchors.insert(anchor, v.clone());
        }
        match self.stack.last_mut() {
            None => self.docs.push(v),
            Some(Frame::Seq(_, items)) => items.push(v),
            Some(Frame::Map(_, m, key)) => match key.take() {
                None => match key_text(&v) {
                    Some(k) => *key = Some(k),
                    None => self.error = Some("only scalar mapping keys are supported".into()),
                },
                Some(k) => {
                    m.insert(k, v);
                }
            },
        }
    }
}

fn key_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_text()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null(_) => Some("null".into()),
        _ => None,
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, _mark: Marker) {
        if self.error.is_some() {
            return;
        }
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag.map(|t| t.suffix);
                match resolve(&text, style, tag.as_deref()) {
                    Ok(v) => self.push_value(v, anchor),
                    Err(e) => self.error = Some(e),
                }
            }
            Event::SequenceStart(anchor, _) => self.stack.push(Frame::Seq(anchor, Vec::new())),
            Event::MappingStart(anchor, _) => {
                self.stack.push(Frame::Map(anchor, Attrs::new(), None))
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (v, anchor) = match self.stack.pop() {
                    Some(Frame::Seq(a, items)) => (Value::Tuple(items), a),
                    Some(Frame::Map(a, m, _)) => (Value::Object(m), a),
                    None => return,
                };
                self.push_value(v, anchor);
            }
            Event::Alias(id) => match self.anchors.get(&id).cloned() {
                Some(v) => self.push_value(v, 0),
                None => self.error = Some("unknown anchor".into()),
            },
            _ => {}
        }
    }
}

/// YAML 1.1 resolution of one scalar.
fn resolve(text: &str, style: TScalarStyle, tag: Option<&str>) -> Result<Value, String> {
    match tag {
        Some("str") => return Ok(Value::String(text.to_string())),
        Some("int") | Some("float") => {
            return number(text)
                .map(Value::Number)
                .ok_or_else(|| format!("cannot decode {text:?} as a number"))
        }
        Some("bool") => {
            return boolean(text)
                .map(Value::Bool)
                .ok_or_else(|| format!("cannot decode {text:?} as a bool"))
        }
        Some("null") => return Ok(Value::null()),
        _ => {}
    }
    if style != TScalarStyle::Plain {
        return Ok(Value::String(text.to_string()));
    }
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Ok(Value::null());
    }
    if let Some(b) = boolean(text) {
        return Ok(Value::Bool(b));
    }
    if let Some(n) = number(text) {
        return Ok(Value::Number(n));
    }
    if matches!(
        text.trim_start_matches(['-', '+']),
        ".inf" | ".Inf" | ".INF"
    ) || matches!(text, ".nan" | ".NaN" | ".NAN")
    {
        return Err(format!("cannot represent {text} as a number"));
    }
    if let Some(ts) = timestamp(text) {
        return Ok(Value::String(ts));
    }
    Ok(Value::String(text.to_string()))
}

fn boolean(t: &str) -> Option<bool> {
    match t {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Some(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Some(false)
        }
        _ => None,
    }
}

/// Integers and floats as go-cty-yaml reads plain scalars: YAML 1.2 core
/// forms (`017` is seventeen, `0o17` fifteen, `0x1F` thirty-one; no `_`).
fn number(t: &str) -> Option<Number> {
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let radix = |digits: &str, base: u32| -> Option<Number> {
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(base)) {
            return None;
        }
        let i = BigInt::parse_bytes(digits.as_bytes(), base)?;
        Some(Number::from_bigint(&if neg { -i } else { i }))
    };
    if let Some(h) = body.strip_prefix("0x") {
        return if t.starts_with(['-', '+']) {
            None
        } else {
            radix(h, 16)
        };
    }
    if let Some(o) = body.strip_prefix("0o") {
        return if t.starts_with(['-', '+']) {
            None
        } else {
            radix(o, 8)
        };
    }
    if !body.is_empty() && body.bytes().all(|c| c.is_ascii_digit()) {
        return radix(body, 10);
    }
    // [0-9]*(\.[0-9]*)?([eE][-+]?[0-9]+)? with at least one digit before the exponent.
    let (mant, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mant_ok = mant.bytes().any(|c| c.is_ascii_digit())
        && mant.bytes().all(|c| c.is_ascii_digit() || c == b'.')
        && mant.matches('.').count() <= 1;
    let exp_ok = exp.is_none_or(|e| {
        let d = e.strip_prefix(['-', '+']).unwrap_or(e);
        !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit())
    });
    if !mant_ok || !exp_ok {
        return None;
    }
    let mut normalized = mant.to_string();
    if normalized.starts_with('.') {
        normalized.insert(0, '0');
    }
    if normalized.ends_with('.') {
        normalized.push('0');
    }
    if let Some(e) = exp {
        normalized.push('e');
        normalized.push_str(e);
    }
    let n = Number::parse(&normalized).ok()?;
    Some(if neg { n.neg() } else { n })
}

/// YAML timestamps become RFC 3339 strings, as Go's time formatting writes them.
fn timestamp(t: &str) -> Option<String> {
    let b = t.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        b.get(r.clone())
            .is_some_and(|s| s.iter().all(u8::is_ascii_digit))
    };
    if t.len() == 10
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
    {
        return Some(format!("{t}T00:00:00Z"));
    }
    let date_time = t.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if date_time && t.ends_with(['Z', 'z']) {
        let frac = &t[19..t.len() - 1];
        let frac = frac.trim_end_matches('0');
        let frac = if frac == "." { "" } else { frac };
        return Some(format!("{}T{}{}Z", &t[..10], &t[11..19], frac));
    }
    None
}

pub fn decode(src: &str) -> Result<Value, FnError> {
    let mut b = Builder::default();
    Parser::new_from_str(src).load(&mut b, true).map_err(|e| {
        FnError::call(format!(
            "on line {}, column {}: {}",
            e.marker().line(),
            e.marker().col() + 1,
            e.info()
        ))
    })?;
    if let Some(e) = b.error {
        return Err(FnError::call(e));
    }
    match b.docs.len() {
        0 => Ok(Value::null()),
        1 => Ok(b.docs.pop().unwrap_or_else(Value::null)),
        _ => Err(FnError::call(
            "the given YAML contains multiple documents; use a single document",
        )),
    }
}

/// YAML as Terraform's `yamlencode` writes it: block style, every string
/// and key double-quoted, multi-line strings as literal blocks, sequences
/// under a key not indented, and a `...` end marker after a lone plain scalar.
pub fn encode(v: &Value) -> Result<String, String> {
    let mut out = String::new();
    let lines = yaml_lines(v, 0)?;
    for l in &lines {
        out.push_str(l);
        out.push('\n');
    }
    let plain_scalar = matches!(
        v.unmarked(),
        Value::Null(_) | Value::Bool(_) | Value::Number(_)
    );
    if plain_scalar {
        out.push_str("...\n");
    }
    Ok(out)
}

fn yaml_quote(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\t' => o.push_str("\\t"),
            '\r' => o.push_str("\\r"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => o.push_str(&format!("\\x{:02X}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn is_block(v: &Value) -> Option<bool> {
    match v.unmarked() {
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) if !vs.is_empty() => Some(false),
        Value::Map(_, m) | Value::Object(m) if !m.is_empty() => Some(true),
        _ => None,
    }
}

/// The lines of `v` placed at `indent`; the first line carries the indent too,
/// so a caller that puts `v` after "- " or "key: " strips it.
fn yaml_lines(v: &Value, indent: usize) -> Result<Vec<String>, String> {
    let pad = " ".repeat(indent);
    let mut out = Vec::new();
    match v.unmarked() {
        Value::Unknown(_) => return Err("value is not known".into()),
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) if !vs.is_empty() => {
            for x in vs {
                let child = yaml_lines(x, indent + 2)?;
                for (i, l) in child.into_iter().enumerate() {
                    if i == 0 {
                        out.push(format!("{pad}- {}", &l[indent + 2..]));
                    } else {
                        out.push(l);
                    }
                }
            }
        }
        Value::Map(_, m) | Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                let key = format!("{pad}{}:", yaml_quote(k));
                match is_block(x) {
                    Some(true) => {
                        out.push(key);
                        out.extend(yaml_lines(x, indent + 2)?);
                    }
                    Some(false) => {
                        out.push(key);
                        out.extend(yaml_lines(x, indent)?);
                    }
                    None => {
                        let child = yaml_lines(x, indent)?;
                        for (i, l) in child.into_iter().enumerate() {
                            if i == 0 {
                                out.push(format!("{key} {}", &l[indent..]));
                            } else {
                                out.push(l);
                            }
                        }
                    }
                }
            }
        }
        Value::List(..) | Value::Set(..) | Value::Tuple(_) => out.push(format!("{pad}[]")),
        Value::Map(..) | Value::Object(_) => out.push(format!("{pad}{{}}")),
        Value::Null(_) => out.push(format!("{pad}null")),
        Value::Bool(b) => out.push(format!("{pad}{b}")),
        Value::Number(n) => out.push(format!("{pad}{}", n.to_text())),
        Value::String(s)
            if s.contains('\n')
                && s.trim_end_matches('\n').len() + 1 >= s.len()
                && !s.starts_with([' ', '\n']) =>
        {
            let body = s.strip_suffix('\n');
            out.push(format!("{pad}{}", if body.is_some() { "|" } else { "|-" }));
            for line in body.unwrap_or(s).split('\n') {
                if line.is_empty() {
                    out.push(String::new());
                } else {
                    out.push(format!("{pad}  {line}"));
                }
            }
        }
        Value::String(s) => out.push(format!("{pad}{}", yaml_quote(s))),
        Value::Sensitive(_) => unreachable!("unmarked above"),
    }
    Ok(out)
}
