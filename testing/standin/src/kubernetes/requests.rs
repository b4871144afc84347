//! A request to a resource: read, list (in chunks when asked), create,
//! replace, patch (apply, merge, strategic merge) and delete, each in the
//! API server's words.

use super::*;

impl Store {
    pub(super) fn serve(&mut self, t: Target, req: &Req) -> Result<Response<Body>, Failure> {
        let body = || -> Result<Json, Failure> {
            serde_json::from_slice(&req.body).map_err(|e| {
                (
                    400,
                    "BadRequest".into(),
                    format!("the request body is not JSON (the stand-in takes JSON-formatted YAML only): {e}"),
                )
            })
        };
        let manager = req.param("fieldManager");
        match (&req.method, &t.name) {
            (&Method::GET, None) => Ok(answer(&t, 200, self.list(&t, req))),
            (&Method::GET, Some(_)) => self.read(&t).map(|o| answer(&t, 200, o)),
            (&Method::POST, None) => {
                let mut obj = body()?;
                let name = obj["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if name.is_empty() {
                    return Err(invalid(
                        &t,
                        "",
                        "metadata.name: Required value: name is required",
                    ));
                }
                let t = Target {
                    name: Some(name.clone()),
                    ..t
                };
                if self.objects.contains_key(&t.key()) {
                    return Err(already_exists(&t, &name));
                }
                strip_server_fields(&mut obj);
                let manager = manager.unwrap_or_else(|| "unknown".into());
                self.write(&t, obj, &manager).map(|o| answer(&t, 201, o))
            }
            (&Method::PUT, Some(_)) => {
                let live = self
                    .objects
                    .get(&t.key())
                    .cloned()
                    .ok_or_else(|| gone(&t))?;
                let mut obj = body()?;
                let rv = obj["metadata"]["resourceVersion"]
                    .as_str()
                    .map(str::to_string);
                if rv.is_some() && rv.as_deref() != live["metadata"]["resourceVersion"].as_str() {
                    return Err((409, "Conflict".into(), format!(
                        "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
                        t.kind.qualified(), t.name.clone().unwrap_or_default())));
                }
                strip_server_fields(&mut obj);
                if t.status {
                    let mut merged = live;
                    merged["status"] = obj["status"].take();
                    obj = merged;
                } else {
                    obj["status"] = live["status"].clone();
                    obj["metadata"]["managedFields"] = live["metadata"]["managedFields"].clone();
                }
                let manager = manager.unwrap_or_else(|| "unknown".into());
                self.write(&t, obj, &manager).map(|o| answer(&t, 200, o))
            }
            (&Method::PATCH, Some(name)) => {
                let ctype = req
                    .headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                let patch = body()?;
                if ctype.starts_with("application/apply-patch") {
                    let Some(manager) = manager else {
                        return Err(invalid(
                            &t,
                            name,
                            "fieldManager: Required value: is required for apply patch",
                        ));
                    };
                    let force = req.param("force").as_deref() == Some("true");
                    self.apply(&t, patch, &manager, force)
                        .map(|o| answer(&t, 200, o))
                } else if ctype.starts_with("application/merge-patch+json")
                    || ctype.starts_with("application/strategic-merge-patch+json")
                {
                    let mut obj = self
                        .objects
                        .get(&t.key())
                        .cloned()
                        .ok_or_else(|| gone(&t))?;
                    merge_patch(&mut obj, &patch);
                    let manager = manager.unwrap_or_else(|| "unknown".into());
                    self.write(&t, obj, &manager).map(|o| answer(&t, 200, o))
                } else {
                    Err((415, "UnsupportedMediaType".into(), format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml; got {ctype:?}")))
                }
            }
            (&Method::DELETE, Some(_)) => self.delete(&t).map(|o| answer(&t, 200, o)),
            _ => Err((
                405,
                "MethodNotAllowed".into(),
                "the server does not allow this method on the requested resource".into(),
            )),
        }
    }

    /// A list, in chunks when the client sets `limit`: at most that many
    /// items and never more than [`CHUNK`] (a server may return fewer),
    /// with `metadata.continue` while more remain.
    pub(super) fn list(&self, t: &Target, req: &Req) -> Json {
        let wanted: Vec<(String, Option<String>)> = req
            .param("labelSelector")
            .unwrap_or_default()
            .split(',')
            .filter(|x| !x.is_empty())
            .map(|x| match x.split_once('=') {
                Some((k, v)) => (k.trim_end_matches('=').to_string(), Some(v.to_string())),
                None => (x.to_string(), None),
            })
            .collect();
        let items: Vec<Json> = self
            .objects
            .iter()
            .filter(|(k, _)| {
                k.0 == t.kind.group
                    && k.1 == t.kind.plural
                    && (t.namespace.is_empty() || k.2 == t.namespace)
            })
            .map(|(_, o)| o)
            .filter(|o| {
                wanted.iter().all(|(k, v)| {
                    let have = o["metadata"]["labels"][k].as_str();
                    match v {
                        Some(v) => have == Some(v.as_str()),
                        None => have.is_some(),
                    }
                })
            })
            .cloned()
            .collect();
        let start: usize = req
            .param("continue")
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let end = match req.param("limit").and_then(|l| l.parse::<usize>().ok()) {
            Some(limit) if limit > 0 => (start + limit.min(CHUNK)).min(items.len()),
            _ => items.len(),
        };
        let mut metadata = json!({"resourceVersion": self.version.to_string()});
        if end < items.len() {
            metadata["continue"] = json!(end.to_string());
            metadata["remainingItemCount"] = json!(items.len() - end);
        }
        json!({"kind": format!("{}List", t.kind.kind), "apiVersion": t.kind.api_version(),
               "metadata": metadata, "items": items.get(start..end).unwrap_or(&[])})
    }

    pub(super) fn read(&mut self, t: &Target) -> Result<Json, Failure> {
        let key = t.key();
        let obj = self.objects.get(&key).cloned().ok_or_else(|| gone(t))?;
        let reads = {
            let r = self.reads.entry(key.clone()).or_default();
            *r += 1;
            *r
        };
        if t.kind.plural == "namespaces" && obj["status"]["phase"] == "Terminating" && reads >= 2 {
            self.objects.remove(&key);
            self.objects.retain(|k, _| k.2 != key.3);
            return Err(gone(t));
        }
        if t.kind.kind == "ClusterPolicy"
            && obj["status"]["state"] != "ready"
            && reads >= self.ready_after
        {
            let mut obj = obj;
            obj["status"] = json!({"state": "ready", "conditions": [
                {"type": "Ready", "status": "True", "reason": "Reconciled", "message": ""},
                {"type": "Error", "status": "False", "reason": "Ready", "message": ""}]});
            self.bump(&mut obj);
            self.objects.insert(key, obj.clone());
            return Ok(obj);
        }
        Ok(obj)
    }

    pub(super) fn delete(&mut self, t: &Target) -> Result<Json, Failure> {
        let key = t.key();
        let mut obj = self.objects.get(&key).cloned().ok_or_else(|| gone(t))?;
        if t.kind.plural == "namespaces" {
            if obj["status"]["phase"] != "Terminating" {
                obj["status"]["phase"] = json!("Terminating");
                obj["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
                self.bump(&mut obj);
                self.reads.insert(key.clone(), 0);
                self.objects.insert(key, obj.clone());
            }
            return Ok(obj);
        }
        self.objects.remove(&key);
        if t.kind.plural == "customresourcedefinitions" {
            let group = obj["spec"]["group"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let plural = obj["spec"]["names"]["plural"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            self.kinds
                .retain(|k| !(k.group == group && k.plural == plural));
            self.objects.retain(|k, _| !(k.0 == group && k.1 == plural));
        }
        Ok(
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                  "details": {"name": key.3, "group": key.0, "kind": key.1}}),
        )
    }

    pub(super) fn bump(&mut self, obj: &mut Json) {
        self.version += 1;
        obj["metadata"]["resourceVersion"] = json!(self.version.to_string());
    }
}
