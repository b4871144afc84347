//! S3: `aws_s3_bucket`, `aws_s3_bucket_versioning` and (`lifecycle.rs`)
//! `aws_s3_bucket_lifecycle_configuration`, where clusters keep datasets,
//! checkpoints and models.
//!
//! S3 has no batch read or tag filter: refresh is a HeadBucket and a
//! GetBucketTagging per bucket, crash recovery reads the tags of every
//! bucket the account has.

use crate::error::{api, code, deleted, is_not_found};
use crate::tags::{self, with_ownership};
use crate::values::{
    boolean, each, get, list_block_one, list_of_one, object, one_block, required, str_value,
    string, string_map,
};
use crate::{Clients, Kind};
use async_trait::async_trait;
use aws_sdk_s3::types::{
    BucketLocationConstraint, BucketVersioningStatus, CreateBucketConfiguration, Delete,
    ObjectIdentifier, Tag, Tagging, VersioningConfiguration,
};
use std::collections::BTreeMap;
use strata_provider::{
    AttributeSchema as A, BlockSchema, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

mod lifecycle;
pub use lifecycle::BucketLifecycle;

pub struct Bucket;

/// `force_destroy` is strata's, not S3's: an object keeps the one it was
/// given.
fn with_force_destroy(mut v: Value, keep: Option<&Value>) -> Value {
    if let Value::Object(m) = &mut v {
        let keep = keep.cloned().unwrap_or(Value::Bool(false));
        m.insert("force_destroy".into(), keep);
    }
    v
}

/// The bucket's tags as S3 holds them (none is an error code, not an
/// empty set).
async fn bucket_tags(c: &Clients, bucket: &str) -> Result<Vec<Tag>, DriverError> {
    match c.s3.get_bucket_tagging().bucket(bucket).send().await {
        Ok(out) => Ok(out.tag_set().to_vec()),
        Err(e) if code(&e) == Some("NoSuchTagSet") => Ok(Vec::new()),
        Err(e) => Err(api("GetBucketTagging", e)),
    }
}

async fn put_tags(
    c: &Clients,
    bucket: &str,
    all: &BTreeMap<String, String>,
) -> Result<(), DriverError> {
    if all.is_empty() {
        c.s3.delete_bucket_tagging()
            .bucket(bucket)
            .send()
            .await
            .map_err(|e| api("DeleteBucketTagging", e))?;
        return Ok(());
    }
    let set = all
        .iter()
        .filter_map(|(k, v)| Tag::builder().key(k).value(v).build().ok())
        .collect();
    let tagging = Tagging::builder()
        .set_tag_set(Some(set))
        .build()
        .map_err(|e| DriverError::InvalidConfig {
            type_name: "aws_s3_bucket".into(),
            detail: e.to_string(),
        })?;
    c.s3.put_bucket_tagging()
        .bucket(bucket)
        .tagging(tagging)
        .send()
        .await
        .map_err(|e| api("PutBucketTagging", e))?;
    Ok(())
}

fn region_of(c: &Clients) -> String {
    c.s3.config()
        .region()
        .map_or_else(|| "us-east-1".to_string(), |r| r.to_string())
}

impl Bucket {
    const TYPE: &'static str = "aws_s3_bucket";

    fn value(c: &Clients, name: &str, aws_tags: &[Tag]) -> Value {
        let (tags, all) = tags::values(
            aws_tags
                .iter()
                .map(|t| (t.key().to_string(), t.value().to_string())),
        );
        let region = region_of(c);
        object(vec![
            ("id", Value::string(name)),
            ("bucket", Value::string(name)),
            ("arn", Value::string(format!("arn:aws:s3:::{name}"))),
            ("region", Value::string(&region)),
            (
                "bucket_domain_name",
                Value::string(format!("{name}.s3.amazonaws.com")),
            ),
            (
                "bucket_regional_domain_name",
                Value::string(format!("{name}.s3.{region}.amazonaws.com")),
            ),
            ("tags", tags),
            ("tags_all", all),
        ])
    }

    async fn get(&self, c: &Clients, name: &str) -> Result<Option<Value>, DriverError> {
        match c.s3.head_bucket().bucket(name).send().await {
            Ok(_) => {}
            // HeadBucket has no body, so no code: a 404 is "no such bucket".
            Err(e)
                if is_not_found(&e)
                    || e.raw_response().is_some_and(|r| r.status().as_u16() == 404) =>
            {
                return Ok(None)
            }
            Err(e) => return Err(api("HeadBucket", e)),
        }
        let aws_tags = bucket_tags(c, name).await?;
        Ok(Some(Bucket::value(c, name, &aws_tags)))
    }

    /// Deletes every object version, so a `force_destroy` bucket can go.
    async fn empty(&self, c: &Clients, name: &str) -> Result<(), DriverError> {
        loop {
            let out =
                c.s3.list_object_versions()
                    .bucket(name)
                    .send()
                    .await
                    .map_err(|e| api("ListObjectVersions", e))?;
            let ids: Vec<ObjectIdentifier> = out
                .versions()
                .iter()
                .filter_map(|v| {
                    ObjectIdentifier::builder()
                        .key(v.key()?)
                        .set_version_id(v.version_id().map(str::to_string))
                        .build()
                        .ok()
                })
                .chain(out.delete_markers().iter().filter_map(|m| {
                    ObjectIdentifier::builder()
                        .key(m.key()?)
                        .set_version_id(m.version_id().map(str::to_string))
                        .build()
                        .ok()
                }))
                .collect();
            if ids.is_empty() {
                return Ok(());
            }
            let delete = Delete::builder()
                .set_objects(Some(ids))
                .quiet(true)
                .build()
                .map_err(|e| DriverError::InvalidConfig {
                    type_name: Self::TYPE.into(),
                    detail: e.to_string(),
                })?;
            c.s3.delete_objects()
                .bucket(name)
                .delete(delete)
                .send()
                .await
                .map_err(|e| api("DeleteObjects", e))?;
        }
    }
}

#[async_trait]
impl Kind<Clients> for Bucket {
    fn schema(&self) -> ResourceSchema {
        tags::taggable_schema(vec![
            (
                "bucket",
                A::required(Type::String, "The bucket's name (globally unique).").force_new(),
            ),
            (
                "force_destroy",
                A::optional(
                    Type::Bool,
                    "Delete every object when destroying the bucket.",
                ),
            ),
            ("region", A::computed(Type::String, "The bucket's region.")),
            (
                "bucket_domain_name",
                A::computed(Type::String, "bucket.s3.amazonaws.com."),
            ),
            (
                "bucket_regional_domain_name",
                A::computed(Type::String, "bucket.s3.REGION.amazonaws.com."),
            ),
        ])
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        tags::plan_taggable(schema, req, &[("force_destroy", Value::Bool(false))])
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let found = match string(o, "bucket") {
                Some(n) => self.get(c, &n).await?,
                None => None,
            };
            out.push(found.map(|v| with_force_destroy(v, get(o, "force_destroy"))));
        }
        Ok(out)
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<Value, DriverError> {
        let name = required(planned, Self::TYPE, "bucket")?;
        let region = region_of(c);
        // us-east-1 is the one region that takes no location constraint.
        let location = (region != "us-east-1").then(|| {
            CreateBucketConfiguration::builder()
                .location_constraint(BucketLocationConstraint::from(region.as_str()))
                .build()
        });
        c.s3.create_bucket()
            .bucket(&name)
            .set_create_bucket_configuration(location)
            .send()
            .await
            .map_err(|e| api("CreateBucket", e))?;
        put_tags(c, &name, &with_ownership(&string_map(planned, "tags"), t)).await?;
        let v = self.get(c, &name).await?.ok_or_else(|| DriverError::Api {
            operation: format!("HeadBucket {name}"),
            detail: "the bucket is not there right after being made".into(),
            retryable: true,
        })?;
        Ok(with_force_destroy(v, get(planned, "force_destroy")))
    }

    async fn update(
        &self,
        c: &Clients,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let name = required(prior, Self::TYPE, "bucket")?;
        // Bucket tagging is replaced whole: the ownership tags go back
        // with the user's.
        let held = bucket_tags(c, &name).await?;
        let mut all: BTreeMap<String, String> = held
            .iter()
            .filter(|t| t.key() == tags::ADDRESS || t.key() == tags::LINEAGE)
            .map(|t| (t.key().to_string(), t.value().to_string()))
            .collect();
        all.extend(string_map(planned, "tags"));
        put_tags(c, &name, &all).await?;
        let v = self.get(c, &name).await?.ok_or_else(|| DriverError::Api {
            operation: format!("HeadBucket {name}"),
            detail: "the bucket is gone right after being updated".into(),
            retryable: true,
        })?;
        Ok(with_force_destroy(v, get(planned, "force_destroy")))
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let name = required(prior, Self::TYPE, "bucket")?;
        if boolean(prior, "force_destroy") == Some(true) {
            match self.empty(c, &name).await {
                Err(DriverError::Api { detail, .. }) if detail.starts_with("NoSuchBucket") => {
                    return Ok(())
                }
                r => r?,
            }
        }
        match deleted(
            "DeleteBucket",
            c.s3.delete_bucket().bucket(&name).send().await,
        ) {
            // What is in the bucket is kept: say how to let it go.
            Err(DriverError::Api {
                operation, detail, ..
            }) if detail.starts_with("BucketNotEmpty") => Err(DriverError::Api {
                operation,
                detail: format!("{detail} (its objects are kept: set force_destroy = true and apply before destroying to delete them with it)"),
                retryable: false,
            }),
            r => r.map(|_| ()),
        }
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        // ListBuckets pages (by continuation token) once an account has
        // more buckets than a page holds.
        let buckets =
            c.s3.list_buckets()
                .into_paginator()
                .items()
                .send()
                .collect::<Result<Vec<_>, _>>()
                .await
                .map_err(|e| api("ListBuckets", e))?;
        let mut found = Vec::new();
        for b in &buckets {
            let Some(name) = b.name() else { continue };
            let aws_tags = bucket_tags(c, name).await?;
            if tags::owned_by(aws_tags.iter().map(|x| (x.key(), x.value())), t) {
                found.push(Bucket::value(c, name, &aws_tags));
            }
        }
        Ok(found)
    }

    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        self.get(c, id).await
    }
}

/// `aws_s3_bucket_versioning`: PutBucketVersioning both creates and
/// changes it, so a crashed create is simply done again.
pub struct BucketVersioning;

impl BucketVersioning {
    const TYPE: &'static str = "aws_s3_bucket_versioning";

    async fn fetch(&self, c: &Clients, bucket: &str) -> Result<Option<Value>, DriverError> {
        let out = match c.s3.get_bucket_versioning().bucket(bucket).send().await {
            Ok(out) => out,
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(e) => return Err(api("GetBucketVersioning", e)),
        };
        // A bucket never versioned answers with no status at all.
        let status = out
            .status()
            .map_or("Disabled", BucketVersioningStatus::as_str);
        Ok(Some(object(vec![
            ("id", Value::string(bucket)),
            ("bucket", Value::string(bucket)),
            (
                "versioning_configuration",
                list_of_one(
                    &versioning_block(),
                    Some(object(vec![
                        ("status", Value::string(status)),
                        (
                            "mfa_delete",
                            str_value(out.mfa_delete().map(|m| m.as_str())),
                        ),
                    ])),
                ),
            ),
        ])))
    }

    async fn set_status(&self, c: &Clients, bucket: &str, status: &str) -> Result<(), DriverError> {
        c.s3.put_bucket_versioning()
            .bucket(bucket)
            .versioning_configuration(
                VersioningConfiguration::builder()
                    .status(BucketVersioningStatus::from(status))
                    .build(),
            )
            .send()
            .await
            .map_err(|e| api("PutBucketVersioning", e))?;
        Ok(())
    }

    fn status(v: &Value) -> String {
        one_block(v, "versioning_configuration")
            .and_then(|b| string(&b, "status"))
            .unwrap_or_else(|| "Enabled".into())
    }

    async fn apply(&self, c: &Clients, planned: &Value) -> Result<Value, DriverError> {
        let bucket = required(planned, Self::TYPE, "bucket")?;
        let status = Self::status(planned);
        // "Disabled" is where a bucket starts; once versioned it can only
        // be suspended.
        if status != "Disabled" {
            self.set_status(c, &bucket, &status).await?;
        }
        self.fetch(c, &bucket)
            .await?
            .ok_or_else(|| DriverError::Api {
                operation: format!("GetBucketVersioning {bucket}"),
                detail: "the bucket is gone".into(),
                retryable: false,
            })
    }
}

#[async_trait]
impl BucketPart for BucketVersioning {
    fn schema(&self) -> ResourceSchema {
        let mut s = bucket_part_schema();
        s.blocks
            .insert("versioning_configuration".into(), versioning_block());
        s
    }

    async fn get(&self, c: &Clients, bucket: &str) -> Result<Option<Value>, DriverError> {
        self.fetch(c, bucket).await
    }

    async fn put(&self, c: &Clients, planned: &Value) -> Result<Value, DriverError> {
        self.apply(c, planned).await
    }

    /// As in Terraform, deleting the resource suspends versioning (a
    /// versioned bucket cannot go back to never versioned).
    async fn remove(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let bucket = required(prior, Self::TYPE, "bucket")?;
        if Self::status(prior) != "Enabled" {
            return Ok(());
        }
        match self.set_status(c, &bucket, "Suspended").await {
            Err(DriverError::Api { detail, .. }) if detail.starts_with("NoSuchBucket") => Ok(()),
            r => r,
        }
    }
}

/// A configuration S3 keeps one of per bucket and replaces whole
/// (versioning, lifecycle): read and imported by the bucket's name, made
/// and changed by the same put (so a crashed create is simply done
/// again), never tagged (the bucket is).
#[async_trait]
pub trait BucketPart: Send + Sync + 'static {
    fn schema(&self) -> ResourceSchema;
    async fn get(&self, c: &Clients, bucket: &str) -> Result<Option<Value>, DriverError>;
    async fn put(&self, c: &Clients, planned: &Value) -> Result<Value, DriverError>;
    async fn remove(&self, c: &Clients, prior: &Value) -> Result<(), DriverError>;
}

/// A [`BucketPart`] as a resource type.
pub struct PerBucket<P>(pub P);

#[async_trait]
impl<P: BucketPart> Kind<Clients> for PerBucket<P> {
    fn schema(&self) -> ResourceSchema {
        self.0.schema()
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        each(
            objs,
            |o| string(o, "bucket"),
            |b| async move { self.0.get(c, &b).await },
        )
        .await
    }

    async fn create(&self, c: &Clients, planned: &Value, _t: &Tags) -> Result<Value, DriverError> {
        self.0.put(c, planned).await
    }

    async fn update(
        &self,
        c: &Clients,
        _prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        self.0.put(c, planned).await
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        self.0.remove(c, prior).await
    }

    async fn find_tagged(&self, _c: &Clients, _t: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }

    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        self.0.get(c, id).await
    }
}

/// The attributes every [`BucketPart`] has: its id (the bucket's name)
/// and the bucket.
fn bucket_part_schema() -> ResourceSchema {
    ResourceSchema::of_attributes(vec![
        ("id", A::computed(Type::String, "The bucket's name.")),
        (
            "bucket",
            A::required(Type::String, "The bucket.").force_new(),
        ),
    ])
}

/// `versioning_configuration { status, mfa_delete }`, required.
fn versioning_block() -> BlockSchema {
    list_block_one(
        1,
        vec![
            (
                "status",
                A::required(Type::String, "Enabled, Suspended or Disabled."),
            ),
            (
                "mfa_delete",
                A::optional(Type::String, "Enabled or Disabled.").and_computed(),
            ),
        ],
    )
}
