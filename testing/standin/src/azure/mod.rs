//! Azure Resource Manager, in memory, over HTTPS, as Microsoft documents
//! it: the resource types strata's Azure driver uses, strict about them (a
//! missing or unknown `api-version`, an unknown field or a wrong method is
//! a 400), and the Microsoft identity platform's token endpoint.
//!
//! What the real service does that the driver must cope with, done here
//! too: writes answer 201/202 with an `Azure-AsyncOperation` or `Location`
//! header and finish over several polls (`InProgress` → `Succeeded` or
//! `Failed` with its error); `Retry-After` on them; resources show
//! `provisioningState`; a virtual network PUT without its subnets removes
//! them; AKS takes one operation per cluster (`OperationNotAllowed` while
//! one runs) and refuses to change a pool's VM size; a role assignment for
//! a just-made identity fails once with `PrincipalNotFound`; lists come in
//! pages with `nextLink`; `$filter=tagName eq … and tagValue eq …` finds
//! tagged resources. [`Azure::fail_next`] makes an operation fail
//! (`AllocationFailed`, `SkuNotAvailable`, quota).

use crate::definitions::Side;
use crate::{json, serve_tls, Body, Req, Server};
use hyper::{Method, Response};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

pub const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";
pub const SUBSCRIPTION: &str = "00000000-0000-0000-0000-000000000000";
pub const CLIENT_ID: &str = "11111111-2222-3333-4444-555555555555";
pub const CLIENT_SECRET: &str = "standin-client-secret";

mod errors;
mod health;
pub mod keyvault;
mod metrics;
mod operations;
#[cfg(test)]
mod replay;
mod reservations;
mod scores;
mod storage;
mod types;
mod writes;

pub use storage::{Blobs, Read};

use types::{type_key, type_name, Mode, TypeInfo, ROLES, TYPES};

const PAGE: usize = 3;

/// A running stand-in.
pub struct Azure {
    pub server: Server,
    /// The test CA's certificate (PEM), for `SSL_CERT_FILE`.
    pub ca_pem: String,
    world: Arc<Mutex<World>>,
}

impl Azure {
    fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every resource id held.
    pub fn ids(&self) -> Vec<String> {
        self.world()
            .objects
            .values()
            .filter_map(|o| o["id"].as_str().map(str::to_string))
            .collect()
    }

    /// One resource as ARM returns it (id compared without case).
    pub fn get(&self, id: &str) -> Option<Json> {
        self.world().objects.get(&id.to_ascii_lowercase()).cloned()
    }

    /// The next asynchronous create or update (a PUT) of a resource type
    /// whose path contains `kind` (`agentPools`) fails with `code` and
    /// `message`, as a capacity failure does.
    pub fn fail_next(&self, kind: &str, code: &str, message: &str) {
        self.world()
            .failures
            .push((kind.to_ascii_lowercase(), code.into(), message.into()));
    }

    /// Requests seen, as `METHOD PATH`.
    pub fn calls(&self) -> Vec<String> {
        self.world().calls.clone()
    }

    /// How many writes AKS refused because an operation was running on
    /// their cluster (`OperationNotAllowed`).
    pub fn refused_while_busy(&self) -> usize {
        self.world().refused_while_busy
    }

    /// The shortages agent pools meet here (a handle: what is added to it
    /// holds from the next request).
    pub fn shortages(&self) -> crate::capacity::Shortages {
        self.world().shortages.clone()
    }

    /// What spot-evicts VMs of AKS pools here, as Resource Health
    /// annotates them, for the control endpoint's `POST /preempt`.
    pub fn preempter(&self) -> crate::capacity::Preempter {
        crate::capacity::preempter_of(self.world.clone(), World::preempt)
    }

    /// What meters bytes sent out through AKS clusters' outbound load
    /// balancers, for the control endpoint's `POST /egress`.
    pub fn egresser(&self) -> crate::capacity::Egresser {
        crate::capacity::egresser_of(self.world.clone(), World::egress)
    }

    /// The storage accounts' blobs, for the S3 gateway stand-in.
    pub fn blobs(&self) -> Blobs {
        Blobs(self.world.clone())
    }

    /// An access token Resource Manager accepts, as `az account
    /// get-access-token` would print one.
    pub fn issue_token(&self) -> String {
        let mut w = self.world();
        let n = w.id();
        let t = format!("eyJ0eXAiOiJKV1QifQ.cli-{n}.sig");
        w.tokens.push(t.clone());
        t
    }
}

/// Starts the stand-in on a free port.
pub fn start() -> std::io::Result<Azure> {
    serve_world(World::default())
}

/// Starts the stand-in with every AKS cluster's kubeconfig naming the
/// Kubernetes stand-in at `kube`.
pub fn start_with_kube(kube: crate::kubernetes::Endpoint) -> std::io::Result<Azure> {
    serve_world(World {
        kube: Some(kube),
        ..World::default()
    })
}

fn serve_world(world: World) -> std::io::Result<Azure> {
    let world = Arc::new(Mutex::new(world));
    let w = world.clone();
    let holder: Arc<Mutex<String>> = Arc::new(Mutex::new(String::new()));
    let base = holder.clone();
    let (server, ca_pem) = serve_tls(move |req| {
        let w = w.clone();
        let base = base.lock().map(|b| b.clone()).unwrap_or_default();
        async move {
            let mut world = w.lock().unwrap_or_else(|e| e.into_inner());
            world.calls.push(format!("{} {}", req.method, req.path));
            world.handle(&req, &base)
        }
    })?;
    if let Ok(mut b) = holder.lock() {
        *b = server.url.clone();
    }
    Ok(Azure {
        server,
        ca_pem,
        world,
    })
}

type Effect = Box<dyn FnOnce(&mut World) + Send>;

struct Op {
    looks: u8,
    started: std::time::Instant,
    /// The resource it writes (lower-case id) and, when done, its effect.
    then: Option<Effect>,
    on_fail: Option<Effect>,
    error: Option<(String, String)>,
    /// The body a `Location` poll returns when done.
    result: Option<String>,
    /// The AKS cluster it runs on.
    cluster: Option<String>,
}

#[derive(Default)]
struct World {
    /// The Kubernetes stand-in clusters answer as, if any.
    kube: Option<crate::kubernetes::Endpoint>,
    objects: BTreeMap<String, Json>,
    ops: BTreeMap<String, Op>,
    tokens: Vec<String>,
    failures: Vec<(String, String, String)>,
    /// Writes refused because an operation ran on their cluster.
    refused_while_busy: usize,
    /// Shortages agent pools meet ([`Azure::shortages`]).
    shortages: crate::capacity::Shortages,
    /// Principal ids that a role assignment cannot see yet.
    unseen_principals: Vec<String>,
    calls: Vec<String>,
    next: u64,
    /// Blob data ([`Blobs`]).
    blobs: storage::BlobMap,
    /// Each scale-set VM's latest health annotation, by its id in lower
    /// case ([`health`]).
    annotations: BTreeMap<String, Json>,
    /// Bytes sent out through clusters' load balancers ([`metrics`]).
    sent: Vec<metrics::Sent>,
    /// Tokens issued for Key Vault's scope, and what its key encrypted
    /// ([`keyvault`]).
    vault_tokens: Vec<String>,
    wrapped: BTreeMap<String, keyvault::Wrapped>,
}

fn error(status: u16, code: &str, message: &str) -> Response<Body> {
    json(status, json!({"error": {"code": code, "message": message}}))
}

/// ARM's refusal of an API version other than the one an operation has.
fn unless_version(version: &str, supported: &str) -> Option<Response<Body>> {
    (version != supported).then(|| {
        error(
            400,
            "InvalidApiVersionParameter",
            &format!(
                "The api-version '{version}' is invalid. The supported versions are '{supported}'."
            ),
        )
    })
}

impl World {
    fn id(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    fn uuid(&mut self) -> String {
        let n = self.id();
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            n.wrapping_mul(2_654_435_761) as u32,
            n & 0xffff,
            n & 0xfff,
            (n >> 4) & 0xfff,
            n.wrapping_mul(0x9E37_79B9) & 0xffff_ffff_ffff
        )
    }

    /// `POST …/managedClusters/NAME/listClusterUserCredential`: the user
    /// kubeconfig, base64-encoded YAML, as AKS answers it.
    fn cluster_credentials(&self, lower: &str) -> Response<Body> {
        use base64::Engine;
        let id = lower.trim_end_matches("/listclusterusercredential");
        let Some(cluster) = self.objects.get(id) else {
            return error(
                404,
                "ResourceNotFound",
                &format!("The Resource '{id}' was not found."),
            );
        };
        let name = cluster["name"].as_str().unwrap_or("cluster");
        let fqdn = cluster["properties"]["fqdn"].as_str().unwrap_or_default();
        let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
        let (server, ca) = match &self.kube {
            Some(k) => (k.of(name), k.ca_pem.clone()),
            None => (
                format!("https://{fqdn}:443"),
                format!("stand-in CA of {name}"),
            ),
        };
        let yaml = format!(
            "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: {}\n    server: {server}\n  name: {name}\ncontexts:\n- context:\n    cluster: {name}\n    user: clusterUser_{name}\n  name: {name}\ncurrent-context: {name}\nkind: Config\nusers:\n- name: clusterUser_{name}\n  user:\n    token: {}\n",
            b64(&ca),
            b64(name),
        );
        json(
            200,
            json!({"kubeconfigs": [{"name": "clusterUser", "value": b64(&yaml)}]}),
        )
    }

    fn handle(&mut self, req: &Req, base: &str) -> Response<Body> {
        // The token endpoint answers in OAuth's words, not ARM's.
        if req.path.ends_with("/oauth2/v2.0/token") {
            return self.token(req);
        }
        if req.path.starts_with("/keys/") {
            return self.key_vault(req, base);
        }
        errors::judged(self.arm(req, base))
    }

    /// A Resource Manager request.
    fn arm(&mut self, req: &Req, base: &str) -> Response<Body> {
        let auth = req.bearer();
        if !auth.is_some_and(|t| self.tokens.iter().any(|x| x == t)) {
            return error(
                401,
                "InvalidAuthenticationToken",
                "The access token is invalid.",
            );
        }
        self.settle();
        let Some(version) = req.param("api-version") else {
            return error(
                400,
                "MissingApiVersionParameter",
                "The api-version query parameter (?api-version=) is required for all requests.",
            );
        };
        let path = req.path.trim_end_matches('/').to_string();
        let lower = path.to_ascii_lowercase();
        if lower.contains("/operations/") || lower.contains("/operationresults/") {
            return self.poll(&lower);
        }
        if lower.ends_with("/providers/microsoft.authorization/roledefinitions") {
            return self.role_definitions(req, &path);
        }
        if let Some(scope_end) = lower.find("/providers/microsoft.authorization/roleassignments/") {
            let scope = path[..scope_end].to_string();
            return self.resource(
                req,
                base,
                &version,
                "microsoft.authorization/roleassignments",
                &path,
                Some(scope),
            );
        }
        if let Some(scope_end) = lower.find("/providers/microsoft.authorization/locks") {
            let scope = path[..scope_end].to_string();
            if lower.ends_with("/providers/microsoft.authorization/locks") {
                return match req.method {
                    Method::GET => self.list_locks(&scope),
                    _ => error(
                        405,
                        "MethodNotAllowed",
                        "The requested method is not allowed.",
                    ),
                };
            }
            let key = "microsoft.authorization/locks";
            return self.resource(req, base, &version, key, &path, Some(scope));
        }
        if req.method == Method::POST && lower.ends_with("/listclusterusercredential") {
            return self.cluster_credentials(&lower);
        }
        if req.method == Method::POST && lower.ends_with("/placementscores/spot/generate") {
            return self.spot_scores(req, &version);
        }
        if req.method == Method::POST && lower == "/providers/microsoft.resourcegraph/resources" {
            return self.graph_query(req, &version);
        }
        if let Some(resource) = lower.strip_suffix("/providers/microsoft.insights/metrics") {
            return self.metrics(req, resource, &version);
        }
        let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        if segs.len() < 2
            || !segs[0].eq_ignore_ascii_case("subscriptions")
            || segs[1] != SUBSCRIPTION
        {
            return error(
                404,
                "SubscriptionNotFound",
                &format!(
                    "The subscription '{}' could not be found.",
                    segs.get(1).unwrap_or(&"")
                ),
            );
        }
        let is_rg = segs.len() >= 4 && segs[2].eq_ignore_ascii_case("resourcegroups");
        match segs.len() {
            3 if segs[2].eq_ignore_ascii_case("resourcegroups") && req.method == Method::GET => {
                self.list(req, base, Some("resourcegroups"), &lower, false)
            }
            3 if segs[2].eq_ignore_ascii_case("resources") && req.method == Method::GET => self
                .list(
                    req,
                    base,
                    None,
                    &format!("/subscriptions/{SUBSCRIPTION}"),
                    true,
                ),
            4 if is_rg => self.resource(req, base, &version, "resourcegroups", &path, None),
            5 if segs[2].eq_ignore_ascii_case("providers") && req.method == Method::GET => {
                // Every resource of a type in the subscription.
                let key = format!("{}/{}", segs[3], segs[4]).to_ascii_lowercase();
                self.list(
                    req,
                    base,
                    Some(&key),
                    &format!("/subscriptions/{SUBSCRIPTION}"),
                    true,
                )
            }
            n @ 7..=12 if is_rg && segs[4].eq_ignore_ascii_case("providers") => {
                let rg = format!("/{}", segs[..4].join("/")).to_ascii_lowercase();
                if !self.objects.contains_key(&rg) {
                    return error(
                        404,
                        "ResourceGroupNotFound",
                        &format!("Resource group '{}' could not be found.", segs[3]),
                    );
                }
                let key = match n {
                    7 | 8 => format!("{}/{}", segs[5], segs[6]),
                    9 | 10 => format!("{}/{}/{}", segs[5], segs[6], segs[8]),
                    _ => format!("{}/{}/{}/{}", segs[5], segs[6], segs[8], segs[10]),
                }
                .to_ascii_lowercase();
                if n % 2 == 1 {
                    // An account's one management policy has no list.
                    if key == "microsoft.storage/storageaccounts/managementpolicies" {
                        return error(
                            404,
                            "NotFound",
                            &format!(
                                "No HTTP resource was found that matches the request URI '{path}'."
                            ),
                        );
                    }
                    if req.method != Method::GET {
                        return error(
                            405,
                            "MethodNotAllowed",
                            "The requested method is not allowed.",
                        );
                    }
                    return self.list(req, base, Some(&key), &lower, false);
                }
                self.resource(req, base, &version, &key, &path, None)
            }
            _ => error(
                400,
                "InvalidResourceType",
                &format!("The resource type could not be found: {path}"),
            ),
        }
    }

    /// The client-credentials grant of the Microsoft identity platform
    /// (a secret, or a federated assertion as workload identity sends).
    fn token(&mut self, req: &Req) -> Response<Body> {
        let form: BTreeMap<String, String> = String::from_utf8_lossy(&req.body)
            .split('&')
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (crate::decode(k), crate::decode(&v.replace('+', " "))))
            .collect();
        let tenant = req
            .path
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or("");
        if tenant != TENANT {
            return json(
                400,
                json!({"error": "invalid_request", "error_description": format!("AADSTS90002: Tenant '{tenant}' not found."), "error_codes": [90002]}),
            );
        }
        if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
            return json(
                400,
                json!({"error": "unsupported_grant_type", "error_description": "AADSTS70003: The app requested an unsupported grant type.", "error_codes": [70003]}),
            );
        }
        let secret_ok = form.get("client_secret").map(String::as_str) == Some(CLIENT_SECRET);
        let assertion_ok = form.get("client_assertion_type").map(String::as_str)
            == Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
            && form
                .get("client_assertion")
                .is_some_and(|a| a.split('.').count() == 3);
        if form.get("client_id").map(String::as_str) != Some(CLIENT_ID)
            || !(secret_ok || assertion_ok)
        {
            return json(
                401,
                json!({"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.", "error_codes": [7000215]}),
            );
        }
        let n = self.id();
        let token = format!("eyJ0eXAiOiJKV1QifQ.standin-{n}.sig");
        // A token is good for the scope it was asked for only.
        match form
            .get("scope")
            .is_some_and(|s| s.contains("vault.azure.net"))
        {
            true => self.vault_tokens.push(token.clone()),
            false => self.tokens.push(token.clone()),
        }
        json(
            200,
            json!({"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": token}),
        )
    }

    fn role_definitions(&self, req: &Req, path: &str) -> Response<Body> {
        let scope = &path[..path
            .to_ascii_lowercase()
            .find("/providers/microsoft.authorization")
            .unwrap_or(0)];
        let filter = req.param("$filter").unwrap_or_default();
        let wanted = filter.split('\'').nth(1).unwrap_or("");
        let items: Vec<Json> = ROLES
            .iter()
            .filter(|(_, n)| wanted.is_empty() || *n == wanted)
            .map(|(id, n)| json!({
                "id": format!("/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Authorization/roleDefinitions/{id}"),
                "name": id, "type": "Microsoft.Authorization/roleDefinitions",
                "properties": {"roleName": n, "type": "BuiltInRole", "assignableScopes": ["/"]},
            }))
            .collect();
        let _ = scope;
        json(200, json!({"value": items}))
    }

    /// The resources of type `key` (any, when `None`) directly under
    /// `parent` (or anywhere below it when `any_depth`), in pages.
    fn list(
        &self,
        req: &Req,
        base: &str,
        key: Option<&str>,
        parent: &str,
        any_depth: bool,
    ) -> Response<Body> {
        let filter = req.param("$filter").unwrap_or_default();
        let tag = parse_tag_filter(&filter);
        let depth = parent.matches('/').count() + 1;
        let mut items: Vec<Json> = self
            .objects
            .iter()
            .filter(|(id, o)| {
                let under = id.starts_with(&format!("{parent}/"))
                    && (any_depth || id.matches('/').count() == depth);
                let of_type = match key {
                    Some(k) => type_key(id) == k,
                    None => type_key(id) != "resourcegroups",
                };
                let tagged = tag
                    .as_ref()
                    .is_none_or(|(k, v)| o["tags"][k.as_str()].as_str() == Some(v.as_str()));
                under && of_type && tagged
            })
            .map(|(_, o)| o.clone())
            .collect();
        if key.is_none() {
            // The generic list shows each resource's id, name, type, tags.
            items = items.into_iter().map(|o| json!({"id": o["id"], "name": o["name"], "type": o["type"], "location": o["location"], "tags": o["tags"]})).collect();
        }
        let start: usize = req
            .param("$skiptoken")
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        let end = (start + PAGE).min(items.len());
        let mut out = json!({"value": items.get(start..end).unwrap_or(&[])});
        if end < items.len() {
            let mut q: Vec<String> = req
                .query
                .split('&')
                .filter(|p| !p.starts_with("$skiptoken="))
                .map(str::to_string)
                .collect();
            q.push(format!("$skiptoken={end}"));
            out["nextLink"] = json!(format!("{base}{}?{}", req.path, q.join("&")));
        }
        // A list of one type: each item held to its definition, as a
        // single resource's answer is.
        let version = req.param("api-version").unwrap_or_default();
        let misfits: Vec<String> = match (key, crate::definitions::api("azure")) {
            (Some(k), Some(d)) if d.declares(&definition(k, &version), &[]) => out["value"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|item| d.check(&definition(k, &version), item, Side::Response, "$"))
                .collect(),
            _ => Vec::new(),
        };
        if !misfits.is_empty() {
            let what = type_name(key.unwrap_or_default());
            return error(
                500,
                "InternalServerError",
                &format!(
                    "the stand-in's list of {what} does not fit its definition: {}",
                    misfits.join("; ")
                ),
            );
        }
        json(200, out)
    }

    fn type_info(key: &str) -> Option<&'static TypeInfo> {
        TYPES.iter().find(|t| t.key == key)
    }

    #[allow(clippy::too_many_arguments)]
    fn resource(
        &mut self,
        req: &Req,
        base: &str,
        version: &str,
        key: &str,
        path: &str,
        scope: Option<String>,
    ) -> Response<Body> {
        let Some(info) = Self::type_info(key) else {
            return error(
                400,
                "InvalidResourceType",
                &format!("The resource type '{key}' could not be found in the namespace."),
            );
        };
        if !info.versions.contains(&version) {
            return error(400, "NoRegisteredProviderFound", &format!("No registered resource provider found for location and API version '{version}' and type '{key}'. The supported api-versions are '{}'.", info.versions.join(", ")));
        }
        let id = path.to_ascii_lowercase();
        let current = self.objects.get(&id).cloned();
        let answer = match req.method {
            Method::GET => match current {
                Some(o) => json(200, self.viewed(key, o)),
                None if key == "microsoft.storage/storageaccounts/blobservices" => {
                    self.default_blob_service(path).unwrap_or_else(|| {
                        error(
                            404,
                            "ResourceNotFound",
                            &format!("The Resource '{path}' was not found."),
                        )
                    })
                }
                None => error(
                    404,
                    if key == "resourcegroups" {
                        "ResourceGroupNotFound"
                    } else {
                        "ResourceNotFound"
                    },
                    &format!("The Resource '{path}' was not found."),
                ),
            },
            Method::PUT => self.put(req, base, version, info, path, current, scope),
            Method::DELETE => match current {
                None => Response::builder()
                    .status(204)
                    .body(Body::default())
                    .unwrap_or_default(),
                Some(_) => match self.lock_refusing(&Method::DELETE, path) {
                    Some(refused) => refused,
                    None => self.delete(base, version, info, &id),
                },
            },
            _ => error(
                405,
                "MethodNotAllowed",
                "The requested method is not allowed.",
            ),
        };
        // The stand-in's own answer held to Azure's definition: a misfit
        // is its bug, a 500 that fails the test that met it.
        let what = format!("{} {} {version}", req.method, type_name(key));
        crate::definitions::judged_by("azure", &definition(key, version), &what, answer, |m| {
            error(500, "InternalServerError", &m)
        })
    }
}

/// `tagName eq 'k' and tagValue eq 'v'`.
fn parse_tag_filter(f: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = f.split('\'').collect();
    if f.contains("tagName eq") && parts.len() >= 4 {
        Some((parts[1].to_string(), parts[3].to_string()))
    } else {
        None
    }
}

fn merge(mut a: Json, b: Json) -> Json {
    if let (Some(am), Some(bm)) = (a.as_object_mut(), b.as_object()) {
        for (k, v) in bm {
            am.insert(k.clone(), v.clone());
        }
    }
    a
}

/// An agent pool's capacity type, as a shortage names it.
/// Whether Azure's definition of a type's body has a field at `path`.
fn declared(key: &str, version: &str, path: &[&str]) -> bool {
    crate::definitions::api("azure").is_some_and(|d| d.declares(&definition(key, version), path))
}

/// The name of a type's body in Azure's definitions
/// (`testing/definitions/azure`), as their `resources` table names it; a
/// type or version they lack is named as itself, which no check finds, so
/// the check says so.
fn definition(key: &str, version: &str) -> String {
    let resource = format!("{}@{version}", type_name(key));
    crate::definitions::api("azure")
        .and_then(|d| d.resource(&resource))
        .unwrap_or(&resource)
        .to_string()
}

fn capacity_of(props: &Json) -> &'static str {
    match props["scaleSetPriority"].as_str() {
        Some("Spot") => "spot",
        _ => "on_demand",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(w: &mut World, method: Method, path: &str, body: Json) -> Req {
        w.tokens.push("t".to_string());
        Req::with_bearer(method, path, "t", &body)
    }

    #[test]
    fn strict_about_versions_and_fields() {
        let mut w = World::default();
        let rg = format!("/subscriptions/{SUBSCRIPTION}/resourceGroups/rg");
        let r = req(&mut w, Method::PUT, &rg, json!({"location": "eastus"}));
        assert_eq!(
            w.handle(&r, "https://x").status().as_u16(),
            400,
            "no api-version"
        );
        let r = req(
            &mut w,
            Method::PUT,
            &format!("{rg}?api-version=1999-01-01"),
            json!({"location": "eastus"}),
        );
        assert_eq!(
            w.handle(&r, "https://x").status().as_u16(),
            400,
            "an unknown api-version"
        );
        let r = req(
            &mut w,
            Method::PUT,
            &format!("{rg}?api-version=2022-09-01"),
            json!({"location": "eastus", "sku": {}}),
        );
        assert_eq!(
            w.handle(&r, "https://x").status().as_u16(),
            400,
            "an unknown field"
        );
        let r = req(
            &mut w,
            Method::PUT,
            &format!("{rg}?api-version=2022-09-01"),
            json!({"location": "eastus"}),
        );
        assert_eq!(w.handle(&r, "https://x").status().as_u16(), 201);
        let vnet =
            format!("{rg}/providers/Microsoft.Network/virtualNetworks/v?api-version=2024-05-01");
        let r = req(
            &mut w,
            Method::PUT,
            &vnet,
            json!({"location": "eastus", "properties": {"addressSpace": {"addressPrefixes": ["10.0.0.0/16"]}}}),
        );
        let resp = w.handle(&r, "https://x");
        assert_eq!(resp.status().as_u16(), 201);
        assert!(
            resp.headers().contains_key("azure-asyncoperation"),
            "a write is asynchronous"
        );
        let r = req(&mut w, Method::PATCH, &vnet, json!({}));
        assert_eq!(
            w.handle(&r, "https://x").status().as_u16(),
            405,
            "a wrong method"
        );
    }
}
