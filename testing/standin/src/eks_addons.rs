//! EKS add-ons as the EKS API documents them (REST-JSON), in memory.

use crate::aws_error;
use crate::{decode, json, Body};
use hyper::{Method, Response};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const REGION_ACCOUNT: &str = "us-east-1:123456789012";

#[derive(Default)]
pub struct Addons {
    /// (cluster, add-on) → the add-on's fields, and how many Describe calls
    /// remain before a transitional status settles.
    by: BTreeMap<(String, String), (Map<String, Value>, u32)>,
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

impl Addons {
    /// Answers an add-on call; `None` for everything else.
    pub fn handle(&mut self, method: &Method, path: &str, body: &[u8]) -> Option<Response<Body>> {
        let input: Map<String, Value> = serde_json::from_slice(body).unwrap_or_default();
        if let Some(arn) = path.strip_prefix("/tags/") {
            let arn = decode(arn);
            if !arn.contains(":addon/") {
                return None;
            }
            return Some(self.tags(method, &arn, &input));
        }
        let rest = path.strip_prefix("/clusters/")?;
        let parts: Vec<&str> = rest.split('/').collect();
        let cluster = parts.first()?.to_string();
        if parts.get(1) != Some(&"addons") {
            return None;
        }
        Some(match (method, &parts[2..]) {
            (&Method::POST, []) => self.create(cluster, input),
            (&Method::GET, []) => {
                let names: Vec<&String> = self
                    .by
                    .keys()
                    .filter(|(c, _)| *c == cluster)
                    .map(|(_, a)| a)
                    .collect();
                json(200, json!({ "addons": names }))
            }
            (&Method::GET, [name]) => self.describe(cluster, name.to_string()),
            (&Method::POST, [name, "update"]) => self.update(cluster, name.to_string(), input),
            (&Method::DELETE, [name]) => self.delete(cluster, name.to_string()),
            _ => aws_error(404, "ResourceNotFoundException", "No such add-on operation"),
        })
    }

    fn not_found(cluster: &str, name: &str) -> Response<Body> {
        aws_error(
            404,
            "ResourceNotFoundException",
            &format!("No addon: {name} found in cluster: {cluster}"),
        )
    }

    fn create(&mut self, cluster: String, input: Map<String, Value>) -> Response<Body> {
        let Some(name) = input.get("addonName").and_then(Value::as_str) else {
            return aws_error(400, "InvalidParameterException", "addonName is required");
        };
        let key = (cluster.clone(), name.to_string());
        if self.by.contains_key(&key) {
            return aws_error(
                409,
                "ResourceInUseException",
                &format!("Addon already exists: {name}"),
            );
        }
        let mut a = Map::new();
        a.insert("addonName".into(), json!(name));
        a.insert("clusterName".into(), json!(cluster));
        a.insert("status".into(), json!("CREATING"));
        a.insert(
            "addonVersion".into(),
            input
                .get("addonVersion")
                .cloned()
                .unwrap_or(json!("v1.0.0-eksbuild.1")),
        );
        a.insert("health".into(), json!({ "issues": [] }));
        a.insert(
            "addonArn".into(),
            json!(format!(
                "arn:aws:eks:{REGION_ACCOUNT}:addon/{cluster}/{name}/0"
            )),
        );
        a.insert("createdAt".into(), json!(now()));
        a.insert("modifiedAt".into(), json!(now()));
        for k in ["serviceAccountRoleArn", "configurationValues"] {
            if let Some(v) = input.get(k) {
                a.insert(k.into(), v.clone());
            }
        }
        a.insert(
            "tags".into(),
            input.get("tags").cloned().unwrap_or(json!({})),
        );
        let out = json!({ "addon": a });
        self.by.insert(key, (a, 1));
        json(200, out)
    }

    fn describe(&mut self, cluster: String, name: String) -> Response<Body> {
        let key = (cluster.clone(), name.clone());
        let Some((a, pending)) = self.by.get_mut(&key) else {
            return Self::not_found(&cluster, &name);
        };
        let out = json!({ "addon": a.clone() });
        if *pending > 0 {
            *pending -= 1;
        } else {
            match a.get("status").and_then(Value::as_str) {
                Some("DELETING") => {
                    self.by.remove(&key);
                    return Self::not_found(&cluster, &name);
                }
                Some("CREATING" | "UPDATING") => {
                    a.insert("status".into(), json!("ACTIVE"));
                    return json(200, json!({ "addon": a.clone() }));
                }
                _ => {}
            }
        }
        json(200, out)
    }

    fn update(
        &mut self,
        cluster: String,
        name: String,
        input: Map<String, Value>,
    ) -> Response<Body> {
        let Some((a, pending)) = self.by.get_mut(&(cluster.clone(), name.clone())) else {
            return Self::not_found(&cluster, &name);
        };
        for k in [
            "addonVersion",
            "serviceAccountRoleArn",
            "configurationValues",
        ] {
            if let Some(v) = input.get(k) {
                a.insert(k.into(), v.clone());
            }
        }
        a.insert("status".into(), json!("UPDATING"));
        a.insert("modifiedAt".into(), json!(now()));
        *pending = 1;
        json(
            200,
            json!({ "update": {
                "id": format!("{:x}", now() as u64),
                "status": "InProgress",
                "type": "AddonUpdate",
                "params": [],
                "createdAt": now(),
                "errors": []
            }}),
        )
    }

    fn delete(&mut self, cluster: String, name: String) -> Response<Body> {
        let Some((a, pending)) = self.by.get_mut(&(cluster.clone(), name.clone())) else {
            return Self::not_found(&cluster, &name);
        };
        a.insert("status".into(), json!("DELETING"));
        *pending = 1;
        json(200, json!({ "addon": a.clone() }))
    }

    fn tags(&mut self, method: &Method, arn: &str, input: &Map<String, Value>) -> Response<Body> {
        let Some((a, _)) = self
            .by
            .values_mut()
            .find(|(a, _)| a.get("addonArn").and_then(Value::as_str) == Some(arn))
        else {
            return aws_error(404, "ResourceNotFoundException", "No such resource");
        };
        tagging(method, a, "", input)
    }

    /// UntagResource carries its keys in the query string.
    pub fn untag(&mut self, arn: &str, query: &str) -> Option<Response<Body>> {
        let (a, _) = self
            .by
            .values_mut()
            .find(|(a, _)| a.get("addonArn").and_then(Value::as_str) == Some(arn))?;
        Some(tagging(&Method::DELETE, a, query, &Map::new()))
    }
}

/// TagResource (POST), ListTagsForResource (GET) and UntagResource
/// (DELETE, its keys in the query string) on an EKS object's fields.
pub fn tagging(
    method: &Method,
    object: &mut Map<String, Value>,
    query: &str,
    input: &Map<String, Value>,
) -> Response<Body> {
    let Some(tags) = object
        .entry("tags")
        .or_insert_with(|| json!({}))
        .as_object_mut()
    else {
        return aws_error(500, "ServerException", "tags are not an object");
    };
    match *method {
        Method::GET => json(200, json!({ "tags": tags.clone() })),
        Method::POST => {
            if let Some(Value::Object(new)) = input.get("tags") {
                tags.extend(new.clone());
            }
            json(200, json!({}))
        }
        Method::DELETE => {
            for k in query.split('&').filter_map(|p| p.strip_prefix("tagKeys=")) {
                tags.remove(&decode(k));
            }
            json(200, json!({}))
        }
        _ => aws_error(400, "InvalidParameterException", "unsupported"),
    }
}

/// For `lib.rs`: the add-on ARN of an UntagResource path, if it is one.
pub fn untag_arn(method: &Method, path: &str) -> Option<String> {
    if method != Method::DELETE {
        return None;
    }
    let arn = decode(path.strip_prefix("/tags/")?);
    arn.contains(":addon/").then_some(arn)
}
