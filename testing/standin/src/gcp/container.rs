//! Kubernetes Engine (`/container/v1/`): clusters and node pools, one
//! operation per cluster at a time, node pools meeting the shortages a
//! test sets, and the nodes each pool makes join the Kubernetes stand-in.

use super::*;

impl World {
    pub(super) fn container(&mut self, req: &Req, s: &[&str]) -> Response<Body> {
        let full = s.join("/");
        // `clusters/NAME:verb` and `nodePools/NAME:verb` carry a custom verb.
        let (segs, verb): (Vec<&str>, Option<&str>) = match s.split_last() {
            Some((tail, head)) if tail.contains(':') => {
                let (name, verb) = tail.split_once(':').unwrap_or((tail, ""));
                let mut v = head.to_vec();
                v.push(name);
                (v, Some(verb))
            }
            _ => (s.to_vec(), None),
        };
        match (segs.as_slice(), &req.method, verb) {
            (["projects", p, "locations", l, "operations", name], &Method::GET, None) => {
                let _ = (p, l);
                match self.look(name) {
                    Some(o) => json(200, o),
                    None => google_rpc(
                        404,
                        "NOT_FOUND",
                        &format!("Operation \"{full}\" not found."),
                    ),
                }
            }
            (["projects", p, "locations", l, "clusters"], &Method::GET, None) => {
                let items: Vec<Json> = self
                    .objects
                    .iter()
                    .filter(|(k, _)| {
                        let parts: Vec<&str> = k.split('/').collect();
                        parts.len() == 6
                            && parts[1] == *p
                            && parts[4] == "clusters"
                            && (*l == "-" || parts[3] == *l)
                    })
                    .map(|(k, _)| self.cluster_view(k))
                    .collect();
                json(200, json!({ "clusters": items }))
            }
            (["projects", p, "locations", l, "clusters"], &Method::POST, None) => {
                self.create_cluster(req, p, l)
            }
            (["projects", p, "locations", l, "clusters", c], m, v) => {
                let key = format!("projects/{p}/locations/{l}/clusters/{c}");
                self.cluster_item(req, m, v, &key)
            }
            (["projects", p, "locations", l, "clusters", c, "nodePools"], m, None) => {
                let cluster = format!("projects/{p}/locations/{l}/clusters/{c}");
                if !self.objects.contains_key(&cluster) {
                    return google_rpc(404, "NOT_FOUND", &format!("Not found: {cluster}."));
                }
                if *m == Method::GET {
                    let items: Vec<Json> = self
                        .objects
                        .iter()
                        .filter(|(k, _)| k.starts_with(&format!("{cluster}/nodePools/")))
                        .map(|(_, v)| v.clone())
                        .collect();
                    return json(200, json!({ "nodePools": items }));
                }
                self.create_node_pool(req, &cluster)
            }
            (["projects", p, "locations", l, "clusters", c, "nodePools", np], m, v) => {
                let cluster = format!("projects/{p}/locations/{l}/clusters/{c}");
                self.node_pool_item(req, m, v, &cluster, np)
            }
            _ => google_rpc(
                404,
                "NOT_FOUND",
                &format!("{} {full}: no such method", req.method),
            ),
        }
    }

    pub(super) fn create_cluster(&mut self, req: &Req, p: &str, l: &str) -> Response<Body> {
        let b = match body(req) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let mut c = b["cluster"].clone();
        let Some(name) = c["name"].as_str().map(str::to_string) else {
            return google_rpc(400, "INVALID_ARGUMENT", "Cluster.name must be specified.");
        };
        let key = format!("projects/{p}/locations/{l}/clusters/{name}");
        if self.objects.contains_key(&key) {
            return google_rpc(409, "ALREADY_EXISTS", &format!("Already exists: {key}."));
        }
        let network = last(c["network"].as_str().unwrap_or("default")).to_string();
        let net_key = format!("projects/{p}/global/networks/{network}");
        if !self.objects.contains_key(&net_key) {
            return google_rpc(
                400,
                "INVALID_ARGUMENT",
                &format!("Network \"{network}\" does not exist."),
            );
        }
        if let Some(sub) = c["subnetwork"].as_str() {
            let region = l
                .rsplit_once('-')
                .map_or(l, |(r, z)| if z.len() == 1 { r } else { l });
            let sub_key = format!("projects/{p}/regions/{region}/subnetworks/{}", last(sub));
            let Some(subnet) = self.objects.get(&sub_key) else {
                return google_rpc(
                    400,
                    "INVALID_ARGUMENT",
                    &format!("Subnetwork \"{sub_key}\" does not exist."),
                );
            };
            let ranges: Vec<&str> = subnet["secondaryIpRanges"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["rangeName"].as_str())
                .collect();
            for f in ["clusterSecondaryRangeName", "servicesSecondaryRangeName"] {
                if let Some(r) = c["ipAllocationPolicy"][f].as_str() {
                    if !ranges.contains(&r) {
                        return google_rpc(400, "INVALID_ARGUMENT", &format!("Retry budget exhausted (1 attempts): Secondary range \"{r}\" does not exist in network \"{network}\", subnetwork \"{}\".", last(sub)));
                    }
                }
            }
            c["subnetwork"] = json!(last(sub));
        }
        if let Some(pool) = c["workloadIdentityConfig"]["workloadPool"].as_str() {
            if pool != format!("{p}.svc.id.goog") {
                return google_rpc(400, "INVALID_ARGUMENT", &format!("Workload Identity Pool \"{pool}\" is invalid; it must be \"{p}.svc.id.goog\"."));
            }
        }
        let id = self.id();
        c["network"] = json!(network);
        c["location"] = json!(l);
        c["zone"] = json!(l);
        c["selfLink"] = json!(format!("https://container.googleapis.com/v1/{key}"));
        c["id"] = json!(format!("{id:x}"));
        match &self.kube {
            Some(k) => {
                use base64::Engine;
                // GKE's endpoint is a host; the stand-in's carries the
                // cluster's path too (`https://` + it is its API server).
                let name = c["name"].as_str().unwrap_or_default().to_string();
                c["endpoint"] = json!(k.of(&name).trim_start_matches("https://"));
                c["masterAuth"] = json!({"clusterCaCertificate": base64::engine::general_purpose::STANDARD.encode(&k.ca_pem)});
            }
            None => {
                c["endpoint"] = json!(format!("34.{}.{}.{}", id % 200, id / 200 % 250, id % 250));
                c["masterAuth"] = json!({"clusterCaCertificate": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCnN0YW5kaW4KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="});
            }
        }
        c["currentMasterVersion"] = json!("1.31.6-gke.1020000");
        c["currentNodeVersion"] = json!("1.31.6-gke.1020000");
        c["initialClusterVersion"] = c
            .get("initialClusterVersion")
            .cloned()
            .unwrap_or(json!("1.31.6-gke.1020000"));
        c["createTime"] = json!(now());
        c["status"] = json!("PROVISIONING");
        c["labelFingerprint"] = json!(fingerprint(id));
        c["servicesIpv4Cidr"] = json!("10.8.0.0/20");
        if c.get("releaseChannel").is_none() {
            c["releaseChannel"] = json!({"channel": "REGULAR"});
        }
        if let Some(pc) = c.get_mut("privateClusterConfig") {
            pc["privateEndpoint"] = json!("10.0.0.2");
            pc["publicEndpoint"] = json!(format!("34.{}.0.1", id % 200));
        }
        let initial = c["initialNodeCount"].as_u64().unwrap_or(0);
        c.as_object_mut().map(|o| o.remove("nodeConfig"));
        self.objects.insert(key.clone(), c);
        if initial > 0 {
            let pool = json!({"name": "default-pool", "initialNodeCount": initial,
                "config": {"machineType": "e2-medium", "diskSizeGb": 100}});
            self.put_node_pool(&key, pool, "RUNNING");
        }
        let (then, or_else) = made(&key, None);
        let op = self.start_op(
            true,
            &format!("projects/{p}/locations/{l}"),
            "CREATE_CLUSTER",
            &key,
            Some(key.clone()),
            then,
            or_else,
        );
        json(200, op)
    }

    /// A shortage node pool `np` of `cluster` (as it would be after
    /// operation `op_type`) meets: refused now (the answer), or (after
    /// create) its operation set to fail with GKE's words for it.
    pub(super) fn short_of_capacity(
        &mut self,
        cluster: &str,
        np: &Json,
        grows: u64,
        op_type: &str,
    ) -> Option<Response<Body>> {
        // A flex-start pool's VMs wait for the capacity instead.
        if np["config"]["flexStart"] == true {
            return None;
        }
        let project = cluster.split('/').nth(1).unwrap_or("");
        let w = Wants::of(cluster, np);
        let region = &w.region;
        let hit = self.shortages.hit(&w.ask(grows))?;
        let (code, message) = match &hit.zone {
            Some(z) => ("ZONE_RESOURCE_POOL_EXHAUSTED", format!("The zone 'projects/{project}/zones/{z}' does not have enough resources available to fulfill the request. Try a different zone, or try again later.")),
            None => ("QUOTA_EXCEEDED", format!("Insufficient regional quota to satisfy request: resource \"GPUS\" in region {region}: request requires more than the quota left.")),
        };
        match hit.shortage.form {
            // GKE refuses a pool over quota at once, as users report it: a
            // 403 `forbidden` whose message alone says which quota.
            crate::capacity::Form::Refused if hit.zone.is_none() => {
                Some(err(403, "PERMISSION_DENIED", "forbidden", &format!(
                    "Insufficient regional quota to satisfy request: resource \"{}\": request requires '{grows}.0' and is short '{grows}.0'. project has a quota of '0.0' with '0.0' available. View and manage quotas at https://console.cloud.google.com/iam-admin/quotas?usage=USED&project={project}.",
                    w.gpu_quota
                )))
            }
            crate::capacity::Form::Refused => Some(google_rpc(
                403,
                "RESOURCE_EXHAUSTED",
                &format!("{code}: {message}"),
            )),
            crate::capacity::Form::AfterCreate => {
                self.failures.push((op_type.into(), code.into(), message));
                None
            }
            crate::capacity::Form::NoGpus => None,
        }
    }
}

/// What a node pool asks of its region, as a shortage is matched against.
pub(super) struct Wants {
    pub(super) region: String,
    pub(super) zones: Vec<String>,
    pub(super) machine: String,
    pub(super) capacity: &'static str,
    /// The quota its GPUs count against (`NVIDIA_L4_GPUS`, spot ones
    /// `PREEMPTIBLE_NVIDIA_L4_GPUS`), as GKE names it in a refusal.
    gpu_quota: String,
}

impl Wants {
    /// What launching `nodes` of them asks of the region.
    pub(super) fn ask(&self, nodes: u64) -> crate::capacity::Ask<'_> {
        crate::capacity::Ask {
            region: &self.region,
            zones: &self.zones,
            instance_type: &self.machine,
            capacity: self.capacity,
            nodes,
        }
    }

    /// Node pool `np` of the cluster at `path` (or at a path under it).
    pub(super) fn of(path: &str, np: &Json) -> Wants {
        let location = path.split('/').nth(3).unwrap_or("");
        let zonal = location.matches('-').count() >= 2;
        let region = match zonal {
            true => location.rsplit_once('-').map_or(location, |(r, _)| r),
            false => location,
        };
        let mut zones: Vec<String> = np["locations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|z| z.as_str().map(str::to_string))
            .collect();
        if zones.is_empty() && zonal {
            zones.push(location.to_string());
        }
        let config = &np["config"];
        let spot =
            config["spot"].as_bool() == Some(true) || config["preemptible"].as_bool() == Some(true);
        let flex = config["flexStart"].as_bool() == Some(true);
        let accelerator = config["accelerators"][0]["acceleratorType"]
            .as_str()
            .unwrap_or("nvidia");
        let kind = accelerator.to_ascii_uppercase().replace('-', "_");
        Wants {
            // Flex-start VMs count against preemptible quota, as Spot VMs do.
            gpu_quota: format!(
                "{}{kind}_GPUS",
                if spot || flex { "PREEMPTIBLE_" } else { "" }
            ),
            region: region.to_string(),
            zones,
            machine: config["machineType"]
                .as_str()
                .unwrap_or("e2-medium")
                .to_string(),
            capacity: match (spot, flex) {
                (true, _) => "spot",
                (_, true) => "flex_start",
                _ => "on_demand",
            },
        }
    }
}

impl World {
    /// The cluster's nodes made to match node pool `key`'s size (none
    /// once it is gone), labelled as GKE labels them.
    pub(super) fn nodes_of(&mut self, key: &str) {
        let np = self.objects.get(key).cloned().unwrap_or_default();
        let now = match self.waits_for_capacity(key, &np) {
            true => 0,
            false => pool_nodes(&np),
        };
        let was = self.vm_counts.insert(key.to_string(), now).unwrap_or(0);
        self.shrunk(key, was, now);
        let Some(nodes) = self.kube.as_ref().and_then(|k| k.nodes.as_ref()) else {
            return;
        };
        let gpus = int64(&np["config"]["accelerators"][0]["acceleratorCount"]).unwrap_or(0);
        let cluster = key.split("/clusters/").nth(1).unwrap_or("");
        let ask = Wants::of(key, &np);
        let pool = crate::kubernetes::PoolNodes {
            cluster: cluster.split('/').next().unwrap_or(""),
            key: "cloud.google.com/gke-nodepool",
            pool: last(key),
            labels: &np["config"]["labels"],
            gpus_per_node: gpus,
            gpus_withheld: self.shortages.withholds_gpus(&crate::capacity::Ask {
                region: &ask.region,
                zones: &[],
                instance_type: &ask.machine,
                capacity: ask.capacity,
                nodes: pool_nodes(&np),
            }),
        };
        nodes.scale(&pool, now);
    }

    /// Stores a node pool, its instance group manager and its size.
    pub(super) fn put_node_pool(&mut self, cluster: &str, mut np: Json, status: &str) -> String {
        let name = np["name"].as_str().unwrap_or("").to_string();
        let project = cluster.split('/').nth(1).unwrap_or("").to_string();
        let location = cluster.split('/').nth(3).unwrap_or("").to_string();
        let zone = if location.matches('-').count() >= 2 {
            location.clone()
        } else {
            format!("{location}-a")
        };
        let cname = last(cluster).to_string();
        let igm =
            format!("projects/{project}/zones/{zone}/instanceGroupManagers/gke-{cname}-{name}-grp");
        let key = format!("{cluster}/nodePools/{name}");
        np["selfLink"] = json!(format!("https://container.googleapis.com/v1/{key}"));
        np["status"] = json!(status);
        np["version"] = json!("1.31.6-gke.1020000");
        if np["locations"].as_array().is_none_or(|l| l.is_empty()) {
            np["locations"] = json!([zone]);
        }
        np["instanceGroupUrls"] = json!([compute_link(
            &igm.replace("instanceGroupManagers", "instanceGroups")
        )]);
        if np["config"].get("diskSizeGb").is_none() {
            np["config"]["diskSizeGb"] = json!(100);
        }
        if np["config"].get("diskType").is_none() {
            np["config"]["diskType"] = json!("pd-balanced");
        }
        if np["config"].get("imageType").is_none() {
            np["config"]["imageType"] = json!("COS_CONTAINERD");
        }
        if np.get("management").is_none() {
            np["management"] = json!({"autoUpgrade": true, "autoRepair": true});
        }
        flex::fill(&mut np);
        let size = np["initialNodeCount"].as_u64().unwrap_or(0);
        self.objects.insert(
            igm.clone(),
            json!({"kind": "compute#instanceGroupManager", "name": last(&igm), "zone": compute_link(&format!("projects/{project}/zones/{zone}")), "targetSize": size, "selfLink": compute_link(&igm)}),
        );
        self.objects.insert(key.clone(), np);
        key
    }

    /// A cluster as GKE shows it: with its node pools.
    pub(super) fn cluster_view(&self, key: &str) -> Json {
        let mut out = self.objects.get(key).cloned().unwrap_or_default();
        out["nodePools"] = json!(self
            .objects
            .iter()
            .filter(|(k, _)| k.starts_with(&format!("{key}/nodePools/")))
            .map(|(_, v)| v.clone())
            .collect::<Vec<_>>());
        out
    }

    pub(super) fn igm_of(&self, np: &Json) -> Option<String> {
        let url = np["instanceGroupUrls"][0].as_str()?;
        let path = url.split("/compute/v1/").nth(1)?;
        Some(path.replace("instanceGroups", "instanceGroupManagers"))
    }

    pub(super) fn cluster_item(
        &mut self,
        req: &Req,
        m: &Method,
        verb: Option<&str>,
        key: &str,
    ) -> Response<Body> {
        let Some(current) = self.objects.get(key).cloned() else {
            return google_rpc(404, "NOT_FOUND", &format!("Not found: {key}."));
        };
        let scope = key.split("/clusters/").next().unwrap_or("").to_string();
        if *m == Method::GET && verb.is_none() {
            return json(200, self.cluster_view(key));
        }
        if let Some(op) = self.busy(key).map(str::to_string) {
            return self.incompatible(&op);
        }
        let k = key.to_string();
        match (m, verb) {
            (&Method::DELETE, None) => {
                let op = self.start_op(
                    true,
                    &scope,
                    "DELETE_CLUSTER",
                    key,
                    Some(key.to_string()),
                    vec![Box::new(move |w: &mut World| {
                        let pools: Vec<String> = w
                            .objects
                            .keys()
                            .filter(|x| x.starts_with(&format!("{k}/nodePools/")))
                            .cloned()
                            .collect();
                        for p in pools {
                            if let Some(igm) = w.objects.get(&p).and_then(|np| w.igm_of(np)) {
                                w.objects.remove(&igm);
                            }
                            w.objects.remove(&p);
                        }
                        w.objects.remove(&k);
                    })],
                    vec![],
                );
                if let Some(c) = self.objects.get_mut(key) {
                    c["status"] = json!("STOPPING");
                }
                json(200, op)
            }
            (&Method::PUT, None) => {
                let b = match body(req) {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                let fields = b["update"].as_object().cloned().unwrap_or_default();
                if fields.len() != 1 {
                    return google_rpc(
                        400,
                        "INVALID_ARGUMENT",
                        "Exactly one update can be applied to a cluster with each request.",
                    );
                }
                let op = self.start_op(
                    true,
                    &scope,
                    "UPDATE_CLUSTER",
                    key,
                    Some(key.to_string()),
                    vec![Box::new(move |w: &mut World| {
                        if let Some(c) = w.objects.get_mut(&k) {
                            for (f, v) in fields {
                                match f.as_str() {
                                    "desiredReleaseChannel" => c["releaseChannel"] = v,
                                    "desiredWorkloadIdentityConfig" => {
                                        c["workloadIdentityConfig"] = v
                                    }
                                    "desiredMasterVersion" => c["currentMasterVersion"] = v,
                                    "desiredPrivateClusterConfig" => {
                                        c["privateClusterConfig"]["enablePrivateEndpoint"] =
                                            v["enablePrivateEndpoint"].clone()
                                    }
                                    // Accepted as GKE accepts it; the stand-in
                                    // models the updates strata sends.
                                    _ => {}
                                }
                            }
                        }
                    })],
                    vec![],
                );
                json(200, op)
            }
            (&Method::POST, Some("setResourceLabels")) => {
                let b = match body(req) {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                if b["labelFingerprint"] != current["labelFingerprint"] {
                    return google_rpc(
                        400,
                        "FAILED_PRECONDITION",
                        "Labels could not be set due to fingerprint mismatch.",
                    );
                }
                let id = self.id();
                let op = self.start_op(
                    true,
                    &scope,
                    "SET_LABELS",
                    key,
                    Some(key.to_string()),
                    vec![Box::new(move |w: &mut World| {
                        if let Some(c) = w.objects.get_mut(&k) {
                            c["resourceLabels"] = b["resourceLabels"].clone();
                            c["labelFingerprint"] = json!(fingerprint(id));
                        }
                    })],
                    vec![],
                );
                json(200, op)
            }
            _ => google_rpc(400, "INVALID_ARGUMENT", "no such method on a cluster"),
        }
    }

    pub(super) fn create_node_pool(&mut self, req: &Req, cluster: &str) -> Response<Body> {
        let b = match body(req) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let np = b["nodePool"].clone();
        let Some(name) = np["name"].as_str().map(str::to_string) else {
            return google_rpc(400, "INVALID_ARGUMENT", "NodePool.name must be specified.");
        };
        let key = format!("{cluster}/nodePools/{name}");
        if self.objects.contains_key(&key) {
            return google_rpc(409, "ALREADY_EXISTS", &format!("Already exists: {key}."));
        }
        if let Some(op) = self.busy(cluster).map(str::to_string) {
            return self.incompatible(&op);
        }
        for t in np["config"]["taints"].as_array().into_iter().flatten() {
            let e = t["effect"].as_str().unwrap_or("");
            if !["NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE"].contains(&e) {
                return google_rpc(
                    400,
                    "INVALID_ARGUMENT",
                    &format!("Invalid value for field 'node_pool.config.taints.effect': \"{e}\""),
                );
            }
        }
        if let Some(refused) = flex::refusal(&np) {
            return refused;
        }
        let grows = pool_nodes(&np);
        if let Some(refused) = self.short_of_capacity(cluster, &np, grows, "CREATE_NODE_POOL") {
            return refused;
        }
        if let Some(refused) = self.reservation_refusal(cluster, &np, grows) {
            return refused;
        }
        self.put_node_pool(cluster, np, "PROVISIONING");
        let (then, or_else) = made(&key, Some("node pool creation failed"));
        let op = self.start_op(
            true,
            cluster.split("/clusters/").next().unwrap_or(""),
            "CREATE_NODE_POOL",
            &key,
            Some(cluster.to_string()),
            then,
            or_else,
        );
        json(200, op)
    }

    pub(super) fn node_pool_item(
        &mut self,
        req: &Req,
        m: &Method,
        verb: Option<&str>,
        cluster: &str,
        name: &str,
    ) -> Response<Body> {
        let key = format!("{cluster}/nodePools/{name}");
        let Some(current) = self.objects.get(&key).cloned() else {
            return google_rpc(404, "NOT_FOUND", &format!("Not found: {key}."));
        };
        if *m == Method::GET && verb.is_none() {
            return json(200, current);
        }
        if let Some(op) = self.busy(cluster).map(str::to_string) {
            return self.incompatible(&op);
        }
        let scope = cluster.split("/clusters/").next().unwrap_or("").to_string();
        let k = key.clone();
        let igm = self.igm_of(&current);
        let op_type = match (m, verb) {
            (&Method::DELETE, None) => "DELETE_NODE_POOL",
            (&Method::POST, Some("setSize")) => "SET_NODE_POOL_SIZE",
            (&Method::POST, Some("setAutoscaling")) => "SET_NODE_POOL_AUTOSCALING",
            (&Method::POST, Some("setManagement")) => "SET_NODE_POOL_MANAGEMENT",
            (&Method::PUT, None) => "UPDATE_NODE_POOL",
            _ => return google_rpc(400, "INVALID_ARGUMENT", "no such method on a node pool"),
        };
        let b = match body(req) {
            Ok(b) => b,
            Err(r) => return r,
        };
        // A pool that grows needs capacity as a new one does.
        let mut after = current.clone();
        match op_type {
            "SET_NODE_POOL_SIZE" => after["initialNodeCount"] = b["nodeCount"].clone(),
            "SET_NODE_POOL_AUTOSCALING" => after["autoscaling"] = b["autoscaling"].clone(),
            "UPDATE_NODE_POOL" if b.get("locations").is_some() => {
                after["locations"] = b["locations"].clone()
            }
            _ => after = Json::Null,
        }
        let grows = pool_nodes(&after).saturating_sub(pool_nodes(&current));
        if !after.is_null() {
            if let Some(refused) = self.short_of_capacity(cluster, &after, grows, op_type) {
                return refused;
            }
        }
        let effect: Effect = match op_type {
            "DELETE_NODE_POOL" => Box::new(move |w: &mut World| {
                if let Some(np) = w.objects.get_mut(&k) {
                    np["autoscaling"] = json!({});
                    np["initialNodeCount"] = json!(0);
                }
                w.nodes_of(&k);
                w.objects.remove(&k);
                if let Some(i) = igm {
                    w.objects.remove(&i);
                }
            }),
            "SET_NODE_POOL_SIZE" => Box::new(move |w: &mut World| {
                if let Some(i) = igm.and_then(|i| w.objects.get_mut(&i)) {
                    i["targetSize"] = b["nodeCount"].clone();
                }
                if let Some(np) = w.objects.get_mut(&k) {
                    np["initialNodeCount"] = b["nodeCount"].clone();
                }
                w.nodes_of(&k);
            }),
            "SET_NODE_POOL_AUTOSCALING" => Box::new(move |w: &mut World| {
                if let Some(np) = w.objects.get_mut(&k) {
                    np["autoscaling"] = b["autoscaling"].clone();
                }
                w.nodes_of(&k);
            }),
            "SET_NODE_POOL_MANAGEMENT" => Box::new(move |w: &mut World| {
                if let Some(np) = w.objects.get_mut(&k) {
                    np["management"] = b["management"].clone();
                }
            }),
            _ => Box::new(move |w: &mut World| {
                if let Some(np) = w.objects.get_mut(&k) {
                    if let Some(l) = b.get("labels") {
                        np["config"]["labels"] = l["labels"].clone();
                    }
                    if let Some(l) = b.get("resourceLabels") {
                        np["config"]["resourceLabels"] = l["labels"].clone();
                    }
                    if let Some(t) = b.get("taints") {
                        np["config"]["taints"] = t["taints"].clone();
                    }
                    if let Some(l) = b.get("locations") {
                        np["locations"] = l.clone();
                    }
                }
            }),
        };
        if op_type == "DELETE_NODE_POOL" {
            if let Some(np) = self.objects.get_mut(&key) {
                np["status"] = json!("STOPPING");
            }
        }
        let op = self.start_op(
            true,
            &scope,
            op_type,
            &key,
            Some(cluster.to_string()),
            vec![effect],
            vec![],
        );
        json(200, op)
    }
}

/// What a create of the cluster or pool at `key` does when its operation
/// ends: RUNNING with its nodes joined, or ERROR (with `failed` as its
/// status message).
fn made(key: &str, failed: Option<&'static str>) -> (Vec<Effect>, Vec<Effect>) {
    let (k, k2) = (key.to_string(), key.to_string());
    let then: Effect = Box::new(move |w: &mut World| {
        if let Some(c) = w.objects.get_mut(&k) {
            c["status"] = json!("RUNNING");
        }
        w.nodes_of(&k);
    });
    let or_else: Effect = Box::new(move |w: &mut World| {
        if let Some(c) = w.objects.get_mut(&k2) {
            c["status"] = json!("ERROR");
            if let Some(m) = failed {
                c["statusMessage"] = json!(m);
            }
        }
    });
    (vec![then], vec![or_else])
}
