//! Values with Terraform's semantics: typed nulls, unknown values that stand
//! for "known after apply", and the sensitive mark that follows a value
//! through every expression.

use super::number::Number;
use super::types::Type;
use litemap::LiteMap;
use std::cmp::Ordering;
use std::fmt::Write as _;
use std::ops::{Deref, DerefMut, Index};
use std::sync::Arc;

/// An object's attributes or a map's elements, sorted by name: a sorted
/// vector sized to fit (state holds millions of small objects), shared
/// between copies and copied only when one of them is changed (a plan
/// holds each object as prior, planned and evaluated value).
#[derive(Clone, Debug, Default)]
pub struct Attrs(Arc<LiteMap<String, Value>>);

impl Attrs {
    pub fn new() -> Attrs {
        Attrs::default()
    }

    pub fn with_capacity(n: usize) -> Attrs {
        Attrs(Arc::new(LiteMap::with_capacity(n)))
    }

    /// Attributes already in order, each name once (what reading by an
    /// object type yields): taken as they are, with no sort.
    pub fn from_sorted(sorted: Vec<(String, Value)>) -> Attrs {
        debug_assert!(sorted.windows(2).all(|w| w[0].0 < w[1].0));
        Attrs(Arc::new(LiteMap::from_sorted_store_unchecked(sorted)))
    }

    /// Whether `a` and `b` are one map shared, not merely equal ones.
    pub fn shared(a: &Attrs, b: &Attrs) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.iter_mut().map(|(_, v)| v)
    }
}

impl Deref for Attrs {
    type Target = LiteMap<String, Value>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for Attrs {
    fn deref_mut(&mut self) -> &mut Self::Target {
        Arc::make_mut(&mut self.0)
    }
}

/// Like a map's: the attribute must be there. For tests and for code that
/// has just checked; input is read with `get`, never through this.
impl Index<&str> for Attrs {
    type Output = Value;
    #[allow(clippy::panic)] // the contract of `Index`, as `HashMap`'s
    fn index(&self, name: &str) -> &Value {
        match self.0.get(name) {
            Some(v) => v,
            None => panic!("no attribute {name:?}"),
        }
    }
}

impl<K: Into<String>, const N: usize> From<[(K, Value); N]> for Attrs {
    fn from(entries: [(K, Value); N]) -> Attrs {
        entries.into_iter().map(|(k, v)| (k.into(), v)).collect()
    }
}

impl FromIterator<(String, Value)> for Attrs {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Attrs {
        Attrs(Arc::new(LiteMap::from_iter(iter)))
    }
}

impl Extend<(String, Value)> for Attrs {
    fn extend<I: IntoIterator<Item = (String, Value)>>(&mut self, iter: I) {
        Arc::make_mut(&mut self.0).extend(iter)
    }
}

impl IntoIterator for Attrs {
    type Item = (String, Value);
    type IntoIter = std::vec::IntoIter<(String, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        Arc::unwrap_or_clone(self.0).into_tuple_vec().into_iter()
    }
}

impl<'a> IntoIterator for &'a Attrs {
    type Item = (&'a String, &'a Value);
    type IntoIter = <&'a LiteMap<String, Value> as IntoIterator>::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut Attrs {
    type Item = (&'a String, &'a mut Value);
    type IntoIter = <&'a mut LiteMap<String, Value> as IntoIterator>::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        Arc::make_mut(&mut self.0).iter_mut()
    }
}

#[derive(Clone, Debug)]
pub enum Value {
    Null(Type),
    /// A value that will only be known after apply.
    Unknown(Type),
    Bool(bool),
    Number(Number),
    String(String),
    /// Element type and elements.
    List(Type, Vec<Value>),
    /// Element type and elements, kept in cty's set order without duplicates.
    Set(Type, Vec<Value>),
    Map(Type, Attrs),
    Tuple(Vec<Value>),
    Object(Attrs),
    /// The sensitive mark. Never directly wraps another `Sensitive`.
    Sensitive(Box<Value>),
}

impl Value {
    pub fn null() -> Value {
        Value::Null(Type::Dynamic)
    }

    pub fn unknown() -> Value {
        Value::Unknown(Type::Dynamic)
    }

    pub fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    pub fn int(i: i64) -> Value {
        Value::Number(Number::from_i64(i))
    }

    pub fn ty(&self) -> Type {
        match self {
            Value::Null(t) | Value::Unknown(t) => t.clone(),
            Value::Bool(_) => Type::Bool,
            Value::Number(_) => Type::Number,
            Value::String(_) => Type::String,
            Value::List(t, _) => Type::list(t.clone()),
            Value::Set(t, _) => Type::set(t.clone()),
            Value::Map(t, _) => Type::map(t.clone()),
            Value::Tuple(vs) => Type::Tuple(vs.iter().map(Value::ty).collect()),
            Value::Object(m) => Type::object(m.iter().map(|(k, v)| (k.clone(), v.ty())).collect()),
            Value::Sensitive(v) => v.ty(),
        }
    }

    pub fn is_null(&self) -> bool {
        match self {
            Value::Null(_) => true,
            Value::Sensitive(v) => v.is_null(),
            _ => false,
        }
    }

    /// Known at the top level (its elements may still be unknown).
    pub fn is_known(&self) -> bool {
        match self {
            Value::Unknown(_) => false,
            Value::Sensitive(v) => v.is_known(),
            _ => true,
        }
    }

    /// Known all the way down.
    pub fn is_wholly_known(&self) -> bool {
        match self {
            Value::Unknown(_) => false,
            Value::Sensitive(v) => v.is_wholly_known(),
            Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
                vs.iter().all(Value::is_wholly_known)
            }
            Value::Map(_, m) | Value::Object(m) => m.values().all(Value::is_wholly_known),
            _ => true,
        }
    }

    pub fn is_sensitive(&self) -> bool {
        matches!(self, Value::Sensitive(_))
    }

    /// Whether the sensitive mark appears anywhere inside.
    pub fn contains_sensitive(&self) -> bool {
        match self {
            Value::Sensitive(_) => true,
            Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
                vs.iter().any(Value::contains_sensitive)
            }
            Value::Map(_, m) | Value::Object(m) => m.values().any(Value::contains_sensitive),
            _ => false,
        }
    }

    /// Adds the sensitive mark.
    pub fn mark(self) -> Value {
        match self {
            Value::Sensitive(_) => self,
            v => Value::Sensitive(Box::new(v)),
        }
    }

    /// Adds the mark when `sensitive` is true.
    pub fn mark_if(self, sensitive: bool) -> Value {
        if sensitive {
            self.mark()
        } else {
            self
        }
    }

    /// Removes the top-level mark, saying whether there was one.
    pub fn unmark(self) -> (Value, bool) {
        match self {
            Value::Sensitive(v) => (*v, true),
            v => (v, false),
        }
    }

    pub fn unmarked(&self) -> &Value {
        match self {
            Value::Sensitive(v) => v,
            v => v,
        }
    }

    /// Removes every mark inside, saying whether there was any.
    pub fn unmark_deep(self) -> (Value, bool) {
        // Most values carry no mark: looking costs no allocation, copying
        // the value without its marks would.
        if !self.contains_sensitive() {
            return (self, false);
        }
        let mut found = false;
        let v = self.strip(&mut found);
        (v, found)
    }

    fn strip(self, found: &mut bool) -> Value {
        match self {
            Value::Sensitive(v) => {
                *found = true;
                v.strip(found)
            }
            Value::List(t, vs) => Value::List(t, vs.into_iter().map(|v| v.strip(found)).collect()),
            Value::Set(t, vs) => Value::Set(t, vs.into_iter().map(|v| v.strip(found)).collect()),
            Value::Tuple(vs) => Value::Tuple(vs.into_iter().map(|v| v.strip(found)).collect()),
            Value::Map(t, m) => {
                Value::Map(t, m.into_iter().map(|(k, v)| (k, v.strip(found))).collect())
            }
            Value::Object(m) => {
                Value::Object(m.into_iter().map(|(k, v)| (k, v.strip(found))).collect())
            }
            v => v,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self.unmarked() {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<&Number> {
        match self.unmarked() {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.unmarked() {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Elements of a list, set or tuple.
    pub fn elements(&self) -> Option<&[Value]> {
        match self.unmarked() {
            Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => Some(vs),
            _ => None,
        }
    }

    /// Entries of a map or object, in key order.
    pub fn entries(&self) -> Option<&Attrs> {
        match self.unmarked() {
            Value::Map(_, m) | Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// Length of a collection or structural value.
    pub fn len(&self) -> Option<usize> {
        self.elements()
            .map(<[Value]>::len)
            .or_else(|| self.entries().map(|m| m.len()))
    }

    /// Whether a collection or structural value has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// Builds a set, sorting and removing duplicates as cty does.
    pub fn new_set(elem: Type, mut vs: Vec<Value>) -> Value {
        vs.sort_by(set_order);
        vs.dedup_by(|a, b| a.raw_equal(b));
        Value::Set(elem, vs)
    }

    /// cty's `Equals`: `None` when the answer depends on unknown values.
    pub fn equals(&self, other: &Value) -> Option<bool> {
        let (a, b) = (self.unmarked(), other.unmarked());
        match (a, b) {
            (Value::Unknown(_), Value::Unknown(_)) => return None,
            // A known value and an unknown one of another type (neither
            // null nor of any type) are never equal, as cty says.
            (Value::Unknown(t), known) | (known, Value::Unknown(t)) => {
                let decided = !known.is_null() && !t.has_dynamic() && known.ty() != *t;
                return decided.then_some(false);
            }
            (Value::Null(_), Value::Null(_)) => return Some(true),
            (Value::Null(_), _) | (_, Value::Null(_)) => return Some(false),
            _ => {}
        }
        if a.ty() != b.ty() {
            return Some(false);
        }
        match (a, b) {
            (Value::Bool(x), Value::Bool(y)) => Some(x == y),
            (Value::Number(x), Value::Number(y)) => Some(x == y),
            (Value::String(x), Value::String(y)) => Some(x == y),
            (Value::List(_, x), Value::List(_, y))
            | (Value::Set(_, x), Value::Set(_, y))
            | (Value::Tuple(x), Value::Tuple(y)) => {
                if x.len() != y.len() {
                    return Some(false);
                }
                all_equal(x.iter().zip(y))
            }
            (Value::Map(_, x), Value::Map(_, y)) | (Value::Object(x), Value::Object(y)) => {
                if x.len() != y.len() || !x.keys().eq(y.keys()) {
                    return Some(false);
                }
                all_equal(x.values().zip(y.values()))
            }
            _ => Some(false),
        }
    }

    /// Structural equality including types and marks: cty's `RawEquals`.
    /// Whether `self` and `other` are one object (or map) shared, marks
    /// and all: equal without a look inside.
    pub fn is_shared_with(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Object(a), Value::Object(b)) | (Value::Map(_, a), Value::Map(_, b)) => {
                Attrs::shared(a, b)
            }
            _ => false,
        }
    }

    pub fn raw_equal(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Sensitive(a), Value::Sensitive(b)) => a.raw_equal(b),
            (Value::Sensitive(_), _) | (_, Value::Sensitive(_)) => false,
            (Value::Null(a), Value::Null(b)) | (Value::Unknown(a), Value::Unknown(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::List(ta, a), Value::List(tb, b)) | (Value::Set(ta, a), Value::Set(tb, b)) => {
                ta == tb && a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.raw_equal(y))
            }
            (Value::Tuple(a), Value::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.raw_equal(y))
            }
            (Value::Map(ta, a), Value::Map(tb, b)) => ta == tb && map_raw_equal(a, b),
            (Value::Object(a), Value::Object(b)) => map_raw_equal(a, b),
            _ => false,
        }
    }

    /// Terraform's `jsonencode`. Errors on unknown values and infinities.
    pub fn to_json(&self) -> Result<String, String> {
        self.to_json_with(Infinity::Refused)
    }

    /// [`Value::to_json`], an infinity written as `inf` says.
    pub fn to_json_with(&self, inf: Infinity) -> Result<String, String> {
        let mut out = String::new();
        self.write_json(&mut out, inf)?;
        Ok(out)
    }

    fn write_json(&self, out: &mut String, inf: Infinity) -> Result<(), String> {
        match self {
            Value::Sensitive(v) => v.write_json(out, inf),
            Value::Unknown(_) => Err("value is not known".into()),
            Value::Null(_) => {
                out.push_str("null");
                Ok(())
            }
            Value::Bool(b) => {
                out.push_str(if *b { "true" } else { "false" });
                Ok(())
            }
            Value::Number(n) => {
                match (n.is_inf(), inf) {
                    (true, Infinity::Refused) => {
                        return Err("cannot serialize infinity as JSON".into())
                    }
                    (true, Infinity::AsText) => {
                        json_string(&n.to_text(), out);
                        return Ok(());
                    }
                    (false, _) => {}
                }
                out.push_str(&n.to_text());
                Ok(())
            }
            Value::String(s) => {
                json_string(s, out);
                Ok(())
            }
            Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
                out.push('[');
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_json(out, inf)?;
                }
                out.push(']');
                Ok(())
            }
            Value::Map(_, m) | Value::Object(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    json_string(k, out);
                    out.push(':');
                    v.write_json(out, inf)?;
                }
                out.push('}');
                Ok(())
            }
        }
    }
}

/// How JSON, which has no infinity, is given one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Infinity {
    /// An error, as `jsonencode` says in Terraform.
    Refused,
    /// The text Terraform shows for it (`"+Inf"`, `"-Inf"`), where a
    /// value must be said rather than fail (the console's answers).
    AsText,
}

fn map_raw_equal(a: &Attrs, b: &Attrs) -> bool {
    // One map shared by two values (a refresh that read back what was
    // stored, a plan that keeps the prior object) is equal without a walk.
    Attrs::shared(a, b)
        || a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|((ka, va), (kb, vb))| ka == kb && va.raw_equal(vb))
}

/// Go's `encoding/json` string escaping, which Terraform's `jsonencode` uses:
/// HTML-significant characters and the JavaScript line separators are escaped.
pub fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// cty's ordering of set elements: numbers by value, strings bytewise, false
/// before true, unknowns last; other kinds by their JSON text so the order is
/// at least stable.
pub fn set_order(a: &Value, b: &Value) -> Ordering {
    let (a, b) = (a.unmarked(), b.unmarked());
    match (a, b) {
        (Value::Unknown(_), Value::Unknown(_)) => Ordering::Equal,
        (Value::Unknown(_), _) => Ordering::Greater,
        (_, Value::Unknown(_)) => Ordering::Less,
        (Value::Number(x), Value::Number(y)) => x.compare(y),
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => {
            let ja = a.to_json().unwrap_or_default();
            let jb = b.to_json().unwrap_or_default();
            ja.cmp(&jb)
        }
    }
}

/// Pairwise equality: false as soon as a pair differs, unknown if any pair
/// is unknown and none differs.
fn all_equal<'a>(pairs: impl Iterator<Item = (&'a Value, &'a Value)>) -> Option<bool> {
    let mut unknown = false;
    for (p, q) in pairs {
        match p.equals(q) {
            Some(false) => return Some(false),
            None => unknown = true,
            Some(true) => {}
        }
    }
    if unknown {
        None
    } else {
        Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_object_is_told_apart_from_an_equal_one() {
        let build = || Value::Object(Attrs::from([("a".to_string(), Value::string("x"))]));
        let (one, equal) = (build(), build());
        let copy = one.clone();
        assert!(one.is_shared_with(&copy) && one.raw_equal(&copy));
        assert!(!one.is_shared_with(&equal) && one.raw_equal(&equal));
        let mut changed = copy.clone();
        if let Value::Object(m) = &mut changed {
            m.insert("a".to_string(), Value::string("y"));
        }
        assert!(!changed.is_shared_with(&copy), "a change copies the map");
        assert!(!changed.raw_equal(&copy));
        assert!(!Value::string("x").is_shared_with(&Value::string("x")));
    }

    /// cty's `Equals` with an unknown side: decided only when the known
    /// side's type cannot be the unknown's (a null, or an unknown of any
    /// type, still waits).
    #[test]
    fn an_unknown_of_another_type_is_not_equal() {
        let object = Value::Object(Attrs::from([("a".to_string(), Value::Bool(true))]));
        let unknown = Value::Unknown(Type::String);
        assert_eq!(unknown.equals(&object), Some(false));
        assert_eq!(object.equals(&unknown), Some(false));
        assert_eq!(unknown.equals(&Value::String("x".into())), None);
        assert_eq!(unknown.equals(&Value::Null(Type::String)), None);
        assert_eq!(Value::Unknown(Type::Dynamic).equals(&object), None);
        assert_eq!(unknown.equals(&Value::Unknown(Type::Bool)), None);
    }
}
