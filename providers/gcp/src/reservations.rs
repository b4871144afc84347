//! A Compute Engine reservation a pool's `reserved "gcp"` names
//! (`projects/P/zones/Z/reservations/NAME`, or `zones/Z/reservations/NAME`
//! in the provider's project), read with `reservations.get`: the machine
//! type it holds, in which zone, how many VMs and how many are in use. A
//! GKE node pool consumes it by name through `reservationAffinity`; it is
//! billed whether VMs use it or not.

use crate::Ctx;
use serde_json::json;
use strata_provider::reservation::{Held, HeldAsk, HeldKind, HeldState};
use strata_provider::DriverError;
use strata_rest::Method;

pub async fn reservation(c: &Ctx, ask: &HeldAsk) -> Result<Held, DriverError> {
    let path = match ask.id.starts_with("projects/") {
        true => ask.id.clone(),
        false => format!("projects/{}/{}", c.project(&json!({}), "reserved")?, ask.id),
    };
    let Some(zone) = zone_of(&path) else {
        return Err(DriverError::InvalidConfig {
            type_name: "reserved".into(),
            detail: format!(
                "{:?} is not a reservation's path: projects/PROJECT/zones/ZONE/reservations/NAME",
                ask.id
            ),
        });
    };
    let url = format!("{}{path}", c.endpoints.compute);
    let r = c
        .rest
        .call("read reservation", Method::GET, &url, None)
        .await?
        .body;
    Ok(held(&ask.id, zone, &r))
}

/// The zone of a reservation's path.
fn zone_of(path: &str) -> Option<&str> {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        ["projects", _, "zones", zone, "reservations", name] if !name.is_empty() => Some(zone),
        _ => None,
    }
}

fn held(id: &str, zone: &str, r: &serde_json::Value) -> Held {
    let specific = &r["specificReservation"];
    let count = |v: &serde_json::Value| {
        v.as_str()
            .and_then(|s| s.parse().ok())
            .or_else(|| v.as_u64())
            .unwrap_or(0)
    };
    let instances = count(&specific["count"]);
    let in_use = count(&specific["inUseCount"]);
    Held {
        id: id.to_string(),
        kind: HeldKind::Reservation,
        instance_type: specific["instanceProperties"]["machineType"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        zone: Some(zone.to_string()),
        instances,
        available: instances.saturating_sub(in_use),
        state: match r["status"].as_str() {
            Some("READY") => HeldState::Active,
            Some("CREATING" | "UPDATING") => HeldState::Scheduled,
            Some(other) => HeldState::Over(other.to_ascii_lowercase()),
            None => HeldState::Over("unknown".into()),
        },
        starts: None,
        ends: None,
        upfront: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compute's answer read as held capacity: the machine type and zone,
    /// counts as the API spells them (int64 as strings), the status.
    #[test]
    fn a_reservation_reads_as_held_capacity() {
        let r = json!({"status": "READY", "specificReservation": {"count": "2", "inUseCount": "1",
            "instanceProperties": {"machineType": "a3-highgpu-8g"}}});
        let h = held("zones/us-central1-a/reservations/h100", "us-central1-a", &r);
        assert_eq!((h.instances, h.available), (2, 1));
        assert_eq!(h.instance_type, "a3-highgpu-8g");
        assert_eq!(h.zone.as_deref(), Some("us-central1-a"));
        assert_eq!(h.state, HeldState::Active);
        assert_eq!(
            zone_of("projects/p/zones/us-central1-b/reservations/x"),
            Some("us-central1-b")
        );
        assert_eq!(zone_of("projects/p/reservations/x"), None);
        let deleting = held("x", "z", &json!({"status": "DELETING"}));
        assert_eq!(deleting.state, HeldState::Over("deleting".into()));
    }
}
