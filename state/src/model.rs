//! The state document. Its layout follows Terraform's state format version 4
//! (`version`, `serial`, `lineage`, `outputs`, `resources[].instances[]`)
//! so that people and tools that read Terraform state can read strata's.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// The newest state format this build reads and writes.
pub const FORMAT_VERSION: u64 = 4;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub version: u64,
    /// The strata release that last wrote this state (absent from one
    /// Terraform wrote, which has `terraform_version` instead).
    #[serde(default)]
    pub strata_version: String,
    /// Increases by one with every write; a saved plan records the serial it
    /// was made against.
    pub serial: u64,
    /// Fixed when the state is created; tells two unrelated states apart.
    pub lineage: String,
    #[serde(default)]
    pub outputs: BTreeMap<String, OutputState>,
    #[serde(default)]
    pub resources: Vec<ResourceState>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputState {
    pub value: Json,
    #[serde(rename = "type")]
    pub ty: Json,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Managed,
    Data,
}

/// The identity of a resource: module path, mode, type and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ResourceId {
    /// `module.a.module.b`, or absent for the root module.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    pub mode: Mode,
    #[serde(rename = "type")]
    pub type_name: String,
    pub name: String,
}

impl ResourceId {
    /// The address of one instance (`key`) or of the whole resource (`None`).
    pub fn instance_address(&self, key: Option<&InstanceKey>) -> String {
        address(
            self.module.as_deref(),
            self.mode,
            &self.type_name,
            &self.name,
            key,
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceState {
    #[serde(flatten)]
    pub id: ResourceId,
    pub provider: String,
    pub instances: Vec<InstanceState>,
}

/// An instance key: `count` gives numbers, `for_each` gives strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InstanceKey {
    Int(u64),
    Str(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_key: Option<InstanceKey>,
    /// Set on an object that a create-before-destroy replacement has
    /// superseded but not yet deleted: the next run deletes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deposed: Option<String>,
    /// `"tainted"` for an object a failed create left behind: it exists
    /// and is recorded (so nothing is orphaned), and the next plan
    /// replaces it. Terraform's field and value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    pub schema_version: u64,
    pub attributes: Attributes,
    /// Paths (as JSON arrays of steps) of attributes holding sensitive values.
    #[serde(default)]
    pub sensitive_attributes: Vec<Json>,
    /// Addresses of the resources this instance depended on when last applied,
    /// so it can be destroyed in the right order after leaving the config.
    #[serde(default)]
    pub dependencies: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub create_before_destroy: bool,
}

/// An object's attributes as compact JSON text, parsed only when the object
/// is decoded: a large state then costs its size in memory, not a tree of
/// nodes several times that, and an object nobody changes is written back
/// as it was read. Written on one line inside the pretty-printed state.
#[derive(Clone)]
pub struct Attributes(Box<RawValue>);

impl Attributes {
    pub fn from_json(v: &Json) -> Attributes {
        // Serialising a JSON value cannot fail: its keys are strings.
        Attributes(serde_json::value::to_raw_value(v).unwrap_or_default())
    }

    /// The attributes as a JSON value.
    pub fn json(&self) -> Result<Json, String> {
        serde_json::from_str(self.0.get()).map_err(|e| e.to_string())
    }

    /// The compact JSON text.
    pub fn text(&self) -> &str {
        self.0.get()
    }
}

impl From<Json> for Attributes {
    fn from(v: Json) -> Attributes {
        Attributes::from_json(&v)
    }
}

impl std::fmt::Debug for Attributes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.get())
    }
}

/// Equal as JSON values, whatever the spelling.
impl PartialEq for Attributes {
    fn eq(&self, other: &Attributes) -> bool {
        self.0.get() == other.0.get() || self.json().ok() == other.json().ok()
    }
}

impl Serialize for Attributes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Attributes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Attributes, D::Error> {
        // serde_json hands a raw value's text to a visitor that asks for it
        // by this name; any other deserializer (the journal's lines come
        // through serde's buffering of tagged enums) gives the value
        // itself, which is then written compact. Both are correct; the
        // first only faster.
        const RAW: &str = "$serde_json::private::RawValue";
        d.deserialize_newtype_struct(RAW, AttributesVisitor)
    }
}

struct AttributesVisitor;

impl<'de> serde::de::Visitor<'de> for AttributesVisitor {
    type Value = Attributes;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object's attributes")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Attributes, A::Error> {
        use serde::de::Error;
        map.next_key::<serde::de::IgnoredAny>()?;
        let text: std::borrow::Cow<'de, str> = map.next_value()?;
        RawValue::from_string(minify(&text))
            .map(Attributes)
            .map_err(A::Error::custom)
    }

    fn visit_newtype_struct<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> Result<Attributes, D::Error> {
        Json::deserialize(d).map(|v| Attributes::from_json(&v))
    }
}

/// Valid JSON text without the whitespace between its tokens.
fn minify(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if !matches!(c, ' ' | '\n' | '\r' | '\t') {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

impl State {
    /// An empty state with a fresh lineage.
    pub fn new() -> State {
        State {
            version: FORMAT_VERSION,
            strata_version: env!("CARGO_PKG_VERSION").to_string(),
            serial: 0,
            lineage: uuid::Uuid::new_v4().to_string(),
            outputs: BTreeMap::new(),
            resources: Vec::new(),
        }
    }

    /// Every instance's address (`module.m.aws_vpc.main[0]`), in state order.
    pub fn addresses(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.resources {
            for i in &r.instances {
                out.push(r.id.instance_address(i.index_key.as_ref()));
            }
        }
        out
    }
}

impl State {
    /// Joins the entries of a resource listed more than once into the
    /// first (Terraform reads such a state so), and names every instance
    /// that is then recorded twice: two current objects, or two deposed
    /// ones with the same key. Such a state says two things of one object.
    pub fn join_resources(&mut self) -> Vec<String> {
        let mut at: std::collections::HashMap<ResourceId, usize> = Default::default();
        let mut joined: Vec<ResourceState> = Vec::with_capacity(self.resources.len());
        for r in std::mem::take(&mut self.resources) {
            match at.get(&r.id) {
                Some(&i) => joined[i].instances.extend(r.instances),
                None => {
                    at.insert(r.id.clone(), joined.len());
                    joined.push(r);
                }
            }
        }
        self.resources = joined;
        let mut seen = std::collections::HashSet::new();
        let mut twice = Vec::new();
        for r in &self.resources {
            for i in &r.instances {
                if !seen.insert((&r.id, i.index_key.as_ref(), i.deposed.as_deref())) {
                    let addr = r.id.instance_address(i.index_key.as_ref());
                    twice.push(match &i.deposed {
                        Some(d) => format!("{addr} (deposed object {d})"),
                        None => addr,
                    });
                }
            }
        }
        twice
    }
}

impl Default for State {
    fn default() -> Self {
        State::new()
    }
}

/// The address of a resource instance as Terraform writes it.
pub fn address(
    module: Option<&str>,
    mode: Mode,
    type_name: &str,
    name: &str,
    key: Option<&InstanceKey>,
) -> String {
    let mut s = String::new();
    if let Some(m) = module {
        s.push_str(m);
        s.push('.');
    }
    if mode == Mode::Data {
        s.push_str("data.");
    }
    s.push_str(type_name);
    s.push('.');
    s.push_str(name);
    if let Some(k) = key {
        s.push_str(&key_text(k));
    }
    s
}

/// A parsed instance (or whole resource) address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Address {
    pub id: ResourceId,
    /// `None` addresses every instance of the resource.
    pub key: Option<InstanceKey>,
}

impl Address {
    /// Parses `module.a[0].module.b["x"].data.t.n["k"]`, `t.n[0]` or `t.n`.
    pub fn parse(s: &str) -> Option<Address> {
        let steps = split_steps(s)?;
        let mut i = 0;
        let mut module = Vec::new();
        while let (Some(Step::Name("module")), Some(Step::Name(call))) =
            (steps.get(i), steps.get(i + 1))
        {
            let mut m = format!("module.{call}");
            i += 2;
            if let Some(Step::Key(k)) = steps.get(i) {
                m.push_str(&key_text(k));
                i += 1;
            }
            module.push(m);
        }
        let (mode, type_name, name, key) = match &steps[i..] {
            [Step::Name("data"), Step::Name(t), Step::Name(n), rest @ ..] => {
                (Mode::Data, *t, *n, rest)
            }
            [Step::Name(t), Step::Name(n), rest @ ..] => (Mode::Managed, *t, *n, rest),
            _ => return None,
        };
        let key = match key {
            [] => None,
            [Step::Key(k)] => Some(k.clone()),
            _ => return None,
        };
        Some(Address {
            id: ResourceId {
                module: (!module.is_empty()).then(|| module.join(".")),
                mode,
                type_name: type_name.to_string(),
                name: name.to_string(),
            },
            key,
        })
    }

    /// Whether this address names the resource `r` (all of its instances
    /// when no key is given).
    pub fn matches_resource(&self, r: &ResourceState) -> bool {
        self.id == r.id
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.id.instance_address(self.key.as_ref()))
    }
}

enum Step<'a> {
    Name(&'a str),
    Key(InstanceKey),
}

fn key_text(k: &InstanceKey) -> String {
    match k {
        InstanceKey::Int(i) => format!("[{i}]"),
        InstanceKey::Str(s) => format!("[{}]", serde_json::Value::String(s.clone())),
    }
}

/// `a.b["k.x"][0]` as names and keys; a quoted key may hold any character.
fn split_steps(s: &str) -> Option<Vec<Step<'_>>> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let (key, len) = if after.starts_with('"') {
                let mut de = serde_json::Deserializer::from_str(after).into_iter::<String>();
                let k = de.next()?.ok()?;
                (InstanceKey::Str(k), de.byte_offset())
            } else {
                let end = after.find(']')?;
                (InstanceKey::Int(after[..end].parse().ok()?), end)
            };
            rest = after[len..].strip_prefix(']')?;
            out.push(Step::Key(key));
        } else {
            let rest2 = rest.strip_prefix('.').unwrap_or(rest);
            if rest2.len() != rest.len() && out.is_empty() {
                return None;
            }
            let end = rest2.find(['.', '[']).unwrap_or(rest2.len());
            if end == 0 {
                return None;
            }
            out.push(Step::Name(&rest2[..end]));
            rest = &rest2[end..];
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip() {
        for a in [
            "t.n",
            "t.n[3]",
            "data.t.n",
            r#"t.n["a.b]c"]"#,
            r#"module.a[0].module.b["x.y"].data.t.n["k"]"#,
            "module.a.t.n",
        ] {
            let parsed = Address::parse(a).unwrap_or_else(|| panic!("{a} did not parse"));
            assert_eq!(parsed.to_string(), a);
        }
        assert_eq!(
            Address::parse(r#"module.a["x"].t.n"#)
                .unwrap()
                .id
                .module
                .as_deref(),
            Some(r#"module.a["x"]"#)
        );
    }

    #[test]
    fn attributes_are_kept_compact_and_equal_as_json() {
        let pretty = "{\n  \"a\": [ 1, 2 ],\n  \"b\": \"x y\\\" \\\\ \\n\"\n}";
        let a: Attributes = serde_json::from_str(pretty).expect("parses");
        assert_eq!(a.text(), r#"{"a":[1,2],"b":"x y\" \\ \n"}"#);
        let b = Attributes::from_json(&serde_json::json!({"b": "x y\" \\ \n", "a": [1, 2]}));
        assert_eq!(a.json(), b.json());
        assert_eq!(serde_json::to_string(&a).expect("writes"), a.text());
        // Through serde's buffer (as journal lines are read), and through
        // a JSON value: the same attributes, compact.
        #[derive(Deserialize)]
        #[serde(tag = "kind")]
        enum Tagged {
            Put { a: Attributes },
        }
        let Tagged::Put { a: c } =
            serde_json::from_str(&format!(r#"{{"kind": "Put", "a": {pretty}}}"#)).expect("reads");
        assert_eq!(c.json(), a.json());
        assert_eq!(c.text(), a.text(), "compact, spelled the same");
        let d: Attributes =
            serde_json::from_value(serde_json::json!({"a": [1, 2]})).expect("reads");
        assert_eq!(d.text(), r#"{"a":[1,2]}"#);
    }

    #[test]
    fn malformed_addresses_are_refused() {
        for a in [
            "", "t", "t.n.x", ".t.n", "t..n", "t.n[", "t.n[x]", "t.n[0]x", "module.a",
        ] {
            assert!(Address::parse(a).is_none(), "{a} parsed");
        }
    }
}
