//! Collection functions: lists, sets, maps and the structural types.

use super::{def, def_var, int_arg, p, str_arg, FnError, FuncDef};

use crate::lang::convert::{convert, unify};
use crate::lang::number::Number;
use crate::lang::types::Type;
use crate::lang::value::{Attrs, Value};
use std::collections::BTreeMap;

fn seq(v: &Value, i: usize) -> Result<&[Value], FnError> {
    match v.unmarked() {
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => Ok(vs),
        other => Err(FnError::arg(
            i,
            format!(
                "list, set, or tuple required, not {}",
                other.ty().friendly_name()
            ),
        )),
    }
}

/// Sequences that have an order: lists and tuples (not sets).
fn list_or_tuple(v: &Value, i: usize) -> Result<&[Value], FnError> {
    match v.unmarked() {
        Value::List(_, vs) | Value::Tuple(vs) => Ok(vs),
        other => Err(FnError::arg(
            i,
            format!(
                "all arguments must be lists or tuples; got {}",
                other.ty().friendly_name()
            ),
        )),
    }
}

/// A list of bools as plain booleans, null counting as false.
fn bools(v: &Value) -> impl Iterator<Item = bool> + '_ {
    v.elements()
        .unwrap_or(&[])
        .iter()
        .map(|x| x.as_bool() == Some(true))
}

fn elem_type(v: &Value) -> Option<Type> {
    v.ty().element().cloned()
}

/// Rebuilds a sequence of the same kind as `like` from new elements.
fn same_kind(like: &Value, vals: Vec<Value>) -> Value {
    match like.unmarked() {
        Value::List(t, _) => Value::List(t.clone(), vals),
        Value::Set(t, _) => Value::new_set(t.clone(), vals),
        _ => Value::Tuple(vals),
    }
}

pub fn register(defs: &mut Vec<FuncDef>) {
    let any = || Type::Dynamic;
    defs.push(def(
        "length",
        vec![p("value", any()).unknown_ok().marks_inside()],
        Type::Number,
        |_, a| {
            let v = &a[0];
            if let Some(s) = v.as_str() {
                use unicode_segmentation::UnicodeSegmentation;
                return Ok(Value::int(s.graphemes(true).count() as i64));
            }
            // A set's unknown elements may turn out equal to others, so
            // its length is not known until they are.
            let open_set = matches!(v.ty(), Type::Set(_)) && !v.is_wholly_known();
            if !v.is_known() || open_set {
                return Ok(Value::Unknown(Type::Number));
            }
            match v.len() {
                Some(n) => Ok(Value::int(n as i64)),
                None => Err(FnError::arg(
                    0,
                    "argument must be a string, a collection type, or a structural type",
                )),
            }
        },
    ));
    // alltrue/anytrue: nulls count as false, an empty list is true/false.
    defs.push(def(
        "alltrue",
        vec![p("list", Type::list(Type::Bool))],
        Type::Bool,
        |_, a| Ok(Value::Bool(bools(&a[0]).all(|b| b))),
    ));
    // One known true decides anytrue, whatever else is unknown.
    defs.push(def(
        "anytrue",
        vec![p("list", Type::list(Type::Bool)).unknown_elements_ok()],
        Type::Bool,
        |_, a| {
            if bools(&a[0]).any(|b| b) {
                return Ok(Value::Bool(true));
            }
            Ok(if a[0].is_wholly_known() {
                Value::Bool(false)
            } else {
                Value::Unknown(Type::Bool)
            })
        },
    ));
    defs.push(def(
        "chunklist",
        vec![
            p("list", Type::list(any())).unknown_elements_ok(),
            p("size", Type::Number),
        ],
        Type::list(Type::list(any())),
        |_, a| {
            let size = int_arg(a, 1)?;
            if size < 0 {
                return Err(FnError::arg(1, "the size argument must be positive"));
            }
            let et = elem_type(&a[0]).unwrap_or(Type::Dynamic);
            let items = seq(&a[0], 0)?;
            let chunks: Vec<Value> = if size == 0 {
                vec![a[0].clone()]
            } else {
                items
                    .chunks(size as usize)
                    .map(|c| Value::List(et.clone(), c.to_vec()))
                    .collect()
            };
            Ok(Value::List(Type::list(et), chunks))
        },
    ));
    defs.push(def_var(
        "coalesce",
        vec![],
        p("vals", any()).nullable().unknown_ok(),
        any(),
        |_, a| {
            let tys: Vec<Type> = a.iter().map(Value::ty).collect();
            let t = unify(&tys)
                .ok_or_else(|| FnError::call("all arguments must have the same type"))?;
            // The first argument decides unless it is unknown: then so is
            // the result, as Terraform has it.
            for v in a {
                if !v.is_known() {
                    return Ok(Value::Unknown(t));
                }
                if v.is_null() {
                    continue;
                }
                let v = convert(v, &t).map_err(|e| FnError::call(e.message))?;
                if v.as_str() == Some("") {
                    continue;
                }
                return Ok(v);
            }
            Err(FnError::call("no non-null, non-empty-string arguments"))
        },
    ));
    defs.push(def_var(
        "coalescelist",
        vec![],
        p("vals", any()).nullable().unknown_elements_ok(),
        any(),
        |_, a| {
            for (i, v) in a.iter().enumerate() {
                if v.is_null() {
                    return Err(FnError::call("argument must not be null"));
                }
                if seq(v, i)?.is_empty() {
                    continue;
                }
                return Ok(v.clone());
            }
            Err(FnError::call("no non-null arguments"))
        },
    ));
    defs.push(def(
        "compact",
        vec![p("list", Type::list(Type::String))],
        Type::list(Type::String),
        |_, a| {
            let out = a[0]
                .elements()
                .unwrap_or(&[])
                .iter()
                .filter(|v| !v.is_null() && v.as_str() != Some(""))
                .cloned()
                .collect();
            Ok(Value::List(Type::String, out))
        },
    ));
    defs.push(def_var(
        "concat",
        vec![],
        p("seqs", any()).unknown_elements_ok(),
        any(),
        |_, a| {
            if a.is_empty() {
                return Err(FnError::call("at least one argument is required"));
            }
            let total = a
                .iter()
                .filter_map(Value::elements)
                .map(<[Value]>::len)
                .sum();
            if let Some(why) = crate::limits::over(total, crate::limits::MAX_ELEMENTS, "elements") {
                return Err(FnError::call(why));
            }
            let mut all = Vec::new();
            let mut all_lists = true;
            for (i, v) in a.iter().enumerate() {
                all_lists &= matches!(v.ty(), Type::List(_));
                all.extend(list_or_tuple(v, i)?.iter().cloned());
            }
            if all_lists && !a.is_empty() {
                let tys: Vec<Type> = a.iter().map(Value::ty).collect();
                if let Some(Type::List(et)) = unify(&tys) {
                    let vals = all
                        .iter()
                        .map(|v| convert(v, &et))
                        .collect::<Result<_, _>>()
                        .map_err(|e| FnError::call(e.message))?;
                    return Ok(Value::List(*et, vals));
                }
            }
            Ok(Value::Tuple(all))
        },
    ));
    defs.push(def(
        "contains",
        vec![p("list", any()).unknown_elements_ok(), p("value", any())],
        Type::Bool,
        |_, a| {
            let items = seq(&a[0], 0)?;
            let mut unknown = false;
            for it in items {
                match it.equals(&a[1]) {
                    Some(true) => return Ok(Value::Bool(true)),
                    None => unknown = true,
                    _ => {}
                }
            }
            Ok(if unknown {
                Value::Unknown(Type::Bool)
            } else {
                Value::Bool(false)
            })
        },
    ));
    defs.push(def(
        "distinct",
        vec![p("list", Type::list(any()))],
        Type::list(any()),
        |_, a| {
            let mut out: Vec<Value> = Vec::new();
            for v in a[0].elements().unwrap_or(&[]) {
                if !out.iter().any(|o| o.raw_equal(v)) {
                    out.push(v.clone());
                }
            }
            Ok(Value::List(elem_type(&a[0]).unwrap_or(Type::Dynamic), out))
        },
    ));
    defs.push(def(
        "element",
        vec![
            p("list", any()).unknown_elements_ok().marks_inside(),
            p("index", Type::Number),
        ],
        any(),
        |_, a| {
            let items = list_or_tuple(&a[0], 0)
                .map_err(|_| FnError::call("cannot read elements from set"))?;
            let i = int_arg(a, 1)?;
            if i < 0 {
                return Err(FnError::arg(
                    1,
                    "cannot use element function with a negative index",
                ));
            }
            if items.is_empty() {
                return Err(FnError::arg(
                    0,
                    "cannot use element function with an empty list",
                ));
            }
            Ok(items[(i as usize) % items.len()].clone())
        },
    ));
    defs.push(def(
        "flatten",
        vec![p("list", any()).unknown_elements_ok().marks_inside()],
        any(),
        |_, a| {
            // An unknown list inside makes the length unknown.
            if hides_a_sequence(&a[0]) {
                return Ok(Value::unknown());
            }
            let mut out = Vec::new();
            let mut marked = false;
            flatten_into(&a[0], &mut out, &mut marked)?;
            // A marked list taken apart marks the whole result, as in
            // Terraform: its elements' places would tell of it.
            Ok(Value::Tuple(out).mark_if(marked))
        },
    ));
    defs.push(def(
        "index",
        vec![p("list", any()).unknown_elements_ok(), p("value", any())],
        Type::Number,
        |_, a| {
            let items = list_or_tuple(&a[0], 0)
                .map_err(|_| FnError::call("argument must be a list or tuple"))?;
            // A match decides, unless an unknown element before it might
            // match first.
            for (i, it) in items.iter().enumerate() {
                match it.equals(&a[1]) {
                    Some(true) => return Ok(Value::int(i as i64)),
                    None => return Ok(Value::Unknown(Type::Number)),
                    Some(false) => {}
                }
            }
            Err(FnError::call("item not found"))
        },
    ));
    defs.push(def(
        "keys",
        vec![p("inputMap", any()).unknown_elements_ok().marks_inside()],
        any(),
        |_, a| {
            let keys: Vec<Value> = match a[0].unmarked() {
                Value::Map(_, m) => {
                    return Ok(Value::List(
                        Type::String,
                        m.keys().map(|k| Value::String(k.clone())).collect(),
                    ))
                }
                Value::Object(m) => m.keys().map(|k| Value::String(k.clone())).collect(),
                _ => return Err(FnError::arg(0, "must have map or object type")),
            };
            Ok(Value::Tuple(keys))
        },
    ));
    defs.push(def(
        "values",
        vec![p("mapping", any()).unknown_elements_ok().marks_inside()],
        any(),
        |_, a| match a[0].unmarked() {
            Value::Map(t, m) => Ok(Value::List(t.clone(), m.values().cloned().collect())),
            Value::Object(m) => Ok(Value::Tuple(m.values().cloned().collect())),
            _ => Err(FnError::arg(0, "must have map or object type")),
        },
    ));
    defs.push(def_var(
        "lookup",
        vec![
            p("inputMap", any()).unknown_elements_ok().marks_inside(),
            p("key", Type::String),
        ],
        // An unknown default matters only when the key is absent.
        p("default", any()).nullable().unknown_ok(),
        any(),
        |_, a| {
            if a.len() > 3 {
                return Err(FnError::call("lookup() takes two or three arguments"));
            }
            let key = str_arg(a, 1);
            let m = a[0]
                .entries()
                .ok_or_else(|| FnError::arg(0, "the given value must be a map or object"))?;
            // For a map the default must fit the element type; an object's
            // attributes each have their own type, so nothing is converted.
            let default = match (a.get(2), a[0].unmarked()) {
                (Some(d), Value::Map(et, _)) => {
                    Some(convert(d, et).map_err(|e| FnError::arg(2, e.message))?)
                }
                (d, _) => d.cloned(),
            };
            match (m.get(key), default) {
                (Some(v), _) => Ok(v.clone()),
                (None, Some(d)) => Ok(d),
                (None, None) => Err(FnError::call(format!("lookup failed to find key {key:?}"))),
            }
        },
    ));
    defs.push(def(
        "matchkeys",
        vec![
            p("values", Type::list(any())),
            p("keys", Type::list(any())),
            p("searchset", Type::list(any())),
        ],
        Type::list(any()),
        |_, a| {
            let vals = a[0].elements().unwrap_or(&[]);
            let keys = a[1].elements().unwrap_or(&[]);
            if vals.len() != keys.len() {
                return Err(FnError::call("length of keys and values should be equal"));
            }
            let search = a[2].elements().unwrap_or(&[]);
            let out = vals
                .iter()
                .zip(keys)
                .filter(|(_, k)| search.iter().any(|s| k.equals(s) == Some(true)))
                .map(|(v, _)| v.clone())
                .collect();
            Ok(Value::List(elem_type(&a[0]).unwrap_or(Type::Dynamic), out))
        },
    ));
    defs.push(def_var(
        "merge",
        vec![],
        // As Terraform's: a sensitive attribute stays sensitive in the
        // result; the rest of it does not become so.
        p("maps", any())
            .nullable()
            .unknown_elements_ok()
            .marks_inside(),
        any(),
        |_, a| {
            let mut out = Attrs::new();
            // The element type while every argument so far is a map of it;
            // `None` once one is not (no argument's whole type is built:
            // a merge per instance made types 3 % of an apply's samples).
            let mut maps_of: Option<Option<&Type>> = Some(None);
            for (i, m) in a.iter().enumerate() {
                if m.is_null() {
                    continue;
                }
                maps_of = match (maps_of, m) {
                    (Some(None), Value::Map(et, _)) => Some(Some(et)),
                    (Some(Some(seen)), Value::Map(et, _)) if seen == et => Some(Some(et)),
                    _ => None,
                };
                let entries = m.entries().ok_or_else(|| {
                    FnError::arg(
                        i,
                        format!(
                            "arguments must be maps or objects, got {:?}",
                            m.ty().friendly_name()
                        ),
                    )
                })?;
                for (k, v) in entries {
                    out.insert(k.clone(), v.clone());
                }
            }
            // Maps all of one type merge into that map type; anything else
            // (objects, or maps of different element types) gives an object.
            match maps_of {
                Some(Some(et)) => Ok(Value::Map(et.clone(), out)),
                _ => Ok(Value::Object(out)),
            }
        },
    ));
    // As Terraform's: the collection must be known, its element need
    // not be (`one(x.block).attr` of a planned block with parts known
    // only after apply).
    defs.push(def(
        "one",
        vec![p("list", any()).unknown_elements_ok()],
        any(),
        |_, a| {
            let items = seq(&a[0], 0)?;
            match items.len() {
                0 => Ok(Value::Null(elem_type(&a[0]).unwrap_or(Type::Dynamic))),
                1 => Ok(items[0].clone()),
                _ => Err(FnError::arg(
                    0,
                    "must be a list, set, or tuple value with either zero or one elements",
                )),
            }
        },
    ));
    defs.push(def_var(
        "range",
        vec![],
        p("params", Type::Number),
        Type::list(Type::Number),
        |_, a| range(a),
    ));
    defs.push(def(
        "reverse",
        vec![p("list", any()).unknown_elements_ok()],
        any(),
        |_, a| {
            let items = seq(&a[0], 0)?;
            let rev: Vec<Value> = items.iter().rev().cloned().collect();
            Ok(match a[0].unmarked() {
                Value::Set(t, _) => Value::List(t.clone(), rev),
                _ => same_kind(&a[0], rev),
            })
        },
    ));
    defs.push(def(
        "slice",
        vec![
            p("list", any()).unknown_elements_ok(),
            p("start_index", Type::Number),
            p("end_index", Type::Number),
        ],
        any(),
        |_, a| {
            let items = seq(&a[0], 0)?;
            let (s, e) = (int_arg(a, 1)?, int_arg(a, 2)?);
            if s < 0 {
                return Err(FnError::arg(1, "must be greater than or equal to 0"));
            }
            if e > items.len() as i64 {
                return Err(FnError::arg(
                    2,
                    "end index must not be greater than the length of the list",
                ));
            }
            if s > e {
                return Err(FnError::arg(1, "must be less than or equal to end_index"));
            }
            let part = items[s as usize..e as usize].to_vec();
            Ok(match a[0].unmarked() {
                Value::List(t, _) | Value::Set(t, _) => Value::List(t.clone(), part),
                _ => Value::Tuple(part),
            })
        },
    ));
    defs.push(def(
        "sort",
        vec![p("list", Type::list(Type::String)).unknown_elements_ok()],
        Type::list(Type::String),
        |_, a| {
            let mut items = a[0].elements().unwrap_or(&[]).to_vec();
            // One unknown element could sort anywhere: every place is
            // unknown, the length is not.
            if !a[0].is_wholly_known() {
                return Ok(Value::List(
                    Type::String,
                    vec![Value::Unknown(Type::String); items.len()],
                ));
            }
            if items.iter().any(Value::is_null) {
                return Err(FnError::arg(
                    0,
                    "given list element is null; a null string cannot be sorted",
                ));
            }
            items.sort_by(|x, y| {
                x.as_str()
                    .unwrap_or("")
                    .as_bytes()
                    .cmp(y.as_str().unwrap_or("").as_bytes())
            });
            Ok(Value::List(Type::String, items))
        },
    ));
    defs.push(def(
        "transpose",
        vec![p("values", Type::map(Type::list(Type::String)))],
        Type::map(Type::list(Type::String)),
        |_, a| {
            let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
            for (k, list) in a[0].entries().cloned().unwrap_or_default() {
                for v in list.elements().unwrap_or(&[]) {
                    let s = v.as_str().ok_or_else(|| {
                        FnError::arg(0, "input lists must not contain null values")
                    })?;
                    out.entry(s.to_string())
                        .or_default()
                        .push(Value::String(k.clone()));
                }
            }
            Ok(Value::Map(
                Type::list(Type::String),
                out.into_iter()
                    .map(|(k, v)| (k, Value::List(Type::String, v)))
                    .collect(),
            ))
        },
    ));
    defs.push(def(
        "zipmap",
        vec![
            p("keys", Type::list(Type::String)),
            p("values", any()).unknown_elements_ok(),
        ],
        any(),
        |_, a| {
            let keys = a[0].elements().unwrap_or(&[]);
            let vals = seq(&a[1], 1)?;
            if keys.len() != vals.len() {
                return Err(FnError::call(format!(
                    "number of keys ({}) does not match number of values ({})",
                    keys.len(),
                    vals.len()
                )));
            }
            let mut m = Attrs::new();
            for (k, v) in keys.iter().zip(vals) {
                let k = k
                    .as_str()
                    .ok_or_else(|| FnError::arg(0, "keys list must not contain null values"))?;
                m.insert(k.to_string(), v.clone());
            }
            Ok(match a[1].unmarked() {
                Value::List(t, _) | Value::Set(t, _) => Value::Map(t.clone(), m),
                _ => Value::Object(m),
            })
        },
    ));
    defs.push(def_var(
        "setunion",
        vec![p("first_set", Type::set(any())).unknown_ok()],
        // A union keeps every element, so unknown ones stay in it, after
        // the known ones, as Terraform shows them (only its length waits
        // for them: see `length`).
        p("other_sets", Type::set(any())).unknown_ok(),
        Type::set(any()),
        |_, a| {
            if !a.iter().all(Value::is_known) {
                return Ok(Value::Unknown(Type::set(Type::Dynamic)));
            }
            let (known, open): (Vec<Value>, Vec<Value>) = a
                .iter()
                .flat_map(|s| s.elements().unwrap_or(&[]).iter().cloned())
                .partition(Value::is_wholly_known);
            let Value::Set(et, mut vals) = set_op(a, |_| known.clone())? else {
                return Err(FnError::call(
                    "given sets must all have compatible element types",
                ));
            };
            vals.extend(open);
            Ok(Value::Set(et, vals))
        },
    ));
    defs.push(def_var(
        "setintersection",
        vec![p("first_set", Type::set(any()))],
        p("other_sets", Type::set(any())),
        Type::set(any()),
        |_, a| {
            set_op(a, |sets| {
                sets[0]
                    .iter()
                    .filter(|v| sets[1..].iter().all(|s| s.iter().any(|o| o.raw_equal(v))))
                    .cloned()
                    .collect()
            })
        },
    ));
    defs.push(def(
        "setsubtract",
        vec![p("a", Type::set(any())), p("b", Type::set(any()))],
        Type::set(any()),
        |_, a| {
            set_op(a, |sets| {
                sets[0]
                    .iter()
                    .filter(|v| !sets[1].iter().any(|o| o.raw_equal(v)))
                    .cloned()
                    .collect()
            })
        },
    ));
    defs.push(def_var(
        "setproduct",
        vec![],
        p("sets", any()).unknown_elements_ok(),
        any(),
        |_, a| {
            if a.len() < 2 {
                return Err(FnError::call("at least two arguments are required"));
            }
            // Lists keep their product's shape with unknown elements in
            // it; a set's unknown element may collapse into another.
            if a.iter()
                .any(|s| matches!(s.ty(), Type::Set(_)) && !s.is_wholly_known())
            {
                return Ok(Value::unknown());
            }
            let rows_made = a
                .iter()
                .map(|s| s.elements().map_or(0, <[Value]>::len))
                .fold(1usize, usize::saturating_mul);
            if let Some(why) =
                crate::limits::over(rows_made, crate::limits::MAX_ELEMENTS, "elements")
            {
                return Err(FnError::call(why));
            }
            let mut rows: Vec<Vec<Value>> = vec![vec![]];
            for (i, s) in a.iter().enumerate() {
                let items = seq(s, i)?;
                rows = rows
                    .into_iter()
                    .flat_map(|r| {
                        items.iter().map(move |it| {
                            let mut r2 = r.clone();
                            r2.push(it.clone());
                            r2
                        })
                    })
                    .collect();
            }
            let all_sets = a.iter().all(|s| matches!(s.ty(), Type::Set(_)));
            // Each argument contributes one element type to the result's tuples.
            let mut etys = Vec::with_capacity(a.len());
            for s in a {
                etys.push(match s.ty() {
                    Type::List(e) | Type::Set(e) => *e,
                    Type::Tuple(ts) => unify(&ts).ok_or_else(|| {
                        FnError::call("all elements of each argument must have the same type")
                    })?,
                    _ => Type::Dynamic,
                });
            }
            let tuples: Vec<Value> = rows
                .into_iter()
                .map(|r| {
                    let vals = r
                        .iter()
                        .zip(&etys)
                        .map(|(v, t)| convert(v, t))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(Value::Tuple(vals))
                })
                .collect::<Result<_, crate::lang::convert::ConvertError>>()
                .map_err(|e| FnError::call(e.message))?;
            let et = Type::Tuple(etys);
            Ok(if all_sets {
                Value::new_set(et, tuples)
            } else {
                Value::List(et, tuples)
            })
        },
    ));
}

fn set_op(a: &[Value], f: impl Fn(&[Vec<Value>]) -> Vec<Value>) -> Result<Value, FnError> {
    let sets: Vec<Vec<Value>> = a
        .iter()
        .map(|s| s.elements().unwrap_or(&[]).to_vec())
        .collect();
    let tys: Vec<Type> = a.iter().map(Value::ty).collect();
    let et = match unify(&tys) {
        Some(Type::Set(et)) => *et,
        _ => {
            return Err(FnError::call(
                "given sets must all have compatible element types",
            ))
        }
    };
    let vals = f(&sets)
        .iter()
        .map(|v| convert(v, &et))
        .collect::<Result<_, _>>()
        .map_err(|e| FnError::call(e.message))?;
    Ok(Value::new_set(et, vals))
}

/// Whether flattening `v` would meet an unknown value that may be a
/// sequence (so how many elements it adds is not known).
fn hides_a_sequence(v: &Value) -> bool {
    match v.unmarked() {
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            vs.iter().any(|x| match x.unmarked() {
                Value::Unknown(t) => {
                    matches!(
                        t,
                        Type::List(_) | Type::Set(_) | Type::Tuple(_) | Type::Dynamic
                    )
                }
                _ => hides_a_sequence(x),
            })
        }
        _ => false,
    }
}

fn flatten_into(v: &Value, out: &mut Vec<Value>, marked: &mut bool) -> Result<(), FnError> {
    match v.unmarked() {
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            for x in vs {
                if matches!(
                    x.unmarked(),
                    Value::List(..) | Value::Set(..) | Value::Tuple(_)
                ) && !x.is_null()
                {
                    *marked |= x.is_sensitive();
                    flatten_into(x, out, marked)?;
                } else {
                    out.push(x.clone());
                }
            }
            Ok(())
        }
        _ => Err(FnError::arg(0, "can only flatten lists, sets and tuples")),
    }
}

fn range(a: &[Value]) -> Result<Value, FnError> {
    let num = |i: usize| a[i].as_number().cloned().unwrap_or_else(Number::zero);
    let (start, end, step) = match a.len() {
        1 => {
            let end = num(0);
            let step = Number::from_i64(if end.is_negative() { -1 } else { 1 });
            (Number::zero(), end, step)
        }
        2 => {
            let (s, e) = (num(0), num(1));
            let step = Number::from_i64(if e.compare(&s).is_lt() { -1 } else { 1 });
            (s, e, step)
        }
        3 => (num(0), num(1), num(2)),
        _ => return Err(FnError::call("must have one, two, or three arguments")),
    };
    if step.is_zero() {
        return Err(FnError::call("step must not be zero"));
    }
    let down = step.is_negative();
    if down && start.compare(&end).is_lt() {
        return Err(FnError::call(
            "step must be positive when start is less than end",
        ));
    }
    if !down && start.compare(&end).is_gt() {
        return Err(FnError::call(
            "step must be negative when start is greater than end",
        ));
    }
    let mut out = Vec::new();
    let mut cur = start;
    loop {
        let more = if down {
            cur.compare(&end).is_gt()
        } else {
            cur.compare(&end).is_lt()
        };
        if !more {
            break;
        }
        if out.len() >= 1024 {
            return Err(FnError::call("more than 1024 values were generated; either decrease the difference between start and end or use a smaller step"));
        }
        out.push(Value::Number(cur.clone()));
        cur = cur.add(&step).map_err(|e| FnError::call(e.to_string()))?;
    }
    Ok(Value::List(Type::Number, out))
}
