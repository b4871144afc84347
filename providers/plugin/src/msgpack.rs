//! Values as cty's msgpack encoding, the `msgpack` field of the plugin
//! protocol's `DynamicValue`: what a provider plugin reads and answers.
//!
//! The layout, as cty (go-cty's `msgpack` package) writes and reads it,
//! always against a type both sides know:
//! - null is nil; an unknown value is the extension of type 0 with one
//!   zero byte (a refined unknown, extension type 12, reads as unknown too);
//! - a string is a msgpack string, a bool a bool;
//! - a number is an integer when it is a whole number that fits 64 bits,
//!   else a float64 when that is exact, else its decimal text;
//! - lists, sets and tuples are arrays; maps are maps; objects are maps of
//!   their attributes in name order;
//! - where the type is `dynamic` (cty's pseudo-type) the value goes with
//!   its own: a two-element array of the type's JSON (as bytes) and the
//!   value encoded by that type.
//!
//! Marks never cross: a sensitive value is encoded as its plain value (the
//! protocol carries sensitivity in schemas and paths, not in values).

use rmp::encode;
use rmp::Marker;
use strata_value::json::{type_from_json, type_to_json};
use strata_value::number::Number;
use strata_value::types::Type;
use strata_value::value::{Attrs, Value};

/// Why a value could not be encoded or decoded, with where in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecError {
    /// Attribute names and indexes from the top (`spec.0.name`).
    pub path: String,
    pub why: String,
}

impl std::fmt::Display for CodecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.path.is_empty() {
            true => f.write_str(&self.why),
            false => write!(f, "at {}: {}", self.path, self.why),
        }
    }
}

fn fail<T>(path: &str, why: impl Into<String>) -> Result<T, CodecError> {
    Err(CodecError {
        path: path.to_string(),
        why: why.into(),
    })
}

fn step(path: &str, s: &str) -> String {
    match path.is_empty() {
        true => s.to_string(),
        false => format!("{path}.{s}"),
    }
}

/// The bytes of cty's unknown value: a fixext1 of type 0 holding 0.
const UNKNOWN: [u8; 3] = [0xd4, 0, 0];

/// `v` encoded against `ty`.
pub fn encode(v: &Value, ty: &Type) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::new();
    write(&mut out, v, ty, "")?;
    Ok(out)
}

fn io(path: &str) -> impl Fn(rmp::encode::ValueWriteError) -> CodecError + '_ {
    move |e| CodecError {
        path: path.to_string(),
        why: e.to_string(),
    }
}

fn write(out: &mut Vec<u8>, v: &Value, ty: &Type, path: &str) -> Result<(), CodecError> {
    let v = v.unmarked();
    if *ty == Type::Dynamic
        && !matches!(
            v,
            Value::Null(Type::Dynamic) | Value::Unknown(Type::Dynamic)
        )
    {
        let own = v.ty();
        let text = type_to_json(&own).to_string();
        encode::write_array_len(out, 2).map_err(io(path))?;
        encode::write_bin(out, text.as_bytes()).map_err(io(path))?;
        return write(out, v, &own, path);
    }
    match v {
        Value::Unknown(_) => out.extend_from_slice(&UNKNOWN),
        Value::Null(_) => encode::write_nil(out).map_err(|e| CodecError {
            path: path.to_string(),
            why: e.to_string(),
        })?,
        Value::Bool(b) => encode::write_bool(out, *b).map_err(|e| CodecError {
            path: path.to_string(),
            why: e.to_string(),
        })?,
        Value::String(s) => encode::write_str(out, s).map_err(io(path))?,
        Value::Number(n) => number(out, n, path)?,
        Value::List(_, xs) | Value::Set(_, xs) | Value::Tuple(xs) => {
            encode::write_array_len(out, len(xs.len(), path)?).map_err(io(path))?;
            for (i, x) in xs.iter().enumerate() {
                let ety = match ty {
                    Type::List(e) | Type::Set(e) => e.as_ref(),
                    Type::Tuple(ts) => ts.get(i).unwrap_or(&Type::Dynamic),
                    _ => &Type::Dynamic,
                };
                write(out, x, ety, &step(path, &i.to_string()))?;
            }
        }
        Value::Map(_, m) => entries(out, m, path, |_| match ty {
            Type::Map(e) => e.as_ref().clone(),
            _ => Type::Dynamic,
        })?,
        Value::Object(m) => {
            let Type::Object(o) = ty else {
                return fail(
                    path,
                    format!("an object given where {} was expected", ty.friendly_name()),
                );
            };
            // Every attribute the type names, in name order, null when the
            // value lacks it.
            encode::write_map_len(out, len(o.attrs.len(), path)?).map_err(io(path))?;
            for (name, aty) in &o.attrs {
                encode::write_str(out, name).map_err(io(path))?;
                let null = Value::Null(aty.clone());
                write(out, m.get(name).unwrap_or(&null), aty, &step(path, name))?;
            }
        }
        Value::Sensitive(_) => return fail(path, "a marked value"),
    }
    Ok(())
}

fn len(n: usize, path: &str) -> Result<u32, CodecError> {
    u32::try_from(n).or_else(|_| fail(path, "too many elements"))
}

fn entries(
    out: &mut Vec<u8>,
    m: &Attrs,
    path: &str,
    ty_of: impl Fn(&str) -> Type,
) -> Result<(), CodecError> {
    encode::write_map_len(out, len(m.len(), path)?).map_err(io(path))?;
    for (k, x) in m.iter() {
        encode::write_str(out, k).map_err(io(path))?;
        write(out, x, &ty_of(k), &step(path, k))?;
    }
    Ok(())
}

fn number(out: &mut Vec<u8>, n: &Number, path: &str) -> Result<(), CodecError> {
    let f = n.to_f64();
    let err = |e: rmp::encode::ValueWriteError| CodecError {
        path: path.to_string(),
        why: e.to_string(),
    };
    if let Some(i) = n.to_i64() {
        match i >= 0 {
            true => encode::write_uint(out, i.unsigned_abs())
                .map(|_| ())
                .map_err(err),
            false => encode::write_sint(out, i).map(|_| ()).map_err(err),
        }
    } else if f.is_infinite() || Number::from_f64(f).is_some_and(|back| back == *n) {
        encode::write_f64(out, f).map_err(err)
    } else {
        encode::write_str(out, &n.to_text()).map_err(err)
    }
}

/// `bytes` decoded as a value of `ty`.
pub fn decode(bytes: &[u8], ty: &Type) -> Result<Value, CodecError> {
    let mut r = Reader { bytes, at: 0 };
    let v = r.value(ty, "")?;
    match r.at == bytes.len() {
        true => Ok(v),
        false => fail("", format!("{} bytes after the value", bytes.len() - r.at)),
    }
}

struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize, path: &str) -> Result<&[u8], CodecError> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let Some(end) = end else {
            return fail(path, "the value ends early");
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn uint(&mut self, n: usize, path: &str) -> Result<u64, CodecError> {
        Ok(self
            .take(n, path)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    fn marker(&mut self, path: &str) -> Result<Marker, CodecError> {
        Ok(Marker::from_u8(self.take(1, path)?[0]))
    }

    /// The length a marker announces for a string, binary, array, map or
    /// extension, reading the length bytes that follow it.
    fn length(&mut self, m: Marker, path: &str) -> Result<usize, CodecError> {
        let n = match m {
            Marker::FixStr(n) | Marker::FixArray(n) | Marker::FixMap(n) => u64::from(n),
            Marker::Str8 | Marker::Bin8 | Marker::Ext8 => self.uint(1, path)?,
            Marker::Str16 | Marker::Bin16 | Marker::Array16 | Marker::Map16 | Marker::Ext16 => {
                self.uint(2, path)?
            }
            Marker::Str32 | Marker::Bin32 | Marker::Array32 | Marker::Map32 | Marker::Ext32 => {
                self.uint(4, path)?
            }
            Marker::FixExt1 => 1,
            Marker::FixExt2 => 2,
            Marker::FixExt4 => 4,
            Marker::FixExt8 => 8,
            Marker::FixExt16 => 16,
            other => return fail(path, format!("unexpected {other:?}")),
        };
        // Never more elements than bytes left: a hostile length allocates nothing.
        usize::try_from(n)
            .ok()
            .filter(|n| *n <= self.bytes.len() - self.at)
            .map_or_else(|| fail(path, "a length longer than the value"), Ok)
    }

    fn text(&mut self, m: Marker, path: &str) -> Result<String, CodecError> {
        let n = self.length(m, path)?;
        let raw = self.take(n, path)?;
        String::from_utf8(raw.to_vec()).or_else(|_| fail(path, "a string that is not UTF-8"))
    }

    fn value(&mut self, ty: &Type, path: &str) -> Result<Value, CodecError> {
        let m = self.marker(path)?;
        if matches!(
            m,
            Marker::FixExt1
                | Marker::FixExt2
                | Marker::FixExt4
                | Marker::FixExt8
                | Marker::FixExt16
                | Marker::Ext8
                | Marker::Ext16
                | Marker::Ext32
        ) {
            // An unknown value; a refined one's refinements are not kept.
            let n = self.length(m, path)?;
            self.take(1 + n, path)?;
            return Ok(Value::Unknown(ty.clone()));
        }
        if m == Marker::Null {
            return Ok(Value::Null(ty.clone()));
        }
        match ty {
            Type::Dynamic => self.dynamic(m, path),
            Type::Bool => match m {
                Marker::True => Ok(Value::Bool(true)),
                Marker::False => Ok(Value::Bool(false)),
                other => fail(path, format!("a bool expected, {other:?} found")),
            },
            Type::String => match m {
                Marker::FixStr(_) | Marker::Str8 | Marker::Str16 | Marker::Str32 => {
                    Ok(Value::String(self.text(m, path)?))
                }
                other => fail(path, format!("a string expected, {other:?} found")),
            },
            Type::Number => self.number(m, path).map(Value::Number),
            Type::List(e) | Type::Set(e) => {
                let items = self.array(m, path, |r, i, p| r.value(e, &step(p, &i.to_string())))?;
                Ok(match ty {
                    Type::Set(_) => Value::new_set(e.as_ref().clone(), items),
                    _ => Value::List(e.as_ref().clone(), items),
                })
            }
            Type::Tuple(ts) => {
                let items = self.array(m, path, |r, i, p| {
                    let ety = ts
                        .get(i)
                        .map_or_else(|| fail(p, "more elements than the tuple type has"), Ok)?;
                    r.value(ety, &step(p, &i.to_string()))
                })?;
                match items.len() == ts.len() {
                    true => Ok(Value::Tuple(items)),
                    false => fail(
                        path,
                        format!(
                            "{} elements where the tuple type has {}",
                            items.len(),
                            ts.len()
                        ),
                    ),
                }
            }
            Type::Map(e) => Ok(Value::Map(
                e.as_ref().clone(),
                self.map(m, path, |_| Some(e.as_ref()))?,
            )),
            Type::Object(o) => {
                let mut attrs = self.map(m, path, |k| o.attrs.get(k))?;
                for (name, aty) in &o.attrs {
                    if attrs.get(name).is_none() {
                        attrs.insert(name.clone(), Value::Null(aty.clone()));
                    }
                }
                Ok(Value::Object(attrs))
            }
        }
    }

    /// `[type JSON, value]`.
    fn dynamic(&mut self, m: Marker, path: &str) -> Result<Value, CodecError> {
        let n = match m {
            Marker::FixArray(_) | Marker::Array16 | Marker::Array32 => self.length(m, path)?,
            other => {
                return fail(
                    path,
                    format!("a dynamic value expected ([type, value]), {other:?} found"),
                )
            }
        };
        if n != 2 {
            return fail(path, "a dynamic value is a two-element array");
        }
        let tm = self.marker(path)?;
        let text = match tm {
            Marker::Bin8 | Marker::Bin16 | Marker::Bin32 => {
                let len = self.length(tm, path)?;
                String::from_utf8(self.take(len, path)?.to_vec())
                    .or_else(|_| fail(path, "a type that is not UTF-8"))?
            }
            _ => self.text(tm, path)?,
        };
        let json: serde_json::Value = serde_json::from_str(&text)
            .or_else(|e| fail(path, format!("a type that is not JSON: {e}")))?;
        let ty = type_from_json(&json).or_else(|e| fail(path, e))?;
        self.value(&ty, path)
    }

    fn number(&mut self, m: Marker, path: &str) -> Result<Number, CodecError> {
        let i = |v: i64| Ok(Number::from_i64(v));
        match m {
            Marker::FixPos(n) => i(i64::from(n)),
            Marker::FixNeg(n) => i(i64::from(n)),
            Marker::U8 => i(self.uint(1, path)? as i64),
            Marker::U16 => i(self.uint(2, path)? as i64),
            Marker::U32 => i(self.uint(4, path)? as i64),
            Marker::U64 => {
                let v = self.uint(8, path)?;
                Number::parse(&v.to_string()).or_else(|_| fail(path, "a number out of range"))
            }
            Marker::I8 => i(i64::from(self.take(1, path)?[0] as i8)),
            Marker::I16 => i(i64::from(self.uint(2, path)? as u16 as i16)),
            Marker::I32 => i(i64::from(self.uint(4, path)? as u32 as i32)),
            Marker::I64 => i(self.uint(8, path)? as i64),
            Marker::F32 => float(f64::from(f32::from_bits(self.uint(4, path)? as u32)), path),
            Marker::F64 => float(f64::from_bits(self.uint(8, path)?), path),
            Marker::FixStr(_) | Marker::Str8 | Marker::Str16 | Marker::Str32 => {
                let text = self.text(m, path)?;
                Number::parse(&text).or_else(|_| fail(path, format!("{text:?} is not a number")))
            }
            other => fail(path, format!("a number expected, {other:?} found")),
        }
    }

    fn array(
        &mut self,
        m: Marker,
        path: &str,
        mut each: impl FnMut(&mut Self, usize, &str) -> Result<Value, CodecError>,
    ) -> Result<Vec<Value>, CodecError> {
        let n = match m {
            Marker::FixArray(_) | Marker::Array16 | Marker::Array32 => self.length(m, path)?,
            other => return fail(path, format!("an array expected, {other:?} found")),
        };
        (0..n).map(|i| each(self, i, path)).collect()
    }

    fn map<'t>(
        &mut self,
        m: Marker,
        path: &str,
        ty_of: impl Fn(&str) -> Option<&'t Type>,
    ) -> Result<Attrs, CodecError> {
        let n = match m {
            Marker::FixMap(_) | Marker::Map16 | Marker::Map32 => self.length(m, path)?,
            other => return fail(path, format!("a map expected, {other:?} found")),
        };
        let mut out = Attrs::new();
        for _ in 0..n {
            let km = self.marker(path)?;
            let key = self.text(km, path)?;
            let Some(ty) = ty_of(&key) else {
                return fail(path, format!("an attribute {key:?} the type does not have"));
            };
            let v = self.value(ty, &step(path, &key))?;
            out.insert(key, v);
        }
        Ok(out)
    }
}

fn float(f: f64, path: &str) -> Result<Number, CodecError> {
    Number::from_f64(f).map_or_else(|| fail(path, "a number that is not a number (NaN)"), Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn obj(attrs: &[(&str, Type)]) -> Type {
        Type::object(
            attrs
                .iter()
                .map(|(k, t)| (k.to_string(), t.clone()))
                .collect::<BTreeMap<_, _>>(),
        )
    }

    #[test]
    fn bytes_are_ctys() {
        let cases: Vec<(Value, Type, Vec<u8>)> = vec![
            (Value::Null(Type::String), Type::String, vec![0xc0]),
            (Value::Unknown(Type::String), Type::String, vec![0xd4, 0, 0]),
            (Value::Bool(true), Type::Bool, vec![0xc3]),
            (
                Value::String("hi".into()),
                Type::String,
                vec![0xa2, b'h', b'i'],
            ),
            (Value::Number(Number::from_i64(5)), Type::Number, vec![0x05]),
            (
                Value::Number(Number::from_i64(-1)),
                Type::Number,
                vec![0xff],
            ),
            (
                Value::Number(Number::from_i64(300)),
                Type::Number,
                vec![0xcd, 0x01, 0x2c],
            ),
            (
                Value::Number(Number::parse("1.5").expect("n")),
                Type::Number,
                [vec![0xcb], 1.5f64.to_be_bytes().to_vec()].concat(),
            ),
            (
                Value::Tuple(vec![Value::String("a".into())]),
                Type::Dynamic,
                [
                    vec![0x92, 0xc4, 20],
                    br#"["tuple",["string"]]"#.to_vec(),
                    vec![0x91, 0xa1, b'a'],
                ]
                .concat(),
            ),
        ];
        for (v, ty, want) in cases {
            assert_eq!(encode(&v, &ty).expect("encodes"), want, "{v:?} as {ty:?}");
        }
        // 0.1 has no exact float64: its decimal text goes as a string.
        let tenth = Value::Number(Number::parse("0.1").expect("n"));
        assert_eq!(
            encode(&tenth, &Type::Number).expect("encodes"),
            vec![0xa3, b'0', b'.', b'1']
        );
    }

    #[test]
    fn values_come_back_as_they_went() {
        let ty = obj(&[
            ("name", Type::String),
            ("size", Type::Number),
            ("labels", Type::map(Type::String)),
            ("zones", Type::set(Type::String)),
            ("spec", Type::list(obj(&[("gpu", Type::Bool)]))),
            ("extra", Type::Dynamic),
            ("later", Type::String),
        ]);
        let v = Value::Object(
            [
                ("name", Value::String("pool".into())),
                (
                    "size",
                    Value::Number(Number::parse("123456789012345678901234567890").expect("n")),
                ),
                (
                    "labels",
                    Value::Map(Type::String, [("team", Value::String("ml".into()))].into()),
                ),
                (
                    "zones",
                    Value::new_set(
                        Type::String,
                        vec![Value::String("b".into()), Value::String("a".into())],
                    ),
                ),
                (
                    "spec",
                    Value::List(
                        obj(&[("gpu", Type::Bool)]),
                        vec![Value::Object([("gpu", Value::Bool(true))].into())],
                    ),
                ),
                ("extra", Value::Number(Number::from_i64(-7))),
                ("later", Value::Unknown(Type::String)),
            ]
            .into(),
        );
        let bytes = encode(&v, &ty).expect("encodes");
        let back = decode(&bytes, &ty).expect("decodes");
        assert!(back.raw_equal(&v), "{back:?}");
    }

    #[test]
    fn damaged_bytes_are_errors_with_a_place() {
        let ty = obj(&[("name", Type::String)]);
        assert!(decode(&[0x81, 0xa4, b'n', b'a', b'm', b'e', 0x05], &ty)
            .is_err_and(|e| e.path == "name"));
        assert!(
            decode(&[0xdc, 0xff, 0xff], &Type::list(Type::String)).is_err(),
            "a length past the end"
        );
        assert!(decode(&[0xa2, b'h'], &Type::String).is_err(), "ends early");
        assert!(
            decode(&[0xc3, 0xc3], &Type::Bool).is_err(),
            "trailing bytes"
        );
        // A refined unknown (extension 12) reads as unknown.
        let refined = [0xc7, 3, 0x0c, 0x81, 0x01, 0xc2];
        assert!(matches!(
            decode(&refined, &Type::String),
            Ok(Value::Unknown(_))
        ));
    }
}
