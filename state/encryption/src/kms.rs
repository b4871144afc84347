//! The `aws_kms` key provider: a data key from AWS KMS for each run that
//! writes (`GenerateDataKey`), its encrypted form kept beside the
//! ciphertext as the metadata, and given back to KMS to open
//! (`Decrypt`). This crate holds the settings and the metadata; the calls
//! are a [`DataKeys`] the binary gives it, so the SDK stays out of here.

use base64::Engine;
use serde::{Deserialize, Serialize};

/// The data key's size (`key_spec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySpec {
    Aes256,
    Aes128,
}

impl KeySpec {
    pub fn from_name(name: &str) -> Option<KeySpec> {
        match name {
            "AES_256" => Some(KeySpec::Aes256),
            "AES_128" => Some(KeySpec::Aes128),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            KeySpec::Aes256 => "AES_256",
            KeySpec::Aes128 => "AES_128",
        }
    }

    /// The key's length in bytes.
    pub fn bytes(self) -> usize {
        match self {
            KeySpec::Aes256 => 32,
            KeySpec::Aes128 => 16,
        }
    }
}

/// `key_provider "aws_kms" "NAME" { … }` as configured.
#[derive(Debug, Clone)]
pub struct AwsKms {
    pub kms_key_id: String,
    pub key_spec: KeySpec,
    pub region: Option<String>,
    /// `endpoints { kms = "…" }`; else the SDK's (`AWS_ENDPOINT_URL_KMS`,
    /// `AWS_ENDPOINT_URL`, or AWS's).
    pub endpoint: Option<String>,
    pub profile: Option<String>,
    pub access_key: Option<String>,
    pub secret_key: Option<String>,
    pub token: Option<String>,
}

/// A data key: what seals, and how KMS keeps it.
pub struct DataKey {
    pub plaintext: Vec<u8>,
    pub ciphertext_blob: Vec<u8>,
}

/// The KMS calls, made by whoever holds a client.
pub trait DataKeys: Send + Sync + std::fmt::Debug {
    /// A new data key (`GenerateDataKey`).
    fn generate(&self, kms: &AwsKms) -> Result<DataKey, String>;
    /// The data key `blob` holds (`Decrypt`).
    fn decrypt(&self, kms: &AwsKms, blob: &[u8]) -> Result<Vec<u8>, String>;
}

/// OpenTofu's metadata for it: the encrypted data key, base64.
#[derive(Debug, Serialize, Deserialize)]
pub struct Metadata {
    pub ciphertext_blob: String,
}

impl Metadata {
    pub fn of(blob: &[u8]) -> Metadata {
        Metadata {
            ciphertext_blob: base64::engine::general_purpose::STANDARD.encode(blob),
        }
    }

    pub fn blob(&self) -> Result<Vec<u8>, String> {
        base64::engine::general_purpose::STANDARD
            .decode(&self.ciphertext_blob)
            .map_err(|e| format!("its ciphertext_blob is not base64 ({e})"))
    }
}
