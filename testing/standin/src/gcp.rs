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

#[cfg(test)]
mod replay;
mod storage;
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

/// A running stand-in.
pub struct Gcp {
    pub server: Server,
    world: Arc<Mutex<World>>,
}

impl Gcp {
    /// The base URL of one API (`compute`, `container`, `iam`, `crm`,
    /// `storage`), as a `*_custom_endpoint` takes it.
    pub fn endpoint(&self, api: &str) -> String {
        format!("{}/{api}/v1/", self.server.url)
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

    /// The shortages node pools meet here (a handle: what is added to it
    /// holds from the next request).
    pub fn shortages(&self) -> crate::capacity::Shortages {
        self.world().shortages.clone()
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

type Effect = Box<dyn FnOnce(&mut World) + Send>;

struct Op {
    /// The operation resource, without its status.
    json: Json,
    /// Looks so far: 0 PENDING, 1 RUNNING, 2 DONE.
    looks: u8,
    started: std::time::Instant,
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
    /// Shortages node pools meet ([`Gcp::shortages`]).
    shortages: crate::capacity::Shortages,
    calls: Vec<String>,
    /// Calls whose answers are held ([`Gcp::hold_answers`]).
    held: Vec<String>,
    next: u64,
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
        let (api, rest) = match path.split_once("/v1/") {
            Some(x) => x,
            None => return not_found(path),
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
            _ => not_found(path),
        };
        match method {
            Some(m) => crate::definitions::judged(name, m, answer, |message| {
                err(500, "INTERNAL", "backendError", &message)
            }),
            _ => answer,
        }
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

    /// One look at an operation: it moves on a step each time.
    fn look(&mut self, name: &str) -> Option<Json> {
        let op = self.ops.get_mut(name)?;
        if op.looks < 2 {
            op.looks += 1;
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

    /// The GKE operation running on `cluster`, if any.
    fn busy(&self, cluster: &str) -> Option<&str> {
        self.ops
            .iter()
            .find(|(_, o)| o.looks < 2 && o.cluster.as_deref() == Some(cluster))
            .map(|(n, _)| n.as_str())
    }

    // ---- Compute Engine --------------------------------------------

    fn compute(&mut self, req: &Req, s: &[&str]) -> Response<Body> {
        let full = s.join("/");
        match (s, &req.method) {
            (["projects", p, "global", "operations", name], &Method::GET)
            | (["projects", p, "global", "operations", name, "wait"], &Method::POST)
            | (["projects", p, "regions", _, "operations", name], &Method::GET)
            | (["projects", p, "regions", _, "operations", name, "wait"], &Method::POST) => {
                let _ = p;
                match self.look(name) {
                    Some(o) => json(200, o),
                    None => not_found(&full),
                }
            }
            (["projects", p, "zones", z, "instanceGroupManagers", name], &Method::GET) => {
                let key = format!("projects/{p}/zones/{z}/instanceGroupManagers/{name}");
                match self.objects.get(&key) {
                    Some(o) => json(200, o.clone()),
                    None => not_found(&key),
                }
            }
            (["projects", p, "aggregated", kind @ ("subnetworks" | "routers")], &Method::GET) => {
                // Every region's objects, keyed `regions/R`, as Compute's
                // aggregated lists give them.
                let prefix = format!("projects/{p}/regions/");
                let mut by_region: BTreeMap<String, Vec<Json>> = BTreeMap::new();
                for (k, v) in &self.objects {
                    let Some(rest) = k.strip_prefix(&prefix) else {
                        continue;
                    };
                    let parts: Vec<&str> = rest.split('/').collect();
                    if parts.len() == 3 && parts[1] == *kind {
                        by_region
                            .entry(format!("regions/{}", parts[0]))
                            .or_default()
                            .push(v.clone());
                    }
                }
                let items: Map<String, Json> = by_region
                    .into_iter()
                    .map(|(r, list)| (r, json!({ *kind: list })))
                    .collect();
                json(
                    200,
                    json!({"kind": format!("compute#{}AggregatedList", kind.trim_end_matches('s')), "items": items}),
                )
            }
            (["projects", p, "global", kind @ ("networks" | "firewalls")], m) => {
                let scope = format!("projects/{p}/global");
                self.compute_collection(req, m, &scope, kind)
            }
            (["projects", p, "regions", r, kind @ ("subnetworks" | "routers")], m) => {
                let scope = format!("projects/{p}/regions/{r}");
                self.compute_collection(req, m, &scope, kind)
            }
            (["projects", p, "global", kind @ ("networks" | "firewalls"), name], m) => {
                let scope = format!("projects/{p}/global");
                self.compute_item(req, m, &scope, kind, name)
            }
            (["projects", p, "regions", r, kind @ ("subnetworks" | "routers"), name], m) => {
                let scope = format!("projects/{p}/regions/{r}");
                self.compute_item(req, m, &scope, kind, name)
            }
            (
                ["projects", p, "regions", r, "subnetworks", name, verb @ ("expandIpCidrRange" | "setPrivateIpGoogleAccess")],
                &Method::POST,
            ) => {
                let scope = format!("projects/{p}/regions/{r}");
                self.subnetwork_verb(req, &scope, name, verb)
            }
            _ => err(
                404,
                "NOT_FOUND",
                "notFound",
                &format!("{} {full}: no such method", req.method),
            ),
        }
    }

    /// A network reference in any of the forms Compute accepts, as the
    /// path of an existing network.
    fn network_ref(&self, project: &str, r: &str) -> Result<String, Response<Body>> {
        let key = format!("projects/{project}/global/networks/{}", last(r));
        if self.objects.contains_key(&key) {
            Ok(key)
        } else {
            Err(not_found(&key))
        }
    }

    fn compute_collection(
        &mut self,
        req: &Req,
        m: &Method,
        scope: &str,
        kind: &str,
    ) -> Response<Body> {
        let prefix = format!("{scope}/{kind}/");
        if *m == Method::GET {
            let items: Vec<Json> = self
                .objects
                .iter()
                .filter(|(k, _)| k.starts_with(&prefix) && !k[prefix.len()..].contains('/'))
                .map(|(_, v)| v.clone())
                .collect();
            return page(items, req, "items");
        }
        if *m != Method::POST {
            return bad("method not allowed on a collection");
        }
        let b = match body(req) {
            Ok(b) => b,
            Err(r) => return r,
        };
        if let Some(rid) = req.param("requestId") {
            if let Some(name) = self.requests.get(&rid).cloned() {
                if let Some(o) = self.ops.get(&name) {
                    let mut out = o.json.clone();
                    out["status"] = json!(["PENDING", "RUNNING", "DONE"][o.looks as usize]);
                    return json(200, out);
                }
            }
        }
        let Some(name) = b["name"].as_str().map(str::to_string) else {
            return bad("Invalid value for field 'resource.name': ''. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'");
        };
        let valid = name.len() <= 63
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !name.ends_with('-');
        if !valid {
            return bad(&format!("Invalid value for field 'resource.name': '{name}'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{{0,61}}[a-z0-9])?)'"));
        }
        let key = format!("{prefix}{name}");
        if self.objects.contains_key(&key) {
            return err(
                409,
                "ALREADY_EXISTS",
                "alreadyExists",
                &format!("The resource '{key}' already exists"),
            );
        }
        let project = scope.split('/').nth(1).unwrap_or("").to_string();
        let mut obj = b.clone();
        let id = self.id();
        obj["kind"] = json!(format!("compute#{}", kind.trim_end_matches('s')));
        obj["id"] = json!(id.to_string());
        obj["creationTimestamp"] = json!(now());
        obj["selfLink"] = json!(compute_link(&key));
        if let Some(r) = scope.split("/regions/").nth(1) {
            obj["region"] = json!(compute_link(&format!("projects/{project}/regions/{r}")));
        }
        if kind != "networks" {
            let Some(net) = b["network"].as_str() else {
                return bad("Invalid value for field 'resource.network': ''. The network must be specified.");
            };
            match self.network_ref(&project, net) {
                Ok(n) => obj["network"] = json!(compute_link(&n)),
                Err(r) => return r,
            }
        }
        match kind {
            "networks" => {
                if obj.get("autoCreateSubnetworks").is_none() {
                    obj["autoCreateSubnetworks"] = json!(true);
                }
                if obj.get("routingConfig").is_none() {
                    obj["routingConfig"] = json!({"routingMode": "REGIONAL"});
                }
                if obj.get("mtu").is_none() {
                    obj["mtu"] = json!(1460);
                }
            }
            "subnetworks" => {
                let Some(cidr) = b["ipCidrRange"].as_str() else {
                    return bad(
                        "Invalid value for field 'resource.ipCidrRange': ''. Invalid IPCidrRange.",
                    );
                };
                obj["gatewayAddress"] = json!(gateway(cidr));
                obj["fingerprint"] = json!(fingerprint(id));
                obj["privateIpGoogleAccess"] =
                    json!(b["privateIpGoogleAccess"].as_bool().unwrap_or(false));
            }
            "firewalls" => {
                if obj.get("priority").is_none() {
                    obj["priority"] = json!(1000);
                }
                if obj.get("direction").is_none() {
                    obj["direction"] = json!("INGRESS");
                }
                if obj.get("disabled").is_none() {
                    obj["disabled"] = json!(false);
                }
            }
            _ => {}
        }
        let k = key.clone();
        let op = self.start_op(
            false,
            scope,
            "insert",
            &key,
            None,
            vec![Box::new(move |w: &mut World| {
                w.objects.insert(k, obj);
            })],
            vec![],
        );
        if let Some(rid) = req.param("requestId") {
            if let Some(n) = op["name"].as_str() {
                self.requests.insert(rid, n.to_string());
            }
        }
        json(200, op)
    }

    fn compute_item(
        &mut self,
        req: &Req,
        m: &Method,
        scope: &str,
        kind: &str,
        name: &str,
    ) -> Response<Body> {
        let key = format!("{scope}/{kind}/{name}");
        let Some(current) = self.objects.get(&key).cloned() else {
            return not_found(&key);
        };
        match *m {
            Method::GET => json(200, current),
            Method::DELETE => {
                if kind == "networks" {
                    let link = compute_link(&key);
                    if let Some((user, _)) = self
                        .objects
                        .iter()
                        .find(|(_, o)| o["network"].as_str() == Some(link.as_str()))
                    {
                        return err(
                            400,
                            "FAILED_PRECONDITION",
                            "resourceInUseByAnotherResource",
                            &format!(
                                "The network resource '{key}' is already being used by '{user}'"
                            ),
                        );
                    }
                }
                let k = key.clone();
                let op = self.start_op(
                    false,
                    scope,
                    "delete",
                    &key,
                    None,
                    vec![Box::new(move |w: &mut World| {
                        w.objects.remove(&k);
                    })],
                    vec![],
                );
                json(200, op)
            }
            Method::PATCH => {
                let b = match body(req) {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                if kind == "subnetworks" {
                    if b["fingerprint"] != current["fingerprint"] {
                        return err(
                            412,
                            "FAILED_PRECONDITION",
                            "conditionNotMet",
                            "Supplied fingerprint does not match current resource fingerprint.",
                        );
                    }
                    for k in b.as_object().into_iter().flatten().map(|(k, _)| k) {
                        if !["secondaryIpRanges", "fingerprint", "description"]
                            .contains(&k.as_str())
                        {
                            return bad(&format!("Invalid value for field 'resource.{k}': it cannot be changed by a patch"));
                        }
                    }
                }
                for k in ["name", "network"] {
                    if b.get(k).is_some_and(|v| {
                        last(v.as_str().unwrap_or("")) != last(current[k].as_str().unwrap_or(""))
                    }) {
                        return bad(&format!(
                            "Invalid value for field 'resource.{k}': it cannot be changed"
                        ));
                    }
                }
                let mut next = current.clone();
                for (k, v) in b.as_object().into_iter().flatten() {
                    if k == "network" {
                        continue;
                    }
                    match (next.as_object_mut(), v.is_null()) {
                        (Some(o), true) => {
                            o.remove(k);
                        }
                        _ => next[k] = v.clone(),
                    }
                }
                if kind == "subnetworks" {
                    let id = self.id();
                    next["fingerprint"] = json!(fingerprint(id));
                }
                let k = key.clone();
                let op = self.start_op(
                    false,
                    scope,
                    "patch",
                    &key,
                    None,
                    vec![Box::new(move |w: &mut World| {
                        w.objects.insert(k, next);
                    })],
                    vec![],
                );
                json(200, op)
            }
            _ => bad("method not allowed"),
        }
    }

    fn subnetwork_verb(
        &mut self,
        req: &Req,
        scope: &str,
        name: &str,
        verb: &str,
    ) -> Response<Body> {
        let key = format!("{scope}/subnetworks/{name}");
        if !self.objects.contains_key(&key) {
            return not_found(&key);
        }
        let b = match body(req) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let k = key.clone();
        let op = self.start_op(
            false,
            scope,
            verb,
            &key,
            None,
            vec![Box::new(move |w: &mut World| {
                if let Some(o) = w.objects.get_mut(&k) {
                    for (f, v) in b.as_object().into_iter().flatten() {
                        o[f] = v.clone();
                    }
                }
            })],
            vec![],
        );
        json(200, op)
    }

    // ---- Kubernetes Engine -----------------------------------------

    fn container(&mut self, req: &Req, s: &[&str]) -> Response<Body> {
        let full = s.join("/");
        // `clusters/NAME:verb` and `nodePools/NAME:verb` carry a custom verb.
        let (segs, verb): (Vec<&str>, Option<&str>) = match s.split_last() {
            Some((tail, head)) if tail.contains(':') => {
                let (name, verb) = tail.split_once(':').unwrap_or((tail, ""));
                let mut v = head.to_vec();
                v.push(name);
                (v, Some(verb))
            }
            _ => (s.to_vec(), None),
        };
        match (segs.as_slice(), &req.method, verb) {
            (["projects", p, "locations", l, "operations", name], &Method::GET, None) => {
                let _ = (p, l);
                match self.look(name) {
                    Some(o) => json(200, o),
                    None => google_rpc(
                        404,
                        "NOT_FOUND",
                        &format!("Operation \"{full}\" not found."),
                    ),
                }
            }
            (["projects", p, "locations", l, "clusters"], &Method::GET, None) => {
                let items: Vec<Json> = self
                    .objects
                    .iter()
                    .filter(|(k, _)| {
                        let parts: Vec<&str> = k.split('/').collect();
                        parts.len() == 6
                            && parts[1] == *p
                            && parts[4] == "clusters"
                            && (*l == "-" || parts[3] == *l)
                    })
                    .map(|(k, _)| self.cluster_view(k))
                    .collect();
                json(200, json!({ "clusters": items }))
            }
            (["projects", p, "locations", l, "clusters"], &Method::POST, None) => {
                self.create_cluster(req, p, l)
            }
            (["projects", p, "locations", l, "clusters", c], m, v) => {
                let key = format!("projects/{p}/locations/{l}/clusters/{c}");
                self.cluster_item(req, m, v, &key)
            }
            (["projects", p, "locations", l, "clusters", c, "nodePools"], m, None) => {
                let cluster = format!("projects/{p}/locations/{l}/clusters/{c}");
                if !self.objects.contains_key(&cluster) {
                    return google_rpc(404, "NOT_FOUND", &format!("Not found: {cluster}."));
                }
                if *m == Method::GET {
                    let items: Vec<Json> = self
                        .objects
                        .iter()
                        .filter(|(k, _)| k.starts_with(&format!("{cluster}/nodePools/")))
                        .map(|(_, v)| v.clone())
                        .collect();
                    return json(200, json!({ "nodePools": items }));
                }
                self.create_node_pool(req, &cluster)
            }
            (["projects", p, "locations", l, "clusters", c, "nodePools", np], m, v) => {
                let cluster = format!("projects/{p}/locations/{l}/clusters/{c}");
                self.node_pool_item(req, m, v, &cluster, np)
            }
            _ => google_rpc(
                404,
                "NOT_FOUND",
                &format!("{} {full}: no such method", req.method),
            ),
        }
    }

    fn create_cluster(&mut self, req: &Req, p: &str, l: &str) -> Response<Body> {
        let b = match body(req) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let mut c = b["cluster"].clone();
        let Some(name) = c["name"].as_str().map(str::to_string) else {
            return google_rpc(400, "INVALID_ARGUMENT", "Cluster.name must be specified.");
        };
        let key = format!("projects/{p}/locations/{l}/clusters/{name}");
        if self.objects.contains_key(&key) {
            return google_rpc(409, "ALREADY_EXISTS", &format!("Already exists: {key}."));
        }
        let network = last(c["network"].as_str().unwrap_or("default")).to_string();
        let net_key = format!("projects/{p}/global/networks/{network}");
        if !self.objects.contains_key(&net_key) {
            return google_rpc(
                400,
                "INVALID_ARGUMENT",
                &format!("Network \"{network}\" does not exist."),
            );
        }
        if let Some(sub) = c["subnetwork"].as_str() {
            let region = l
                .rsplit_once('-')
                .map_or(l, |(r, z)| if z.len() == 1 { r } else { l });
            let sub_key = format!("projects/{p}/regions/{region}/subnetworks/{}", last(sub));
            let Some(subnet) = self.objects.get(&sub_key) else {
                return google_rpc(
                    400,
                    "INVALID_ARGUMENT",
                    &format!("Subnetwork \"{sub_key}\" does not exist."),
                );
            };
            let ranges: Vec<&str> = subnet["secondaryIpRanges"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["rangeName"].as_str())
                .collect();
            for f in ["clusterSecondaryRangeName", "servicesSecondaryRangeName"] {
                if let Some(r) = c["ipAllocationPolicy"][f].as_str() {
                    if !ranges.contains(&r) {
                        return google_rpc(400, "INVALID_ARGUMENT", &format!("Retry budget exhausted (1 attempts): Secondary range \"{r}\" does not exist in network \"{network}\", subnetwork \"{}\".", last(sub)));
                    }
                }
            }
            c["subnetwork"] = json!(last(sub));
        }
        if let Some(pool) = c["workloadIdentityConfig"]["workloadPool"].as_str() {
            if pool != format!("{p}.svc.id.goog") {
                return google_rpc(400, "INVALID_ARGUMENT", &format!("Workload Identity Pool \"{pool}\" is invalid; it must be \"{p}.svc.id.goog\"."));
            }
        }
        let id = self.id();
        c["network"] = json!(network);
        c["location"] = json!(l);
        c["zone"] = json!(l);
        c["selfLink"] = json!(format!("https://container.googleapis.com/v1/{key}"));
        c["id"] = json!(format!("{id:x}"));
        match &self.kube {
            Some(k) => {
                use base64::Engine;
                // GKE's endpoint is a host; the stand-in's carries the
                // cluster's path too (`https://` + it is its API server).
                let name = c["name"].as_str().unwrap_or_default().to_string();
                c["endpoint"] = json!(k.of(&name).trim_start_matches("https://"));
                c["masterAuth"] = json!({"clusterCaCertificate": base64::engine::general_purpose::STANDARD.encode(&k.ca_pem)});
            }
            None => {
                c["endpoint"] = json!(format!("34.{}.{}.{}", id % 200, id / 200 % 250, id % 250));
                c["masterAuth"] = json!({"clusterCaCertificate": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCnN0YW5kaW4KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="});
            }
        }
        c["currentMasterVersion"] = json!("1.31.6-gke.1020000");
        c["currentNodeVersion"] = json!("1.31.6-gke.1020000");
        c["initialClusterVersion"] = c
            .get("initialClusterVersion")
            .cloned()
            .unwrap_or(json!("1.31.6-gke.1020000"));
        c["createTime"] = json!(now());
        c["status"] = json!("PROVISIONING");
        c["labelFingerprint"] = json!(fingerprint(id));
        c["servicesIpv4Cidr"] = json!("10.8.0.0/20");
        if c.get("releaseChannel").is_none() {
            c["releaseChannel"] = json!({"channel": "REGULAR"});
        }
        if let Some(pc) = c.get_mut("privateClusterConfig") {
            pc["privateEndpoint"] = json!("10.0.0.2");
            pc["publicEndpoint"] = json!(format!("34.{}.0.1", id % 200));
        }
        let initial = c["initialNodeCount"].as_u64().unwrap_or(0);
        c.as_object_mut().map(|o| o.remove("nodeConfig"));
        self.objects.insert(key.clone(), c);
        if initial > 0 {
            let pool = json!({"name": "default-pool", "initialNodeCount": initial,
                "config": {"machineType": "e2-medium", "diskSizeGb": 100}});
            self.put_node_pool(&key, pool, "RUNNING");
        }
        let k = key.clone();
        let k2 = key.clone();
        let op = self.start_op(
            true,
            &format!("projects/{p}/locations/{l}"),
            "CREATE_CLUSTER",
            &key,
            Some(key.clone()),
            vec![Box::new(move |w: &mut World| {
                if let Some(c) = w.objects.get_mut(&k) {
                    c["status"] = json!("RUNNING");
                }
                w.nodes_of(&k);
            })],
            vec![Box::new(move |w: &mut World| {
                if let Some(c) = w.objects.get_mut(&k2) {
                    c["status"] = json!("ERROR");
                }
            })],
        );
        json(200, op)
    }

    /// A shortage node pool `np` of `cluster` (as it would be after
    /// operation `op_type`) meets: refused now (the answer), or (after
    /// create) its operation set to fail with GKE's words for it.
    fn short_of_capacity(
        &mut self,
        cluster: &str,
        np: &Json,
        grows: u64,
        op_type: &str,
    ) -> Option<Response<Body>> {
        let project = cluster.split('/').nth(1).unwrap_or("");
        let w = Wants::of(cluster, np);
        let region = &w.region;
        let hit = self.shortages.hit(&crate::capacity::Ask {
            region,
            zones: &w.zones,
            instance_type: &w.machine,
            capacity: w.capacity,
            nodes: grows,
        })?;
        let (code, message) = match &hit.zone {
            Some(z) => ("ZONE_RESOURCE_POOL_EXHAUSTED", format!("The zone 'projects/{project}/zones/{z}' does not have enough resources available to fulfill the request. Try a different zone, or try again later.")),
            None => ("QUOTA_EXCEEDED", format!("Insufficient regional quota to satisfy request: resource \"GPUS\" in region {region}: request requires more than the quota left.")),
        };
        match hit.shortage.form {
            crate::capacity::Form::Refused => Some(google_rpc(
                403,
                "RESOURCE_EXHAUSTED",
                &format!("{code}: {message}"),
            )),
            crate::capacity::Form::AfterCreate => {
                self.failures.push((op_type.into(), code.into(), message));
                None
            }
            crate::capacity::Form::NoGpus => None,
        }
    }
}

/// What a node pool asks of its region, as a shortage is matched against.
struct Wants {
    region: String,
    zones: Vec<String>,
    machine: String,
    capacity: &'static str,
}

impl Wants {
    /// Node pool `np` of the cluster at `path` (or at a path under it).
    fn of(path: &str, np: &Json) -> Wants {
        let location = path.split('/').nth(3).unwrap_or("");
        let zonal = location.matches('-').count() >= 2;
        let region = match zonal {
            true => location.rsplit_once('-').map_or(location, |(r, _)| r),
            false => location,
        };
        let mut zones: Vec<String> = np["locations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|z| z.as_str().map(str::to_string))
            .collect();
        if zones.is_empty() && zonal {
            zones.push(location.to_string());
        }
        let config = &np["config"];
        let spot =
            config["spot"].as_bool() == Some(true) || config["preemptible"].as_bool() == Some(true);
        Wants {
            region: region.to_string(),
            zones,
            machine: config["machineType"]
                .as_str()
                .unwrap_or("e2-medium")
                .to_string(),
            capacity: if spot { "spot" } else { "on_demand" },
        }
    }
}

impl World {
    /// The cluster's nodes made to match node pool `key`'s size (none
    /// once it is gone), labelled as GKE labels them.
    fn nodes_of(&self, key: &str) {
        let Some(nodes) = self.kube.as_ref().and_then(|k| k.nodes.as_ref()) else {
            return;
        };
        let np = self.objects.get(key).cloned().unwrap_or_default();
        // An int64, which Google's JSON writes as a string.
        let count = &np["config"]["accelerators"][0]["acceleratorCount"];
        let gpus = count
            .as_u64()
            .or_else(|| count.as_str().and_then(|c| c.parse().ok()))
            .unwrap_or(0);
        let cluster = key.split("/clusters/").nth(1).unwrap_or("");
        let ask = Wants::of(key, &np);
        let pool = crate::kubernetes::PoolNodes {
            cluster: cluster.split('/').next().unwrap_or(""),
            key: "cloud.google.com/gke-nodepool",
            pool: last(key),
            labels: &np["config"]["labels"],
            gpus_per_node: gpus,
            gpus_withheld: self.shortages.withholds_gpus(&crate::capacity::Ask {
                region: &ask.region,
                zones: &[],
                instance_type: &ask.machine,
                capacity: ask.capacity,
                nodes: pool_nodes(&np),
            }),
        };
        nodes.scale(&pool, pool_nodes(&np));
    }

    /// Stores a node pool, its instance group manager and its size.
    fn put_node_pool(&mut self, cluster: &str, mut np: Json, status: &str) -> String {
        let name = np["name"].as_str().unwrap_or("").to_string();
        let project = cluster.split('/').nth(1).unwrap_or("").to_string();
        let location = cluster.split('/').nth(3).unwrap_or("").to_string();
        let zone = if location.matches('-').count() >= 2 {
            location.clone()
        } else {
            format!("{location}-a")
        };
        let cname = last(cluster).to_string();
        let igm =
            format!("projects/{project}/zones/{zone}/instanceGroupManagers/gke-{cname}-{name}-grp");
        let key = format!("{cluster}/nodePools/{name}");
        np["selfLink"] = json!(format!("https://container.googleapis.com/v1/{key}"));
        np["status"] = json!(status);
        np["version"] = json!("1.31.6-gke.1020000");
        if np["locations"].as_array().is_none_or(|l| l.is_empty()) {
            np["locations"] = json!([zone]);
        }
        np["instanceGroupUrls"] = json!([compute_link(
            &igm.replace("instanceGroupManagers", "instanceGroups")
        )]);
        if np["config"].get("diskSizeGb").is_none() {
            np["config"]["diskSizeGb"] = json!(100);
        }
        if np["config"].get("diskType").is_none() {
            np["config"]["diskType"] = json!("pd-balanced");
        }
        if np["config"].get("imageType").is_none() {
            np["config"]["imageType"] = json!("COS_CONTAINERD");
        }
        if np.get("management").is_none() {
            np["management"] = json!({"autoUpgrade": true, "autoRepair": true});
        }
        let size = np["initialNodeCount"].as_u64().unwrap_or(0);
        self.objects.insert(
            igm.clone(),
            json!({"kind": "compute#instanceGroupManager", "name": last(&igm), "zone": compute_link(&format!("projects/{project}/zones/{zone}")), "targetSize": size, "selfLink": compute_link(&igm)}),
        );
        self.objects.insert(key.clone(), np);
        key
    }

    /// A cluster as GKE shows it: with its node pools.
    fn cluster_view(&self, key: &str) -> Json {
        let mut out = self.objects.get(key).cloned().unwrap_or_default();
        out["nodePools"] = json!(self
            .objects
            .iter()
            .filter(|(k, _)| k.starts_with(&format!("{key}/nodePools/")))
            .map(|(_, v)| v.clone())
            .collect::<Vec<_>>());
        out
    }

    fn igm_of(&self, np: &Json) -> Option<String> {
        let url = np["instanceGroupUrls"][0].as_str()?;
        let path = url.split("/compute/v1/").nth(1)?;
        Some(path.replace("instanceGroups", "instanceGroupManagers"))
    }

    fn cluster_item(
        &mut self,
        req: &Req,
        m: &Method,
        verb: Option<&str>,
        key: &str,
    ) -> Response<Body> {
        let Some(current) = self.objects.get(key).cloned() else {
            return google_rpc(404, "NOT_FOUND", &format!("Not found: {key}."));
        };
        let scope = key.split("/clusters/").next().unwrap_or("").to_string();
        if *m == Method::GET && verb.is_none() {
            return json(200, self.cluster_view(key));
        }
        if let Some(op) = self.busy(key) {
            return google_rpc(
                400,
                "FAILED_PRECONDITION",
                &format!("Cluster is running incompatible operation {op}."),
            );
        }
        let k = key.to_string();
        match (m, verb) {
            (&Method::DELETE, None) => {
                let op = self.start_op(
                    true,
                    &scope,
                    "DELETE_CLUSTER",
                    key,
                    Some(key.to_string()),
                    vec![Box::new(move |w: &mut World| {
                        let pools: Vec<String> = w
                            .objects
                            .keys()
                            .filter(|x| x.starts_with(&format!("{k}/nodePools/")))
                            .cloned()
                            .collect();
                        for p in pools {
                            if let Some(igm) = w.objects.get(&p).and_then(|np| w.igm_of(np)) {
                                w.objects.remove(&igm);
                            }
                            w.objects.remove(&p);
                        }
                        w.objects.remove(&k);
                    })],
                    vec![],
                );
                if let Some(c) = self.objects.get_mut(key) {
                    c["status"] = json!("STOPPING");
                }
                json(200, op)
            }
            (&Method::PUT, None) => {
                let b = match body(req) {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                let fields = b["update"].as_object().cloned().unwrap_or_default();
                if fields.len() != 1 {
                    return google_rpc(
                        400,
                        "INVALID_ARGUMENT",
                        "Exactly one update can be applied to a cluster with each request.",
                    );
                }
                let op = self.start_op(
                    true,
                    &scope,
                    "UPDATE_CLUSTER",
                    key,
                    Some(key.to_string()),
                    vec![Box::new(move |w: &mut World| {
                        if let Some(c) = w.objects.get_mut(&k) {
                            for (f, v) in fields {
                                match f.as_str() {
                                    "desiredReleaseChannel" => c["releaseChannel"] = v,
                                    "desiredWorkloadIdentityConfig" => {
                                        c["workloadIdentityConfig"] = v
                                    }
                                    "desiredMasterVersion" => c["currentMasterVersion"] = v,
                                    "desiredPrivateClusterConfig" => {
                                        c["privateClusterConfig"]["enablePrivateEndpoint"] =
                                            v["enablePrivateEndpoint"].clone()
                                    }
                                    // Accepted as GKE accepts it; the stand-in
                                    // models the updates strata sends.
                                    _ => {}
                                }
                            }
                        }
                    })],
                    vec![],
                );
                json(200, op)
            }
            (&Method::POST, Some("setResourceLabels")) => {
                let b = match body(req) {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                if b["labelFingerprint"] != current["labelFingerprint"] {
                    return google_rpc(
                        400,
                        "FAILED_PRECONDITION",
                        "Labels could not be set due to fingerprint mismatch.",
                    );
                }
                let id = self.id();
                let op = self.start_op(
                    true,
                    &scope,
                    "SET_LABELS",
                    key,
                    Some(key.to_string()),
                    vec![Box::new(move |w: &mut World| {
                        if let Some(c) = w.objects.get_mut(&k) {
                            c["resourceLabels"] = b["resourceLabels"].clone();
                            c["labelFingerprint"] = json!(fingerprint(id));
                        }
                    })],
                    vec![],
                );
                json(200, op)
            }
            _ => google_rpc(400, "INVALID_ARGUMENT", "no such method on a cluster"),
        }
    }

    fn create_node_pool(&mut self, req: &Req, cluster: &str) -> Response<Body> {
        let b = match body(req) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let np = b["nodePool"].clone();
        let Some(name) = np["name"].as_str().map(str::to_string) else {
            return google_rpc(400, "INVALID_ARGUMENT", "NodePool.name must be specified.");
        };
        let key = format!("{cluster}/nodePools/{name}");
        if self.objects.contains_key(&key) {
            return google_rpc(409, "ALREADY_EXISTS", &format!("Already exists: {key}."));
        }
        if let Some(op) = self.busy(cluster) {
            return google_rpc(
                400,
                "FAILED_PRECONDITION",
                &format!("Cluster is running incompatible operation {op}."),
            );
        }
        for t in np["config"]["taints"].as_array().into_iter().flatten() {
            let e = t["effect"].as_str().unwrap_or("");
            if !["NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE"].contains(&e) {
                return google_rpc(
                    400,
                    "INVALID_ARGUMENT",
                    &format!("Invalid value for field 'node_pool.config.taints.effect': \"{e}\""),
                );
            }
        }
        let grows = pool_nodes(&np);
        if let Some(refused) = self.short_of_capacity(cluster, &np, grows, "CREATE_NODE_POOL") {
            return refused;
        }
        self.put_node_pool(cluster, np, "PROVISIONING");
        let (k, k2) = (key.clone(), key.clone());
        let op = self.start_op(
            true,
            cluster.split("/clusters/").next().unwrap_or(""),
            "CREATE_NODE_POOL",
            &key,
            Some(cluster.to_string()),
            vec![Box::new(move |w: &mut World| {
                if let Some(c) = w.objects.get_mut(&k) {
                    c["status"] = json!("RUNNING");
                }
                w.nodes_of(&k);
            })],
            vec![Box::new(move |w: &mut World| {
                if let Some(c) = w.objects.get_mut(&k2) {
                    c["status"] = json!("ERROR");
                    c["statusMessage"] = json!("node pool creation failed");
                }
            })],
        );
        json(200, op)
    }

    fn node_pool_item(
        &mut self,
        req: &Req,
        m: &Method,
        verb: Option<&str>,
        cluster: &str,
        name: &str,
    ) -> Response<Body> {
        let key = format!("{cluster}/nodePools/{name}");
        let Some(current) = self.objects.get(&key).cloned() else {
            return google_rpc(404, "NOT_FOUND", &format!("Not found: {key}."));
        };
        if *m == Method::GET && verb.is_none() {
            return json(200, current);
        }
        if let Some(op) = self.busy(cluster) {
            return google_rpc(
                400,
                "FAILED_PRECONDITION",
                &format!("Cluster is running incompatible operation {op}."),
            );
        }
        let scope = cluster.split("/clusters/").next().unwrap_or("").to_string();
        let k = key.clone();
        let igm = self.igm_of(&current);
        let op_type = match (m, verb) {
            (&Method::DELETE, None) => "DELETE_NODE_POOL",
            (&Method::POST, Some("setSize")) => "SET_NODE_POOL_SIZE",
            (&Method::POST, Some("setAutoscaling")) => "SET_NODE_POOL_AUTOSCALING",
            (&Method::POST, Some("setManagement")) => "SET_NODE_POOL_MANAGEMENT",
            (&Method::PUT, None) => "UPDATE_NODE_POOL",
            _ => return google_rpc(400, "INVALID_ARGUMENT", "no such method on a node pool"),
        };
        let b = match body(req) {
            Ok(b) => b,
            Err(r) => return r,
        };
        // A pool that grows needs capacity as a new one does.
        let mut after = current.clone();
        match op_type {
            "SET_NODE_POOL_SIZE" => after["initialNodeCount"] = b["nodeCount"].clone(),
            "SET_NODE_POOL_AUTOSCALING" => after["autoscaling"] = b["autoscaling"].clone(),
            "UPDATE_NODE_POOL" if b.get("locations").is_some() => {
                after["locations"] = b["locations"].clone()
            }
            _ => after = Json::Null,
        }
        let grows = pool_nodes(&after).saturating_sub(pool_nodes(&current));
        if !after.is_null() {
            if let Some(refused) = self.short_of_capacity(cluster, &after, grows, op_type) {
                return refused;
            }
        }
        let effect: Effect = match op_type {
            "DELETE_NODE_POOL" => Box::new(move |w: &mut World| {
                if let Some(np) = w.objects.get_mut(&k) {
                    np["autoscaling"] = json!({});
                    np["initialNodeCount"] = json!(0);
                }
                w.nodes_of(&k);
                w.objects.remove(&k);
                if let Some(i) = igm {
                    w.objects.remove(&i);
                }
            }),
            "SET_NODE_POOL_SIZE" => Box::new(move |w: &mut World| {
                if let Some(i) = igm.and_then(|i| w.objects.get_mut(&i)) {
                    i["targetSize"] = b["nodeCount"].clone();
                }
                if let Some(np) = w.objects.get_mut(&k) {
                    np["initialNodeCount"] = b["nodeCount"].clone();
                }
                w.nodes_of(&k);
            }),
            "SET_NODE_POOL_AUTOSCALING" => Box::new(move |w: &mut World| {
                if let Some(np) = w.objects.get_mut(&k) {
                    np["autoscaling"] = b["autoscaling"].clone();
                }
                w.nodes_of(&k);
            }),
            "SET_NODE_POOL_MANAGEMENT" => Box::new(move |w: &mut World| {
                if let Some(np) = w.objects.get_mut(&k) {
                    np["management"] = b["management"].clone();
                }
            }),
            _ => Box::new(move |w: &mut World| {
                if let Some(np) = w.objects.get_mut(&k) {
                    if let Some(l) = b.get("labels") {
                        np["config"]["labels"] = l["labels"].clone();
                    }
                    if let Some(l) = b.get("resourceLabels") {
                        np["config"]["resourceLabels"] = l["labels"].clone();
                    }
                    if let Some(t) = b.get("taints") {
                        np["config"]["taints"] = t["taints"].clone();
                    }
                    if let Some(l) = b.get("locations") {
                        np["locations"] = l.clone();
                    }
                }
            }),
        };
        if op_type == "DELETE_NODE_POOL" {
            if let Some(np) = self.objects.get_mut(&key) {
                np["status"] = json!("STOPPING");
            }
        }
        let op = self.start_op(
            true,
            &scope,
            op_type,
            &key,
            Some(cluster.to_string()),
            vec![effect],
            vec![],
        );
        json(200, op)
    }

    // ---- IAM ---------------------------------------------------------

    fn iam(&mut self, req: &Req, s: &[&str]) -> Response<Body> {
        match (s, &req.method) {
            (["projects", p, "serviceAccounts"], &Method::GET) => {
                let prefix = format!("projects/{p}/serviceAccounts/");
                let items: Vec<Json> = self
                    .objects
                    .iter()
                    .filter(|(k, _)| k.starts_with(&prefix))
                    .map(|(_, v)| v.clone())
                    .collect();
                page(items, req, "accounts")
            }
            (["projects", p, "serviceAccounts"], &Method::POST) => {
                let b = match body(req) {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                let id = b["accountId"].as_str().unwrap_or("").to_string();
                let valid = (6..=30).contains(&id.len())
                    && id.starts_with(|c: char| c.is_ascii_lowercase())
                    && id
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    && !id.ends_with('-');
                if !valid {
                    return google_rpc(400, "INVALID_ARGUMENT", &format!("Invalid account ID \"{id}\": it must be 6-30 characters, lowercase letters, digits and hyphens, starting with a letter."));
                }
                let email = format!("{id}@{p}.iam.gserviceaccount.com");
                let key = format!("projects/{p}/serviceAccounts/{email}");
                if self.objects.contains_key(&key) {
                    return google_rpc(
                        409,
                        "ALREADY_EXISTS",
                        &format!(
                            "Service account {id} already exists within project projects/{p}."
                        ),
                    );
                }
                let n = self.id();
                let mut sa = json!({
                    "name": key, "projectId": p, "uniqueId": format!("1{n:020}"),
                    "email": email, "etag": "MDEwMjE5MjA=", "oauth2ClientId": format!("1{n:020}"),
                });
                for f in ["displayName", "description"] {
                    if let Some(v) = b["serviceAccount"].get(f) {
                        sa[f] = v.clone();
                    }
                }
                self.objects.insert(key.clone(), sa.clone());
                // IAM is eventually consistent: a new account is not
                // readable for a moment.
                self.unseen.insert(key, 1);
                json(200, sa)
            }
            (["projects", _, "serviceAccounts", who], m) => {
                let Some(key) = self
                    .objects
                    .keys()
                    .find(|k| {
                        k.contains("/serviceAccounts/")
                            && (last(k) == *who
                                || self.objects[*k]["uniqueId"].as_str() == Some(who))
                    })
                    .cloned()
                else {
                    return google_rpc(404, "NOT_FOUND", &format!("Unknown service account {who}"));
                };
                if let Some(n) = self.unseen.get_mut(&key) {
                    if *n > 0 && *m == Method::GET {
                        *n -= 1;
                        return google_rpc(
                            404,
                            "NOT_FOUND",
                            &format!("Unknown service account {who}"),
                        );
                    }
                }
                match *m {
                    Method::GET => json(200, self.objects[&key].clone()),
                    Method::DELETE => {
                        self.objects.remove(&key);
                        json(200, json!({}))
                    }
                    Method::PATCH => {
                        let b = match body(req) {
                            Ok(b) => b,
                            Err(r) => return r,
                        };
                        let Some(mask) = b["updateMask"].as_str() else {
                            return google_rpc(400, "INVALID_ARGUMENT", "update_mask must be set.");
                        };
                        let sa = self.objects.get_mut(&key).map(|o| {
                            for f in mask.split(',') {
                                if !["displayName", "description"].contains(&f) {
                                    continue;
                                }
                                match b["serviceAccount"].get(f) {
                                    Some(v) => o[f] = v.clone(),
                                    None => {
                                        o.as_object_mut().map(|o| o.remove(f));
                                    }
                                }
                            }
                            o.clone()
                        });
                        json(200, sa.unwrap_or_default())
                    }
                    _ => google_rpc(
                        400,
                        "INVALID_ARGUMENT",
                        "no such method on a service account",
                    ),
                }
            }
            _ => google_rpc(404, "NOT_FOUND", "no such method"),
        }
    }

    // ---- Resource Manager -----------------------------------------------

    fn crm(&mut self, req: &Req, s: &[&str]) -> Response<Body> {
        let (["projects", pv], &Method::POST) = (s, &req.method) else {
            return google_rpc(404, "NOT_FOUND", "no such method");
        };
        let Some((p, verb)) = pv.split_once(':') else {
            return google_rpc(404, "NOT_FOUND", "no such method");
        };
        let policy = self
            .policies
            .entry(p.to_string())
            .or_insert_with(|| json!({"version": 1, "etag": "BwYAAAAAAAE=", "bindings": [{"role": "roles/owner", "members": ["user:owner@example.com"]}]}))
            .clone();
        match verb {
            "getIamPolicy" => {
                if let Err(r) = body(req) {
                    return r;
                }
                json(200, policy)
            }
            "setIamPolicy" => {
                let b = match body(req) {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                if b["policy"]["etag"] != policy["etag"] {
                    return google_rpc(409, "ABORTED", "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.");
                }
                for bind in b["policy"]["bindings"].as_array().into_iter().flatten() {
                    for m in bind["members"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Json::as_str)
                    {
                        if let Some(email) = m.strip_prefix("serviceAccount:") {
                            if email.ends_with(&format!("@{p}.iam.gserviceaccount.com"))
                                && !self
                                    .objects
                                    .contains_key(&format!("projects/{p}/serviceAccounts/{email}"))
                            {
                                return google_rpc(
                                    400,
                                    "INVALID_ARGUMENT",
                                    &format!("Service account {email} does not exist."),
                                );
                            }
                        }
                    }
                }
                let n = self.id();
                let mut next = b["policy"].clone();
                next["etag"] = json!(format!("BwY{n:013}="));
                next["version"] = json!(1);
                self.policies.insert(p.to_string(), next.clone());
                json(200, next)
            }
            _ => google_rpc(404, "NOT_FOUND", "no such method"),
        }
    }
}

/// A `google.rpc.Status` error, as the Container, IAM and Resource
/// Manager APIs give them.
/// The nodes a node pool keeps running: its size, or its autoscaler's
/// floor.
fn pool_nodes(np: &Json) -> u64 {
    let a = &np["autoscaling"];
    [
        &np["initialNodeCount"],
        &a["totalMinNodeCount"],
        &a["minNodeCount"],
    ]
    .iter()
    .filter_map(|n| n.as_u64())
    .max()
    .unwrap_or(0)
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
}
