//! A proxy on 127.0.0.1 in front of a cloud emulator (moto), for tests.
//!
//! Everything is forwarded untouched except what the emulator lacks or
//! gets wrong, where the proxy speaks the documented wire format itself:
//!
//! - **EKS add-ons** (`/clusters/NAME/addons…`, REST-JSON): moto 5.2.5 has
//!   none. Kept in memory, with the asynchronous life AWS gives them: an
//!   add-on is `CREATING` (or `UPDATING`, `DELETING`) for the first
//!   Describe after a change, so waiters are exercised.
//! - **S3 GetBucketVersioning**: moto answers with the root element
//!   `GetBucketVersioningResponse`; S3 (and the Rust SDK's parser) use
//!   `VersioningConfiguration`.
//!
//! - **Injected answers** ([`Proxy::inject`]): the next N requests that
//!   match get a given answer instead of the emulator's, which is how the
//!   tests make AWS throttle, refuse or run out of capacity.

mod eks_addons;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

type Body = Full<Bytes>;

/// An answer to give instead of forwarding.
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

impl Injection {
    /// An EC2 error (query protocol: XML with `Errors/Error/Code`).
    pub fn ec2_error(
        action: &str,
        status: u16,
        code: &str,
        message: &str,
        times: u32,
    ) -> Injection {
        Injection {
            matching: vec![format!("Action={action}")],
            times,
            status,
            headers: vec![("content-type".into(), "text/xml".into())],
            body: format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response><Errors><Error><Code>{code}</Code><Message>{message}</Message></Error></Errors><RequestID>injected</RequestID></Response>"
            ),
        }
    }

    /// An STS or IAM success (query protocol: `<ActionResponse><ActionResult>`).
    pub fn query_result(action: &str, namespace: &str, result: &str, times: u32) -> Injection {
        Injection {
            matching: vec![format!("Action={action}")],
            times,
            status: 200,
            headers: vec![("content-type".into(), "text/xml".into())],
            body: format!(
                "<{action}Response xmlns=\"{namespace}\"><{action}Result>{result}</{action}Result><ResponseMetadata><RequestId>injected</RequestId></ResponseMetadata></{action}Response>"
            ),
        }
    }

    /// A REST-JSON answer (EKS) to requests whose method and path match.
    pub fn rest_json(
        method: &str,
        path: &str,
        status: u16,
        body: serde_json::Value,
        times: u32,
    ) -> Injection {
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if status >= 400 {
            if let Some(kind) = body.get("__type").and_then(|t| t.as_str()) {
                headers.push(("x-amzn-ErrorType".into(), kind.to_string()));
            }
        }
        Injection {
            matching: vec![format!("{method} {path}")],
            times,
            status,
            headers,
            body: body.to_string(),
        }
    }
}

/// A running proxy; stops when dropped.
pub struct Proxy {
    pub url: String,
    injections: Arc<Mutex<Vec<Injection>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Proxy {
    /// Answers matching requests with `i` until it is used up; earlier
    /// injections are tried first.
    pub fn inject(&self, i: Injection) {
        if let Ok(mut all) = self.injections.lock() {
            all.push(i);
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

struct Shared {
    upstream: String,
    injections: Arc<Mutex<Vec<Injection>>>,
    client: Client<hyper_util::client::legacy::connect::HttpConnector, Body>,
    addons: Mutex<eks_addons::Addons>,
}

/// Starts a proxy for `upstream` (`http://127.0.0.1:PORT`) on a free port.
pub fn start(upstream: &str) -> std::io::Result<Proxy> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let addr: SocketAddr = listener.local_addr()?;
    let upstream = upstream.trim_end_matches('/').to_string();
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let injections = Arc::new(Mutex::new(Vec::new()));
    let shared_injections = injections.clone();
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
            let shared = Arc::new(Shared {
                upstream,
                injections: shared_injections,
                client: Client::builder(TokioExecutor::new()).build_http(),
                addons: Mutex::new(eks_addons::Addons::default()),
            });
            loop {
                tokio::select! {
                    _ = &mut stopped => return,
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { continue };
                        let shared = shared.clone();
                        tokio::spawn(async move {
                            let svc = service_fn(move |req| handle(shared.clone(), req));
                            let _ = http1::Builder::new()
                                .serve_connection(TokioIo::new(stream), svc)
                                .await;
                        });
                    }
                }
            }
        });
    });
    Ok(Proxy {
        url: format!("http://{addr}"),
        injections,
        stop: Some(stop),
        thread: Some(thread),
    })
}

async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<Body>, std::convert::Infallible> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or("").to_string();
    let probe = format!(
        "{} {path}?{query} {}",
        parts.method,
        String::from_utf8_lossy(&body)
    );
    if let Some(resp) = injected(&shared, &probe) {
        return Ok(resp);
    }
    let answered = shared.addons.lock().ok().and_then(|mut a| {
        match eks_addons::untag_arn(&parts.method, &path) {
            Some(arn) => a.untag(&arn, &query),
            None => a.handle(&parts.method, &path, &body),
        }
    });
    if let Some(resp) = answered {
        return Ok(resp);
    }
    let target = format!(
        "{}{}",
        shared.upstream,
        parts.uri.path_and_query().map_or("/", |p| p.as_str())
    );
    let mut fwd = Request::builder().method(parts.method.clone()).uri(target);
    for (k, v) in &parts.headers {
        fwd = fwd.header(k, v);
    }
    let Ok(fwd) = fwd.body(Full::new(body)) else {
        return Ok(error(502, "Proxy", "cannot forward the request"));
    };
    let resp = match shared.client.request(fwd).await {
        Ok(r) => r,
        Err(e) => return Ok(error(502, "Proxy", &e.to_string())),
    };
    let (mut rparts, rbody) = resp.into_parts();
    let mut bytes = rbody
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    if parts.method == hyper::Method::GET && query == "versioning" {
        let text = String::from_utf8_lossy(&bytes)
            .replace("GetBucketVersioningResponse", "VersioningConfiguration");
        bytes = Bytes::from(text);
        rparts.headers.remove(hyper::header::CONTENT_LENGTH);
    }
    Ok(Response::from_parts(rparts, Full::new(bytes)))
}

/// The first live injection matching `probe`, used once.
fn injected(shared: &Shared, probe: &str) -> Option<Response<Body>> {
    let mut all = shared.injections.lock().ok()?;
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

/// An AWS REST-JSON error: the type in `x-amzn-ErrorType`, the message in
/// the body.
fn error(status: u16, kind: &str, message: &str) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("x-amzn-ErrorType", kind)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            serde_json::json!({ "message": message }).to_string(),
        )))
        .unwrap_or_default()
}

fn json(status: u16, v: serde_json::Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(v.to_string())))
        .unwrap_or_default()
}
