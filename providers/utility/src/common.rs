//! What the utility types share: reading and writing attributes of an
//! object, the `keepers`/`triggers` attribute, randomness, and errors in
//! the providers' words.

use rand::RngCore;
use strata_provider::{AttributeSchema, DriverError, PathStep, Problem};
use strata_value::types::Type;
use strata_value::value::{Attrs, Value};

pub(crate) use strata_provider::values::{boolean, get, number, string};

/// `object` with the given attributes replaced.
pub(crate) fn with<K: Into<String>>(
    object: &Value,
    pairs: impl IntoIterator<Item = (K, Value)>,
) -> Value {
    let mut attrs = object
        .unmarked()
        .entries()
        .cloned()
        .unwrap_or_else(Attrs::new);
    for (name, value) in pairs {
        attrs.insert(name.into(), value);
    }
    Value::Object(attrs)
}

/// A map of strings whose change replaces the object (`keepers`,
/// `triggers`).
pub(crate) fn replacing_map(description: &'static str) -> AttributeSchema {
    AttributeSchema::optional(Type::map(Type::String), description).force_new()
}

/// A computed string the provider keeps once set.
pub(crate) fn computed_string(description: &'static str) -> AttributeSchema {
    AttributeSchema::computed(Type::String, description)
}

/// `n` bytes from the operating system's generator.
pub(crate) fn random_bytes(type_name: &str, n: usize) -> Result<Vec<u8>, DriverError> {
    let mut out = vec![0u8; n];
    rand::rngs::OsRng
        .try_fill_bytes(&mut out)
        .map_err(|e| failed(type_name, "create", format!("no randomness available: {e}")))?;
    Ok(out)
}

/// A failure the provider reports for one of its calls.
pub(crate) fn failed(type_name: &str, operation: &str, detail: String) -> DriverError {
    DriverError::Api {
        operation: format!("{type_name} {operation}"),
        detail,
        retryable: false,
    }
}

/// A configured value the provider refuses, at its attribute.
pub(crate) fn invalid(attribute: &str, detail: String) -> Problem {
    Problem {
        error: true,
        summary: "Invalid Attribute Value".to_string(),
        detail,
        path: vec![PathStep::Attribute(attribute.to_string())],
    }
}

/// An import id the provider cannot read.
pub(crate) fn bad_import(type_name: &str, detail: String) -> DriverError {
    DriverError::InvalidConfig {
        type_name: type_name.to_string(),
        detail,
    }
}

/// Lower-case hexadecimal.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The checksums the `local` and `archive` providers store of a file.
pub(crate) struct Digests {
    pub md5: String,
    pub sha1: String,
    pub sha256: String,
    pub base64sha256: String,
    pub sha512: String,
    pub base64sha512: String,
}

impl Digests {
    pub(crate) fn of(bytes: &[u8]) -> Digests {
        use base64::engine::general_purpose::STANDARD;
        use base64::Engine;
        use sha2::Digest;
        let sha256 = sha2::Sha256::digest(bytes);
        let sha512 = sha2::Sha512::digest(bytes);
        Digests {
            md5: hex(&md5::Md5::digest(bytes)),
            sha1: hex(&sha1::Sha1::digest(bytes)),
            sha256: hex(&sha256),
            base64sha256: STANDARD.encode(sha256),
            sha512: hex(&sha512),
            base64sha512: STANDARD.encode(sha512),
        }
    }

    /// The attributes under `prefix` (`content_`, `output_`); the SHA-1
    /// also as `id`.
    pub(crate) fn attributes(self, prefix: &str, sha1: &str) -> Vec<(String, Value)> {
        vec![
            ("id".to_string(), Value::string(self.sha1.clone())),
            (format!("{prefix}md5"), Value::string(self.md5)),
            (format!("{prefix}{sha1}"), Value::string(self.sha1)),
            (format!("{prefix}sha256"), Value::string(self.sha256)),
            (
                format!("{prefix}base64sha256"),
                Value::string(self.base64sha256),
            ),
            (format!("{prefix}sha512"), Value::string(self.sha512)),
            (
                format!("{prefix}base64sha512"),
                Value::string(self.base64sha512),
            ),
        ]
    }
}
