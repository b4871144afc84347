//! Hand-reduced shapes (an error envelope and its details): a JSON value
//! held to a shape whose objects list their fields, whose one-item arrays
//! give their items' shape, and whose strings name a leaf type that the
//! caller judges (`"string"`, or its own names, which may recurse).

use serde_json::Value as Json;

/// A leaf type's verdict on a value: `Some(fits)`, `None` for a name the
/// caller does not know.
pub type Leaf<'a> = &'a dyn Fn(&str, &Json, &str, &mut Vec<String>) -> Option<bool>;

/// Where `v` does not fit `shape`, under `at`, into `out`.
pub fn fits(shape: &Json, v: &Json, at: &str, out: &mut Vec<String>, leaf: Leaf<'_>) {
    let ok = match shape {
        Json::String(name) => match leaf(name, v, at, out) {
            Some(ok) => ok,
            None => {
                out.push(format!("{at}: no shape {name}"));
                return;
            }
        },
        Json::Array(item) => match v.as_array() {
            Some(items) => {
                for (i, x) in items.iter().enumerate() {
                    fits(&item[0], x, &format!("{at}[{i}]"), out, leaf);
                }
                true
            }
            None => false,
        },
        Json::Object(fields) => match v.as_object() {
            Some(given) => {
                for (k, x) in given {
                    match fields.get(k) {
                        Some(s) => fits(s, x, &format!("{at}.{k}"), out, leaf),
                        None => out.push(format!("{at}.{k}: not a field")),
                    }
                }
                true
            }
            None => false,
        },
        _ => false,
    };
    if !ok {
        out.push(format!("{at}: {v} is not a {shape}"));
    }
}
