//! EKS Pod Identity associations as the EKS API documents them
//! (REST-JSON under `/clusters/{name}/pod-identity-associations`), in
//! memory: moto 5.2.5 has none. An association is there once made (no
//! status), its id `a-` and 17 lowercase letters and digits, one per
//! namespace and service account in a cluster.

use crate::aws_error;
use crate::eks_addons::tagging;
use crate::{decode, json, Body};
use hyper::{Method, Response};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const REGION_ACCOUNT: &str = "us-east-1:123456789012";

#[derive(Default)]
pub struct Associations {
    /// (cluster, association id) → the association's fields.
    by: BTreeMap<(String, String), Map<String, Value>>,
    made: u64,
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

/// The fields ListPodIdentityAssociations gives of each.
const SUMMARY: [&str; 6] = [
    "clusterName",
    "namespace",
    "serviceAccount",
    "associationArn",
    "associationId",
    "ownerArn",
];

impl Associations {
    /// Answers a pod identity call (or tagging of an association); `None`
    /// for everything else.
    pub fn handle(
        &mut self,
        method: &Method,
        path: &str,
        query: &str,
        body: &[u8],
    ) -> Option<Response<Body>> {
        let input: Map<String, Value> = serde_json::from_slice(body).unwrap_or_default();
        if let Some(arn) = path.strip_prefix("/tags/") {
            let arn = decode(arn);
            if !arn.contains(":podidentityassociation/") {
                return None;
            }
            return Some(self.tags(method, &arn, query, &input));
        }
        let rest = path.strip_prefix("/clusters/")?;
        let parts: Vec<&str> = rest.split('/').collect();
        let cluster = parts.first()?.to_string();
        if parts.get(1) != Some(&"pod-identity-associations") {
            return None;
        }
        Some(match (method, &parts[2..]) {
            (&Method::POST, []) => self.create(cluster, &input),
            (&Method::GET, []) => self.list(&cluster, query),
            (&Method::GET, [id]) => self.answer(&cluster, id),
            (&Method::POST, [id]) => self.update(&cluster, id, &input),
            (&Method::DELETE, [id]) => {
                let out = self.answer(&cluster, id);
                self.by.remove(&(cluster, id.to_string()));
                out
            }
            _ => aws_error(404, "ResourceNotFoundException", "No such operation"),
        })
    }

    fn not_found(id: &str) -> Response<Body> {
        aws_error(
            404,
            "ResourceNotFoundException",
            &format!("Association {id} not found"),
        )
    }

    fn create(&mut self, cluster: String, input: &Map<String, Value>) -> Response<Body> {
        let field = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
        let (Some(ns), Some(sa), Some(role)) = (
            field("namespace"),
            field("serviceAccount"),
            field("roleArn"),
        ) else {
            return aws_error(
                400,
                "InvalidParameterException",
                "namespace, serviceAccount and roleArn are required",
            );
        };
        let taken = self.by.iter().any(|((c, _), a)| {
            *c == cluster && a["namespace"] == json!(ns) && a["serviceAccount"] == json!(sa)
        });
        if taken {
            return aws_error(
                409,
                "ResourceInUseException",
                "Association already exists for this service account",
            );
        }
        self.made += 1;
        let id = format!("a-{:017x}", self.made);
        let id = &id[..19];
        let mut a = Map::new();
        a.insert("clusterName".into(), json!(cluster));
        a.insert("namespace".into(), json!(ns));
        a.insert("serviceAccount".into(), json!(sa));
        a.insert("roleArn".into(), json!(role));
        a.insert("associationId".into(), json!(id));
        a.insert(
            "associationArn".into(),
            json!(format!(
                "arn:aws:eks:{REGION_ACCOUNT}:podidentityassociation/{cluster}/{id}"
            )),
        );
        a.insert("createdAt".into(), json!(now()));
        a.insert("modifiedAt".into(), json!(now()));
        a.insert("disableSessionTags".into(), json!(false));
        a.insert(
            "tags".into(),
            input.get("tags").cloned().unwrap_or(json!({})),
        );
        let out = json!({ "association": a });
        self.by.insert((cluster, id.to_string()), a);
        json(200, out)
    }

    fn list(&self, cluster: &str, query: &str) -> Response<Body> {
        let wanted: Vec<(String, String)> = query
            .split('&')
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.to_string(), decode(v)))
            .collect();
        let matches = |a: &Map<String, Value>| {
            wanted.iter().all(|(k, v)| match k.as_str() {
                "namespace" | "serviceAccount" => a[k.as_str()] == json!(v),
                _ => true,
            })
        };
        let found: Vec<Value> = self
            .by
            .iter()
            .filter(|((c, _), a)| c == cluster && matches(a))
            .map(|(_, a)| {
                let summary: Map<String, Value> = SUMMARY
                    .iter()
                    .filter_map(|k| Some((k.to_string(), a.get(*k)?.clone())))
                    .collect();
                Value::Object(summary)
            })
            .collect();
        json(200, json!({ "associations": found }))
    }

    fn answer(&self, cluster: &str, id: &str) -> Response<Body> {
        match self.by.get(&(cluster.to_string(), id.to_string())) {
            Some(a) => json(200, json!({ "association": a })),
            None => Self::not_found(id),
        }
    }

    fn update(&mut self, cluster: &str, id: &str, input: &Map<String, Value>) -> Response<Body> {
        let Some(a) = self.by.get_mut(&(cluster.to_string(), id.to_string())) else {
            return Self::not_found(id);
        };
        if let Some(role) = input.get("roleArn") {
            a.insert("roleArn".into(), role.clone());
        }
        a.insert("modifiedAt".into(), json!(now()));
        json(200, json!({ "association": a.clone() }))
    }

    fn tags(
        &mut self,
        method: &Method,
        arn: &str,
        query: &str,
        input: &Map<String, Value>,
    ) -> Response<Body> {
        let Some(a) = self
            .by
            .values_mut()
            .find(|a| a.get("associationArn").and_then(Value::as_str) == Some(arn))
        else {
            return aws_error(404, "ResourceNotFoundException", "No such resource");
        };
        tagging(method, a, query, input)
    }
}
