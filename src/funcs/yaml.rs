//! `yamldecode` and `yamlencode` as Terraform's go-cty-yaml does them.
//!
//! Decoding follows YAML 1.1 resolution for plain (unquoted) scalars, which
//! is what go-cty-yaml inherits from go-yaml v2: `y`, `yes` and `on` are
//! true, `0x10` is 16, `~` is null. yaml-rust2's event stream is used because
//! it says whether each scalar was quoted, which resolution depends on.

use super::FnError;
use crate::lang::number::Number;
use crate::lang::value::Value;
use num_bigint::BigInt;
use std::collections::{BTreeMap, HashMap};
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
    Map(usize, BTreeMap<String, Value>, Option<String>),
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
            Event::MappingStart(anchor, _) => self.stack.push(Frame::Map(anchor, BTreeMap::new(), None)),
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
            return number(text).map(Value::Number).ok_or_else(|| format!("cannot decode {text:?} as a number"))
        }
        Some("bool") => {
            return boolean(text).map(Value::Bool).ok_or_else(|| format!("cannot decode {text:?} as a bool"))
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
    Ok(Value::String(text.to_string()))
}

fn boolean(t: &str) -> Option<bool> {
    match t {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

fn number(t: &str) -> Option<Number> {
    let plain: String = t.chars().filter(|&c| c != '_').collect();
    let (neg, body) = match plain.strip_prefix('-') {
        Some(b) => (true, b.to_string()),
        None => (false, plain.strip_prefix('+').unwrap_or(&plain).to_string()),
    };
    let radix = |digits: &str, base: u32| -> Option<Number> {
        if digits.is_empty() {
            return None;
        }
        let i = BigInt::parse_bytes(digits.as_bytes(), base)?;
        Some(Number::from_bigint(&if neg { -i } else { i }))
    };
    if let Some(h) = body.strip_prefix("0x") {
        return radix(h, 16);
    }
    if let Some(b) = body.strip_prefix("0b") {
        return radix(b, 2);
    }
    if body.len() > 1 && body.starts_with('0') && body.bytes().all(|c| c.is_ascii_digit()) {
        return radix(&body[1..], 8);
    }
    if body.bytes().all(|c| c.is_ascii_digit()) && !body.is_empty() {
        return radix(&body, 10);
    }
    let float_like = {
        let mut seen_digit = false;
        let mut ok = true;
        let mut parts = body.splitn(2, ['e', 'E']);
        let mant = parts.next().unwrap_or("");
        for c in mant.chars() {
            match c {
                '0'..='9' => seen_digit = true,
                '.' => {}
                _ => ok = false,
            }
        }
        ok && seen_digit && mant.matches('.').count() <= 1
    };
    if !float_like {
        return None;
    }
    let normalized = if body.ends_with('.') { format!("{body}0") } else { body.clone() };
    let n = Number::parse(&normalized).ok()?;
    Some(if neg { n.neg() } else { n })
}

pub fn decode(src: &str) -> Result<Value, FnError> {
    let mut b = Builder::default();
    Parser::new_from_str(src)
        .load(&mut b, true)
        .map_err(|e| FnError::call(format!("on line {}, column {}: {}", e.marker().line(), e.marker().col() + 1, e.info())))?;
    if let Some(e) = b.error {
        return Err(FnError::call(e));
    }
    match b.docs.len() {
        0 => Ok(Value::null()),
        1 => Ok(b.docs.pop().unwrap_or_else(Value::null)),
        _ => Err(FnError::call("the given YAML contains multiple documents; use a single document")),
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
    let plain_scalar = matches!(v.unmarked(), Value::Null(_) | Value::Bool(_) | Value::Number(_));
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
        Value::String(s) if s.contains('\n') && s.trim_end_matches('\n').len() + 1 >= s.len() && !s.starts_with([' ', '\n']) => {
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

