//! The vendors' own API definitions as the judge of the stand-ins:
//! Google's discovery documents and GitHub's REST API description, each
//! reduced by the script beside it in `testing/definitions` (with the
//! package and revision it came from) to one form. A request's method is
//! found by its HTTP method and path, and its body held to the method's
//! request schema (no field the schema lacks, each of its type, enum or
//! alternatives, the required ones there, none the server alone sets);
//! the stand-in's answer is held to the response schema the same way.
//! Each stand-in refuses a failing request in its vendor's words; an
//! answer that fails is the stand-in's own bug and is turned into a 500
//! that names it, so the test that met it fails.

use crate::Body;
use hyper::Response;
use serde_json::{Map, Value as Json};
use std::sync::OnceLock;

/// One API's reduced definitions.
pub struct Api {
    methods: Vec<Method>,
    /// Resource types by `type@api-version` (lower case) → their body's
    /// schema, for an API addressed by resource (Azure Resource Manager).
    resources: Map<String, Json>,
    schemas: Map<String, Json>,
    /// Bodies are read by proto3's JSON mapping (Google's APIs): a number
    /// may come as a decimal string and a 64-bit integer, typed string, as
    /// a number.
    proto_json: bool,
}

pub struct Method {
    pub id: String,
    http: String,
    /// The path template, relative to the service path, in segments.
    segments: Vec<String>,
    pub request: Option<String>,
    pub response: Option<String>,
}

/// Which way a body goes: a request may not carry what only the server sets.
#[derive(Clone, Copy, PartialEq)]
pub enum Side {
    Request,
    Response,
}

const DOCUMENTS: [(&str, &str); 8] = [
    (
        "compute",
        include_str!("../../definitions/google/compute.v1.json"),
    ),
    (
        "container",
        include_str!("../../definitions/google/container.v1.json"),
    ),
    ("iam", include_str!("../../definitions/google/iam.v1.json")),
    (
        "cloudresourcemanager",
        include_str!("../../definitions/google/cloudresourcemanager.v1.json"),
    ),
    (
        "storage",
        include_str!("../../definitions/google/storage.v1.json"),
    ),
    (
        "monitoring",
        include_str!("../../definitions/google/monitoring.v3.json"),
    ),
    (
        "github",
        include_str!("../../definitions/github/api.github.com.json"),
    ),
    (
        "azure",
        include_str!("../../definitions/azure/resources.json"),
    ),
];

/// The API named `name` (`compute`), read once.
pub fn api(name: &str) -> Option<&'static Api> {
    static APIS: OnceLock<Vec<(&'static str, Api)>> = OnceLock::new();
    let all = APIS.get_or_init(|| {
        DOCUMENTS
            .iter()
            .filter_map(|(n, text)| {
                let proto_json = !matches!(*n, "github" | "azure");
                Some((*n, Api::parse(text, proto_json)?))
            })
            .collect()
    });
    all.iter().find(|(n, _)| *n == name).map(|(_, a)| a)
}

impl Api {
    fn parse(text: &str, proto_json: bool) -> Option<Api> {
        let doc: Json = serde_json::from_str(text).ok()?;
        let methods = doc["methods"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(id, m)| Method {
                id: id.clone(),
                http: m["http"].as_str().unwrap_or_default().to_string(),
                segments: relative(m["path"].as_str().unwrap_or_default())
                    .split('/')
                    .map(str::to_string)
                    .collect(),
                request: m["request"].as_str().map(str::to_string),
                response: m["response"].as_str().map(str::to_string),
            })
            .collect();
        let schemas = doc["schemas"].as_object()?.clone();
        let resources = doc["resources"].as_object().cloned().unwrap_or_default();
        Some(Api {
            methods,
            resources,
            schemas,
            proto_json,
        })
    }

    /// The method `http` on `path` (relative to the API's version root,
    /// `projects/p/global/networks`) is, if any: literal segments equal,
    /// a `{name}` any one segment, a `{+name}` the rest, `{x}:verb` a
    /// segment ending in that verb.
    pub fn method(&self, http: &str, path: &str) -> Option<&Method> {
        let want: Vec<&str> = path.trim_matches('/').split('/').collect();
        self.methods
            .iter()
            .filter(|m| m.http == http)
            .find(|m| fits(&m.segments, &want))
    }

    /// The body schema of resource type `key` (`type@api-version`, any
    /// case), if defined.
    pub fn resource(&self, key: &str) -> Option<&str> {
        self.resources.get(&key.to_ascii_lowercase())?.as_str()
    }

    /// Whether schema `name` has a field at `path` (through references):
    /// what a stand-in may answer with.
    pub fn declares(&self, name: &str, path: &[&str]) -> bool {
        let mut at = self.schemas.get(name);
        for field in path {
            let resolved = at.map(|s| match s["$ref"].as_str() {
                Some(r) => self.schemas.get(r),
                None => Some(s),
            });
            at = resolved.flatten().and_then(|s| s["properties"].get(*field));
        }
        at.is_some()
    }

    /// What in `value` the schema `name` does not allow, each with its
    /// JSON path from `at`.
    pub fn check(&self, name: &str, value: &Json, side: Side, at: &str) -> Vec<String> {
        let mut out = Vec::new();
        match self.schemas.get(name) {
            Some(s) => self.value(s, value, side, at, &mut out),
            None => out.push(format!("{at}: no schema {name} in the definitions")),
        }
        out
    }

    fn value(&self, s: &Json, v: &Json, side: Side, at: &str, out: &mut Vec<String>) {
        if v.is_null() {
            return;
        }
        if let Some(r) = s["$ref"].as_str() {
            match self.schemas.get(r) {
                Some(t) => self.value(t, v, side, at, out),
                None => out.push(format!("{at}: no schema {r} in the definitions")),
            }
            return;
        }
        if let Some(alternatives) = s["one_of"].as_array() {
            let fits = alternatives.iter().any(|a| {
                let mut tried = Vec::new();
                self.value(a, v, side, at, &mut tried);
                tried.is_empty()
            });
            if !fits {
                out.push(format!("{at}: {v} fits none of its alternatives"));
            }
            return;
        }
        if let Some(parts) = s["all_of"].as_array() {
            // One object with every part's fields: a field one part names
            // is no stranger to another.
            let merged = self.merged(parts);
            self.value(&merged, v, side, at, out);
            return;
        }
        if let Some(allowed) = s["enum"].as_array() {
            if !allowed.contains(v) {
                out.push(format!(
                    "{at}: {v} is not one of {}",
                    Json::Array(allowed.clone())
                ));
            }
        }
        match s["type"].as_str().unwrap_or("any") {
            "object" => self.object(s, v, side, at, out),
            "array" => match v.as_array() {
                Some(items) => {
                    for (i, x) in items.iter().enumerate() {
                        self.value(&s["items"], x, side, &format!("{at}[{i}]"), out);
                    }
                }
                None => out.push(format!("{at}: {v} is not an array")),
            },
            "string" if !(v.is_string() || self.proto_json && integral(s) && v.is_number()) => {
                out.push(format!("{at}: {v} is not a string"))
            }
            "boolean" if !v.is_boolean() => out.push(format!("{at}: {v} is not a boolean")),
            "integer" | "number" if !(v.is_number() || self.proto_json && numeric(v)) => {
                out.push(format!("{at}: {v} is not a number"))
            }
            _ => {}
        }
    }

    /// The parts of an `allOf` as one object schema.
    fn merged(&self, parts: &[Json]) -> Json {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for p in parts {
            let part = match p["$ref"].as_str() {
                Some(r) => self.schemas.get(r).cloned().unwrap_or_default(),
                None => p.clone(),
            };
            if let Some(f) = part["properties"].as_object() {
                properties.extend(f.clone());
            }
            required.extend(part["required"].as_array().cloned().unwrap_or_default());
        }
        serde_json::json!({"type": "object", "properties": properties, "required": required})
    }

    fn object(&self, s: &Json, v: &Json, side: Side, at: &str, out: &mut Vec<String>) {
        let Some(fields) = v.as_object() else {
            out.push(format!("{at}: {v} is not an object"));
            return;
        };
        for k in s["required"].as_array().into_iter().flatten() {
            if let Some(k) = k.as_str().filter(|k| !fields.contains_key(*k)) {
                out.push(format!("{at}.{k}: required, missing"));
            }
        }
        for (k, x) in fields {
            let path = format!("{at}.{k}");
            match (s["properties"].get(k), s.get("additional")) {
                (Some(f), _) => {
                    // An empty object sets nothing (a driver sends a
                    // read-only `properties` as `{}`).
                    let sets = !x.as_object().is_some_and(Map::is_empty);
                    if side == Side::Request && f["read_only"] == true && sets {
                        out.push(format!("{path}: output only, set by the server"));
                    }
                    self.value(f, x, side, &path, out);
                }
                (None, Some(a)) => self.value(a, x, side, &path, out),
                (None, None) if s.get("properties").is_none() => {}
                (None, None) => out.push(format!("{path}: unknown field")),
            }
        }
    }
}

/// A 64-bit integer, which proto3's JSON writes as a string.
fn integral(s: &Json) -> bool {
    matches!(s["format"].as_str(), Some("int64" | "uint64"))
}

/// A number written as a decimal string, which proto3's JSON reads.
fn numeric(v: &Json) -> bool {
    v.as_str().is_some_and(|t| t.parse::<f64>().is_ok())
}

/// A method's path under its API's version root: container's and iam's
/// carry their version (`v1/projects/…`), compute's and storage's do not.
fn relative(path: &str) -> &str {
    match path.split_once('/') {
        Some((v, rest)) if v.starts_with('v') && v[1..].bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => path,
    }
}

/// A request's body that its method's definition refuses: the method
/// and what is wrong, each at its JSON path.
#[derive(Debug)]
pub struct Refused {
    pub method: String,
    pub problems: Vec<String>,
}

impl Refused {
    pub fn said(&self) -> String {
        format!("{}: {}", self.method, self.problems.join("; "))
    }
}

/// The method of API `api` that `method` on `path` (under the API's
/// version root) is, with its body judged by the method's request schema.
pub fn request(
    api: &str,
    method: &str,
    path: &str,
    body: &[u8],
) -> Result<Option<&'static Method>, Refused> {
    let Some(def) = self::api(api) else {
        return Ok(None);
    };
    let Some(m) = def.method(method, path) else {
        return Ok(None);
    };
    let (Some(schema), false) = (&m.request, body.is_empty()) else {
        return Ok(Some(m));
    };
    let Ok(value) = serde_json::from_slice::<Json>(body) else {
        return Ok(Some(m));
    };
    let problems = def.check(schema, &value, Side::Request, "$");
    match problems.is_empty() {
        true => Ok(Some(m)),
        false => Err(Refused {
            method: m.id.clone(),
            problems,
        }),
    }
}

/// The stand-in's answer to `m` when it fits the method's response
/// schema (or is no success); else `broken`'s answer with a message
/// naming where it does not fit: the stand-in's bug, which fails the test
/// that met it.
pub fn judged(
    api: &str,
    m: &Method,
    answer: Response<Body>,
    broken: impl Fn(String) -> Response<Body>,
) -> Response<Body> {
    match &m.response {
        Some(schema) => judged_by(api, schema, &m.id, answer, broken),
        None => answer,
    }
}

/// The stand-in's answer `what` when it fits schema `schema` of `api` (or
/// is no success); else `broken`'s answer naming where it does not fit.
pub fn judged_by(
    api: &str,
    schema: &str,
    what: &str,
    answer: Response<Body>,
    broken: impl Fn(String) -> Response<Body>,
) -> Response<Body> {
    let Some(def) = self::api(api).filter(|_| answer.status().is_success()) else {
        return answer;
    };
    let (parts, body) = answer.into_parts();
    let bytes = crate::ready_bytes(body);
    let found = match serde_json::from_slice::<Json>(&bytes) {
        Ok(v) => def.check(schema, &v, Side::Response, "$"),
        Err(_) if bytes.is_empty() => Vec::new(),
        Err(e) => vec![format!("$: not JSON: {e}")],
    };
    if !found.is_empty() {
        return broken(format!(
            "the stand-in's answer to {what} does not fit its definition: {}",
            found.join("; ")
        ));
    }
    Response::from_parts(parts, Body::from(bytes))
}

fn fits(template: &[String], path: &[&str]) -> bool {
    if template.last().is_some_and(|t| t.starts_with("{+")) {
        return path.len() >= template.len()
            && template[..template.len() - 1]
                .iter()
                .zip(path)
                .all(|(t, p)| segment(t, p));
    }
    template.len() == path.len() && template.iter().zip(path).all(|(t, p)| segment(t, p))
}

fn segment(template: &str, actual: &str) -> bool {
    match template.split_once('}') {
        Some((open, verb)) if open.starts_with('{') => {
            verb.is_empty() || (actual.ends_with(verb) && actual.len() > verb.len())
        }
        _ => template == actual,
    }
}

#[cfg(test)]
impl Api {
    /// The names of schema `name`'s fields that a request may carry.
    pub fn fields(&self, name: &str) -> Vec<String> {
        let props = self
            .schemas
            .get(name)
            .and_then(|s| s["properties"].as_object());
        props
            .into_iter()
            .flatten()
            .filter(|(_, f)| f["read_only"] != true)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// `base` with every field of schema `name` that a request may carry
    /// set: what `base` gives kept, each other field given a value of its
    /// type (an enum's first value short of `…UNSPECIFIED`), a list or map
    /// one item, a type met again inside itself left out. For replaying
    /// "every optional field set" against a stand-in.
    pub fn filled(&self, name: &str, base: &Json) -> Json {
        self.fill(&serde_json::json!({ "$ref": name }), base, &mut Vec::new())
    }

    /// A value for field `field` of schema `name`, every field in it set.
    pub fn filled_field(&self, name: &str, field: &str) -> Json {
        let f = self.schemas.get(name).map(|s| &s["properties"][field]);
        self.fill(
            f.unwrap_or(&Json::Null),
            &Json::Null,
            &mut vec![name.to_string()],
        )
    }

    fn fill(&self, s: &Json, base: &Json, seen: &mut Vec<String>) -> Json {
        if let Some(r) = s["$ref"].as_str() {
            let Some(t) = self.schemas.get(r).filter(|_| !seen.iter().any(|x| x == r)) else {
                return base.clone();
            };
            seen.push(r.to_string());
            let v = self.fill(t, base, seen);
            seen.pop();
            return v;
        }
        if let Some(first) = s["one_of"].as_array().and_then(|a| a.first()) {
            return self.fill(first, base, seen);
        }
        if let Some(parts) = s["all_of"].as_array() {
            return self.fill(&self.merged(parts), base, seen);
        }
        match s["type"].as_str() {
            Some("object") => self.fill_object(s, base, seen),
            Some("array") => {
                let items: Vec<Json> = match base.as_array() {
                    Some(given) if !given.is_empty() => given
                        .iter()
                        .map(|x| self.fill(&s["items"], x, seen))
                        .collect(),
                    _ => vec![self.fill(&s["items"], &Json::Null, seen)],
                };
                Json::Array(items.into_iter().filter(|v| !v.is_null()).collect())
            }
            _ if !base.is_null() => base.clone(),
            _ => scalar(s),
        }
    }

    fn fill_object(&self, s: &Json, base: &Json, seen: &mut Vec<String>) -> Json {
        let mut out = base.as_object().cloned().unwrap_or_default();
        if let Some(fields) = s["properties"].as_object() {
            for (k, f) in fields.iter().filter(|(_, f)| f["read_only"] != true) {
                let given = out.get(k).cloned().unwrap_or(Json::Null);
                match self.fill(f, &given, seen) {
                    Json::Null => {}
                    v => {
                        out.insert(k.clone(), v);
                    }
                }
            }
        } else if let Some(a) = s.get("additional") {
            if out.is_empty() {
                out.insert("strata-replay".into(), Json::Null);
            }
            for v in out.values_mut() {
                *v = self.fill(a, v, seen);
            }
        }
        Json::Object(out)
    }
}

/// A value of a scalar schema's type.
#[cfg(test)]
fn scalar(s: &Json) -> Json {
    use serde_json::json;
    if let Some(e) = s["enum"].as_array() {
        let usable = |v: &&Json| !v.as_str().is_some_and(|t| t.ends_with("UNSPECIFIED"));
        return e
            .iter()
            .find(usable)
            .or(e.first())
            .cloned()
            .unwrap_or_default();
    }
    match (s["type"].as_str(), s["format"].as_str()) {
        (Some("boolean"), _) => json!(true),
        (Some("integer" | "number"), _) => json!(1),
        (Some("string"), Some("int64" | "uint64")) => json!("1"),
        (Some("string"), Some("byte")) => json!("c3RyYXRh"),
        (Some("string"), Some("date-time" | "google-datetime")) => json!("2026-01-01T00:00:00Z"),
        (Some("string"), _) => json!("strata-replay"),
        _ => Json::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_methods_by_path_and_holds_bodies_to_their_schemas() {
        let compute = api("compute").expect("compute's definitions");
        let m = compute
            .method("POST", "projects/p/global/networks")
            .expect("networks.insert");
        assert_eq!(m.id, "compute.networks.insert");
        let schema = m.request.as_deref().expect("a request schema");
        let ok = json!({"name": "n", "autoCreateSubnetworks": false, "routingConfig": {"routingMode": "REGIONAL"}});
        assert!(compute.check(schema, &ok, Side::Request, "$").is_empty());
        let bad = json!({"name": 3, "autoCreateSubnetwork": false, "id": "1", "routingConfig": {"routingMode": "LOCAL"}});
        let found = compute.check(schema, &bad, Side::Request, "$");
        let said = found.join("\n");
        for want in [
            "$.name: 3 is not a string",
            "$.autoCreateSubnetwork: unknown field",
            "$.id: output only",
            "$.routingConfig.routingMode: \"LOCAL\" is not one of",
        ] {
            assert!(said.contains(want), "{want}: {said}");
        }
        assert!(compute
            .check(schema, &json!({"id": "1"}), Side::Response, "$")
            .is_empty());
        let container = api("container").expect("container's definitions");
        let m = container
            .method(
                "POST",
                "projects/p/locations/us-central1/clusters/c:setMaintenancePolicy",
            )
            .expect("a custom verb");
        assert!(m.id.ends_with("setMaintenancePolicy"), "{}", m.id);
    }

    /// GitHub's description: required fields, alternatives (a label by
    /// name or as an object), and the operation named in a refusal.
    #[test]
    fn github_requests_and_answers_are_held_to_its_description() {
        let ok = json!({"title": "drift: prod", "body": "b", "labels": ["strata:drift"]});
        let m = request(
            "github",
            "POST",
            "repos/o/r/issues",
            ok.to_string().as_bytes(),
        )
        .expect("fits")
        .expect("issues/create");
        assert_eq!(m.id, "issues/create");
        let bad = json!({"body": "b", "labels": [3], "asignee": "x"});
        let refused = request(
            "github",
            "POST",
            "repos/o/r/issues",
            bad.to_string().as_bytes(),
        )
        .err()
        .expect("refused");
        let said = refused.said();
        for want in [
            "issues/create",
            "$.title: required, missing",
            "$.labels[0]: 3 fits none",
            "$.asignee: unknown field",
        ] {
            assert!(said.contains(want), "{want}: {said}");
        }
        let github = api("github").expect("github's description");
        let thin = json!({"number": 1, "title": "t", "state": "open"});
        let found = github.check("issue", &thin, Side::Response, "$").join("\n");
        assert!(found.contains("$.user: required, missing"), "{found}");
    }
}
