//! The `cloudinit` provider (hashicorp/cloudinit): the `cloudinit_config`
//! data source, parts joined into a MIME multi-part document byte for byte
//! as Go's `mime/multipart` writes it for the provider, then optionally
//! gzipped and base64-encoded. Uncompressed, `rendered` is the provider's
//! to the byte; gzipped, it unpacks to the same document but the
//! compressed bytes are zlib's, not Go's.

use crate::common::{boolean, failed, invalid, string, with};
use crate::provider::{DataSource, Provider};
use async_trait::async_trait;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use std::io::Write;
use strata_provider::values::{block, blocks};
use strata_provider::{AttributeSchema, BlockNesting, DriverError, Problem, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;

pub(crate) fn provider() -> Provider {
    Provider::new("cloudinit", "hashicorp/cloudinit")
        .data_source("cloudinit_config", CloudinitConfig)
}

struct CloudinitConfig;

/// One part of the document, its defaults filled in.
struct Part {
    content_type: String,
    content: String,
    filename: Option<String>,
    merge_type: Option<String>,
}

impl Part {
    fn of(v: &Value) -> Part {
        let set = |name: &str| string(v, name).filter(|s| !s.is_empty());
        Part {
            content_type: set("content_type").unwrap_or_else(|| "text/plain".to_string()),
            content: string(v, "content").unwrap_or_default(),
            filename: set("filename"),
            merge_type: set("merge_type"),
        }
    }

    /// The part's headers in Go's canonical spelling, sorted by name as
    /// `multipart.Writer` writes them.
    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![
            ("Content-Transfer-Encoding", "7bit".to_string()),
            ("Content-Type", self.content_type.clone()),
            ("Mime-Version", "1.0".to_string()),
        ];
        if let Some(f) = &self.filename {
            out.push((
                "Content-Disposition",
                format!("attachment; filename=\"{f}\""),
            ));
        }
        if let Some(m) = &self.merge_type {
            out.push(("X-Merge-Type", m.clone()));
        }
        out.sort();
        out
    }
}

/// The MIME document of `parts` under `boundary`.
fn document(boundary: &str, parts: &[Part]) -> String {
    let mut out = format!(
        "Content-Type: multipart/mixed; boundary=\"{boundary}\"\nMIME-Version: 1.0\r\n\r\n"
    );
    for (i, part) in parts.iter().enumerate() {
        out.push_str(if i == 0 { "--" } else { "\r\n--" });
        out.push_str(boundary);
        out.push_str("\r\n");
        for (name, value) in part.headers() {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        out.push_str("\r\n");
        out.push_str(&part.content);
    }
    out.push_str(&format!("\r\n--{boundary}--\r\n"));
    out
}

/// RFC 2046's boundary: 1 to 70 characters of its set, not ending in a
/// space (Go's `SetBoundary`).
fn boundary_ok(b: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "'()+_,-./:=? ".contains(c);
    (1..=70).contains(&b.len()) && b.chars().all(allowed) && !b.ends_with(' ')
}

#[async_trait]
impl DataSource for CloudinitConfig {
    fn schema(&self) -> ResourceSchema {
        let flag = |d| AttributeSchema::optional(Type::Bool, d).and_computed();
        let mut schema = ResourceSchema::of_attributes(vec![
            ("gzip", flag("Gzip the rendered document (default true).")),
            (
                "base64_encode",
                flag("Base64-encode the rendered document (default true)."),
            ),
            (
                "boundary",
                AttributeSchema::optional(
                    Type::String,
                    "The MIME boundary (default MIMEBOUNDARY).",
                )
                .and_computed(),
            ),
            (
                "rendered",
                AttributeSchema::computed(Type::String, "The document."),
            ),
            (
                "id",
                AttributeSchema::computed(Type::String, "A checksum of the document."),
            ),
        ]);
        let part = block(
            BlockNesting::List,
            1,
            vec![
                (
                    "content_type",
                    AttributeSchema::optional(
                        Type::String,
                        "The part's MIME type (default text/plain).",
                    )
                    .and_computed(),
                ),
                (
                    "content",
                    AttributeSchema::required(Type::String, "The part's body."),
                ),
                (
                    "filename",
                    AttributeSchema::optional(Type::String, "A file name for the part."),
                ),
                (
                    "merge_type",
                    AttributeSchema::optional(Type::String, "cloud-init's X-Merge-Type."),
                ),
            ],
        );
        schema.blocks.insert("part".to_string(), part);
        schema
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        let mut out = Vec::new();
        if boolean(config, "gzip").unwrap_or(true)
            && boolean(config, "base64_encode") == Some(false)
        {
            out.push(Problem {
                summary: "Invalid Attribute Configuration".to_string(),
                ..invalid(
                    "base64_encode",
                    "Expected base64_encode to be set to true when gzip is true.".to_string(),
                )
            });
        }
        if let Some(b) = string(config, "boundary").filter(|b| !boundary_ok(b)) {
            out.push(invalid("boundary", format!("{b:?} is not a MIME boundary: 1 to 70 letters, digits or '()+_,-./:=? not ending in a space")));
        }
        out
    }

    async fn read(&self, config: &Value) -> Result<Value, DriverError> {
        let gzip = boolean(config, "gzip").unwrap_or(true);
        let base64 = boolean(config, "base64_encode").unwrap_or(true);
        let boundary = string(config, "boundary").unwrap_or_else(|| "MIMEBOUNDARY".to_string());
        let parts: Vec<Part> = blocks(config, "part").iter().map(Part::of).collect();
        let text = document(&boundary, &parts);
        let bytes = if gzip {
            let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            z.write_all(text.as_bytes())
                .and_then(|()| z.finish())
                .map_err(|e| failed("cloudinit_config", "read", e.to_string()))?
        } else {
            text.into_bytes()
        };
        let rendered = if base64 {
            STANDARD.encode(&bytes)
        } else {
            String::from_utf8_lossy(&bytes).into_owned()
        };
        let id = crc32fast::hash(rendered.as_bytes()).to_string();
        let part_values: Vec<Value> = blocks(config, "part")
            .iter()
            .zip(&parts)
            .map(|(v, p)| {
                with(
                    v,
                    vec![("content_type", Value::string(p.content_type.clone()))],
                )
            })
            .collect();
        let part_type = self.schema().blocks["part"].schema.object_type();
        Ok(with(
            config,
            vec![
                ("gzip", Value::Bool(gzip)),
                ("base64_encode", Value::Bool(base64)),
                ("boundary", Value::string(boundary)),
                ("part", Value::List(part_type, part_values)),
                ("rendered", Value::string(rendered)),
                ("id", Value::string(id)),
            ],
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_gos_multipart_layout() {
        let parts = [
            Part {
                content_type: "text/cloud-config".into(),
                content: "a: 1\n".into(),
                filename: Some("c.yaml".into()),
                merge_type: None,
            },
            Part {
                content_type: "text/x-shellscript".into(),
                content: "#!/bin/sh\necho hi\n".into(),
                filename: None,
                merge_type: Some("list(append)".into()),
            },
        ];
        let expected = "Content-Type: multipart/mixed; boundary=\"MIMEBOUNDARY\"\nMIME-Version: 1.0\r\n\r\n\
--MIMEBOUNDARY\r\nContent-Disposition: attachment; filename=\"c.yaml\"\r\nContent-Transfer-Encoding: 7bit\r\nContent-Type: text/cloud-config\r\nMime-Version: 1.0\r\n\r\na: 1\n\
\r\n--MIMEBOUNDARY\r\nContent-Transfer-Encoding: 7bit\r\nContent-Type: text/x-shellscript\r\nMime-Version: 1.0\r\nX-Merge-Type: list(append)\r\n\r\n#!/bin/sh\necho hi\n\
\r\n--MIMEBOUNDARY--\r\n";
        assert_eq!(document("MIMEBOUNDARY", &parts), expected);
    }

    #[test]
    fn boundaries_follow_rfc_2046() {
        assert!(boundary_ok("MIMEBOUNDARY"));
        assert!(!boundary_ok(""));
        assert!(!boundary_ok("ends "));
        assert!(!boundary_ok("semi;colon"));
    }
}
