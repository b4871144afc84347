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
use crate::sigv4::{header, hex, Signed};
use crate::{Body, Req};
use base64::Engine;
use hyper::{Method, Response};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::sigv4::s3_error as xml_error;

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
        let Some(signed) = Signed::of(req) else {
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
        if !signed.matches(req, &secret) {
            return xml_error(
                403,
                "SignatureDoesNotMatch",
                "The request signature we calculated does not match the signature you provided.",
            );
        }
        if !crate::sigv4::payload_matches(req) {
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
