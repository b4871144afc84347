//! JSON text straight into a [`Value`] of a known type, without a JSON
//! tree in between: a state's objects are most of a no-change plan's work,
//! and building a `serde_json::Value` per object (each object an ordered
//! map) only to walk it again cost most of that. Containers are read by
//! their type as the text streams past; a leaf (and a `dynamic` value,
//! which carries its own type) goes through [`value_from_json`], so both
//! paths mean the same. On any mismatch the tree path runs again for its
//! error message, so errors read as they always did.

use crate::json::{type_from_json, value_from_json};
use crate::types::{ObjectType, Type};
use crate::value::{Attrs, Value};
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value as Json;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// `text` (JSON) as a value of type `ty`, as `value_from_json` reads it.
pub fn value_from_json_text(text: &str, ty: &Type) -> Result<Value, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let streamed = Typed(ty)
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v));
    match streamed {
        Ok(v) => Ok(v),
        // The tree path says what is wrong, in its words.
        Err(_) => {
            let j: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
            value_from_json(&j, ty)
        }
    }
}

/// Reads one value of the type it holds.
#[derive(Clone, Copy)]
struct Typed<'t>(&'t Type);

impl<'de> DeserializeSeed<'de> for Typed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self.0 {
            Type::List(_) | Type::Set(_) | Type::Tuple(_) | Type::Map(_) | Type::Object(_) => {
                d.deserialize_any(Container(self.0))
            }
            Type::Dynamic => match <Option<Dynamic> as serde::Deserialize>::deserialize(d)? {
                None => Ok(Value::Null(Type::Dynamic)),
                Some(parts) => parts.read().map_err(serde::de::Error::custom),
            },
            leaf => d.deserialize_any(Leaf(leaf)),
        }
    }
}

/// A `dynamic` value as state writes it, `{"value": …, "type": …}`: the
/// value's text is kept aside until its type is read (it comes first), then
/// streamed by that type. A null is a null of unknown type.
#[derive(serde::Deserialize)]
struct Dynamic<'a> {
    #[serde(borrow)]
    value: Option<&'a RawValue>,
    #[serde(borrow, rename = "type")]
    ty: Option<&'a RawValue>,
}

/// The dynamic value this thread read last, by its text and its type's:
/// an object often holds one twice (`terraform_data`'s `input` and
/// `output`), and the second then shares the first's value instead of
/// being read and held again.
struct LastDynamic {
    value: String,
    ty: String,
    read: Value,
}

thread_local! {
    static LAST_DYNAMIC: RefCell<Option<LastDynamic>> = const { RefCell::new(None) };
}

/// Types of dynamic values this thread has read, by their text: a state
/// holds few distinct ones, many times over.
const KNOWN_TYPES: usize = 64;

thread_local! {
    static TYPES: RefCell<HashMap<String, Type>> = RefCell::new(HashMap::new());
}

fn dynamic_type(text: &str) -> Result<Type, String> {
    if let Some(t) = TYPES.with_borrow(|known| known.get(text).cloned()) {
        return Ok(t);
    }
    let json: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let ty = type_from_json(&json)?;
    TYPES.with_borrow_mut(|known| {
        if known.len() >= KNOWN_TYPES {
            known.clear();
        }
        known.insert(text.to_string(), ty.clone());
    });
    Ok(ty)
}

impl Dynamic<'_> {
    fn read(self) -> Result<Value, String> {
        let (Some(value), Some(ty)) = (self.value, self.ty) else {
            return Err("expected {\"value\", \"type\"}".into());
        };
        let (value, ty) = (value.get(), ty.get());
        let seen = LAST_DYNAMIC.with_borrow(|last| {
            last.as_ref()
                .filter(|l| l.value == value && l.ty == ty)
                .map(|l| l.read.clone())
        });
        if let Some(v) = seen {
            return Ok(v);
        }
        let read = value_from_json_text(value, &dynamic_type(ty)?)?;
        LAST_DYNAMIC.set(Some(LastDynamic {
            value: value.to_string(),
            ty: ty.to_string(),
            read: read.clone(),
        }));
        Ok(read)
    }
}

/// A primitive: a string or bool where the type wants one is taken as it
/// is (most of a state's leaves); anything else becomes the JSON value it
/// is and goes through `value_from_json`, which converts or refuses it.
struct Leaf<'t>(&'t Type);

impl Leaf<'_> {
    fn converted<E: serde::de::Error>(self, j: Json) -> Result<Value, E> {
        value_from_json(&j, self.0).map_err(E::custom)
    }
}

impl<'de> Visitor<'de> for Leaf<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.friendly_name())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        match self.0 {
            Type::String => Ok(Value::String(v.to_string())),
            _ => self.converted(Json::String(v.to_string())),
        }
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        match self.0 {
            Type::Bool => Ok(Value::Bool(v)),
            _ => self.converted(Json::Bool(v)),
        }
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null(self.0.clone()))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        self.converted(Json::from(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        self.converted(Json::from(v))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        self.converted(Json::from(v))
    }

    // A number (arbitrary precision reads it as a one-entry map), or an
    // object where a primitive should be, which the conversion refuses.
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        let j = <Json as serde::Deserialize>::deserialize(MapAccessDeserializer::new(map))?;
        self.converted(j)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        let j = <Json as serde::Deserialize>::deserialize(SeqAccessDeserializer::new(seq))?;
        self.converted(j)
    }
}

/// A list, set, tuple, map or object, element by element.
struct Container<'t>(&'t Type);

impl<'de> Visitor<'de> for Container<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.friendly_name())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null(self.0.clone()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mismatch = || serde::de::Error::custom("a sequence of the wrong type");
        match self.0 {
            Type::List(e) | Type::Set(e) => {
                let mut vs = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(v) = seq.next_element_seed(Typed(e))? {
                    vs.push(v);
                }
                Ok(match self.0 {
                    Type::Set(_) => Value::new_set((**e).clone(), vs),
                    _ => Value::List((**e).clone(), vs),
                })
            }
            Type::Tuple(ts) => {
                let mut vs = Vec::with_capacity(ts.len());
                for t in ts {
                    vs.push(seq.next_element_seed(Typed(t))?.ok_or_else(mismatch)?);
                }
                match seq.next_element::<IgnoredAny>()? {
                    None => Ok(Value::Tuple(vs)),
                    Some(_) => Err(mismatch()),
                }
            }
            _ => Err(mismatch()),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        match self.0 {
            Type::Map(e) => {
                let mut entries = BTreeMap::new();
                while let Some(k) = map.next_key::<String>()? {
                    let v = map.next_value_seed(Typed(e))?;
                    entries.insert(k, v);
                }
                Ok(Value::Map(
                    (**e).clone(),
                    Attrs::from_sorted(entries.into_iter().collect()),
                ))
            }
            Type::Object(o) => object(o, map),
            _ => Err(serde::de::Error::custom("an object where none fits")),
        }
    }
}

/// An object's attributes by the type's names: others are skipped, and an
/// attribute the text lacks is null.
fn object<'de, A: MapAccess<'de>>(o: &ObjectType, mut map: A) -> Result<Value, A::Error> {
    // Both tools write an object's attributes in name order, the order of
    // the type's: each key is met where the cursor stands, and the object
    // is built in order without a map in between. A key out of order (a
    // hand-edited state) replaces the null its place was given.
    let mut out: Vec<(String, Value)> = Vec::with_capacity(o.attrs.len());
    let mut ahead = o.attrs.iter().peekable();
    while let Some(k) = map.next_key::<String>()? {
        while let Some((name, t)) = ahead.next_if(|(name, _)| name.as_str() < k.as_str()) {
            out.push((name.clone(), Value::Null(t.clone())));
        }
        if let Some((_, t)) = ahead.next_if(|(name, _)| name.as_str() == k.as_str()) {
            let v = map.next_value_seed(Typed(t))?;
            out.push((k, v));
            continue;
        }
        match o.attrs.get(k.as_str()) {
            Some(t) => {
                let v = map.next_value_seed(Typed(t))?;
                if let Ok(at) = out.binary_search_by(|(name, _)| name.as_str().cmp(&k)) {
                    out[at].1 = v;
                }
            }
            None => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    out.extend(ahead.map(|(name, t)| (name.clone(), Value::Null(t.clone()))));
    Ok(Value::Object(Attrs::from_sorted(out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(t: &str) -> Type {
        type_from_json(&serde_json::from_str(t).expect("type JSON")).expect("a type")
    }

    /// Both paths read every row to the same value (or both refuse it).
    #[test]
    fn the_stream_reads_as_the_tree_does() {
        let object = r#"["object",{"id":"string","n":"number","tags":["map","string"],"ids":["set","string"],"pair":["tuple",["string","bool"]],"nested":["list",["object",{"a":"number"}]],"any":"dynamic"}]"#;
        let rows = [
            (
                object,
                r#"{"id":"x","n":1.50,"tags":{"b":"2","a":"1"},"ids":["b","a","b"],"pair":["p",true],"nested":[{"a":1},{"a":null}],"any":{"value":[1,"x"],"type":["tuple",["number","string"]]},"extra":{"deep":[1,2]}}"#,
            ),
            (object, r#"{"id":null,"any":null}"#),
            // Out of name order, a name twice (the last one counts, as
            // in a JSON tree), a name the type lacks in between.
            (
                object,
                r#"{"tags":{"z":"1"},"n":2,"zz":0,"id":"late","n":3}"#,
            ),
            (object, r#"{}"#),
            (object, r#"null"#),
            (object, r#"{"n":"12"}"#),
            (object, r#"{"id":5,"pair":["p",false]}"#),
            (object, r#"{"id":true,"n":-7,"tags":{"e":"a\"b\u00e9"}}"#),
            (object, r#"{"id":12345678901234567890.25,"n":1e3}"#),
            (
                r#"["list","number"]"#,
                r#"[1,123456789012345678901234567890,-0.5]"#,
            ),
            (r#"["map",["list","string"]]"#, r#"{"a":[],"b":["x",null]}"#),
        ];
        for (t, text) in rows {
            let t = ty(t);
            let tree = value_from_json(&serde_json::from_str(text).expect("JSON"), &t)
                .expect("the tree reads it");
            let stream = value_from_json_text(text, &t).expect("the stream reads it");
            assert!(stream.raw_equal(&tree), "{text}: {stream:?} vs {tree:?}");
            assert_eq!(stream.ty(), tree.ty(), "{text}");
        }
    }

    #[test]
    fn mismatches_are_the_tree_paths_errors() {
        let t = ty(r#"["object",{"pair":["tuple",["string","bool"]],"n":"number"}]"#);
        for text in [
            r#"{"pair":["p"]}"#,
            r#"{"pair":["p",true,1]}"#,
            r#"{"n":"twelve"}"#,
            r#"{"n":[1]}"#,
            r#"[1]"#,
            r#"{"n":1} trailing"#,
        ] {
            let stream = value_from_json_text(text, &t);
            let tree = serde_json::from_str::<Json>(text)
                .map_err(|e| e.to_string())
                .and_then(|j| value_from_json(&j, &t));
            assert!(stream.is_err(), "{text} read as {stream:?}");
            assert_eq!(stream.err(), tree.err(), "{text}");
        }
    }

    /// A dynamic value read again (the same text, the same type) is the
    /// first one shared; the same text under another type is read anew.
    #[test]
    fn repeated_dynamic_values_share_what_they_mean() {
        let t = ty(r#"["object",{"input":"dynamic","output":"dynamic","other":"dynamic"}]"#);
        let text = r#"{"input":{"value":{"a":"1"},"type":["object",{"a":"string"}]},"output":{"value":{"a":"1"},"type":["object",{"a":"string"}]},"other":{"value":{"a":"1"},"type":["map","string"]}}"#;
        let v = value_from_json_text(text, &t).expect("reads");
        let tree = value_from_json(&serde_json::from_str(text).expect("JSON"), &t).expect("reads");
        assert!(v.raw_equal(&tree), "{v:?} vs {tree:?}");
        let get = |k: &str| v.entries().and_then(|m| m.get(k).cloned()).expect(k);
        assert!(get("input").raw_equal(&get("output")));
        assert_eq!(get("other").ty(), ty(r#"["map","string"]"#));
        assert_eq!(get("input").ty(), ty(r#"["object",{"a":"string"}]"#));
    }
}
