//! GKE's flex-start node pools (the Dynamic Workload Scheduler's VMs,
//! `config.flexStart`) and queued provisioning (`queuedProvisioning`):
//! the settings GKE requires of them, as Google's Cluster Toolkit
//! (`modules/compute/gke-node-pool`, commit 1047080375af) checks before
//! it asks — no Spot VMs, no reservation, no auto-repair, autoscaling on;
//! queued provisioning also a floor of zero nodes — and what a flex-start
//! pool does where there is no capacity: it is made, and its VMs wait for
//! GKE to find the capacity rather than the pool failing (the woken pools
//! get their nodes once a shortage ends).

use super::*;

/// Why GKE refuses node pool `np`, if it does.
pub(super) fn refusal(np: &Json) -> Option<Response<Body>> {
    let config = &np["config"];
    let flex = config["flexStart"] == true;
    let queued = np["queuedProvisioning"]["enabled"] == true;
    if !flex && !queued {
        return None;
    }
    let what = if flex {
        "Flex-start VMs"
    } else {
        "Queued provisioning"
    };
    let spot = config["spot"] == true || config["preemptible"] == true;
    let affinity = config["reservationAffinity"]["consumeReservationType"].as_str();
    let why = if spot {
        Some(format!("{what} cannot be Spot VMs: unset config.spot."))
    } else if affinity != Some("NO_RESERVATION") {
        Some(format!(
            "{what} consume no reservation: config.reservationAffinity.consumeReservationType must be NO_RESERVATION."
        ))
    } else if flex && np["management"]["autoRepair"] != false {
        Some(format!(
            "{what} are not repaired: management.autoRepair must be false."
        ))
    } else if np["autoscaling"]["enabled"] != true {
        Some(format!(
            "{what} need the cluster autoscaler: enable autoscaling."
        ))
    } else if queued && floor(np) != 0 {
        Some(format!(
            "{what} starts from no nodes: autoscaling.totalMinNodeCount must be 0."
        ))
    } else {
        None
    };
    why.map(|m| google_rpc(400, "INVALID_ARGUMENT", &m))
}

/// What GKE adds to a queued pool it makes: the taint that keeps pods
/// without a ProvisioningRequest off its nodes
/// (`cloud.google.com/gke-queued=true:NoSchedule`), where the request did
/// not say it already.
pub(super) fn fill(np: &mut Json) {
    if np["queuedProvisioning"]["enabled"] != true {
        return;
    }
    let taint =
        json!({"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NO_SCHEDULE"});
    let taints = &mut np["config"]["taints"];
    if !taints.is_array() {
        *taints = json!([]);
    }
    if let Some(list) = taints.as_array_mut() {
        if !list.iter().any(|t| t["key"] == taint["key"]) {
            list.push(taint);
        }
    }
}

fn floor(np: &Json) -> u64 {
    let a = &np["autoscaling"];
    [&a["totalMinNodeCount"], &a["minNodeCount"]]
        .into_iter()
        .filter_map(int64)
        .max()
        .unwrap_or(0)
}

impl World {
    /// Whether node pool `key` (as `np`) is a flex-start pool whose VMs
    /// wait for capacity now; noted so a later wake gives it its nodes.
    pub(super) fn waits_for_capacity(&mut self, key: &str, np: &Json) -> bool {
        let wants = container::Wants::of(key, np);
        let waits = np["config"]["flexStart"] == true
            && self.shortages.hit(&wants.ask(pool_nodes(np))).is_some();
        match waits {
            true => self.waiting.insert(key.to_string()),
            false => self.waiting.remove(key),
        };
        waits
    }

    /// Pools whose VMs waited and whose capacity is there now get them.
    pub(super) fn wake(&mut self) {
        let waiting: Vec<String> = self.waiting.iter().cloned().collect();
        for key in waiting {
            match self.objects.contains_key(&key) {
                true => self.nodes_of(&key),
                false => {
                    self.waiting.remove(&key);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flex_pool() -> Json {
        json!({
            "name": "h100",
            "config": {
                "machineType": "a3-highgpu-8g",
                "flexStart": true,
                "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
            },
            "management": {"autoRepair": false},
            "autoscaling": {"enabled": true, "totalMinNodeCount": 2, "totalMaxNodeCount": 4},
        })
    }

    #[test]
    fn gke_refuses_what_flex_start_cannot_be() {
        assert!(refusal(&flex_pool()).is_none());
        let refused = |edit: &dyn Fn(&mut Json)| {
            let mut np = flex_pool();
            edit(&mut np);
            refusal(&np).is_some()
        };
        assert!(refused(&|np| np["config"]["spot"] = json!(true)));
        assert!(refused(
            &|np| np["config"]["reservationAffinity"] = json!(null)
        ));
        assert!(refused(&|np| np["management"] = json!(null)));
        assert!(refused(&|np| np["autoscaling"] = json!({"enabled": false})));
        // Queued provisioning also starts from no nodes.
        assert!(refused(
            &|np| np["queuedProvisioning"] = json!({"enabled": true})
        ));
        assert!(!refused(&|np| {
            np["queuedProvisioning"] = json!({"enabled": true});
            np["autoscaling"]["totalMinNodeCount"] = json!(0);
        }));
        // A pool of neither is not this module's to judge.
        let mut plain = flex_pool();
        plain["config"]["flexStart"] = json!(false);
        plain["management"] = json!(null);
        assert!(refusal(&plain).is_none());
    }
}
