//! Encoding functions: base64, JSON, YAML, CSV, URL and text encodings.

use super::{def, p, str_arg, FnError, FuncDef};
use crate::lang::types::Type;
use crate::lang::value::Value;
use base64::Engine as _;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

pub fn register(defs: &mut Vec<FuncDef>) {
    let st = || Type::String;
    defs.push(def("base64encode", vec![p("str", st())], st(), |_, a| {
        Ok(Value::String(B64.encode(str_arg(a, 0))))
    }));
    defs.push(def("base64decode", vec![p("str", st())], st(), |_, a| {
        let bytes = B64.decode(str_arg(a, 0)).map_err(|_| {
            FnError::arg(
                0,
                format!("failed to decode base64 data {:?}", str_arg(a, 0)),
            )
        })?;
        String::from_utf8(bytes).map(Value::String).map_err(|_| {
            FnError::arg(
                0,
                "the result of decoding the provided string is not valid UTF-8",
            )
        })
    }));
    defs.push(def("base64gzip", vec![p("str", st())], st(), |_, a| {
        gzip_like_go(str_arg(a, 0).as_bytes())
            .map(|b| Value::String(B64.encode(b)))
            .map_err(|e| FnError::call(format!("failed to compress: {e}")))
    }));
    defs.push(def(
        "jsonencode",
        vec![p("val", Type::Dynamic).nullable()],
        st(),
        |_, a| a[0].to_json().map(Value::String).map_err(FnError::call),
    ));
    defs.push(def(
        "jsondecode",
        vec![p("str", st())],
        Type::Dynamic,
        |_, a| json_decode(str_arg(a, 0)),
    ));
    defs.push(def(
        "yamldecode",
        vec![p("src", st())],
        Type::Dynamic,
        |_, a| super::yaml::decode(str_arg(a, 0)),
    ));
    defs.push(def(
        "yamlencode",
        vec![p("value", Type::Dynamic).nullable()],
        st(),
        |_, a| {
            super::yaml::encode(&a[0])
                .map(Value::String)
                .map_err(FnError::call)
        },
    ));
    defs.push(def(
        "csvdecode",
        vec![p("str", st())],
        Type::Dynamic,
        |_, a| csvdecode(str_arg(a, 0)),
    ));
    defs.push(def("urlencode", vec![p("str", st())], st(), |_, a| {
        let mut out = String::new();
        for b in str_arg(a, 0).bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    out.push(b as char)
                }
                b' ' => out.push('+'),
                _ => out.push_str(&format!("%{b:02X}")),
            }
        }
        Ok(Value::String(out))
    }));
    defs.push(def(
        "textencodebase64",
        vec![p("string", st()), p("encoding", st())],
        st(),
        |_, a| {
            let enc = encoding(str_arg(a, 1), 1)?;
            let s = str_arg(a, 0);
            if is_ascii_label(str_arg(a, 1)) && !s.is_ascii() {
                return Err(FnError::arg(
                    0,
                    "the given string contains characters that cannot be represented in US-ASCII",
                ));
            }
            let bytes: Vec<u8> = if enc == encoding_rs::UTF_16LE {
                s.encode_utf16().flat_map(u16::to_le_bytes).collect()
            } else if enc == encoding_rs::UTF_16BE {
                s.encode_utf16().flat_map(u16::to_be_bytes).collect()
            } else {
                let (b, _, bad) = enc.encode(s);
                if bad {
                    return Err(FnError::arg(
                        0,
                        format!(
                            "the given string contains characters that cannot be represented in {}",
                            enc.name()
                        ),
                    ));
                }
                b.into_owned()
            };
            Ok(Value::String(B64.encode(bytes)))
        },
    ));
    defs.push(def(
        "textdecodebase64",
        vec![p("source", st()), p("encoding", st())],
        st(),
        |_, a| {
            let enc = encoding(str_arg(a, 1), 1)?;
            let bytes = B64
                .decode(str_arg(a, 0))
                .map_err(|_| FnError::arg(0, "the given value is has an invalid base64 symbol"))?;
            let (s, bad) = enc.decode_without_bom_handling(&bytes);
            if bad {
                return Err(FnError::arg(
                    0,
                    format!(
                        "the given string contains symbols that are not defined for {}",
                        enc.name()
                    ),
                ));
            }
            Ok(Value::String(s.into_owned()))
        },
    ));
}

/// IANA names as Terraform resolves them. encoding_rs follows the WHATWG
/// labels, where "ascii" means windows-1252; IANA's US-ASCII is 7-bit.
fn is_ascii_label(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "ascii" | "us-ascii" | "iso646-us" | "ansi_x3.4-1968" | "us"
    )
}

/// gzip framed as Go's compress/gzip writes it after Flush and Close, which
/// is what Terraform's base64gzip does: header with OS byte 255, the data as
/// deflate blocks ending in a sync flush, then an empty final stored block.
/// Inputs without repeats compress to the same bytes as Terraform's; longer
/// ones may choose other (equally valid) matches than Go's compressor.
fn gzip_like_go(data: &[u8]) -> Result<Vec<u8>, flate2::CompressError> {
    let mut out = vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff];
    let mut c = flate2::Compress::new(flate2::Compression::default(), false);
    let mut body = Vec::with_capacity(data.len() + 64);
    loop {
        let consumed = c.total_in() as usize;
        body.reserve(data.len() - consumed + 64);
        c.compress_vec(&data[consumed..], &mut body, flate2::FlushCompress::Sync)?;
        // Done when all input is in and the flush did not run out of room.
        if c.total_in() as usize == data.len() && body.len() < body.capacity() {
            break;
        }
    }
    out.extend_from_slice(&body);
    out.extend_from_slice(&[0x01, 0x00, 0x00, 0xff, 0xff]);
    let mut crc = flate2::Crc::new();
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    Ok(out)
}

fn encoding(name: &str, i: usize) -> Result<&'static encoding_rs::Encoding, FnError> {
    encoding_rs::Encoding::for_label(name.as_bytes()).ok_or_else(|| {
        FnError::arg(
            i,
            format!(
                "{name:?} is not a supported IANA encoding name or alias in this Terraform version"
            ),
        )
    })
}

/// `jsondecode`: documents nested as deep as Terraform's (Go's decoder
/// takes 10 000 levels, where serde_json stops at 128), with the stack
/// that depth needs, and no deeper.
fn json_decode(text: &str) -> Result<Value, FnError> {
    let depth = json_depth(text);
    let limit = crate::syntax::MAX_NESTING;
    if depth > limit {
        return Err(FnError::arg(
            0,
            format!("the document nests {depth} levels deep, more than strata's limit of {limit}"),
        ));
    }
    // Parsing, converting and dropping the parsed tree each recurse once
    // a level.
    let stack = crate::par::GROW + depth * (16 << 10);
    stacker::maybe_grow(crate::par::RED_ZONE + depth * (16 << 10), stack, || {
        use serde::Deserialize as _;
        let mut de = serde_json::Deserializer::from_str(text);
        de.disable_recursion_limit();
        let j = serde_json::Value::deserialize(&mut de)
            .and_then(|j| de.end().map(|()| j))
            .map_err(|e| FnError::arg(0, format!("{e}")))?;
        from_json(&j)
    })
}

/// How deep a JSON text's arrays and objects nest (strings skipped).
fn json_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for b in text.bytes() {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'[' | b'{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, _, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

pub fn from_json(j: &serde_json::Value) -> Result<Value, FnError> {
    crate::lang::json::infer(j).map_err(FnError::call)
}

fn csvdecode(s: &str) -> Result<Value, FnError> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(s.as_bytes());
    let mut rows = rdr.records();
    let headers: Vec<String> = match rows.next() {
        None => return Err(FnError::call("missing header line")),
        Some(r) => r
            .map_err(|e| FnError::call(format!("{e}")))?
            .iter()
            .map(str::to_string)
            .collect(),
    };
    for (i, h) in headers.iter().enumerate() {
        if headers[..i].contains(h) {
            return Err(FnError::call(format!("duplicate column name {h:?}")));
        }
    }
    let mut out = Vec::new();
    for r in rows {
        let r = r.map_err(|e| FnError::call(format!("{e}")))?;
        if r.len() != headers.len() {
            return Err(FnError::call(format!(
                "record on line {} has wrong number of fields",
                out.len() + 2
            )));
        }
        out.push(Value::Object(
            headers
                .iter()
                .cloned()
                .zip(r.iter().map(|f| Value::String(f.to_string())))
                .collect(),
        ));
    }
    let et = Type::object(headers.iter().map(|h| (h.clone(), Type::String)).collect());
    Ok(Value::List(et, out))
}

#[cfg(test)]
mod depth_tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}\"[{{\\\"]\"{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn jsondecode_takes_documents_as_deep_as_terraforms() {
        // Brackets inside a string do not count.
        assert_eq!(json_depth(&nested(3)), 3);
        assert!(json_decode(&nested(129)).is_ok());
        assert!(json_decode(&nested(crate::syntax::MAX_NESTING)).is_ok());
        let refused = json_decode(&nested(crate::syntax::MAX_NESTING + 1));
        assert!(refused.is_err_and(|e| e.message.contains("nests 10001 levels deep")));
        assert!(json_decode("[1] [2]").is_err());
    }
}
