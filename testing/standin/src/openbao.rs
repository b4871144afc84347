//! OpenBao's transit secrets engine, in memory, for the `openbao` key
//! provider of state encryption: `POST /v1/transit/datakey/plaintext/:name`
//! (a new data key, in clear and wrapped) and `POST
//! /v1/transit/decrypt/:name` (a wrapped key unwrapped), with
//! `X-Vault-Token`, the answers under `data` and errors as `{"errors":
//! […]}`, as OpenBao's HTTP API documents them. A wrapped key is
//! `vault:v1:` and an opaque handle this engine remembers, and opens only
//! under the key name that made it.

use crate::{json, serve, Body, Req, Server};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hyper::{Method, Response};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Keys {
    /// Handle → (key name, data key).
    wrapped: BTreeMap<String, (String, Vec<u8>)>,
    made: u64,
    /// How many data keys were asked for.
    generated: u64,
}

/// A running transit engine holding the keys named at start.
pub struct Transit {
    pub server: Server,
    pub token: String,
    state: Arc<Mutex<Keys>>,
}

impl Transit {
    /// How many data keys it has made.
    pub fn generated(&self) -> u64 {
        self.state.lock().map(|s| s.generated).unwrap_or(0)
    }
}

pub fn start(token: &str, keys: &[&str]) -> std::io::Result<Transit> {
    let state = Arc::new(Mutex::new(Keys::default()));
    let shared = state.clone();
    let (want, names) = (
        token.to_string(),
        keys.iter().map(|k| k.to_string()).collect::<Vec<_>>(),
    );
    let server = serve(move |req: Req| {
        let state = shared.clone();
        let (want, names) = (want.clone(), names.clone());
        async move { handle(&state, &want, &names, &req) }
    })?;
    Ok(Transit {
        server,
        token: token.into(),
        state,
    })
}

fn errors(status: u16, message: &str) -> Response<Body> {
    json(status, json!({ "errors": [message] }))
}

fn handle(state: &Mutex<Keys>, want: &str, names: &[String], req: &Req) -> Response<Body> {
    let token = req
        .headers
        .get("x-vault-token")
        .and_then(|v| v.to_str().ok());
    if token != Some(want) {
        return errors(403, "permission denied");
    }
    if req.method != Method::POST {
        return errors(405, "unsupported operation");
    }
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(&req.body) else {
        return errors(400, "failed to parse JSON input");
    };
    let Ok(mut s) = state.lock() else {
        return errors(500, "stand-in state poisoned");
    };
    if let Some(name) = req.path.strip_prefix("/v1/transit/datakey/plaintext/") {
        if !names.iter().any(|n| n == name) {
            return errors(400, "encryption key not found");
        }
        let bits = body["bits"].as_u64().unwrap_or(256);
        if !matches!(bits, 128 | 256 | 512) {
            return errors(400, "invalid bit length");
        }
        s.made += 1;
        s.generated += 1;
        let key = bytes(s.made, (bits / 8) as usize);
        let handle = format!("vault:v1:{}", STANDARD.encode(bytes(s.made ^ 0x5eed, 24)));
        s.wrapped
            .insert(handle.clone(), (name.to_string(), key.clone()));
        return json(
            200,
            json!({"data": {"plaintext": STANDARD.encode(&key), "ciphertext": handle, "key_version": 1}}),
        );
    }
    if let Some(name) = req.path.strip_prefix("/v1/transit/decrypt/") {
        let wrapped = body["ciphertext"].as_str().unwrap_or_default();
        return match s.wrapped.get(wrapped) {
            Some((made_by, key)) if made_by == name => {
                json(200, json!({"data": {"plaintext": STANDARD.encode(key)}}))
            }
            _ => errors(400, "invalid ciphertext: unable to decrypt"),
        };
    }
    errors(404, "no handler for route")
}

/// `n` bytes that differ for every `seed` (a stand-in's keys need only be
/// distinct, not secret).
fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xd1b5_4a32_d192_ed03;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}
