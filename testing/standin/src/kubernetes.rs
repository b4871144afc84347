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

/// How long a new node takes to offer its GPUs (the device plugin
/// registering them after the kubelet joins): short, yet long enough that
/// time to first GPU is a measured figure.
const GPUS_AFTER: std::time::Duration = std::time::Duration::from_millis(1500);

/// A cloud stand-in's hand on a cluster's nodes: a node pool's nodes join
/// and leave as its size changes, each offering its GPUs as allocatable
/// `nvidia.com/gpu` a moment after it joins.
#[derive(Clone)]
pub struct Nodes(Arc<Tenants>);

impl std::fmt::Debug for Nodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Nodes")
    }
}

/// A node pool as the cluster's nodes carry it (nodes named by cluster
/// and pool, as the clouds name them).
pub struct PoolNodes<'a> {
    pub cluster: &'a str,
    /// The label the cloud puts on its pools' nodes
    /// (`cloud.google.com/gke-nodepool`) and the pool's name.
    pub key: &'a str,
    pub pool: &'a str,
    /// The pool's own labels.
    pub labels: &'a Json,
    pub gpus_per_node: u64,
    /// Whether its nodes' GPUs never become allocatable (a `no_gpus`
    /// shortage).
    pub gpus_withheld: bool,
}

impl Nodes {
    fn with<T>(&self, cluster: &str, f: impl FnOnce(&mut Store) -> T) -> T {
        let store = self.0.of(cluster);
        let mut s = store.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut s)
    }

    /// Makes the pool's nodes number `count`: new ones join (their GPUs
    /// allocatable after [`GPUS_AFTER`]), the last ones leave.
    pub fn scale(&self, p: &PoolNodes<'_>, count: u64) {
        let prefix = format!("{}-{}-", p.cluster, p.pool);
        let name = |i: u64| format!("{prefix}{i}");
        let mut labels = p.labels.as_object().cloned().unwrap_or_default();
        labels.insert(p.key.into(), json!(p.pool));
        let joined: Vec<String> = self.with(p.cluster, |s| {
            let gone: Vec<Key> = s
                .objects
                .keys()
                .filter(|k| k.1 == "nodes")
                .filter(|k| {
                    k.3.strip_prefix(&prefix)
                        .and_then(|i| i.parse::<u64>().ok())
                        .is_some_and(|i| i >= count)
                })
                .cloned()
                .collect();
            for k in gone {
                s.objects.remove(&k);
            }
            let mut joined = Vec::new();
            for i in 0..count {
                let t = Target::of("", "nodes", "", &name(i));
                if s.objects.contains_key(&t.key()) {
                    continue;
                }
                let mut node_labels = labels.clone();
                node_labels.insert("kubernetes.io/hostname".into(), json!(name(i)));
                let body = json!({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name(i), "labels": node_labels},
                    "status": {"allocatable": {"cpu": "96", "nvidia.com/gpu": "0"},
                               "capacity": {"cpu": "96", "nvidia.com/gpu": p.gpus_per_node.to_string()}}});
                let _ = s.write(&t, body, "kubelet");
                joined.push(name(i));
            }
            joined
        });
        if joined.is_empty() || p.gpus_per_node == 0 || p.gpus_withheld {
            return;
        }
        let (nodes, cluster) = (self.clone(), p.cluster.to_string());
        let gpus = p.gpus_per_node.to_string();
        std::thread::spawn(move || {
            std::thread::sleep(GPUS_AFTER);
            nodes.with(&cluster, |s| {
                for n in joined {
                    let t = Target::of("", "nodes", "", &n);
                    if let Some(o) = s.objects.get_mut(&t.key()) {
                        o["status"]["allocatable"]["nvidia.com/gpu"] = json!(gpus);
                    }
                }
            });
        });
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

    fn serve(&mut self, t: Target, req: &Req) -> Result<Response<Body>, Failure> {
        let body = || -> Result<Json, Failure> {
            serde_json::from_slice(&req.body).map_err(|e| {
                (
                    400,
                    "BadRequest".into(),
                    format!("the request body is not JSON (the stand-in takes JSON-formatted YAML only): {e}"),
                )
            })
        };
        let manager = req.param("fieldManager");
        match (&req.method, &t.name) {
            (&Method::GET, None) => Ok(answer(&t, 200, self.list(&t, req))),
            (&Method::GET, Some(_)) => self.read(&t).map(|o| answer(&t, 200, o)),
            (&Method::POST, None) => {
                let mut obj = body()?;
                let name = obj["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if name.is_empty() {
                    return Err(invalid(
                        &t,
                        "",
                        "metadata.name: Required value: name is required",
                    ));
                }
                let t = Target {
                    name: Some(name.clone()),
                    ..t
                };
                if self.objects.contains_key(&t.key()) {
                    return Err(already_exists(&t, &name));
                }
                strip_server_fields(&mut obj);
                let manager = manager.unwrap_or_else(|| "unknown".into());
                self.write(&t, obj, &manager).map(|o| answer(&t, 201, o))
            }
            (&Method::PUT, Some(_)) => {
                let live = self
                    .objects
                    .get(&t.key())
                    .cloned()
                    .ok_or_else(|| gone(&t))?;
                let mut obj = body()?;
                let rv = obj["metadata"]["resourceVersion"]
                    .as_str()
                    .map(str::to_string);
                if rv.is_some() && rv.as_deref() != live["metadata"]["resourceVersion"].as_str() {
                    return Err((409, "Conflict".into(), format!(
                        "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
                        t.kind.qualified(), t.name.clone().unwrap_or_default())));
                }
                strip_server_fields(&mut obj);
                if t.status {
                    let mut merged = live;
                    merged["status"] = obj["status"].take();
                    obj = merged;
                } else {
                    obj["status"] = live["status"].clone();
                    obj["metadata"]["managedFields"] = live["metadata"]["managedFields"].clone();
                }
                let manager = manager.unwrap_or_else(|| "unknown".into());
                self.write(&t, obj, &manager).map(|o| answer(&t, 200, o))
            }
            (&Method::PATCH, Some(name)) => {
                let ctype = req
                    .headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                let patch = body()?;
                if ctype.starts_with("application/apply-patch") {
                    let Some(manager) = manager else {
                        return Err(invalid(
                            &t,
                            name,
                            "fieldManager: Required value: is required for apply patch",
                        ));
                    };
                    let force = req.param("force").as_deref() == Some("true");
                    self.apply(&t, patch, &manager, force)
                        .map(|o| answer(&t, 200, o))
                } else if ctype.starts_with("application/merge-patch+json")
                    || ctype.starts_with("application/strategic-merge-patch+json")
                {
                    let mut obj = self
                        .objects
                        .get(&t.key())
                        .cloned()
                        .ok_or_else(|| gone(&t))?;
                    merge_patch(&mut obj, &patch);
                    let manager = manager.unwrap_or_else(|| "unknown".into());
                    self.write(&t, obj, &manager).map(|o| answer(&t, 200, o))
                } else {
                    Err((415, "UnsupportedMediaType".into(), format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml; got {ctype:?}")))
                }
            }
            (&Method::DELETE, Some(_)) => self.delete(&t).map(|o| answer(&t, 200, o)),
            _ => Err((
                405,
                "MethodNotAllowed".into(),
                "the server does not allow this method on the requested resource".into(),
            )),
        }
    }

    /// A list, in chunks when the client sets `limit`: at most that many
    /// items and never more than [`CHUNK`] (a server may return fewer),
    /// with `metadata.continue` while more remain.
    fn list(&self, t: &Target, req: &Req) -> Json {
        let wanted: Vec<(String, Option<String>)> = req
            .param("labelSelector")
            .unwrap_or_default()
            .split(',')
            .filter(|x| !x.is_empty())
            .map(|x| match x.split_once('=') {
                Some((k, v)) => (k.trim_end_matches('=').to_string(), Some(v.to_string())),
                None => (x.to_string(), None),
            })
            .collect();
        let items: Vec<Json> = self
            .objects
            .iter()
            .filter(|(k, _)| {
                k.0 == t.kind.group
                    && k.1 == t.kind.plural
                    && (t.namespace.is_empty() || k.2 == t.namespace)
            })
            .map(|(_, o)| o)
            .filter(|o| {
                wanted.iter().all(|(k, v)| {
                    let have = o["metadata"]["labels"][k].as_str();
                    match v {
                        Some(v) => have == Some(v.as_str()),
                        None => have.is_some(),
                    }
                })
            })
            .cloned()
            .collect();
        let start: usize = req
            .param("continue")
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let end = match req.param("limit").and_then(|l| l.parse::<usize>().ok()) {
            Some(limit) if limit > 0 => (start + limit.min(CHUNK)).min(items.len()),
            _ => items.len(),
        };
        let mut metadata = json!({"resourceVersion": self.version.to_string()});
        if end < items.len() {
            metadata["continue"] = json!(end.to_string());
            metadata["remainingItemCount"] = json!(items.len() - end);
        }
        json!({"kind": format!("{}List", t.kind.kind), "apiVersion": t.kind.api_version(),
               "metadata": metadata, "items": items.get(start..end).unwrap_or(&[])})
    }

    fn read(&mut self, t: &Target) -> Result<Json, Failure> {
        let key = t.key();
        let obj = self.objects.get(&key).cloned().ok_or_else(|| gone(t))?;
        let reads = {
            let r = self.reads.entry(key.clone()).or_default();
            *r += 1;
            *r
        };
        if t.kind.plural == "namespaces" && obj["status"]["phase"] == "Terminating" && reads >= 2 {
            self.objects.remove(&key);
            self.objects.retain(|k, _| k.2 != key.3);
            return Err(gone(t));
        }
        if t.kind.kind == "ClusterPolicy"
            && obj["status"]["state"] != "ready"
            && reads >= self.ready_after
        {
            let mut obj = obj;
            obj["status"] = json!({"state": "ready", "conditions": [
                {"type": "Ready", "status": "True", "reason": "Reconciled", "message": ""},
                {"type": "Error", "status": "False", "reason": "Ready", "message": ""}]});
            self.bump(&mut obj);
            self.objects.insert(key, obj.clone());
            return Ok(obj);
        }
        Ok(obj)
    }

    fn delete(&mut self, t: &Target) -> Result<Json, Failure> {
        let key = t.key();
        let mut obj = self.objects.get(&key).cloned().ok_or_else(|| gone(t))?;
        if t.kind.plural == "namespaces" {
            if obj["status"]["phase"] != "Terminating" {
                obj["status"]["phase"] = json!("Terminating");
                obj["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
                self.bump(&mut obj);
                self.reads.insert(key.clone(), 0);
                self.objects.insert(key, obj.clone());
            }
            return Ok(obj);
        }
        self.objects.remove(&key);
        if t.kind.plural == "customresourcedefinitions" {
            let group = obj["spec"]["group"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let plural = obj["spec"]["names"]["plural"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            self.kinds
                .retain(|k| !(k.group == group && k.plural == plural));
            self.objects.retain(|k, _| !(k.0 == group && k.1 == plural));
        }
        Ok(
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                  "details": {"name": key.3, "group": key.0, "kind": key.1}}),
        )
    }

    fn bump(&mut self, obj: &mut Json) {
        self.version += 1;
        obj["metadata"]["resourceVersion"] = json!(self.version.to_string());
    }

    /// Server-side apply of `applied` by `manager`.
    fn apply(
        &mut self,
        t: &Target,
        applied: Json,
        manager: &str,
        force: bool,
    ) -> Result<Json, Failure> {
        let name = t.name.clone().unwrap_or_default();
        if applied["apiVersion"] != json!(t.kind.api_version())
            || applied["kind"] != json!(t.kind.kind)
        {
            return Err(invalid(
                t,
                &name,
                &format!(
                    "apiVersion and kind must be {} and {}: the apply patch says {} and {}",
                    t.kind.api_version(),
                    t.kind.kind,
                    applied["apiVersion"],
                    applied["kind"]
                ),
            ));
        }
        if applied["metadata"]["name"] != json!(name) {
            return Err(invalid(t, &name, "metadata.name: Invalid value: the name of the object does not match the name on the URL"));
        }
        let exists = self.objects.contains_key(&t.key());
        let mut obj = self.objects.get(&t.key()).cloned().unwrap_or_else(|| {
            json!({"apiVersion": t.kind.api_version(), "kind": t.kind.kind,
                   "metadata": {"name": name}})
        });
        if t.kind.namespaced {
            obj["metadata"]["namespace"] = json!(t.namespace);
        }
        let mut owners = owners(&obj);
        let mine = fields(&applied, t.status);
        let mut conflicts = Vec::new();
        for (other, (op, theirs)) in owners.iter_mut() {
            if other == manager && op == "Apply" {
                continue;
            }
            for p in &mine {
                if theirs.contains(p) && at(&obj, p) != at(&applied, p) {
                    if force {
                        theirs.remove(p);
                    } else {
                        conflicts.push((other.clone(), p.clone()));
                    }
                }
            }
        }
        if !conflicts.is_empty() {
            let list: Vec<String> = conflicts
                .iter()
                .map(|(m, p)| format!("conflict with \"{m}\": .{}", p.join(".")))
                .collect();
            let message = if list.len() == 1 {
                format!("Apply failed with 1 conflict: {}", list[0])
            } else {
                format!(
                    "Apply failed with {} conflicts: {}",
                    list.len(),
                    list.join("\n")
                )
            };
            return Err((409, "Conflict".into(), message));
        }
        let before = owners
            .remove(manager)
            .filter(|(op, _)| op == "Apply")
            .map(|(_, f)| f)
            .unwrap_or_default();
        for gone in before.difference(&mine) {
            if !owners.values().any(|(_, f)| f.contains(gone)) {
                remove(&mut obj, gone);
            }
        }
        for p in &mine {
            set(&mut obj, p, at(&applied, p).cloned().unwrap_or(Json::Null));
        }
        owners.insert(manager.to_string(), ("Apply".into(), mine));
        if !exists {
            self.validate_new(t, &obj)?;
        }
        conforms(t, &obj)?;
        Ok(self.store(t, obj, owners))
    }

    /// A create, replace or merge patch by `manager`: it takes the fields
    /// whose value it changed (an update never conflicts).
    fn write(&mut self, t: &Target, mut obj: Json, manager: &str) -> Result<Json, Failure> {
        let live = self.objects.get(&t.key()).cloned();
        if live.is_none() {
            self.validate_new(t, &obj)?;
        }
        conforms(t, &obj)?;
        if t.kind.namespaced {
            obj["metadata"]["namespace"] = json!(t.namespace);
        }
        let mut owners = owners(live.as_ref().unwrap_or(&Json::Null));
        let now = fields(&obj, t.status);
        let changed: BTreeSet<Path> = now
            .iter()
            .filter(|p| live.as_ref().and_then(|l| at(l, p)) != at(&obj, p))
            .cloned()
            .collect();
        // A status write leaves the rest's owners alone, and the other way round.
        let in_scope = |p: &Path| (p.first().map(String::as_str) == Some("status")) == t.status;
        for (_, (_, f)) in owners.iter_mut() {
            f.retain(|p| !in_scope(p) || (now.contains(p) && !changed.contains(p)));
        }
        let entry = owners
            .entry(manager.to_string())
            .or_insert_with(|| ("Update".into(), BTreeSet::new()));
        entry.1.extend(changed);
        Ok(self.store(t, obj, owners))
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

/// Field manager → (operation, the leaf paths it owns).
type Owners = BTreeMap<String, (String, BTreeSet<Path>)>;

fn owners(obj: &Json) -> Owners {
    let mut out = Owners::new();
    for e in obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let mut paths = BTreeSet::new();
        from_fields_v1(&e["fieldsV1"], &mut Vec::new(), &mut paths);
        out.insert(
            e["manager"].as_str().unwrap_or_default().to_string(),
            (
                e["operation"].as_str().unwrap_or("Update").to_string(),
                paths,
            ),
        );
    }
    out
}

fn managed_fields(owners: &Owners, api_version: &str) -> Json {
    Json::Array(
        owners
            .iter()
            .filter(|(_, (_, f))| !f.is_empty())
            .map(|(m, (op, f))| {
                json!({"manager": m, "operation": op, "apiVersion": api_version,
                       "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                       "fieldsV1": to_fields_v1(f)})
            })
            .collect(),
    )
}

/// `{"f:metadata": {"f:labels": {"f:a": {}}}}` for `metadata.labels.a`.
fn to_fields_v1(paths: &BTreeSet<Path>) -> Json {
    fn insert(node: &mut Map<String, Json>, p: &[String]) {
        if let Some((head, tail)) = p.split_first() {
            let sub = node.entry(format!("f:{head}")).or_insert_with(|| json!({}));
            if let Some(m) = sub.as_object_mut() {
                insert(m, tail);
            }
        }
    }
    let mut root = Map::new();
    for p in paths {
        insert(&mut root, p);
    }
    Json::Object(root)
}

fn from_fields_v1(v: &Json, prefix: &mut Path, out: &mut BTreeSet<Path>) {
    let Some(m) = v.as_object() else { return };
    if m.is_empty() && !prefix.is_empty() {
        out.insert(prefix.clone());
        return;
    }
    for (k, sub) in m {
        if let Some(name) = k.strip_prefix("f:") {
            prefix.push(name.to_string());
            from_fields_v1(sub, prefix, out);
            prefix.pop();
        }
    }
}

/// The leaf paths an object sets: maps are walked, anything else (lists
/// too) is one field. Identity and server fields are nobody's; `status`
/// belongs to the status subresource.
fn fields(obj: &Json, status: bool) -> BTreeSet<Path> {
    fn walk(v: &Json, p: &mut Path, out: &mut BTreeSet<Path>) {
        match v.as_object() {
            Some(m) if !m.is_empty() => {
                for (k, x) in m {
                    p.push(k.clone());
                    walk(x, p, out);
                    p.pop();
                }
            }
            _ => {
                out.insert(p.clone());
            }
        }
    }
    let mut out = BTreeSet::new();
    for (k, v) in obj.as_object().into_iter().flatten() {
        let keep = match k.as_str() {
            "apiVersion" | "kind" => false,
            "status" => status,
            _ => !status,
        };
        if !keep {
            continue;
        }
        if k == "metadata" {
            for (mk, mv) in v.as_object().into_iter().flatten() {
                if matches!(
                    mk.as_str(),
                    "labels" | "annotations" | "finalizers" | "ownerReferences"
                ) {
                    let mut p = vec!["metadata".to_string(), mk.clone()];
                    walk(mv, &mut p, &mut out);
                }
            }
            continue;
        }
        walk(v, &mut vec![k.clone()], &mut out);
    }
    out
}

fn at<'a>(v: &'a Json, p: &[String]) -> Option<&'a Json> {
    p.iter().try_fold(v, |cur, s| cur.get(s))
}

fn set(v: &mut Json, p: &[String], x: Json) {
    let Some((last, init)) = p.split_last() else {
        return;
    };
    let mut cur = v;
    for s in init {
        if !cur[s.as_str()].is_object() {
            cur[s.as_str()] = json!({});
        }
        cur = &mut cur[s.as_str()];
    }
    cur[last.as_str()] = x;
}

/// Removes the field at `p`, and maps it leaves empty.
fn remove(v: &mut Json, p: &[String]) {
    let Some((first, rest)) = p.split_first() else {
        return;
    };
    let Some(m) = v.as_object_mut() else { return };
    if rest.is_empty() {
        m.remove(first);
        return;
    }
    if let Some(sub) = m.get_mut(first) {
        remove(sub, rest);
        if sub.as_object().is_some_and(Map::is_empty) && first != "metadata" {
            m.remove(first);
        }
    }
}

/// RFC 7386.
fn merge_patch(target: &mut Json, patch: &Json) {
    match patch.as_object() {
        Some(p) => {
            if !target.is_object() {
                *target = json!({});
            }
            for (k, v) in p {
                if v.is_null() {
                    if let Some(m) = target.as_object_mut() {
                        m.remove(k);
                    }
                } else {
                    merge_patch(&mut target[k.as_str()], v);
                }
            }
        }
        None => *target = patch.clone(),
    }
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
