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

pub struct Cluster;

const CLUSTER: &[Field] = &[
    f("name", "name"),
    f("description", "description"),
    f("initial_node_count", "initialNodeCount"),
    f("network", "network"),
    f("subnetwork", "subnetwork"),
    f("min_master_version", "initialClusterVersion"),
    f("resource_labels", "resourceLabels"),
    object(
        "ip_allocation_policy",
        "ipAllocationPolicy",
        &[
            f("cluster_secondary_range_name", "clusterSecondaryRangeName"),
            f(
                "services_secondary_range_name",
                "servicesSecondaryRangeName",
            ),
        ],
    ),
    object(
        "private_cluster_config",
        "privateClusterConfig",
        &[
            f("enable_private_nodes", "enablePrivateNodes"),
            f("enable_private_endpoint", "enablePrivateEndpoint"),
            f("master_ipv4_cidr_block", "masterIpv4CidrBlock"),
            out("private_endpoint", "privateEndpoint"),
            out("public_endpoint", "publicEndpoint"),
        ],
    ),
    object(
        "workload_identity_config",
        "workloadIdentityConfig",
        &[f("workload_pool", "workloadPool")],
    ),
    object(
        "release_channel",
        "releaseChannel",
        &[f("channel", "channel")],
    ),
    out("endpoint", "endpoint"),
    out("master_version", "currentMasterVersion"),
    out("self_link", "selfLink"),
    out("label_fingerprint", "labelFingerprint"),
    out("services_ipv4_cidr", "servicesIpv4Cidr"),
];

/// What only the configuration knows.
const CLUSTER_CONFIG_ONLY: &[&str] = &[
    "remove_default_node_pool",
    "deletion_protection",
    "initial_node_count",
    "min_master_version",
    "timeouts",
];

impl Cluster {
    const TYPE: &'static str = "google_container_cluster";

    fn path(c: &Ctx, j: &Json) -> Result<String, DriverError> {
        cluster_path(c, j, Self::TYPE, &api::required(j, Self::TYPE, "name")?)
    }

    fn value(path: &str, o: &Json, like: Option<&Json>) -> Result<Value, DriverError> {
        let mut j = from_api(CLUSTER, o);
        let parts: Vec<&str> = path.split('/').collect();
        j["project"] = json!(parts.get(1));
        j["location"] = json!(parts.get(3));
        j["id"] = json!(path);
        j["resource_labels"] = user_labels(&o["resourceLabels"]);
        j["networking_mode"] = json!(if o["ipAllocationPolicy"]["useIpAliases"] == true {
            "VPC_NATIVE"
        } else {
            "ROUTES"
        });
        j["master_auth"] = json!([{
            "cluster_ca_certificate": o["masterAuth"]["clusterCaCertificate"],
        }]);
        if let Some(like) = like {
            for k in ["network", "subnetwork"] {
                if let (Some(had), Some(now)) = (like[k].as_str(), j[k].as_str()) {
                    if last(had) == last(now) {
                        j[k] = json!(had);
                    }
                }
            }
            carry(&mut j, like, CLUSTER_CONFIG_ONLY);
        }
        api::value(&Cluster.schema(), Self::TYPE, &j)
    }

    async fn get(c: &Ctx, path: &str) -> Result<Option<Json>, DriverError> {
        c.rest
            .get("GET cluster", &format!("{}{path}", c.endpoints.container))
            .await
    }

    async fn read_one(c: &Ctx, path: &str, like: &Json) -> Result<Value, DriverError> {
        let o = Self::get(c, path).await?.ok_or_else(|| DriverError::Api {
            operation: format!("read {}", Self::TYPE),
            detail: format!("cluster {path} is not there"),
            retryable: true,
        })?;
        Self::value(path, &o, Some(like))
    }

    /// Deletes the default node pool when it is there: after a create, and
    /// after an update that turns `remove_default_node_pool` on (a cluster
    /// adopted from a create cut off before the delete has it still, as
    /// the google provider's update handles too).
    async fn remove_default_pool(c: &Ctx, path: &str, t: Duration) -> Result<(), DriverError> {
        let pool = format!("{}{path}/nodePools/default-pool", c.endpoints.container);
        if c.rest.get("GET node pool", &pool).await?.is_none() {
            return Ok(());
        }
        run_op(
            c,
            "delete default node pool",
            path,
            t,
            Method::DELETE,
            &pool,
            None,
        )
        .await
    }
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

#[async_trait]
impl Kind<Ctx> for Cluster {
    fn queues(&self, object: &Value) -> Vec<String> {
        let j = tf(object);
        j["name"]
            .as_str()
            .map(|n| operations_queue(&j, n))
            .into_iter()
            .collect()
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = strata_provider::plan_by_schema(schema, req.prior, req.config);
        if let Some(prior) = req.prior {
            same_named(&mut p, prior, &["network", "subnetwork"]);
        }
        p
    }

    fn schema(&self) -> ResourceSchema {
        let s = Type::String;
        let mut schema = ResourceSchema::of_attributes(vec![
            ("name", A::required(s.clone(), "The cluster's name.").force_new()),
            ("location", A::optional(s.clone(), "A region (regional cluster) or a zone (else the provider's region).").and_computed().force_new()),
            ("project", project()),
            ("description", A::optional(s.clone(), "A description.").force_new()),
            ("network", A::optional(s.clone(), "The VPC network (name or self link).").and_computed().force_new()),
            ("subnetwork", A::optional(s.clone(), "The subnetwork (name or self link).").and_computed().force_new()),
            ("initial_node_count", A::optional(Type::Number, "Nodes of the default pool at creation.").force_new()),
            ("remove_default_node_pool", A::optional(Type::Bool, "Delete the default node pool once the cluster exists (node pools are then separate resources).")),
            ("deletion_protection", A::optional(Type::Bool, "Refuse to destroy the cluster (true unless set to false, as in the Terraform provider).")),
            ("min_master_version", A::optional(s.clone(), "The control plane's minimum version at creation.")),
            ("networking_mode", A::optional(s.clone(), "VPC_NATIVE (alias IPs) or ROUTES.").and_computed().force_new()),
            ("resource_labels", A::optional(Type::map(s.clone()), "Labels on the cluster's GCP resources.")),
            ("endpoint", A::computed(s.clone(), "The control plane's address.")),
            ("master_version", A::computed(s.clone(), "The control plane's version.")),
            ("self_link", A::computed(s.clone(), "The cluster's URL.")),
            ("label_fingerprint", A::computed(s.clone(), "The labels' fingerprint.")),
            ("services_ipv4_cidr", A::computed(s.clone(), "The services' range.")),
            ("id", A::computed(s.clone(), "projects/{project}/locations/{location}/clusters/{name}.")),
            (
                "master_auth",
                A::computed(
                    Type::list(Type::object(BTreeMap::from([("cluster_ca_certificate".to_string(), s.clone())]))),
                    "The cluster's CA certificate (base64 PEM).",
                ),
            ),
        ]);
        let mut ip = list_block_max1(vec![
            (
                "cluster_secondary_range_name",
                A::optional(s.clone(), "The subnetwork's secondary range for pods.").force_new(),
            ),
            (
                "services_secondary_range_name",
                A::optional(s.clone(), "The subnetwork's secondary range for services.")
                    .force_new(),
            ),
        ]);
        ip.schema
            .attributes
            .values_mut()
            .for_each(|a| a.force_new = true);
        schema.blocks.insert("ip_allocation_policy".into(), ip);
        let mut private = list_block_max1(vec![
            (
                "enable_private_nodes",
                A::optional(Type::Bool, "Nodes get internal addresses only.").force_new(),
            ),
            (
                "enable_private_endpoint",
                A::optional(Type::Bool, "The control plane has no public endpoint.").force_new(),
            ),
            (
                "master_ipv4_cidr_block",
                A::optional(s.clone(), "A /28 for the control plane.").force_new(),
            ),
            (
                "private_endpoint",
                A::computed(s.clone(), "The control plane's internal address."),
            ),
            (
                "public_endpoint",
                A::computed(s.clone(), "The control plane's external address."),
            ),
        ]);
        private
            .schema
            .attributes
            .values_mut()
            .filter(|a| !a.computed)
            .for_each(|a| a.force_new = true);
        schema
            .blocks
            .insert("private_cluster_config".into(), private);
        schema.blocks.insert(
            "workload_identity_config".into(),
            list_block_max1(vec![(
                "workload_pool",
                A::optional(s.clone(), "PROJECT.svc.id.goog"),
            )]),
        );
        schema.blocks.insert(
            "release_channel".into(),
            list_block_max1(vec![(
                "channel",
                A::required(
                    s.clone(),
                    "RAPID, REGULAR, STABLE, EXTENDED or UNSPECIFIED.",
                ),
            )])
            .and_computed(),
        );
        schema.blocks.insert("timeouts".into(), timeouts());
        schema
    }

    async fn read(&self, c: &Ctx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        // One list of every cluster in a project, not one GET per cluster.
        let mut by_project: BTreeMap<String, BTreeMap<String, Json>> = BTreeMap::new();
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let j = tf(o);
            let path = Self::path(c, &j)?;
            let project = path.split('/').nth(1).unwrap_or_default().to_string();
            if !by_project.contains_key(&project) {
                let map = clusters(c, &project).await?.into_iter().collect();
                by_project.insert(project.clone(), map);
            }
            out.push(match by_project[&project].get(&path) {
                Some(cl) => Some(Self::value(&path, cl, Some(&j))?),
                None => None,
            });
        }
        Ok(out)
    }

    async fn create(&self, c: &Ctx, planned: &Value, tags: &Tags) -> Result<Value, DriverError> {
        let j = tf(planned);
        let path = Self::path(c, &j)?;
        let mut cluster = to_api(CLUSTER, &j);
        cluster["resourceLabels"] = with_ownership(&j["resource_labels"], tags);
        let vpc_native = j["networking_mode"].as_str().unwrap_or("VPC_NATIVE") == "VPC_NATIVE"
            && !j["ip_allocation_policy"].is_null();
        if vpc_native {
            cluster["ipAllocationPolicy"]["useIpAliases"] = json!(true);
        }
        let remove_default = j["remove_default_node_pool"] == true;
        if cluster.get("initialNodeCount").is_none() {
            // GKE needs a node pool to create a cluster; the default pool
            // of one node is removed afterwards when asked.
            cluster["initialNodeCount"] = json!(1);
        }
        let url = format!("{}{}/clusters", c.endpoints.container, scope_of(&path));
        let t = timeout(planned, "create", CREATE);
        let body = json!({ "cluster": cluster });
        match run_op(
            c,
            &format!("create {}", Self::TYPE),
            &path,
            t,
            Method::POST,
            &url,
            Some(&body),
        )
        .await
        {
            Ok(()) => {}
            Err(DriverError::Api { detail, .. }) if detail.starts_with("ALREADY_EXISTS") => {
                let existing = Self::get(c, &path).await?;
                if !existing.is_some_and(|e| api::owned(&e["resourceLabels"], tags)) {
                    return Err(strata_rest::not_ours(
                        &format!("create {}", Self::TYPE),
                        &format!("cluster {path}"),
                        &path,
                    ));
                }
            }
            Err(e) => return Err(e),
        }
        if remove_default {
            Self::remove_default_pool(c, &path, t).await?;
        }
        Self::read_one(c, &path, &j).await
    }

    async fn update(&self, c: &Ctx, prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        let (old, new) = (tf(prior), tf(planned));
        let path = Self::path(c, &new)?;
        let t = timeout(planned, "update", CREATE);
        let url = format!("{}{path}", c.endpoints.container);
        // GKE takes one `desired*` change per update call.
        let changes = [
            ("release_channel", "desiredReleaseChannel"),
            ("workload_identity_config", "desiredWorkloadIdentityConfig"),
        ];
        for (attr, desired) in changes {
            if old[attr] != new[attr] {
                let v = to_api(CLUSTER, &json!({ attr: new[attr] }));
                let field = CLUSTER
                    .iter()
                    .find(|f| f.attr == attr)
                    .map_or("", |f| f.api);
                let value = match v.get(field) {
                    Some(x) => x.clone(),
                    None if attr == "release_channel" => json!({"channel": "UNSPECIFIED"}),
                    None => json!({"workloadPool": ""}),
                };
                let body = json!({ "update": { desired: value } });
                run_op(
                    c,
                    &format!("update {}", Self::TYPE),
                    &path,
                    t,
                    Method::PUT,
                    &url,
                    Some(&body),
                )
                .await?;
            }
        }
        if new["remove_default_node_pool"] == true && old["remove_default_node_pool"] != true {
            Self::remove_default_pool(c, &path, t).await?;
        }
        if old["resource_labels"] != new["resource_labels"] {
            let current = Self::get(c, &path).await?.unwrap_or_default();
            let mut labels = ownership_of(&current["resourceLabels"]);
            if let (Some(m), Some(user)) =
                (labels.as_object_mut(), new["resource_labels"].as_object())
            {
                m.extend(user.clone());
            }
            let body = json!({
                "resourceLabels": labels,
                "labelFingerprint": current["labelFingerprint"],
            });
            run_op(
                c,
                "set cluster labels",
                &path,
                t,
                Method::POST,
                &format!("{url}:setResourceLabels"),
                Some(&body),
            )
            .await?;
        }
        Self::read_one(c, &path, &new).await
    }

    async fn delete(&self, c: &Ctx, prior: &Value) -> Result<(), DriverError> {
        let j = tf(prior);
        if j["deletion_protection"] != false {
            return Err(DriverError::Api {
                operation: format!("delete {}", Self::TYPE),
                detail: "cannot destroy the cluster because deletion_protection is true (its default); set deletion_protection = false and apply first".into(),
                retryable: false,
            });
        }
        let path = Self::path(c, &j)?;
        let url = format!("{}{path}", c.endpoints.container);
        if Self::get(c, &path).await?.is_none() {
            return Ok(());
        }
        run_op(
            c,
            &format!("delete {}", Self::TYPE),
            &path,
            timeout(prior, "delete", CREATE),
            Method::DELETE,
            &url,
            None,
        )
        .await
    }

    async fn find_tagged(&self, c: &Ctx, tags: &Tags) -> Result<Vec<Value>, DriverError> {
        let Ok(project) = c.project(&Json::Null, Self::TYPE) else {
            return Ok(Vec::new());
        };
        clusters(c, &project)
            .await?
            .iter()
            .filter(|(_, cl)| api::owned(&cl["resourceLabels"], tags))
            .map(|(path, cl)| Self::value(path, cl, Some(&json!({"deletion_protection": true}))))
            .collect()
    }

    async fn import(&self, c: &Ctx, id: &str) -> Result<Option<Value>, DriverError> {
        if !id.starts_with("projects/") {
            return Err(api::invalid(
                Self::TYPE,
                format!(
                    "import id {id:?} must be projects/PROJECT/locations/LOCATION/clusters/NAME"
                ),
            ));
        }
        match Self::get(c, id).await? {
            Some(o) => Ok(Some(Self::value(
                id,
                &o,
                Some(&json!({"deletion_protection": true})),
            )?)),
            None => Ok(None),
        }
    }
}

pub struct NodePool;

const ACCELERATOR: &[Field] = &[
    f("type", "acceleratorType"),
    int64("count", "acceleratorCount"),
    object(
        "gpu_driver_installation_config",
        "gpuDriverInstallationConfig",
        &[f("gpu_driver_version", "gpuDriverVersion")],
    ),
];

const NODE_CONFIG: &[Field] = &[
    f("machine_type", "machineType"),
    f("disk_size_gb", "diskSizeGb"),
    f("disk_type", "diskType"),
    f("image_type", "imageType"),
    f("labels", "labels"),
    f("resource_labels", "resourceLabels"),
    array(
        "taint",
        "taints",
        &[f("key", "key"), f("value", "value"), f("effect", "effect")],
    ),
    f("spot", "spot"),
    f("preemptible", "preemptible"),
    array("guest_accelerator", "accelerators", ACCELERATOR),
    f("service_account", "serviceAccount"),
    f("oauth_scopes", "oauthScopes"),
    f("tags", "tags"),
];

const AUTOSCALING: &[Field] = &[
    f("min_node_count", "minNodeCount"),
    f("max_node_count", "maxNodeCount"),
    f("total_min_node_count", "totalMinNodeCount"),
    f("total_max_node_count", "totalMaxNodeCount"),
    f("location_policy", "locationPolicy"),
];

const MANAGEMENT: &[Field] = &[
    f("auto_repair", "autoRepair"),
    f("auto_upgrade", "autoUpgrade"),
];

const POOL: &[Field] = &[
    f("name", "name"),
    f("initial_node_count", "initialNodeCount"),
    f("node_locations", "locations"),
    object("node_config", "config", NODE_CONFIG),
    object("autoscaling", "autoscaling", AUTOSCALING),
    object("management", "management", MANAGEMENT),
    out("version", "version"),
    out("instance_group_urls", "instanceGroupUrls"),
];

/// Node settings GKE cannot change in place.
const NODE_CONFIG_REPLACES: &[&str] = &[
    "machine_type",
    "disk_size_gb",
    "disk_type",
    "image_type",
    "spot",
    "preemptible",
    "guest_accelerator",
    "service_account",
    "oauth_scopes",
    "tags",
];

impl NodePool {
    const TYPE: &'static str = "google_container_node_pool";

    fn paths(c: &Ctx, j: &Json) -> Result<(String, String), DriverError> {
        let cluster = cluster_path(c, j, Self::TYPE, &api::required(j, Self::TYPE, "cluster")?)?;
        let name = api::required(j, Self::TYPE, "name")?;
        Ok((cluster.clone(), format!("{cluster}/nodePools/{name}")))
    }

    /// The pool's size: the target sizes of its instance groups (the
    /// NodePool resource itself has no node count).
    async fn node_count(c: &Ctx, np: &Json) -> Result<Option<u64>, DriverError> {
        let mut total = None;
        for url in np["instanceGroupUrls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
        {
            let Some(path) = url.split("/compute/v1/").nth(1) else {
                continue;
            };
            let igm = format!(
                "{}{}",
                c.endpoints.compute,
                path.replace("/instanceGroups/", "/instanceGroupManagers/")
            );
            if let Some(g) = c.rest.get("GET instance group manager", &igm).await? {
                *total.get_or_insert(0) += g["targetSize"].as_u64().unwrap_or(0);
            }
        }
        Ok(total)
    }

    async fn value(c: &Ctx, cluster: &str, np: &Json, like: &Json) -> Result<Value, DriverError> {
        let mut j = from_api(POOL, np);
        let parts: Vec<&str> = cluster.split('/').collect();
        j["project"] = json!(parts.get(1));
        j["location"] = json!(parts.get(3));
        j["cluster"] = like["cluster"].clone();
        if j["cluster"].is_null() {
            j["cluster"] = json!(last(cluster));
        }
        j["id"] = json!(format!(
            "{cluster}/nodePools/{}",
            np["name"].as_str().unwrap_or_default()
        ));
        if let Some(nc) = j.get_mut("node_config").and_then(|n| n.get_mut(0)) {
            nc["resource_labels"] = user_labels(&np["config"]["resourceLabels"]);
        }
        j["node_count"] = json!(Self::node_count(c, np).await?);
        // GKE answers `{"enabled": false}` for a pool without autoscaling:
        // no block, as the configuration has none.
        if np["autoscaling"]["enabled"] != true {
            j["autoscaling"] = json!([]);
        }
        carry(&mut j, like, &["timeouts"]);
        api::value(&NodePool.schema(), Self::TYPE, &j)
    }

    async fn get(c: &Ctx, path: &str) -> Result<Option<Json>, DriverError> {
        c.rest
            .get("GET node pool", &format!("{}{path}", c.endpoints.container))
            .await
    }
}

#[async_trait]
impl Kind<Ctx> for NodePool {
    fn queues(&self, object: &Value) -> Vec<String> {
        let j = tf(object);
        j["cluster"]
            .as_str()
            .map(|c| operations_queue(&j, c))
            .into_iter()
            .collect()
    }

    fn schema(&self) -> ResourceSchema {
        let s = Type::String;
        let mut schema = ResourceSchema::of_attributes(vec![
            (
                "name",
                A::optional(s.clone(), "The pool's name (else one is made).")
                    .and_computed()
                    .force_new(),
            ),
            (
                "cluster",
                A::required(s.clone(), "The cluster (name or id).").force_new(),
            ),
            (
                "location",
                A::optional(
                    s.clone(),
                    "The cluster's location (else the provider's region).",
                )
                .and_computed()
                .force_new(),
            ),
            ("project", project()),
            (
                "initial_node_count",
                A::optional(Type::Number, "Nodes per zone at creation.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "node_count",
                A::optional(Type::Number, "Nodes per zone, without autoscaling.").and_computed(),
            ),
            (
                "node_locations",
                A::optional(Type::set(s.clone()), "Zones of the pool.").and_computed(),
            ),
            (
                "version",
                A::computed(s.clone(), "The nodes' Kubernetes version."),
            ),
            (
                "instance_group_urls",
                A::computed(Type::list(s.clone()), "The pool's instance groups."),
            ),
            (
                "id",
                A::computed(
                    s.clone(),
                    "projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{name}.",
                ),
            ),
        ]);
        let accelerator = {
            let mut b = block(
                BlockNesting::List,
                0,
                vec![
                    (
                        "type",
                        A::required(s.clone(), "nvidia-h100-80gb, nvidia-l4, ..."),
                    ),
                    ("count", A::required(Type::Number, "GPUs per node.")),
                ],
            );
            b.schema.blocks.insert(
                "gpu_driver_installation_config".into(),
                list_block_max1(vec![(
                    "gpu_driver_version",
                    A::required(s.clone(), "INSTALLATION_DISABLED, DEFAULT or LATEST."),
                )]),
            );
            b
        };
        let mut node_config = list_block_max1(vec![
            (
                "machine_type",
                A::optional(s.clone(), "The machine type (a3-highgpu-8g).").and_computed(),
            ),
            (
                "disk_size_gb",
                A::optional(Type::Number, "Boot disk size.").and_computed(),
            ),
            (
                "disk_type",
                A::optional(s.clone(), "pd-standard, pd-balanced, pd-ssd.").and_computed(),
            ),
            (
                "image_type",
                A::optional(s.clone(), "COS_CONTAINERD, UBUNTU_CONTAINERD.").and_computed(),
            ),
            (
                "labels",
                A::optional(Type::map(s.clone()), "Kubernetes labels on the nodes."),
            ),
            (
                "resource_labels",
                A::optional(Type::map(s.clone()), "GCP labels on the nodes' VMs."),
            ),
            ("spot", A::optional(Type::Bool, "Spot VMs.")),
            (
                "preemptible",
                A::optional(Type::Bool, "Preemptible VMs (billed as Spot VMs)."),
            ),
            (
                "service_account",
                A::optional(s.clone(), "The nodes' service account email.").and_computed(),
            ),
            (
                "oauth_scopes",
                A::optional(Type::set(s.clone()), "The nodes' OAuth scopes.").and_computed(),
            ),
            ("tags", A::optional(Type::list(s.clone()), "Network tags.")),
        ]);
        node_config.schema.blocks.insert(
            "taint".into(),
            block(
                BlockNesting::List,
                0,
                vec![
                    ("key", A::required(s.clone(), "The taint's key.")),
                    ("value", A::required(s.clone(), "The taint's value.")),
                    (
                        "effect",
                        A::required(s.clone(), "NO_SCHEDULE, PREFER_NO_SCHEDULE or NO_EXECUTE."),
                    ),
                ],
            ),
        );
        node_config
            .schema
            .blocks
            .insert("guest_accelerator".into(), accelerator);
        schema.blocks.insert("node_config".into(), node_config);
        schema.blocks.insert(
            "autoscaling".into(),
            list_block_max1(vec![
                (
                    "min_node_count",
                    A::optional(Type::Number, "Fewest nodes per zone."),
                ),
                (
                    "max_node_count",
                    A::optional(Type::Number, "Most nodes per zone."),
                ),
                (
                    "total_min_node_count",
                    A::optional(Type::Number, "Fewest nodes in all."),
                ),
                (
                    "total_max_node_count",
                    A::optional(Type::Number, "Most nodes in all."),
                ),
                (
                    "location_policy",
                    A::optional(s.clone(), "BALANCED or ANY.").and_computed(),
                ),
            ]),
        );
        schema.blocks.insert(
            "management".into(),
            list_block_max1(vec![
                (
                    "auto_repair",
                    A::optional(Type::Bool, "Repair unhealthy nodes.").and_computed(),
                ),
                (
                    "auto_upgrade",
                    A::optional(Type::Bool, "Upgrade nodes with the cluster.").and_computed(),
                ),
            ])
            .and_computed(),
        );
        schema.blocks.insert("timeouts".into(), timeouts());
        schema
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = strata_provider::plan_by_schema(schema, req.prior, req.config);
        let Some(prior) = req.prior else {
            return p;
        };
        same_named(&mut p, prior, &["cluster"]);
        let (old, new) = (tf(prior), tf(&p.planned));
        let (o, n) = (&old["node_config"][0], &new["node_config"][0]);
        for k in NODE_CONFIG_REPLACES {
            // A value the configuration leaves to GKE (null or unknown)
            // is not a change.
            let wanted = &n[*k];
            if !wanted.is_null() && p.planned.is_wholly_known() && o[*k] != *wanted {
                p.requires_replace
                    .push(vec!["node_config".into(), "0".into(), k.to_string()]);
            }
        }
        p
    }

    async fn read(&self, c: &Ctx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        // One list per cluster; then each pool's instance groups for its size.
        let mut by_cluster: BTreeMap<String, Option<Vec<Json>>> = BTreeMap::new();
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let j = tf(o);
            let (cluster, _) = Self::paths(c, &j)?;
            if !by_cluster.contains_key(&cluster) {
                let url = format!("{}{cluster}/nodePools", c.endpoints.container);
                let pools = c
                    .rest
                    .list_under("list node pools", &url, "nodePools")
                    .await?;
                by_cluster.insert(cluster.clone(), pools);
            }
            let found = by_cluster[&cluster]
                .as_ref()
                .and_then(|ps| ps.iter().find(|p| p["name"] == j["name"]).cloned());
            out.push(match found {
                Some(np) => Some(Self::value(c, &cluster, &np, &j).await?),
                None => None,
            });
        }
        Ok(out)
    }

    async fn create(&self, c: &Ctx, planned: &Value, tags: &Tags) -> Result<Value, DriverError> {
        let mut j = tf(planned);
        if j["name"].is_null() {
            j["name"] = json!(generated_name("strata-"));
        }
        let (cluster, path) = Self::paths(c, &j)?;
        let mut pool = to_api(POOL, &j);
        if pool.get("initialNodeCount").is_none() {
            pool["initialNodeCount"] = json!(j["node_count"].as_u64().unwrap_or(1));
        }
        pool["config"]["resourceLabels"] =
            with_ownership(&j["node_config"][0]["resource_labels"], tags);
        if pool.get("autoscaling").is_some() {
            pool["autoscaling"]["enabled"] = json!(true);
        }
        let url = format!("{}{cluster}/nodePools", c.endpoints.container);
        let t = timeout(planned, "create", CREATE);
        let r = run_op(
            c,
            &format!("create {}", Self::TYPE),
            &cluster,
            t,
            Method::POST,
            &url,
            Some(&json!({ "nodePool": pool })),
        )
        .await;
        if let Err(e) = r {
            let ours = match Self::get(c, &path).await? {
                Some(np) => api::owned(&np["config"]["resourceLabels"], tags),
                None => false,
            };
            let exists_error = matches!(&e, DriverError::Api { detail, .. } if detail.starts_with("ALREADY_EXISTS"));
            if !(exists_error && ours) {
                return Err(e);
            }
        }
        let np = Self::get(c, &path).await?.unwrap_or_default();
        if j["node_count"].is_number() && j["node_count"] != pool["initialNodeCount"] {
            return self
                .update(c, &Self::value(c, &cluster, &np, &j).await?, planned)
                .await;
        }
        Self::value(c, &cluster, &np, &j).await
    }

    async fn update(&self, c: &Ctx, prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        let (old, new) = (tf(prior), tf(planned));
        let (cluster, path) = Self::paths(c, &new)?;
        let url = format!("{}{path}", c.endpoints.container);
        let t = timeout(planned, "update", CREATE);
        let what = format!("update {}", Self::TYPE);
        // Zones first: a pool that grows after leaving a zone out must not
        // ask that zone for its nodes.
        if old["node_locations"] != new["node_locations"] && new["node_locations"].is_array() {
            run_op(
                c,
                &what,
                &cluster,
                t,
                Method::PUT,
                &url,
                Some(&json!({ "locations": new["node_locations"] })),
            )
            .await?;
        }
        if old["autoscaling"] != new["autoscaling"] {
            let mut a = to_api(AUTOSCALING, &new["autoscaling"][0]);
            a["enabled"] = json!(!new["autoscaling"].as_array().is_none_or(|x| x.is_empty()));
            run_op(
                c,
                &what,
                &cluster,
                t,
                Method::POST,
                &format!("{url}:setAutoscaling"),
                Some(&json!({ "autoscaling": a })),
            )
            .await?;
        }
        if old["management"] != new["management"] && !new["management"].is_null() {
            let m = to_api(MANAGEMENT, &new["management"][0]);
            run_op(
                c,
                &what,
                &cluster,
                t,
                Method::POST,
                &format!("{url}:setManagement"),
                Some(&json!({ "management": m })),
            )
            .await?;
        }
        let (o, n) = (&old["node_config"][0], &new["node_config"][0]);
        let mut change = serde_json::Map::new();
        if o["labels"] != n["labels"] {
            change.insert(
                "labels".into(),
                json!({ "labels": n["labels"].as_object().cloned().unwrap_or_default() }),
            );
        }
        if o["taint"] != n["taint"] {
            let taints = to_api(
                NODE_CONFIG,
                &json!({ "taint": n["taint"].as_array().cloned().unwrap_or_default() }),
            );
            change.insert(
                "taints".into(),
                json!({ "taints": taints.get("taints").cloned().unwrap_or(json!([])) }),
            );
        }
        if o["resource_labels"] != n["resource_labels"] {
            let current = Self::get(c, &path).await?.unwrap_or_default();
            let mut labels = ownership_of(&current["config"]["resourceLabels"]);
            if let (Some(m), Some(user)) =
                (labels.as_object_mut(), n["resource_labels"].as_object())
            {
                m.extend(user.clone());
            }
            change.insert("resourceLabels".into(), json!({ "labels": labels }));
        }
        if !change.is_empty() {
            run_op(
                c,
                &what,
                &cluster,
                t,
                Method::PUT,
                &url,
                Some(&Json::Object(change)),
            )
            .await?;
        }
        if new["node_count"].is_number()
            && old["node_count"] != new["node_count"]
            && new["autoscaling"].as_array().is_none_or(|a| a.is_empty())
        {
            run_op(
                c,
                &what,
                &cluster,
                t,
                Method::POST,
                &format!("{url}:setSize"),
                Some(&json!({ "nodeCount": new["node_count"] })),
            )
            .await?;
        }
        let np = Self::get(c, &path).await?.unwrap_or_default();
        Self::value(c, &cluster, &np, &new).await
    }

    async fn delete(&self, c: &Ctx, prior: &Value) -> Result<(), DriverError> {
        let j = tf(prior);
        let (cluster, path) = Self::paths(c, &j)?;
        if Self::get(c, &path).await?.is_none() {
            return Ok(());
        }
        let url = format!("{}{path}", c.endpoints.container);
        run_op(
            c,
            &format!("delete {}", Self::TYPE),
            &cluster,
            timeout(prior, "delete", CREATE),
            Method::DELETE,
            &url,
            None,
        )
        .await
    }

    async fn find_tagged(&self, c: &Ctx, tags: &Tags) -> Result<Vec<Value>, DriverError> {
        let Ok(project) = c.project(&Json::Null, Self::TYPE) else {
            return Ok(Vec::new());
        };
        let mut found = Vec::new();
        for (cluster, cl) in clusters(c, &project).await? {
            for np in cl["nodePools"].as_array().into_iter().flatten() {
                if api::owned(&np["config"]["resourceLabels"], tags) {
                    // Named as a configuration names it (the cluster's
                    // name), as an import does: an adopted pool is the
                    // one the configuration describes, not a replacement.
                    found.push(Self::value(c, &cluster, np, &json!({})).await?);
                }
            }
        }
        Ok(found)
    }

    /// Imported by `projects/P/locations/L/clusters/C/nodePools/N`.
    async fn import(&self, c: &Ctx, id: &str) -> Result<Option<Value>, DriverError> {
        let Some((cluster, _)) = id
            .split_once("/nodePools/")
            .filter(|_| id.starts_with("projects/"))
        else {
            return Err(api::invalid(
                Self::TYPE,
                format!(
                    "import id {id:?} must be projects/P/locations/L/clusters/C/nodePools/NAME"
                ),
            ));
        };
        match Self::get(c, id).await? {
            Some(np) => Ok(Some(Self::value(c, cluster, &np, &json!({})).await?)),
            None => Ok(None),
        }
    }
}
