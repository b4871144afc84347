//! cty's JSON encodings, which state files and plan JSON use: a type as
//! JSON (`"string"`, `["list","string"]`, `["object",{...}]`), and a value
//! of a known type as plain JSON, where an attribute of type `any` carries
//! its own type as `{"value": …, "type": …}`.

use crate::number::Number;
use crate::types::{ObjectType, Type};
use crate::value::{Attrs, Value};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;

pub fn type_to_json(t: &Type) -> Json {
    // Built by moving, not with `json!`, which copies every interpolated
    // value (quadratic in the nesting of object types).
    match t {
        Type::Dynamic => Json::from("dynamic"),
        Type::Bool => Json::from("bool"),
        Type::Number => Json::from("number"),
        Type::String => Json::from("string"),
        Type::List(e) => kind_of("list", type_to_json(e)),
        Type::Set(e) => kind_of("set", type_to_json(e)),
        Type::Map(e) => kind_of("map", type_to_json(e)),
        Type::Tuple(ts) => kind_of("tuple", Json::Array(ts.iter().map(type_to_json).collect())),
        Type::Object(o) => {
            let attrs: Map<String, Json> = o
                .attrs
                .iter()
                .map(|(k, t)| (k.clone(), type_to_json(t)))
                .collect();
            let mut parts = vec![Json::from("object"), Json::Object(attrs)];
            if !o.optional.is_empty() {
                parts.push(o.optional.iter().map(|k| Json::from(k.as_str())).collect());
            }
            Json::Array(parts)
        }
    }
}

/// A type of kind `kind` (`list`, `object`, ...) as cty writes it.
fn kind_of(kind: &str, inner: Json) -> Json {
    Json::Array(vec![Json::from(kind), inner])
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
    if let Value::Sensitive(inner) = v {
        return value_to_json(inner, ty);
    }
    if let Value::Null(_) = v {
        return Ok(Json::Null);
    }
    if *ty == Type::Dynamic {
        let mut typed = Map::new();
        typed.insert("value".into(), own_typed_json(v)?);
        typed.insert("type".into(), own_type_json(v));
        return Ok(Json::Object(typed));
    }
    match v {
        Value::List(_, vs) | Value::Set(_, vs) => elements_json(vs, ty.element()),
        Value::Map(_, m) => entries_json(m, ty.element()),
        Value::Tuple(vs) => match ty {
            Type::Tuple(ts) => Ok(Json::Array(
                vs.iter()
                    .zip(ts.iter())
                    .map(|(x, t)| value_to_json(x, t))
                    .collect::<Result<_, _>>()?,
            )),
            _ => own_typed_json(v),
        },
        Value::Object(m) => {
            let attrs = match ty {
                Type::Object(o) => Some(&o.attrs),
                _ => None,
            };
            Ok(Json::Object(
                m.iter()
                    .map(|(k, x)| {
                        let json = match attrs.and_then(|a| a.get(k)) {
                            Some(t) => value_to_json(x, t)?,
                            None => own_typed_json(x)?,
                        };
                        Ok((k.clone(), json))
                    })
                    .collect::<Result<_, String>>()?,
            ))
        }
        _ => scalar_json(v),
    }
}

/// `value_to_json(v, &v.ty())`, without building `v`'s type: a value of
/// type `any` is written in its own type, and building the type of a deep
/// value costs as much as copying the value.
fn own_typed_json(v: &Value) -> Result<Json, String> {
    match v {
        Value::Sensitive(inner) => own_typed_json(inner),
        Value::List(e, vs) | Value::Set(e, vs) => elements_json(vs, Some(e)),
        Value::Map(e, m) => entries_json(m, Some(e)),
        Value::Tuple(vs) => Ok(Json::Array(
            vs.iter().map(own_typed_json).collect::<Result<_, _>>()?,
        )),
        Value::Object(m) => Ok(Json::Object(
            m.iter()
                .map(|(k, x)| Ok((k.clone(), own_typed_json(x)?)))
                .collect::<Result<_, String>>()?,
        )),
        _ => scalar_json(v),
    }
}

/// `type_to_json(&v.ty())`, without building the type.
fn own_type_json(v: &Value) -> Json {
    match v {
        Value::Null(t) | Value::Unknown(t) => type_to_json(t),
        Value::Sensitive(inner) => own_type_json(inner),
        Value::Bool(_) => Json::from("bool"),
        Value::Number(_) => Json::from("number"),
        Value::String(_) => Json::from("string"),
        Value::List(e, _) => kind_of("list", type_to_json(e)),
        Value::Set(e, _) => kind_of("set", type_to_json(e)),
        Value::Map(e, _) => kind_of("map", type_to_json(e)),
        Value::Tuple(vs) => kind_of("tuple", vs.iter().map(own_type_json).collect()),
        Value::Object(m) => kind_of(
            "object",
            Json::Object(
                m.iter()
                    .map(|(k, x)| (k.clone(), own_type_json(x)))
                    .collect(),
            ),
        ),
    }
}

fn elements_json(vs: &[Value], element: Option<&Type>) -> Result<Json, String> {
    let e = element.unwrap_or(&Type::Dynamic);
    Ok(Json::Array(
        vs.iter()
            .map(|x| value_to_json(x, e))
            .collect::<Result<_, _>>()?,
    ))
}

fn entries_json(m: &Attrs, element: Option<&Type>) -> Result<Json, String> {
    let e = element.unwrap_or(&Type::Dynamic);
    Ok(Json::Object(
        m.iter()
            .map(|(k, x)| Ok((k.clone(), value_to_json(x, e)?)))
            .collect::<Result<_, String>>()?,
    ))
}

/// A value that is neither a collection nor a structure, as JSON.
fn scalar_json(v: &Value) -> Result<Json, String> {
    Ok(match v {
        Value::Null(_) => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => number_json(n)?,
        Value::String(s) => Json::String(s.clone()),
        _ => return Err("value is not known".into()),
    })
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
        assert_eq!(own_typed_json(&v).unwrap(), value_to_json(&v, &ty).unwrap());
        assert_eq!(own_type_json(&v), type_to_json(&ty));
        // Not known: refused, where building the type of `Unknown(any)` and
        // writing the value in it again never ended.
        let unknown = attrs(vec![("later", Value::Unknown(Type::Dynamic))]);
        assert!(value_to_json(&unknown, &Type::Dynamic).is_err());
        assert!(value_to_json(&Value::Unknown(Type::Dynamic), &Type::Dynamic).is_err());
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
