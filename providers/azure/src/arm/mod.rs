//! One kind for every Resource Manager type that lives the ARM way:
//! PUT creates or updates (a long-running operation), GET reads, DELETE
//! deletes, a list call per parent reads many at once. A [`Spec`] says
//! where the type lives, its API version, its fields and what only
//! replacing can change.

use crate::api::finish;
use crate::Ctx;
use async_trait::async_trait;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::time::Duration;
use strata_provider::wait::timeout;
use strata_provider::{
    AttributeSchema as A, DriverError, Kind, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_rest::fields::{from_api, to_api, Field};
use strata_rest::labels;
use strata_rest::Method;
use strata_value::types::Type;
use strata_value::value::Value;

mod identity;
mod kubernetes;
mod network;
mod storage;

#[cfg(test)]
mod examples;

use identity::LOCKS_API;
pub use identity::{FEDERATED_IDENTITY_CREDENTIAL, MANAGEMENT_LOCK, USER_ASSIGNED_IDENTITY};
pub use kubernetes::{KUBERNETES_CLUSTER, NODE_POOL};
pub use network::{NETWORK_SECURITY_GROUP, RESOURCE_GROUP, SUBNET, VIRTUAL_NETWORK};
pub use storage::{STORAGE_ACCOUNT, STORAGE_CONTAINER, STORAGE_MANAGEMENT_POLICY};

/// Every type that is one [`Resource`].
pub static ALL: [&Spec; 12] = [
    &RESOURCE_GROUP,
    &VIRTUAL_NETWORK,
    &SUBNET,
    &NETWORK_SECURITY_GROUP,
    &USER_ASSIGNED_IDENTITY,
    &FEDERATED_IDENTITY_CREDENTIAL,
    &MANAGEMENT_LOCK,
    &KUBERNETES_CLUSTER,
    &NODE_POOL,
    &STORAGE_ACCOUNT,
    &STORAGE_CONTAINER,
    &STORAGE_MANAGEMENT_POLICY,
];

const TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// Where a type's resources live.
pub enum Scope {
    /// `/subscriptions/S/resourceGroups/NAME`.
    Group,
    /// `/subscriptions/S/resourceGroups/RG/providers/PROVIDER/NAME`.
    InGroup,
    /// `…/providers/PROVIDER/PARENT/SEGMENT/NAME`, the parent named by an
    /// attribute (`virtual_network_name`).
    UnderName {
        parent: &'static str,
        segment: &'static str,
    },
    /// `PARENT_ID/SEGMENT/NAME`, the parent's id an attribute
    /// (`kubernetes_cluster_id`).
    UnderId {
        parent: &'static str,
        segment: &'static str,
    },
    /// `PARENT_ID/PATH`: the one object of its kind its parent has
    /// (`managementPolicies/default`), with no name of its own.
    Singleton {
        parent: &'static str,
        path: &'static str,
    },
}

/// Settings ARM keeps as a child object of the resource rather than in it
/// (a storage account's `blobServices/default`), which azurerm shows as a
/// block of the resource: written by a PUT of their own after the
/// resource's, read with it.
pub struct Settings {
    /// The child's path under the resource.
    pub path: &'static str,
    /// The block ↔ the child object.
    pub fields: &'static [Field],
    /// The block as the service has it before anyone sets it, which an
    /// update whose configuration dropped the block puts back.
    pub defaults: fn() -> Json,
}

pub struct Spec {
    pub type_name: &'static str,
    /// `Microsoft.Network/virtualNetworks` (the parent's, for children).
    pub provider: &'static str,
    pub api_version: &'static str,
    pub scope: Scope,
    /// Has a `location`.
    pub located: bool,
    /// Where its tags are in the API object (`tags`, `properties.tags`).
    pub tags: Option<&'static str>,
    pub fields: &'static [Field],
    pub schema: fn() -> ResourceSchema,
    /// Nested attributes only replacing can change: `[block, attribute]`.
    pub nested_force_new: &'static [[&'static str; 2]],
    /// Properties the service or another resource manages, carried from
    /// the current object into an update's PUT (a PUT replaces all):
    /// a network's subnets, a subnet's security group.
    pub keep: &'static [&'static str],
    /// Conversions the field table cannot say: Terraform → API, API → Terraform.
    pub to_api: Option<fn(&Json, &mut Json)>,
    pub from_api: Option<fn(&Json, &mut Json)>,
    /// A POST action whose answer holds the object's kubeconfigs
    /// (`listClusterUserCredential`), asked after every read: its
    /// `kubeconfigs[0]` reaches `from_api` as `api["strata:kubeconfig"]`.
    pub credentials: Option<&'static str>,
    pub settings: Option<&'static Settings>,
    /// The attributes naming the queues ARM writes this type's objects in
    /// one at a time ([`strata_provider::Driver::queues`]).
    pub queues: &'static [&'static str],
}

pub struct Resource(pub &'static Spec);

pub(crate) fn s() -> Type {
    Type::String
}

/// `name`, `resource_group_name`, `location`, `tags` and `id` as azurerm
/// declares them, then the type's own.
pub(crate) fn common(
    located: bool,
    in_group: bool,
    tags: bool,
    own: Vec<(&'static str, A)>,
) -> ResourceSchema {
    let mut attrs = vec![
        ("name", A::required(s(), "The name.").force_new()),
        ("id", A::computed(s(), "The Resource Manager id.")),
    ];
    if in_group {
        attrs.push((
            "resource_group_name",
            A::required(s(), "The resource group.").force_new(),
        ));
    }
    if located {
        attrs.push((
            "location",
            A::required(s(), "The Azure region (eastus).").force_new(),
        ));
    }
    if tags {
        attrs.push(("tags", A::optional(Type::map(s()), "Tags.")));
    }
    attrs.extend(own);
    let mut schema = ResourceSchema::of_attributes(attrs);
    schema
        .blocks
        .insert("timeouts".into(), strata_provider::values::timeouts_block());
    schema
}

/// Azure's canonical form of a region: `East US` → `eastus`.
fn region(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase()
}

impl Resource {
    /// The resource's id from its Terraform attributes.
    pub fn id(&self, c: &Ctx, j: &Json) -> Result<String, DriverError> {
        let t = self.0.type_name;
        let need = |k: &str| required(j, t, k);
        let name = || need("name");
        Ok(match &self.0.scope {
            Scope::Group => format!(
                "/subscriptions/{}/resourceGroups/{}",
                c.subscription(t)?,
                name()?
            ),
            Scope::InGroup => format!(
                "/subscriptions/{}/resourceGroups/{}/providers/{}/{}",
                c.subscription(t)?,
                need("resource_group_name")?,
                self.0.provider,
                name()?
            ),
            Scope::UnderName { parent, segment } => format!(
                "/subscriptions/{}/resourceGroups/{}/providers/{}/{}/{segment}/{}",
                c.subscription(t)?,
                need("resource_group_name")?,
                self.0.provider,
                need(parent)?,
                name()?
            ),
            Scope::UnderId { parent, segment } => {
                format!("{}/{segment}/{}", need(parent)?, name()?)
            }
            Scope::Singleton { parent, path } => format!("{}/{path}", need(parent)?),
        })
    }

    /// The list URL path holding the resource (its parent's collection).
    fn collection(id: &str) -> &str {
        id.rsplit_once('/').map_or(id, |(p, _)| p)
    }

    /// Attributes an id carries (`resource_group_name`, the parent).
    fn id_attrs(&self, id: &str, j: &mut Json) {
        let segs: Vec<&str> = id.split('/').collect();
        j["id"] = json!(id);
        if !matches!(self.0.scope, Scope::Singleton { .. }) {
            j["name"] = json!(segs.last());
        }
        if let Some(i) = segs
            .iter()
            .position(|s| s.eq_ignore_ascii_case("resourceGroups"))
        {
            if !matches!(self.0.scope, Scope::Group) {
                j["resource_group_name"] = json!(segs.get(i + 1));
            }
        }
        match &self.0.scope {
            Scope::UnderName { parent, .. } => {
                j[*parent] = json!(segs.get(segs.len().saturating_sub(3)))
            }
            // The parent is the id less the segment and the name (the
            // segment may have slashes of its own: `blobServices/default/containers`).
            Scope::UnderId { parent, segment } => {
                let own = segment.split('/').count() + 1;
                j[*parent] = json!(segs[..segs.len().saturating_sub(own)].join("/"));
            }
            Scope::Singleton { parent, path } => {
                let own = path.split('/').count();
                j[*parent] = json!(segs[..segs.len().saturating_sub(own)].join("/"));
            }
            _ => {}
        }
    }

    pub fn value(&self, o: &Json, like: Option<&Json>) -> Result<Value, DriverError> {
        let mut j = from_api(self.0.fields, o);
        self.id_attrs(o["id"].as_str().unwrap_or_default(), &mut j);
        if self.0.located {
            j["location"] = o["location"].clone();
        }
        if let Some(path) = self.0.tags {
            j["tags"] = user_tags(strata_rest::fields::get(o, path).unwrap_or(&Json::Null));
        }
        if let Some(hook) = self.0.from_api {
            hook(o, &mut j);
        }
        if let Some(st) = self.0.settings {
            settings_shown(st, &o[SETTINGS], like, &mut j);
        }
        if let Some(like) = like {
            // A parent id as configured (ARM answers ids in its own case).
            for k in ["kubernetes_cluster_id", "vnet_subnet_id"] {
                if let (Some(had), Some(now)) = (like[k].as_str(), j[k].as_str()) {
                    if had.eq_ignore_ascii_case(now) {
                        j[k] = json!(had);
                    }
                }
            }
            if let (Some(had), Some(now)) = (like["location"].as_str(), j["location"].as_str()) {
                if region(had) == region(now) {
                    j["location"] = json!(had);
                }
            }
            if let Some(t) = like.get("timeouts") {
                j["timeouts"] = t.clone();
            }
        }
        let mut schema_json = j;
        let schema = (self.0.schema)();
        strata_rest::fields::empty_blocks(&schema, &mut schema_json);
        // What the id told that this type does not hold (a lock's or a
        // container's resource group).
        if let Some(m) = schema_json.as_object_mut() {
            m.retain(|k, _| schema.attributes.contains_key(k) || schema.blocks.contains_key(k));
        }
        strata_value::json::value_from_json(&schema_json, &schema.object_type()).map_err(|e| {
            DriverError::Api {
                operation: format!("reading {}", self.0.type_name),
                detail: format!("the API's answer does not fit the schema: {e}"),
                retryable: false,
            }
        })
    }

    /// [`Resource::value`], after asking for what lives beside the
    /// object: its credentials, its settings child.
    async fn read_back(
        &self,
        c: &Ctx,
        o: &Json,
        like: Option<&Json>,
    ) -> Result<Value, DriverError> {
        let id = o["id"].as_str().unwrap_or_default();
        let mut o = o.clone();
        if let Some(action) = self.0.credentials {
            let what = format!("{action} for {}", self.0.type_name);
            let reply = c
                .rest
                .send(
                    Method::POST,
                    &c.url(&format!("{id}/{action}"), self.0.api_version),
                    None,
                )
                .await
                .map_err(|e| c.rest.driver_error(&what, &e))?;
            if let Some(v) = reply.body["kubeconfigs"][0]["value"].as_str() {
                o["strata:kubeconfig"] = json!(crate::kubeconfig::decode(v));
            }
        }
        if let Some(st) = self.0.settings {
            let what = format!("GET {} {}", self.0.type_name, st.path);
            let url = c.url(&format!("{id}/{}", st.path), self.0.api_version);
            o[SETTINGS] = c.rest.get(&what, &url).await?.unwrap_or(Json::Null);
        }
        self.value(&o, like)
    }

    /// PUTs the settings child from the configuration's block; on an
    /// update, a block taken out of the configuration puts the service's
    /// defaults back (else the old settings would stay, unseen).
    async fn write_settings(
        &self,
        c: &Ctx,
        id: &str,
        tf: &Json,
        updating: bool,
    ) -> Result<(), DriverError> {
        let Some(st) = self.0.settings else {
            return Ok(());
        };
        let mut body = to_api(st.fields, tf);
        if body.as_object().is_none_or(Map::is_empty) {
            if !updating {
                return Ok(());
            }
            body = to_api(st.fields, &(st.defaults)());
        }
        let what = format!("update {} {}", self.0.type_name, st.path);
        let url = c.url(&format!("{id}/{}", st.path), self.0.api_version);
        let r = c.rest.call(&what, Method::PUT, &url, Some(&body)).await?;
        finish(c, &what, &r, TIMEOUT).await.map(|_| ())
    }

    async fn get(&self, c: &Ctx, id: &str) -> Result<Option<Json>, DriverError> {
        c.rest
            .get(
                &format!("GET {}", self.0.type_name),
                &c.url(id, self.0.api_version),
            )
            .await
    }

    /// The PUT body for `tf`, carrying `current`'s kept properties and
    /// the ownership tags.
    fn body(&self, tf: &Json, current: Option<&Json>, tags: Option<&Tags>) -> Json {
        let mut b = to_api(self.0.fields, tf);
        if self.0.located {
            b["location"] = tf["location"].clone();
        }
        if let Some(path) = self.0.tags {
            let mut t = match current {
                Some(cur) => ownership(strata_rest::fields::get(cur, path).unwrap_or(&Json::Null)),
                None => Json::Object(Map::new()),
            };
            if let Some(tags) = tags {
                for (k, v) in labels::labels(tags) {
                    t[k] = json!(v);
                }
            }
            if let (Some(m), Some(user)) = (t.as_object_mut(), tf["tags"].as_object()) {
                m.extend(user.clone());
            }
            strata_rest::fields::set(&mut b, path, t);
        }
        if let Some(cur) = current {
            for k in self.0.keep {
                if let Some(v) = strata_rest::fields::get(cur, k) {
                    strata_rest::fields::set(&mut b, k, v.clone());
                }
            }
        }
        if let Some(hook) = self.0.to_api {
            hook(tf, &mut b);
        }
        if b.get("properties").is_none() && !matches!(self.0.scope, Scope::Group) {
            b["properties"] = json!({});
        }
        b
    }

    /// PUTs `body` and follows the operation; then reads the result,
    /// which must have succeeded.
    async fn put(
        &self,
        c: &Ctx,
        id: &str,
        body: &Json,
        t: Duration,
        what: &str,
    ) -> Result<Json, DriverError> {
        let url = c.url(id, self.0.api_version);
        let r = c.rest.call(what, Method::PUT, &url, Some(body)).await?;
        finish(c, what, &r, t).await?;
        let o = self.get(c, id).await?.ok_or_else(|| DriverError::Api {
            operation: what.to_string(),
            detail: format!("{id} was not there after its PUT finished"),
            retryable: true,
        })?;
        match o["properties"]["provisioningState"].as_str() {
            Some("Failed") => Err(c.rest.operation_error(
                what,
                "ProvisioningFailed",
                &format!("{id} is in provisioning state Failed"),
            )),
            _ => Ok(o),
        }
    }
}

impl Resource {
    async fn find_in_clusters(
        &self,
        c: &Ctx,
        sub: &str,
        tags: &Tags,
    ) -> Result<Vec<Value>, DriverError> {
        let clusters = format!(
            "{}/subscriptions/{sub}/providers/{}?api-version={}",
            c.base, KUBERNETES_CLUSTER.provider, KUBERNETES_CLUSTER.api_version
        );
        let mut found = Vec::new();
        for cluster in c.rest.list("list clusters", &clusters, "value").await? {
            let Some(id) = cluster["id"].as_str() else {
                continue;
            };
            let pools = c.url(&format!("{id}/agentPools"), self.0.api_version);
            for p in c.rest.list("list node pools", &pools, "value").await? {
                let t = &p["properties"]["tags"];
                if labels::owned(|k| t[k].as_str(), tags) {
                    found.push(self.read_back(c, &p, None).await?);
                }
            }
        }
        Ok(found)
    }
}

/// Tags read from Azure, strata's own left out (null when none are left).
fn user_tags(t: &Json) -> Json {
    let m: Map<String, Json> = t
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !labels::is_ownership(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if m.is_empty() {
        Json::Null
    } else {
        Json::Object(m)
    }
}

/// Only strata's own tags.
fn ownership(t: &Json) -> Json {
    Json::Object(
        t.as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| labels::is_ownership(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

/// A read block with the defaults where the service left a field out.
fn filled(value: &Json, default: &Json) -> Json {
    match (value, default) {
        (Json::Null, d) => d.clone(),
        (Json::Array(v), Json::Array(d)) => Json::Array(
            v.iter()
                .enumerate()
                .map(|(i, x)| filled(x, d.get(i).unwrap_or(&Json::Null)))
                .collect(),
        ),
        (Json::Object(v), Json::Object(d)) => {
            let mut out = v.clone();
            for (k, dv) in d {
                let merged = filled(v.get(k).unwrap_or(&Json::Null), dv);
                out.insert(k.clone(), merged);
            }
            Json::Object(out)
        }
        (v, _) => v.clone(),
    }
}

/// Whether a read value says no more than the defaults: every field
/// absent or equal to its default (the service leaves out what was never
/// set).
fn is_default(value: &Json, default: &Json) -> bool {
    match (value, default) {
        (Json::Null, _) => true,
        (Json::Array(v), Json::Array(d)) => v
            .iter()
            .enumerate()
            .all(|(i, x)| is_default(x, d.get(i).unwrap_or(&Json::Null))),
        (Json::Object(v), Json::Object(d)) => v
            .iter()
            .all(|(k, x)| is_default(x, d.get(k).unwrap_or(&Json::Null))),
        (v, d) => v == d,
    }
}

/// A delete refused by a management lock, with what each lock on the
/// scopes the refusal names says (its notes say why it is there and how
/// to lift it; ARM's message names only the scope).
pub(crate) async fn locked(c: &Ctx, what: &str, e: &strata_rest::CallError) -> DriverError {
    let scopes: Vec<String> = e
        .message
        .split_once("locked:")
        .map(|(_, rest)| {
            rest.split('\'')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut said = Vec::new();
    for scope in scopes {
        let url = c.url(
            &format!("{scope}/providers/Microsoft.Authorization/locks"),
            LOCKS_API,
        );
        for l in c
            .rest
            .list("list locks", &url, "value")
            .await
            .unwrap_or_default()
        {
            let p = &l["properties"];
            said.push(format!(
                "lock '{}' ({}) on {scope}: {}",
                l["name"].as_str().unwrap_or_default(),
                p["level"].as_str().unwrap_or_default(),
                p["notes"].as_str().unwrap_or("no notes")
            ));
        }
    }
    let detail = match said.is_empty() {
        true => format!("{}: {}", e.code, e.message),
        false => format!("{}: {}; {}", e.code, e.message, said.join("; ")),
    };
    DriverError::Api {
        operation: what.to_string(),
        detail,
        retryable: false,
    }
}

/// Where [`Resource::read_back`] puts the settings child in the object.
const SETTINGS: &str = "strata:settings";

/// The settings block as read, shown when the configuration had it or the
/// service holds other than its defaults (drift to see); otherwise left
/// out, as a block the configuration never wrote.
fn settings_shown(st: &Settings, child: &Json, like: Option<&Json>, j: &mut Json) {
    let read = from_api(st.fields, child);
    let defaults = (st.defaults)();
    for f in st.fields {
        let had = like.is_some_and(|l| l[f.attr].as_array().is_some_and(|a| !a.is_empty()));
        let value = &read[f.attr];
        if had || !is_default(value, &defaults[f.attr]) {
            j[f.attr] = filled(value, &defaults[f.attr]);
        }
    }
}

#[async_trait]
impl Kind<Ctx> for Resource {
    fn schema(&self) -> ResourceSchema {
        (self.0.schema)()
    }

    fn queues(&self, object: &Value) -> Vec<String> {
        // Asked of every write: most types have no queue to look for.
        if self.0.queues.is_empty() {
            return Vec::new();
        }
        let j = strata_value::json::plain_json(object);
        self.0
            .queues
            .iter()
            .filter_map(|k| j[*k].as_str())
            .map(|id| format!("azure:{}", id.to_ascii_lowercase()))
            .collect()
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = strata_provider::plan_by_schema(schema, req.prior, req.config);
        let Some(prior) = req.prior else { return p };
        let (old, new) = (crate::api_json(prior), crate::api_json(&p.planned));
        // Regions compare in Azure's canonical form.
        if let (Some(had), Some(want)) = (old["location"].as_str(), new["location"].as_str()) {
            if region(had) == region(want) && had != want {
                p.planned = with_attr(p.planned, "location", Value::string(had));
            }
        }
        for [b, a] in self.0.nested_force_new {
            let wanted = &new[*b][0][*a];
            if !wanted.is_null() && old[*b][0][*a] != *wanted {
                p.requires_replace
                    .push(vec![b.to_string(), "0".into(), a.to_string()]);
            }
        }
        p
    }

    async fn read(&self, c: &Ctx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        // One list per parent (resource group, network, cluster).
        let mut listed: BTreeMap<String, Option<BTreeMap<String, Json>>> = BTreeMap::new();
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let j = crate::api_json(o);
            let id = self.id(c, &j)?;
            // A parent's one object of its kind has no list to be read
            // from (ARM documents only its GET): read it alone.
            if matches!(self.0.scope, Scope::Singleton { .. }) {
                out.push(match self.get(c, &id).await? {
                    Some(f) => Some(self.read_back(c, &f, Some(&j)).await?),
                    None => None,
                });
                continue;
            }
            let coll = Self::collection(&id).to_string();
            if !listed.contains_key(&coll) {
                let url = c.url(&coll, self.0.api_version);
                let items = c
                    .rest
                    .list_under(&format!("list {}", self.0.type_name), &url, "value")
                    .await?
                    .map(|all| {
                        all.into_iter()
                            .filter_map(|i| Some((i["id"].as_str()?.to_ascii_lowercase(), i)))
                            .collect()
                    });
                listed.insert(coll.clone(), items);
            }
            let found = listed[&coll]
                .as_ref()
                .and_then(|m| m.get(&id.to_ascii_lowercase()));
            out.push(match found {
                Some(f) => Some(self.read_back(c, f, Some(&j)).await?),
                None => None,
            });
        }
        Ok(out)
    }

    async fn create(&self, c: &Ctx, planned: &Value, tags: &Tags) -> Result<Value, DriverError> {
        let j = crate::api_json(planned);
        let id = self.id(c, &j)?;
        let what = format!("create {}", self.0.type_name);
        // As azurerm does: an object already there is not taken over,
        // unless it carries this instance's ownership tags (a crashed run's).
        let current = self.get(c, &id).await?;
        if let Some(cur) = &current {
            let ours = self
                .0
                .tags
                .and_then(|p| strata_rest::fields::get(cur, p))
                .is_some_and(|t| labels::owned(|k| t[k].as_str(), tags));
            // Children without tags (subnets, containers, federated
            // credentials) are taken when found: their parent is ours.
            let tagless_child = !matches!(self.0.scope, Scope::Group | Scope::InGroup);
            if !ours && !tagless_child {
                return Err(strata_rest::not_ours(&what, &id, &id));
            }
        }
        let body = self.body(&j, current.as_ref(), Some(tags));
        let o = self
            .put(c, &id, &body, timeout(planned, "create", TIMEOUT), &what)
            .await?;
        self.write_settings(c, &id, &j, false).await?;
        self.read_back(c, &o, Some(&j)).await
    }

    async fn update(&self, c: &Ctx, _prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        let j = crate::api_json(planned);
        let id = self.id(c, &j)?;
        let current = self.get(c, &id).await?;
        let body = self.body(&j, current.as_ref(), None);
        let what = format!("update {}", self.0.type_name);
        let o = self
            .put(c, &id, &body, timeout(planned, "update", TIMEOUT), &what)
            .await?;
        self.write_settings(c, &id, &j, true).await?;
        self.read_back(c, &o, Some(&j)).await
    }

    async fn delete(&self, c: &Ctx, prior: &Value) -> Result<(), DriverError> {
        let j = crate::api_json(prior);
        let id = self.id(c, &j)?;
        let what = format!("delete {}", self.0.type_name);
        match c
            .rest
            .send(Method::DELETE, &c.url(&id, self.0.api_version), None)
            .await
        {
            Ok(r) => finish(c, &what, &r, timeout(prior, "delete", TIMEOUT))
                .await
                .map(|_| ()),
            Err(e) if e.status == 404 => Ok(()),
            Err(e) if e.code == "ScopeLocked" => Err(locked(c, &what, &e).await),
            Err(e) => Err(c.rest.driver_error(&what, &e)),
        }
    }

    /// Resource Manager finds tagged resources in one call; node pools
    /// (tagged inside their properties) are looked for in every cluster.
    async fn find_tagged(&self, c: &Ctx, tags: &Tags) -> Result<Vec<Value>, DriverError> {
        let Ok(sub) = c.subscription(self.0.type_name) else {
            return Ok(Vec::new());
        };
        if self.0.tags == Some("properties.tags") {
            return self.find_in_clusters(c, sub, tags).await;
        }
        if self.0.tags.is_none() {
            return Ok(Vec::new());
        }
        let [(ak, av), (lk, lv)] = labels::labels(tags);
        let filter = strata_rest::encode(&format!("tagName eq '{ak}' and tagValue eq '{av}'"));
        let (path, version) = match self.0.scope {
            Scope::Group => (
                format!("/subscriptions/{sub}/resourcegroups"),
                self.0.api_version,
            ),
            _ => (format!("/subscriptions/{sub}/resources"), "2021-04-01"),
        };
        let url = format!(
            "{}?api-version={version}&$filter={filter}",
            c.base.clone() + &path
        );
        let mut found = Vec::new();
        for r in c.rest.list("find tagged resources", &url, "value").await? {
            let type_ok = matches!(self.0.scope, Scope::Group)
                || r["type"]
                    .as_str()
                    .is_some_and(|t| t.eq_ignore_ascii_case(self.0.provider));
            if !type_ok || r["tags"][lk.as_str()].as_str() != Some(lv.as_str()) {
                continue;
            }
            if let Some(o) = self.get(c, r["id"].as_str().unwrap_or_default()).await? {
                found.push(self.read_back(c, &o, None).await?);
            }
        }
        Ok(found)
    }

    async fn import(&self, c: &Ctx, id: &str) -> Result<Option<Value>, DriverError> {
        match self.get(c, id).await? {
            Some(o) => Ok(Some(self.read_back(c, &o, None).await?)),
            None => Ok(None),
        }
    }
}

/// An attribute's string, or the error a required one's absence is.
pub(crate) fn required(j: &Json, type_name: &str, name: &str) -> Result<String, DriverError> {
    j[name]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| DriverError::InvalidConfig {
            type_name: type_name.to_string(),
            detail: format!("{name} is required"),
        })
}

/// `v` with one attribute replaced.
fn with_attr(v: Value, name: &str, to: Value) -> Value {
    match v {
        Value::Object(mut m) => {
            m.insert(name.to_string(), to);
            Value::Object(m)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static BLOB: &Settings = match STORAGE_ACCOUNT.settings {
        Some(s) => s,
        None => panic!("the storage account has blob settings"),
    };

    fn shown(child: Json, like: Option<Json>) -> Json {
        let mut j = json!({});
        settings_shown(BLOB, &child, like.as_ref(), &mut j);
        j
    }

    /// A blob service never written (versioning absent or off) is no
    /// block unless the configuration wrote one; versioning on always
    /// shows, as drift to see.
    #[test]
    fn a_settings_block_shows_when_written_or_not_default() {
        let untouched = json!({"properties": {"deleteRetentionPolicy": {"enabled": false}}});
        assert_eq!(shown(untouched.clone(), None), json!({}));
        assert_eq!(
            shown(untouched.clone(), Some(json!({"blob_properties": []}))),
            json!({})
        );
        let off = json!({"properties": {"isVersioningEnabled": false}});
        assert_eq!(shown(off, None), json!({}));
        let written = Some(json!({"blob_properties": [{"versioning_enabled": false}]}));
        assert_eq!(
            shown(untouched, written),
            json!({"blob_properties": [{"versioning_enabled": false}]})
        );
        let on = json!({"properties": {"isVersioningEnabled": true}});
        assert_eq!(
            shown(on, None),
            json!({"blob_properties": [{"versioning_enabled": true}]})
        );
    }
}
