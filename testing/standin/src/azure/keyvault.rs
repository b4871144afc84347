//! Key Vault's key operations, for the `azure_vault` key provider of state
//! encryption: `POST /keys/{name}/encrypt` (the key's current version) and
//! `POST /keys/{name}/{version}/decrypt`, with `api-version=7.4`, base64url
//! values, a bearer token issued for Key Vault's scope and Key Vault's
//! error shape, as Microsoft's REST reference documents them. The vault
//! holds one RSA key, `state`; a ciphertext is an opaque handle that opens
//! only under the key version that made it.

use super::{error, World};
use crate::{json, Body, Req};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hyper::Response;
use serde_json::json;

/// The vault's key and its current version.
pub const KEY: &str = "state";
const VERSION: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// What a ciphertext stands for.
pub(super) struct Wrapped {
    version: String,
    plaintext: Vec<u8>,
}

impl World {
    /// A Key Vault request (its path starts `/keys/`).
    pub(super) fn key_vault(&mut self, req: &Req, base: &str) -> Response<Body> {
        if !req
            .bearer()
            .is_some_and(|t| self.vault_tokens.iter().any(|x| x == t))
        {
            return error(
                401,
                "Unauthorized",
                "AKV10000: Request is missing a Bearer or PoP token.",
            );
        }
        if req.param("api-version").as_deref() != Some("7.4") {
            return error(
                400,
                "BadParameter",
                "The specified version is not supported.",
            );
        }
        let parts: Vec<&str> = req.path.trim_start_matches('/').split('/').collect();
        let (name, version, op) = match parts.as_slice() {
            ["keys", name, op] => (*name, VERSION, *op),
            ["keys", name, version, op] => (*name, *version, *op),
            _ => return error(404, "NotFound", "no handler for route"),
        };
        if name != KEY || version != VERSION {
            return error(
                404,
                "KeyNotFound",
                &format!("A key with (name/id) {name}/{version} was not found in this key vault."),
            );
        }
        let Ok(body) = serde_json::from_slice::<serde_json::Value>(&req.body) else {
            return error(400, "BadParameter", "Invalid JSON.");
        };
        if body["alg"] != "RSA-OAEP-256" {
            return error(
                400,
                "BadParameter",
                "The algorithm is not supported by this key.",
            );
        }
        let value = body["value"]
            .as_str()
            .and_then(|v| URL_SAFE_NO_PAD.decode(v.trim_end_matches('=')).ok())
            .unwrap_or_default();
        let kid = format!("{base}/keys/{name}/{version}");
        match op {
            "encrypt" if !value.is_empty() => {
                let n = self.id();
                let handle = format!("akv-standin:{n}");
                let wrapped = Wrapped {
                    version: version.to_string(),
                    plaintext: value,
                };
                self.wrapped.insert(handle.clone(), wrapped);
                json(
                    200,
                    json!({"kid": kid, "value": URL_SAFE_NO_PAD.encode(handle)}),
                )
            }
            "decrypt" => {
                let handle = String::from_utf8_lossy(&value).into_owned();
                match self.wrapped.get(&handle) {
                    Some(w) if w.version == version => json(
                        200,
                        json!({"kid": kid, "value": URL_SAFE_NO_PAD.encode(&w.plaintext)}),
                    ),
                    _ => error(
                        400,
                        "BadParameter",
                        "Error occurred while decrypting the data.",
                    ),
                }
            }
            _ => error(400, "BadParameter", "A value is required."),
        }
    }
}
