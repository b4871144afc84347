//! Cloud KMS, in memory, for the `gcp_kms` key provider of state
//! encryption: `POST /v1/{name}:encrypt` and `POST /v1/{name}:decrypt`
//! (`projects.locations.keyRings.cryptoKeys`), bearer tokens, base64
//! bodies and Google's error shape (`{"error": {"code", "message",
//! "status"}}`), as Google's REST reference documents them. A ciphertext
//! is an opaque handle this service remembers; it opens only under the
//! key that made it and with the same additional authenticated data.

use crate::{json, serve, Body, Req, Server};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hyper::{Method, Response};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// What a ciphertext stands for.
struct Sealed {
    key: String,
    plaintext: Vec<u8>,
    aad: Vec<u8>,
}

#[derive(Default)]
struct Keys {
    sealed: BTreeMap<String, Sealed>,
    /// How many encrypt calls were answered.
    encrypted: u64,
}

/// A running Cloud KMS holding the crypto keys named at start.
pub struct CloudKms {
    pub server: Server,
    state: Arc<Mutex<Keys>>,
}

impl CloudKms {
    /// How many keys it has encrypted.
    pub fn encrypted(&self) -> u64 {
        self.state.lock().map(|s| s.encrypted).unwrap_or(0)
    }
}

/// Serves `keys` (`projects/…/cryptoKeys/…`) to callers bearing `token`.
pub fn start(token: &str, keys: &[&str]) -> std::io::Result<CloudKms> {
    let state = Arc::new(Mutex::new(Keys::default()));
    let shared = state.clone();
    let want = format!("Bearer {token}");
    let names: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let server = serve(move |req: Req| {
        let state = shared.clone();
        let (want, names) = (want.clone(), names.clone());
        async move { handle(&state, &want, &names, &req) }
    })?;
    Ok(CloudKms { server, state })
}

fn error(code: u16, status: &str, message: &str) -> Response<Body> {
    json(
        code,
        json!({"error": {"code": code, "message": message, "status": status}}),
    )
}

fn bytes_of(body: &serde_json::Value, field: &str) -> Option<Vec<u8>> {
    match body.get(field).and_then(|v| v.as_str()) {
        Some(text) => STANDARD.decode(text).ok(),
        None => Some(Vec::new()),
    }
}

fn handle(state: &Mutex<Keys>, want: &str, names: &[String], req: &Req) -> Response<Body> {
    let token = req
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok());
    if token != Some(want) {
        return error(
            401,
            "UNAUTHENTICATED",
            "Request had invalid authentication credentials.",
        );
    }
    let Some((name, op)) = req
        .path
        .strip_prefix("/v1/")
        .and_then(|p| p.rsplit_once(':'))
    else {
        return error(404, "NOT_FOUND", "no handler for route");
    };
    if req.method != Method::POST {
        return error(405, "METHOD_NOT_ALLOWED", "unsupported operation");
    }
    if !names.iter().any(|n| n == name) {
        return error(404, "NOT_FOUND", &format!("{name} not found."));
    }
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(&req.body) else {
        return error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.");
    };
    let (Some(aad), Ok(mut s)) = (bytes_of(&body, "additionalAuthenticatedData"), state.lock())
    else {
        return error(
            400,
            "INVALID_ARGUMENT",
            "Invalid value at 'additional_authenticated_data'.",
        );
    };
    match op {
        "encrypt" => {
            let Some(plaintext) = bytes_of(&body, "plaintext").filter(|p| !p.is_empty()) else {
                return error(400, "INVALID_ARGUMENT", "Plaintext is required.");
            };
            s.encrypted += 1;
            let handle = format!("cloudkms-standin:{}:{}", name.len(), s.encrypted);
            let sealed = Sealed {
                key: name.to_string(),
                plaintext,
                aad,
            };
            s.sealed.insert(handle.clone(), sealed);
            json(
                200,
                json!({"name": format!("{name}/cryptoKeyVersions/1"), "ciphertext": STANDARD.encode(handle.as_bytes())}),
            )
        }
        "decrypt" => {
            let handle = bytes_of(&body, "ciphertext").unwrap_or_default();
            let handle = String::from_utf8_lossy(&handle).into_owned();
            match s.sealed.get(&handle) {
                Some(k) if k.key == name && k.aad == aad => {
                    json(200, json!({"plaintext": STANDARD.encode(&k.plaintext)}))
                }
                _ => error(
                    400,
                    "INVALID_ARGUMENT",
                    "Decryption failed: the ciphertext is invalid.",
                ),
            }
        }
        _ => error(404, "NOT_FOUND", "no handler for route"),
    }
}
