//! A Kubernetes API server in memory, over HTTPS with a bearer token, as
//! the API conventions describe it: discovery (`/api`, `/apis`, resource
//! lists), namespaces that terminate before they go, `Status` errors,
//! label selectors, `resourceVersion` and `generation`, server-side apply
//! with managed fields and conflicts, merge patches by other field
//! managers, the `status` subresource, and custom resource definitions that
//! register new kinds whose objects are kept opaque.
//!
//! One server holds many clusters: the one at its root, and one under
//! each `/clusters/NAME` prefix (made on first use), which the cloud
//! stand-ins give their clusters as endpoints, so two clusters of a cloud
//! do not see each other's objects.
//!
//! Simplifications, all on the safe side for a client: lists are atomic
//! (what an unannotated CRD schema gives), and a field's ownership is
//! tracked at its leaf. Two controllers are played: a `ClusterPolicy`
//! (`nvidia.com/v1`, the GPU Operator's) reports `notReady` until it has
//! been read [`Kube::ready_after`] times, then `ready`; and the token
//! controller fills a `kubernetes.io/service-account-token` Secret of an
//! existing service account with a token (which the server then accepts
//! as a bearer token, until the Secret is deleted), the cluster's CA and
//! the namespace.

use crate::{json, serve_tls, Body, Req, Server};
use hyper::{Method, Response};
use serde_json::{json, Map, Value as Json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

mod fields;
mod nodes;
mod requests;

use fields::{managed_fields, merge_patch, Owners};
pub use nodes::{Nodes, PoolNodes};

/// A bearer token the stand-in accepts.
pub const TOKEN: &str = "standin-kube-token";

type Path = Vec<String>;

/// The most items a chunked list returns: small, so a client that reads
/// only the first chunk fails its test.
const CHUNK: usize = 3;

/// A kind the server serves.
#[derive(Debug, Clone)]
struct Kind {
    group: String,
    version: String,
    plural: String,
    kind: String,
    namespaced: bool,
    /// A custom resource's schema, from its CRD (`openAPIV3Schema`).
    schema: Option<Json>,
}

impl Kind {
    fn new(gv: &str, plural: &str, kind: &str, namespaced: bool) -> Kind {
        let (group, version) = gv.split_once('/').unwrap_or(("", gv));
        Kind {
            group: group.into(),
            version: version.into(),
            plural: plural.into(),
            kind: kind.into(),
            namespaced,
            schema: None,
        }
    }

    /// `apps/v1/Deployment`, as the definitions name a kind.
    fn gvk(&self) -> String {
        format!("{}/{}", self.api_version(), self.kind)
    }

    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `namespaces`, `deployments.apps`: how errors name the resource.
    fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

/// (group, plural, namespace, name)
type Key = (String, String, String, String);

struct Store {
    kinds: Vec<Kind>,
    objects: BTreeMap<Key, Json>,
    version: u64,
    uid: u64,
    /// GETs of a terminating namespace or an unready ClusterPolicy.
    reads: BTreeMap<Key, u32>,
    ready_after: u32,
    calls: Vec<String>,
    /// The CA the server's certificate is signed by (PEM): what a service
    /// account token Secret's `ca.crt` holds.
    ca_pem: String,
}

/// A running stand-in cluster.
pub struct Kube {
    pub server: Server,
    /// The CA that signed the server's certificate (PEM).
    pub ca_pem: String,
    store: Arc<Mutex<Store>>,
    tenants: Arc<Tenants>,
}

/// The clusters under `/clusters/NAME`, by name, and the CA their
/// token Secrets hold.
#[derive(Default)]
struct Tenants {
    all: Mutex<BTreeMap<String, Arc<Mutex<Store>>>>,
    ca_pem: Mutex<String>,
}

impl Tenants {
    fn of(&self, cluster: &str) -> Arc<Mutex<Store>> {
        let ca_pem = self
            .ca_pem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let mut all = self.all.lock().unwrap_or_else(|e| e.into_inner());
        all.entry(cluster.to_string())
            .or_insert_with(|| {
                let mut s = Store::new();
                s.ca_pem = ca_pem;
                Arc::new(Mutex::new(s))
            })
            .clone()
    }
}

/// Starts a cluster with two nodes (`gpu-node-0`, `gpu-node-1`, labelled
/// by the kubelet) and the `default` and `kube-system` namespaces.
pub fn start() -> std::io::Result<Kube> {
    let mut store = Store::new();
    for n in 0..2 {
        let name = format!("gpu-node-{n}");
        let body = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}}});
        let _ = store.write(&Target::of("", "nodes", "", &name), body, "kubelet");
    }
    let store = Arc::new(Mutex::new(store));
    let tenants = Arc::new(Tenants::default());
    let (shared, by_name) = (store.clone(), tenants.clone());
    let (server, ca_pem) = serve_tls(move |mut req| {
        let segs: Vec<&str> = req.path.split('/').filter(|x| !x.is_empty()).collect();
        let store = match segs.as_slice() {
            ["clusters", name, ..] => {
                let tenant = by_name.of(name);
                let prefix = format!("/clusters/{name}");
                req.path = req.path[prefix.len()..].to_string();
                tenant
            }
            _ => shared.clone(),
        };
        async move { route(&store, req) }
    })?;
    *tenants.ca_pem.lock().unwrap_or_else(|e| e.into_inner()) = ca_pem.clone();
    store.lock().unwrap_or_else(|e| e.into_inner()).ca_pem = ca_pem.clone();
    Ok(Kube {
        server,
        ca_pem,
        store,
        tenants,
    })
}

impl Store {
    /// An empty cluster: the kinds it serves, the `default` and
    /// `kube-system` namespaces, no nodes.
    fn new() -> Store {
        let kinds = vec![
            Kind::new("v1", "namespaces", "Namespace", false),
            Kind::new("v1", "nodes", "Node", false),
            Kind::new("v1", "secrets", "Secret", true),
            Kind::new("v1", "configmaps", "ConfigMap", true),
            Kind::new("v1", "serviceaccounts", "ServiceAccount", true),
            Kind::new("v1", "services", "Service", true),
            Kind::new("apps/v1", "deployments", "Deployment", true),
            Kind::new("apps/v1", "daemonsets", "DaemonSet", true),
            Kind::new("batch/v1", "jobs", "Job", true),
            Kind::new(
                "rbac.authorization.k8s.io/v1",
                "clusterroles",
                "ClusterRole",
                false,
            ),
            Kind::new(
                "rbac.authorization.k8s.io/v1",
                "clusterrolebindings",
                "ClusterRoleBinding",
                false,
            ),
            Kind::new(
                "apiextensions.k8s.io/v1",
                "customresourcedefinitions",
                "CustomResourceDefinition",
                false,
            ),
        ];
        let mut store = Store {
            kinds,
            objects: BTreeMap::new(),
            version: 100,
            uid: 0,
            reads: BTreeMap::new(),
            ready_after: 2,
            calls: Vec::new(),
            ca_pem: String::new(),
        };
        for ns in ["default", "kube-system"] {
            let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            let _ = store.write(
                &Target::of("", "namespaces", "", ns),
                body,
                "kube-apiserver",
            );
        }
        store
    }
}

/// Where a cloud stand-in's clusters' API servers are: each its own
/// cluster under [`Endpoint::of`].
#[derive(Debug, Clone, Default)]
pub struct Endpoint {
    /// `https://127.0.0.1:PORT`.
    pub url: String,
    /// The CA that signed its certificate (PEM).
    pub ca_pem: String,
    /// The clusters' nodes, which a node pool's size makes.
    pub nodes: Option<Nodes>,
}

impl Endpoint {
    /// Every object of a resource (`deployments`) in each of the cloud's
    /// clusters, with the cluster's name: what runs there.
    pub fn objects(&self, plural: &str) -> Vec<(String, Json)> {
        let Some(Nodes(tenants)) = &self.nodes else {
            return Vec::new();
        };
        let all = tenants.all.lock().unwrap_or_else(|e| e.into_inner());
        let mut found = Vec::new();
        for (cluster, store) in all.iter() {
            let s = store.lock().unwrap_or_else(|e| e.into_inner());
            found.extend(
                s.objects
                    .iter()
                    .filter(|(k, _)| k.1 == plural)
                    .map(|(_, v)| (cluster.clone(), v.clone())),
            );
        }
        found
    }

    /// The API server of the cloud's cluster `cluster`:
    /// `https://127.0.0.1:PORT/clusters/NAME`.
    pub fn of(&self, cluster: &str) -> String {
        format!("{}/clusters/{cluster}", self.url)
    }
}

impl Kube {
    /// This cluster's endpoint.
    pub fn endpoint(&self) -> Endpoint {
        Endpoint {
            url: self.server.url.clone(),
            ca_pem: self.ca_pem.clone(),
            nodes: Some(Nodes(self.tenants.clone())),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Store) -> T) -> T {
        let mut s = self.store.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut s)
    }

    /// A kubeconfig for this cluster (JSON, which is YAML too), with one
    /// context named `context`.
    pub fn kubeconfig(&self, context: &str) -> Json {
        json!({
            "apiVersion": "v1", "kind": "Config", "current-context": context,
            "clusters": [{"name": context, "cluster": {
                "server": self.server.url,
                "certificate-authority-data": base64(self.ca_pem.as_bytes())}}],
            "users": [{"name": context, "user": {"token": TOKEN}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        })
    }

    /// The object at an API path (`/api/v1/namespaces/x`), as a GET would
    /// give it but without counting as a read.
    pub fn get(&self, path: &str) -> Option<Json> {
        self.with(|s| {
            let t = s.target(path).ok()?;
            s.objects.get(&t.key()).cloned()
        })
    }

    /// Every object of a resource (`secrets`, `clusterpolicies`).
    pub fn all(&self, plural: &str) -> Vec<Json> {
        self.with(|s| {
            s.objects
                .iter()
                .filter(|(k, _)| k.1 == plural)
                .map(|(_, v)| v.clone())
                .collect()
        })
    }

    /// A change by hand: a merge patch of the object at `path` by field
    /// manager `manager` (what `kubectl edit` or `kubectl label` does).
    pub fn edit(&self, path: &str, manager: &str, patch: Json) -> Result<Json, String> {
        self.with(|s| {
            let t = s.target(path).map_err(|e| e.1)?;
            let live = s.objects.get(&t.key()).cloned().ok_or("no such object")?;
            let mut merged = live;
            merge_patch(&mut merged, &patch);
            s.write(&t, merged, manager).map_err(|e| e.1)
        })
    }

    /// An object made by hand by field manager `manager` (someone else's,
    /// for strata to import or refuse).
    pub fn add(&self, path: &str, manager: &str, obj: Json) -> Result<Json, String> {
        self.with(|s| {
            let t = s.target(path).map_err(|e| e.1)?;
            s.write(&t, obj, manager).map_err(|e| e.1)
        })
    }

    /// Requests served, as `METHOD PATH?QUERY`.
    pub fn calls(&self) -> Vec<String> {
        self.with(|s| s.calls.clone())
    }

    /// How many reads a ClusterPolicy takes to report `ready`.
    pub fn ready_after(&self, reads: u32) {
        self.with(|s| s.ready_after = reads);
    }
}

/// Where a request points.
#[derive(Debug, Clone)]
struct Target {
    kind: Kind,
    namespace: String,
    name: Option<String>,
    status: bool,
}

impl Target {
    fn of(group: &str, plural: &str, namespace: &str, name: &str) -> Target {
        Target {
            kind: Kind {
                group: group.into(),
                version: String::new(),
                plural: plural.into(),
                kind: String::new(),
                namespaced: !namespace.is_empty(),
                schema: None,
            },
            namespace: namespace.into(),
            name: Some(name.into()),
            status: false,
        }
    }

    fn key(&self) -> Key {
        (
            self.kind.group.clone(),
            self.kind.plural.clone(),
            self.namespace.clone(),
            self.name.clone().unwrap_or_default(),
        )
    }
}

type Failure = (u16, String, String);

fn status(code: u16, reason: &str, message: String) -> Response<Body> {
    json(
        code,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": message, "reason": reason, "code": code}),
    )
}

fn failure(f: Failure) -> Response<Body> {
    status(f.0, &f.1, f.2)
}

fn not_found() -> Failure {
    (
        404,
        "NotFound".into(),
        "the server could not find the requested resource".into(),
    )
}

fn route(store: &Mutex<Store>, req: Req) -> Response<Body> {
    let mut s = store.lock().unwrap_or_else(|e| e.into_inner());
    s.calls
        .push(format!("{} {}?{}", req.method, req.path, req.query));
    if !req.bearer().is_some_and(|t| t == TOKEN || s.issued(t)) {
        return status(401, "Unauthorized", "Unauthorized".into());
    }
    let segs: Vec<&str> = req.path.split('/').filter(|x| !x.is_empty()).collect();
    match (req.method.clone(), segs.as_slice()) {
        (Method::GET, ["version"]) => json(
            200,
            json!({"major": "1", "minor": "33", "gitVersion": "v1.33.1", "platform": "linux/amd64"}),
        ),
        (Method::GET, ["api"]) => json(
            200,
            json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}),
        ),
        (Method::GET, ["apis"]) => json(200, s.groups()),
        (Method::GET, ["api", v]) => s.resources("", v),
        (Method::GET, ["apis", g, v]) => s.resources(g, v),
        _ => match s.target(&req.path) {
            Err(f) => failure(f),
            Ok(t) => s.serve(t, &req).unwrap_or_else(failure),
        },
    }
}

impl Store {
    fn groups(&self) -> Json {
        let mut groups: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for k in self.kinds.iter().filter(|k| !k.group.is_empty()) {
            groups.entry(&k.group).or_default().insert(&k.version);
        }
        let groups: Vec<Json> = groups
            .into_iter()
            .map(|(g, vs)| {
                let versions: Vec<Json> = vs
                    .iter()
                    .map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v}))
                    .collect();
                json!({"name": g, "versions": versions, "preferredVersion": versions[0]})
            })
            .collect();
        json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
    }

    fn resources(&self, group: &str, version: &str) -> Response<Body> {
        let kinds: Vec<&Kind> = self
            .kinds
            .iter()
            .filter(|k| k.group == group && k.version == version)
            .collect();
        if kinds.is_empty() {
            return failure(not_found());
        }
        let verbs = [
            "create", "delete", "get", "list", "patch", "update", "watch",
        ];
        let mut resources = Vec::new();
        for k in kinds {
            resources.push(
                json!({"name": k.plural, "singularName": k.kind.to_lowercase(),
                "namespaced": k.namespaced, "kind": k.kind, "verbs": verbs}),
            );
            resources.push(
                json!({"name": format!("{}/status", k.plural), "singularName": "",
                "namespaced": k.namespaced, "kind": k.kind, "verbs": ["get", "patch", "update"]}),
            );
        }
        let gv = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        json(
            200,
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
        )
    }

    /// The resource a path names, or 404.
    fn target(&self, path: &str) -> Result<Target, Failure> {
        let segs: Vec<&str> = path.split('/').filter(|x| !x.is_empty()).collect();
        let (group, version, rest) = match segs.as_slice() {
            ["api", v, rest @ ..] => ("", *v, rest),
            ["apis", g, v, rest @ ..] => (*g, *v, rest),
            _ => return Err(not_found()),
        };
        let (namespace, rest) = match rest {
            ["namespaces", ns, plural, more @ ..]
                if *plural != "status" && *plural != "finalize" =>
            {
                (
                    ns.to_string(),
                    std::iter::once(*plural)
                        .chain(more.iter().copied())
                        .collect(),
                )
            }
            _ => (String::new(), rest.to_vec()),
        };
        let (plural, name, status) = match rest.as_slice() {
            [plural] => (*plural, None, false),
            [plural, name] => (*plural, Some(name.to_string()), false),
            [plural, name, "status"] => (*plural, Some(name.to_string()), true),
            _ => return Err(not_found()),
        };
        let kind = self
            .kinds
            .iter()
            .find(|k| k.group == group && k.version == version && k.plural == plural)
            .ok_or_else(not_found)?
            .clone();
        if kind.namespaced == namespace.is_empty() && name.is_some() {
            return Err(not_found());
        }
        Ok(Target {
            kind,
            namespace,
            name,
            status,
        })
    }

    fn validate_new(&self, t: &Target, obj: &Json) -> Result<(), Failure> {
        if t.kind.namespaced {
            let ns = (
                "".to_string(),
                "namespaces".to_string(),
                String::new(),
                t.namespace.clone(),
            );
            match self.objects.get(&ns) {
                None => {
                    return Err((404, "NotFound".into(), format!("namespaces \"{}\" not found", t.namespace)))
                }
                Some(n) if n["status"]["phase"] == "Terminating" => {
                    return Err((403, "Forbidden".into(), format!(
                        "{} \"{}\" is forbidden: unable to create new content in namespace {} because it is being terminated",
                        t.kind.qualified(), t.name.clone().unwrap_or_default(), t.namespace)))
                }
                _ => {}
            }
        }
        if t.kind.plural == "customresourcedefinitions" {
            let spec = &obj["spec"];
            let ok = spec["group"].is_string()
                && spec["names"]["plural"].is_string()
                && spec["names"]["kind"].is_string()
                && spec["versions"].as_array().is_some_and(|v| !v.is_empty());
            if !ok {
                return Err(invalid(t, "", "spec: Required value: group, names.plural, names.kind and versions are required"));
            }
        }
        Ok(())
    }

    /// Stores `obj` with its owners, filling what the server sets and
    /// bumping the version when anything changed; plays the controllers.
    fn store(&mut self, t: &Target, mut obj: Json, owners: Owners) -> Json {
        let key = t.key();
        let live = self.objects.get(&key).cloned();
        obj["metadata"]["managedFields"] = managed_fields(&owners, &t.kind.api_version());
        let meta = |o: &Json, f: &str| o["metadata"][f].clone();
        if let Some(l) = &live {
            for f in ["uid", "creationTimestamp", "generation", "resourceVersion"] {
                obj["metadata"][f] = meta(l, f);
            }
            if t.status {
                for (k, v) in l.as_object().into_iter().flatten() {
                    if k != "status" && k != "metadata" {
                        obj[k] = v.clone();
                    }
                }
            } else if l.get("status").is_some() && obj.get("status").is_none() {
                obj["status"] = l["status"].clone();
            }
            let spec = |o: &Json| {
                let mut o = o.clone();
                if let Some(m) = o.as_object_mut() {
                    m.remove("metadata");
                    m.remove("status");
                }
                o
            };
            if spec(l) != spec(&obj) {
                let g = l["metadata"]["generation"].as_u64().unwrap_or(1) + 1;
                obj["metadata"]["generation"] = json!(g);
                if t.kind.kind == "ClusterPolicy" {
                    obj["status"] = json!({"state": "notReady"});
                    self.reads.insert(key.clone(), 0);
                }
            }
            if *l == obj {
                return obj;
            }
        } else {
            self.uid += 1;
            obj["metadata"]["uid"] = json!(format!("00000000-0000-4000-8000-{:012}", self.uid));
            obj["metadata"]["creationTimestamp"] = json!("2026-01-01T00:00:00Z");
            obj["metadata"]["generation"] = json!(1);
            match t.kind.kind.as_str() {
                "Namespace" => obj["status"] = json!({"phase": "Active"}),
                "ClusterPolicy" => obj["status"] = json!({"state": "notReady"}),
                "Secret" if obj["type"] == "kubernetes.io/service-account-token" => {
                    self.issue_token(&mut obj)
                }
                "CustomResourceDefinition" => {
                    obj["status"] =
                        json!({"conditions": [{"type": "Established", "status": "True"}]});
                    self.register(&obj);
                }
                _ => {}
            }
            self.reads.insert(key.clone(), 0);
        }
        self.bump(&mut obj);
        self.objects.insert(key, obj.clone());
        obj
    }

    /// The token controller: a new service account token Secret of an
    /// existing service account gets a token, the CA and its namespace.
    fn issue_token(&mut self, secret: &mut Json) {
        let ns = secret["metadata"]["namespace"].as_str().unwrap_or_default();
        let account = secret["metadata"]["annotations"]["kubernetes.io/service-account.name"]
            .as_str()
            .unwrap_or_default();
        let sa = (
            String::new(),
            "serviceaccounts".into(),
            ns.to_string(),
            account.to_string(),
        );
        if !self.objects.contains_key(&sa) {
            return;
        }
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let token = format!("sa-{ns}-{account}-{}", self.uid);
        secret["data"] =
            json!({"token": b64(&token), "ca.crt": b64(&self.ca_pem), "namespace": b64(ns)});
    }

    /// Whether `token` is one the token controller gave a Secret that
    /// still exists.
    fn issued(&self, token: &str) -> bool {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD.encode(token);
        self.objects.values().any(|o| {
            o["type"] == "kubernetes.io/service-account-token" && o["data"]["token"] == json!(b64)
        })
    }

    /// A CRD's kinds, served from now on.
    fn register(&mut self, crd: &Json) {
        let spec = &crd["spec"];
        let s = |v: &Json| v.as_str().unwrap_or_default().to_string();
        for v in spec["versions"].as_array().into_iter().flatten() {
            if v["served"] == json!(false) {
                continue;
            }
            let k = Kind {
                group: s(&spec["group"]),
                version: s(&v["name"]),
                plural: s(&spec["names"]["plural"]),
                kind: s(&spec["names"]["kind"]),
                namespaced: spec["scope"] != "Cluster",
                schema: Some(v["schema"]["openAPIV3Schema"].clone()).filter(Json::is_object),
            };
            let same = |x: &&mut Kind| {
                x.group == k.group && x.version == k.version && x.plural == k.plural
            };
            // A CRD updated: its schema from now on.
            match self.kinds.iter_mut().find(same) {
                Some(known) => known.schema = k.schema,
                None => self.kinds.push(k),
            }
        }
    }
}

/// The stand-in's answer, held to Kubernetes' definition of a built-in
/// kind (each item of a list): one that misfits is the stand-in's own bug,
/// a 500 naming it, so the test that met it fails.
fn answer(t: &Target, code: u16, body: Json) -> Response<Body> {
    let kind = t.kind.gvk();
    let objects = match body["items"].as_array() {
        Some(items) if t.name.is_none() => items.iter().collect(),
        _ => vec![&body],
    };
    // A delete may answer with a Status rather than the object.
    let misfits: Vec<String> = objects
        .into_iter()
        .filter(|o| o["kind"].is_null() || o["kind"] == json!(t.kind.kind))
        .flat_map(|o| crate::openapi::check_builtin(&kind, o).unwrap_or_default())
        .collect();
    if misfits.is_empty() {
        return json(code, body);
    }
    failure((
        500,
        "InternalError".into(),
        format!(
            "the stand-in's answer does not fit Kubernetes' definition of {kind}: {}",
            misfits.join("; ")
        ),
    ))
}

fn gone(t: &Target) -> Failure {
    (
        404,
        "NotFound".into(),
        format!(
            "{} \"{}\" not found",
            t.kind.qualified(),
            t.name.clone().unwrap_or_default()
        ),
    )
}

fn already_exists(t: &Target, name: &str) -> Failure {
    (
        409,
        "AlreadyExists".into(),
        format!("{} \"{name}\" already exists", t.kind.qualified()),
    )
}

/// A custom resource held to its CRD's schema (a status write is not), a
/// built-in object to Kubernetes' definition of its kind.
fn conforms(t: &Target, obj: &Json) -> Result<(), Failure> {
    let found = match &t.kind.schema {
        Some(_) if t.status => return Ok(()),
        Some(schema) => crate::openapi::check(schema, obj),
        None => crate::openapi::check_builtin(&t.kind.gvk(), obj).unwrap_or_default(),
    };
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    match found.len() {
        0 => Ok(()),
        1 => Err(invalid(t, name, &found[0])),
        _ => Err(invalid(t, name, &format!("[{}]", found.join(", ")))),
    }
}

fn invalid(t: &Target, name: &str, why: &str) -> Failure {
    (
        422,
        "Invalid".into(),
        format!("{} \"{name}\" is invalid: {why}", t.kind.kind),
    )
}

/// What a client may not set: the server's own metadata.
fn strip_server_fields(obj: &mut Json) {
    if let Some(m) = obj["metadata"].as_object_mut() {
        for f in [
            "uid",
            "creationTimestamp",
            "generation",
            "managedFields",
            "resourceVersion",
        ] {
            m.remove(f);
        }
    }
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
