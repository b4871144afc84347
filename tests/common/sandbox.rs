//! The sandbox (`strata-sandbox`) for tests that use it whole: started
//! with `--dir`, its `DIR/env` read as a shell would, strata run with that
//! environment, and its control endpoint asked over HTTP.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The sandbox binary, built beside strata's by `cargo test --workspace`.
fn sandbox_binary() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_strata")).with_file_name("strata-sandbox");
    assert!(
        bin.exists(),
        "{} is not built: run the suite as .ci/run does (cargo test --workspace), or cargo build -p strata-sandbox",
        bin.display()
    );
    bin
}

pub struct Sandbox {
    child: Child,
    pub env: BTreeMap<String, String>,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `export K='V'` lines as a shell reads them; `PATH` with `"$PATH"` put
/// back at its end.
pub fn read_env(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((k, v)) = line.strip_prefix("export ").and_then(|l| l.split_once('=')) else {
            continue;
        };
        let value = v
            .replace(
                ":\"$PATH\"",
                &format!(":{}", std::env::var("PATH").unwrap_or_default()),
            )
            .replace('\'', "");
        out.insert(k.to_string(), value);
    }
    out
}

pub fn start(dir: &Path) -> Sandbox {
    if std::env::var("STRATA_MOTO_SERVER").is_err() {
        panic!("the sandbox test needs moto: run ./.ci/run, or set STRATA_MOTO_SERVER");
    }
    let mut child = Command::new(sandbox_binary())
        .args(["--dir", &dir.display().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the sandbox starts");
    let started = Instant::now();
    let env_file = dir.join("env");
    while !env_file.exists() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the sandbox stopped before writing its env ({status}); its stderr is above");
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "no {} within 90 s",
            env_file.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(200));
    let env = read_env(&std::fs::read_to_string(&env_file).expect("env"));
    Sandbox { child, env }
}

impl Sandbox {
    /// The strata binary with `args`, to run in `work` with the sandbox's
    /// environment.
    pub fn command(&self, work: &Path, args: &[&str]) -> Command {
        let mut c = super::run::strata(work);
        c.args(args)
            .env("STRATA_CHECK_SETTLE", "10")
            .env_remove("AWS_PROFILE")
            .env_remove("KUBE_CONFIG_PATH")
            .envs(&self.env);
        c
    }

    /// [`Self::command`] with its output discarded: a run a test kills.
    pub fn quiet(&self, work: &Path, args: &[&str]) -> Command {
        let mut c = self.command(work, args);
        c.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        c
    }

    /// Runs the strata binary in `work` with the sandbox's environment.
    pub fn strata(&self, work: &Path, args: &[&str]) -> (i32, String) {
        super::output(self.command(work, args))
    }

    /// `METHOD URL` with a JSON body over plain HTTP (the control endpoint,
    /// the GCP stand-in, moto), sending `auth` as the `Authorization`
    /// header: the status and the body.
    pub fn http(&self, method: &str, url: &str, auth: &str, body: &str) -> (u16, String) {
        let rest = url.strip_prefix("http://").expect("an http URL");
        let (host, path) = rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p));
        let mut s = std::net::TcpStream::connect(host).expect("connect");
        let kind = match body.starts_with("Action=") {
            true => "application/x-www-form-urlencoded",
            false => "application/json",
        };
        let req = format!(
            "{method} /{path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: {auth}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).expect("send");
        let mut text = String::new();
        s.read_to_string(&mut text).expect("read");
        response(&text)
    }

    /// Makes a cloud short of capacity (`POST /capacity`).
    pub fn short(&self, shortage: &str) {
        let url = format!("{}/capacity", self.env["STRATA_SANDBOX_CONTROL"]);
        let (status, body) = self.http("POST", &url, "", shortage);
        assert_eq!(status, 201, "{shortage}: {body}");
    }

    /// Sets the time the stand-ins keep (`POST /clock`).
    pub fn set_clock(&self, now: &str) {
        let url = format!("{}/clock", self.env["STRATA_SANDBOX_CONTROL"]);
        let (status, body) = self.http("POST", &url, "", &format!("{{\"now\":\"{now}\"}}"));
        assert_eq!(status, 200, "{now}: {body}");
    }

    /// Has `cloud` preempt `nodes` VMs of its pools named `pool` at `at`
    /// (`POST /preempt`), recorded as the cloud records it.
    pub fn preempt(&self, cloud: &str, pool: &str, nodes: u64, at: &str) {
        let url = format!("{}/preempt", self.env["STRATA_SANDBOX_CONTROL"]);
        let body = serde_json::json!({"cloud": cloud, "pool": pool, "nodes": nodes, "at": at});
        let (status, answer) = self.http("POST", &url, "", &body.to_string());
        assert_eq!(status, 201, "{body}: {answer}");
    }

    /// Has `cloud` meter `bytes` sent out through each of its NAT
    /// gateways at `at` (`POST /egress`).
    pub fn egress(&self, cloud: &str, bytes: u64, at: &str) {
        let url = format!("{}/egress", self.env["STRATA_SANDBOX_CONTROL"]);
        let body = serde_json::json!({"cloud": cloud, "bytes": bytes, "at": at});
        let (status, answer) = self.http("POST", &url, "", &body.to_string());
        assert_eq!(status, 201, "{body}: {answer}");
    }

    /// Has the AWS proxy act on `call` (`PurchaseCapacityBlock`) and hold
    /// its answer back (`POST /hold`).
    pub fn hold(&self, call: &str) {
        let url = format!("{}/hold", self.env["STRATA_SANDBOX_CONTROL"]);
        let body = serde_json::json!({ "call": call }).to_string();
        assert_eq!(self.http("POST", &url, "", &body).0, 201);
    }

    /// Answers held calls again (`DELETE /hold`).
    pub fn release(&self) {
        let url = format!("{}/hold", self.env["STRATA_SANDBOX_CONTROL"]);
        assert_eq!(self.http("DELETE", &url, "", "").0, 200);
    }

    /// Ends every shortage (`DELETE /capacity`).
    pub fn plenty(&self) {
        let url = format!("{}/capacity", self.env["STRATA_SANDBOX_CONTROL"]);
        assert_eq!(self.http("DELETE", &url, "", "").0, 200);
    }
}

impl Sandbox {
    /// The node groups EKS (moto, through the proxy) has in `cluster`.
    pub fn eks_node_groups(&self, region: &str, cluster: &str) -> Vec<String> {
        let v = self.eks(region, &format!("/clusters/{cluster}/node-groups"));
        names(&v["nodegroups"], None)
    }

    /// The EKS clusters moto has in `region`.
    pub fn eks_clusters(&self, region: &str) -> Vec<String> {
        names(&self.eks(region, "/clusters")["clusters"], None)
    }

    /// An EKS GET of `path` in `region`, signed as moto reads a region.
    /// An EC2 query action (`Action=…&…`, form-encoded) in `region`, sent
    /// to moto through the proxy as an SDK would: the status and the XML.
    pub fn ec2(&self, region: &str, form: &str) -> (u16, String) {
        let url = format!("{}/", self.env["AWS_ENDPOINT_URL"]);
        let auth = format!("AWS4-HMAC-SHA256 Credential=testing/20261202/{region}/ec2/aws4_request, SignedHeaders=host, Signature=0");
        self.http("POST", &url, &auth, &format!("{form}&Version=2016-11-15"))
    }

    /// A Resource Groups call (`POST /groups`, `/group-resources`) in
    /// `region`, sent to moto through the proxy as an SDK would: the
    /// status and the JSON.
    pub fn resource_groups(&self, region: &str, path: &str, body: &str) -> (u16, String) {
        let url = format!("{}{path}", self.env["AWS_ENDPOINT_URL"]);
        let auth = format!("AWS4-HMAC-SHA256 Credential=testing/20261202/{region}/resource-groups/aws4_request, SignedHeaders=host, Signature=0");
        self.http("POST", &url, &auth, body)
    }

    /// The EKS node group `name` of `cluster`, as EKS describes it.
    pub fn eks_node_group(&self, region: &str, cluster: &str, name: &str) -> serde_json::Value {
        self.eks(region, &format!("/clusters/{cluster}/node-groups/{name}"))["nodegroup"].clone()
    }

    fn eks(&self, region: &str, path: &str) -> serde_json::Value {
        let url = format!("{}{path}", self.env["AWS_ENDPOINT_URL"]);
        let auth = format!("AWS4-HMAC-SHA256 Credential=testing/20261202/{region}/eks/aws4_request, SignedHeaders=host, Signature=0");
        let (status, body) = self.http("GET", &url, &auth, "");
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).expect("JSON")
    }

    /// A bearer token for Resource Manager, from the stand-in's identity
    /// platform.
    fn arm_token(&self) -> String {
        let form = format!(
            "grant_type=client_credentials&client_id={}&client_secret={}&scope=https%3A%2F%2Fmanagement.azure.com%2F.default",
            self.env["ARM_CLIENT_ID"], self.env["ARM_CLIENT_SECRET"]
        );
        let token_url = format!(
            "{}/{}/oauth2/v2.0/token",
            self.env["AZURE_AUTHORITY_HOST"], self.env["ARM_TENANT_ID"]
        );
        let (status, body) = self.https(
            "POST",
            &token_url,
            "",
            "application/x-www-form-urlencoded",
            &form,
        );
        assert_eq!(status, 200, "{body}");
        let token: serde_json::Value = serde_json::from_str(&body).expect("token JSON");
        format!(
            "Bearer {}",
            token["access_token"].as_str().unwrap_or_default()
        )
    }

    /// `METHOD` of a Resource Manager path (`/subscriptions/…?api-version=…`;
    /// `{sub}` stands for the subscription): the status, the body, and the
    /// `Azure-AsyncOperation` URL of a write that goes on.
    pub fn arm(&self, method: &str, path: &str, body: &str) -> (u16, String, Option<String>) {
        let arm = &self.env["ARM_RESOURCE_MANAGER_ENDPOINT"];
        let url = format!(
            "{arm}{}",
            path.replace("{sub}", &self.env["ARM_SUBSCRIPTION_ID"])
        );
        let ca = std::fs::read(&self.env["SSL_CERT_FILE"]).expect("the CA");
        let raw = https_raw(
            &ca,
            (method, &url),
            &self.arm_token(),
            "application/json",
            body,
        );
        let (status, text) = response(&raw);
        let head = raw.split_once("\r\n\r\n").map_or("", |(h, _)| h);
        let operation = head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("azure-asyncoperation")
                .then(|| v.trim().to_string())
        });
        (status, text, operation)
    }

    /// PUTs `body` at `path` as a user would and waits for the write to
    /// finish, polling its operation as a client does.
    pub fn arm_put(&self, path: &str, body: &str) {
        let (status, text, operation) = self.arm("PUT", path, body);
        assert!(matches!(status, 200 | 201 | 202), "{path}: {status} {text}");
        let Some(op) = operation else { return };
        for _ in 0..30 {
            let ca = std::fs::read(&self.env["SSL_CERT_FILE"]).expect("the CA");
            let (_, polled) = https(&ca, ("GET", &op), &self.arm_token(), "application/json", "");
            if polled.contains("\"Succeeded\"") {
                return;
            }
            assert!(!polled.contains("\"Failed\""), "{path}: {polled}");
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("{path}: the write did not finish");
    }

    /// The agent pools AKS (the Azure stand-in, over HTTPS with the CA
    /// the sandbox wrote) has in cluster `cluster` of resource group `group`.
    pub fn aks_agent_pools(&self, group: &str, cluster: &str) -> Vec<String> {
        let (status, body, _) = self.arm(
            "GET",
            &format!("/subscriptions/{{sub}}/resourceGroups/{group}/providers/Microsoft.ContainerService/managedClusters/{cluster}/agentPools?api-version=2025-01-01"),
            "",
        );
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        names(&v["value"], Some("name"))
    }

    /// `METHOD URL` over HTTPS, trusting the CA in the sandbox's
    /// `SSL_CERT_FILE`: the status and the body.
    fn https(&self, method: &str, url: &str, auth: &str, kind: &str, body: &str) -> (u16, String) {
        let ca = std::fs::read(&self.env["SSL_CERT_FILE"]).expect("the CA");
        https(&ca, (method, url), auth, kind, body)
    }
}

/// `METHOD URL` over HTTPS, trusting only the CA `ca_pem`: the status and
/// the body.
pub fn https(
    ca_pem: &[u8],
    (method, url): (&str, &str),
    auth: &str,
    kind: &str,
    body: &str,
) -> (u16, String) {
    response(&https_raw(ca_pem, (method, url), auth, kind, body))
}

/// `METHOD URL` over HTTPS: the whole answer, head and body.
fn https_raw(
    ca_pem: &[u8],
    (method, url): (&str, &str),
    auth: &str,
    kind: &str,
    body: &str,
) -> String {
    use rustls::pki_types::{pem::PemObject, CertificateDer, ServerName};
    let rest = url.strip_prefix("https://").expect("an https URL");
    let (host, path) = rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p));
    let mut roots = rustls::RootCertStore::empty();
    let ca = CertificateDer::from_pem_slice(ca_pem).expect("the CA");
    roots.add(ca).expect("a CA certificate");
    let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name =
        ServerName::try_from(host.split(':').next().unwrap_or(host).to_string()).expect("a name");
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(config), name).expect("TLS");
    let sock = std::net::TcpStream::connect(host).expect("connect");
    let mut tls = rustls::StreamOwned::new(conn, sock);
    let req = format!(
        "{method} /{path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: {auth}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tls.write_all(req.as_bytes()).expect("send");
    let mut raw = Vec::new();
    // A server that closes without close_notify ends the read with an
    // error after the whole answer.
    let _ = tls.read_to_end(&mut raw);
    String::from_utf8_lossy(&raw).into_owned()
}

impl Sandbox {
    /// The node pools GKE (the GCP stand-in) has in `cluster`.
    /// `METHOD` of a path under Compute Engine's endpoint (the GCP
    /// stand-in), as a user's client calls it, waiting for the operation a
    /// write starts: the status and the body.
    pub fn compute(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        let base = self.env["GOOGLE_COMPUTE_CUSTOM_ENDPOINT"].trim_end_matches('/');
        let auth = format!("Bearer {}", strata_standin::gcp::STATIC_TOKEN);
        let (status, text) = self.http(method, &format!("{base}/{path}"), &auth, body);
        let op: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        if let (true, Some(link)) = (method != "GET", op["selfLink"].as_str()) {
            let path = link.split("/compute/v1/").nth(1).unwrap_or(link);
            for _ in 0..5 {
                let (_, polled) = self.http("GET", &format!("{base}/{path}"), &auth, "");
                if polled.contains("\"DONE\"") {
                    break;
                }
            }
        }
        (status, text)
    }

    /// A GKE node pool of cluster `cluster`, as the GCP stand-in holds it.
    pub fn gke_node_pool(&self, cluster: &str, pool: &str) -> serde_json::Value {
        let base = self.env["GOOGLE_CONTAINER_CUSTOM_ENDPOINT"].trim_end_matches('/');
        let url = format!(
            "{base}/projects/acme-ml/locations/us-central1/clusters/{cluster}/nodePools/{pool}"
        );
        let auth = format!("Bearer {}", strata_standin::gcp::STATIC_TOKEN);
        let (status, body) = self.http("GET", &url, &auth, "");
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).expect("JSON")
    }

    pub fn gke_node_pools(&self, cluster: &str) -> Vec<String> {
        let base = self.env["GOOGLE_CONTAINER_CUSTOM_ENDPOINT"].trim_end_matches('/');
        let url =
            format!("{base}/projects/acme-ml/locations/us-central1/clusters/{cluster}/nodePools");
        let auth = format!("Bearer {}", strata_standin::gcp::STATIC_TOKEN);
        let (status, body) = self.http("GET", &url, &auth, "");
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        names(&v["nodePools"], Some("name"))
    }
}

/// The status and body of an HTTP/1.1 answer read whole.
fn response(text: &str) -> (u16, String) {
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, body.to_string())
}

/// Strings of a JSON list, or a field of each of its objects.
fn names(list: &serde_json::Value, field: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| match field {
            Some(f) => x[f].as_str(),
            None => x.as_str(),
        })
        .map(str::to_string)
        .collect();
    out.sort();
    out
}
