//! The `gcp_kms` key provider (OpenTofu's): a random key of `key_length`
//! bytes for each run that writes, encrypted by Cloud KMS
//! (`projects.locations.keyRings.cryptoKeys.encrypt`) and kept as the
//! metadata, decrypted by it (`…:decrypt`) to open. Cloud KMS's REST API
//! as Google documents it; the token from `access_token`, else
//! `GOOGLE_OAUTH_ACCESS_TOKEN`, else the credentials (`credentials`,
//! `GOOGLE_CREDENTIALS`, else Application Default Credentials) through
//! the [`CloudTokens`] the binary gives.

use crate::kms::DataKey;
use crate::CloudTokens;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::{Deserialize, Serialize};

/// `key_provider "gcp_kms" "NAME" { … }` as configured.
#[derive(Debug, Clone, Default)]
pub struct GcpKms {
    /// `projects/P/locations/L/keyRings/R/cryptoKeys/K`.
    pub kms_encryption_key: String,
    /// 1 to 1024 bytes.
    pub key_length: usize,
    pub access_token: Option<String>,
    /// A service account key's JSON, or the path of a file holding it.
    pub credentials: Option<String>,
    /// Bound to the ciphertext by Cloud KMS (AAD): the same must be given
    /// to decrypt.
    pub additional_authenticated_data: Vec<u8>,
}

/// OpenTofu's metadata for it: the encrypted key, base64.
#[derive(Debug, Serialize, Deserialize)]
pub struct Metadata {
    pub ciphertext: String,
}

impl Metadata {
    pub fn of(ciphertext: &[u8]) -> Metadata {
        Metadata {
            ciphertext: STANDARD.encode(ciphertext),
        }
    }

    pub fn ciphertext(&self) -> Result<Vec<u8>, String> {
        STANDARD
            .decode(&self.ciphertext)
            .map_err(|e| format!("its ciphertext is not base64 ({e})"))
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl GcpKms {
    /// Cloud KMS's address: `GOOGLE_KMS_CUSTOM_ENDPOINT` (the Terraform
    /// google provider's variable for it), else Google's.
    fn endpoint() -> String {
        let mut url = env("GOOGLE_KMS_CUSTOM_ENDPOINT")
            .unwrap_or("https://cloudkms.googleapis.com/v1/".into());
        if !url.ends_with('/') {
            url.push('/');
        }
        url
    }

    fn token(&self, tokens: Option<&dyn CloudTokens>) -> Result<String, String> {
        if let Some(t) = self
            .access_token
            .clone()
            .or_else(|| env("GOOGLE_OAUTH_ACCESS_TOKEN"))
        {
            return Ok(t);
        }
        let credentials = match self
            .credentials
            .clone()
            .or_else(|| env("GOOGLE_CREDENTIALS"))
        {
            Some(c) => Some(path_or_contents(&c)?),
            None => None,
        };
        let tokens = tokens.ok_or("this strata was built without GCP (the \"gcp\" feature)")?;
        tokens.google(credentials.as_deref())
    }

    /// A new key, and Cloud KMS's encryption of it.
    pub fn generate(&self, tokens: Option<&dyn CloudTokens>) -> Result<DataKey, String> {
        let mut plaintext = vec![0u8; self.key_length];
        getrandom::getrandom(&mut plaintext).map_err(|e| format!("failed to generate key: {e}"))?;
        let mut body = serde_json::json!({ "plaintext": STANDARD.encode(&plaintext) });
        self.bind(&mut body);
        let answer = self
            .call("encrypt", &body, tokens)
            .map_err(|e| format!("failed to encrypt key: {e}"))?;
        let ciphertext = decoded(&answer, "ciphertext")?;
        Ok(DataKey {
            plaintext,
            ciphertext_blob: ciphertext,
        })
    }

    /// The key `ciphertext` holds.
    pub fn decrypt(
        &self,
        ciphertext: &[u8],
        tokens: Option<&dyn CloudTokens>,
    ) -> Result<Vec<u8>, String> {
        let mut body = serde_json::json!({ "ciphertext": STANDARD.encode(ciphertext) });
        self.bind(&mut body);
        let answer = self
            .call("decrypt", &body, tokens)
            .map_err(|e| format!("failed to decrypt key: {e}"))?;
        decoded(&answer, "plaintext")
    }

    fn bind(&self, body: &mut serde_json::Value) {
        if !self.additional_authenticated_data.is_empty() {
            body["additionalAuthenticatedData"] =
                STANDARD.encode(&self.additional_authenticated_data).into();
        }
    }

    fn call(
        &self,
        op: &str,
        body: &serde_json::Value,
        tokens: Option<&dyn CloudTokens>,
    ) -> Result<serde_json::Value, String> {
        let url = format!("{}{}:{op}", Self::endpoint(), self.kms_encryption_key);
        let auth = format!("Bearer {}", self.token(tokens)?);
        let text = crate::http::post(&url, &[("Authorization", auth)], body)?;
        serde_json::from_str(&text).map_err(|e| format!("{url}: {e}"))
    }
}

/// A setting that is a file's path (`~` expanded) or the contents
/// themselves, as OpenTofu (and the google provider) read `credentials`.
fn path_or_contents(given: &str) -> Result<String, String> {
    let path = match given.strip_prefix('~') {
        Some(rest) => format!("{}{rest}", env("HOME").unwrap_or_default()),
        None => given.to_string(),
    };
    let contents = match std::path::Path::new(&path).is_file() {
        true => {
            std::fs::read_to_string(&path).map_err(|e| format!("Error loading credentials: {e}"))?
        }
        false => given.to_string(),
    };
    match serde_json::from_str::<serde_json::Value>(&contents) {
        Ok(_) => Ok(contents),
        Err(_) => Err(
            "the string provided in credentials is neither valid json nor a valid file path".into(),
        ),
    }
}

fn decoded(answer: &serde_json::Value, field: &str) -> Result<Vec<u8>, String> {
    let text = answer[field]
        .as_str()
        .ok_or_else(|| format!("Cloud KMS's answer has no {field}"))?;
    STANDARD
        .decode(text)
        .map_err(|e| format!("Cloud KMS's {field} is not base64 ({e})"))
}
