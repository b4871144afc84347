//! Encryption at rest of what strata writes — state, its journal and
//! history, saved plans — in OpenTofu's format (`terraform { encryption
//! { … } }`, OpenTofu 1.7+), so a state OpenTofu encrypted opens here and
//! the other way round.
//!
//! A sealed document is JSON: `meta` (each key provider's metadata, as
//! base64 of its JSON, under `key_provider.TYPE.NAME`), `encrypted_data`
//! (base64 of nonce, ciphertext and tag) and `encryption_version` ("v0");
//! a state keeps its `serial` and `lineage` in clear before them so tools
//! can tell states apart without the key. The configuration is evaluated
//! by the engine; this crate takes the result ([`Method`]s in the order
//! they are tried) and never reads HCL.

mod aes_gcm;
mod azure_vault;
mod envelope;
mod external;
mod gcp_kms;
mod http;
mod kms;
mod openbao;
mod pbkdf2;

pub use aes_gcm::key_problem;
pub use azure_vault::{AzureIdentity, AzureVault};
pub use envelope::is_sealed;
pub use external::{ExternalKeys, ExternalMethod};
pub use gcp_kms::GcpKms;
pub use http::blocking;
pub use kms::{AwsKms, DataKey, DataKeys, KeySpec};
pub use openbao::OpenBao;
pub use pbkdf2::{Hash, Metadata, Pbkdf2};

use std::collections::BTreeMap;
use std::sync::Mutex;

/// A key provider as configured.
#[derive(Debug, Clone)]
pub struct KeyProvider {
    /// `key_provider.TYPE.NAME`, the metadata's key.
    pub addr: String,
    pub kind: KeyKind,
}

#[derive(Debug, Clone)]
pub enum KeyKind {
    Pbkdf2(Pbkdf2),
    AwsKms(Box<AwsKms>),
    GcpKms(Box<GcpKms>),
    AzureVault(Box<AzureVault>),
    OpenBao(Box<OpenBao>),
    External(ExternalKeys),
}

/// Bearer tokens for the clouds' key services, from the binary that holds
/// their credential libraries (so they stay out of this crate).
pub trait CloudTokens: Send + Sync + std::fmt::Debug {
    /// A token for Cloud KMS: from `credentials` (a service account key's
    /// JSON), else Application Default Credentials.
    fn google(&self, credentials: Option<&str>) -> Result<String, String>;
    /// A token for Key Vault, as `identity` says to get one.
    fn azure(&self, identity: &AzureIdentity) -> Result<String, String>;
}

impl KeyKind {
    /// The length of the keys it gives; `None` when only running it tells
    /// (an external program's).
    pub fn key_length(&self) -> Option<usize> {
        match self {
            KeyKind::Pbkdf2(p) => Some(p.key_length),
            KeyKind::AwsKms(k) => Some(k.key_spec.bytes()),
            KeyKind::GcpKms(g) => Some(g.key_length),
            KeyKind::AzureVault(v) => Some(v.key_length),
            KeyKind::OpenBao(b) => Some(b.key_length),
            KeyKind::External(_) => None,
        }
    }
}

/// A method of a target's chain.
#[derive(Debug, Clone)]
pub enum Method {
    /// `method "aes_gcm" "NAME" { keys = key_provider.T.N, aad = […] }`.
    AesGcm {
        addr: String,
        keys: KeyProvider,
        aad: Vec<u8>,
    },
    /// `method "external" "NAME" { encrypt_command, decrypt_command,
    /// keys }`: programs seal and open, given the key when there are keys.
    External {
        addr: String,
        keys: Option<KeyProvider>,
        run: ExternalMethod,
    },
    /// `method "unencrypted" "NAME" {}`: plain text written, or accepted.
    Unencrypted { addr: String },
}

impl Method {
    /// The key provider whose key it uses, if any.
    fn keys(&self) -> Option<&KeyProvider> {
        match self {
            Method::AesGcm { keys, .. } => Some(keys),
            Method::External { keys, .. } => keys.as_ref(),
            Method::Unencrypted { .. } => None,
        }
    }

    fn seals(&self) -> bool {
        !matches!(self, Method::Unencrypted { .. })
    }

    /// `data` sealed with `key`.
    fn seal(&self, key: &[u8], data: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            Method::AesGcm { aad, .. } => aes_gcm::seal(key, aad, data),
            Method::External { keys, run, .. } => run.encrypt(keys.as_ref().map(|_| key), data),
            Method::Unencrypted { .. } => Ok(data.to_vec()),
        }
    }

    /// `data` opened with `key`.
    fn open(&self, key: &[u8], data: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            Method::AesGcm { aad, .. } => aes_gcm::open(key, aad, data),
            Method::External { keys, run, .. } => run.decrypt(keys.as_ref().map(|_| key), data),
            Method::Unencrypted { .. } => Ok(data.to_vec()),
        }
    }
}

/// What is sealed: a state keeps its serial and lineage in clear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    State,
    Plan,
}

impl Payload {
    /// OpenTofu's name for it in its errors.
    fn name(self) -> &'static str {
        match self {
            Payload::State => "statefile",
            Payload::Plan => "planfile",
        }
    }
}

/// How a document was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// By the first method: written that way again.
    Current,
    /// By a fallback (a key being rotated out, or plain text being moved
    /// to encryption): the next write uses the first method.
    Migrating,
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum EncryptionError {
    #[error("The {what} is not encrypted, and its encryption configuration has no \"unencrypted\" method to accept it")]
    #[diagnostic(
        code(strata::encryption::plain),
        help("To encrypt an existing state, add `method \"unencrypted\" \"migrate\" {{}}` and name it in a `fallback` block of the target for one run.")
    )]
    Plain { what: &'static str },
    #[error("The {what} is encrypted as {found:?}, a format this strata does not read (it reads \"v0\")")]
    #[diagnostic(code(strata::encryption::version))]
    Version { what: &'static str, found: String },
    #[error("The {what} could not be decrypted by any configured method:\n{attempts}")]
    #[diagnostic(
        code(strata::encryption::failed),
        help("Check the passphrase or key; when rotating keys, keep the old method in a `fallback` block until everything was written again.")
    )]
    Failed {
        what: &'static str,
        attempts: String,
    },
    #[error("The {what} is damaged: {detail}")]
    #[diagnostic(code(strata::encryption::damaged))]
    Damaged { what: &'static str, detail: String },
    #[error("The {what} could not be encrypted: {detail}")]
    #[diagnostic(code(strata::encryption::seal))]
    Seal { what: &'static str, detail: String },
}

/// What encrypts the writes of one kind of document and opens its reads,
/// for one command: the encryption key is derived once (a PBKDF2 of
/// 600 000 rounds takes a noticeable fraction of a second) and used with a
/// fresh nonce each time, as OpenTofu does; the keys that open documents
/// are kept by their metadata, so a journal of many lines costs one
/// derivation.
#[derive(Debug)]
pub struct Sealing {
    payload: Payload,
    /// The first seals; the rest only open.
    methods: Vec<Method>,
    sealer: Mutex<Option<Sealer>>,
    opened: Mutex<BTreeMap<(String, String), Vec<u8>>>,
    /// KMS, for `aws_kms` key providers.
    data_keys: Option<std::sync::Arc<dyn DataKeys>>,
    /// Tokens for `gcp_kms` and `azure_vault` key providers.
    cloud_tokens: Option<std::sync::Arc<dyn CloudTokens>>,
}

/// The first method's key and the metadata written beside what it seals.
#[derive(Debug, Clone)]
struct Sealer {
    key: Vec<u8>,
    meta: BTreeMap<String, String>,
}

impl Sealing {
    /// `methods` in the order they are tried: the target's method, then
    /// its fallbacks. None: nothing is sealed and plain text is read.
    pub fn new(payload: Payload, methods: Vec<Method>) -> Sealing {
        Sealing {
            payload,
            methods,
            sealer: Mutex::new(None),
            opened: Mutex::new(BTreeMap::new()),
            data_keys: None,
            cloud_tokens: None,
        }
    }

    /// With `tokens` for the calls of `gcp_kms` and `azure_vault` key
    /// providers.
    pub fn with_cloud_tokens(mut self, tokens: std::sync::Arc<dyn CloudTokens>) -> Sealing {
        self.cloud_tokens = Some(tokens);
        self
    }

    /// With `keys` making the KMS calls of `aws_kms` key providers.
    pub fn with_data_keys(mut self, keys: std::sync::Arc<dyn DataKeys>) -> Sealing {
        self.data_keys = Some(keys);
        self
    }

    fn what(&self) -> &'static str {
        match self.payload {
            Payload::State => "state",
            Payload::Plan => "saved plan",
        }
    }

    /// Whether writes are sealed (the first method is not `unencrypted`).
    pub fn seals(&self) -> bool {
        self.methods.first().is_some_and(Method::seals)
    }

    /// Whether a plain document is accepted.
    pub fn accepts_plain(&self) -> bool {
        self.methods.is_empty()
            || self
                .methods
                .iter()
                .any(|m| matches!(m, Method::Unencrypted { .. }))
    }

    /// `text` as it is to be written.
    pub fn seal(&self, text: &str) -> Result<String, EncryptionError> {
        let Some(method) = self.methods.first().filter(|m| m.seals()) else {
            return Ok(text.to_string());
        };
        let sealer = self.sealer()?;
        let data = method
            .seal(&sealer.key, text.as_bytes())
            .map_err(|detail| self.seal_failed(detail))?;
        let clear = match self.payload {
            Payload::State => envelope::Clear::of_state(text),
            Payload::Plan => envelope::Clear::default(),
        };
        Ok(envelope::write(&clear, &sealer.meta, &data))
    }

    /// `text` as read: opened when sealed, passed on when plain and plain
    /// is accepted.
    pub fn open(&self, text: &str) -> Result<(String, Status), EncryptionError> {
        let Some(sealed) = envelope::read(text) else {
            return self.plain(text);
        };
        let sealed = sealed.map_err(|detail| EncryptionError::Damaged {
            what: self.what(),
            detail,
        })?;
        if sealed.version != envelope::VERSION {
            return Err(EncryptionError::Version {
                what: self.what(),
                found: sealed.version,
            });
        }
        let mut attempts = Vec::new();
        for (i, method) in self.methods.iter().enumerate() {
            let (Method::AesGcm { addr, .. } | Method::External { addr, .. }) = method else {
                continue;
            };
            let key = match method.keys() {
                Some(keys) => self.key_for(keys, &sealed.meta),
                None => Ok(Vec::new()),
            };
            let opened = key.and_then(|key| method.open(&key, &sealed.data));
            match opened {
                Ok(bytes) => {
                    let text = String::from_utf8(bytes).map_err(|_| EncryptionError::Damaged {
                        what: self.what(),
                        detail: "what it holds is not text".into(),
                    })?;
                    self.same_clear(&sealed.clear, &text)?;
                    let status = if i == 0 {
                        Status::Current
                    } else {
                        Status::Migrating
                    };
                    return Ok((text, status));
                }
                Err(e) => attempts.push(format!(
                    "  {addr}: attempted decryption failed for {}: {e}",
                    self.payload.name()
                )),
            }
        }
        if attempts.is_empty() {
            attempts.push("  no method that decrypts is configured".into());
        }
        Err(EncryptionError::Failed {
            what: self.what(),
            attempts: attempts.join("\n"),
        })
    }

    fn plain(&self, text: &str) -> Result<(String, Status), EncryptionError> {
        if !self.accepts_plain() {
            return Err(EncryptionError::Plain { what: self.what() });
        }
        let status = match self.seals() {
            true => Status::Migrating,
            false => Status::Current,
        };
        Ok((text.to_string(), status))
    }

    /// A state's clear serial and lineage must be the ones inside, or a
    /// file was spliced from two.
    fn same_clear(&self, clear: &envelope::Clear, text: &str) -> Result<(), EncryptionError> {
        if self.payload != Payload::State {
            return Ok(());
        }
        let inside = envelope::Clear::of_state(text);
        if differ(&clear.serial, &inside.serial) || differ(&clear.lineage, &inside.lineage) {
            return Err(EncryptionError::Damaged {
                what: self.what(),
                detail: "its serial or lineage in clear is not the one it holds".into(),
            });
        }
        Ok(())
    }

    fn sealer(&self) -> Result<Sealer, EncryptionError> {
        let mut held = self.sealer.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = held.as_ref() {
            return Ok(s.clone());
        }
        let Some(method) = self.methods.first().filter(|m| m.seals()) else {
            return Err(self.seal_failed("no method encrypts".into()));
        };
        // An external method without keys seals with none.
        let Some(keys) = method.keys() else {
            let sealer = Sealer {
                key: Vec::new(),
                meta: BTreeMap::new(),
            };
            *held = Some(sealer.clone());
            return Ok(sealer);
        };
        let mut meta = BTreeMap::new();
        let key = self
            .fresh_key(keys, &mut meta)
            .map_err(|e| self.seal_failed(e))?;
        // What this run writes it may read back (a journal replayed).
        if let Some(json) = meta.get(&keys.addr) {
            self.opened
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert((keys.addr.clone(), json.clone()), key.clone());
        }
        let sealer = Sealer { key, meta };
        *held = Some(sealer.clone());
        Ok(sealer)
    }

    /// A new key from `keys`, the metadata that gets it back recorded
    /// in `metas` (a chained provider's beside it).
    fn fresh_key(
        &self,
        keys: &KeyProvider,
        metas: &mut BTreeMap<String, String>,
    ) -> Result<Vec<u8>, String> {
        let (key, meta) = match &keys.kind {
            KeyKind::Pbkdf2(p) => {
                let meta = p.fresh().map_err(|e| format!("no random salt: {e}"))?;
                let key = match &p.chain {
                    Some(upstream) => {
                        let pass = self.fresh_key(upstream, metas)?;
                        pbkdf2::chained_passphrase(&pass, "encryption")?;
                        pbkdf2::derive(&pass, &meta)?
                    }
                    None => p.derive(&meta)?,
                };
                (key, serde_json::to_string(&meta))
            }
            KeyKind::AwsKms(k) => {
                let made = self.kms()?.generate(k)?;
                let meta = kms::Metadata::of(&made.ciphertext_blob);
                (made.plaintext, serde_json::to_string(&meta))
            }
            KeyKind::GcpKms(g) => {
                let made = g.generate(self.cloud_tokens.as_deref())?;
                let meta = gcp_kms::Metadata::of(&made.ciphertext_blob);
                (made.plaintext, serde_json::to_string(&meta))
            }
            KeyKind::AzureVault(v) => {
                let (key, meta) = v.generate(self.cloud_tokens.as_deref())?;
                (key, serde_json::to_string(&meta))
            }
            KeyKind::OpenBao(b) => {
                let made = b.generate()?;
                let meta = openbao::Metadata::of(&made.ciphertext_blob);
                (made.plaintext, serde_json::to_string(&meta))
            }
            KeyKind::External(e) => {
                let (key, meta) = e.fresh()?;
                (key, serde_json::to_string(&meta))
            }
        };
        metas.insert(keys.addr.clone(), meta.map_err(|e| e.to_string())?);
        Ok(key)
    }

    /// The key `keys` gives back for the metadata `json` (`all`: the
    /// document's whole metadata, for a chained provider's).
    fn derived_key(
        &self,
        keys: &KeyProvider,
        json: &str,
        all: &BTreeMap<String, String>,
    ) -> Result<Vec<u8>, String> {
        let unreadable =
            |e: serde_json::Error| format!("its metadata for {} does not read: {e}", keys.addr);
        match &keys.kind {
            KeyKind::Pbkdf2(p) => {
                let meta = serde_json::from_str(json).map_err(unreadable)?;
                match &p.chain {
                    Some(upstream) => {
                        let pass = self.key_for(upstream, all)?;
                        pbkdf2::chained_passphrase(&pass, "decryption")?;
                        pbkdf2::derive(&pass, &meta)
                    }
                    None => p.derive(&meta),
                }
            }
            KeyKind::AwsKms(k) => {
                let meta: kms::Metadata = serde_json::from_str(json).map_err(unreadable)?;
                self.kms()?.decrypt(k, &meta.blob()?)
            }
            KeyKind::GcpKms(g) => {
                let meta: gcp_kms::Metadata = serde_json::from_str(json).map_err(unreadable)?;
                g.decrypt(&meta.ciphertext()?, self.cloud_tokens.as_deref())
            }
            KeyKind::AzureVault(v) => {
                let meta: azure_vault::Metadata = serde_json::from_str(json).map_err(unreadable)?;
                v.decrypt(&meta, self.cloud_tokens.as_deref())
            }
            KeyKind::OpenBao(b) => {
                let meta: openbao::Metadata = serde_json::from_str(json).map_err(unreadable)?;
                b.decrypt(&meta.wrapped()?)
            }
            KeyKind::External(e) => e.recover(&serde_json::from_str(json).map_err(unreadable)?),
        }
    }

    fn kms(&self) -> Result<&dyn DataKeys, String> {
        self.data_keys.as_deref().ok_or_else(|| {
            "this strata was built without AWS KMS (the \"remote-state\" feature)".to_string()
        })
    }

    fn seal_failed(&self, detail: String) -> EncryptionError {
        EncryptionError::Seal {
            what: self.what(),
            detail,
        }
    }

    /// The key `keys` gives for the metadata a document was sealed with.
    fn key_for(
        &self,
        keys: &KeyProvider,
        meta: &BTreeMap<String, String>,
    ) -> Result<Vec<u8>, String> {
        let Some(json) = meta.get(&keys.addr) else {
            return Err(format!(
                "it was not sealed with a key from {} (no metadata for it)",
                keys.addr
            ));
        };
        let cache = (keys.addr.clone(), json.clone());
        if let Some(key) = self
            .opened
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&cache)
        {
            return Ok(key.clone());
        }
        let key = self.derived_key(keys, json, meta)?;
        self.opened
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(cache, key.clone());
        Ok(key)
    }
}

/// Two values that are both there and differ.
fn differ<T: PartialEq>(a: &Option<T>, b: &Option<T>) -> bool {
    matches!((a, b), (Some(x), Some(y)) if x != y)
}

#[cfg(test)]
mod tests;
