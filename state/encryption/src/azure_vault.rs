//! The `azure_vault` key provider (OpenTofu's): a random key of
//! `key_length` bytes for each run that writes, encrypted by a Key Vault
//! key (`POST {vault}/keys/{name}/encrypt`, RSA-OAEP-256, or AES-GCM on a
//! Managed HSM) and kept with the key's version as the metadata, decrypted
//! by that version to open. Key Vault's REST API (7.4) as Microsoft
//! documents it; the token, for Key Vault's scope, through the
//! [`CloudTokens`] the binary gives.

use crate::CloudTokens;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde::{Deserialize, Serialize};

const API_VERSION: &str = "7.4";

/// Who asks Key Vault: the block's settings, else `ARM_*` variables.
#[derive(Debug, Clone, Default)]
pub struct AzureIdentity {
    pub tenant_id: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// A federated token (`oidc_token_file_path`, workload identity).
    pub token_file: Option<String>,
    /// The Azure CLI's signed-in account (`use_cli`, true unless set).
    pub use_cli: bool,
}

/// `key_provider "azure_vault" "NAME" { … }` as configured.
#[derive(Debug, Clone, Default)]
pub struct AzureVault {
    /// `https://NAME.vault.azure.net`.
    pub vault_uri: String,
    pub vault_key_name: String,
    pub key_length: usize,
    /// `RSA-OAEP-256`, or `A128GCM`/`A192GCM`/`A256GCM` when `symmetric`.
    pub algorithm: String,
    pub identity: AzureIdentity,
}

/// OpenTofu's metadata for it (Go's JSON: bytes as standard base64, none
/// as null).
#[derive(Debug, Serialize, Deserialize)]
pub struct Metadata {
    pub ciphertext: Option<String>,
    pub iv: Option<String>,
    pub authentication_tag: Option<String>,
    pub additional_authenticated_data: Option<String>,
    pub key_version: String,
    pub algo: String,
}

fn env(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
}

/// Key Vault's base64url field `name` of `answer`, in Go's JSON form.
fn carried(answer: &serde_json::Value, name: &str) -> Result<Option<String>, String> {
    match answer[name].as_str() {
        None => Ok(None),
        Some(text) => {
            let bytes = URL_SAFE_NO_PAD
                .decode(text.trim_end_matches('='))
                .map_err(|e| format!("Key Vault's {name} is not base64url ({e})"))?;
            Ok(Some(STANDARD.encode(bytes)))
        }
    }
}

/// A metadata field back in Key Vault's base64url, when there is one.
fn sent(field: &Option<String>) -> Result<Option<String>, String> {
    field
        .as_deref()
        .map(|t| STANDARD.decode(t).map(|b| URL_SAFE_NO_PAD.encode(b)))
        .transpose()
        .map_err(|e| format!("its metadata is not base64 ({e})"))
}

impl AzureVault {
    /// The identity, each setting not given taken from the environment as
    /// the azurerm backend takes it.
    fn identity(&self) -> AzureIdentity {
        let id = &self.identity;
        AzureIdentity {
            tenant_id: id.tenant_id.clone().or_else(|| env(&["ARM_TENANT_ID"])),
            client_id: id.client_id.clone().or_else(|| env(&["ARM_CLIENT_ID"])),
            client_secret: id
                .client_secret
                .clone()
                .or_else(|| env(&["ARM_CLIENT_SECRET"])),
            token_file: id
                .token_file
                .clone()
                .or_else(|| env(&["ARM_OIDC_TOKEN_FILE_PATH"])),
            use_cli: id.use_cli,
        }
    }

    /// A new key, and Key Vault's encryption of it.
    pub fn generate(
        &self,
        tokens: Option<&dyn CloudTokens>,
    ) -> Result<(Vec<u8>, Metadata), String> {
        let mut plaintext = vec![0u8; self.key_length];
        getrandom::getrandom(&mut plaintext).map_err(|e| format!("failed to generate key: {e}"))?;
        let body = serde_json::json!({
            "alg": self.algorithm,
            "value": URL_SAFE_NO_PAD.encode(&plaintext),
        });
        let answer = self
            .call("encrypt", "", &body, tokens)
            .map_err(|e| format!("failed to encrypt key: {e}"))?;
        let kid = answer["kid"].as_str().unwrap_or_default();
        let meta = Metadata {
            ciphertext: carried(&answer, "value")?,
            iv: carried(&answer, "iv")?,
            authentication_tag: carried(&answer, "tag")?,
            additional_authenticated_data: carried(&answer, "aad")?,
            key_version: kid.rsplit('/').next().unwrap_or_default().to_string(),
            algo: self.algorithm.clone(),
        };
        Ok((plaintext, meta))
    }

    /// The key `meta` holds, decrypted by the key version that made it.
    pub fn decrypt(
        &self,
        meta: &Metadata,
        tokens: Option<&dyn CloudTokens>,
    ) -> Result<Vec<u8>, String> {
        let algo = match meta.algo.as_str() {
            "" => self.algorithm.as_str(),
            given => given,
        };
        let mut body = serde_json::json!({ "alg": algo, "value": sent(&meta.ciphertext)? });
        for (field, value) in [
            ("iv", &meta.iv),
            ("tag", &meta.authentication_tag),
            ("aad", &meta.additional_authenticated_data),
        ] {
            if let Some(v) = sent(value)? {
                body[field] = v.into();
            }
        }
        let answer = self
            .call("decrypt", &meta.key_version, &body, tokens)
            .map_err(|e| format!("failed to decrypt key: {e}"))?;
        let value = answer["value"]
            .as_str()
            .ok_or("Key Vault's answer has no value")?;
        URL_SAFE_NO_PAD
            .decode(value.trim_end_matches('='))
            .map_err(|e| format!("Key Vault's value is not base64url ({e})"))
    }

    fn call(
        &self,
        op: &str,
        version: &str,
        body: &serde_json::Value,
        tokens: Option<&dyn CloudTokens>,
    ) -> Result<serde_json::Value, String> {
        let key = match version {
            "" => self.vault_key_name.clone(),
            v => format!("{}/{v}", self.vault_key_name),
        };
        let url = format!(
            "{}/keys/{key}/{op}?api-version={API_VERSION}",
            self.vault_uri.trim_end_matches('/')
        );
        let tokens =
            tokens.ok_or("this strata was built without Azure (the \"drivers\" feature)")?;
        let auth = format!("Bearer {}", tokens.azure(&self.identity())?);
        let text = crate::http::post(&url, &[("Authorization", auth)], body)?;
        serde_json::from_str(&text).map_err(|e| format!("{url}: {e}"))
    }
}
