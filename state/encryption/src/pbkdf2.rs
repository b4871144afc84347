//! The `pbkdf2` key provider: a key derived from a passphrase, with the
//! salt and the derivation's settings kept beside the ciphertext (its
//! metadata) so a later run derives the same key to open it.

use base64::Engine;
use serde::{Deserialize, Serialize};

/// The hash PBKDF2's HMAC is built on (`hash_function`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    Sha256,
    Sha512,
}

impl Hash {
    pub fn from_name(name: &str) -> Option<Hash> {
        match name {
            "sha256" => Some(Hash::Sha256),
            "sha512" => Some(Hash::Sha512),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Hash::Sha256 => "sha256",
            Hash::Sha512 => "sha512",
        }
    }
}

/// OpenTofu's floor for `iterations`: fewer is refused as dangerously low.
pub const MINIMUM_ITERATIONS: u32 = 200_000;
/// OpenTofu's floor for the passphrase's length, in bytes.
pub const MINIMUM_PASSPHRASE: usize = 16;

/// `key_provider "pbkdf2" "NAME" { … }` as configured, OpenTofu's
/// defaults where an attribute is left out.
#[derive(Clone)]
pub struct Pbkdf2 {
    pub passphrase: String,
    /// `chain = key_provider.TYPE.NAME` (OpenTofu 1.10): the passphrase is
    /// that key provider's key instead.
    pub chain: Option<Box<crate::KeyProvider>>,
    pub key_length: usize,
    pub iterations: u32,
    pub hash: Hash,
    pub salt_length: usize,
}

impl std::fmt::Debug for Pbkdf2 {
    // The passphrase is the secret everything rests on: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pbkdf2")
            .field("key_length", &self.key_length)
            .field("iterations", &self.iterations)
            .field("hash", &self.hash)
            .field("salt_length", &self.salt_length)
            .finish_non_exhaustive()
    }
}

impl Pbkdf2 {
    /// OpenTofu's defaults: a 32-byte key (AES-256) from 600 000
    /// iterations of HMAC-SHA-512 over a 32-byte salt.
    pub fn new(passphrase: String) -> Pbkdf2 {
        Pbkdf2 {
            passphrase,
            chain: None,
            key_length: 32,
            iterations: 600_000,
            hash: Hash::Sha512,
            salt_length: 32,
        }
    }

    /// Why this configuration cannot make a key, in OpenTofu's words.
    pub fn problem(&self) -> Option<String> {
        match (&self.chain, self.passphrase.is_empty()) {
            (Some(_), false) => return Some("passphrase and chain are mutually exclusive".into()),
            (None, true) => {
                return Some("no passphrase provided and no chained provider defined".into())
            }
            _ => {}
        }
        if self.chain.is_none() && self.passphrase.len() < MINIMUM_PASSPHRASE {
            return Some(format!(
                "passphrase is too short (minimum {MINIMUM_PASSPHRASE} characters)"
            ));
        }
        if self.key_length == 0 {
            return Some("the key length must be larger than zero".into());
        }
        if self.iterations == 0 {
            return Some("the number of iterations must be larger than zero".into());
        }
        if self.iterations < MINIMUM_ITERATIONS {
            return Some(format!("the number of iterations is dangerously low (<{MINIMUM_ITERATIONS}), refusing to generate key"));
        }
        if self.salt_length == 0 {
            return Some("the salt length must be larger than zero".into());
        }
        None
    }

    /// A fresh salt and the settings it is used with.
    pub fn fresh(&self) -> Result<Metadata, getrandom::Error> {
        let mut salt = vec![0u8; self.salt_length];
        getrandom::getrandom(&mut salt)?;
        Ok(Metadata {
            salt,
            iterations: self.iterations,
            hash_function: self.hash.name().to_string(),
            key_length: self.key_length,
        })
    }

    /// The key `meta` says to derive from this passphrase.
    pub fn derive(&self, meta: &Metadata) -> Result<Vec<u8>, String> {
        derive(self.passphrase.as_bytes(), meta)
    }
}

/// A chained provider's key is a passphrase here, held to the same floor
/// (OpenTofu: "upstream key provider supplied an encryption key that is
/// too short").
pub fn chained_passphrase(pass: &[u8], which: &str) -> Result<(), String> {
    match pass.len() < MINIMUM_PASSPHRASE {
        true => Err(format!("upstream key provider supplied an {which} key that is too short (minimum {MINIMUM_PASSPHRASE} characters)")),
        false => Ok(()),
    }
}

/// The key `meta` says to derive from `pass`: the configured passphrase,
/// or the key of the provider chained before it.
pub fn derive(pass: &[u8], meta: &Metadata) -> Result<Vec<u8>, String> {
    {
        let hash = Hash::from_name(&meta.hash_function)
            .ok_or_else(|| format!("invalid hash function name: {}", meta.hash_function))?;
        // A hostile file must not make us allocate or loop without bound.
        if meta.key_length == 0 || meta.key_length > 1024 {
            return Err(format!("invalid key length ({})", meta.key_length));
        }
        if meta.iterations == 0 || meta.iterations > 100_000_000 {
            return Err(format!(
                "invalid number of iterations ({})",
                meta.iterations
            ));
        }
        let mut key = vec![0u8; meta.key_length];
        match hash {
            Hash::Sha256 => {
                pbkdf2::pbkdf2_hmac::<sha2::Sha256>(pass, &meta.salt, meta.iterations, &mut key)
            }
            Hash::Sha512 => {
                pbkdf2::pbkdf2_hmac::<sha2::Sha512>(pass, &meta.salt, meta.iterations, &mut key)
            }
        }
        Ok(key)
    }
}

/// What is stored beside the ciphertext: OpenTofu's JSON for it, the salt
/// as standard base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    #[serde(with = "b64")]
    pub salt: Vec<u8>,
    pub iterations: u32,
    pub hash_function: String,
    pub key_length: usize,
}

mod b64 {
    use super::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivation_matches_the_published_vectors() {
        // RFC 7914 §11's PBKDF2-HMAC-SHA256 vector ("passwd", "salt", 1).
        let p = Pbkdf2::new("passwd".into());
        let meta = Metadata {
            salt: b"salt".to_vec(),
            iterations: 1,
            hash_function: "sha256".into(),
            key_length: 16,
        };
        let key = p.derive(&meta).unwrap();
        assert_eq!(
            key,
            [
                0x55, 0xac, 0x04, 0x6e, 0x56, 0xe3, 0x08, 0x9f, 0xec, 0x16, 0x91, 0xc2, 0x25, 0x44,
                0xb6, 0x05
            ]
        );
    }

    #[test]
    fn weak_settings_are_refused_in_opentofus_words() {
        let short = Pbkdf2::new("too short".into());
        assert_eq!(
            short.problem().unwrap(),
            "passphrase is too short (minimum 16 characters)"
        );
        let mut few = Pbkdf2::new("a long enough passphrase".into());
        few.iterations = 1000;
        assert!(few.problem().unwrap().contains("dangerously low"));
        assert!(Pbkdf2::new("a long enough passphrase".into())
            .problem()
            .is_none());
    }

    #[test]
    fn metadata_reads_as_opentofu_writes_it() {
        let text =
            r#"{"salt":"c2FsdA==","iterations":600000,"hash_function":"sha512","key_length":32}"#;
        let meta: Metadata = serde_json::from_str(text).unwrap();
        assert_eq!(meta.salt, b"salt");
        assert_eq!(serde_json::to_string(&meta).unwrap(), text);
        let hostile = Metadata {
            iterations: u32::MAX,
            ..meta
        };
        assert!(Pbkdf2::new("x".repeat(20)).derive(&hostile).is_err());
    }
}
