//! A proxy in front of a cloud emulator (moto).
//!
//! Everything is forwarded untouched except what the emulator lacks or
//! gets wrong, where the proxy speaks the documented wire format itself:
//!
//! - **EKS add-ons** (`/clusters/NAME/addons…`, REST-JSON): moto 5.2.5 has
//!   none. Kept in memory, with the asynchronous life AWS gives them: an
//!   add-on is `CREATING` (or `UPDATING`, `DELETING`) for the first
//!   Describe after a change, so waiters are exercised.
//! - **EKS clusters' endpoints**, when the proxy is started with a
//!   Kubernetes API server to stand for them ([`start_with_kube`]): moto
//!   answers with a name nothing listens on; the proxy puts the stand-in's
//!   URL and CA in every cluster it returns, so a configuration that
//!   reaches its cluster through `aws_eks_cluster` reaches the stand-in.
//! - **S3 GetBucketVersioning**: moto answers with the root element
//!   `GetBucketVersioningResponse`; S3 (and the Rust SDK's parser) use
//!   `VersioningConfiguration`.

use crate::{eks_addons, serve, Body, Injection, Req, Server};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::sync::{Arc, Mutex};

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

struct Shared {
    upstream: String,
    /// The API server (URL, CA PEM) EKS clusters' endpoints are set to.
    kube: Option<(String, String)>,
    client: Client<hyper_util::client::legacy::connect::HttpConnector, Body>,
    addons: Mutex<eks_addons::Addons>,
}

/// Starts a proxy for `upstream` (`http://127.0.0.1:PORT`) on a free port.
pub fn start(upstream: &str) -> std::io::Result<Server> {
    start_inner(upstream, None)
}

/// The same, with every EKS cluster's endpoint and CA those of the
/// Kubernetes API server at `url` (whose CA is `ca_pem`).
pub fn start_with_kube(upstream: &str, url: &str, ca_pem: &str) -> std::io::Result<Server> {
    start_inner(upstream, Some((url.to_string(), ca_pem.to_string())))
}

fn start_inner(upstream: &str, kube: Option<(String, String)>) -> std::io::Result<Server> {
    let shared = Arc::new(Shared {
        upstream: upstream.trim_end_matches('/').to_string(),
        kube,
        client: Client::builder(TokioExecutor::new()).build_http(),
        addons: Mutex::new(eks_addons::Addons::default()),
    });
    serve(move |req| handle(shared.clone(), req))
}

async fn handle(shared: Arc<Shared>, req: Req) -> Response<Body> {
    let Req {
        method,
        path,
        query,
        headers,
        body,
    } = req;
    let answered =
        shared
            .addons
            .lock()
            .ok()
            .and_then(|mut a| match eks_addons::untag_arn(&method, &path) {
                Some(arn) => a.untag(&arn, &query),
                None => a.handle(&method, &path, &body),
            });
    if let Some(resp) = answered {
        return resp;
    }
    let target = if query.is_empty() {
        format!("{}{path}", shared.upstream)
    } else {
        format!("{}{path}?{query}", shared.upstream)
    };
    let mut fwd = Request::builder().method(method.clone()).uri(target);
    for (k, v) in &headers {
        fwd = fwd.header(k, v);
    }
    let Ok(fwd) = fwd.body(Full::new(body)) else {
        return error(502, "Proxy", "cannot forward the request");
    };
    let resp = match shared.client.request(fwd).await {
        Ok(r) => r,
        Err(e) => return error(502, "Proxy", &e.to_string()),
    };
    let (mut rparts, rbody) = resp.into_parts();
    let mut bytes = rbody
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    if method == hyper::Method::GET && query == "versioning" {
        let text = String::from_utf8_lossy(&bytes)
            .replace("GetBucketVersioningResponse", "VersioningConfiguration");
        bytes = Bytes::from(text);
        rparts.headers.remove(hyper::header::CONTENT_LENGTH);
    }
    if let (Some((url, ca)), true) = (&shared.kube, path.starts_with("/clusters")) {
        if let Some(rewritten) = point_cluster(&bytes, url, ca) {
            bytes = Bytes::from(rewritten);
            rparts.headers.remove(hyper::header::CONTENT_LENGTH);
        }
    }
    Response::from_parts(rparts, Full::new(bytes))
}

/// An EKS answer carrying a `cluster`, with its endpoint and CA replaced.
fn point_cluster(body: &[u8], url: &str, ca_pem: &str) -> Option<String> {
    use base64::Engine;
    let mut v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let cluster = v.get_mut("cluster")?.as_object_mut()?;
    cluster.insert("endpoint".into(), serde_json::json!(url));
    cluster.insert(
        "certificateAuthority".into(),
        serde_json::json!({"data": base64::engine::general_purpose::STANDARD.encode(ca_pem)}),
    );
    Some(v.to_string())
}

/// An AWS REST-JSON error: the type in `x-amzn-ErrorType`, the message in
/// the body.
pub(crate) fn error(status: u16, kind: &str, message: &str) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("x-amzn-ErrorType", kind)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            serde_json::json!({ "message": message }).to_string(),
        )))
        .unwrap_or_default()
}
