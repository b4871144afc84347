//! A GKE cluster: its fields, and each change as the operation GKE runs.

use super::*;

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
