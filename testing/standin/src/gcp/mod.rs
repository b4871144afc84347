//! Google Cloud's APIs, in memory, as Google documents them: the subset
//! strata's GCP driver uses, strict about it (an unknown field, a wrong
//! type or a wrong method is a 400), so the driver cannot drift from the
//! real API unnoticed.
//!
//! One server answers every API under its own prefix, the form the
//! Terraform provider's `*_custom_endpoint` settings take:
//!
//! | prefix | API |
//! | --- | --- |
//! | `/compute/v1/` | Compute Engine: networks, subnetworks, routers (NAT), firewalls, operations, instance group managers |
//! | `/container/v1/` | Kubernetes Engine: clusters, node pools, operations |
//! | `/iam/v1/` | IAM: service accounts |
//! | `/crm/v1/` | Resource Manager: project IAM policy |
//! | `/storage/v1/` | Cloud Storage JSON API: buckets, their IAM policies, HMAC keys (`storage.rs`) |
//! | `/xml/` | Cloud Storage XML API, signed with HMAC keys: objects (`xml.rs`) |
//! | `/token` | OAuth 2.0 token endpoint (refresh-token grant) |
//!
//! What the real services do that the driver must cope with, done here
//! too: long-running operations go PENDING → RUNNING → DONE over several
//! polls and carry their error; a compute insert's `requestId` makes a
//! retried insert the same insert; GKE refuses a second operation on a
//! cluster while one runs (`FAILED_PRECONDITION`); a new service account
//! is not readable at once; a project policy write with a stale `etag`
//! is `ABORTED`; list responses come in pages. [`Gcp::fail_next`] makes an
//! operation fail (`ZONE_RESOURCE_POOL_EXHAUSTED`, quota); injected answers
//! ([`crate::Server::inject`]) throttle or fail single calls.

mod compute;
mod container;
mod flex;
mod iam;
mod monitoring;
#[cfg(test)]
mod replay;
mod reservations;
mod rpc;
mod storage;
mod vms;
mod xml;

use crate::{json, serve, Body, Req, Server};
use hyper::{Method, Response};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The refresh token the token endpoint accepts.
pub const REFRESH_TOKEN: &str = "standin-refresh-token";
/// An access token every API accepts without the token endpoint (what
/// `GOOGLE_OAUTH_ACCESS_TOKEN` would hold).
pub const STATIC_TOKEN: &str = "standin-static-token";

/// Items per list page: small, so paging is exercised.
const PAGE: usize = 3;

/// A Kubernetes Engine operation as it ran: on which cluster, what, and
/// when it began and was first seen done.
#[derive(Debug, Clone)]
pub struct ClusterOperation {
    /// `projects/P/locations/L/clusters/C`.
    pub cluster: String,
    /// `CREATE_NODE_POOL`, `DELETE_NODE_POOL`, ...
    pub kind: String,
    pub began: std::time::Instant,
    pub ended: Option<std::time::Instant>,
}

/// A running stand-in.
pub struct Gcp {
    pub server: Server,
    world: Arc<Mutex<World>>,
}

impl Gcp {
    /// The base URL of one API (`compute`, `container`, `iam`, `crm`,
    /// `storage`), as a `*_custom_endpoint` takes it.
    pub fn endpoint(&self, api: &str) -> String {
        match api {
            // Cloud Monitoring's base URL has no version: its paths do.
            "monitoring" => format!("{}/monitoring/", self.server.url),
            _ => format!("{}/{api}/v1/", self.server.url),
        }
    }

    pub fn token_uri(&self) -> String {
        format!("{}/token", self.server.url)
    }

    fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every object held, by its path (`projects/p/global/networks/n`),
    /// project IAM bindings as `projects/p/iam/ROLE/MEMBER`.
    pub fn objects(&self) -> Vec<String> {
        let w = self.world();
        let mut out: Vec<String> = w.objects.keys().cloned().collect();
        for (project, policy) in &w.policies {
            for b in policy["bindings"].as_array().into_iter().flatten() {
                for m in b["members"].as_array().into_iter().flatten() {
                    out.push(format!(
                        "projects/{project}/iam/{}/{}",
                        b["role"].as_str().unwrap_or(""),
                        m.as_str().unwrap_or("")
                    ));
                }
            }
        }
        out
    }

    /// One object's JSON, as the API would return it.
    pub fn object(&self, path: &str) -> Option<Json> {
        self.world().objects.get(path).cloned()
    }

    /// Puts an object in place, as a run that died before recording it
    /// left it.
    pub fn put(&self, path: &str, object: Json) {
        self.world().objects.insert(path.to_string(), object);
    }

    /// Changes an object out of band (as another tool would).
    pub fn edit(&self, path: &str, f: impl FnOnce(&mut Json)) {
        if let Some(o) = self.world().objects.get_mut(path) {
            f(o);
        }
    }

    /// Requests seen, as `METHOD PATH`.
    pub fn calls(&self) -> Vec<String> {
        self.world().calls.clone()
    }

    /// Kubernetes Engine operations so far, in the order they began.
    pub fn cluster_operations(&self) -> Vec<ClusterOperation> {
        let w = self.world();
        let mut out: Vec<ClusterOperation> = w
            .ops
            .values()
            .filter_map(|o| {
                Some(ClusterOperation {
                    cluster: o.cluster.clone()?,
                    kind: o.json["operationType"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    began: o.started,
                    ended: o.ended,
                })
            })
            .collect();
        out.sort_by_key(|o| o.began);
        out
    }

    /// How many operations GKE refused because another ran on their
    /// cluster ("Cluster is running incompatible operation").
    pub fn refused_while_busy(&self) -> usize {
        self.world().refused_while_busy
    }

    /// The shortages node pools meet here (a handle: what is added to it
    /// holds from the next request).
    pub fn shortages(&self) -> crate::capacity::Shortages {
        self.world().shortages.clone()
    }

    /// Stamps what befalls node pools' VMs with `clock`'s time (the
    /// sandbox's, which its control endpoint sets).
    pub fn keep_time(&self, clock: crate::clock::Clock) {
        self.world().clock = clock;
    }

    /// What preempts VMs of node pools here, as Compute Engine records
    /// it, for the control endpoint's `POST /preempt`.
    pub fn preempter(&self) -> crate::capacity::Preempter {
        crate::capacity::preempter_of(self.world.clone(), World::preempt)
    }

    /// What records egress through Cloud NAT gateways here, for the
    /// control endpoint's `POST /egress`.
    pub fn egresser(&self) -> crate::capacity::Egresser {
        crate::capacity::egresser_of(self.world.clone(), World::egress)
    }

    /// Requests whose `METHOD PATH` starts with `call` are acted on and
    /// their answers held back for an hour: a client killed meanwhile
    /// dies after the cloud acted and before it heard.
    pub fn hold_answers(&self, call: &str) {
        self.world().held.push(call.to_string());
    }

    /// Answers are no longer held.
    pub fn release_answers(&self) {
        self.world().held.clear();
    }

    /// The next operation whose type contains `op_type` (`CREATE_NODE_POOL`,
    /// `insert`) fails with `code` and `message`.
    pub fn fail_next(&self, op_type: &str, code: &str, message: &str) {
        self.world()
            .failures
            .push((op_type.into(), code.into(), message.into()));
    }
}

/// Starts the stand-in on a free port.
pub fn start() -> std::io::Result<Gcp> {
    serve_world(World::default())
}

/// Starts the stand-in with every GKE cluster's endpoint and CA those of
/// the Kubernetes stand-in at `kube`.
pub fn start_with_kube(kube: crate::kubernetes::Endpoint) -> std::io::Result<Gcp> {
    serve_world(World {
        kube: Some(kube),
        ..World::default()
    })
}

fn serve_world(world: World) -> std::io::Result<Gcp> {
    let world = Arc::new(Mutex::new(world));
    wake_waiting(Arc::downgrade(&world));
    let w = world.clone();
    let server = serve(move |req| {
        let w = w.clone();
        async move {
            let (answer, held) = {
                let mut world = w.lock().unwrap_or_else(|e| e.into_inner());
                let call = format!("{} {}", req.method, req.path);
                let held = world.held.iter().any(|h| call.starts_with(h.as_str()));
                world.calls.push(call);
                (world.handle(&req), held)
            };
            if held {
                // Acted on, never answered: the client dies waiting.
                tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            }
            answer
        }
    })?;
    Ok(Gcp { server, world })
}

/// Gives flex-start pools their nodes once their capacity is there, as
/// GKE does while their VMs wait; ends with the stand-in.
fn wake_waiting(world: std::sync::Weak<Mutex<World>>) {
    std::thread::spawn(move || loop {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let Some(world) = world.upgrade() else {
            return;
        };
        world.lock().unwrap_or_else(|e| e.into_inner()).wake();
    });
}

type Effect = Box<dyn FnOnce(&mut World) + Send>;

struct Op {
    /// The operation resource, without its status.
    json: Json,
    /// Looks so far: 0 PENDING, 1 RUNNING, 2 DONE.
    looks: u8,
    started: std::time::Instant,
    /// When it was first seen DONE.
    ended: Option<std::time::Instant>,
    /// Done when it succeeds.
    then: Vec<Effect>,
    /// Done when it fails (a node pool left in ERROR).
    or_else: Vec<Effect>,
    /// `(code, message)` it fails with.
    error: Option<(String, String)>,
    /// The GKE cluster it runs on, which takes one operation at a time.
    cluster: Option<String>,
    container: bool,
}

#[derive(Default)]
struct World {
    /// The Kubernetes stand-in clusters answer as, if any.
    kube: Option<crate::kubernetes::Endpoint>,
    objects: BTreeMap<String, Json>,
    /// Project → IAM policy.
    policies: BTreeMap<String, Json>,
    ops: BTreeMap<String, Op>,
    /// Compute `requestId` → operation name.
    requests: BTreeMap<String, String>,
    /// Path → reads that still answer 404 (eventual consistency).
    unseen: BTreeMap<String, u32>,
    tokens: Vec<String>,
    failures: Vec<(String, String, String)>,
    /// Operations refused because another ran on their cluster.
    refused_while_busy: usize,
    /// Shortages node pools meet ([`Gcp::shortages`]).
    shortages: crate::capacity::Shortages,
    calls: Vec<String>,
    /// Calls whose answers are held ([`Gcp::hold_answers`]).
    held: Vec<String>,
    next: u64,
    /// What befell node pools' VMs (see `vms.rs`).
    vm_records: Vec<Json>,
    /// Each node pool's VMs, as its group last sized it.
    vm_counts: BTreeMap<String, u64>,
    /// The time the VMs' records are stamped with ([`Gcp::keep_time`]).
    clock: crate::clock::Clock,
    /// Bytes each Cloud NAT gateway sent out (see `monitoring.rs`).
    nat_sent: Vec<monitoring::Sent>,
    /// Flex-start pools whose VMs wait for capacity (see `flex.rs`).
    waiting: std::collections::BTreeSet<String>,
}

/// An error as Google's APIs give it (`google.rpc.Status` in JSON, with
/// the legacy `errors` list the Compute and Storage APIs still send).
fn err(code: u16, status: &str, reason: &str, message: &str) -> Response<Body> {
    json(
        code,
        json!({"error": {
            "code": code,
            "message": message,
            "status": status,
            "errors": [{"message": message, "domain": "global", "reason": reason}],
        }}),
    )
}

fn not_found(what: &str) -> Response<Body> {
    err(
        404,
        "NOT_FOUND",
        "notFound",
        &format!("The resource '{what}' was not found"),
    )
}

/// Compute's refusal while an operation on the object still runs.
fn not_ready(what: &str) -> Response<Body> {
    err(
        400,
        "FAILED_PRECONDITION",
        "resourceNotReady",
        &format!("The resource '{what}' is not ready"),
    )
}

fn bad(message: &str) -> Response<Body> {
    err(400, "INVALID_ARGUMENT", "invalid", message)
}

fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    rfc3339(secs)
}

/// RFC 3339 in UTC from seconds since the epoch.
fn rfc3339(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.000Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn body(req: &Req) -> Result<Json, Response<Body>> {
    if req.body.is_empty() {
        return Ok(Json::Object(Map::new()));
    }
    serde_json::from_slice(&req.body)
        .map_err(|e| bad(&format!("Invalid JSON payload received. {e}")))
}

/// The last path segment of a URL or partial path.
fn last(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

fn page(items: Vec<Json>, req: &Req, field: &str) -> Response<Body> {
    let start: usize = req
        .param("pageToken")
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let end = (start + PAGE).min(items.len());
    let mut out = json!({ field: items.get(start..end).unwrap_or(&[]) });
    if end < items.len() {
        out["nextPageToken"] = json!(end.to_string());
    }
    json(200, out)
}

/// The type GKE reports for an operation the stand-in names more
/// finely (its own names pick the effect and the faults a test sets):
/// GKE's `Operation.Type` has no type of its own for a node pool's
/// update or its autoscaling.
fn container_operation_type(op_type: &str) -> &str {
    match op_type {
        "UPDATE_NODE_POOL" => "UPGRADE_NODES",
        "SET_NODE_POOL_AUTOSCALING" => "UPDATE_CLUSTER",
        other => other,
    }
}

fn compute_link(path: &str) -> String {
    format!("https://www.googleapis.com/compute/v1/{path}")
}

impl World {
    fn id(&mut self) -> u64 {
        self.next += 1;
        1_000_000_000_000 + self.next
    }

    fn handle(&mut self, req: &Req) -> Response<Body> {
        if req.path == "/token" {
            return self.token(req);
        }
        // The XML API signs with HMAC keys, not OAuth tokens.
        if let Some(rest) = req.path.strip_prefix("/xml/") {
            return self.xml(req, rest);
        }
        self.settle();
        let auth = req.bearer();
        if !auth.is_some_and(|t| t == STATIC_TOKEN || self.tokens.iter().any(|x| x == t)) {
            return err(
                401,
                "UNAUTHENTICATED",
                "authError",
                "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
            );
        }
        let path = req.path.trim_start_matches('/');
        // Cloud Monitoring's is version 3 (`monitoring/v3/projects/…`).
        let (api, rest) = match (path.split_once("/v1/"), path.strip_prefix("monitoring/v3/")) {
            (_, Some(rest)) => ("monitoring", rest),
            (Some(x), None) => x,
            (None, None) => return not_found(path),
        };
        let segs: Vec<&str> = rest.split('/').collect();
        // Held to Google's definitions: the request before it is served,
        // the stand-in's answer after.
        let name = if api == "crm" {
            "cloudresourcemanager"
        } else {
            api
        };
        let method = match crate::definitions::request(name, req.method.as_str(), rest, &req.body) {
            // No method of the API's resources at that path or with that
            // HTTP method: Google's front end knows no such URL.
            Ok(None) => {
                return err(
                    404,
                    "NOT_FOUND",
                    "notFound",
                    &format!(
                        "The requested URL {} {} was not found on this server.",
                        req.method, req.path
                    ),
                )
            }
            Ok(m) => m,
            Err(refused) => {
                let message = format!("Invalid JSON payload received for {}", refused.said());
                return err(400, "INVALID_ARGUMENT", "invalid", &message);
            }
        };
        let answer = match api {
            "compute" => self.compute(req, &segs),
            "container" => self.container(req, &segs),
            "iam" => self.iam(req, &segs),
            "crm" => self.crm(req, &segs),
            "storage" => self.storage(req, &segs),
            "monitoring" => self.monitoring(req, &segs),
            _ => not_found(path),
        };
        let answer = match method {
            Some(m) => crate::definitions::judged(name, m, answer, |message| {
                err(500, "INTERNAL", "backendError", &message)
            }),
            _ => answer,
        };
        rpc::judged(answer)
    }

    /// The refresh-token grant of RFC 6749 §6, as Google's endpoint answers it.
    fn token(&mut self, req: &Req) -> Response<Body> {
        if req.method != Method::POST {
            return json(405, json!({"error": "invalid_request"}));
        }
        // Google's endpoint takes the grant as a form (RFC 6749) or as
        // JSON (what google-cloud-auth sends).
        let json_body = req
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("application/json"));
        let form: BTreeMap<String, String> = if json_body {
            serde_json::from_slice::<Map<String, Json>>(&req.body)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|(k, v)| Some((k, v.as_str()?.to_string())))
                .collect()
        } else {
            String::from_utf8_lossy(&req.body)
                .split('&')
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (crate::decode(k), crate::decode(&v.replace('+', " "))))
                .collect()
        };
        if form.get("grant_type").map(String::as_str) != Some("refresh_token") {
            return json(400, json!({"error": "unsupported_grant_type"}));
        }
        if form.get("refresh_token").map(String::as_str) != Some(REFRESH_TOKEN) {
            return json(
                400,
                json!({"error": "invalid_grant", "error_description": "Bad Request"}),
            );
        }
        let n = self.id();
        let token = format!("ya29.standin-{n}");
        self.tokens.push(token.clone());
        json(
            200,
            json!({
                "access_token": token,
                "expires_in": 3599,
                "token_type": "Bearer",
                "scope": "https://www.googleapis.com/auth/cloud-platform",
            }),
        )
    }

    // ---- operations -------------------------------------------------

    /// Starts an operation; a matching [`Gcp::fail_next`] makes it fail.
    #[allow(clippy::too_many_arguments)]
    fn start_op(
        &mut self,
        container: bool,
        scope: &str,
        op_type: &str,
        target: &str,
        cluster: Option<String>,
        then: Vec<Effect>,
        or_else: Vec<Effect>,
    ) -> Json {
        let n = self.id();
        let name = if container {
            format!("operation-{n}-{:08x}", n.wrapping_mul(2_654_435_761) as u32)
        } else {
            format!(
                "operation-{n}-{:08x}-{:08x}",
                n.wrapping_mul(40_503) as u32,
                n as u32
            )
        };
        let error = self
            .failures
            .iter()
            .position(|(t, _, _)| op_type.contains(t.as_str()))
            .map(|i| self.failures.remove(i))
            .map(|(_, c, m)| (c, m));
        let op = if container {
            let location = scope.split('/').nth(3).unwrap_or("");
            json!({
                "name": name,
                "zone": location,
                "location": location,
                "operationType": container_operation_type(op_type),
                "selfLink": format!("https://container.googleapis.com/v1/{scope}/operations/{name}"),
                "targetLink": format!("https://container.googleapis.com/v1/{target}"),
                "startTime": now(),
            })
        } else {
            let mut o = json!({
                "kind": "compute#operation",
                "id": n.to_string(),
                "name": name,
                "operationType": op_type,
                "targetLink": compute_link(target),
                "targetId": n.to_string(),
                "user": "standin@example.iam.gserviceaccount.com",
                "progress": 0,
                "insertTime": now(),
                "startTime": now(),
                "selfLink": compute_link(&format!("{scope}/operations/{name}")),
            });
            if let Some(r) = scope.split("/regions/").nth(1) {
                o["region"] = json!(compute_link(&format!(
                    "{}/regions/{r}",
                    scope.split("/regions/").next().unwrap_or("")
                )));
            }
            o
        };
        self.ops.insert(
            name,
            Op {
                json: op.clone(),
                looks: 0,
                started: std::time::Instant::now(),
                ended: None,
                then,
                or_else,
                error,
                cluster,
                container,
            },
        );
        let mut shown = op;
        shown["status"] = json!("PENDING");
        shown
    }

    /// GKE's refusal of an operation on a cluster another one is running
    /// on, counted ([`Gcp::refused_while_busy`]).
    fn incompatible(&mut self, running: &str) -> Response<Body> {
        self.refused_while_busy += 1;
        google_rpc(
            400,
            "FAILED_PRECONDITION",
            &format!("Cluster is running incompatible operation {running}."),
        )
    }

    /// One look at an operation: it moves on a step each time.
    fn look(&mut self, name: &str) -> Option<Json> {
        let op = self.ops.get_mut(name)?;
        if op.looks < 2 {
            op.looks += 1;
        }
        if op.looks == 2 && op.ended.is_none() {
            op.ended = Some(std::time::Instant::now());
        }
        let mut out = op.json.clone();
        out["status"] = json!(["PENDING", "RUNNING", "DONE"][op.looks as usize]);
        if op.looks < 2 {
            return Some(out);
        }
        let effects = if op.error.is_some() {
            std::mem::take(&mut op.or_else)
        } else {
            std::mem::take(&mut op.then)
        };
        op.then.clear();
        let error = op.error.clone();
        let container = op.container;
        out["endTime"] = json!(now());
        if let Some((code, message)) = error {
            if container {
                out["error"] = json!({"code": 8, "message": format!("{code}: {message}")});
                out["statusMessage"] = json!(format!("{code}: {message}"));
            } else {
                out["error"] = json!({"errors": [{"code": code, "message": message}]});
                out["httpErrorStatusCode"] = json!(400);
                out["httpErrorMessage"] = json!("BAD REQUEST");
            }
        } else if !container {
            out["progress"] = json!(100);
        }
        if let Some(op) = self.ops.get_mut(name) {
            op.json = out.clone();
            op.json.as_object_mut().map(|o| o.remove("status"));
        }
        for e in effects {
            e(self);
        }
        Some(out)
    }

    /// Ends the operations nobody followed ([`crate::unattended`]).
    fn settle(&mut self) {
        let stale = crate::unattended(&self.ops, |o| (o.looks < 2).then_some(o.started));
        for name in stale {
            while self.ops.get(&name).is_some_and(|o| o.looks < 2) {
                self.look(&name);
            }
        }
    }

    /// Whether a Compute operation on the object at `key` is still
    /// running: Compute refuses to change or delete it meanwhile
    /// (`resourceNotReady`), so a lost answer's operation, still running,
    /// cannot be overtaken by the next call on the same object.
    fn busy_object(&self, key: &str) -> bool {
        let link = compute_link(key);
        self.ops
            .values()
            .any(|o| o.looks < 2 && !o.container && o.json["targetLink"] == json!(link))
    }

    /// The GKE operation running on `cluster`, if any.
    fn busy(&self, cluster: &str) -> Option<&str> {
        self.ops
            .iter()
            .find(|(_, o)| o.looks < 2 && o.cluster.as_deref() == Some(cluster))
            .map(|(n, _)| n.as_str())
    }
}

/// A `google.rpc.Status` error, as the Container, IAM and Resource
/// Manager APIs give them.
/// The nodes a node pool keeps running: its size, or its autoscaler's
/// floor, and never more than its autoscaler's ceiling (the autoscaler
/// removes nodes above a lowered maximum).
fn pool_nodes(np: &Json) -> u64 {
    let a = &np["autoscaling"];
    let size = [
        &np["initialNodeCount"],
        &a["totalMinNodeCount"],
        &a["minNodeCount"],
    ]
    .into_iter()
    .filter_map(int64)
    .max()
    .unwrap_or(0);
    let ceiling = [&a["totalMaxNodeCount"], &a["maxNodeCount"]]
        .into_iter()
        .filter_map(int64)
        .min();
    ceiling.map_or(size, |c| size.min(c))
}

/// An int64 field, which Google's JSON writes as a string (a number is
/// taken too).
fn int64(v: &Json) -> Option<u64> {
    v.as_u64().or_else(|| v.as_str()?.parse().ok())
}

fn google_rpc(code: u16, status: &str, message: &str) -> Response<Body> {
    json(
        code,
        json!({"error": {"code": code, "message": message, "status": status}}),
    )
}

fn fingerprint(n: u64) -> String {
    format!("{:016x}", n.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// The first host address of a CIDR block (the subnet's gateway).
fn gateway(cidr: &str) -> String {
    let ip = cidr.split('/').next().unwrap_or("");
    let mut octets: Vec<u32> = ip.split('.').filter_map(|o| o.parse().ok()).collect();
    if let Some(l) = octets.last_mut() {
        *l += 1;
    }
    octets
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: Method, path: &str, body: Json) -> Req {
        Req::with_bearer(method, path, STATIC_TOKEN, &body)
    }

    /// A body Google's definition refuses is refused before the stand-in
    /// looks at it, naming the method and the field.
    #[test]
    fn requests_are_held_to_googles_definitions() {
        let mut w = World::default();
        let nets = "/compute/v1/projects/acme-ml/global/networks";
        let body = json!({"name": "n", "autoCreateSubnetwork": false, "selfLink": "x"});
        let r = w.handle(&req(Method::POST, nets, body));
        assert_eq!(r.status().as_u16(), 400);
        let text = String::from_utf8_lossy(&crate::ready_bytes(r.into_body())).to_string();
        for want in [
            "compute.networks.insert",
            "$.autoCreateSubnetwork: unknown field",
            "$.selfLink: output only",
        ] {
            assert!(text.contains(want), "{want}: {text}");
        }
    }

    fn status(r: &Response<Body>) -> u16 {
        r.status().as_u16()
    }

    #[test]
    fn strict_about_fields_and_operations_take_several_looks() {
        let mut w = World::default();
        let nets = "/compute/v1/projects/p/global/networks";
        let r = w.handle(&req(
            Method::POST,
            nets,
            json!({"name": "n", "autoCreateSubnets": false}),
        ));
        assert_eq!(status(&r), 400, "an unknown field is refused");
        let r = w.handle(&req(Method::POST, nets, json!({"name": "n", "mtu": true})));
        assert_eq!(status(&r), 400, "a wrongly typed field is refused");
        let r = w.handle(&req(
            Method::POST,
            nets,
            json!({"name": "n", "autoCreateSubnetworks": false}),
        ));
        assert_eq!(status(&r), 200);
        let r = w.handle(&req(Method::GET, &format!("{nets}/n"), json!(null)));
        assert_eq!(status(&r), 404, "not there before the operation is done");
        let op = w.ops.keys().next().cloned().unwrap_or_default();
        let wait = format!("/compute/v1/projects/p/global/operations/{op}/wait");
        let looks: Vec<Json> = (0..3)
            .filter_map(|_| w.look(&op))
            .map(|o| o["status"].clone())
            .collect();
        assert_eq!(looks, vec![json!("RUNNING"), json!("DONE"), json!("DONE")]);
        assert_eq!(
            status(&w.handle(&req(Method::POST, &wait, json!(null)))),
            200
        );
        let r = w.handle(&req(Method::POST, nets, json!({"name": "n"})));
        assert_eq!(status(&r), 409, "a duplicate is refused");
        let r = w.handle(&req(Method::PUT, &format!("{nets}/n"), json!({})));
        assert_eq!(status(&r), 404, "a method the API lacks is no URL it knows");
        let r = w.handle(&req(
            Method::GET,
            "/compute/v1/projects/p/global/netwerks",
            json!(null),
        ));
        assert_eq!(status(&r), 404, "a misspelt path is no URL it knows");
    }

    /// An operation whose answer was lost still runs; the next change to
    /// its object is refused until it ends, so a patch cannot land after
    /// a delete and bring the object back.
    #[test]
    fn an_object_with_a_running_operation_is_not_ready() {
        let mut w = World::default();
        let nets = "/compute/v1/projects/p/global/networks";
        let net = format!("{nets}/n");
        let body = json!({"name": "n", "autoCreateSubnetworks": false});
        assert_eq!(status(&w.handle(&req(Method::POST, nets, body))), 200);
        let insert = w.ops.keys().next().cloned().unwrap_or_default();
        while w.look(&insert).is_some_and(|o| o["status"] != "DONE") {}
        let patch = json!({"description": "x"});
        assert_eq!(status(&w.handle(&req(Method::PATCH, &net, patch))), 200);
        let r = w.handle(&req(Method::DELETE, &net, json!(null)));
        assert_eq!(status(&r), 400);
        let text = String::from_utf8_lossy(&crate::ready_bytes(r.into_body())).to_string();
        assert!(text.contains("resourceNotReady"), "{text}");
        let patching: Vec<String> = w.ops.keys().filter(|k| **k != insert).cloned().collect();
        for op in &patching {
            while w.look(op).is_some_and(|o| o["status"] != "DONE") {}
        }
        assert_eq!(
            status(&w.handle(&req(Method::DELETE, &net, json!(null)))),
            200
        );
    }
}
