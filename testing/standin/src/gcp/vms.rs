//! Compute Engine's record of what befell a GKE node pool's VMs: a
//! preemption (`compute.instances.preempted`, set from the sandbox's
//! control endpoint) and a VM its group deleted when the pool shrank
//! (`delete`), each a finished zonal operation on the VM, listed by
//! `aggregated/operations` with an `operationType` filter — what strata
//! reads for the preemption rate. The VMs are named as GKE names them,
//! after the pool's instance group (`gke-CLUSTER-POOL-grp` → `gke-CLUSTER-POOL-N`).

use super::*;
use time::OffsetDateTime;

impl World {
    /// Records `kind` on the VMs `vms` of node pool `key`, at `at`.
    pub(super) fn record_vms(
        &mut self,
        key: &str,
        kind: &str,
        vms: std::ops::Range<u64>,
        at: OffsetDateTime,
    ) {
        let Some(igm) = self.objects.get(key).and_then(|np| self.igm_of(np)) else {
            return;
        };
        let (zone_path, group) = igm
            .split_once("/instanceGroupManagers/")
            .unwrap_or((&igm, ""));
        let base = group.strip_suffix("-grp").unwrap_or(group).to_string();
        let when = rfc3339(at.unix_timestamp().max(0) as u64);
        for i in vms {
            let n = self.id();
            let vm = format!("{zone_path}/instances/{base}-{i}");
            self.vm_records.push(json!({
                "kind": "compute#operation",
                "id": n.to_string(),
                "name": format!("systemevent-{n}"),
                "zone": compute_link(zone_path),
                "operationType": kind,
                "targetLink": compute_link(&vm),
                "targetId": n.to_string(),
                "status": "DONE",
                "user": "system",
                "progress": 100,
                "insertTime": when,
                "startTime": when,
                "endTime": when,
                "selfLink": compute_link(&format!("{zone_path}/operations/systemevent-{n}")),
            }));
        }
    }

    /// Preempts `nodes` VMs of every node pool named `pool` at `at` (their
    /// groups make them again, as GKE's do): how many pools had it.
    pub(super) fn preempt(&mut self, pool: &str, nodes: u64, at: OffsetDateTime) -> usize {
        let keys: Vec<String> = self
            .objects
            .keys()
            .filter(|k| k.contains("/nodePools/") && last(k) == pool)
            .cloned()
            .collect();
        for k in &keys {
            self.record_vms(k, "compute.instances.preempted", 0..nodes, at);
        }
        keys.len()
    }

    /// The VMs a pool's group deletes as it shrinks from `was` to `now`.
    pub(super) fn shrunk(&mut self, key: &str, was: u64, now: u64) {
        if now < was {
            let at = self.clock.now();
            self.record_vms(key, "delete", now..was, at);
        }
    }

    /// `GET projects/P/aggregated/operations`: the VMs' records of the
    /// project, each zone's under `zones/Z`, filtered by one
    /// `operationType="…"` as Compute's filter takes it.
    pub(super) fn aggregated_operations(&self, req: &Req, project: &str) -> Response<Body> {
        let filter = req.param("filter").unwrap_or_default();
        let kind = match operation_type(&filter) {
            Ok(k) => k,
            Err(why) => return bad(&why),
        };
        let mut by_zone: BTreeMap<String, Vec<Json>> = BTreeMap::new();
        let mine = format!("/projects/{project}/zones/");
        for op in &self.vm_records {
            let zone = op["zone"].as_str().unwrap_or("");
            let of_project = zone.contains(&mine);
            if !of_project || kind.as_ref().is_some_and(|k| op["operationType"] != *k) {
                continue;
            }
            let z = zone.rsplit('/').next().unwrap_or("");
            by_zone
                .entry(format!("zones/{z}"))
                .or_default()
                .push(op.clone());
        }
        let items: Map<String, Json> = by_zone
            .into_iter()
            .map(|(z, ops)| (z, json!({ "operations": ops })))
            .collect();
        json(
            200,
            json!({"kind": "compute#operationAggregatedList", "items": items}),
        )
    }
}

/// The operation type a filter asks for (`operationType="delete"`,
/// spaces allowed around `=`); none for an empty filter.
fn operation_type(filter: &str) -> Result<Option<String>, String> {
    if filter.trim().is_empty() {
        return Ok(None);
    }
    let refused =
        || format!("Invalid value for field 'filter': '{filter}'. Invalid list filter expression.");
    let (field, value) = filter.split_once('=').ok_or_else(refused)?;
    let value = value.trim();
    let quoted = value.len() >= 2 && value.starts_with('"') && value.ends_with('"');
    if field.trim() != "operationType" || !quoted {
        return Err(refused());
    }
    Ok(Some(value[1..value.len() - 1].to_string()))
}

#[cfg(test)]
mod tests {
    use super::operation_type;

    #[test]
    fn the_filter_names_one_operation_type() {
        let got = operation_type("operationType=\"compute.instances.preempted\"");
        assert_eq!(got, Ok(Some("compute.instances.preempted".into())));
        assert_eq!(
            operation_type("operationType = \"delete\""),
            Ok(Some("delete".into()))
        );
        assert_eq!(operation_type(""), Ok(None));
        assert!(operation_type("name=x").is_err());
        assert!(operation_type("operationType=delete").is_err());
    }
}
