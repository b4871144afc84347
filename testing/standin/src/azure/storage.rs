//! Storage and what guards it: the rules Azure Storage puts on account
//! and container names, a blob service every account has before anyone
//! writes it, management locks (a `CanNotDelete` lock refuses deleting
//! its scope and everything under it; `ReadOnly` refuses writes too), and
//! the blobs themselves, which the S3 gateway stand-in reads and writes
//! ([`Blobs`]).

use super::{error, World};
use crate::{json, Body};
use hyper::{Method, Response};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// A blob's versions, the current one last.
pub type Versions = Vec<Vec<u8>>;

impl World {
    /// Names and parents the service refuses before a PUT of `key` at
    /// (lower-case) `id` goes further.
    pub(super) fn storage_rules(
        &self,
        key: &str,
        id: &str,
        name: &str,
        body: &Json,
    ) -> Option<Response<Body>> {
        match key {
            "microsoft.storage/storageaccounts" if !account_name_ok(name) => Some(error(
                400,
                "AccountNameInvalid",
                &format!("{name} is not a valid storage account name. Storage account name must be between 3 and 24 characters in length and use numbers and lower-case letters only."),
            )),
            "microsoft.storage/storageaccounts/blobservices/containers" if !container_name_ok(name) => Some(error(
                400,
                "InvalidResourceName",
                &format!("The resource name '{name}' is invalid: a container name is 3-63 lower-case letters, digits and single hyphens, starting with a letter or digit."),
            )),
            "microsoft.storage/storageaccounts/blobservices"
            | "microsoft.storage/storageaccounts/blobservices/containers"
            | "microsoft.storage/storageaccounts/managementpolicies"
            | "microsoft.managedidentity/userassignedidentities/federatedidentitycredentials" => {
                let parent = parent_of(key, id);
                let missing = !self.objects.contains_key(&parent);
                missing.then(|| error(404, "ParentResourceNotFound", &format!("Failed to perform 'write' on resource(s) of type '{}', because the parent resource '{parent}' could not be found.", super::type_name(key))))
                    .or_else(|| self.child_rules(key, name, body))
            }
            "microsoft.authorization/locks" => {
                let scope = id.split_once("/providers/microsoft.authorization/locks/").map_or("", |(s, _)| s);
                if !self.objects.contains_key(scope) {
                    return Some(error(404, "ResourceNotFound", &format!("The Resource '{scope}' was not found.")));
                }
                let level = body["properties"]["level"].as_str().unwrap_or("");
                (!matches!(level, "CanNotDelete" | "ReadOnly")).then(|| error(
                    400,
                    "LockLevelInvalid",
                    &format!("The lock level '{level}' is not valid: CanNotDelete or ReadOnly."),
                ))
            }
            _ => None,
        }
    }

    fn child_rules(&self, key: &str, name: &str, body: &Json) -> Option<Response<Body>> {
        let p = &body["properties"];
        match key {
            "microsoft.storage/storageaccounts/blobservices"
            | "microsoft.storage/storageaccounts/managementpolicies"
                if name != "default" =>
            {
                Some(error(
                    400,
                    "InvalidResourceName",
                    &format!("The resource name '{name}' is invalid: it must be 'default'."),
                ))
            }
            "microsoft.storage/storageaccounts/managementpolicies" => {
                let rules = p["policy"]["rules"].as_array().cloned().unwrap_or_default();
                let bad = rules.iter().find(|r| {
                    r["type"] != "Lifecycle"
                        || r["name"].as_str().is_none_or(str::is_empty)
                        || r["definition"]["filters"]["blobTypes"]
                            .as_array()
                            .is_none_or(Vec::is_empty)
                });
                bad.map(|r| error(400, "InvalidManagementPolicyRule", &format!("A rule needs a name, type 'Lifecycle' and blobTypes in its filters: {r}")))
            }
            "microsoft.managedidentity/userassignedidentities/federatedidentitycredentials" => {
                let issuer_ok = p["issuer"]
                    .as_str()
                    .is_some_and(|i| i.starts_with("https://"));
                let audiences = p["audiences"].as_array().map_or(0, Vec::len);
                let subject_ok = p["subject"].as_str().is_some_and(|s| !s.is_empty());
                (!issuer_ok || audiences != 1 || !subject_ok).then(|| error(
                    400,
                    "BadRequest",
                    "A federated identity credential needs an https issuer, a subject and exactly one audience.",
                ))
            }
            _ => None,
        }
    }

    /// The lock that refuses `method` on `path`: one on it
    /// or a scope above it, or, for a delete, one on something under it
    /// (deleting a group deletes what it holds). A lock does not guard
    /// itself.
    pub(super) fn lock_refusing(&self, method: &Method, path: &str) -> Option<Response<Body>> {
        let id = &path.to_ascii_lowercase();
        if super::type_key(id) == "microsoft.authorization/locks" {
            return None;
        }
        let delete = *method == Method::DELETE;
        let within =
            |inner: &str, outer: &str| inner == outer || inner.starts_with(&format!("{outer}/"));
        let lock = self.objects.iter().find(|(k, l)| {
            let Some((scope, _)) = k.split_once("/providers/microsoft.authorization/locks/") else {
                return false;
            };
            let level = l["properties"]["level"].as_str().unwrap_or("");
            let refuses = delete || level == "ReadOnly";
            refuses && (within(id, scope) || (delete && within(scope, id)))
        })?;
        let scope = lock
            .0
            .split_once("/providers/microsoft.authorization/locks/")
            .map(|(s, _)| s)
            .unwrap_or("");
        let scope = self
            .objects
            .get(scope)
            .and_then(|o| o["id"].as_str())
            .unwrap_or(scope)
            .to_string();
        let what = if delete { "delete" } else { "write" };
        Some(error(409, "ScopeLocked", &format!("The scope '{path}' cannot perform {what} operation because following scope(s) are locked: '{scope}'. Please remove the lock and try again.")))
    }

    /// `GET SCOPE/providers/Microsoft.Authorization/locks`: the locks at
    /// the scope and under it.
    pub(super) fn list_locks(&self, scope: &str) -> Response<Body> {
        let scope = scope.to_ascii_lowercase();
        let value: Vec<Json> = self
            .objects
            .iter()
            .filter(|(k, _)| {
                super::type_key(k) == "microsoft.authorization/locks"
                    && k.starts_with(&format!("{scope}/"))
            })
            .map(|(_, v)| v.clone())
            .collect();
        json(200, json!({ "value": value }))
    }

    /// A GET of an account's blob service before anyone wrote it: every
    /// account has one, with the service's defaults.
    pub(super) fn default_blob_service(&self, path: &str) -> Option<Response<Body>> {
        let id = path.to_ascii_lowercase();
        let account = id.strip_suffix("/blobservices/default")?;
        self.objects.get(account)?;
        Some(json(
            200,
            json!({
                "id": path, "name": "default",
                "type": "Microsoft.Storage/storageAccounts/blobServices",
                "properties": {"deleteRetentionPolicy": {"enabled": false}},
            }),
        ))
    }

    /// Blobs of containers no longer there go with them.
    pub(super) fn drop_orphan_blobs(&mut self) {
        let objects = &self.objects;
        self.blobs.retain(|c, _| objects.contains_key(c));
    }
}

/// The parent's (lower-case) id of a child at `id`.
fn parent_of(key: &str, id: &str) -> String {
    let own = match key {
        "microsoft.storage/storageaccounts/blobservices/containers" => 4,
        _ => 2,
    };
    let segs: Vec<&str> = id.split('/').collect();
    segs[..segs.len().saturating_sub(own)].join("/")
}

fn account_name_ok(name: &str) -> bool {
    (3..=24).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

fn container_name_ok(name: &str) -> bool {
    (3..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The blob data of the stand-in's storage accounts, for the S3 gateway
/// stand-in: by container (its lower-case Resource Manager id), then by
/// blob name, each blob's versions. What the management plane says about
/// them (the container there, versioning on) comes from the same world.
#[derive(Clone)]
pub struct Blobs(pub(super) Arc<Mutex<World>>);

impl Blobs {
    fn world(&self) -> std::sync::MutexGuard<'_, World> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every resource, as Resource Manager holds it.
    pub fn resources(&self) -> Vec<Json> {
        self.world().objects.values().cloned().collect()
    }

    /// Writes a blob: a new version when the account keeps versions,
    /// else in place. False when the container is not there.
    pub fn put(&self, container: &str, name: &str, data: Vec<u8>) -> bool {
        let mut w = self.world();
        let container = container.to_ascii_lowercase();
        if !w.objects.contains_key(&container) {
            return false;
        }
        let account = container
            .split("/blobservices/")
            .next()
            .unwrap_or("")
            .to_string();
        let versioned = w
            .objects
            .get(&format!("{account}/blobservices/default"))
            .is_some_and(|s| s["properties"]["isVersioningEnabled"] == true);
        let versions = w
            .blobs
            .entry(container)
            .or_default()
            .entry(name.to_string())
            .or_default();
        if !versioned {
            versions.clear();
        }
        versions.push(data);
        true
    }

    /// A blob's current version.
    pub fn get(&self, container: &str, name: &str) -> Read {
        let w = self.world();
        let container = container.to_ascii_lowercase();
        if !w.objects.contains_key(&container) {
            return Read::NoContainer;
        }
        match w
            .blobs
            .get(&container)
            .and_then(|b| b.get(name))
            .and_then(|v| v.last())
        {
            Some(data) => Read::Blob(data.clone()),
            None => Read::NoBlob,
        }
    }

    /// Deletes a blob with all its versions (the stand-in keeps no
    /// versions of a deleted blob, as Azure would with versioning on).
    pub fn delete(&self, container: &str, name: &str) {
        let mut w = self.world();
        if let Some(b) = w.blobs.get_mut(&container.to_ascii_lowercase()) {
            b.remove(name);
        }
    }
}

/// What reading a blob finds.
pub enum Read {
    NoContainer,
    NoBlob,
    Blob(Vec<u8>),
}

/// The blob map's type, for [`World`].
pub(super) type BlobMap = BTreeMap<String, BTreeMap<String, Versions>>;
