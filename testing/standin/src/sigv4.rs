//! AWS Signature Version 4 as a server checks it: the `Authorization`
//! header taken apart, the canonical request rebuilt from what arrived,
//! the signature computed with the secret the access key stands for, and
//! the payload's declared hash compared with the body. Used by every
//! stand-in that speaks S3 (Cloud Storage's XML API, the S3 gateway).

use crate::Req;
use sha2::{Digest, Sha256};

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// HMAC-SHA256 (RFC 2104, SHA-256's 64-byte blocks).
fn hmac(key: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut k = if key.len() > 64 {
        Sha256::digest(key).to_vec()
    } else {
        key.to_vec()
    };
    k.resize(64, 0);
    let pad = |b: u8| k.iter().map(|x| x ^ b).collect::<Vec<u8>>();
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(msg)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .to_vec()
}

/// The parts of a SigV4 `Authorization` header.
pub struct Signed {
    pub access: String,
    /// `DATE/REGION/SERVICE/aws4_request`.
    scope: String,
    headers: Vec<String>,
    signature: String,
}

pub fn header<'r>(req: &'r Req, name: &str) -> Option<&'r str> {
    req.headers.get(name).and_then(|v| v.to_str().ok())
}

impl Signed {
    /// The request's signature, if it carries a SigV4 one.
    pub fn of(req: &Req) -> Option<Signed> {
        let rest = header(req, "authorization")?.strip_prefix("AWS4-HMAC-SHA256 ")?;
        let mut credential = None;
        let mut headers = None;
        let mut signature = None;
        for part in rest.split(',').map(str::trim) {
            let (k, v) = part.split_once('=')?;
            match k {
                "Credential" => credential = Some(v),
                "SignedHeaders" => headers = Some(v),
                "Signature" => signature = Some(v),
                _ => {}
            }
        }
        let (access, scope) = credential?.split_once('/')?;
        Some(Signed {
            access: access.to_string(),
            scope: scope.to_string(),
            headers: headers?.split(';').map(str::to_string).collect(),
            signature: signature?.to_string(),
        })
    }

    /// Whether the request was signed with `secret`.
    pub fn matches(&self, req: &Req, secret: &str) -> bool {
        self.expected(req, secret).as_deref() == Some(self.signature.as_str())
    }

    /// The signature the request should carry, signed with `secret`.
    fn expected(&self, req: &Req, secret: &str) -> Option<String> {
        let canonical_headers: String = self
            .headers
            .iter()
            .map(|h| {
                let v = header(req, h).unwrap_or_default();
                format!(
                    "{h}:{}\n",
                    v.split_whitespace().collect::<Vec<_>>().join(" ")
                )
            })
            .collect();
        let payload = header(req, "x-amz-content-sha256")?;
        let canonical = format!(
            "{}\n{}\n{}\n{}\n{}\n{}",
            req.method,
            req.path,
            canonical_query(&req.query),
            canonical_headers,
            self.headers.join(";"),
            payload
        );
        let date = header(req, "x-amz-date")?;
        let to_sign = format!(
            "AWS4-HMAC-SHA256\n{date}\n{}\n{}",
            self.scope,
            hex(&Sha256::digest(canonical.as_bytes()))
        );
        let mut key = format!("AWS4{secret}").into_bytes();
        for part in self.scope.split('/') {
            key = hmac(&key, part.as_bytes());
        }
        Some(hex(&hmac(&key, to_sign.as_bytes())))
    }
}

/// Whether the body is what `x-amz-content-sha256` says it is (or the
/// client declared it unsigned).
pub fn payload_matches(req: &Req) -> bool {
    let payload = header(req, "x-amz-content-sha256").unwrap_or_default();
    payload == "UNSIGNED-PAYLOAD" || payload == hex(&Sha256::digest(&req.body))
}

/// The canonical query string: each pair URI-encoded, sorted.
fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (encode(&crate::decode(k)), encode(&crate::decode(v)))
        })
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// URI encoding as SigV4 wants it: unreserved characters kept.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// An error in S3's XML form.
pub fn s3_error(status: u16, code: &str, message: &str) -> hyper::Response<crate::Body> {
    let body = format!(
        "<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code><Message>{message}</Message></Error>"
    );
    hyper::Response::builder()
        .status(status)
        .header("content-type", "application/xml; charset=UTF-8")
        .body(crate::Body::from(body))
        .unwrap_or_default()
}
