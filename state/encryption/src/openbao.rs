//! The `openbao` key provider: a data key from OpenBao's transit secrets
//! engine (`datakey/plaintext`), its wrapped form (`vault:v1:…`) kept as
//! the metadata and unwrapped by the engine (`decrypt`) to open. Its HTTP
//! API, as OpenBao documents it; the address and token from the block, or
//! `BAO_ADDR` and `BAO_TOKEN` as OpenBao's own client reads them.

use crate::kms::DataKey;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::{Deserialize, Serialize};

/// `key_provider "openbao" "NAME" { … }` as configured.
#[derive(Debug, Clone)]
pub struct OpenBao {
    pub address: Option<String>,
    pub token: Option<String>,
    pub key_name: String,
    /// 16, 32 or 64 bytes (OpenTofu's choices; 32 by default).
    pub key_length: usize,
    /// Where the transit engine is mounted (`/transit`).
    pub transit_engine_path: String,
}

/// OpenTofu's metadata for it: the wrapped key's text, as base64.
#[derive(Debug, Serialize, Deserialize)]
pub struct Metadata {
    pub ciphertext: String,
}

impl Metadata {
    pub fn of(wrapped: &[u8]) -> Metadata {
        Metadata {
            ciphertext: STANDARD.encode(wrapped),
        }
    }

    pub fn wrapped(&self) -> Result<Vec<u8>, String> {
        STANDARD
            .decode(&self.ciphertext)
            .map_err(|e| format!("its ciphertext is not base64 ({e})"))
    }
}

/// What the transit engine answers: `data.plaintext`, `data.ciphertext`.
#[derive(Deserialize)]
struct Answer {
    data: AnswerData,
}

#[derive(Deserialize)]
struct AnswerData {
    plaintext: Option<String>,
    ciphertext: Option<String>,
}

impl OpenBao {
    /// OpenTofu's default key length and mount.
    pub fn new(key_name: String) -> OpenBao {
        OpenBao {
            address: None,
            token: None,
            key_name,
            key_length: 32,
            transit_engine_path: "/transit".into(),
        }
    }

    fn address(&self) -> String {
        let env = std::env::var("BAO_ADDR").ok().filter(|a| !a.is_empty());
        let address = self.address.clone().or(env);
        address.unwrap_or_else(|| "https://127.0.0.1:8200".into())
    }

    fn token(&self) -> Result<String, String> {
        let env = std::env::var("BAO_TOKEN").ok().filter(|t| !t.is_empty());
        self.token
            .clone()
            .or(env)
            .ok_or_else(|| "no OpenBao token found (token, or BAO_TOKEN)".into())
    }

    /// A new data key (`POST /v1/<transit>/datakey/plaintext/<key>`).
    pub fn generate(&self) -> Result<DataKey, String> {
        let body = serde_json::json!({ "bits": self.key_length * 8 });
        let answer = self
            .post("datakey/plaintext", body)
            .map_err(|e| format!("failed to generate OpenBao data key (check if the configuration valid and OpenBao server accessible): {e}"))?;
        let plaintext = decoded(answer.data.plaintext)?;
        let wrapped = answer
            .data
            .ciphertext
            .ok_or("OpenBao's answer has no ciphertext")?;
        Ok(DataKey {
            plaintext,
            ciphertext_blob: wrapped.into_bytes(),
        })
    }

    /// The key `wrapped` holds (`POST /v1/<transit>/decrypt/<key>`).
    pub fn decrypt(&self, wrapped: &[u8]) -> Result<Vec<u8>, String> {
        let text = String::from_utf8_lossy(wrapped).into_owned();
        let answer = self
            .post("decrypt", serde_json::json!({ "ciphertext": text }))
            .map_err(|e| format!("failed to decrypt ciphertext (check if the configuration valid and OpenBao server accessible): {e}"))?;
        decoded(answer.data.plaintext)
    }

    fn post(&self, op: &str, body: serde_json::Value) -> Result<Answer, String> {
        let url = format!(
            "{}/v1/{}/{op}/{}",
            self.address().trim_end_matches('/'),
            self.transit_engine_path.trim_matches('/'),
            self.key_name
        );
        let token = self.token()?;
        let text = crate::http::post(&url, &[("X-Vault-Token", token)], &body)?;
        serde_json::from_str(&text).map_err(|e| format!("{url}: {e}"))
    }
}

fn decoded(plaintext: Option<String>) -> Result<Vec<u8>, String> {
    let text = plaintext.ok_or("OpenBao's answer has no plaintext")?;
    STANDARD
        .decode(text)
        .map_err(|e| format!("OpenBao's plaintext is not base64 ({e})"))
}
