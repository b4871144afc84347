//! `data "kubernetes_nodes"`: the cluster's nodes, optionally those with
//! given labels, as the Terraform kubernetes provider's data source of the
//! name has them (`nodes[*].metadata[0].labels`,
//! `nodes[*].status[0].allocatable`): what a configuration asks to see the
//! GPUs a pool's nodes offer, and how strata measures time to first GPU.

use crate::conn::Conn;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use strata_provider::values::list_block_max1;
use strata_provider::{AttributeSchema as A, DriverError, ResourceSchema};
use strata_value::json::{plain_json, value_from_json};
use strata_value::types::Type;
use strata_value::value::Value;

pub const DATA: &str = "kubernetes_nodes";

/// One node as the data source gives it.
fn node_type() -> Type {
    let strings = || Type::map(Type::String);
    let object = |fields: Vec<(&str, Type)>| {
        Type::object(
            fields
                .into_iter()
                .map(|(k, t)| (k.to_string(), t))
                .collect::<BTreeMap<_, _>>(),
        )
    };
    object(vec![
        (
            "metadata",
            Type::list(object(vec![
                ("name", Type::String),
                ("labels", strings()),
                ("annotations", strings()),
                ("uid", Type::String),
                ("resource_version", Type::String),
            ])),
        ),
        (
            "spec",
            Type::list(object(vec![
                ("provider_id", Type::String),
                ("unschedulable", Type::Bool),
            ])),
        ),
        (
            "status",
            Type::list(object(vec![
                ("allocatable", strings()),
                ("capacity", strings()),
            ])),
        ),
    ])
}

pub fn schema() -> ResourceSchema {
    let mut s = ResourceSchema::of_attributes(vec![(
        "nodes",
        A::computed(Type::list(node_type()), "The nodes, in name order."),
    )]);
    s.blocks.insert(
        "metadata".into(),
        list_block_max1(vec![(
            "labels",
            A::optional(Type::map(Type::String), "Only nodes with all these labels."),
        )]),
    );
    s
}

/// A node's fields the data source keeps, in Terraform's spelling.
fn node(n: &Json) -> Json {
    let m = &n["metadata"];
    let or_empty = |v: &Json| match v.is_object() {
        true => v.clone(),
        false => json!({}),
    };
    json!({
        "metadata": [{
            "name": m["name"],
            "labels": or_empty(&m["labels"]),
            "annotations": or_empty(&m["annotations"]),
            "uid": m["uid"],
            "resource_version": m["resourceVersion"],
        }],
        "spec": [{
            "provider_id": n["spec"]["providerID"],
            "unschedulable": n["spec"]["unschedulable"].as_bool().unwrap_or(false),
        }],
        "status": [{
            "allocatable": or_empty(&n["status"]["allocatable"]),
            "capacity": or_empty(&n["status"]["capacity"]),
        }],
    })
}

pub async fn read(c: &Conn, config: &Value) -> Result<Value, DriverError> {
    let api = c.api(DATA)?;
    let tf = plain_json(config);
    let labels = tf["metadata"][0]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let selector: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    let op = "listing nodes";
    let mut items = crate::objects::list(api, op, "/api/v1/nodes", &selector.join(",")).await?;
    items.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    let nodes = Json::Array(items.iter().map(node).collect());
    let nodes =
        value_from_json(&nodes, &Type::list(node_type())).map_err(|e| DriverError::Api {
            operation: op.into(),
            detail: e,
            retryable: false,
        })?;
    let mut fields = config.entries().cloned().unwrap_or_default();
    fields.insert("nodes".into(), nodes);
    Ok(Value::Object(fields))
}
