//! A GKE node pool: its fields, its size as its instance groups hold it,
//! and each change as the operation GKE runs.

use super::*;

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
    f("flex_start", "flexStart"),
    f("max_run_duration", "maxRunDuration"),
    array("guest_accelerator", "accelerators", ACCELERATOR),
    f("service_account", "serviceAccount"),
    f("oauth_scopes", "oauthScopes"),
    f("tags", "tags"),
    object(
        "reservation_affinity",
        "reservationAffinity",
        &[
            f("consume_reservation_type", "consumeReservationType"),
            f("key", "key"),
            f("values", "values"),
        ],
    ),
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
    object(
        "queued_provisioning",
        "queuedProvisioning",
        &[f("enabled", "enabled")],
    ),
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
    "flex_start",
    "max_run_duration",
    "guest_accelerator",
    "service_account",
    "oauth_scopes",
    "tags",
    "reservation_affinity",
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
                "flex_start",
                A::optional(
                    Type::Bool,
                    "Flex-start VMs (the Dynamic Workload Scheduler's): they wait for capacity.",
                ),
            ),
            (
                "max_run_duration",
                A::optional(
                    s.clone(),
                    "How long a node may run (\"604800s\"); flex-start VMs stop at seven days.",
                ),
            ),
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
        node_config.schema.blocks.insert(
            "reservation_affinity".into(),
            list_block_max1(vec![
                (
                    "consume_reservation_type",
                    A::required(
                        s.clone(),
                        "NO_RESERVATION, ANY_RESERVATION or SPECIFIC_RESERVATION.",
                    ),
                ),
                (
                    "key",
                    A::optional(s.clone(), "compute.googleapis.com/reservation-name."),
                ),
                (
                    "values",
                    A::optional(Type::set(s.clone()), "The reservations, by name."),
                ),
            ]),
        );
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
        schema.blocks.insert(
            "queued_provisioning".into(),
            list_block_max1(vec![(
                "enabled",
                A::required(
                    Type::Bool,
                    "Nodes come only for a ProvisioningRequest (flex-start with queued provisioning).",
                )
                .force_new(),
            )]),
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
