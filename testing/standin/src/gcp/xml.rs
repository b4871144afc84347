//! Cloud Storage's XML API (`/xml/BUCKET/OBJECT`, path style), the part
//! S3 clients speak with an HMAC key: requests signed with AWS Signature
//! Version 4 (the key's access id as the access key, its secret as the
//! secret key), checked here as Cloud Storage checks them — the
//! signature, the payload's hash, the key active, and the key's service
//! account holding an object role on the bucket. Objects: PUT, GET, HEAD
//! and DELETE, errors in the XML API's `<Error><Code>…` form.
//!
//! Cloud Storage does not take the newer S3 integrity protocol that AWS
//! SDKs use by default since January 2025 (a CRC sent as a trailer of an
//! `aws-chunked` body, `x-amz-checksum-*` and `x-amz-sdk-checksum-algorithm`
//! headers): such a request is refused, as GCS refuses it, so a client
//! must be told `AWS_REQUEST_CHECKSUM_CALCULATION=WHEN_REQUIRED`.

use super::storage::object_view;
use super::World;
use crate::{Body, Req};
use base64::Engine;
use hyper::{Method, Response};
use serde_json::json;
use sha2::{Digest, Sha256};

fn xml_error(status: u16, code: &str, message: &str) -> Response<Body> {
    let body = format!(
        "<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code><Message>{message}</Message></Error>"
    );
    Response::builder()
        .status(status)
        .header("content-type", "application/xml; charset=UTF-8")
        .body(Body::from(body))
        .unwrap_or_default()
}

fn hex(bytes: &[u8]) -> String {
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
struct Signed {
    access: String,
    /// `DATE/REGION/SERVICE/aws4_request`.
    scope: String,
    headers: Vec<String>,
    signature: String,
}

fn parse_authorization(v: &str) -> Option<Signed> {
    let rest = v.strip_prefix("AWS4-HMAC-SHA256 ")?;
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

fn header<'r>(req: &'r Req, name: &str) -> Option<&'r str> {
    req.headers.get(name).and_then(|v| v.to_str().ok())
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

/// The signature the request should carry, signed with `secret`.
fn expected_signature(req: &Req, s: &Signed, secret: &str) -> Option<String> {
    let canonical_headers: String = s
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
        s.headers.join(";"),
        payload
    );
    let date = header(req, "x-amz-date")?;
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{date}\n{}\n{}",
        s.scope,
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let mut key = format!("AWS4{secret}").into_bytes();
    for part in s.scope.split('/') {
        key = hmac(&key, part.as_bytes());
    }
    Some(hex(&hmac(&key, to_sign.as_bytes())))
}

/// Headers of the integrity protocol Cloud Storage does not take.
fn unsupported_integrity(req: &Req) -> Option<String> {
    if header(req, "content-encoding").is_some_and(|v| v.contains("aws-chunked")) {
        return Some("Content-Encoding: aws-chunked".into());
    }
    if header(req, "x-amz-content-sha256").is_some_and(|v| v.starts_with("STREAMING-")) {
        return Some("x-amz-content-sha256: STREAMING-…".into());
    }
    req.headers
        .keys()
        .map(|k| k.as_str())
        .find(|k| {
            k.starts_with("x-amz-checksum-")
                || *k == "x-amz-sdk-checksum-algorithm"
                || *k == "x-amz-trailer"
        })
        .map(str::to_string)
}

impl World {
    /// An XML API request, `rest` its path after `/xml/`.
    pub(super) fn xml(&mut self, req: &Req, rest: &str) -> Response<Body> {
        if let Some(h) = unsupported_integrity(req) {
            return xml_error(
                400,
                "InvalidArgument",
                &format!("Invalid argument: {h} is not supported."),
            );
        }
        let Some(signed) = header(req, "authorization").and_then(parse_authorization) else {
            return xml_error(
                403,
                "AccessDenied",
                "Access denied: a request signed with an HMAC key is required.",
            );
        };
        let Some((secret, email)) = self.hmac_secret(&signed.access) else {
            return xml_error(
                403,
                "InvalidAccessKeyId",
                "The Cloud Storage access key Id you provided does not exist in our records.",
            );
        };
        if expected_signature(req, &signed, &secret).as_deref() != Some(signed.signature.as_str()) {
            return xml_error(
                403,
                "SignatureDoesNotMatch",
                "The request signature we calculated does not match the signature you provided.",
            );
        }
        let payload = header(req, "x-amz-content-sha256").unwrap_or_default();
        if payload != "UNSIGNED-PAYLOAD" && payload != hex(&Sha256::digest(&req.body)) {
            return xml_error(
                400,
                "InvalidDigest",
                "The x-amz-content-sha256 you specified did not match what we received.",
            );
        }
        let (bucket, object) = rest.split_once('/').unwrap_or((rest, ""));
        if !self.objects.contains_key(&format!("b/{bucket}")) {
            return xml_error(404, "NoSuchBucket", "The specified bucket does not exist.");
        }
        if !self.may_use_objects(bucket, &format!("serviceAccount:{email}")) {
            return xml_error(
                403,
                "AccessDenied",
                &format!("{email} does not have storage.objects access to the Google Cloud Storage bucket."),
            );
        }
        self.object(req, bucket, &crate::decode(object))
    }

    fn object(&mut self, req: &Req, bucket: &str, name: &str) -> Response<Body> {
        let key = format!("b/{bucket}/o/{name}");
        let b64 = base64::engine::general_purpose::STANDARD;
        match req.method {
            Method::PUT => {
                let n = self.id();
                let etag = format!("\"{}\"", &hex(&Sha256::digest(&req.body))[..32]);
                let o = json!({
                    "kind": "storage#object", "name": name, "bucket": bucket,
                    "generation": n.to_string(), "size": req.body.len().to_string(),
                    "etag": etag, "data": b64.encode(&req.body),
                });
                self.objects.insert(key, o);
                Response::builder()
                    .status(200)
                    .header("etag", etag)
                    .header("x-goog-generation", n.to_string())
                    .body(Body::default())
                    .unwrap_or_default()
            }
            Method::GET | Method::HEAD => {
                let Some(o) = self.objects.get(&key) else {
                    return xml_error(404, "NoSuchKey", "The specified key does not exist.");
                };
                let data = b64
                    .decode(o["data"].as_str().unwrap_or_default())
                    .unwrap_or_default();
                let view = object_view(o);
                let body = if req.method == Method::HEAD {
                    Body::default()
                } else {
                    Body::from(data.clone())
                };
                Response::builder()
                    .status(200)
                    .header("content-length", data.len())
                    .header("etag", view["etag"].as_str().unwrap_or_default())
                    .header("content-type", "application/octet-stream")
                    .body(body)
                    .unwrap_or_default()
            }
            Method::DELETE => {
                self.objects.remove(&key);
                Response::builder()
                    .status(204)
                    .body(Body::default())
                    .unwrap_or_default()
            }
            _ => xml_error(405, "MethodNotAllowed", "The method is not allowed."),
        }
    }
}
