//! Google's own API definitions as the judge of the GCP stand-in: the
//! discovery documents of the APIs strata's driver calls, reduced by
//! `testing/definitions/google/reduce.py` (with the package and revision
//! they came from), find the method a request is for by its HTTP method
//! and path, and hold its body to the method's request schema (no field
//! the schema lacks, each of its type and enum, none the server alone
//! sets) and the stand-in's answer to the response schema. A request
//! that fails is refused as Google refuses it (400 `INVALID_ARGUMENT`,
//! naming the field); an answer that fails is the stand-in's own bug and
//! is turned into a 500 that names it, so the test that met it fails.

use serde_json::{Map, Value as Json};
use std::sync::OnceLock;

/// One API's reduced definitions.
pub struct Api {
    methods: Vec<Method>,
    schemas: Map<String, Json>,
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

const DOCUMENTS: [(&str, &str); 5] = [
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
];

/// The API named `name` (`compute`), read once.
pub fn api(name: &str) -> Option<&'static Api> {
    static APIS: OnceLock<Vec<(&'static str, Api)>> = OnceLock::new();
    let all = APIS.get_or_init(|| {
        DOCUMENTS
            .iter()
            .filter_map(|(n, text)| Some((*n, Api::parse(text)?)))
            .collect()
    });
    all.iter().find(|(n, _)| *n == name).map(|(_, a)| a)
}

impl Api {
    fn parse(text: &str) -> Option<Api> {
        let doc: Json = serde_json::from_str(text).ok()?;
        let methods = doc["methods"]
            .as_object()?
            .iter()
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
        Some(Api { methods, schemas })
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
            "string" if !v.is_string() => out.push(format!("{at}: {v} is not a string")),
            "boolean" if !v.is_boolean() => out.push(format!("{at}: {v} is not a boolean")),
            "integer" | "number" if !v.is_number() => {
                out.push(format!("{at}: {v} is not a number"))
            }
            _ => {}
        }
    }

    fn object(&self, s: &Json, v: &Json, side: Side, at: &str, out: &mut Vec<String>) {
        let Some(fields) = v.as_object() else {
            out.push(format!("{at}: {v} is not an object"));
            return;
        };
        for (k, x) in fields {
            let path = format!("{at}.{k}");
            match (s["properties"].get(k), s.get("additional")) {
                (Some(f), _) => {
                    if side == Side::Request && f["read_only"] == true {
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

/// A method's path under its API's version root: container's and iam's
/// carry their version (`v1/projects/…`), compute's and storage's do not.
fn relative(path: &str) -> &str {
    match path.split_once('/') {
        Some((v, rest)) if v.starts_with('v') && v[1..].bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => path,
    }
}

/// A request judged by its method's definition: `Err` with Google's
/// answer to a body its request schema refuses.
pub fn request(
    api: &str,
    method: &str,
    path: &str,
    body: &[u8],
) -> Result<Option<&'static Method>, Json> {
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
    let found = def.check(schema, &value, Side::Request, "$");
    if found.is_empty() {
        return Ok(Some(m));
    }
    let message = format!(
        "Invalid JSON payload received for {}: {}",
        m.id,
        found.join("; ")
    );
    Err(
        serde_json::json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT",
        "errors": [{"message": message, "domain": "global", "reason": "invalid"}]}}),
    )
}

/// What in the stand-in's answer `body` to `m` its response schema does
/// not allow.
pub fn answer(api: &str, m: &Method, body: &[u8]) -> Vec<String> {
    let (Some(def), Some(schema)) = (self::api(api), &m.response) else {
        return Vec::new();
    };
    match serde_json::from_slice::<Json>(body) {
        Ok(v) => def.check(schema, &v, Side::Response, "$"),
        Err(_) if body.is_empty() => Vec::new(),
        Err(e) => vec![format!("$: not JSON: {e}")],
    }
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
}
