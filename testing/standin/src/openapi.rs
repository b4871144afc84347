//! An object held to its schema as the API server holds it: a custom
//! resource to its CRD's structural schema (OpenAPI v3), a built-in kind
//! to Kubernetes' own definitions (`testing/definitions/kubernetes`,
//! reduced to the same structural form, references kept by name). Fields
//! the schema does not declare are refused (server-side apply's "field not
//! declared in schema"), then types, required fields, enums, formats,
//! patterns, lengths, counts and bounds, each error in the API server's
//! words at its field path. CEL rules (`x-kubernetes-validations`) are not
//! evaluated.

use serde_json::{Map, Value as Json};
use std::sync::OnceLock;

/// Kubernetes' definitions of the built-in kinds the stand-in serves.
const BUILTIN: &str = include_str!("../../definitions/kubernetes/v1.33.0.json");

/// What the API server would refuse in a custom resource `value` (the
/// whole object; its `metadata` is the server's to check), one message per
/// problem.
pub fn check(schema: &Json, value: &Json) -> Vec<String> {
    let none = Map::new();
    let mut out = Vec::new();
    Schemas { defs: &none }.top(schema, value, &mut out);
    out
}

/// What the API server would refuse in a built-in object of `kind`
/// (`apps/v1/Deployment`), metadata included; `None` for a kind the
/// definitions lack.
pub fn check_builtin(kind: &str, value: &Json) -> Option<Vec<String>> {
    let (defs, schema) = builtin(kind)?;
    let mut out = Vec::new();
    let s = Schemas { defs };
    for (name, v) in value.as_object().into_iter().flatten() {
        match schema["properties"].get(name) {
            Some(f) => s.field(f, v, name, &mut out),
            None => out.push(format!(".{name}: field not declared in schema")),
        }
    }
    Some(out)
}

/// Kubernetes' definitions, and the schema of built-in `kind`.
fn builtin(kind: &str) -> Option<(&'static Map<String, Json>, &'static Json)> {
    static DOC: OnceLock<Json> = OnceLock::new();
    let doc = DOC.get_or_init(|| serde_json::from_str(BUILTIN).unwrap_or_default());
    let defs = doc["schemas"].as_object()?;
    Some((defs, defs.get(doc["kinds"][kind].as_str()?)?))
}

/// An object of built-in `kind` with every field its definition has set
/// (a value of each field's type, an enum's first value, one item per list
/// and map, a type met again inside itself left out), `base` kept where it
/// gives a value: for replaying "every optional field set" against the
/// stand-in.
#[cfg(test)]
pub fn filled(kind: &str, base: &Json) -> Json {
    let Some((defs, schema)) = builtin(kind) else {
        return base.clone();
    };
    Schemas { defs }.fill(schema, base, &mut Vec::new())
}

/// The definitions a schema's references name (none for a CRD's).
struct Schemas<'a> {
    defs: &'a Map<String, Json>,
}

fn preserves(schema: &Json) -> bool {
    schema["x-kubernetes-preserve-unknown-fields"] == Json::Bool(true)
}

/// The JSON type the API server names for `v`.
fn kind_of(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

#[cfg(test)]
impl Schemas<'_> {
    fn fill(&self, schema: &Json, base: &Json, seen: &mut Vec<String>) -> Json {
        if let Some(r) = schema["$ref"].as_str() {
            let Some(d) = self.defs.get(r).filter(|_| !seen.iter().any(|x| x == r)) else {
                return base.clone();
            };
            seen.push(r.to_string());
            let v = self.fill(d, base, seen);
            seen.pop();
            return v;
        }
        if !base.is_null() && !base.is_object() && !base.is_array() {
            return base.clone();
        }
        if let Some(e) = schema["enum"].as_array().and_then(|e| e.first()) {
            return e.clone();
        }
        if schema["x-kubernetes-int-or-string"] == Json::Bool(true) {
            return Json::from(1);
        }
        let kind = match &schema["type"] {
            Json::Array(ts) => ts.first().and_then(Json::as_str).unwrap_or_default(),
            t => t.as_str().unwrap_or_default(),
        };
        match kind {
            "object" => {
                let mut out = base.as_object().cloned().unwrap_or_default();
                if let Some(props) = schema["properties"].as_object() {
                    for (k, f) in props {
                        let given = out.get(k).cloned().unwrap_or(Json::Null);
                        match self.fill(f, &given, seen) {
                            Json::Null => {}
                            v => {
                                out.insert(k.clone(), v);
                            }
                        }
                    }
                } else if let Some(a) = schema.get("additionalProperties") {
                    if out.is_empty() {
                        out.insert("strata-replay".into(), self.fill(a, &Json::Null, seen));
                    }
                }
                Json::Object(out)
            }
            "array" => match base.as_array() {
                Some(given) if !given.is_empty() => Json::Array(
                    given
                        .iter()
                        .map(|x| self.fill(&schema["items"], x, seen))
                        .collect(),
                ),
                _ => match self.fill(&schema["items"], &Json::Null, seen) {
                    Json::Null => Json::Null,
                    v => Json::Array(vec![v]),
                },
            },
            "string" => Json::from("strata-replay"),
            "integer" | "number" => Json::from(1),
            "boolean" => Json::Bool(true),
            _ => Json::Null,
        }
    }
}

impl Schemas<'_> {
    /// A custom resource's fields but its metadata.
    fn top(&self, schema: &Json, value: &Json, out: &mut Vec<String>) {
        for (name, v) in value.as_object().into_iter().flatten() {
            if name == "metadata" || name == "apiVersion" || name == "kind" {
                continue;
            }
            match schema["properties"].get(name) {
                Some(s) => self.field(s, v, name, out),
                None if preserves(schema) => {}
                None => out.push(format!(".{name}: field not declared in schema")),
            }
        }
    }

    /// The schema a reference names, or the schema itself.
    fn resolved<'s>(&'s self, schema: &'s Json) -> &'s Json {
        match schema["$ref"].as_str().and_then(|r| self.defs.get(r)) {
            Some(d) => d,
            None => schema,
        }
    }

    fn field(&self, schema: &Json, v: &Json, path: &str, out: &mut Vec<String>) {
        let schema = self.resolved(schema);
        if v.is_null() && schema["nullable"] == Json::Bool(true) {
            return;
        }
        if !typed(schema, v, path, out) {
            return;
        }
        values(schema, v, path, out);
        match v {
            Json::Object(map) => self.object(schema, map, path, out),
            Json::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if let Some(s) = schema.get("items") {
                        self.field(s, item, &format!("{path}[{i}]"), out);
                    }
                }
            }
            _ => {}
        }
    }

    fn object(&self, schema: &Json, map: &Map<String, Json>, path: &str, out: &mut Vec<String>) {
        for r in schema["required"].as_array().into_iter().flatten() {
            let name = r.as_str().unwrap_or_default();
            if !map.contains_key(name) {
                out.push(format!("{path}.{name}: Required value"));
            }
        }
        let props = schema["properties"].as_object();
        for (name, v) in map {
            let at = format!("{path}.{name}");
            match (
                props.and_then(|p| p.get(name)),
                schema.get("additionalProperties"),
            ) {
                (Some(s), _) => self.field(s, v, &at, out),
                (None, Some(s)) if s.is_object() => self.field(s, v, &at, out),
                (None, Some(Json::Bool(true))) => {}
                (None, _) if preserves(schema) => {}
                // A map with no declared fields and no rule for others is an
                // open object only when it declares nothing at all.
                (None, _) if props.is_none() && schema.get("additionalProperties").is_none() => {}
                (None, _) => out.push(format!(".{at}: field not declared in schema")),
            }
        }
    }
}

/// Whether `v` is of the schema's type (an int-or-string either); the
/// error when not.
fn typed(schema: &Json, v: &Json, path: &str, out: &mut Vec<String>) -> bool {
    let got = kind_of(v);
    let ok = if schema["x-kubernetes-int-or-string"] == Json::Bool(true) {
        matches!(got, "integer" | "string")
    } else {
        // One type, or a few (Kubernetes' Quantity: a string or a number).
        let allowed: Vec<&str> = match &schema["type"] {
            Json::String(t) => vec![t.as_str()],
            Json::Array(ts) => ts.iter().filter_map(Json::as_str).collect(),
            _ => Vec::new(),
        };
        allowed.is_empty()
            || allowed
                .iter()
                .any(|want| *want == got || (*want == "number" && got == "integer"))
    };
    if !ok {
        let want = match &schema["type"] {
            Json::String(t) => t.clone(),
            Json::Array(ts) => ts
                .iter()
                .filter_map(Json::as_str)
                .collect::<Vec<_>>()
                .join(" or "),
            _ => "integer or string".into(),
        };
        out.push(format!(
            "{path}: Invalid value: \"{got}\": {path} in body must be of type {want}: \"{got}\""
        ));
    }
    ok
}

/// Enums, formats, patterns, lengths, counts and bounds.
fn values(schema: &Json, v: &Json, path: &str, out: &mut Vec<String>) {
    let shown = match v {
        Json::String(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(v) {
            let list: Vec<String> = allowed.iter().map(|a| a.to_string()).collect();
            out.push(format!(
                "{path}: Unsupported value: {shown}: supported values: {}",
                list.join(", ")
            ));
        }
    }
    if let (Some(s), Some(p)) = (v.as_str(), schema["pattern"].as_str()) {
        if regex::Regex::new(p).is_ok_and(|re| !re.is_match(s)) {
            out.push(format!(
                "{path}: Invalid value: {shown}: {path} in body should match '{p}'"
            ));
        }
    }
    let bound = |key: &str| schema[key].as_u64();
    // Kubernetes' field errors: a count is "Too many", a string "Too long".
    if let (Some(max), Some(s)) = (bound("maxLength"), v.as_str()) {
        if s.len() as u64 > max {
            out.push(format!("{path}: Too long: must have at most {max} bytes"));
        }
    }
    let counts = [
        ("maxItems", v.as_array().map(Vec::len)),
        ("maxProperties", v.as_object().map(|m| m.len())),
    ];
    for (key, size) in counts {
        if let (Some(max), Some(n)) = (bound(key), size) {
            if n as u64 > max {
                out.push(format!(
                    "{path}: Too many: {n}: must have at most {max} items"
                ));
            }
        }
    }
    let minimums = [
        (
            "minLength",
            v.as_str().map(|s| s.chars().count()),
            "characters",
        ),
        ("minItems", v.as_array().map(Vec::len), "items"),
    ];
    for (key, size, unit) in minimums {
        if let (Some(min), Some(n)) = (bound(key), size) {
            if (n as u64) < min {
                out.push(format!(
                    "{path}: Invalid value: {shown}: {path} in body should have at least {min} {unit}"
                ));
            }
        }
    }
    if let (Some(n), Some(min)) = (v.as_f64(), schema["minimum"].as_f64()) {
        if n < min {
            out.push(format!(
                "{path}: Invalid value: {shown}: {path} in body should be greater than or equal to {min}"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{check, check_builtin, filled};
    use serde_json::json;

    /// A ClusterQueue-like schema: the shapes Kueue's CRDs use.
    fn schema() -> serde_json::Value {
        json!({"type": "object", "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "required": ["resourceGroups"], "properties": {
                "queueingStrategy": {"type": "string", "enum": ["StrictFIFO", "BestEffortFIFO"]},
                "namespaceSelector": {"type": "object", "properties": {
                    "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}}},
                "resourceGroups": {"type": "array", "maxItems": 2, "items": {
                    "type": "object", "required": ["coveredResources"], "properties": {
                        "coveredResources": {"type": "array", "items": {"type": "string"}},
                        "nominalQuota": {"x-kubernetes-int-or-string": true,
                                         "pattern": "^[0-9]+$"}}}}}}}})
    }

    #[test]
    fn a_well_formed_object_passes() {
        let obj = json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": "q", "labels": {"a": "b"}},
            "spec": {"namespaceSelector": {"matchLabels": {"team": "ml"}},
                     "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "nominalQuota": 32}]}});
        assert_eq!(check(&schema(), &obj), Vec::<String>::new());
    }

    #[test]
    fn each_problem_is_said_at_its_path_in_the_api_servers_words() {
        let obj = json!({"spec": {
            "queueingStrategy": "Fastest",
            "resourceGroup": [],
            "resourceGroups": [{"coveredResources": "gpu", "nominalQuota": "12x"}, {}, {}]}});
        assert_eq!(
            check(&schema(), &obj),
            [
                "spec.queueingStrategy: Unsupported value: \"Fastest\": supported values: \"StrictFIFO\", \"BestEffortFIFO\"",
                ".spec.resourceGroup: field not declared in schema",
                "spec.resourceGroups: Too many: 3: must have at most 2 items",
                "spec.resourceGroups[0].coveredResources: Invalid value: \"string\": spec.resourceGroups[0].coveredResources in body must be of type array: \"string\"",
                "spec.resourceGroups[0].nominalQuota: Invalid value: \"12x\": spec.resourceGroups[0].nominalQuota in body should match '^[0-9]+$'",
                "spec.resourceGroups[1].coveredResources: Required value",
                "spec.resourceGroups[2].coveredResources: Required value",
            ]
        );
    }

    /// Built-in kinds are held to Kubernetes' own definitions: a
    /// Deployment as the checkpoint gateway's, with a misspelt field, a
    /// port of the wrong type and a container without its name.
    #[test]
    fn built_in_kinds_are_held_to_kubernetes_definitions() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "gw", "namespace": "ckpt", "labels": {"app": "gw"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "gw"}},
                "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
                "template": {"metadata": {"labels": {"app": "gw"}},
                    "spec": {"serviceAccountName": "gw", "containers": [{
                        "name": "s3proxy", "image": "andrewgaul/s3proxy:4.1.1",
                        "ports": [{"containerPort": 80}],
                        "resources": {"requests": {"cpu": 0.5, "memory": "256Mi"}},
                        "envFrom": [{"secretRef": {"name": "gw"}}]}]}}}});
        assert_eq!(
            check_builtin("apps/v1/Deployment", &deployment),
            Some(Vec::new())
        );
        let mut wrong = deployment.clone();
        wrong["spec"]["replica"] = json!(2);
        wrong["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] =
            json!("80");
        wrong["spec"]["template"]["spec"]["containers"][0]
            .as_object_mut()
            .map(|c| c.remove("name"));
        // Sorted: the order of an object's fields depends on serde_json's
        // features, which the workspace unifies.
        let mut found = check_builtin("apps/v1/Deployment", &wrong).unwrap_or_default();
        found.sort();
        assert_eq!(
            found,
            vec![
                ".spec.replica: field not declared in schema".to_string(),
                "spec.template.spec.containers[0].name: Required value".into(),
                "spec.template.spec.containers[0].ports[0].containerPort: Invalid value: \"string\": spec.template.spec.containers[0].ports[0].containerPort in body must be of type integer: \"string\"".into(),
            ]
        );
        assert_eq!(check_builtin("example.com/v1/Widget", &deployment), None);
    }

    /// Not stricter than Kubernetes: an object of each built-in kind the
    /// stand-in serves, with every field its definition has set, is taken
    /// (the server's own fields left out, as an API server refuses them
    /// from a client: managed fields, uid, resource version; names the
    /// stand-in checks given as an API server wants them), and what it
    /// stores fits the definition.
    #[test]
    fn every_field_kubernetes_defines_is_taken() {
        let k = crate::kubernetes::start().expect("the stand-in");
        let kinds = [
            ("v1/Namespace", "/api/v1/namespaces/replay", json!({})),
            (
                "v1/Secret",
                "/api/v1/namespaces/replay/secrets/s",
                json!({"data": {"k": "dg=="}}),
            ),
            (
                "v1/ConfigMap",
                "/api/v1/namespaces/replay/configmaps/c",
                json!({}),
            ),
            (
                "v1/ServiceAccount",
                "/api/v1/namespaces/replay/serviceaccounts/sa",
                json!({}),
            ),
            (
                "v1/Service",
                "/api/v1/namespaces/replay/services/svc",
                json!({}),
            ),
            (
                "apps/v1/Deployment",
                "/apis/apps/v1/namespaces/replay/deployments/d",
                json!({}),
            ),
            (
                "apps/v1/DaemonSet",
                "/apis/apps/v1/namespaces/replay/daemonsets/ds",
                json!({}),
            ),
            (
                "batch/v1/Job",
                "/apis/batch/v1/namespaces/replay/jobs/j",
                json!({}),
            ),
            (
                "rbac.authorization.k8s.io/v1/ClusterRole",
                "/apis/rbac.authorization.k8s.io/v1/clusterroles/r",
                json!({}),
            ),
            (
                "rbac.authorization.k8s.io/v1/ClusterRoleBinding",
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/rb",
                json!({}),
            ),
            ("v1/Node", "/api/v1/nodes/n", json!({})),
        ];
        let mut refused = Vec::new();
        for (kind, path, base) in kinds {
            let name = path.rsplit('/').next().unwrap_or_default();
            let (api_version, short) = kind.rsplit_once('/').unwrap_or_default();
            let mut obj = filled(kind, &base);
            obj["apiVersion"] = json!(api_version);
            obj["kind"] = json!(short);
            let meta = &mut obj["metadata"];
            meta["name"] = json!(name);
            if path.contains("/namespaces/replay/") {
                meta["namespace"] = json!("replay");
            } else if let Some(m) = meta.as_object_mut() {
                m.remove("namespace");
            }
            if let Some(m) = meta.as_object_mut() {
                for server in [
                    "managedFields",
                    "uid",
                    "resourceVersion",
                    "generateName",
                    "deletionTimestamp",
                    "deletionGracePeriodSeconds",
                    "selfLink",
                ] {
                    m.remove(server);
                }
            }
            if kind == "apps/v1/Deployment" {
                let pod = &obj["spec"]["template"]["spec"];
                assert!(
                    pod["containers"][0]["livenessProbe"]["httpGet"]["port"].is_number()
                        && pod["affinity"]["podAntiAffinity"].is_object()
                        && pod["volumes"][0]["csi"]["driver"].is_string(),
                    "every field set: {pod}"
                );
            }
            match k.add(path, "replay", obj) {
                Ok(stored) => {
                    let misfits = check_builtin(kind, &stored).unwrap_or_default();
                    if !misfits.is_empty() {
                        refused.push(format!("{kind} stored: {misfits:?}"));
                    }
                }
                Err(why) => refused.push(format!("{kind}: {why}")),
            }
        }
        assert!(refused.is_empty(), "{}", refused.join("\n"));
    }

    #[test]
    fn a_top_level_field_the_schema_lacks_is_refused() {
        let obj = json!({"spec": {"resourceGroups": []}, "specs": {}});
        assert_eq!(
            check(&schema(), &obj),
            [".specs: field not declared in schema"]
        );
    }
}
