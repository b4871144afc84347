//! EKS's `UpdateNodegroupVersion`, which moto 5.2.5 lacks: a node group's
//! new launch template version (or Kubernetes version) is kept here and laid
//! over moto's answers for the group, and the call answers with the
//! `Update` EKS documents, successful at once.

use crate::{json, Body};
use hyper::Response;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Default)]
pub struct Versions {
    /// `cluster/name` → the fields the last update set.
    by_group: Mutex<BTreeMap<String, Map<String, Value>>>,
}

impl Versions {
    /// Answers `POST /clusters/C/node-groups/N/update-version`.
    pub fn update(&self, cluster: &str, name: &str, body: &[u8]) -> Response<Body> {
        let asked: Value = serde_json::from_slice(body).unwrap_or_default();
        let mut set = Map::new();
        let mut params = Vec::new();
        if let Some(lt) = asked.get("launchTemplate").filter(|l| l.is_object()) {
            set.insert("launchTemplate".into(), lt.clone());
            for (k, v) in lt.as_object().into_iter().flatten() {
                let key = match k.as_str() {
                    "id" => "LaunchTemplateId",
                    "name" => "LaunchTemplateName",
                    _ => "LaunchTemplateVersion",
                };
                params.push(json!({"type": key, "value": v.as_str().unwrap_or_default()}));
            }
        }
        if let Some(v) = asked.get("version").and_then(Value::as_str) {
            set.insert("version".into(), json!(v));
            params.push(json!({"type": "Version", "value": v}));
        }
        if let Ok(mut by) = self.by_group.lock() {
            by.entry(format!("{cluster}/{name}"))
                .or_default()
                .extend(set);
        }
        let created = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        json(
            200,
            json!({"update": {
                "id": format!("{:032x}", rand::random::<u128>()),
                "status": "Successful",
                "type": "VersionUpdate",
                "params": params,
                "createdAt": created,
                "errors": [],
            }}),
        )
    }

    pub fn forget(&self, cluster: &str, name: &str) {
        if let Ok(mut by) = self.by_group.lock() {
            by.remove(&format!("{cluster}/{name}"));
        }
    }

    /// `group` (a DescribeNodegroup `nodegroup`) with its updated fields.
    pub fn lay_over(&self, group: &mut Map<String, Value>) -> bool {
        let key = format!(
            "{}/{}",
            group
                .get("clusterName")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            group
                .get("nodegroupName")
                .and_then(Value::as_str)
                .unwrap_or_default()
        );
        let Some(set) = self
            .by_group
            .lock()
            .ok()
            .and_then(|by| by.get(&key).cloned())
        else {
            return false;
        };
        group.extend(set);
        true
    }
}
