//! Cloud Storage's JSON API (`/storage/v1/`): buckets (with versioning and
//! lifecycle rules), their objects, their IAM policies, and HMAC keys of
//! service accounts, which sign requests to the XML API (`xml.rs`).
//!
//! Objects are kept under `b/BUCKET/o/NAME` in the world's objects, one
//! generation each (a versioned bucket's older generations are not kept:
//! what strata reads is the live object, and a `versions=true` list that
//! a force-destroy walks).

use super::{bad, body, err, now, page, World};
use crate::{json, Body, Req};
use hyper::{Method, Response};
use serde_json::{json, Value as Json};

/// The lifecycle actions Cloud Storage documents.
const ACTIONS: [&str; 3] = [
    "Delete",
    "SetStorageClass",
    "AbortIncompleteMultipartUpload",
];

fn no_content() -> Response<Body> {
    Response::builder()
        .status(204)
        .body(Body::default())
        .unwrap_or_default()
}

/// The `project` a bucket list or insert names.
fn project_param(req: &Req) -> Result<String, Response<Body>> {
    req.param("project").ok_or_else(|| {
        err(
            400,
            "INVALID_ARGUMENT",
            "required",
            "Required parameter: project",
        )
    })
}

fn no_bucket() -> Response<Body> {
    err(
        404,
        "NOT_FOUND",
        "notFound",
        "The specified bucket does not exist.",
    )
}

/// A bucket as the API shows it (`projectId` and `iam` are the stand-in's
/// own notes).
fn bucket_view(o: &Json) -> Json {
    let mut v = o.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("projectId");
        m.remove("iam");
    }
    v
}

/// An object as the JSON API shows it (its bytes are the XML API's).
pub(super) fn object_view(o: &Json) -> Json {
    let mut v = o.clone();
    v.as_object_mut().map(|m| m.remove("data"));
    v
}

/// A rule's action is one Cloud Storage knows.
fn lifecycle_ok(b: &Json) -> Result<(), Response<Body>> {
    for r in b["lifecycle"]["rule"].as_array().into_iter().flatten() {
        let t = r["action"]["type"].as_str().unwrap_or_default();
        if !ACTIONS.contains(&t) {
            return Err(bad(&format!("Invalid lifecycle action type: {t}")));
        }
    }
    Ok(())
}

impl World {
    pub(super) fn storage(&mut self, req: &Req, s: &[&str]) -> Response<Body> {
        match (s, &req.method) {
            (["b"], &Method::GET) => self.buckets(req),
            (["b"], &Method::POST) => self.bucket_insert(req),
            (["b", name], _) => self.bucket(req, name),
            (["b", name, "iam"], _) => self.bucket_iam(req, name),
            (["b", name, "o"], &Method::GET) => {
                let prefix = format!("b/{name}/o/");
                let items: Vec<Json> = self
                    .objects
                    .iter()
                    .filter(|(k, _)| k.starts_with(&prefix))
                    .map(|(_, v)| object_view(v))
                    .collect();
                page(items, req, "items")
            }
            (["b", name, "o", object], &Method::DELETE) => {
                let key = format!("b/{name}/o/{}", crate::decode(object));
                let generation = req.param("generation");
                let matches = self.objects.get(&key).is_some_and(|o| {
                    generation.is_none() || o["generation"].as_str() == generation.as_deref()
                });
                if !matches {
                    return err(404, "NOT_FOUND", "notFound", "No such object.");
                }
                self.objects.remove(&key);
                no_content()
            }
            (["projects", p, "hmacKeys"], m) => self.hmac_keys(req, p, m),
            (["projects", p, "hmacKeys", id], _) => self.hmac_key(req, p, id),
            _ => err(404, "NOT_FOUND", "notFound", "no such method"),
        }
    }

    fn buckets(&self, req: &Req) -> Response<Body> {
        let p = match project_param(req) {
            Ok(p) => p,
            Err(r) => return r,
        };
        let items: Vec<Json> = self
            .objects
            .iter()
            .filter(|(k, v)| {
                k.starts_with("b/") && k.matches('/').count() == 1 && v["projectId"] == p
            })
            .map(|(_, v)| bucket_view(v))
            .collect();
        page(items, req, "items")
    }

    fn bucket_insert(&mut self, req: &Req) -> Response<Body> {
        let p = match project_param(req) {
            Ok(p) => p,
            Err(r) => return r,
        };
        let b = match body(req).and_then(|b| lifecycle_ok(&b).map(|_| b)) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let name = b["name"].as_str().unwrap_or("").to_string();
        let valid = (3..=63).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c))
            && name.starts_with(|c: char| c.is_ascii_alphanumeric());
        if !valid {
            return err(400, "INVALID_ARGUMENT", "invalid", "Invalid bucket name");
        }
        let key = format!("b/{name}");
        if let Some(o) = self.objects.get(&key) {
            let msg = if o["projectId"] == p {
                "Your previous request to create the named bucket succeeded and you already own it."
            } else {
                "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again."
            };
            return err(409, "ALREADY_EXISTS", "conflict", msg);
        }
        let n = self.id();
        let mut o = b.clone();
        o["kind"] = json!("storage#bucket");
        o["id"] = json!(name);
        o["selfLink"] = json!(format!("https://www.googleapis.com/storage/v1/b/{name}"));
        o["projectNumber"] = json!("123456789012");
        o["projectId"] = json!(p);
        o["location"] = json!(b["location"].as_str().unwrap_or("US").to_ascii_uppercase());
        o["locationType"] = json!("region");
        o["storageClass"] = json!(b["storageClass"].as_str().unwrap_or("STANDARD"));
        o["timeCreated"] = json!(now());
        o["updated"] = json!(now());
        o["metageneration"] = json!("1");
        o["etag"] = json!(format!("CA{n}="));
        let iam = &mut o["iamConfiguration"];
        if iam.get("publicAccessPrevention").is_none() {
            iam["publicAccessPrevention"] = json!("inherited");
        }
        if iam.get("uniformBucketLevelAccess").is_none() {
            iam["uniformBucketLevelAccess"] = json!({"enabled": false});
        }
        // A new bucket's policy: the project's owners, editors and viewers.
        o["iam"] = json!({
            "kind": "storage#policy",
            "resourceId": format!("projects/_/buckets/{name}"),
            "version": 1,
            "etag": "CAE=",
            "bindings": [
                {"role": "roles/storage.legacyBucketOwner", "members": [format!("projectOwner:{p}"), format!("projectEditor:{p}")]},
                {"role": "roles/storage.legacyBucketReader", "members": [format!("projectViewer:{p}")]},
            ],
        });
        self.objects.insert(key, o.clone());
        json(200, bucket_view(&o))
    }

    fn bucket(&mut self, req: &Req, name: &str) -> Response<Body> {
        let key = format!("b/{name}");
        let Some(current) = self.objects.get(&key).cloned() else {
            return no_bucket();
        };
        match req.method {
            Method::GET => json(200, bucket_view(&current)),
            Method::DELETE => {
                if self
                    .objects
                    .keys()
                    .any(|k| k.starts_with(&format!("{key}/o/")))
                {
                    return err(
                        409,
                        "FAILED_PRECONDITION",
                        "conflict",
                        "The bucket you tried to delete is not empty.",
                    );
                }
                self.objects.remove(&key);
                no_content()
            }
            Method::PATCH => self.bucket_patch(req, key, current),
            _ => err(405, "INVALID_ARGUMENT", "invalid", "method not allowed"),
        }
    }

    fn bucket_patch(&mut self, req: &Req, key: String, current: Json) -> Response<Body> {
        let b = match body(req).and_then(|b| lifecycle_ok(&b).map(|_| b)) {
            Ok(b) => b,
            Err(r) => return r,
        };
        if b.get("location").is_some_and(|l| {
            l.as_str().map(str::to_ascii_uppercase).as_deref() != current["location"].as_str()
        }) {
            return err(
                400,
                "INVALID_ARGUMENT",
                "invalid",
                "The bucket's location cannot be changed.",
            );
        }
        let mut next = current.clone();
        for (k, v) in b.as_object().into_iter().flatten() {
            if k == "iamConfiguration" {
                for (ik, iv) in v.as_object().into_iter().flatten() {
                    next[k][ik] = iv.clone();
                }
            } else if k != "location" {
                next[k] = v.clone();
            }
        }
        let mg = next["metageneration"]
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(1)
            + 1;
        next["metageneration"] = json!(mg.to_string());
        next["updated"] = json!(now());
        self.objects.insert(key, next.clone());
        json(200, bucket_view(&next))
    }

    /// `b/BUCKET/iam`: its policy read (GET) or replaced (PUT) with the
    /// etag it was read with, a stale one refused with 412.
    fn bucket_iam(&mut self, req: &Req, name: &str) -> Response<Body> {
        let key = format!("b/{name}");
        let Some(bucket) = self.objects.get(&key) else {
            return no_bucket();
        };
        let policy = bucket["iam"].clone();
        match req.method {
            Method::GET => json(200, policy),
            Method::PUT => {
                let mut new = match body(req) {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                if new["etag"].is_string() && new["etag"] != policy["etag"] {
                    return err(
                        412,
                        "FAILED_PRECONDITION",
                        "conditionNotMet",
                        "At least one of the pre-conditions you specified did not hold.",
                    );
                }
                let n = self.id();
                new["kind"] = json!("storage#policy");
                new["resourceId"] = policy["resourceId"].clone();
                new["version"] = json!(1);
                new["etag"] = json!(format!("CA{n}="));
                if let Some(b) = self.objects.get_mut(&key) {
                    b["iam"] = new.clone();
                }
                json(200, new)
            }
            _ => err(405, "INVALID_ARGUMENT", "invalid", "method not allowed"),
        }
    }

    /// `projects/P/hmacKeys`: list (GET) or make (POST) a key of a
    /// service account the project has. The secret is in the create's
    /// answer only.
    fn hmac_keys(&mut self, req: &Req, project: &str, m: &Method) -> Response<Body> {
        match *m {
            Method::GET => {
                let prefix = format!("hmac/{project}/");
                let email = req.param("serviceAccountEmail");
                let items: Vec<Json> = self
                    .objects
                    .iter()
                    .filter(|(k, v)| {
                        k.starts_with(&prefix)
                            && email
                                .as_deref()
                                .is_none_or(|e| v["metadata"]["serviceAccountEmail"] == e)
                    })
                    .map(|(_, v)| v["metadata"].clone())
                    .collect();
                page(items, req, "items")
            }
            Method::POST => {
                let Some(email) = req.param("serviceAccountEmail") else {
                    return bad("Required parameter: serviceAccountEmail");
                };
                let account = format!("projects/{project}/serviceAccounts/{email}");
                if !self.objects.contains_key(&account) {
                    return err(
                        404,
                        "NOT_FOUND",
                        "notFound",
                        &format!("Service account {email} does not exist."),
                    );
                }
                let n = self.id();
                // Access ids are 61 characters (GOOG1E and base32),
                // secrets 40 of base64.
                let access = format!("GOOG1E{:055}", n).to_ascii_uppercase();
                let secret = format!("{:040x}", u128::from(n) * 0x9e37_79b9_7f4a_7c15);
                let secret = &secret[secret.len() - 40..];
                let metadata = json!({
                    "kind": "storage#hmacKeyMetadata",
                    "id": format!("{project}/{access}"),
                    "accessId": access,
                    "projectId": project,
                    "serviceAccountEmail": email,
                    "state": "ACTIVE",
                    "timeCreated": now(),
                    "updated": now(),
                    "etag": format!("CA{n}="),
                });
                self.objects.insert(
                    format!("hmac/{project}/{access}"),
                    json!({"metadata": metadata, "secret": secret}),
                );
                json(
                    200,
                    json!({"kind": "storage#hmacKey", "metadata": metadata, "secret": secret}),
                )
            }
            _ => err(405, "INVALID_ARGUMENT", "invalid", "method not allowed"),
        }
    }

    /// `projects/P/hmacKeys/ID`: read, change its state, or delete it
    /// (only once INACTIVE, as Cloud Storage requires).
    fn hmac_key(&mut self, req: &Req, project: &str, access: &str) -> Response<Body> {
        let key = format!("hmac/{project}/{access}");
        let Some(current) = self.objects.get(&key).cloned() else {
            return err(404, "NOT_FOUND", "notFound", "Access ID not found.");
        };
        match req.method {
            Method::GET => json(200, current["metadata"].clone()),
            Method::PUT => {
                let b = match body(req) {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                let state = b["state"].as_str().unwrap_or_default();
                if !["ACTIVE", "INACTIVE"].contains(&state) {
                    return bad(&format!("Invalid HMAC key state: {state}"));
                }
                let mut next = current;
                next["metadata"]["state"] = json!(state);
                next["metadata"]["updated"] = json!(now());
                self.objects.insert(key, next.clone());
                json(200, next["metadata"].clone())
            }
            Method::DELETE => {
                if current["metadata"]["state"] != "INACTIVE" {
                    return bad("Cannot delete keys in 'ACTIVE' state.");
                }
                self.objects.remove(&key);
                no_content()
            }
            _ => err(405, "INVALID_ARGUMENT", "invalid", "method not allowed"),
        }
    }

    /// The key `access` and its service account, when active.
    pub(super) fn hmac_secret(&self, access: &str) -> Option<(String, String)> {
        self.objects
            .iter()
            .filter(|(k, _)| k.starts_with("hmac/") && k.ends_with(&format!("/{access}")))
            .map(|(_, v)| v)
            .find(|v| v["metadata"]["state"] == "ACTIVE")
            .map(|v| {
                let email = v["metadata"]["serviceAccountEmail"]
                    .as_str()
                    .unwrap_or_default();
                let secret = v["secret"].as_str().unwrap_or_default();
                (secret.to_string(), email.to_string())
            })
    }

    /// Whether `member` may read and write objects of `bucket`: a role
    /// that grants it in the bucket's policy.
    pub(super) fn may_use_objects(&self, bucket: &str, member: &str) -> bool {
        const ROLES: [&str; 3] = [
            "roles/storage.objectUser",
            "roles/storage.objectAdmin",
            "roles/storage.admin",
        ];
        let Some(b) = self.objects.get(&format!("b/{bucket}")) else {
            return false;
        };
        b["iam"]["bindings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|x| x["role"].as_str().is_some_and(|r| ROLES.contains(&r)))
            .any(|x| {
                x["members"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|m| m == member)
            })
    }
}

impl super::Gcp {
    /// Puts an object in a bucket (as a user's upload would).
    pub fn put_object(&self, bucket: &str, name: &str) {
        self.world().objects.insert(
            format!("b/{bucket}/o/{name}"),
            json!({"kind": "storage#object", "name": name, "bucket": bucket, "generation": "1"}),
        );
    }
}
