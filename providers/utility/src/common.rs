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

/// The most bytes, characters or items strata generates for one value:
/// far past any real use, and short of what would exhaust memory (an
/// abort, where a bad argument must be an error).
pub(crate) const MOST: i64 = 1 << 20;

/// A configured count over [`MOST`], at its attribute.
pub(crate) fn too_many(config: &Value, name: &str) -> Option<Problem> {
    let n = number(config, name)?;
    (n > MOST).then(|| {
        invalid(
            name,
            format!("Attribute {name} value must be at most {MOST}, got: {n}"),
        )
    })
}

/// A planned count, refused over [`MOST`].
pub(crate) fn count(
    type_name: &str,
    planned: &Value,
    name: &str,
    default: usize,
) -> Result<usize, DriverError> {
    match number(planned, name) {
        None => Ok(default),
        Some(n) if n > MOST => Err(failed(
            type_name,
            "create",
            format!("{name} = {n} is more than strata makes ({MOST})"),
        )),
        Some(n) => Ok(n.max(0) as usize),
    }
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

/// Which of `names` the configuration sets (null counts as unset).
pub(crate) fn configured<'n>(config: &Value, names: &[&'n str]) -> Vec<&'n str> {
    let set = |n: &&str| get(config, n).is_some_and(|v| !v.is_null());
    names.iter().copied().filter(set).collect()
}

/// Terraform's `AtLeastOneOf`: a problem with the whole block when none
/// of `names` is set.
pub(crate) fn at_least_one_of(config: &Value, names: &[&str]) -> Option<Problem> {
    configured(config, names).is_empty().then(|| Problem {
        path: Vec::new(),
        ..invalid(
            "",
            format!(
                "At least one of these attributes must be configured: [{}]",
                names.join(",")
            ),
        )
    })
}

/// Terraform's `ExactlyOneOf`: unless exactly one of `names` is set, a
/// problem at the second one set, or at `at` when none is.
pub(crate) fn exactly_one_of(config: &Value, names: &[&str], at: &str) -> Option<Problem> {
    let set = configured(config, names);
    (set.len() != 1).then(|| Problem {
        summary: "Invalid Attribute Combination".to_string(),
        ..invalid(
            set.get(1).copied().unwrap_or(at),
            format!(
                "Exactly one of these attributes must be configured: [{}]",
                names.join(",")
            ),
        )
    })
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
