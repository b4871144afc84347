//! Type conversion and unification with cty's rules: what `tolist`, variable
//! type constraints, function parameters and conditionals all rely on.

use super::number::Number;
use super::types::Type;
use super::value::{Attrs, Value};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// A conversion failure, worded as Terraform words it ("string required").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertError {
    pub message: String,
}

impl ConvertError {
    fn new(message: impl Into<String>) -> ConvertError {
        ConvertError {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ConvertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn required(want: &Type) -> ConvertError {
    ConvertError::new(format!("{} required", want.friendly_name()))
}

/// Converts `v` to type `want`, keeping marks and unknowns.
pub fn convert(v: &Value, want: &Type) -> Result<Value, ConvertError> {
    if let Value::Sensitive(inner) = v {
        return convert(inner, want).map(Value::mark);
    }
    if *want == Type::Dynamic {
        return Ok(v.clone());
    }
    match v {
        Value::Null(_) => return Ok(Value::Null(strip_optional(want))),
        Value::Unknown(t) => {
            return if can_convert(t, want, true) {
                Ok(Value::Unknown(strip_optional(want)))
            } else {
                Err(required(want))
            };
        }
        _ => {}
    }
    match want {
        Type::Dynamic => Ok(v.clone()),
        Type::String => match v {
            Value::String(_) => Ok(v.clone()),
            Value::Number(n) => Ok(Value::String(n.to_text())),
            Value::Bool(b) => Ok(Value::String(b.to_string())),
            _ => Err(required(want)),
        },
        Type::Number => match v {
            Value::Number(_) => Ok(v.clone()),
            Value::String(s) => Number::parse(s)
                .map(Value::Number)
                .map_err(|_| ConvertError::new("a number is required")),
            _ => Err(required(want)),
        },
        Type::Bool => match v {
            Value::Bool(_) => Ok(v.clone()),
            Value::String(s) => match s.as_str() {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                // Terraform accepts the legacy spellings "1" and "0" too.
                "1" => Ok(Value::Bool(true)),
                "0" => Ok(Value::Bool(false)),
                _ => Err(ConvertError::new("a bool is required")),
            },
            _ => Err(required(want)),
        },
        Type::List(et) | Type::Set(et) => {
            let elems = match v {
                Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => vs,
                _ => return Err(required(want)),
            };
            let converted = convert_elements(elems.iter(), et, |i| format!("element {i}"))?;
            let (elem_ty, vals) = unify_values(converted, et, v)?;
            Ok(if matches!(want, Type::List(_)) {
                Value::List(elem_ty, vals)
            } else {
                Value::new_set(elem_ty, vals)
            })
        }
        Type::Map(et) => {
            let entries = match v {
                Value::Map(_, m) | Value::Object(m) => m,
                _ => return Err(required(want)),
            };
            let keys: Vec<&String> = entries.keys().collect();
            let converted =
                convert_elements(entries.values(), et, |i| format!("element {:?}", keys[i]))?;
            let (elem_ty, vals) = unify_values(converted, et, v)?;
            Ok(Value::Map(
                elem_ty,
                keys.into_iter().cloned().zip(vals).collect(),
            ))
        }
        Type::Tuple(ts) => {
            let elems = match v {
                Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => vs,
                _ => return Err(required(want)),
            };
            if elems.len() != ts.len() {
                return Err(ConvertError::new(format!(
                    "tuple required with exactly {} elements",
                    ts.len()
                )));
            }
            let vals = elems
                .iter()
                .zip(ts)
                .enumerate()
                .map(|(i, (e, t))| {
                    convert(e, t).map_err(|e| ConvertError::new(format!("element {i}: {e}")))
                })
                .collect::<Result<_, _>>()?;
            Ok(Value::Tuple(vals))
        }
        Type::Object(ot) => {
            let entries = match v {
                Value::Map(_, m) | Value::Object(m) => m,
                _ => return Err(ConvertError::new("object required")),
            };
            let mut out = Attrs::with_capacity(ot.attrs.len());
            for (name, aty) in &ot.attrs {
                match entries.get(name) {
                    Some(av) => {
                        let c = convert(av, aty)
                            .map_err(|e| ConvertError::new(format!("attribute {name:?}: {e}")))?;
                        out.insert(name.clone(), c);
                    }
                    None if ot.optional.contains(name) => {
                        out.insert(name.clone(), Value::Null(strip_optional(aty)));
                    }
                    None => {
                        return Err(ConvertError::new(format!("attribute {name:?} is required")))
                    }
                }
            }
            Ok(Value::Object(out))
        }
    }
}

fn convert_elements<'a>(
    elems: impl Iterator<Item = &'a Value>,
    et: &Type,
    name: impl Fn(usize) -> String,
) -> Result<Vec<Value>, ConvertError> {
    elems
        .enumerate()
        .map(|(i, e)| {
            convert(e, et).map_err(|err| ConvertError::new(format!("{}: {err}", name(i))))
        })
        .collect()
}

/// After converting the elements of a collection to an element type that
/// contains `any`, every element must still share one type: unify them.
fn unify_values(
    vals: Vec<Value>,
    et: &Type,
    source: &Value,
) -> Result<(Type, Vec<Value>), ConvertError> {
    if !et.has_dynamic() {
        return Ok((strip_optional(et), vals));
    }
    let tys: Vec<Type> = vals.iter().map(Value::ty).collect();
    if tys.is_empty() {
        // An empty collection keeps its own element type where any will
        // do, as cty converts it: `distinct` of an empty list(string) is
        // a list(string), equal to the list it came from.
        let own = match (et, source.unmarked()) {
            (Type::Dynamic, Value::List(t, _) | Value::Set(t, _) | Value::Map(t, _)) => t.clone(),
            _ => strip_optional(et),
        };
        return Ok((own, vals));
    }
    let Some(unified) = unify(&tys) else {
        let kind = match source.ty() {
            Type::Object(_) | Type::Map(_) => "map",
            _ => "list",
        };
        let src = match source.ty() {
            Type::Object(_) => "object",
            Type::Tuple(_) => "tuple",
            _ => "collection",
        };
        return Err(ConvertError::new(if kind == "map" {
            format!("cannot convert {src} to map of any single type")
        } else {
            "all list elements must have the same type".to_string()
        }));
    };
    let vals = vals
        .iter()
        .map(|v| convert(v, &unified))
        .collect::<Result<_, _>>()?;
    Ok((unified, vals))
}

/// Value types never carry optional-attribute markers.
pub fn strip_optional(t: &Type) -> Type {
    match t {
        Type::Object(o) => Type::object(
            o.attrs
                .iter()
                .map(|(k, t)| (k.clone(), strip_optional(t)))
                .collect(),
        ),
        Type::List(e) => Type::list(strip_optional(e)),
        Type::Set(e) => Type::set(strip_optional(e)),
        Type::Map(e) => Type::map(strip_optional(e)),
        Type::Tuple(ts) => Type::Tuple(ts.iter().map(strip_optional).collect()),
        t => t.clone(),
    }
}

/// Whether a value of type `from` may convert to `want`; `unsafe_ok` also
/// admits conversions that fail for some values (string to number).
pub fn can_convert(from: &Type, want: &Type, unsafe_ok: bool) -> bool {
    if from == want || *want == Type::Dynamic || *from == Type::Dynamic {
        return true;
    }
    match (from, want) {
        (Type::Number | Type::Bool, Type::String) => true,
        (Type::String, Type::Number | Type::Bool) => unsafe_ok,
        (Type::List(e) | Type::Set(e), Type::List(t) | Type::Set(t)) => {
            can_convert(e, t, unsafe_ok)
        }
        (Type::Tuple(es), Type::List(t) | Type::Set(t)) => {
            es.iter().all(|e| can_convert(e, t, unsafe_ok))
        }
        (Type::Map(e), Type::Map(t)) => can_convert(e, t, unsafe_ok),
        (Type::Object(o), Type::Map(t)) => o.attrs.values().all(|e| can_convert(e, t, unsafe_ok)),
        (Type::Tuple(es), Type::Tuple(ts)) => {
            es.len() == ts.len() && es.iter().zip(ts).all(|(e, t)| can_convert(e, t, unsafe_ok))
        }
        (Type::List(e) | Type::Set(e), Type::Tuple(ts)) => {
            unsafe_ok && ts.iter().all(|t| can_convert(e, t, unsafe_ok))
        }
        (Type::Object(a), Type::Object(b)) => b.attrs.iter().all(|(k, t)| match a.attrs.get(k) {
            Some(s) => can_convert(s, t, unsafe_ok),
            None => b.optional.contains(k),
        }),
        (Type::Map(e), Type::Object(b)) => {
            unsafe_ok && b.attrs.values().all(|t| can_convert(e, t, unsafe_ok))
        }
        _ => false,
    }
}

/// cty's type unification: the one type all of `types` convert to, if any.
pub fn unify(types: &[Type]) -> Option<Type> {
    if types.is_empty() {
        return Some(Type::Dynamic);
    }
    if types.iter().all(|t| *t == types[0]) {
        return Some(types[0].clone());
    }
    let count = |f: fn(&Type) -> bool| types.iter().filter(|t| f(t)).count();
    let n = types.len();
    let maps = count(|t| matches!(t, Type::Map(_)));
    let lists = count(|t| matches!(t, Type::List(_)));
    let sets = count(|t| matches!(t, Type::Set(_)));
    let objects = count(|t| matches!(t, Type::Object(_)));
    let tuples = count(|t| matches!(t, Type::Tuple(_)));
    let dynamics = count(|t| *t == Type::Dynamic);
    if maps > 0 && maps + dynamics == n {
        return unify_collections(types, Type::map, dynamics > 0);
    }
    if maps > 0 && maps + objects + dynamics == n {
        if let Some(t @ Type::Map(_)) = unify_as_map(types) {
            return Some(t);
        }
    } else if lists > 0 && lists + dynamics == n {
        return unify_collections(types, Type::list, dynamics > 0);
    } else if sets > 0 && sets + dynamics == n {
        return unify_collections(types, Type::set, dynamics > 0);
    } else if lists > 0 && lists + tuples + dynamics == n {
        // Tuples are often lists in disguise: unify every element type.
        if let Some(t) = unify_sequences(types, Type::list) {
            return Some(t);
        }
    } else if sets > 0 && sets + tuples + dynamics == n {
        if let Some(t) = unify_sequences(types, Type::set) {
            return Some(t);
        }
    } else if objects > 0 && objects + dynamics == n {
        if dynamics > 0 {
            return Some(Type::Dynamic);
        }
        let first: Vec<&String> = match &types[0] {
            Type::Object(o) => o.attrs.keys().collect(),
            _ => unreachable!("counted as objects"),
        };
        let same_keys = types.iter().all(|t| match t {
            Type::Object(o) => o.attrs.keys().eq(first.iter().copied()),
            _ => false,
        });
        if !same_keys {
            return unify_as_map(types);
        }
        let mut attrs = BTreeMap::new();
        for k in first {
            let col: Vec<Type> = types
                .iter()
                .map(|t| match t {
                    Type::Object(o) => o.attrs[k].clone(),
                    _ => Type::Dynamic,
                })
                .collect();
            attrs.insert(k.clone(), unify(&col)?);
        }
        return Some(Type::object(attrs));
    } else if tuples > 0 && tuples + dynamics == n {
        if dynamics > 0 {
            return Some(Type::Dynamic);
        }
        let len = match &types[0] {
            Type::Tuple(ts) => ts.len(),
            _ => 0,
        };
        let same_len = types
            .iter()
            .all(|t| matches!(t, Type::Tuple(ts) if ts.len() == len));
        if !same_len {
            let all: Vec<Type> = types
                .iter()
                .flat_map(|t| match t {
                    Type::Tuple(ts) => ts.clone(),
                    _ => vec![],
                })
                .collect();
            return unify(&all).map(Type::list);
        }
        let mut out = Vec::with_capacity(len);
        for i in 0..len {
            let col: Vec<Type> = types
                .iter()
                .map(|t| match t {
                    Type::Tuple(ts) => ts[i].clone(),
                    _ => Type::Dynamic,
                })
                .collect();
            out.push(unify(&col)?);
        }
        return Some(Type::Tuple(out));
    } else if objects > 0 && tuples > 0 {
        return None;
    }

    // General case: the most general candidate every type converts to.
    for idx in preference_order(types) {
        let want = &types[idx];
        if types
            .iter()
            .all(|t| t == want || can_convert(t, want, false))
        {
            return Some(want.clone());
        }
    }
    None
}

fn unify_collections(types: &[Type], make: fn(Type) -> Type, has_dynamic: bool) -> Option<Type> {
    if has_dynamic {
        return Some(Type::Dynamic);
    }
    let elems: Vec<Type> = types.iter().filter_map(|t| t.element().cloned()).collect();
    unify(&elems).map(make)
}

fn unify_sequences(types: &[Type], make: fn(Type) -> Type) -> Option<Type> {
    let mut elems = Vec::new();
    for t in types {
        match t {
            Type::List(e) | Type::Set(e) => elems.push((**e).clone()),
            Type::Tuple(ts) => elems.extend(ts.iter().cloned()),
            _ => {}
        }
    }
    unify(&elems).map(make)
}

fn unify_as_map(types: &[Type]) -> Option<Type> {
    let mut elems = Vec::new();
    for t in types {
        match t {
            Type::Object(o) => elems.extend(o.attrs.values().cloned()),
            Type::Map(e) => elems.push((**e).clone()),
            Type::Dynamic => {}
            _ => return None,
        }
    }
    unify(&elems).map(Type::map)
}

/// Candidates ordered most general first (cty's `sortTypes`: a topological
/// sort of the "more general than" relation).
fn preference_order(types: &[Type]) -> Vec<usize> {
    let n = types.len();
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indeg = vec![0usize; n];
    for i in 0..n {
        for j in i + 1..n {
            match compare_generality(&types[i], &types[j]) {
                Ordering::Less => {
                    edges[i].push(j);
                    indeg[j] += 1;
                }
                Ordering::Greater => {
                    edges[j].push(i);
                    indeg[i] += 1;
                }
                Ordering::Equal => {}
            }
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut done = vec![false; n];
    while order.len() < n {
        let Some(next) = (0..n).find(|&i| !done[i] && indeg[i] == 0) else {
            // A cycle cannot arise from a consistent relation; fall back to input order.
            order.extend((0..n).filter(|&i| !done[i]));
            break;
        };
        done[next] = true;
        order.push(next);
        for &j in &edges[next] {
            indeg[j] -= 1;
        }
    }
    order
}

/// `Less` when `a` is more general than `b` (so is preferred as the result).
fn compare_generality(a: &Type, b: &Type) -> Ordering {
    if *a == Type::Dynamic || *b == Type::Dynamic {
        return match (*a == Type::Dynamic, *b == Type::Dynamic) {
            (false, true) => Ordering::Less,
            (true, false) => Ordering::Greater,
            _ => Ordering::Equal,
        };
    }
    if a.is_primitive() && b.is_primitive() {
        return match (*a == Type::String, *b == Type::String) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => Ordering::Equal,
        };
    }
    match (a, b) {
        (Type::List(x), Type::List(y))
        | (Type::Set(x), Type::Set(y))
        | (Type::Map(x), Type::Map(y)) => compare_generality(x, y),
        (Type::List(_), Type::Tuple(_)) | (Type::Map(_), Type::Object(_)) => Ordering::Less,
        (Type::Tuple(_), Type::List(_)) | (Type::Object(_), Type::Map(_)) => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::number::Number;
    use crate::value::Attrs;

    fn s(v: &str) -> Value {
        Value::string(v)
    }

    fn object(pairs: &[(&str, Value)]) -> Value {
        Value::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<Attrs>(),
        )
    }

    /// Each row as Terraform 1.11's `terraform console` answers it
    /// (tests/oracle/corpus.jsonl: `tobool("1")`, `tolist([1, "a"])`, …):
    /// the value converted, as `jsonencode` writes it, and its type.
    #[test]
    fn conversions_as_terraform_makes_them() {
        let number = |t: &str| Value::Number(Number::parse(t).expect("a number"));
        let rows: Vec<(Value, Type, &str)> = vec![
            (s("12"), Type::Number, "12"),
            (s("1e3"), Type::Number, "1000"),
            (number("1.5"), Type::String, r#""1.5""#),
            (Value::Bool(true), Type::String, r#""true""#),
            (s("1"), Type::Bool, "true"),
            (s("false"), Type::Bool, "false"),
            (
                Value::Tuple(vec![Value::int(1), s("a")]),
                Type::list(Type::String),
                r#"["1","a"]"#,
            ),
            (
                Value::Tuple(vec![s("b"), s("a"), s("b")]),
                Type::set(Type::String),
                r#"["a","b"]"#,
            ),
            (
                object(&[("a", Value::int(1)), ("b", s("x"))]),
                Type::map(Type::String),
                r#"{"a":"1","b":"x"}"#,
            ),
        ];
        for (v, want, json) in rows {
            let got = convert(&v, &want).unwrap_or_else(|e| panic!("{v:?} to {want:?}: {e}"));
            assert_eq!(got.ty(), want, "{v:?}");
            assert_eq!(got.to_json().as_deref(), Ok(json), "{v:?} to {want:?}");
        }
    }

    #[test]
    fn conversions_terraform_refuses() {
        let rows: Vec<(Value, Type)> = vec![
            (s("yes"), Type::Bool),
            (s("0x10"), Type::Number),
            (Value::int(1), Type::Bool),
            (Value::Tuple(vec![s("a")]), Type::Number),
        ];
        for (v, want) in rows {
            assert!(convert(&v, &want).is_err(), "{v:?} to {want:?} converted");
        }
    }

    #[test]
    fn null_and_unknown_take_the_type_asked_for() {
        let list = Type::list(Type::String);
        let null = convert(&Value::null(), &list).expect("null converts");
        assert!(null.is_null() && null.ty() == list);
        let unknown = convert(&Value::unknown(), &Type::Number).expect("unknown converts");
        assert!(!unknown.is_known() && unknown.ty() == Type::Number);
    }
}
