//! The state document. Its layout follows Terraform's state format version 4
//! (`version`, `serial`, `lineage`, `outputs`, `resources[].instances[]`)
//! so that people and tools that read Terraform state can read strata's.

pub use crate::addr::{Address, InstanceKey, Mode, ModulePath, ModuleStep, ResourceAddr};
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
    /// Where each cluster node pool with a `placement` runs, and where it
    /// could not, by `cluster.pool`: strata's own, beside Terraform's
    /// fields (Terraform ignores what it does not know).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub placements: BTreeMap<String, PoolPlacement>,
}

/// One pool's placement: the location its nodes were put on, and the
/// locations that had no capacity, each skipped until its cool-down ends.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolPlacement {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<Placed>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<PlacementFailure>,
}

/// A location a pool may run at: a cloud's region and capacity type; the
/// zones a shortage ruled out are `PlacementFailure`s of zone scope.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Location {
    pub cloud: String,
    pub region: String,
    /// `on_demand`, `spot`, or held capacity: `reserved` (a capacity
    /// reservation) or `capacity_block`.
    pub capacity: String,
    /// The reservation or block held capacity is in (`cr-…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<String>,
}

/// Where a pool's nodes are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placed {
    #[serde(flatten)]
    pub at: Location,
    pub instance_type: String,
    /// Zones left out because they had no capacity.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub without_zones: Vec<String>,
    /// When the create (or resize) that put the nodes here was asked
    /// (RFC 3339).
    pub since: String,
    /// Seconds from `since` to the first node with allocatable GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_gpu_after: Option<f64>,
    /// Of those, seconds until the apply that created the pool was done
    /// with it, and until its first node joined the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_created_after: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_joined_after: Option<f64>,
    /// GPUs allocatable on the pool's nodes when last looked at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_gpus: Option<u64>,
}

/// A location (or one zone of it) that had no capacity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementFailure {
    #[serde(flatten)]
    pub at: Location,
    /// The zone, for a shortage of one zone; else the whole location (or,
    /// with `cloud_wide`, every location on the cloud) failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cloud_wide: bool,
    pub instance_type: String,
    /// The cloud's error, as the driver reported it.
    pub reason: String,
    /// When it failed (RFC 3339).
    pub at_time: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputState {
    pub value: Json,
    #[serde(rename = "type")]
    pub ty: Json,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "ResourceRecord")]
pub struct ResourceState {
    pub id: ResourceAddr,
    /// The provider configuration's address; with OpenTofu's provider
    /// `for_each`, the configuration whose instances the objects name
    /// (each in its own `provider`).
    pub provider: String,
    pub instances: Vec<InstanceState>,
}

impl ResourceState {
    /// The provider configuration (instance) the object `i` belongs to.
    pub fn provider_of<'a>(&'a self, i: &'a InstanceState) -> &'a str {
        i.provider.as_deref().unwrap_or(&self.provider)
    }
}

/// A resource as written: OpenTofu writes `provider` on the resource, or,
/// when its objects belong to instances of a configuration with
/// `for_each`, on each object and not on the resource.
#[derive(Serialize)]
struct ResourceOut<'a> {
    #[serde(flatten)]
    id: &'a ResourceAddr,
    #[serde(skip_serializing_if = "Option::is_none")]
    provider: Option<&'a str>,
    instances: &'a [InstanceState],
}

impl Serialize for ResourceState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let keyed = self.instances.iter().any(|i| i.provider.is_some());
        ResourceOut {
            id: &self.id,
            provider: (!keyed).then_some(self.provider.as_str()),
            instances: &self.instances,
        }
        .serialize(s)
    }
}

/// A resource as the state file spells it. Read through this, not through
/// `flatten` (which buffers the whole record, objects included, as a
/// tree), so each object's attributes go straight to their text.
#[derive(Deserialize)]
struct ResourceRecord {
    #[serde(default)]
    module: ModulePath,
    mode: Mode,
    #[serde(rename = "type")]
    type_name: String,
    name: String,
    #[serde(default)]
    provider: Option<String>,
    instances: Vec<InstanceState>,
}

impl TryFrom<ResourceRecord> for ResourceState {
    type Error = String;

    /// An ephemeral resource is opened and closed within one run: a state
    /// that records one was not written by Terraform or strata.
    fn try_from(r: ResourceRecord) -> Result<ResourceState, String> {
        if r.mode == Mode::Ephemeral {
            return Err(format!(
                "the state records ephemeral.{}.{}, but ephemeral resources are never kept in a state",
                r.type_name, r.name
            ));
        }
        // Written on the objects instead: the configuration is theirs
        // without the instance key.
        let of_instances = r
            .instances
            .iter()
            .find_map(|i| i.provider.as_deref())
            .map(|p| crate::addr::split_provider_instance(p).0.to_string());
        let Some(provider) = r.provider.or(of_instances) else {
            return Err(format!(
                "{}.{} has no provider address, neither on the resource nor on its instances",
                r.type_name, r.name
            ));
        };
        Ok(ResourceState {
            id: ResourceAddr {
                module: r.module,
                mode: r.mode,
                type_name: r.type_name,
                name: r.name,
            },
            provider,
            instances: r.instances,
        })
    }
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
    /// The provider configuration instance the object belongs to, when
    /// it is one of a configuration with `for_each` (OpenTofu 1.9):
    /// `provider["…"].by_region["us-east-1"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    pub schema_version: u64,
    pub attributes: Attributes,
    /// What a provider plugin keeps beside the object, base64 as Terraform
    /// writes it; handed back to the provider with every later call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private: Option<String>,
    /// Paths (as JSON arrays of steps) of attributes holding sensitive values.
    #[serde(default)]
    pub sensitive_attributes: Vec<Json>,
    /// The version of its type's identity schema `identity` was written
    /// under (Terraform 1.12; where 1.12 writes it, after the sensitive
    /// paths). Left out when there is no identity, as
    /// Terraform before 1.12 writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_schema_version: Option<u64>,
    /// How the provider tells the object apart (protocol 6.9's resource
    /// identity), when its type declares one. Boxed: most objects have
    /// none, and a state holds an `InstanceState` per object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Box<Json>>,
    /// Addresses of the resources this instance depended on when last applied,
    /// so it can be destroyed in the right order after leaving the config.
    /// Left out when there are none, as Terraform writes it.
    #[serde(
        default,
        with = "crate::addr::as_text",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub dependencies: Vec<ResourceAddr>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub create_before_destroy: bool,
    /// Written by `lifecycle { destroy = false }`: this object is
    /// forgotten, never destroyed, even once its block is gone. Left out
    /// when false (Terraform reads past the field).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skip_destroy: bool,
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

impl From<Box<RawValue>> for Attributes {
    fn from(text: Box<RawValue>) -> Attributes {
        Attributes(text)
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
        let compact = minify(&text);
        if compact.len() == text.len() {
            // Nothing taken out, so nothing to check: serde_json handed
            // over this text having read it through as one JSON value
            // (`minify` only drops whitespace between tokens).
            // SAFETY: not unsafe in any memory sense: `from_string_unchecked`
            // only trusts the text to be one JSON value with no whitespace
            // around it, as a raw value's text is.
            return Ok(Attributes(unsafe {
                RawValue::from_string_unchecked(compact)
            }));
        }
        RawValue::from_string(compact)
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

/// Valid JSON text without the whitespace between its tokens. Works on
/// bytes: whitespace and quotes are ASCII, which never occurs inside a
/// multi-byte character, so what is kept stays UTF-8. Strings, most of a
/// state's text, are copied whole: their end found by `memchr`.
fn minify(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        at += 1;
        match b {
            b' ' | b'\n' | b'\r' | b'\t' => {}
            b'"' => {
                let end = string_end(bytes, at);
                out.extend_from_slice(&bytes[at - 1..end]);
                at = end;
            }
            _ => out.push(b),
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// Where the string whose text starts at `from` (after its opening
/// quote) ends: just past its closing quote, or at the end of `bytes`.
fn string_end(bytes: &[u8], mut from: usize) -> usize {
    while let Some(i) = memchr::memchr2(b'"', b'\\', &bytes[from..]) {
        let at = from + i;
        match bytes[at] {
            // An escape: the next byte is part of it, whatever it is.
            b'\\' => from = at + 2,
            _ => return at + 1,
        }
        if from >= bytes.len() {
            break;
        }
    }
    bytes.len()
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
            placements: BTreeMap::new(),
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
        let mut at: std::collections::HashMap<ResourceAddr, usize> = Default::default();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_provider_instances_are_written_as_opentofu_writes_them() {
        // OpenTofu 1.9: a resource whose objects belong to instances of a
        // configuration with for_each has no `provider`; each object does.
        let text = r#"{"mode":"managed","type":"t","name":"n","instances":[
            {"index_key":"a","provider":"provider[\"x/y/z\"].p[\"a\"]","schema_version":0,"attributes":{}},
            {"index_key":"b","provider":"provider[\"x/y/z\"].p[\"b\"]","schema_version":0,"attributes":{}}]}"#;
        let r: ResourceState = serde_json::from_str(text).expect("reads");
        assert_eq!(r.provider, "provider[\"x/y/z\"].p");
        assert_eq!(
            r.provider_of(&r.instances[1]),
            "provider[\"x/y/z\"].p[\"b\"]"
        );
        let written = serde_json::to_value(&r).expect("writes");
        assert!(written.get("provider").is_none(), "{written}");
        assert_eq!(
            written["instances"][0]["provider"],
            "provider[\"x/y/z\"].p[\"a\"]"
        );
        // Neither place names one: not a state OpenTofu or strata wrote.
        let bare = r#"{"mode":"managed","type":"t","name":"n","instances":[{"schema_version":0,"attributes":{}}]}"#;
        assert!(serde_json::from_str::<ResourceState>(bare).is_err());
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
        // Strings end at an unescaped quote: after an escaped backslash,
        // past escaped quotes, with spaces, escapes and multi-byte text kept.
        let tricky = r#"{ "k\\" : [ "a \" b\\" , "\tü \"" ] }"#;
        let e: Attributes = serde_json::from_str(tricky).expect("parses");
        assert_eq!(e.text(), r#"{"k\\":["a \" b\\","\tü \""]}"#);
        assert_eq!(
            e.json(),
            serde_json::from_str::<Json>(tricky).map_err(|e| e.to_string())
        );
    }

    /// Dependencies are written as Terraform writes them: as addresses'
    /// text, and not at all when there are none.
    #[test]
    fn dependencies_are_text_and_absent_when_none() {
        let text =
            r#"{"schema_version":0,"attributes":{},"dependencies":["module.m.data.t.n","t.x"]}"#;
        let mut i: InstanceState = serde_json::from_str(text).expect("reads");
        assert_eq!(i.dependencies[0].module.to_string(), "module.m");
        assert_eq!(i.dependencies[0].mode, Mode::Data);
        let written = serde_json::to_value(&i).expect("writes");
        assert_eq!(
            written["dependencies"],
            serde_json::json!(["module.m.data.t.n", "t.x"])
        );
        i.dependencies.clear();
        let written = serde_json::to_value(&i).expect("writes");
        assert!(written.get("dependencies").is_none(), "{written}");
        let bad = r#"{"schema_version":0,"attributes":{},"dependencies":["t.x[0]"]}"#;
        assert!(serde_json::from_str::<InstanceState>(bad).is_err());
    }

    /// Terraform 1.10 records an object's dependency on an ephemeral
    /// resource; a state never records an ephemeral resource itself.
    #[test]
    fn ephemeral_resources_are_named_but_never_kept() {
        let text = r#"{"schema_version":0,"attributes":{},"dependencies":["ephemeral.t.n"]}"#;
        let i: InstanceState = serde_json::from_str(text).expect("reads");
        assert_eq!(i.dependencies[0].mode, Mode::Ephemeral);
        assert_eq!(i.dependencies[0].to_string(), "ephemeral.t.n");
        let kept = r#"{"mode":"ephemeral","type":"t","name":"n","provider":"p","instances":[]}"#;
        let refused = serde_json::from_str::<ResourceState>(kept).expect_err("refused");
        assert!(refused.to_string().contains("never kept"), "{refused}");
    }
}
