//! Stand-ins on 127.0.0.1 for the cloud APIs strata's tests need, each
//! speaking the vendor's documented wire format; test support only, never
//! linked into the binary.
//!
//! - [`proxy`]: in front of moto (the AWS emulator), answering what moto
//!   lacks (EKS add-ons) and correcting what it gets wrong.
//! - [`gcp`]: the Compute, Container, IAM, Resource Manager and Storage
//!   APIs and Google's OAuth token endpoint, in memory.
//! - [`azure`]: Azure Resource Manager and the Microsoft identity
//!   platform's token endpoint, in memory, over HTTPS.
//! - [`github`]: GitHub's REST API for issues, pull-request comments and
//!   labels of one repository, in memory.
//! - [`registry`]: a Terraform module and provider registry
//!   (`modules.v1`, `providers.v1`), for `init`.
//! - [`mirror`]: a provider network mirror, over HTTPS, for `init`.
//! - [`openbao`]: OpenBao's transit engine, for state encryption's key provider.
//! - [`cloudkms`]: Google Cloud KMS's encrypt and decrypt, for the `gcp_kms` key provider.
//! - [`capacity`]: shortages set on demand, which the stand-ins that make
//!   node pools answer as their cloud reports a lack of capacity.
//!
//! Every server here takes injected answers ([`Server::inject`]): the next
//! N requests that match get a given answer instead, which is how tests
//! make a cloud throttle, fail or run out of capacity; and faults at given
//! rates ([`Server::faults`], [`faults`]): throttling, 5xx, resets, slow
//! answers, for tests that must converge through them.

// Handlers answer early with a ready response as their error.
#![allow(clippy::result_large_err)]

pub mod azure;
pub mod capacity;
pub mod clock;
pub mod cloudkms;
pub mod cloudwatch;
pub mod definitions;
mod ec2_query;
mod eks_addons;
mod eks_pod_identity;
mod eks_versions;
pub mod faults;
pub mod gcp;
pub mod github;
pub mod kubernetes;
pub mod mirror;
pub mod node_records;
mod openapi;
pub mod openbao;
pub mod proxy;
pub mod registry;
pub mod reservations;
pub mod s3gateway;
mod shapes;
mod sigv4;
mod spot_scores;

pub use proxy::start;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

pub type Body = Full<Bytes>;

/// A request as handlers see it: read in full.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: Method,
    pub path: String,
    pub query: String,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

impl Req {
    /// A request as a client with bearer `token` would send it, for the
    /// stand-ins' own tests (`path` may carry a `?query`).
    pub fn with_bearer(method: Method, path: &str, token: &str, body: &serde_json::Value) -> Req {
        let mut headers = hyper::HeaderMap::new();
        if let Ok(v) = format!("Bearer {token}").parse() {
            headers.insert("authorization", v);
        }
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        Req {
            method,
            path: path.to_string(),
            query: query.to_string(),
            headers,
            body: body.to_string().into(),
        }
    }

    /// The bearer token of the `Authorization` header.
    pub fn bearer(&self) -> Option<&str> {
        self.headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
    }

    /// A query parameter, percent-decoded.
    pub fn param(&self, name: &str) -> Option<String> {
        self.query.split('&').find_map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k == name).then(|| decode(v))
        })
    }
}

type Handler =
    Arc<dyn Fn(Req) -> Pin<Box<dyn Future<Output = Response<Body>> + Send>> + Send + Sync>;

/// An answer to give instead of the stand-in's own.
#[derive(Debug, Clone)]
pub struct Injection {
    /// Every one of these must occur in `METHOD PATH?QUERY BODY`
    /// (`Action=CreateVpc` names an EC2, IAM or STS call).
    pub matching: Vec<String>,
    /// How many requests get it.
    pub times: u32,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// A running server; stops when dropped.
pub struct Server {
    pub url: String,
    injections: Arc<Mutex<Vec<Injection>>>,
    faults: Arc<Mutex<faults::State>>,
    /// What the faults did so far.
    pub counts: Arc<faults::Counts>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Server {
    /// Answers matching requests with `i` until it is used up; earlier
    /// injections are tried first.
    pub fn inject(&self, i: Injection) {
        if let Ok(mut all) = self.injections.lock() {
            all.push(i);
        }
    }

    /// Injects faults at the given rates into every request from now on
    /// (`None` stops them).
    pub fn faults(&self, f: Option<faults::Faults>) {
        if let Ok(mut s) = self.faults.lock() {
            s.set(f);
        }
    }

    /// How many injected answers are still to be given.
    pub fn pending(&self) -> u32 {
        self.injections
            .lock()
            .map(|all| all.iter().map(|i| i.times).sum())
            .unwrap_or(0)
    }
}

/// Serves `handler` on a free port of 127.0.0.1, on its own thread and
/// runtime (so tests can drive the code under test with theirs).
pub fn serve<F, Fut>(handler: F) -> std::io::Result<Server>
where
    F: Fn(Req) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<Body>> + Send + 'static,
{
    serve_on(Arc::new(move |r| Box::pin(handler(r))), None)
}

/// [`serve`] over HTTPS, with a certificate for 127.0.0.1 from a CA made
/// for the purpose; `ca_pem` is that CA, for the client to trust
/// (`SSL_CERT_FILE`).
pub fn serve_tls<F, Fut>(handler: F) -> std::io::Result<(Server, String)>
where
    F: Fn(Req) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<Body>> + Send + 'static,
{
    let (config, ca_pem) = tls_config().map_err(std::io::Error::other)?;
    let mut server = serve_on(
        Arc::new(move |r| Box::pin(handler(r))),
        Some(tokio_rustls::TlsAcceptor::from(Arc::new(config))),
    )?;
    server.url = server.url.replace("http://", "https://");
    Ok((server, ca_pem))
}

/// A CA, and a server certificate for 127.0.0.1 it signed.
fn tls_config() -> Result<(rustls::ServerConfig, String), String> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
    let e = |e: rcgen::Error| e.to_string();
    let ca_key = KeyPair::generate().map_err(e)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(e)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    // Distinct names: OpenSSL (Python's ssl, helm's Go) takes a leaf whose
    // issuer is its own subject for self-signed.
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "strata stand-in CA");
    let ca = ca_params.self_signed(&ca_key).map_err(e)?;
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().map_err(e)?;
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).map_err(e)?;
    params
        .distinguished_name
        .push(DnType::CommonName, "127.0.0.1");
    params
        .subject_alt_names
        .push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
    let cert = params.signed_by(&key, &issuer).map_err(e)?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .map_err(|e| e.to_string())?;
    Ok((config, ca.pem()))
}

fn serve_on(handler: Handler, tls: Option<tokio_rustls::TlsAcceptor>) -> std::io::Result<Server> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let addr: SocketAddr = listener.local_addr()?;
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let injections = Arc::new(Mutex::new(Vec::new()));
    let shared = injections.clone();
    let fault_state = Arc::new(Mutex::new(faults::State::default()));
    let counts = Arc::new(faults::Counts::default());
    let (fs, cs) = (fault_state.clone(), counts.clone());
    let thread = std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                return;
            };
            loop {
                tokio::select! {
                    _ = &mut stopped => return,
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { continue };
                        let handler = handler.clone();
                        let injections = shared.clone();
                        let (fs, cs) = (fs.clone(), cs.clone());
                        let tls = tls.clone();
                        tokio::spawn(async move {
                            let svc = service_fn(move |req| {
                                handle(handler.clone(), injections.clone(), fs.clone(), cs.clone(), req)
                            });
                            let conn = http1::Builder::new();
                            match tls {
                                Some(t) => {
                                    if let Ok(s) = t.accept(stream).await {
                                        let _ = conn.serve_connection(TokioIo::new(s), svc).await;
                                    }
                                }
                                None => {
                                    let _ = conn.serve_connection(TokioIo::new(stream), svc).await;
                                }
                            }
                        });
                    }
                }
            }
        });
    });
    Ok(Server {
        url: format!("http://{addr}"),
        injections,
        faults: fault_state,
        counts,
        stop: Some(stop),
        thread: Some(thread),
    })
}

async fn handle(
    handler: Handler,
    injections: Arc<Mutex<Vec<Injection>>>,
    fault_state: Arc<Mutex<faults::State>>,
    counts: Arc<faults::Counts>,
    req: Request<Incoming>,
) -> Result<Response<Body>, std::io::Error> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let req = Req {
        method: parts.method,
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or("").to_string(),
        headers: parts.headers,
        body,
    };
    // An error from the service makes hyper drop the connection without an
    // answer: the client sees a reset.
    let reset = || Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
    let mut lose = false;
    let _in_flight = counts.enter(&req);
    match faults::decide(&fault_state, &counts, &req) {
        Some(faults::Fault::Answer(r)) => return Ok(r),
        Some(faults::Fault::Reset) => return reset(),
        Some(faults::Fault::Delay(d)) => tokio::time::sleep(d).await,
        Some(faults::Fault::Lose) => lose = true,
        None => {}
    }
    let probe = format!(
        "{} {}?{} {}",
        req.method,
        req.path,
        req.query,
        String::from_utf8_lossy(&req.body)
    );
    if let Some(resp) = injected(&injections, &probe) {
        return Ok(resp);
    }
    let answer = handler(req).await;
    if lose {
        return reset();
    }
    Ok(answer)
}

/// The first live injection matching `probe`, used once.
fn injected(injections: &Mutex<Vec<Injection>>, probe: &str) -> Option<Response<Body>> {
    let mut all = injections.lock().ok()?;
    let i = all
        .iter_mut()
        .find(|i| i.times > 0 && i.matching.iter().all(|m| probe.contains(m.as_str())))?;
    i.times -= 1;
    let mut r = Response::builder().status(i.status);
    for (k, v) in &i.headers {
        r = r.header(k, v);
    }
    r.body(Full::new(Bytes::from(i.body.clone()))).ok()
}

/// A JSON response.
pub fn json(status: u16, v: serde_json::Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(v.to_string())))
        .unwrap_or_default()
}

/// A whole body's bytes: the stand-ins' bodies are whole from the start,
/// so the one frame is there at the first poll.
pub(crate) fn ready_bytes(mut body: Body) -> Bytes {
    use hyper::body::Body as _;
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    match std::pin::Pin::new(&mut body).poll_frame(&mut cx) {
        std::task::Poll::Ready(Some(Ok(frame))) => frame.into_data().unwrap_or_default(),
        _ => Bytes::new(),
    }
}

/// Percent-decoding of a path or query component.
pub fn decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// The operations (by name) still running after two seconds that nobody
/// has followed to the end: real clouds finish theirs whether or not anyone
/// polls, and one whose answer was lost is never polled, so the stand-ins
/// end these rather than let them hold a cluster busy for ever.
pub(crate) fn unattended<O>(
    ops: &std::collections::BTreeMap<String, O>,
    running_since: impl Fn(&O) -> Option<std::time::Instant>,
) -> Vec<String> {
    ops.iter()
        .filter(|(_, o)| {
            running_since(o).is_some_and(|t| t.elapsed() > std::time::Duration::from_secs(2))
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// An AWS REST-JSON error: the type in `x-amzn-ErrorType`, the message in
/// the body (the proxy's and the EKS add-on stand-in's).
pub(crate) fn aws_error(status: u16, kind: &str, message: &str) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("x-amzn-ErrorType", kind)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            serde_json::json!({ "message": message }).to_string(),
        )))
        .unwrap_or_default()
}
