//! EKS: `aws_eks_cluster`, `aws_eks_node_group`, `aws_eks_addon` and
//! `aws_eks_pod_identity_association`, one file each, and what they share
//! (ownership tags, listings across every cluster for crash recovery,
//! health issues as text); `member.rs` all that node groups and add-ons,
//! objects inside a cluster, do alike. Clusters, node groups and add-ons
//! are asynchronous: create, update and delete wait (see [`crate::wait`])
//! for ACTIVE or gone, within the resource's `timeouts` (Terraform's
//! defaults); a pod identity association is there once made.

mod addon;
pub mod auth;
mod cluster;
mod member;
mod node_group;
mod pod_identity;

pub use addon::Addon;
pub use cluster::Cluster;
pub use node_group::NodeGroup;
pub use pod_identity::PodIdentity;

use crate::error::api;
use crate::tags;
use crate::values::string_map;
use crate::Clients;
use std::collections::HashMap;
use strata_provider::{DriverError, Tags};
use strata_value::value::Value;

fn tag_pair(aws: Option<&HashMap<String, String>>) -> (Value, Value) {
    tags::values(aws.cloned().unwrap_or_default())
}

/// Sets `name` when the plan leaves it null (the provider's default).
fn default_top(planned: &mut Value, name: &str, v: Value) {
    if let Value::Object(m) = planned {
        if m.get(name).is_none_or(Value::is_null) {
            m.insert(name.to_string(), v);
        }
    }
}

/// Sets `name` inside the single block `block` when the plan leaves it null.
fn default_in(planned: &mut Value, block: &str, name: &str, v: Value) {
    let Value::Object(m) = planned else {
        return;
    };
    // The block's one element (a list of one, as the AWS provider nests it).
    let element = match m.get_mut(block) {
        Some(Value::List(_, items)) => items.first_mut(),
        Some(other) => Some(other),
        None => None,
    };
    if let Some(Value::Object(b)) = element {
        if b.get(name).is_none_or(Value::is_null) {
            b.insert(name.to_string(), v);
        }
    }
}

async fn retag(c: &Clients, arn: &str, prior: &Value, planned: &Value) -> Result<(), DriverError> {
    let (remove, set) = tags::changes(&string_map(prior, "tags"), &string_map(planned, "tags"));
    if !remove.is_empty() {
        c.eks
            .untag_resource()
            .resource_arn(arn)
            .set_tag_keys(Some(remove))
            .send()
            .await
            .map_err(|e| api("UntagResource", e))?;
    }
    if !set.is_empty() {
        c.eks
            .tag_resource()
            .resource_arn(arn)
            .set_tags(Some(set.into_iter().collect()))
            .send()
            .await
            .map_err(|e| api("TagResource", e))?;
    }
    Ok(())
}

fn has_ownership(aws: Option<&HashMap<String, String>>, t: &Tags) -> bool {
    tags::owned_by(
        aws.into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str())),
        t,
    )
}

/// Crash recovery for the objects inside clusters: `find` looks in one
/// cluster, for every cluster the account has.
async fn in_every_cluster<F, Fut>(c: &Clients, find: F) -> Result<Vec<Value>, DriverError>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<Value>, DriverError>>,
{
    let mut found = Vec::new();
    for cl in cluster_names(c).await? {
        found.extend(find(cl).await?);
    }
    Ok(found)
}

/// Every cluster the account has, across all of ListClusters' pages.
async fn cluster_names(c: &Clients) -> Result<Vec<String>, DriverError> {
    c.eks
        .list_clusters()
        .into_paginator()
        .items()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .map_err(|e| api("ListClusters", e))
}

/// What crash recovery keeps of a listing: each name described in turn
/// (`describe` answers `None` for an object without our ownership tags).
async fn owned<F, Fut>(names: Vec<String>, describe: F) -> Result<Vec<Value>, DriverError>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Result<Option<Value>, DriverError>>,
{
    let mut found = Vec::new();
    for n in names {
        found.extend(describe(n).await?);
    }
    Ok(found)
}

/// An object's health issues as one line: `code: message; …`.
fn issues_text<'a>(issues: impl IntoIterator<Item = (Option<&'a str>, Option<&'a str>)>) -> String {
    issues
        .into_iter()
        .map(|(c, m)| format!("{}: {}", c.unwrap_or("?"), m.unwrap_or("")))
        .collect::<Vec<_>>()
        .join("; ")
}
