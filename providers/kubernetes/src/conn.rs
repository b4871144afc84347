//! The way to a cluster: provider settings (a kubeconfig file and context,
//! or a host with a CA and a token, client certificate or exec plugin, as
//! Terraform's kubernetes provider takes them) made into a kube client,
//! and the few API calls the resource types make, with retries, discovery
//! and `Status` errors turned into driver errors.

use http::{Method, Request};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;
use strata_provider::values::{self, string};
use strata_provider::{AttributeSchema as A, BlockNesting, DriverError, ResourceSchema, Tags};
use strata_value::types::Type;
use strata_value::value::Value;

/// The field manager strata applies as.
pub const MANAGER: &str = "strata";

/// Where the cluster and credentials come from.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    host: Option<String>,
    cluster_ca_certificate: Option<String>,
    client_certificate: Option<String>,
    client_key: Option<String>,
    token: Option<String>,
    insecure: bool,
    tls_server_name: Option<String>,
    config_path: Option<String>,
    config_context: Option<String>,
    exec: Option<Json>,
}

/// The connection attributes, for the kubernetes provider's schema and
/// the helm provider's `kubernetes` block.
pub fn schema() -> ResourceSchema {
    let s = Type::String;
    let mut schema = ResourceSchema::of_attributes(vec![
        ("host", A::optional(s.clone(), "The API server's URL (KUBE_HOST).")),
        ("cluster_ca_certificate", A::optional(s.clone(), "PEM of the CA that signed the API server's certificate (KUBE_CLUSTER_CA_CERT_DATA).")),
        ("client_certificate", A::optional(s.clone(), "PEM client certificate.")),
        ("client_key", A::optional(s.clone(), "PEM client key.").sensitive()),
        ("token", A::optional(s.clone(), "Bearer token (KUBE_TOKEN).").sensitive()),
        ("insecure", A::optional(Type::Bool, "Skip verifying the server's certificate.")),
        ("tls_server_name", A::optional(s.clone(), "Server name to verify the certificate against.")),
        ("config_path", A::optional(s.clone(), "A kubeconfig file (KUBE_CONFIG_PATH).")),
        ("config_context", A::optional(s.clone(), "The kubeconfig context to use (KUBE_CTX); its current context by default.")),
    ]);
    schema.blocks.insert(
        "exec".into(),
        values::block(
            BlockNesting::List,
            0,
            vec![
                (
                    "api_version",
                    A::required(s.clone(), "client.authentication.k8s.io/v1 or v1beta1."),
                ),
                (
                    "command",
                    A::required(
                        s.clone(),
                        "The credential plugin (aws, gke-gcloud-auth-plugin, kubelogin).",
                    ),
                ),
                ("args", A::optional(Type::list(s.clone()), "Its arguments.")),
                ("env", A::optional(Type::map(s), "Variables set for it.")),
            ],
        ),
    );
    schema
}

impl Settings {
    /// From the provider block (or the helm provider's `kubernetes`
    /// block), with the environment variables Terraform's provider reads.
    pub fn from_value(v: &Value) -> Settings {
        let env = |k: &str| std::env::var(k).ok().filter(|x| !x.is_empty());
        let pick = |name: &str, var: &str| string(v, name).or_else(|| env(var));
        let exec = values::blocks(v, "exec").first().map(|e| {
            let env: Vec<Json> = values::string_map(e, "env")
                .into_iter()
                .map(|(name, value)| json!({"name": name, "value": value}))
                .collect();
            json!({
                "apiVersion": string(e, "api_version"),
                "command": string(e, "command"),
                "args": values::strings(e, "args"),
                "env": env,
            })
        });
        Settings {
            host: pick("host", "KUBE_HOST"),
            cluster_ca_certificate: pick("cluster_ca_certificate", "KUBE_CLUSTER_CA_CERT_DATA"),
            client_certificate: pick("client_certificate", "KUBE_CLIENT_CERT_DATA"),
            client_key: pick("client_key", "KUBE_CLIENT_KEY_DATA"),
            token: pick("token", "KUBE_TOKEN"),
            insecure: values::boolean(v, "insecure")
                .unwrap_or_else(|| env("KUBE_INSECURE").is_some_and(|x| x == "true")),
            tls_server_name: string(v, "tls_server_name"),
            config_path: pick("config_path", "KUBE_CONFIG_PATH"),
            config_context: pick("config_context", "KUBE_CTX"),
            exec,
        }
    }

    /// Whether anything says where a cluster is.
    pub fn is_set(&self) -> bool {
        self.host.is_some() || self.config_path.is_some()
    }

    /// The kubeconfig these settings amount to: the file's, or one made of
    /// the host and credentials (what the helm binary is then given too).
    pub fn kubeconfig(&self) -> Result<Source, String> {
        if let Some(host) = &self.host {
            let b64 = |pem: &Option<String>| pem.as_deref().map(|p| base64(p.as_bytes()));
            let mut user = json!({});
            if let Some(t) = &self.token {
                user["token"] = json!(t);
            }
            if let Some(c) = b64(&self.client_certificate) {
                user["client-certificate-data"] = json!(c);
            }
            if let Some(k) = b64(&self.client_key) {
                user["client-key-data"] = json!(k);
            }
            if let Some(e) = &self.exec {
                user["exec"] = e.clone();
            }
            let mut cluster = json!({"server": host, "insecure-skip-tls-verify": self.insecure});
            if let Some(ca) = b64(&self.cluster_ca_certificate) {
                cluster["certificate-authority-data"] = json!(ca);
            }
            if let Some(n) = &self.tls_server_name {
                cluster["tls-server-name"] = json!(n);
            }
            let doc = json!({
                "apiVersion": "v1", "kind": "Config", "current-context": "strata",
                "clusters": [{"name": "strata", "cluster": cluster}],
                "users": [{"name": "strata", "user": user}],
                "contexts": [{"name": "strata", "context": {"cluster": "strata", "user": "strata"}}],
            });
            return Ok(Source::Inline(doc));
        }
        match &self.config_path {
            Some(path) => Ok(Source::File {
                path: expand_home(path),
                context: self.config_context.clone(),
            }),
            None => Err("no cluster configured: set `host` (with `cluster_ca_certificate` and a `token`, client certificate or `exec` block) or `config_path` (and `config_context`) in the provider block, or KUBE_HOST / KUBE_CONFIG_PATH".into()),
        }
    }
}

fn expand_home(p: &str) -> String {
    match (p.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) => format!("{home}/{rest}"),
        _ => p.to_string(),
    }
}

pub fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A kubeconfig, as a file the user named or one strata made.
#[derive(Debug, Clone)]
pub enum Source {
    File {
        path: String,
        context: Option<String>,
    },
    Inline(Json),
}

impl Source {
    /// Named in errors: never a secret.
    pub fn describe(&self) -> String {
        match self {
            Source::File { path, context } => match context {
                Some(c) => format!("kubeconfig {path}, context {c}"),
                None => format!("kubeconfig {path}, its current context"),
            },
            Source::Inline(doc) => {
                let user = &doc["users"][0]["user"];
                let how = if user.get("exec").is_some() {
                    format!(
                        "exec plugin {}",
                        user["exec"]["command"].as_str().unwrap_or("?")
                    )
                } else if user.get("token").is_some() {
                    "the provider's token".to_string()
                } else if user.get("client-certificate-data").is_some() {
                    "the provider's client certificate".to_string()
                } else {
                    "no credentials".to_string()
                };
                format!("the provider's host with {how}")
            }
        }
    }

    async fn config(&self) -> Result<kube::Config, String> {
        let (kc, context) = match self {
            Source::File { path, context } => (
                Kubeconfig::read_from(path)
                    .map_err(|e| format!("reading kubeconfig {path}: {e}"))?,
                context.clone(),
            ),
            Source::Inline(doc) => (
                serde_json::from_value::<Kubeconfig>(doc.clone()).map_err(|e| e.to_string())?,
                None,
            ),
        };
        let options = KubeConfigOptions {
            context,
            cluster: None,
            user: None,
        };
        kube::Config::from_custom_kubeconfig(kc, &options)
            .await
            .map_err(|e| format!("{e} ({})", self.describe()))
    }
}

/// An API resource found by discovery.
#[derive(Debug, Clone)]
pub struct Resource {
    /// `/api/v1` or `/apis/GROUP/VERSION`.
    pub base: String,
    pub plural: String,
    pub namespaced: bool,
}

impl Resource {
    /// The object's path; namespaced kinds in `namespace` (`default` when
    /// none is given).
    pub fn path(&self, namespace: Option<&str>, name: &str) -> String {
        let name = strata_rest::encode(name);
        match (self.namespaced, namespace) {
            (true, ns) => format!(
                "{}/namespaces/{}/{}/{name}",
                self.base,
                strata_rest::encode(ns.unwrap_or("default")),
                self.plural
            ),
            (false, _) => format!("{}/{}/{name}", self.base, self.plural),
        }
    }
}

/// A failed call: the `Status` the server answered, or no answer.
#[derive(Debug, Clone)]
pub struct Failure {
    /// 0 when the server could not be reached.
    pub code: u16,
    pub reason: String,
    pub message: String,
}

/// A connected cluster.
pub struct Api {
    client: kube::Client,
    url: String,
    source: Source,
    retry: strata_rest::Retry,
    discovery: Mutex<BTreeMap<String, Json>>,
}

/// What each resource type is given: the cluster, or why there is none.
pub struct Conn {
    api: Result<Api, String>,
}

impl Conn {
    pub async fn new(settings: &Settings) -> Conn {
        Conn {
            api: Api::connect(settings).await,
        }
    }

    pub fn api(&self, type_name: &str) -> Result<&Api, DriverError> {
        self.api.as_ref().map_err(|e| DriverError::InvalidConfig {
            type_name: type_name.to_string(),
            detail: e.clone(),
        })
    }
}

impl Api {
    async fn connect(settings: &Settings) -> Result<Api, String> {
        let source = settings.kubeconfig()?;
        let mut config = source.config().await?;
        config.connect_timeout = Some(Duration::from_secs(10));
        config.read_timeout = Some(Duration::from_secs(120));
        let url = config
            .cluster_url
            .to_string()
            .trim_end_matches('/')
            .to_string();
        let client = kube::Client::try_from(config).map_err(|e| {
            format!(
                "cannot make a client for {url}: {e} ({})",
                source.describe()
            )
        })?;
        Ok(Api {
            client,
            url,
            source,
            retry: strata_rest::Retry::default(),
            discovery: Mutex::new(BTreeMap::new()),
        })
    }

    pub fn source(&self) -> &Source {
        &self.source
    }

    /// One call, retried on throttling, server errors and (five times) a
    /// connection that failed: counted apart, so throttling before a
    /// dropped connection does not use up the retries a wrong address
    /// gets.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<(&str, &Json)>,
    ) -> Result<Json, Failure> {
        let unreachable = std::sync::atomic::AtomicU32::new(0);
        self.retry
            .run(
                || self.attempt(method.clone(), path, body),
                |f: &Failure, _| match f.code {
                    0 => (unreachable.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < 5)
                        .then_some(None),
                    429 | 500 | 502 | 503 | 504 => Some(None),
                    _ => None,
                },
            )
            .await
    }

    async fn attempt(
        &self,
        method: Method,
        path: &str,
        body: Option<(&str, &Json)>,
    ) -> Result<Json, Failure> {
        let mut req = Request::builder().method(method).uri(path);
        let mut bytes = Vec::new();
        if let Some((ctype, b)) = body {
            req = req.header("content-type", ctype);
            bytes = b.to_string().into_bytes();
        }
        let req = req.body(bytes).map_err(|e| Failure {
            code: 400,
            reason: "BadRequest".into(),
            message: e.to_string(),
        })?;
        match self.client.request_text(req).await {
            Ok(text) if text.trim().is_empty() => Ok(Json::Null),
            Ok(text) => serde_json::from_str(&text).map_err(|e| Failure {
                code: 500,
                reason: "InvalidResponse".into(),
                message: format!("the API server's answer is not JSON: {e}"),
            }),
            Err(kube::Error::Api(s)) => Err(Failure {
                code: s.code,
                reason: s.reason,
                message: s.message,
            }),
            Err(e) => Err(Failure {
                code: 0,
                reason: "Unreachable".into(),
                message: chain(&e),
            }),
        }
    }

    /// The failure as a driver error that says where and with what.
    pub fn error(&self, op: &str, f: &Failure) -> DriverError {
        let detail = match f.code {
            0 => format!(
                "cannot reach the Kubernetes API at {}: {} ({})",
                self.url,
                f.message,
                self.source.describe()
            ),
            401 | 403 => format!(
                "{}: {} (HTTP {}; credentials from {})",
                f.reason,
                f.message,
                f.code,
                self.source.describe()
            ),
            409 if f.message.starts_with("Apply failed") => format!(
                "{}. Another field manager owns these fields: set `force_conflicts = true` (kubernetes_manifest's field_manager block, `force` on kubernetes_labels) to take them over, or leave them out",
                f.message
            ),
            _ => format!("{}: {} (HTTP {})", f.reason, f.message, f.code),
        };
        DriverError::Api {
            operation: op.to_string(),
            detail,
            retryable: f.code == 0 || f.code == 429 || f.code >= 500,
        }
    }

    pub async fn call(
        &self,
        op: &str,
        method: Method,
        path: &str,
        body: Option<(&str, &Json)>,
    ) -> Result<Json, DriverError> {
        self.send(method, path, body)
            .await
            .map_err(|f| self.error(op, &f))
    }

    /// The object at `path`, `None` when it is not there.
    pub async fn get(&self, op: &str, path: &str) -> Result<Option<Json>, DriverError> {
        match self.send(Method::GET, path, None).await {
            Ok(v) => Ok(Some(v)),
            Err(f) if f.code == 404 => Ok(None),
            Err(f) => Err(self.error(op, &f)),
        }
    }

    /// Server-side apply of `object` as field manager `manager`.
    pub async fn apply(
        &self,
        op: &str,
        path: &str,
        object: &Json,
        manager: &str,
        force: bool,
    ) -> Result<Json, DriverError> {
        let url = format!(
            "{path}?fieldManager={}&force={force}",
            strata_rest::encode(manager)
        );
        self.call(
            op,
            Method::PATCH,
            &url,
            Some(("application/apply-patch+yaml", object)),
        )
        .await
    }

    /// Deletes the object at `path`: `false` when it was not there.
    pub async fn delete(&self, op: &str, path: &str) -> Result<bool, DriverError> {
        match self.send(Method::DELETE, path, None).await {
            Ok(_) => Ok(true),
            Err(f) if f.code == 404 => Ok(false),
            Err(f) => Err(self.error(op, &f)),
        }
    }

    /// Where objects of `api_version` and `kind` live. Discovery is asked
    /// again when the kind is not known yet (its CRD may have just been
    /// created, by this apply).
    pub async fn resource(&self, api_version: &str, kind: &str) -> Result<Resource, DriverError> {
        let base = if api_version.contains('/') {
            format!("/apis/{api_version}")
        } else {
            format!("/api/{api_version}")
        };
        let op = format!("finding {kind} ({api_version}) on the cluster");
        for fresh in [false, true] {
            let cached = self
                .discovery
                .lock()
                .ok()
                .and_then(|d| d.get(&base).cloned());
            let list = match (cached, fresh) {
                (Some(l), false) => l,
                _ => {
                    let l = self.get(&op, &base).await?.unwrap_or(Json::Null);
                    if let Ok(mut d) = self.discovery.lock() {
                        d.insert(base.clone(), l.clone());
                    }
                    l
                }
            };
            let found = list["resources"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|r| {
                    r["kind"] == json!(kind) && r["name"].as_str().is_some_and(|n| !n.contains('/'))
                });
            if let Some(r) = found {
                return Ok(Resource {
                    base,
                    plural: r["name"].as_str().unwrap_or_default().to_string(),
                    namespaced: r["namespaced"].as_bool().unwrap_or(true),
                });
            }
        }
        Err(DriverError::Api {
            operation: op,
            detail: format!(
                "the cluster at {} serves no kind {kind} in {api_version}: is its CustomResourceDefinition installed?",
                self.url
            ),
            retryable: false,
        })
    }
}

/// An error and its causes, innermost last (kube's own message says only
/// "client error (Connect)"; the cause says "Connection refused").
fn chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        let m = s.to_string();
        if !parts.iter().any(|p| p.contains(&m)) {
            parts.push(m);
        }
        cur = s.source();
    }
    parts.join(": ")
}

/// Whether `obj` was made by strata's create for `tags`: its ownership
/// annotations. An object applied with nothing but its name has no
/// managed fields to say who made it, so a create cut short by a crash is
/// known by these.
pub fn made_for(obj: &Json, tags: &Tags) -> bool {
    let annotations = &obj["metadata"]["annotations"];
    strata_rest::labels::owned(|k| annotations[k].as_str(), tags)
}

/// `body`'s metadata with the ownership annotations of `tags` added.
pub fn mark(body: &mut Json, tags: &Tags) {
    for (k, v) in strata_rest::labels::labels(tags) {
        body["metadata"]["annotations"][k] = Json::String(v);
    }
}

/// Whether field manager `manager` has applied any field of `obj` (how
/// strata tells its own objects from others').
pub fn managed_by(obj: &Json, manager: &str) -> bool {
    obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|e| e["manager"] == json!(manager))
}

/// A driver's connection, made on first use from its settings. One asked
/// for before the configuration came (crash recovery looks for objects
/// before the plan has configured a provider that waits for a cluster's
/// endpoint) is made from the environment alone and kept apart, so the
/// configuration, when it comes, still makes its own rather than finding
/// the unconfigured one cached.
pub struct Lazy<C> {
    settings: std::sync::Mutex<Settings>,
    configured: std::sync::atomic::AtomicBool,
    before: tokio::sync::OnceCell<C>,
    after: tokio::sync::OnceCell<C>,
}

impl<C> Default for Lazy<C> {
    fn default() -> Self {
        Lazy {
            settings: Default::default(),
            configured: Default::default(),
            before: tokio::sync::OnceCell::new(),
            after: tokio::sync::OnceCell::new(),
        }
    }
}

impl<C> Lazy<C> {
    pub fn configure(&self, s: Settings) {
        if let Ok(mut held) = self.settings.lock() {
            *held = s;
        }
        self.configured
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The connection for the settings as they are now, made by `make`.
    pub async fn get<F, Fut>(&self, make: F) -> &C
    where
        F: FnOnce(Settings) -> Fut,
        Fut: std::future::Future<Output = C>,
    {
        let configured = self.configured.load(std::sync::atomic::Ordering::SeqCst);
        let cell = if configured {
            &self.after
        } else {
            &self.before
        };
        cell.get_or_init(|| async {
            let s = self.settings.lock().map(|s| s.clone()).unwrap_or_default();
            make(s).await
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::{Lazy, Settings};

    /// Asked for before the configuration (as crash recovery does), the
    /// connection is not what the configuration then gets.
    #[test]
    fn a_connection_made_before_configuring_is_not_kept_for_after() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let lazy: Lazy<Option<String>> = Lazy::default();
        let host = |s: Settings| async move { s.host };
        assert_eq!(rt.block_on(lazy.get(host)), &None);
        lazy.configure(Settings {
            host: Some("https://cluster.example".into()),
            ..Settings::default()
        });
        assert_eq!(
            rt.block_on(lazy.get(host)),
            &Some("https://cluster.example".to_string())
        );
    }
}
