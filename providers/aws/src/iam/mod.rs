//! IAM: roles and what hangs on them (policy attachments, inline
//! policies, instance profiles), OIDC providers for IRSA, and the
//! `aws_iam_policy_document` data source.
//!
//! IAM has no batch read; refresh is one Get call per object (one listing
//! per role for attachments). Policy documents are compared as JSON, so
//! AWS's reformatting never shows as a change. IAM cannot filter by tag:
//! crash recovery lists every object's tags, which is slow but rare.

mod oidc;
mod policy_document;
mod profile;
mod role;

pub use oidc::OpenIdConnectProvider;
pub use policy_document::PolicyDocument;
pub use profile::InstanceProfile;
pub use role::{Role, RolePolicy, RolePolicyAttachment};

use crate::error::api;
use crate::tags;
use crate::values::{string, string_map};
use aws_sdk_iam::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_iam::types::Tag;
use std::collections::BTreeMap;
use std::future::Future;
use strata_provider::{DriverError, Tags};
use strata_value::value::Value;

fn iam_tags(m: &BTreeMap<String, String>) -> Vec<Tag> {
    m.iter()
        .filter_map(|(k, v)| Tag::builder().key(k).value(v).build().ok())
        .collect()
}

/// `tags` and `tags_all` from the tags IAM holds.
fn tag_values(aws: &[Tag]) -> (Value, Value) {
    tags::values(
        aws.iter()
            .map(|t| (t.key().to_string(), t.value().to_string())),
    )
}

/// Whether IAM's tags carry `t`'s ownership tags.
fn owned(aws: &[Tag], t: &Tags) -> bool {
    tags::owned_by(aws.iter().map(|x| (x.key(), x.value())), t)
}

/// IAM returns policy documents URL-encoded.
fn decode_policy(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

fn same_json(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// An equal policy document written differently is no change: the plan
/// keeps the prior's text.
fn keep_equal_json(planned: &mut Value, prior: Option<&Value>, name: &str) {
    let (Some(prior), Value::Object(m)) = (prior, planned) else {
        return;
    };
    let want = m.get(name).and_then(|v| v.as_str()).map(str::to_string);
    if let (Some(had), Some(want)) = (string(prior, name), want) {
        if same_json(&had, &want) {
            m.insert(name.into(), Value::string(had));
        }
    }
}

/// Brings the user's tags from `prior`'s to `planned`'s through a type's
/// Untag and Tag calls (ownership tags are never touched).
async fn retag<FU, FT, OU, OT, EU, ET, RU, RT>(
    prior: &Value,
    planned: &Value,
    untag: impl FnOnce(Vec<String>) -> FU,
    tag: impl FnOnce(Vec<Tag>) -> FT,
) -> Result<(), DriverError>
where
    FU: Future<Output = Result<OU, SdkError<EU, RU>>>,
    FT: Future<Output = Result<OT, SdkError<ET, RT>>>,
    EU: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    ET: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    RU: std::fmt::Debug,
    RT: std::fmt::Debug,
{
    let (remove, set) = tags::changes(&string_map(prior, "tags"), &string_map(planned, "tags"));
    if !remove.is_empty() {
        untag(remove).await.map_err(|e| api("Untag", e))?;
    }
    if !set.is_empty() {
        tag(iam_tags(&set)).await.map_err(|e| api("Tag", e))?;
    }
    Ok(())
}
