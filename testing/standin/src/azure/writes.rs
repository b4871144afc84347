//! Writes to a resource: a PUT held to Azure's definition and to the rules
//! each service enforces (locations, AKS's one operation at a time, spot
//! capacity, role assignments, storage names), what ARM fills in on the
//! object it stores, and a DELETE with what it takes along.

use super::*;

impl World {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn put(
        &mut self,
        req: &Req,
        base: &str,
        version: &str,
        info: &TypeInfo,
        path: &str,
        current: Option<Json>,
        scope: Option<String>,
    ) -> Response<Body> {
        let body: Json = match serde_json::from_slice(&req.body) {
            Ok(b) => b,
            Err(e) => {
                return error(
                    400,
                    "InvalidRequestContent",
                    &format!("The request content was invalid and could not be deserialized: {e}"),
                )
            }
        };
        let schema = definition(info.key, version);
        let problems = crate::definitions::api("azure")
            .map(|d| d.check(&schema, &body, Side::Request, "$"))
            .unwrap_or_default();
        if !problems.is_empty() {
            return error(
                400,
                "InvalidRequestContent",
                &format!(
                    "The request content was invalid and could not be deserialized as {} {version}: {}",
                    type_name(info.key),
                    problems.join("; ")
                ),
            );
        }
        let name = path.rsplit('/').next().unwrap_or("");
        let lower_id = path.to_ascii_lowercase();
        if let Some(refused) = self
            .lock_refusing(&Method::PUT, path)
            .or_else(|| self.storage_rules(info.key, &lower_id, name, &body))
        {
            return refused;
        }
        if info.tracked && body["location"].as_str().is_none() {
            return error(
                400,
                "LocationRequired",
                "The location property is required for this definition.",
            );
        }
        let id = path.to_ascii_lowercase();
        let name = path.rsplit('/').next().unwrap_or("").to_string();
        let mut obj = current.clone().unwrap_or_else(|| json!({}));
        let creating = current.is_none();
        if !creating
            && info.tracked
            && body["location"].as_str().map(str::to_ascii_lowercase)
                != obj["location"].as_str().map(str::to_ascii_lowercase)
        {
            return error(400, "InvalidResourceLocation", "The resource already exists in another location. Resources cannot be moved by a PUT.");
        }
        // Type-specific rules the real service enforces.
        let cluster = match info.key {
            "microsoft.containerservice/managedclusters" => Some(id.clone()),
            "microsoft.containerservice/managedclusters/agentpools" => {
                id.rsplit_once("/agentpools/").map(|(c, _)| c.to_string())
            }
            _ => None,
        };
        if let Some(c) = &cluster {
            if let Some(running) = self
                .ops
                .values()
                .find(|o| o.looks < 2 && o.cluster.as_deref() == Some(c))
            {
                let _ = running;
                return self.busy_cluster();
            }
            if info.key.ends_with("agentpools") && !self.objects.contains_key(c) {
                return error(
                    404,
                    "ResourceNotFound",
                    &format!("The Resource '{c}' was not found."),
                );
            }
        }
        if let Some(c) = cluster
            .as_ref()
            .filter(|_| info.key.ends_with("agentpools"))
        {
            if let Some(refused) = self.short_of_capacity(c, &id, &body["properties"]) {
                return refused;
            }
            if let Some(refused) = self.group_refusal(c, &body["properties"]) {
                return refused;
            }
        }
        if info.key.ends_with("agentpools")
            && !creating
            && body["properties"]["vmSize"] != obj["properties"]["vmSize"]
        {
            return error(
                400,
                "PropertyChangeNotAllowed",
                "Changing property 'vmSize' is not allowed.",
            );
        }
        if info.key == "microsoft.authorization/roleassignments" {
            let principal = body["properties"]["principalId"]
                .as_str()
                .unwrap_or("")
                .to_string();
            if let Some(i) = self.unseen_principals.iter().position(|p| *p == principal) {
                self.unseen_principals.remove(i);
                return error(400, "PrincipalNotFound", &format!("Principal {principal} does not exist in the directory {TENANT}. Check that you have the correct principal ID. If you are creating this principal and then immediately assigning a role, this error might be related to a replication delay."));
            }
            let role = body["properties"]["roleDefinitionId"]
                .as_str()
                .unwrap_or("");
            let dup = self.objects.iter().any(|(k, o)| {
                *k != id
                    && type_key(k) == info.key
                    && o["properties"]["principalId"] == principal.as_str()
                    && o["properties"]["roleDefinitionId"] == role
                    && o["properties"]["scope"]
                        .as_str()
                        .map(str::to_ascii_lowercase)
                        == scope.as_ref().map(|s| s.to_ascii_lowercase())
            });
            if dup {
                return error(
                    409,
                    "RoleAssignmentExists",
                    "The role assignment already exists.",
                );
            }
        }
        if info.key == "microsoft.network/virtualnetworks/subnets" {
            let vnet = id
                .rsplit_once("/subnets/")
                .map(|(v, _)| v.to_string())
                .unwrap_or_default();
            if !self.objects.contains_key(&vnet) {
                return error(
                    404,
                    "ResourceNotFound",
                    &format!("The Resource '{vnet}' was not found."),
                );
            }
        }
        if info.key == "microsoft.storage/storageaccounts" && creating {
            let taken = self.objects.keys().any(|k| {
                type_key(k) == info.key && k.ends_with(&format!("/{}", name.to_ascii_lowercase()))
            });
            if taken {
                return error(
                    409,
                    "StorageAccountAlreadyTaken",
                    &format!("The storage account named {name} is already taken."),
                );
            }
        }
        // Merge the request into the stored resource.
        obj["id"] = json!(path);
        obj["name"] = json!(name);
        obj["type"] = json!(type_name(info.key));
        if info.tracked {
            obj["location"] = body["location"].clone();
            obj["tags"] = body.get("tags").cloned().unwrap_or(json!({}));
        }
        for k in ["identity", "sku", "kind", "zones"] {
            if let Some(v) = body.get(k) {
                obj[k] = v.clone();
            }
        }
        let mut props = body["properties"].as_object().cloned().unwrap_or_default();
        let kept = obj["properties"].as_object().cloned().unwrap_or_default();
        self.fill(
            info.key,
            &id,
            &name,
            &mut props,
            &kept,
            &mut obj,
            creating,
            scope.as_deref(),
        );
        let mode = info.put;
        let state = if mode == Mode::Sync {
            "Succeeded"
        } else if creating {
            "Creating"
        } else {
            "Updating"
        };
        if declared(info.key, version, &["properties", "provisioningState"]) {
            props.insert("provisioningState".into(), json!(state));
        }
        obj["properties"] = Json::Object(props);
        if info.key == "microsoft.network/virtualnetworks" {
            // A PUT without `subnets` removes them (as ARM does).
            let listed: Vec<String> = body["properties"]["subnets"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s["name"].as_str().map(str::to_ascii_lowercase))
                .collect();
            let gone: Vec<String> = self
                .objects
                .keys()
                .filter(|k| {
                    k.starts_with(&format!("{id}/subnets/"))
                        && !listed.iter().any(|n| k.ends_with(&format!("/{n}")))
                })
                .cloned()
                .collect();
            for g in gone {
                self.objects.remove(&g);
            }
        }
        // A child every account has (`blobServices/default`,
        // `managementPolicies/default`) is never created: its PUT answers
        // 200 only, as those operations document.
        let singleton = matches!(
            info.key,
            "microsoft.storage/storageaccounts/blobservices"
                | "microsoft.storage/storageaccounts/managementpolicies"
        );
        let status = if creating && !singleton { 201 } else { 200 };
        match mode {
            Mode::Sync => {
                self.objects.insert(id, obj.clone());
                json(status, obj)
            }
            Mode::AsyncOp | Mode::Location => {
                self.objects.insert(id.clone(), obj.clone());
                let (i2, i3) = (id.clone(), id.clone());
                let op = self.start_op(
                    info.key,
                    cluster,
                    Box::new(move |w: &mut World| {
                        if let Some(o) = w.objects.get_mut(&i2) {
                            o["properties"]["provisioningState"] = json!("Succeeded");
                        }
                        w.nodes_of(&i2, false);
                    }),
                    Box::new(move |w: &mut World| {
                        if let Some(o) = w.objects.get_mut(&i3) {
                            o["properties"]["provisioningState"] = json!("Failed");
                        }
                    }),
                    if mode == Mode::Location {
                        Some(id.clone())
                    } else {
                        None
                    },
                    true,
                );
                let ns = info.key.split('/').next().unwrap_or("");
                let async_url = format!("{base}/subscriptions/{SUBSCRIPTION}/providers/{ns}/locations/eastus/operations/{op}?api-version={version}");
                let loc_url = format!("{base}/subscriptions/{SUBSCRIPTION}/providers/{ns}/locations/eastus/operationResults/{op}?api-version={version}");
                let mut r = Response::builder()
                    .header("retry-after", "1")
                    .header("content-type", "application/json");
                r = if mode == Mode::AsyncOp {
                    r.status(status).header("azure-asyncoperation", async_url)
                } else {
                    r.status(202).header("location", loc_url)
                };
                let body = if mode == Mode::AsyncOp {
                    obj.to_string()
                } else {
                    String::new()
                };
                r.body(Body::from(body)).unwrap_or_default()
            }
        }
    }

    /// What ARM adds to a resource: read-only properties per type.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fill(
        &mut self,
        key: &str,
        id: &str,
        name: &str,
        props: &mut Map<String, Json>,
        kept: &Map<String, Json>,
        obj: &mut Json,
        creating: bool,
        scope: Option<&str>,
    ) {
        match key {
            "microsoft.managedidentity/userassignedidentities" => {
                if creating {
                    let principal = self.uuid();
                    props.insert("tenantId".into(), json!(TENANT));
                    props.insert("principalId".into(), json!(principal.clone()));
                    props.insert("clientId".into(), json!(self.uuid()));
                    // A new principal takes a moment to reach the directory.
                    self.unseen_principals.push(principal);
                } else {
                    for k in ["tenantId", "principalId", "clientId"] {
                        if let Some(v) = kept.get(k) {
                            props.insert(k.into(), v.clone());
                        }
                    }
                }
            }
            "microsoft.authorization/roleassignments" => {
                props.insert("scope".into(), json!(scope.unwrap_or("")));
                props
                    .entry("principalType")
                    .or_insert(json!("ServicePrincipal"));
            }
            "microsoft.network/virtualnetworks/subnets"
            | "microsoft.network/networksecuritygroups"
            | "microsoft.network/virtualnetworks" => {
                obj["etag"] = json!(format!("W/\"{}\"", self.uuid()));
                if key == "microsoft.network/networksecuritygroups" {
                    if let Some(rules) = props.get_mut("securityRules").and_then(Json::as_array_mut)
                    {
                        for r in rules {
                            let n = r["name"].as_str().unwrap_or("").to_string();
                            r["id"] = json!(format!(
                                "{}/securityRules/{n}",
                                obj["id"].as_str().unwrap_or("")
                            ));
                            r["type"] =
                                json!("Microsoft.Network/networkSecurityGroups/securityRules");
                            r["properties"]["provisioningState"] = json!("Succeeded");
                        }
                    }
                }
                if key == "microsoft.network/virtualnetworks" {
                    // Subnets given in the network's body are made or
                    // changed as the child resources they are.
                    let given = props.get("subnets").and_then(Json::as_array).cloned();
                    for s in given.into_iter().flatten() {
                        let Some(sname) = s["name"].as_str() else {
                            continue;
                        };
                        let sid = format!("{}/subnets/{sname}", obj["id"].as_str().unwrap_or(""));
                        let mut sprops = s["properties"].clone();
                        sprops["provisioningState"] = json!("Succeeded");
                        let subnet = json!({"id": sid, "name": sname,
                            "type": "Microsoft.Network/virtualNetworks/subnets",
                            "etag": format!("W/\"{}\"", self.uuid()), "properties": sprops});
                        self.objects.insert(sid.to_ascii_lowercase(), subnet);
                    }
                    let subs: Vec<Json> = self
                        .objects
                        .iter()
                        .filter(|(k, _)| k.starts_with(&format!("{id}/subnets/")))
                        .map(|(_, v)| v.clone())
                        .collect();
                    props.insert("subnets".into(), json!(subs));
                }
            }
            "microsoft.containerservice/managedclusters" => {
                // The network AKS chooses for what the body leaves out, as
                // its examples answer.
                if let Some(net) = props
                    .entry("networkProfile")
                    .or_insert(json!({}))
                    .as_object_mut()
                {
                    net.entry("networkPlugin").or_insert(json!("kubenet"));
                    let own_pods = net.get("networkPlugin") == Some(&json!("kubenet"))
                        || net.get("networkPluginMode") == Some(&json!("overlay"));
                    if own_pods {
                        net.entry("podCidr").or_insert(json!("10.244.0.0/16"));
                    }
                    net.entry("serviceCidr").or_insert(json!("10.0.0.0/16"));
                    net.entry("dnsServiceIP").or_insert(json!("10.0.0.10"));
                    net.entry("outboundType").or_insert(json!("loadBalancer"));
                }
                let n = self.id();
                props.insert(
                    "fqdn".into(),
                    json!(format!(
                        "{}-{n:08x}.hcp.eastus.azmk8s.io",
                        props
                            .get("dnsPrefix")
                            .and_then(Json::as_str)
                            .unwrap_or(name)
                    )),
                );
                // No version, or an empty one, is AKS's default.
                let version = chosen_version(props.get("kubernetesVersion"));
                props.insert("kubernetesVersion".into(), version.clone());
                props.insert("currentKubernetesVersion".into(), version);
                props.entry("nodeResourceGroup").or_insert(json!(format!(
                    "MC_{}_{name}_eastus",
                    id.split('/').nth(4).unwrap_or("")
                )));
                let kubelet = kept.get("identityProfile").cloned().unwrap_or_else(|| json!({"kubeletidentity": {"clientId": self.uuid(), "objectId": self.uuid(), "resourceId": format!("/subscriptions/{SUBSCRIPTION}/resourceGroups/MC/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{name}-agentpool")}}));
                props.insert("identityProfile".into(), kubelet);
                if props
                    .get("oidcIssuerProfile")
                    .and_then(|o| o["enabled"].as_bool())
                    == Some(true)
                {
                    props.insert("oidcIssuerProfile".into(), json!({"enabled": true, "issuerURL": format!("https://eastus.oic.prod-aks.azure.com/{TENANT}/{n:08x}/")}));
                }
                if creating {
                    // The system pool of the cluster body is a child resource too.
                    if let Some(pools) = props
                        .get("agentPoolProfiles")
                        .and_then(Json::as_array)
                        .cloned()
                    {
                        for p in pools {
                            let pname = p["name"].as_str().unwrap_or("").to_string();
                            let mut child = p.clone();
                            child.as_object_mut().map(|m| m.remove("name"));
                            let pid =
                                format!("{}/agentPools/{pname}", obj["id"].as_str().unwrap_or(""));
                            self.objects.insert(pid.to_ascii_lowercase(), json!({"id": pid, "name": pname, "type": "Microsoft.ContainerService/managedClusters/agentPools", "properties": merge(child, json!({"provisioningState": "Succeeded", "powerState": {"code": "Running"}}))}));
                        }
                    }
                }
                // (`get_mut`: indexing would put an identity into a body without one.)
                let assigned = obj
                    .get_mut("identity")
                    .and_then(|i| i.get_mut("userAssignedIdentities"));
                if let Some(id) = assigned.and_then(Json::as_object_mut) {
                    for (uid, v) in id.iter_mut() {
                        let found = self.objects.get(&uid.to_ascii_lowercase()).map(|o| json!({"principalId": o["properties"]["principalId"], "clientId": o["properties"]["clientId"]}));
                        *v = found.unwrap_or(json!({}));
                    }
                }
            }
            "microsoft.compute/capacityreservationgroups/capacityreservations" => {
                self.fill_reservation(props, kept);
            }
            "microsoft.containerservice/managedclusters/agentpools" => {
                self.drop_empty_group(props);
                if props.get("scaleSetPriority").and_then(Json::as_str) == Some("Spot") {
                    // What a spot pool leaves out AKS fills in, as its
                    // examples answer: no price cap, evicted nodes deleted.
                    props.entry("spotMaxPrice").or_insert(json!(-1));
                    props
                        .entry("scaleSetEvictionPolicy")
                        .or_insert(json!("Delete"));
                    // AKS marks spot nodes itself, label and taint.
                    let labels = props.entry("nodeLabels").or_insert(json!({}));
                    labels["kubernetes.azure.com/scalesetpriority"] = json!("spot");
                    let taint = json!("kubernetes.azure.com/scalesetpriority=spot:NoSchedule");
                    let taints = props.entry("nodeTaints").or_insert(json!([]));
                    if let Some(t) = taints.as_array_mut().filter(|t| !t.contains(&taint)) {
                        t.push(taint);
                    }
                }
                // A pool is stopped or started by a PUT of its power state.
                let power = match props.get("powerState").map(|p| &p["code"]) {
                    Some(Json::String(code)) if code == "Stopped" => "Stopped",
                    _ => "Running",
                };
                props.insert("powerState".into(), json!({ "code": power }));
                // A pool without a version (or with "") runs its cluster's.
                let cluster = id.rsplit_once("/agentpools/").map(|(c, _)| c);
                let running = cluster
                    .and_then(|c| self.objects.get(c))
                    .map(|c| c["properties"]["currentKubernetesVersion"].clone());
                let version = match props.get("orchestratorVersion").and_then(Json::as_str) {
                    Some(v) if !v.is_empty() => json!(v),
                    _ => chosen_version(running.as_ref()),
                };
                props.insert("orchestratorVersion".into(), version);
                props.entry("osType").or_insert(json!("Linux"));
                props
                    .entry("type")
                    .or_insert(json!("VirtualMachineScaleSets"));
            }
            "microsoft.storage/storageaccounts" => {
                // The tier is the SKU name's first word (Standard_GRS).
                if let Some(tier) = obj["sku"]["name"]
                    .as_str()
                    .and_then(|n| n.split('_').next())
                {
                    obj["sku"]["tier"] = json!(tier);
                }
                props.insert("primaryEndpoints".into(), json!({"blob": format!("https://{name}.blob.core.windows.net/"), "dfs": format!("https://{name}.dfs.core.windows.net/")}));
                props.entry("minimumTlsVersion").or_insert(json!("TLS1_0"));
                props
                    .entry("supportsHttpsTrafficOnly")
                    .or_insert(json!(true));
                props.entry("allowBlobPublicAccess").or_insert(json!(false));
                // Only blob accounts have a tier (general-purpose v1 has none).
                if matches!(
                    obj["kind"].as_str(),
                    Some("StorageV2" | "BlobStorage") | None
                ) {
                    props.entry("accessTier").or_insert(json!("Hot"));
                }
            }
            _ => {}
        }
    }

    pub(super) fn delete(
        &mut self,
        base: &str,
        version: &str,
        info: &TypeInfo,
        id: &str,
    ) -> Response<Body> {
        let cluster = match info.key {
            "microsoft.containerservice/managedclusters" => Some(id.to_string()),
            "microsoft.containerservice/managedclusters/agentpools" => {
                id.rsplit_once("/agentpools/").map(|(c, _)| c.to_string())
            }
            _ => None,
        };
        if let Some(c) = &cluster {
            if self
                .ops
                .values()
                .any(|o| o.looks < 2 && o.cluster.as_deref() == Some(c))
            {
                return self.busy_cluster();
            }
        }
        if info.key == "microsoft.network/virtualnetworks/subnets" {
            let link = self
                .objects
                .get(id)
                .and_then(|o| o["id"].as_str().map(str::to_ascii_lowercase))
                .unwrap_or_default();
            let user = self.objects.iter().find(|(_, o)| {
                o["properties"]["agentPoolProfiles"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .chain(std::iter::once(&o["properties"]))
                    .any(|p| {
                        p["vnetSubnetID"].as_str().map(str::to_ascii_lowercase)
                            == Some(link.clone())
                    })
            });
            if let Some((u, _)) = user {
                return error(
                    400,
                    "InUseSubnetCannotBeDeleted",
                    &format!("Subnet {link} is in use by {u} and cannot be deleted."),
                );
            }
        }
        let prefix = format!("{id}/");
        let gone = move |w: &mut World| {
            let keys: Vec<String> = w
                .objects
                .keys()
                .filter(|k| {
                    **k == prefix[..prefix.len() - 1]
                        || k.starts_with(&prefix)
                        || (type_key(&prefix[..prefix.len() - 1]) == "resourcegroups"
                            && k.starts_with(&prefix))
                })
                .cloned()
                .collect();
            for k in keys {
                w.nodes_of(&k, true);
                w.objects.remove(&k);
            }
            w.drop_orphan_blobs();
        };
        match info.delete {
            Mode::Sync => {
                gone(self);
                json(200, json!({}))
            }
            mode => {
                if let Some(o) = self.objects.get_mut(id) {
                    o["properties"]["provisioningState"] = json!("Deleting");
                }
                let op = self.start_op(
                    info.key,
                    cluster,
                    Box::new(gone),
                    Box::new(|_| {}),
                    None,
                    false,
                );
                let ns = if info.key == "resourcegroups" {
                    "Microsoft.Resources"
                } else {
                    info.key.split('/').next().unwrap_or("")
                };
                let async_url = format!("{base}/subscriptions/{SUBSCRIPTION}/providers/{ns}/locations/eastus/operations/{op}?api-version={version}");
                let loc_url = format!("{base}/subscriptions/{SUBSCRIPTION}/providers/{ns}/locations/eastus/operationResults/{op}?api-version={version}");
                let mut r = Response::builder()
                    .status(202)
                    .header("retry-after", "1")
                    .header("location", loc_url);
                if mode == Mode::AsyncOp {
                    r = r.header("azure-asyncoperation", async_url);
                }
                r.body(Body::default()).unwrap_or_default()
            }
        }
    }
}

/// The version AKS runs for one asked for: the one named, or its default
/// when none or an empty one is (its examples send `""`).
pub(super) fn chosen_version(asked: Option<&Json>) -> Json {
    match asked.and_then(Json::as_str) {
        Some(v) if !v.is_empty() => json!(v),
        _ => json!("1.31.5"),
    }
}

impl World {
    /// AKS's refusal of a write to a cluster an operation is running on,
    /// counted ([`super::Azure::refused_while_busy`]).
    fn busy_cluster(&mut self) -> Response<Body> {
        self.refused_while_busy += 1;
        error(409, "OperationNotAllowed", "Operation is not allowed because there's an in progress operation on the managed cluster. Please wait for it to finish.")
    }
}
