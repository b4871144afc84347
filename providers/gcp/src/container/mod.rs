//! Kubernetes Engine clusters and node pools. Every change is an
//! operation, and GKE runs one operation per cluster at a time, so the
//! driver makes its own one at a time per cluster (as the Terraform
//! provider does) and retries `incompatible operation` refusals caused by
//! anyone else's.

use crate::api::{self, carry, container_op, last, ownership_of, tf, user_labels, with_ownership};
use crate::schema::{project, timeouts};
use crate::Ctx;
use async_trait::async_trait;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::time::Duration;
use strata_provider::values::{block, generated_name, list_block_max1};
use strata_provider::wait::timeout;
use strata_provider::{
    AttributeSchema as A, BlockNesting, DriverError, Kind, PlanRequest, Planned, ResourceSchema,
    Tags,
};
use strata_rest::fields::{array, f, from_api, int64, object, out, to_api, Field};
use strata_rest::Method;
use strata_value::types::Type;
use strata_value::value::Value;

mod cluster;
mod node_pool;

pub use cluster::Cluster;
pub use node_pool::NodePool;

const CREATE: Duration = Duration::from_secs(40 * 60);

/// `projects/P/locations/L/clusters/C` of a cluster reference (a name with
/// the object's project and location, or a full id).
fn cluster_path(c: &Ctx, j: &Json, type_name: &str, cluster: &str) -> Result<String, DriverError> {
    if cluster.starts_with("projects/") {
        return Ok(cluster.to_string());
    }
    let location = j["location"]
        .as_str()
        .map(str::to_string)
        .or_else(|| c.region(j, type_name).ok())
        .ok_or_else(|| {
            api::invalid(
                type_name,
                "no location: set `location` (a region or a zone)",
            )
        })?;
    Ok(format!(
        "projects/{}/locations/{location}/clusters/{}",
        c.project(j, type_name)?,
        last(cluster)
    ))
}

/// The queue GKE runs a cluster's operations in: one cluster-level or
/// node-pool create/delete at a time ("Cluster is running incompatible
/// operation"), so strata starts them one after another. Named from what
/// the object holds (`cluster` a name or a full id; project and location
/// when set), the same for every pool of one cluster under one provider.
fn operations_queue(j: &Json, cluster: &str) -> String {
    if let Some(path) = cluster.strip_prefix("projects/") {
        let parts: Vec<&str> = path.split('/').collect();
        if let [project, "locations", location, "clusters", name, ..] = parts[..] {
            return format!("gke:{project}/{location}/{name}");
        }
    }
    let at = |k: &str| j[k].as_str().unwrap_or_default().to_string();
    format!("gke:{}/{}/{}", at("project"), at("location"), last(cluster))
}

/// Every cluster of a project (GKE lists all locations at once, node
/// pools included), each with its `projects/P/locations/L/clusters/C` path.
async fn clusters(c: &Ctx, project: &str) -> Result<Vec<(String, Json)>, DriverError> {
    let url = format!(
        "{}projects/{project}/locations/-/clusters",
        c.endpoints.container
    );
    let all = c.rest.list("list clusters", &url, "clusters").await?;
    Ok(all
        .into_iter()
        .map(|cl| {
            let path = format!(
                "projects/{project}/locations/{}/clusters/{}",
                cl["location"].as_str().unwrap_or_default(),
                cl["name"].as_str().unwrap_or_default()
            );
            (path, cl)
        })
        .collect())
}

fn scope_of(path: &str) -> &str {
    path.split("/clusters/").next().unwrap_or(path)
}

/// Runs one GKE operation on `cluster` (submitted by `submit`) to its end,
/// holding the cluster's lock throughout.
async fn run_op(
    c: &Ctx,
    what: &str,
    cluster: &str,
    t: Duration,
    method: Method,
    url: &str,
    body: Option<&Json>,
) -> Result<(), DriverError> {
    let lock = c.lock(cluster);
    let _held = lock.lock().await;
    let deleting = method == Method::DELETE;
    let op = match c.rest.send(method, url, body).await {
        Ok(r) => r.body,
        // A delete retried after its answer was lost finds it done.
        Err(e) if deleting && e.status == 404 => return Ok(()),
        Err(e) => return Err(c.rest.driver_error(what, &e)),
    };
    container_op(c, what, scope_of(cluster), &op, t).await
}

/// An object given by name or by its path (`train` or
/// `projects/P/locations/L/clusters/train`; a network's name or self
/// link) is the same object, as the google provider compares them: the
/// prior's form is kept, no change and nothing to replace. An object
/// adopted after a crash, or imported, reads the API's form where the
/// configuration may have the other.
fn same_named(p: &mut Planned, prior: &Value, keys: &[&str]) {
    let Some(mut fields) = p.planned.entries().cloned() else {
        return;
    };
    for k in keys {
        let text = |v: &Value| strata_provider::values::string(v, k);
        if let (Some(had), Some(want)) = (text(prior), text(&p.planned)) {
            if had != want && last(&had) == last(&want) {
                fields.insert(k.to_string(), Value::string(had));
                p.requires_replace
                    .retain(|path| path != &vec![k.to_string()]);
            }
        }
    }
    p.planned = Value::Object(fields);
}
