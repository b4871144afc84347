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

/// YAML as Terraform's `yamlencode` writes it: block style, strings and keys
/// double-quoted only when they would otherwise be read as something else.
fn yaml_encode(v: &Value, indent: usize, out: &mut String) -> Result<(), String> {
    let pad = " ".repeat(indent);
    match v.unmarked() {
        Value::Unknown(_) => return Err("value is not known".into()),
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) if !vs.is_empty() => {
            for x in vs {
                out.push_str(&pad);
                out.push_str("- ");
                let mut inner = String::new();
                yaml_encode(x, indent + 2, &mut inner)?;
                out.push_str(inner.trim_start());
            }
        }
        Value::Map(_, m) | Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                out.push_str(&pad);
                out.push_str(&yaml_scalar_str(k));
                out.push(':');
                let nested = matches!(x.unmarked(), Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) if !vs.is_empty())
                    || matches!(x.unmarked(), Value::Map(_, m) | Value::Object(m) if !m.is_empty());
                if nested {
                    out.push('\n');
                    let child_indent = if matches!(x.unmarked(), Value::Map(..) | Value::Object(_)) { indent + 2 } else { indent };
                    yaml_encode(x, child_indent, out)?;
                } else {
                    out.push(' ');
                    yaml_encode(x, 0, out)?;
                }
            }
        }
        Value::List(..) | Value::Set(..) | Value::Tuple(_) => out.push_str("[]\n"),
        Value::Map(..) | Value::Object(_) => out.push_str("{}\n"),
        Value::Null(_) => out.push_str("null\n"),
        Value::Bool(b) => {
            out.push_str(if *b { "true" } else { "false" });
            out.push('\n');
        }
        Value::Number(n) => {
            out.push_str(&n.to_text());
            out.push('\n');
        }
        Value::String(s) => {
            if s.contains('\n') && !s.is_empty() {
                out.push_str(if s.ends_with('\n') { "|\n" } else { "|-\n" });
                for line in s.trim_end_matches('\n').split('\n') {
                    out.push_str(&" ".repeat(indent.max(2)));
                    out.push_str(line);
                    out.push('\n');
                }
            } else {
                out.push_str(&yaml_scalar_str(s));
                out.push('\n');
            }
        }
        Value::Sensitive(_) => unreachable!("unmarked above"),
    }
    Ok(())
}

fn yaml_scalar_str(s: &str) -> String {
    let plain_ok = !s.is_empty()
        && s.chars().all(|c| c.is_alphanumeric() || "_-./ ".contains(c))
        && !s.starts_with([' ', '-', '.'])
        && !s.ends_with(' ')
        && !matches!(s.to_ascii_lowercase().as_str(), "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "~" | "y" | "n")
        && s.parse::<f64>().is_err();
    if plain_ok {
        s.to_string()
    } else {
        let mut o = String::new();
        crate::lang::value::json_string(s, &mut o);
        o
    }
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
