//! cty's JSON encodings, which state files and plan JSON use: a type as
//! JSON (`"string"`, `["list","string"]`, `["object",{...}]`), and a value
//! of a known type as plain JSON, where an attribute of type `any` carries
//! its own type as `{"value": …, "type": …}`.

use crate::number::Number;
use crate::types::{ObjectType, Type};
use crate::value::{Attrs, Value};
use serde::ser::{Error as _, SerializeMap, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;

pub fn type_to_json(t: &Type) -> Json {
    // Keys are strings and nothing else can fail.
    serde_json::to_value(TypeJson(t)).unwrap_or(Json::Null)
}

/// A type as cty writes it: `"string"`, `["list","string"]`,
/// `["object",{...}]` (with a third element naming optional attributes).
struct TypeJson<'a>(&'a Type);

impl Serialize for TypeJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Type::Dynamic => s.serialize_str("dynamic"),
            Type::Bool => s.serialize_str("bool"),
            Type::Number => s.serialize_str("number"),
            Type::String => s.serialize_str("string"),
            Type::List(e) => ("list", TypeJson(e)).serialize(s),
            Type::Set(e) => ("set", TypeJson(e)).serialize(s),
            Type::Map(e) => ("map", TypeJson(e)).serialize(s),
            Type::Tuple(ts) => ("tuple", Elements(ts.iter().map(TypeJson))).serialize(s),
            Type::Object(o) => {
                let attrs = Entries(o.attrs.iter().map(|(k, t)| (k, TypeJson(t))));
                match o.optional.is_empty() {
                    true => ("object", attrs).serialize(s),
                    false => ("object", attrs, &o.optional).serialize(s),
                }
            }
        }
    }
}

/// `TypeJson(&v.ty())`, without building the type.
struct OwnType<'a>(&'a Value);

impl Serialize for OwnType<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Null(t) | Value::Unknown(t) => TypeJson(t).serialize(s),
            Value::Sensitive(inner) => OwnType(inner).serialize(s),
            Value::Bool(_) => s.serialize_str("bool"),
            Value::Number(_) => s.serialize_str("number"),
            Value::String(_) => s.serialize_str("string"),
            Value::List(e, _) => ("list", TypeJson(e)).serialize(s),
            Value::Set(e, _) => ("set", TypeJson(e)).serialize(s),
            Value::Map(e, _) => ("map", TypeJson(e)).serialize(s),
            Value::Tuple(vs) => ("tuple", Elements(vs.iter().map(OwnType))).serialize(s),
            Value::Object(m) => {
                ("object", Entries(m.iter().map(|(k, x)| (k, OwnType(x))))).serialize(s)
            }
        }
    }
}

/// An iterator written as a JSON array (a copy of it walked: writing
/// takes `&self`).
struct Elements<I>(I);

impl<I: Iterator<Item = T> + Clone, T: Serialize> Serialize for Elements<I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.clone())
    }
}

/// An iterator of pairs written as a JSON object.
struct Entries<I>(I);

impl<I: Iterator<Item = (K, V)> + Clone, K: Serialize, V: Serialize> Serialize for Entries<I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.clone())
    }
}

pub fn type_from_json(j: &Json) -> Result<Type, String> {
    let bad = || format!("invalid type {j}");
    match j {
        Json::String(s) => match s.as_str() {
            "dynamic" => Ok(Type::Dynamic),
            "bool" => Ok(Type::Bool),
            "number" => Ok(Type::Number),
            "string" => Ok(Type::String),
            _ => Err(bad()),
        },
        Json::Array(parts) => match (parts.first().and_then(Json::as_str), parts.get(1)) {
            (Some("list"), Some(e)) => Ok(Type::list(type_from_json(e)?)),
            (Some("set"), Some(e)) => Ok(Type::set(type_from_json(e)?)),
            (Some("map"), Some(e)) => Ok(Type::map(type_from_json(e)?)),
            (Some("tuple"), Some(Json::Array(es))) => Ok(Type::Tuple(
                es.iter().map(type_from_json).collect::<Result<_, _>>()?,
            )),
            (Some("object"), Some(Json::Object(attrs))) => {
                let attrs = attrs
                    .iter()
                    .map(|(k, t)| Ok((k.clone(), type_from_json(t)?)))
                    .collect::<Result<BTreeMap<_, _>, String>>()?;
                let optional = match parts.get(2) {
                    Some(Json::Array(o)) => o
                        .iter()
                        .filter_map(|n| n.as_str().map(str::to_string))
                        .collect(),
                    _ => Default::default(),
                };
                Ok(Type::Object(std::sync::Arc::new(ObjectType {
                    attrs,
                    optional,
                })))
            }
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

fn number_json(n: &Number) -> Result<Json, String> {
    if n.is_inf() {
        return Err("cannot store infinity as JSON".into());
    }
    serde_json::from_str(&n.to_text()).map_err(|e| e.to_string())
}

/// `v` as JSON for a slot of type `ty`. Marks are dropped (state records
/// sensitive paths separately); unknown values are an error, since only
/// known values are ever stored.
pub fn value_to_json(v: &Value, ty: &Type) -> Result<Json, String> {
    serde_json::to_value(Slot { v, ty: Some(ty) }).map_err(|e| e.to_string())
}

/// [`value_to_json`] written straight to compact JSON text, with no tree
/// in between: how an applied object's attributes reach the state.
pub fn value_to_json_text(v: &Value, ty: &Type) -> Result<Box<RawValue>, String> {
    serde_json::value::to_raw_value(&Slot { v, ty: Some(ty) }).map_err(|e| e.to_string())
}

/// A value as JSON for a slot of type `ty`, or, where `ty` is `None`, of
/// the value's own type (how a value of type `any` is written inside its
/// `{"value", "type"}` pair: building the type of a deep value would cost
/// as much as copying it). One serializer serves both the JSON tree and
/// the text, so the two cannot drift apart.
struct Slot<'a> {
    v: &'a Value,
    ty: Option<&'a Type>,
}

impl Serialize for Slot<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.v.unmarked();
        let own = |x| Slot { v: x, ty: None };
        match (v, self.ty) {
            (Value::Null(_), _) => s.serialize_unit(),
            (_, Some(Type::Dynamic)) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("value", &own(v))?;
                m.serialize_entry("type", &OwnType(v))?;
                m.end()
            }
            (Value::List(e, vs) | Value::Set(e, vs), ty) => {
                let e = match ty {
                    Some(t) => t.element().unwrap_or(&Type::Dynamic),
                    None => e,
                };
                s.collect_seq(vs.iter().map(|x| Slot { v: x, ty: Some(e) }))
            }
            (Value::Map(e, m), ty) => {
                let e = match ty {
                    Some(t) => t.element().unwrap_or(&Type::Dynamic),
                    None => e,
                };
                s.collect_map(m.iter().map(|(k, x)| (k, Slot { v: x, ty: Some(e) })))
            }
            (Value::Tuple(vs), Some(Type::Tuple(ts))) => s.collect_seq(
                vs.iter()
                    .zip(ts.iter())
                    .map(|(x, t)| Slot { v: x, ty: Some(t) }),
            ),
            (Value::Tuple(vs), _) => s.collect_seq(vs.iter().map(own)),
            (Value::Object(m), ty) => {
                let attrs = match ty {
                    Some(Type::Object(o)) => Some(&o.attrs),
                    _ => None,
                };
                s.collect_map(m.iter().map(|(k, x)| {
                    let ty = attrs.and_then(|a| a.get(k));
                    (k, Slot { v: x, ty })
                }))
            }
            (Value::Bool(b), _) => s.serialize_bool(*b),
            (Value::Number(n), _) => number_json(n).map_err(S::Error::custom)?.serialize(s),
            (Value::String(text), _) => s.serialize_str(text),
            (Value::Unknown(_) | Value::Sensitive(_), _) => {
                Err(S::Error::custom("value is not known"))
            }
        }
    }
}

/// `v` as plain JSON, unknown values as `null` and marks dropped: the
/// `before`/`after` of Terraform's plan JSON, read with the masks below.
pub fn plain_json(v: &Value) -> Json {
    match v {
        Value::Sensitive(inner) => plain_json(inner),
        Value::Unknown(_) | Value::Null(_) => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => number_json(n).unwrap_or(Json::Null),
        Value::String(s) => Json::String(s.clone()),
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            Json::Array(vs.iter().map(plain_json).collect())
        }
        Value::Map(_, m) | Value::Object(m) => {
            Json::Object(m.iter().map(|(k, x)| (k.clone(), plain_json(x))).collect())
        }
    }
}

/// Where `hit` holds inside `v`: `true` at such a value; around them,
/// collections keep their shape (an array entry per element, an object
/// entry per attribute that is not plainly `false`); `false` elsewhere.
/// This is the shape of Terraform's `after_unknown` and `after_sensitive`.
pub fn mask(v: &Value, hit: &dyn Fn(&Value) -> bool) -> Json {
    if hit(v) {
        return Json::Bool(true);
    }
    match v.unmarked() {
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            Json::Array(vs.iter().map(|x| mask(x, hit)).collect())
        }
        Value::Map(_, m) | Value::Object(m) => Json::Object(
            m.iter()
                .filter_map(|(k, x)| {
                    let inner = mask(x, hit);
                    (inner != Json::Bool(false)).then(|| (k.clone(), inner))
                })
                .collect(),
        ),
        _ => Json::Bool(false),
    }
}

/// `v` as plain JSON with unknown attributes left out of objects (and
/// unknown elements `null`): the `after` and `values` of plan JSON.
pub fn known_json(v: &Value) -> Json {
    match v.unmarked() {
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            Json::Array(vs.iter().map(known_json).collect())
        }
        Value::Map(_, m) | Value::Object(m) => Json::Object(
            m.iter()
                .filter(|(_, x)| x.is_known())
                .map(|(k, x)| (k.clone(), known_json(x)))
                .collect(),
        ),
        other => plain_json(other),
    }
}

/// Puts back what [`mask`] recorded: `make` turns each masked value into
/// the unknown or marked value it was.
pub fn unmask(v: Value, m: &Json, make: &dyn Fn(Value) -> Value) -> Value {
    match m {
        Json::Bool(true) => make(v),
        Json::Array(ms) => match v {
            Value::List(t, vs) => Value::List(t, zip_mask(vs, ms, make)),
            Value::Set(t, vs) => Value::Set(t, zip_mask(vs, ms, make)),
            Value::Tuple(vs) => Value::Tuple(zip_mask(vs, ms, make)),
            v => v,
        },
        Json::Object(ms) => {
            let each = |m: Attrs| -> Attrs {
                m.into_iter()
                    .map(|(k, x)| match ms.get(&k) {
                        Some(sub) => {
                            let x = unmask(x, sub, make);
                            (k, x)
                        }
                        None => (k, x),
                    })
                    .collect()
            };
            match v {
                Value::Object(m) => Value::Object(each(m)),
                Value::Map(t, m) => Value::Map(t, each(m)),
                v => v,
            }
        }
        _ => v,
    }
}

fn zip_mask(vs: Vec<Value>, ms: &[Json], make: &dyn Fn(Value) -> Value) -> Vec<Value> {
    vs.into_iter()
        .enumerate()
        .map(|(i, x)| match ms.get(i) {
            Some(m) => unmask(x, m, make),
            None => x,
        })
        .collect()
}

/// The paths of sensitive values inside `v`, as Terraform's state records
/// them in `sensitive_attributes`:
/// `[{"type": "get_attr", "value": "input"}, {"type": "index", …}]`.
pub fn mark_paths(v: &Value) -> Vec<Json> {
    /// A step on the way down, spelled as JSON only when a mark is found
    /// at its end (most values hold none).
    enum Step<'v> {
        Attr(&'v str),
        Key(&'v str),
        Index(usize),
    }
    fn spelled(path: &[Step<'_>]) -> Json {
        let steps = path.iter().map(|s| match s {
            Step::Attr(k) => json!({"type": "get_attr", "value": k}),
            Step::Key(k) => json!({"type": "index", "value": {"value": k, "type": "string"}}),
            Step::Index(i) => json!({"type": "index", "value": {"value": i, "type": "number"}}),
        });
        Json::Array(steps.collect())
    }
    fn walk<'v>(v: &'v Value, path: &mut Vec<Step<'v>>, out: &mut Vec<Json>) {
        if v.is_sensitive() {
            out.push(spelled(path));
            return;
        }
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    path.push(Step::Attr(k));
                    walk(x, path, out);
                    path.pop();
                }
            }
            Value::Map(_, m) => {
                for (k, x) in m {
                    path.push(Step::Key(k));
                    walk(x, path, out);
                    path.pop();
                }
            }
            Value::List(_, vs) | Value::Tuple(vs) => {
                for (i, x) in vs.iter().enumerate() {
                    path.push(Step::Index(i));
                    walk(x, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

/// Marks the values at `paths` (as [`mark_paths`] writes them) sensitive;
/// paths that lead nowhere are skipped.
pub fn apply_mark_paths(v: Value, paths: &[Json]) -> Value {
    paths.iter().fold(v, |v, p| match p.as_array() {
        Some(steps) => mark_at(v, steps),
        None => v,
    })
}

fn mark_at(v: Value, steps: &[Json]) -> Value {
    let Some((step, rest)) = steps.split_first() else {
        return v.mark();
    };
    let (v, marked) = v.unmark();
    let key = step.get("value");
    let out = match (step.get("type").and_then(Json::as_str), v) {
        (Some("get_attr"), Value::Object(mut m)) => {
            if let Some(k) = key.and_then(Json::as_str) {
                if let Some(x) = m.remove(k) {
                    m.insert(k.to_string(), mark_at(x, rest));
                }
            }
            Value::Object(m)
        }
        (Some("index"), Value::Map(t, mut m)) => {
            if let Some(k) = key.and_then(|k| k.get("value")).and_then(Json::as_str) {
                if let Some(x) = m.remove(k) {
                    m.insert(k.to_string(), mark_at(x, rest));
                }
            }
            Value::Map(t, m)
        }
        (Some("index"), Value::List(t, mut vs)) => {
            mark_index(&mut vs, key, rest);
            Value::List(t, vs)
        }
        (Some("index"), Value::Tuple(mut vs)) => {
            mark_index(&mut vs, key, rest);
            Value::Tuple(vs)
        }
        (_, v) => v,
    };
    out.mark_if(marked)
}

fn mark_index(vs: &mut [Value], key: Option<&Json>, rest: &[Json]) {
    let i = key
        .and_then(|k| k.get("value"))
        .and_then(Json::as_u64)
        .map(|i| i as usize);
    if let Some(x) = i.and_then(|i| vs.get_mut(i)) {
        let taken = std::mem::replace(x, Value::null());
        *x = mark_at(taken, rest);
    }
}

/// JSON written by [`value_to_json`] for type `ty`, read back.
pub fn value_from_json(j: &Json, ty: &Type) -> Result<Value, String> {
    if j.is_null() {
        return Ok(Value::Null(ty.clone()));
    }
    let mismatch = || format!("expected {}, found {j}", ty.friendly_name());
    Ok(match ty {
        Type::Dynamic => {
            let (Some(v), Some(t)) = (j.get("value"), j.get("type")) else {
                return Err(format!("expected {{\"value\", \"type\"}}, found {j}"));
            };
            value_from_json(v, &type_from_json(t)?)?
        }
        Type::Bool => Value::Bool(j.as_bool().ok_or_else(mismatch)?),
        Type::Number => match j {
            Json::Number(n) => {
                Value::Number(Number::parse(&n.to_string()).map_err(|_| mismatch())?)
            }
            Json::String(s) => Value::Number(Number::parse(s).map_err(|_| mismatch())?),
            _ => return Err(mismatch()),
        },
        Type::String => match j {
            Json::String(s) => Value::String(s.clone()),
            Json::Number(n) => Value::String(n.to_string()),
            Json::Bool(b) => Value::String(b.to_string()),
            _ => return Err(mismatch()),
        },
        Type::List(e) | Type::Set(e) => {
            let vs = j
                .as_array()
                .ok_or_else(mismatch)?
                .iter()
                .map(|x| value_from_json(x, e))
                .collect::<Result<Vec<_>, _>>()?;
            if matches!(ty, Type::Set(_)) {
                Value::new_set((**e).clone(), vs)
            } else {
                Value::List((**e).clone(), vs)
            }
        }
        Type::Tuple(ts) => {
            let vs = j.as_array().ok_or_else(mismatch)?;
            if vs.len() != ts.len() {
                return Err(mismatch());
            }
            Value::Tuple(
                vs.iter()
                    .zip(ts)
                    .map(|(x, t)| value_from_json(x, t))
                    .collect::<Result<_, _>>()?,
            )
        }
        Type::Map(e) => Value::Map(
            (**e).clone(),
            j.as_object()
                .ok_or_else(mismatch)?
                .iter()
                .map(|(k, x)| Ok((k.clone(), value_from_json(x, e)?)))
                .collect::<Result<_, String>>()?,
        ),
        Type::Object(o) => {
            let m = j.as_object().ok_or_else(mismatch)?;
            Value::Object(
                o.attrs
                    .iter()
                    .map(|(k, t)| {
                        let v = match m.get(k) {
                            Some(x) => value_from_json(x, t)?,
                            None => Value::Null(t.clone()),
                        };
                        Ok((k.clone(), v))
                    })
                    .collect::<Result<_, String>>()?,
            )
        }
    })
}

/// A JSON document as a value whose type follows from it (objects,
/// tuples, strings, numbers, bools), the way `jsondecode` reads one; how a
/// driver hands back what an API holds in an attribute of type `any`.
pub fn infer(j: &Json) -> Result<Value, String> {
    Ok(match j {
        Json::Null => Value::null(),
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => {
            Value::Number(Number::parse(&n.to_string()).map_err(|_| format!("invalid number {n}"))?)
        }
        Json::String(s) => Value::String(s.clone()),
        Json::Array(vs) => Value::Tuple(vs.iter().map(infer).collect::<Result<_, _>>()?),
        Json::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| Ok((k.clone(), infer(v)?)))
                .collect::<Result<Attrs, String>>()?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_values_carry_their_type() {
        let v = Value::Object(Attrs::from([
            ("a".to_string(), Value::int(1)),
            (
                "b".to_string(),
                Value::List(Type::String, vec![Value::string("x")]),
            ),
        ]));
        let j = value_to_json(&v, &Type::Dynamic).unwrap();
        assert_eq!(
            j,
            json!({"value": {"a": 1, "b": ["x"]}, "type": ["object", {"a": "number", "b": ["list", "string"]}]})
        );
        let back = value_from_json(&j, &Type::Dynamic).unwrap();
        assert!(back.raw_equal(&v), "{back:?}");
    }

    #[test]
    fn a_value_in_its_own_type_is_written_as_its_built_type_says() {
        let attrs = |pairs: Vec<(&str, Value)>| {
            Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
        };
        let inner = attrs(vec![
            ("n", Value::int(2)),
            ("none", Value::Null(Type::list(Type::Bool))),
            ("secret", Value::Sensitive(Box::new(Value::string("s")))),
        ]);
        let v = attrs(vec![
            ("deep", attrs(vec![("parent", inner.clone())])),
            ("anys", Value::List(Type::Dynamic, vec![Value::Bool(true)])),
            ("pair", Value::Tuple(vec![inner, Value::string("x")])),
            (
                "tags",
                Value::Map(
                    Type::String,
                    Attrs::from([("a".to_string(), Value::string("b"))]),
                ),
            ),
        ]);
        let ty = v.ty();
        let own = serde_json::to_value(Slot { v: &v, ty: None }).unwrap();
        assert_eq!(own, value_to_json(&v, &ty).unwrap());
        assert_eq!(
            serde_json::to_value(OwnType(&v)).unwrap(),
            type_to_json(&ty)
        );
        // Not known: refused, where building the type of `Unknown(any)` and
        // writing the value in it again never ended.
        let unknown = attrs(vec![("later", Value::Unknown(Type::Dynamic))]);
        assert!(value_to_json(&unknown, &Type::Dynamic).is_err());
        assert!(value_to_json(&Value::Unknown(Type::Dynamic), &Type::Dynamic).is_err());
    }

    #[test]
    fn types_are_written_as_cty_writes_them() {
        let mut o = ObjectType {
            attrs: BTreeMap::from([
                ("a".to_string(), Type::list(Type::Number)),
                (
                    "b".to_string(),
                    Type::Tuple(vec![Type::Bool, Type::Dynamic]),
                ),
            ]),
            optional: Default::default(),
        };
        let plain = Type::map(Type::Object(std::sync::Arc::new(o.clone())));
        assert_eq!(
            type_to_json(&plain),
            json!(["map", ["object", {"a": ["list", "number"], "b": ["tuple", ["bool", "dynamic"]]}]])
        );
        o.optional.insert("b".to_string());
        let with_optional = Type::set(Type::Object(std::sync::Arc::new(o)));
        let j = type_to_json(&with_optional);
        assert_eq!(
            j,
            json!(["set", ["object", {"a": ["list", "number"], "b": ["tuple", ["bool", "dynamic"]]}, ["b"]]])
        );
        assert_eq!(type_from_json(&j).unwrap(), with_optional);
    }

    #[test]
    fn the_text_is_the_tree_written_compact() {
        let any_slot = Type::object(BTreeMap::from([
            ("free".to_string(), Type::Dynamic),
            ("ids".to_string(), Type::set(Type::String)),
            ("n".to_string(), Type::Number),
            (
                "pair".to_string(),
                Type::Tuple(vec![Type::Bool, Type::String]),
            ),
        ]));
        let v = Value::Object(Attrs::from([
            (
                "free".to_string(),
                Value::Map(
                    Type::Number,
                    Attrs::from([("k".to_string(), Value::int(-3))]),
                ),
            ),
            (
                "ids".to_string(),
                Value::Set(
                    Type::String,
                    vec![Value::string("a\"b\u{e9}"), Value::string("c")],
                ),
            ),
            (
                "n".to_string(),
                Value::Number(Number::parse("12345678901234567890.25").unwrap()).mark(),
            ),
            (
                "pair".to_string(),
                Value::Tuple(vec![Value::Bool(false), Value::Null(Type::String)]),
            ),
        ]));
        let text = value_to_json_text(&v, &any_slot).unwrap();
        assert_eq!(
            text.get(),
            value_to_json(&v, &any_slot).unwrap().to_string()
        );
        assert_eq!(
            text.get(),
            r#"{"free":{"value":{"k":-3},"type":["map","number"]},"ids":["a\"bé","c"],"n":12345678901234567890.25,"pair":[false,null]}"#
        );
        let unknown = Value::Object(Attrs::from([(
            "n".to_string(),
            Value::Unknown(Type::Number),
        )]));
        assert_eq!(
            value_to_json_text(&unknown, &any_slot).unwrap_err(),
            "value is not known"
        );
    }

    #[test]
    fn big_numbers_keep_every_digit() {
        let n = Value::Number(Number::parse("123456789012345678901234567890.5").unwrap());
        let j = value_to_json(&n, &Type::Number).unwrap();
        assert_eq!(j.to_string(), "123456789012345678901234567890.5");
        assert!(value_from_json(&j, &Type::Number).unwrap().raw_equal(&n));
    }

    #[test]
    fn masks_round_trip_unknown_and_sensitive_values() {
        let v = Value::Object(Attrs::from([
            ("a".to_string(), Value::Unknown(Type::String)),
            (
                "b".to_string(),
                Value::Tuple(vec![Value::int(1), Value::string("s").mark()]),
            ),
            ("c".to_string(), Value::Null(Type::Dynamic)),
        ]));
        let ty = v.ty();
        let unknown = mask(&v, &|x| !x.is_known());
        let sensitive = mask(&v, &Value::is_sensitive);
        assert_eq!(unknown, json!({"a": true, "b": [false, false]}));
        assert_eq!(sensitive, json!({"b": [false, true]}));
        assert_eq!(known_json(&v), json!({"b": [1, "s"], "c": null}));
        let plain = plain_json(&v);
        assert_eq!(plain, json!({"a": null, "b": [1, "s"], "c": null}));
        let back = value_from_json(&plain, &type_from_json(&type_to_json(&ty)).unwrap()).unwrap();
        let back = unmask(back, &unknown, &|x| Value::Unknown(x.ty()));
        let back = unmask(back, &sensitive, &Value::mark);
        assert!(back.raw_equal(&v), "{back:?}");
    }

    #[test]
    fn sensitive_paths_round_trip() {
        let v = Value::Object(Attrs::from([
            (
                "input".to_string(),
                Value::Object(Attrs::from([
                    ("pw".to_string(), Value::string("hunter2").mark()),
                    ("user".to_string(), Value::string("me")),
                ])),
            ),
            (
                "list".to_string(),
                Value::Tuple(vec![Value::int(1), Value::int(2).mark()]),
            ),
        ]));
        let paths = mark_paths(&v);
        assert_eq!(
            serde_json::to_string(&paths).unwrap(),
            r#"[[{"type":"get_attr","value":"input"},{"type":"get_attr","value":"pw"}],[{"type":"get_attr","value":"list"},{"type":"index","value":{"value":1,"type":"number"}}]]"#
        );
        let plain = v.clone().unmark_deep().0;
        assert!(apply_mark_paths(plain, &paths).raw_equal(&v));
    }

    #[test]
    fn unknown_values_are_not_stored() {
        assert!(value_to_json(&Value::unknown(), &Type::String).is_err());
    }

    #[test]
    fn wrong_shapes_are_errors() {
        assert!(value_from_json(&json!([1]), &Type::Bool).is_err());
        assert!(value_from_json(&json!({"value": 1}), &Type::Dynamic).is_err());
        assert!(type_from_json(&json!(["list"])).is_err());
    }
}
