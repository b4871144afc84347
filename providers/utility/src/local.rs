//! The `local` provider (hashicorp/local): files on the machine that runs
//! strata. A file changed or removed outside strata is gone from its
//! point of view (the provider reads it back by its SHA-1), so the next
//! plan writes it again.

use crate::common::{computed_string, exactly_one_of, failed, hex, invalid, string, with, Digests};
use crate::provider::{DataSource, Provider, Resource};
use async_trait::async_trait;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use sha1::Digest;
use sha1::Sha1;
use std::path::Path;
use strata_provider::{AttributeSchema, DriverError, Problem, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;

pub(crate) fn provider() -> Provider {
    Provider::new("local", "hashicorp/local")
        .resource("local_file", LocalFile { sensitive: false })
        .resource("local_sensitive_file", LocalFile { sensitive: true })
        .data_source("local_file", ReadFile { sensitive: false })
        .data_source("local_sensitive_file", ReadFile { sensitive: true })
}

const DIGESTS: [&str; 6] = [
    "content_md5",
    "content_sha1",
    "content_sha256",
    "content_base64sha256",
    "content_sha512",
    "content_base64sha512",
];

/// The id (the SHA-1) and every digest the provider stores.
fn digests(content: &[u8]) -> Vec<(String, Value)> {
    Digests::of(content).attributes("content_", "sha1")
}

fn digest_schema() -> Vec<(&'static str, AttributeSchema)> {
    let mut out: Vec<(&'static str, AttributeSchema)> = DIGESTS
        .iter()
        .map(|d| (*d, computed_string("A digest of the content.")))
        .collect();
    out.push((
        "id",
        computed_string("The SHA-1 of the content, in hexadecimal."),
    ));
    out
}

pub(crate) struct LocalFile {
    /// `local_sensitive_file`: content hidden, owner-only permissions.
    sensitive: bool,
}

impl LocalFile {
    fn type_name(&self) -> &'static str {
        if self.sensitive {
            "local_sensitive_file"
        } else {
            "local_file"
        }
    }

    /// The attributes that give the content; exactly one is set.
    fn sources(&self) -> &'static [&'static str] {
        if self.sensitive {
            &["content", "content_base64", "source"]
        } else {
            &["content", "sensitive_content", "content_base64", "source"]
        }
    }

    fn content(&self, planned: &Value) -> Result<Vec<u8>, DriverError> {
        let fail = |e: String| failed(self.type_name(), "create", e);
        if let Some(s) = string(planned, "sensitive_content") {
            return Ok(s.into_bytes());
        }
        if let Some(b) = string(planned, "content_base64") {
            return STANDARD
                .decode(b)
                .map_err(|e| fail(format!("content_base64 is not base64: {e}")));
        }
        if let Some(src) = string(planned, "source") {
            return std::fs::read(&src).map_err(|e| fail(format!("cannot read source {src}: {e}")));
        }
        Ok(string(planned, "content").unwrap_or_default().into_bytes())
    }
}

fn permission(s: &str) -> Option<u32> {
    let ok = (3..=4).contains(&s.len()) && s.chars().all(|c| ('0'..='7').contains(&c));
    ok.then(|| u32::from_str_radix(s, 8).ok()).flatten()
}

/// Writes `content` to a new `path`, making its missing directories, with
/// the modes asked for less the umask, as Go's `os.WriteFile` and
/// `os.MkdirAll` do for the provider.
#[cfg(unix)]
fn write_new(path: &Path, content: &[u8], file: u32, dir: u32) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(d) = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.exists())
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(dir)
            .create(d)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(file)
        .open(path)?;
    f.write_all(content)
}

#[cfg(not(unix))]
fn write_new(path: &Path, content: &[u8], _file: u32, _dir: u32) -> std::io::Result<()> {
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d)?;
    }
    std::fs::write(path, content)
}

#[async_trait]
impl Resource for LocalFile {
    fn schema(&self) -> ResourceSchema {
        let text = |d| {
            let a = AttributeSchema::optional(Type::String, d).force_new();
            if self.sensitive {
                a.sensitive()
            } else {
                a
            }
        };
        let perm = |d| {
            AttributeSchema::optional(Type::String, d)
                .and_computed()
                .force_new()
        };
        let mut attributes = digest_schema();
        attributes.extend([
            (
                "filename",
                AttributeSchema::required(Type::String, "The file to write.").force_new(),
            ),
            ("content", text("The content, as UTF-8 text.")),
            ("content_base64", text("The content, as base64.")),
            (
                "source",
                AttributeSchema::optional(Type::String, "A file to copy the content from.")
                    .force_new(),
            ),
            ("file_permission", perm("The file's mode, in octal.")),
            (
                "directory_permission",
                perm("The mode of directories made, in octal."),
            ),
        ]);
        if !self.sensitive {
            attributes.push((
                "sensitive_content",
                AttributeSchema::optional(Type::String, "Deprecated: local_sensitive_file.")
                    .force_new()
                    .sensitive(),
            ));
        }
        ResourceSchema::of_attributes(attributes)
    }

    fn defaults(&self) -> Vec<(&'static str, Value)> {
        let mode = if self.sensitive { "0700" } else { "0777" };
        vec![
            ("file_permission", Value::string(mode)),
            ("directory_permission", Value::string(mode)),
        ]
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        let mut out: Vec<Problem> = exactly_one_of(config, self.sources(), "filename")
            .into_iter()
            .collect();
        for p in ["file_permission", "directory_permission"] {
            if string(config, p).is_some_and(|s| permission(&s).is_none()) {
                out.push(invalid(
                    p,
                    "bad mode for file - string length should be 3 or 4 digits: 0-7".to_string(),
                ));
            }
        }
        out
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let fail = |e: String| failed(self.type_name(), "create", e);
        let content = self.content(planned)?;
        let filename = string(planned, "filename").unwrap_or_default();
        let mode = |name| string(planned, name).as_deref().and_then(permission);
        write_new(
            Path::new(&filename),
            &content,
            mode("file_permission").unwrap_or(0o777),
            mode("directory_permission").unwrap_or(0o777),
        )
        .map_err(|e| fail(format!("cannot write {filename}: {e}")))?;
        Ok(with(planned, digests(&content)))
    }

    /// Gone when the file is missing or its content is not what was written.
    async fn read(&self, stored: &Value) -> Result<Option<Value>, DriverError> {
        let filename = string(stored, "filename").unwrap_or_default();
        let content = match std::fs::read(&filename) {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(failed(
                    self.type_name(),
                    "read",
                    format!("cannot read {filename}: {e}"),
                ))
            }
        };
        let same = string(stored, "id").is_some_and(|id| id == hex(&Sha1::digest(&content)));
        Ok(same.then(|| stored.clone()))
    }

    async fn delete(&self, prior: &Value) -> Result<(), DriverError> {
        if let Some(filename) = string(prior, "filename") {
            match std::fs::remove_file(&filename) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(failed(
                        self.type_name(),
                        "delete",
                        format!("cannot remove {filename}: {e}"),
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The file is on disk, whether or not the state records it.
    fn only_in_state(&self) -> bool {
        false
    }
}

/// The `local_file` and `local_sensitive_file` data sources.
pub(crate) struct ReadFile {
    sensitive: bool,
}

#[async_trait]
impl DataSource for ReadFile {
    fn schema(&self) -> ResourceSchema {
        let content = |d| {
            let a = AttributeSchema::computed(Type::String, d);
            if self.sensitive {
                a.sensitive()
            } else {
                a
            }
        };
        let mut attributes = digest_schema();
        attributes.extend([
            (
                "filename",
                AttributeSchema::required(Type::String, "The file to read."),
            ),
            ("content", content("The content, as UTF-8 text.")),
            ("content_base64", content("The content, as base64.")),
        ]);
        ResourceSchema::of_attributes(attributes)
    }

    async fn read(&self, config: &Value) -> Result<Value, DriverError> {
        let type_name = if self.sensitive {
            "local_sensitive_file"
        } else {
            "local_file"
        };
        let filename = string(config, "filename").unwrap_or_default();
        let content = std::fs::read(&filename)
            .map_err(|e| failed(type_name, "read", format!("cannot read {filename}: {e}")))?;
        let mut pairs = digests(&content);
        pairs.push((
            "content".into(),
            Value::string(String::from_utf8_lossy(&content)),
        ));
        pairs.push((
            "content_base64".into(),
            Value::string(STANDARD.encode(&content)),
        ));
        Ok(with(config, pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_match_known_values() {
        let d = with(&Value::Object(Default::default()), digests(b"hello"));
        assert_eq!(
            string(&d, "id").as_deref(),
            Some("aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d")
        );
        assert_eq!(
            string(&d, "content_md5").as_deref(),
            Some("5d41402abc4b2a76b9719d911017c592")
        );
        assert_eq!(
            string(&d, "content_base64sha256").as_deref(),
            Some("LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=")
        );
    }

    #[test]
    fn modes_are_three_or_four_octal_digits() {
        assert_eq!(permission("0644"), Some(0o644));
        assert_eq!(permission("755"), Some(0o755));
        assert_eq!(permission("0899"), None);
        assert_eq!(permission("77"), None);
    }
}
