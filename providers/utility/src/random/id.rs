//! `random_id` (random bytes in four encodings) and `random_uuid`.

use super::keepers;
use crate::common::{
    bad_import, computed_string, count, invalid, number, random_bytes, string, too_many, with,
};
use crate::provider::Resource;
use async_trait::async_trait;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use strata_provider::{AttributeSchema, DriverError, Problem, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;

pub(crate) struct RandomId;

/// The stored object for `bytes`: the id is the unpadded URL-safe base64
/// form; every encoding beside it carries the prefix.
fn id_object(base: &Value, bytes: &[u8]) -> Value {
    let prefix = string(base, "prefix").unwrap_or_default();
    let url = URL_SAFE_NO_PAD.encode(bytes);
    let hex = crate::common::hex(bytes);
    let dec = num_bigint::BigUint::from_bytes_be(bytes).to_string();
    with(
        base,
        vec![
            ("id", Value::string(url.clone())),
            ("b64_url", Value::string(format!("{prefix}{url}"))),
            (
                "b64_std",
                Value::string(format!("{prefix}{}", STANDARD.encode(bytes))),
            ),
            ("hex", Value::string(format!("{prefix}{hex}"))),
            ("dec", Value::string(format!("{prefix}{dec}"))),
        ],
    )
}

#[async_trait]
impl Resource for RandomId {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            keepers(),
            (
                "byte_length",
                AttributeSchema::required(Type::Number, "How many random bytes.").force_new(),
            ),
            (
                "prefix",
                AttributeSchema::optional(Type::String, "Put before each encoding.").force_new(),
            ),
            ("b64_url", computed_string("URL-safe base64, unpadded.")),
            ("b64_std", computed_string("Standard base64, padded.")),
            ("hex", computed_string("Hexadecimal.")),
            ("dec", computed_string("Decimal.")),
            ("id", computed_string("URL-safe base64 without the prefix.")),
        ])
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        match number(config, "byte_length") {
            Some(n) if n < 1 => vec![invalid(
                "byte_length",
                format!("Attribute byte_length value must be at least 1, got: {n}"),
            )],
            _ => too_many(config, "byte_length").into_iter().collect(),
        }
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let n = count("random_id", planned, "byte_length", 0)?;
        Ok(id_object(planned, &random_bytes("random_id", n)?))
    }

    /// The id is the bytes in unpadded URL-safe base64.
    fn import(&self, id: &str) -> Option<Result<Value, DriverError>> {
        let bytes = match URL_SAFE_NO_PAD.decode(id) {
            Ok(b) => b,
            Err(e) => {
                return Some(Err(bad_import(
                    "random_id",
                    format!("the id {id:?} is not unpadded URL-safe base64: {e}"),
                )))
            }
        };
        let base = with(
            &Value::Object(Default::default()),
            vec![
                ("keepers", Value::Null(Type::map(Type::String))),
                ("prefix", Value::Null(Type::String)),
                ("byte_length", Value::int(bytes.len() as i64)),
            ],
        );
        Some(Ok(id_object(&base, &bytes)))
    }
}

pub(crate) struct RandomUuid;

#[async_trait]
impl Resource for RandomUuid {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            keepers(),
            ("result", computed_string("The generated version 4 UUID.")),
            ("id", computed_string("The UUID.")),
        ])
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&random_bytes("random_uuid", 16)?);
        let uuid = uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string();
        Ok(with(
            planned,
            vec![
                ("id", Value::string(uuid.clone())),
                ("result", Value::string(uuid)),
            ],
        ))
    }

    fn import(&self, id: &str) -> Option<Result<Value, DriverError>> {
        let parsed = uuid::Uuid::try_parse(id)
            .map_err(|e| bad_import("random_uuid", format!("the id {id:?} is not a UUID: {e}")));
        Some(parsed.map(|_| {
            with(
                &Value::Object(Default::default()),
                vec![
                    ("keepers", Value::Null(Type::map(Type::String))),
                    ("id", Value::string(id)),
                    ("result", Value::string(id)),
                ],
            )
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_encoding_is_of_the_same_bytes_and_carries_the_prefix() {
        let base = with(
            &Value::Object(Default::default()),
            vec![("prefix", Value::string("p-"))],
        );
        let o = id_object(&base, &[0xfb, 0xff, 0x01]);
        let e = o.entries().expect("object");
        assert_eq!(e["id"].as_str(), Some("-_8B"));
        assert_eq!(e["b64_url"].as_str(), Some("p--_8B"));
        assert_eq!(e["b64_std"].as_str(), Some("p-+/8B"));
        assert_eq!(e["hex"].as_str(), Some("p-fbff01"));
        assert_eq!(e["dec"].as_str(), Some("p-16514817"));
    }

    #[test]
    fn an_imported_id_gives_back_its_bytes() {
        let o = RandomId.import("AAEC").expect("imports").expect("valid");
        let e = o.entries().expect("object");
        assert_eq!(e["hex"].as_str(), Some("000102"));
        assert_eq!(number(&o, "byte_length"), Some(3));
        assert!(RandomId.import("not base64!").expect("answer").is_err());
        assert!(RandomUuid.import("nope").expect("answer").is_err());
    }
}
