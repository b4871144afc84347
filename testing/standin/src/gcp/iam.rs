//! IAM (`/iam/v1/`: service accounts) and Resource Manager (`/crm/v1/`:
//! projects and their IAM policies).

use super::*;

impl World {
    pub(super) fn iam(&mut self, req: &Req, s: &[&str]) -> Response<Body> {
        match (s, &req.method) {
            (["projects", p, "serviceAccounts"], &Method::GET) => {
                let prefix = format!("projects/{p}/serviceAccounts/");
                let items: Vec<Json> = self
                    .objects
                    .iter()
                    .filter(|(k, _)| k.starts_with(&prefix))
                    .map(|(_, v)| v.clone())
                    .collect();
                page(items, req, "accounts")
            }
            (["projects", p, "serviceAccounts"], &Method::POST) => {
                let b = match body(req) {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                let id = b["accountId"].as_str().unwrap_or("").to_string();
                let valid = (6..=30).contains(&id.len())
                    && id.starts_with(|c: char| c.is_ascii_lowercase())
                    && id
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    && !id.ends_with('-');
                if !valid {
                    return google_rpc(400, "INVALID_ARGUMENT", &format!("Invalid account ID \"{id}\": it must be 6-30 characters, lowercase letters, digits and hyphens, starting with a letter."));
                }
                let email = format!("{id}@{p}.iam.gserviceaccount.com");
                let key = format!("projects/{p}/serviceAccounts/{email}");
                if self.objects.contains_key(&key) {
                    return google_rpc(
                        409,
                        "ALREADY_EXISTS",
                        &format!(
                            "Service account {id} already exists within project projects/{p}."
                        ),
                    );
                }
                let n = self.id();
                let mut sa = json!({
                    "name": key, "projectId": p, "uniqueId": format!("1{n:020}"),
                    "email": email, "etag": "MDEwMjE5MjA=", "oauth2ClientId": format!("1{n:020}"),
                });
                for f in ["displayName", "description"] {
                    if let Some(v) = b["serviceAccount"].get(f) {
                        sa[f] = v.clone();
                    }
                }
                self.objects.insert(key.clone(), sa.clone());
                // IAM is eventually consistent: a new account is not
                // readable for a moment.
                self.unseen.insert(key, 1);
                json(200, sa)
            }
            (["projects", _, "serviceAccounts", who], m) => {
                let Some(key) = self
                    .objects
                    .keys()
                    .find(|k| {
                        k.contains("/serviceAccounts/")
                            && (last(k) == *who
                                || self.objects[*k]["uniqueId"].as_str() == Some(who))
                    })
                    .cloned()
                else {
                    return google_rpc(404, "NOT_FOUND", &format!("Unknown service account {who}"));
                };
                if let Some(n) = self.unseen.get_mut(&key) {
                    if *n > 0 && *m == Method::GET {
                        *n -= 1;
                        return google_rpc(
                            404,
                            "NOT_FOUND",
                            &format!("Unknown service account {who}"),
                        );
                    }
                }
                match *m {
                    Method::GET => json(200, self.objects[&key].clone()),
                    Method::DELETE => {
                        self.objects.remove(&key);
                        json(200, json!({}))
                    }
                    Method::PATCH => {
                        let b = match body(req) {
                            Ok(b) => b,
                            Err(r) => return r,
                        };
                        let Some(mask) = b["updateMask"].as_str() else {
                            return google_rpc(400, "INVALID_ARGUMENT", "update_mask must be set.");
                        };
                        let sa = self.objects.get_mut(&key).map(|o| {
                            for f in mask.split(',') {
                                if !["displayName", "description"].contains(&f) {
                                    continue;
                                }
                                match b["serviceAccount"].get(f) {
                                    Some(v) => o[f] = v.clone(),
                                    None => {
                                        o.as_object_mut().map(|o| o.remove(f));
                                    }
                                }
                            }
                            o.clone()
                        });
                        json(200, sa.unwrap_or_default())
                    }
                    _ => google_rpc(
                        400,
                        "INVALID_ARGUMENT",
                        "no such method on a service account",
                    ),
                }
            }
            _ => google_rpc(404, "NOT_FOUND", "no such method"),
        }
    }

    // ---- Resource Manager -----------------------------------------------

    pub(super) fn crm(&mut self, req: &Req, s: &[&str]) -> Response<Body> {
        let (["projects", pv], &Method::POST) = (s, &req.method) else {
            return google_rpc(404, "NOT_FOUND", "no such method");
        };
        let Some((p, verb)) = pv.split_once(':') else {
            return google_rpc(404, "NOT_FOUND", "no such method");
        };
        let policy = self
            .policies
            .entry(p.to_string())
            .or_insert_with(|| json!({"version": 1, "etag": "BwYAAAAAAAE=", "bindings": [{"role": "roles/owner", "members": ["user:owner@example.com"]}]}))
            .clone();
        match verb {
            "getIamPolicy" => {
                if let Err(r) = body(req) {
                    return r;
                }
                json(200, policy)
            }
            "setIamPolicy" => {
                let b = match body(req) {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                if b["policy"]["etag"] != policy["etag"] {
                    return google_rpc(409, "ABORTED", "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.");
                }
                for bind in b["policy"]["bindings"].as_array().into_iter().flatten() {
                    for m in bind["members"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Json::as_str)
                    {
                        if let Some(email) = m.strip_prefix("serviceAccount:") {
                            if email.ends_with(&format!("@{p}.iam.gserviceaccount.com"))
                                && !self
                                    .objects
                                    .contains_key(&format!("projects/{p}/serviceAccounts/{email}"))
                            {
                                return google_rpc(
                                    400,
                                    "INVALID_ARGUMENT",
                                    &format!("Service account {email} does not exist."),
                                );
                            }
                        }
                    }
                }
                let n = self.id();
                let mut next = b["policy"].clone();
                next["etag"] = json!(format!("BwY{n:013}="));
                next["version"] = json!(1);
                self.policies.insert(p.to_string(), next.clone());
                json(200, next)
            }
            _ => google_rpc(404, "NOT_FOUND", "no such method"),
        }
    }
}
