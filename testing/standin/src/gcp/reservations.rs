//! A GKE node pool that consumes a Compute Engine reservation by name
//! (`config.reservationAffinity`, `SPECIFIC_RESERVATION` with the key
//! `compute.googleapis.com/reservation-name`), checked as GKE's "Consuming
//! reserved zonal resources" describes it: the reservation is found in the
//! cluster's project (or the project its value names), holds the pool's
//! machine type, and the pool's nodes are only in its zone; the VMs it
//! takes count as in use.

use super::*;

const KEY: &str = "compute.googleapis.com/reservation-name";

impl World {
    pub(super) fn reservation_refusal(
        &mut self,
        cluster: &str,
        np: &Json,
        nodes: u64,
    ) -> Option<Response<Body>> {
        let affinity = &np["config"]["reservationAffinity"];
        if affinity["consumeReservationType"] != "SPECIFIC_RESERVATION" {
            return None;
        }
        let refuse = |m: String| Some(google_rpc(400, "INVALID_ARGUMENT", &m));
        if affinity["key"] != KEY {
            return refuse(format!(
                "A specific reservation is named with the key {KEY}."
            ));
        }
        let own = cluster.split('/').nth(1).unwrap_or("");
        let value = affinity["values"][0].as_str().unwrap_or("");
        let (project, name) = match value.split('/').collect::<Vec<_>>().as_slice() {
            ["projects", p, "reservations", n] => (p.to_string(), n.to_string()),
            _ => (own.to_string(), value.to_string()),
        };
        let suffix = format!("/reservations/{name}");
        let prefix = format!("projects/{project}/zones/");
        let Some(key) = self
            .objects
            .keys()
            .find(|k| k.starts_with(&prefix) && k.ends_with(&suffix))
            .cloned()
        else {
            return refuse(format!(
                "Reservation {value:?} was not found in project {project}."
            ));
        };
        let r = &self.objects[&key];
        let held = r["specificReservation"]["instanceProperties"]["machineType"].as_str();
        if held != np["config"]["machineType"].as_str() {
            return refuse(format!(
                "Reservation {name} holds {} VMs; the node pool's machine type is {}.",
                held.unwrap_or("?"),
                np["config"]["machineType"].as_str().unwrap_or("?")
            ));
        }
        let zone = key.split('/').nth(3).unwrap_or("").to_string();
        let elsewhere = match np["locations"].as_array() {
            Some(zones) => zones.iter().any(|z| z.as_str() != Some(zone.as_str())),
            None => true,
        };
        if elsewhere {
            return refuse(format!(
                "Reservation {name} is in {zone}: the node pool's locations must be [{zone}] to consume it."
            ));
        }
        let used = r["specificReservation"]["inUseCount"]
            .as_str()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
        if let Some(o) = self.objects.get_mut(&key) {
            o["specificReservation"]["inUseCount"] = json!((used + nodes).to_string());
        }
        None
    }
}
