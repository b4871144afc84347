//! Compute Engine (`/compute/v1/`): networks, subnetworks (and their
//! verbs), routers with Cloud NAT, firewalls, the instance groups behind
//! GKE's node pools, and the operations each write starts.

use super::*;

impl World {
    pub(super) fn compute(&mut self, req: &Req, s: &[&str]) -> Response<Body> {
        let full = s.join("/");
        match (s, &req.method) {
            (["projects", p, "global", "operations", name], &Method::GET)
            | (["projects", p, "global", "operations", name, "wait"], &Method::POST)
            | (["projects", p, "regions", _, "operations", name], &Method::GET)
            | (["projects", p, "regions", _, "operations", name, "wait"], &Method::POST)
            | (["projects", p, "zones", _, "operations", name], &Method::GET)
            | (["projects", p, "zones", _, "operations", name, "wait"], &Method::POST) => {
                let _ = p;
                match self.look(name) {
                    Some(o) => json(200, o),
                    None => not_found(&full),
                }
            }
            (["projects", _, "regions", r, "advice", "capacity"], &Method::POST) => {
                self.capacity_advice(r, &req.body)
            }
            (["projects", p, "zones", z, "instanceGroupManagers", name], &Method::GET) => {
                let key = format!("projects/{p}/zones/{z}/instanceGroupManagers/{name}");
                match self.objects.get(&key) {
                    Some(o) => json(200, o.clone()),
                    None => not_found(&key),
                }
            }
            (["projects", p, "aggregated", "operations"], &Method::GET) => {
                self.aggregated_operations(req, p)
            }
            (["projects", p, "aggregated", kind @ ("subnetworks" | "routers")], &Method::GET) => {
                // Every region's objects, keyed `regions/R`, as Compute's
                // aggregated lists give them.
                let prefix = format!("projects/{p}/regions/");
                let mut by_region: BTreeMap<String, Vec<Json>> = BTreeMap::new();
                for (k, v) in &self.objects {
                    let Some(rest) = k.strip_prefix(&prefix) else {
                        continue;
                    };
                    let parts: Vec<&str> = rest.split('/').collect();
                    if parts.len() == 3 && parts[1] == *kind {
                        by_region
                            .entry(format!("regions/{}", parts[0]))
                            .or_default()
                            .push(v.clone());
                    }
                }
                let items: Map<String, Json> = by_region
                    .into_iter()
                    .map(|(r, list)| (r, json!({ *kind: list })))
                    .collect();
                json(
                    200,
                    json!({"kind": format!("compute#{}AggregatedList", kind.trim_end_matches('s')), "items": items}),
                )
            }
            (["projects", p, "zones", z, kind @ "reservations"], m) => {
                let scope = format!("projects/{p}/zones/{z}");
                self.compute_collection(req, m, &scope, kind)
            }
            (["projects", p, "zones", z, kind @ "reservations", name], m) => {
                let scope = format!("projects/{p}/zones/{z}");
                self.compute_item(req, m, &scope, kind, name)
            }
            (["projects", p, "global", kind @ ("networks" | "firewalls")], m) => {
                let scope = format!("projects/{p}/global");
                self.compute_collection(req, m, &scope, kind)
            }
            (["projects", p, "regions", r, kind @ ("subnetworks" | "routers")], m) => {
                let scope = format!("projects/{p}/regions/{r}");
                self.compute_collection(req, m, &scope, kind)
            }
            (["projects", p, "global", kind @ ("networks" | "firewalls"), name], m) => {
                let scope = format!("projects/{p}/global");
                self.compute_item(req, m, &scope, kind, name)
            }
            (["projects", p, "regions", r, kind @ ("subnetworks" | "routers"), name], m) => {
                let scope = format!("projects/{p}/regions/{r}");
                self.compute_item(req, m, &scope, kind, name)
            }
            (
                ["projects", p, "regions", r, "subnetworks", name, verb @ ("expandIpCidrRange" | "setPrivateIpGoogleAccess")],
                &Method::POST,
            ) => {
                let scope = format!("projects/{p}/regions/{r}");
                self.subnetwork_verb(req, &scope, name, verb)
            }
            _ => err(
                404,
                "NOT_FOUND",
                "notFound",
                &format!("{} {full}: no such method", req.method),
            ),
        }
    }

    /// A network reference in any of the forms Compute accepts, as the
    /// path of an existing network.
    pub(super) fn network_ref(&self, project: &str, r: &str) -> Result<String, Response<Body>> {
        let key = format!("projects/{project}/global/networks/{}", last(r));
        if self.objects.contains_key(&key) {
            Ok(key)
        } else {
            Err(not_found(&key))
        }
    }

    pub(super) fn compute_collection(
        &mut self,
        req: &Req,
        m: &Method,
        scope: &str,
        kind: &str,
    ) -> Response<Body> {
        let prefix = format!("{scope}/{kind}/");
        if *m == Method::GET {
            let items: Vec<Json> = self
                .objects
                .iter()
                .filter(|(k, _)| k.starts_with(&prefix) && !k[prefix.len()..].contains('/'))
                .map(|(_, v)| v.clone())
                .collect();
            return page(items, req, "items");
        }
        if *m != Method::POST {
            return bad("method not allowed on a collection");
        }
        let b = match body(req) {
            Ok(b) => b,
            Err(r) => return r,
        };
        if let Some(rid) = req.param("requestId") {
            if let Some(name) = self.requests.get(&rid).cloned() {
                if let Some(o) = self.ops.get(&name) {
                    let mut out = o.json.clone();
                    out["status"] = json!(["PENDING", "RUNNING", "DONE"][o.looks as usize]);
                    return json(200, out);
                }
            }
        }
        let Some(name) = b["name"].as_str().map(str::to_string) else {
            return bad("Invalid value for field 'resource.name': ''. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'");
        };
        let valid = name.len() <= 63
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !name.ends_with('-');
        if !valid {
            return bad(&format!("Invalid value for field 'resource.name': '{name}'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{{0,61}}[a-z0-9])?)'"));
        }
        let key = format!("{prefix}{name}");
        if self.objects.contains_key(&key) {
            return err(
                409,
                "ALREADY_EXISTS",
                "alreadyExists",
                &format!("The resource '{key}' already exists"),
            );
        }
        let project = scope.split('/').nth(1).unwrap_or("").to_string();
        let mut obj = b.clone();
        let id = self.id();
        obj["kind"] = json!(format!("compute#{}", kind.trim_end_matches('s')));
        obj["id"] = json!(id.to_string());
        obj["creationTimestamp"] = json!(now());
        obj["selfLink"] = json!(compute_link(&key));
        if let Some(r) = scope.split("/regions/").nth(1) {
            obj["region"] = json!(compute_link(&format!("projects/{project}/regions/{r}")));
        }
        if let Some(z) = scope.split("/zones/").nth(1) {
            obj["zone"] = json!(compute_link(&format!("projects/{project}/zones/{z}")));
        }
        if !matches!(kind, "networks" | "reservations") {
            let Some(net) = b["network"].as_str() else {
                return bad("Invalid value for field 'resource.network': ''. The network must be specified.");
            };
            match self.network_ref(&project, net) {
                Ok(n) => obj["network"] = json!(compute_link(&n)),
                Err(r) => return r,
            }
        }
        match kind {
            "networks" => {
                if obj.get("autoCreateSubnetworks").is_none() {
                    obj["autoCreateSubnetworks"] = json!(true);
                }
                if obj.get("routingConfig").is_none() {
                    obj["routingConfig"] = json!({"routingMode": "REGIONAL"});
                }
                if obj.get("mtu").is_none() {
                    obj["mtu"] = json!(1460);
                }
            }
            "subnetworks" => {
                let Some(cidr) = b["ipCidrRange"].as_str() else {
                    return bad(
                        "Invalid value for field 'resource.ipCidrRange': ''. Invalid IPCidrRange.",
                    );
                };
                obj["gatewayAddress"] = json!(gateway(cidr));
                obj["fingerprint"] = json!(fingerprint(id));
                obj["privateIpGoogleAccess"] =
                    json!(b["privateIpGoogleAccess"].as_bool().unwrap_or(false));
            }
            "reservations" => {
                // Ready at once here; nothing runs in it yet.
                obj["status"] = json!("READY");
                obj["specificReservation"]["inUseCount"] = json!("0");
                if obj.get("specificReservationRequired").is_none() {
                    obj["specificReservationRequired"] = json!(false);
                }
            }
            "firewalls" => {
                if obj.get("priority").is_none() {
                    obj["priority"] = json!(1000);
                }
                if obj.get("direction").is_none() {
                    obj["direction"] = json!("INGRESS");
                }
                if obj.get("disabled").is_none() {
                    obj["disabled"] = json!(false);
                }
            }
            _ => {}
        }
        let k = key.clone();
        let op = self.start_op(
            false,
            scope,
            "insert",
            &key,
            None,
            vec![Box::new(move |w: &mut World| {
                w.objects.insert(k, obj);
            })],
            vec![],
        );
        if let Some(rid) = req.param("requestId") {
            if let Some(n) = op["name"].as_str() {
                self.requests.insert(rid, n.to_string());
            }
        }
        json(200, op)
    }

    pub(super) fn compute_item(
        &mut self,
        req: &Req,
        m: &Method,
        scope: &str,
        kind: &str,
        name: &str,
    ) -> Response<Body> {
        let key = format!("{scope}/{kind}/{name}");
        let Some(current) = self.objects.get(&key).cloned() else {
            return not_found(&key);
        };
        if *m != Method::GET && self.busy_object(&key) {
            return not_ready(&key);
        }
        match *m {
            Method::GET => json(200, current),
            Method::DELETE => {
                if kind == "networks" {
                    let link = compute_link(&key);
                    if let Some((user, _)) = self
                        .objects
                        .iter()
                        .find(|(_, o)| o["network"].as_str() == Some(link.as_str()))
                    {
                        return err(
                            400,
                            "FAILED_PRECONDITION",
                            "resourceInUseByAnotherResource",
                            &format!(
                                "The network resource '{key}' is already being used by '{user}'"
                            ),
                        );
                    }
                }
                let k = key.clone();
                let op = self.start_op(
                    false,
                    scope,
                    "delete",
                    &key,
                    None,
                    vec![Box::new(move |w: &mut World| {
                        w.objects.remove(&k);
                    })],
                    vec![],
                );
                json(200, op)
            }
            Method::PATCH => {
                let b = match body(req) {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                if kind == "subnetworks" {
                    if b["fingerprint"] != current["fingerprint"] {
                        return err(
                            412,
                            "FAILED_PRECONDITION",
                            "conditionNotMet",
                            "Supplied fingerprint does not match current resource fingerprint.",
                        );
                    }
                    for k in b.as_object().into_iter().flatten().map(|(k, _)| k) {
                        if !["secondaryIpRanges", "fingerprint", "description"]
                            .contains(&k.as_str())
                        {
                            return bad(&format!("Invalid value for field 'resource.{k}': it cannot be changed by a patch"));
                        }
                    }
                }
                for k in ["name", "network"] {
                    if b.get(k).is_some_and(|v| {
                        last(v.as_str().unwrap_or("")) != last(current[k].as_str().unwrap_or(""))
                    }) {
                        return bad(&format!(
                            "Invalid value for field 'resource.{k}': it cannot be changed"
                        ));
                    }
                }
                let mut next = current.clone();
                for (k, v) in b.as_object().into_iter().flatten() {
                    if k == "network" {
                        continue;
                    }
                    match (next.as_object_mut(), v.is_null()) {
                        (Some(o), true) => {
                            o.remove(k);
                        }
                        _ => next[k] = v.clone(),
                    }
                }
                if kind == "subnetworks" {
                    let id = self.id();
                    next["fingerprint"] = json!(fingerprint(id));
                }
                let k = key.clone();
                let op = self.start_op(
                    false,
                    scope,
                    "patch",
                    &key,
                    None,
                    // A patch ends on the object as it then is: one
                    // deleted meanwhile is not brought back.
                    vec![Box::new(move |w: &mut World| {
                        if let Some(o) = w.objects.get_mut(&k) {
                            *o = next;
                        }
                    })],
                    vec![],
                );
                json(200, op)
            }
            _ => bad("method not allowed"),
        }
    }

    pub(super) fn subnetwork_verb(
        &mut self,
        req: &Req,
        scope: &str,
        name: &str,
        verb: &str,
    ) -> Response<Body> {
        let key = format!("{scope}/subnetworks/{name}");
        if !self.objects.contains_key(&key) {
            return not_found(&key);
        }
        if self.busy_object(&key) {
            return not_ready(&key);
        }
        let b = match body(req) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let k = key.clone();
        let op = self.start_op(
            false,
            scope,
            verb,
            &key,
            None,
            vec![Box::new(move |w: &mut World| {
                if let Some(o) = w.objects.get_mut(&k) {
                    for (f, v) in b.as_object().into_iter().flatten() {
                        o[f] = v.clone();
                    }
                }
            })],
            vec![],
        );
        json(200, op)
    }
}

impl World {
    /// Capacity advice (`regions.advice.capacity`): one recommendation for
    /// the machine types asked, its obtainability 0.1 where the stand-in's
    /// shortages leave none of that capacity in the region, else 0.9.
    fn capacity_advice(&self, region: &str, body: &[u8]) -> Response<Body> {
        let ask: Json = serde_json::from_slice(body).unwrap_or_default();
        let size = ask["size"].as_u64().unwrap_or(0);
        let model = ask["instanceProperties"]["scheduling"]["provisioningModel"]
            .as_str()
            .unwrap_or("STANDARD");
        let machines: Vec<&str> = ask["instanceFlexibilityPolicy"]["instanceSelections"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.values())
            .flat_map(|s| s["machineTypes"].as_array().into_iter().flatten())
            .filter_map(Json::as_str)
            .collect();
        if size == 0 || machines.is_empty() {
            return bad(
                "size and instanceFlexibilityPolicy.instanceSelections[].machineTypes are required",
            );
        }
        let capacity = if model == "SPOT" { "spot" } else { "on_demand" };
        let short = machines.iter().all(|m| {
            self.shortages
                .hit(&crate::capacity::Ask {
                    region,
                    zones: &[],
                    instance_type: m,
                    capacity,
                    nodes: size,
                })
                .is_some()
        });
        json(
            200,
            json!({"recommendations": [{
                "scores": {"obtainability": if short { 0.1 } else { 0.9 }},
                "shards": [{
                    "machineType": machines[0],
                    "provisioningModel": model,
                    "instanceCount": size,
                    "zone": format!("{region}-a"),
                }],
            }]}),
        )
    }
}
