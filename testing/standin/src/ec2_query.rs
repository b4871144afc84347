//! EC2's query protocol, for the actions the proxy answers itself rather
//! than moto (which lacks them): a form-encoded request, an XML answer in
//! EC2's namespace, and EC2's XML error envelope (not the JSON one of the
//! REST services).

use crate::{Body, Req};
use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;

/// A request's form fields, in order.
pub struct Form(Vec<(String, String)>);

impl Form {
    pub fn of(req: &Req) -> Option<Form> {
        let text = std::str::from_utf8(&req.body).ok()?;
        Some(Form(
            text.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (crate::decode(k), crate::decode(v))
                })
                .collect(),
        ))
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn action(&self) -> Option<&str> {
        self.get("Action")
    }

    /// The values of a list parameter: `Prefix.1`, `Prefix.2`, ….
    pub fn listed(&self, prefix: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| {
                k.strip_prefix(prefix)
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// `<{action}Response>` holding `inner`.
pub fn answer(action: &str, inner: &str) -> Response<Body> {
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<{action}Response xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"><requestId>{action}-standin</requestId>{inner}</{action}Response>"
    );
    Response::builder()
        .status(200)
        .header("content-type", "text/xml")
        .body(Full::new(Bytes::from(xml)))
        .unwrap_or_default()
}

/// An error as EC2 answers one.
pub fn error(status: u16, code: &str, message: &str) -> Response<Body> {
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>{code}</Code><Message>{}</Message></Error></Errors><RequestID>standin</RequestID></Response>",
        escape(message)
    );
    Response::builder()
        .status(status)
        .header("content-type", "text/xml")
        .body(Full::new(Bytes::from(xml)))
        .unwrap_or_default()
}

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
