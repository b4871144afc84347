//! `aws_s3_bucket_lifecycle_configuration`: the rules that expire old
//! objects (old checkpoints), old versions and abandoned multipart
//! uploads: a [`BucketPart`], made and changed by
//! PutBucketLifecycleConfiguration.
//!
//! strata holds the parts of a rule that a retention policy needs (a
//! prefix filter, expiration by age, noncurrent versions by age, aborted
//! uploads); the rest of the provider's schema (transitions, tag and size
//! filters) is left out, and a bucket carrying them reads back without.

use super::{bucket_part_schema, BucketPart};
use crate::error::{api, deleted, found};
use crate::values::{blocks, get, number, object, one_block, required, string};
use crate::Clients;
use async_trait::async_trait;
use aws_sdk_s3::types::{
    AbortIncompleteMultipartUpload, BucketLifecycleConfiguration, ExpirationStatus,
    LifecycleExpiration, LifecycleRule, LifecycleRuleFilter, NoncurrentVersionExpiration,
};
use strata_provider::{
    AttributeSchema as A, BlockNesting, BlockSchema, DriverError, ResourceSchema,
};
use strata_value::types::Type;
use strata_value::value::Value;

pub struct BucketLifecycle;

const TYPE: &str = "aws_s3_bucket_lifecycle_configuration";

/// A nested list block as the provider (a framework resource) declares
/// them: no item counts in the schema, its validators hold them.
fn list(attributes: Vec<(&str, A)>) -> BlockSchema {
    crate::values::block(BlockNesting::List, 0, attributes)
}

fn rule_block() -> BlockSchema {
    let mut rule = list(vec![
        ("id", A::required(Type::String, "The rule's name.")),
        ("status", A::required(Type::String, "Enabled or Disabled.")),
    ]);
    let inner = &mut rule.schema.blocks;
    inner.insert(
        "filter".into(),
        list(vec![(
            "prefix",
            A::optional(Type::String, "The keys the rule applies to.").and_computed(),
        )]),
    );
    inner.insert(
        "expiration".into(),
        list(vec![
            (
                "days",
                A::optional(Type::Number, "Days after an object is written.").and_computed(),
            ),
            (
                "expired_object_delete_marker",
                A::optional(Type::Bool, "Remove delete markers left alone.").and_computed(),
            ),
        ]),
    );
    inner.insert(
        "noncurrent_version_expiration".into(),
        list(vec![(
            "noncurrent_days",
            A::required(Type::Number, "Days after a version stops being current."),
        )]),
    );
    inner.insert(
        "abort_incomplete_multipart_upload".into(),
        list(vec![(
            "days_after_initiation",
            A::optional(Type::Number, "Days after a multipart upload starts."),
        )]),
    );
    rule
}

/// A block's object from its fields, as one element of a list.
fn element(block: &str, fields: Vec<(&str, Value)>) -> Value {
    let schema = rule_block().schema.blocks[block].clone();
    Value::List(schema.schema.object_type(), vec![object(fields)])
}

fn empty(block: &str) -> Value {
    let schema = rule_block().schema.blocks[block].clone();
    Value::List(schema.schema.object_type(), Vec::new())
}

fn int(n: Option<i32>) -> Value {
    n.map_or(Value::Null(Type::Number), |n| Value::int(n.into()))
}

/// A rule as S3 holds it, in the provider's shape.
fn rule_value(r: &LifecycleRule) -> Value {
    let filter = match r.filter() {
        Some(f) => element(
            "filter",
            vec![("prefix", Value::string(f.prefix().unwrap_or_default()))],
        ),
        None => empty("filter"),
    };
    let expiration = match r.expiration() {
        Some(e) => element(
            "expiration",
            vec![
                ("days", int(e.days())),
                (
                    "expired_object_delete_marker",
                    Value::Bool(e.expired_object_delete_marker().unwrap_or(false)),
                ),
            ],
        ),
        None => empty("expiration"),
    };
    let noncurrent = match r.noncurrent_version_expiration() {
        Some(n) => element(
            "noncurrent_version_expiration",
            vec![("noncurrent_days", int(n.noncurrent_days()))],
        ),
        None => empty("noncurrent_version_expiration"),
    };
    let abort = match r.abort_incomplete_multipart_upload() {
        Some(a) => element(
            "abort_incomplete_multipart_upload",
            vec![("days_after_initiation", int(a.days_after_initiation()))],
        ),
        None => empty("abort_incomplete_multipart_upload"),
    };
    object(vec![
        ("id", Value::string(r.id().unwrap_or_default())),
        ("status", Value::string(r.status().as_str())),
        ("filter", filter),
        ("expiration", expiration),
        ("noncurrent_version_expiration", noncurrent),
        ("abort_incomplete_multipart_upload", abort),
    ])
}

fn days(v: &Value, name: &str) -> Option<i32> {
    number(v, name).and_then(|n| i32::try_from(n).ok())
}

/// A planned rule as the S3 API takes it.
fn rule_of(v: &Value) -> Result<LifecycleRule, DriverError> {
    let invalid = |e: aws_sdk_s3::error::BuildError| DriverError::InvalidConfig {
        type_name: TYPE.into(),
        detail: e.to_string(),
    };
    // A rule with no filter applies to every key; S3 wants that said as
    // an empty prefix.
    let prefix = one_block(v, "filter")
        .and_then(|f| string(&f, "prefix"))
        .unwrap_or_default();
    let mut rule = LifecycleRule::builder()
        .set_id(string(v, "id"))
        .status(ExpirationStatus::from(
            string(v, "status").unwrap_or_default().as_str(),
        ))
        .filter(LifecycleRuleFilter::builder().prefix(prefix).build());
    if let Some(e) = one_block(v, "expiration") {
        rule = rule.expiration(
            LifecycleExpiration::builder()
                .set_days(days(&e, "days"))
                .set_expired_object_delete_marker(
                    get(&e, "expired_object_delete_marker").and_then(Value::as_bool),
                )
                .build(),
        );
    }
    if let Some(n) = one_block(v, "noncurrent_version_expiration") {
        rule = rule.noncurrent_version_expiration(
            NoncurrentVersionExpiration::builder()
                .set_noncurrent_days(days(&n, "noncurrent_days"))
                .build(),
        );
    }
    if let Some(a) = one_block(v, "abort_incomplete_multipart_upload") {
        rule = rule.abort_incomplete_multipart_upload(
            AbortIncompleteMultipartUpload::builder()
                .set_days_after_initiation(days(&a, "days_after_initiation"))
                .build(),
        );
    }
    rule.build().map_err(invalid)
}

impl BucketLifecycle {
    async fn fetch(&self, c: &Clients, bucket: &str) -> Result<Option<Value>, DriverError> {
        let asked =
            c.s3.get_bucket_lifecycle_configuration()
                .bucket(bucket)
                .send()
                .await;
        let Some(out) = found("GetBucketLifecycleConfiguration", asked)? else {
            return Ok(None);
        };
        let rules = out.rules().iter().map(rule_value).collect();
        Ok(Some(object(vec![
            ("id", Value::string(bucket)),
            ("bucket", Value::string(bucket)),
            (
                "rule",
                Value::List(rule_block().schema.object_type(), rules),
            ),
        ])))
    }

    async fn store(&self, c: &Clients, planned: &Value) -> Result<Value, DriverError> {
        let bucket = required(planned, TYPE, "bucket")?;
        let rules = blocks(planned, "rule")
            .iter()
            .map(rule_of)
            .collect::<Result<Vec<_>, _>>()?;
        let config = BucketLifecycleConfiguration::builder()
            .set_rules(Some(rules))
            .build()
            .map_err(|e| DriverError::InvalidConfig {
                type_name: TYPE.into(),
                detail: e.to_string(),
            })?;
        c.s3.put_bucket_lifecycle_configuration()
            .bucket(&bucket)
            .lifecycle_configuration(config)
            .send()
            .await
            .map_err(|e| api("PutBucketLifecycleConfiguration", e))?;
        self.fetch(c, &bucket)
            .await?
            .ok_or_else(|| DriverError::Api {
                operation: format!("GetBucketLifecycleConfiguration {bucket}"),
                detail: "the configuration is not there right after being put".into(),
                retryable: true,
            })
    }
}

#[async_trait]
impl BucketPart for BucketLifecycle {
    fn schema(&self) -> ResourceSchema {
        let mut s = bucket_part_schema();
        s.blocks.insert("rule".into(), rule_block());
        // The provider's schema version for this shape: a state written
        // with 0 would be upgraded by the provider as an older one.
        s.version = 1;
        s
    }

    async fn get(&self, c: &Clients, bucket: &str) -> Result<Option<Value>, DriverError> {
        self.fetch(c, bucket).await
    }

    async fn put(&self, c: &Clients, planned: &Value) -> Result<Value, DriverError> {
        self.store(c, planned).await
    }

    async fn remove(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let bucket = required(prior, TYPE, "bucket")?;
        let asked = c.s3.delete_bucket_lifecycle().bucket(&bucket).send().await;
        deleted("DeleteBucketLifecycle", asked).map(|_| ())
    }
}
