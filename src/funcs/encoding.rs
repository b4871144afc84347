//! Encoding functions: base64, JSON, YAML, CSV, URL and text encodings.

use super::{def, p, str_arg, FnError, FuncDef};
use crate::lang::number::Number;
use crate::lang::types::Type;
use crate::lang::value::Value;
use base64::Engine as _;
use std::collections::BTreeMap;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

pub fn register(defs: &mut Vec<FuncDef>) {
    let st = || Type::String;
    defs.push(def("base64encode", vec![p("str", st())], st(), |_, a| {
        Ok(Value::String(B64.encode(str_arg(a, 0))))
    }));
    defs.push(def("base64decode", vec![p("str", st())], st(), |_, a| {
        let bytes = B64
            .decode(str_arg(a, 0))
            .map_err(|_| FnError::arg(0, format!("failed to decode base64 data {:?}", str_arg(a, 0))))?;
        String::from_utf8(bytes)
            .map(Value::String)
            .map_err(|_| FnError::arg(0, "the result of decoding the provided string is not valid UTF-8"))
    }));
    defs.push(def("base64gzip", vec![p("str", st())], st(), |_, a| {
        use std::io::Write as _;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(str_arg(a, 0).as_bytes())
            .and_then(|_| enc.finish())
            .map(|b| Value::String(B64.encode(b)))
            .map_err(|e| FnError::call(format!("failed to compress: {e}")))
    }));
    defs.push(def("jsonencode", vec![p("val", Type::Dynamic).nullable()], st(), |_, a| {
        a[0].to_json().map(Value::String).map_err(FnError::call)
    }));
    defs.push(def("jsondecode", vec![p("str", st())], Type::Dynamic, |_, a| {
        let j: serde_json::Value = serde_json::from_str(str_arg(a, 0))
            .map_err(|e| FnError::arg(0, format!("{e}")))?;
        from_json(&j)
    }));
    defs.push(def("yamldecode", vec![p("src", st())], Type::Dynamic, |_, a| {
        let y: serde_yaml::Value = serde_yaml::from_str(str_arg(a, 0))
            .map_err(|e| FnError::call(format!("on line {}: {e}", e.location().map_or(0, |l| l.line()))))?;
        from_yaml(&y)
    }));
    defs.push(def("yamlencode", vec![p("value", Type::Dynamic).nullable()], st(), |_, a| {
        let mut out = String::new();
        yaml_encode(&a[0], 0, &mut out).map_err(FnError::call)?;
        Ok(Value::String(out))
    }));
    defs.push(def("csvdecode", vec![p("str", st())], Type::Dynamic, |_, a| csvdecode(str_arg(a, 0))));
    defs.push(def("urlencode", vec![p("str", st())], st(), |_, a| {
        let mut out = String::new();
        for b in str_arg(a, 0).bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
                b' ' => out.push('+'),
                _ => out.push_str(&format!("%{b:02X}")),
            }
        }
        Ok(Value::String(out))
    }));
    defs.push(def("textencodebase64", vec![p("string", st()), p("encoding", st())], st(), |_, a| {
        let enc = encoding(str_arg(a, 1), 1)?;
        let s = str_arg(a, 0);
        let bytes: Vec<u8> = if enc == encoding_rs::UTF_16LE {
            s.encode_utf16().flat_map(u16::to_le_bytes).collect()
        } else if enc == encoding_rs::UTF_16BE {
            s.encode_utf16().flat_map(u16::to_be_bytes).collect()
        } else {
            let (b, _, bad) = enc.encode(s);
            if bad {
                return Err(FnError::arg(0, format!("the given string contains characters that cannot be represented in {}", enc.name())));
            }
            b.into_owned()
        };
        Ok(Value::String(B64.encode(bytes)))
    }));
    defs.push(def("textdecodebase64", vec![p("source", st()), p("encoding", st())], st(), |_, a| {
        let enc = encoding(str_arg(a, 1), 1)?;
        let bytes = B64.decode(str_arg(a, 0)).map_err(|_| FnError::arg(0, "the given value is has an invalid base64 symbol"))?;
        let (s, bad) = enc.decode_without_bom_handling(&bytes);
        if bad {
            return Err(FnError::arg(0, format!("the given string contains symbols that are not defined for {}", enc.name())));
        }
        Ok(Value::String(s.into_owned()))
    }));
}

fn encoding(name: &str, i: usize) -> Result<&'static encoding_rs::Encoding, FnError> {
    encoding_rs::Encoding::for_label(name.as_bytes())
        .ok_or_else(|| FnError::arg(i, format!("{name:?} is not a supported IANA encoding name or alias in this Terraform version")))
}

pub fn from_json(j: &serde_json::Value) -> Result<Value, FnError> {
    Ok(match j {
        serde_json::Value::Null => Value::null(),
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => Value::Number(
            Number::parse(&n.to_string()).map_err(|_| FnError::call(format!("invalid number {n}")))?,
        ),
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(vs) => Value::Tuple(vs.iter().map(from_json).collect::<Result<_, _>>()?),
        serde_json::Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| Ok((k.clone(), from_json(v)?)))
                .collect::<Result<BTreeMap<_, _>, FnError>>()?,
        ),
    })
}

fn from_yaml(y: &serde_yaml::Value) -> Result<Value, FnError> {
    Ok(match y {
        serde_yaml::Value::Null => Value::null(),
        serde_yaml::Value::Bool(b) => Value::Bool(*b),
        serde_yaml::Value::Number(n) => Value::Number(
            Number::parse(&n.to_string())
                .or_else(|_| n.as_f64().and_then(Number::from_f64).ok_or(()))
                .map_err(|_| FnError::call(format!("cannot represent {n} as a number")))?,
        ),
        serde_yaml::Value::String(s) => Value::String(s.clone()),
        serde_yaml::Value::Sequence(vs) => Value::Tuple(vs.iter().map(from_yaml).collect::<Result<_, _>>()?),
        serde_yaml::Value::Mapping(m) => {
            let mut out = BTreeMap::new();
            for (k, v) in m {
                let key = match k {
                    serde_yaml::Value::String(s) => s.clone(),
                    serde_yaml::Value::Number(n) => n.to_string(),
                    serde_yaml::Value::Bool(b) => b.to_string(),
                    serde_yaml::Value::Null => "null".into(),
                    _ => return Err(FnError::call("only scalar mapping keys are supported")),
                };
                out.insert(key, from_yaml(v)?);
            }
            Value::Object(out)
        }
        serde_yaml::Value::Tagged(t) => from_yaml(&t.value)?,
    })
}

/// YAML as Terraform's `yamlencode` writes it: block style, every string
/// and key double-quoted, multi-line strings as literal blocks, sequences
/// under a key not indented, and a `...` end marker after a lone plain scalar.
fn yaml_encode(v: &Value, _indent: usize, out: &mut String) -> Result<(), String> {
    let lines = yaml_lines(v, 0)?;
    for l in &lines {
        out.push_str(l);
        out.push('\n');
    }
    let plain_scalar = matches!(v.unmarked(), Value::Null(_) | Value::Bool(_) | Value::Number(_));
    if plain_scalar {
        out.push_str("...\n");
    }
    Ok(())
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

fn csvdecode(s: &str) -> Result<Value, FnError> {
    let mut rdr = csv::ReaderBuilder::new().has_headers(false).from_reader(s.as_bytes());
    let mut rows = rdr.records();
    let headers: Vec<String> = match rows.next() {
        None => return Err(FnError::call("missing header line")),
        Some(r) => r.map_err(|e| FnError::call(format!("{e}")))?.iter().map(str::to_string).collect(),
    };
    let mut out = Vec::new();
    for r in rows {
        let r = r.map_err(|e| FnError::call(format!("{e}")))?;
        if r.len() != headers.len() {
            return Err(FnError::call(format!("record on line {} has wrong number of fields", out.len() + 2)));
        }
        out.push(Value::Object(
            headers.iter().cloned().zip(r.iter().map(|f| Value::String(f.to_string()))).collect(),
        ));
    }
    let et = Type::object(headers.iter().map(|h| (h.clone(), Type::String)).collect());
    Ok(Value::List(et, out))
}
