//! A capacity reservation group a pool's `reserved "azure"` names (by its
//! resource id), read with its reservations: what it holds of the pool's
//! VM size, in which zone, and whether it is ready. An AKS pool joins a
//! group through `capacityReservationGroupID`; Azure bills reserved
//! capacity at the pay-as-you-go rate whether VMs use it or not.

use crate::Ctx;
use strata_provider::reservation::{Held, HeldAsk, HeldKind, HeldState};
use strata_provider::DriverError;
use strata_rest::Method;

const API: &str = "2024-11-01";

/// One reservation of the group, as Compute describes it.
struct Reservation {
    size: String,
    capacity: u64,
    zone: Option<String>,
    state: String,
}

pub async fn reservation(c: &Ctx, ask: &HeldAsk) -> Result<Held, DriverError> {
    let group = c
        .rest
        .call(
            "read capacity reservation group",
            Method::GET,
            &c.url(&ask.id, API),
            None,
        )
        .await?;
    let mut all = Vec::new();
    for r in group.body["properties"]["capacityReservations"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let Some(id) = r["id"].as_str() else { continue };
        let found = c
            .rest
            .call(
                "read capacity reservation",
                Method::GET,
                &c.url(id, API),
                None,
            )
            .await?
            .body;
        all.push(Reservation {
            size: found["sku"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            capacity: found["sku"]["capacity"].as_u64().unwrap_or(0),
            zone: found["zones"][0].as_str().map(str::to_string),
            state: found["properties"]["provisioningState"]
                .as_str()
                .unwrap_or("Succeeded")
                .to_string(),
        });
    }
    Ok(held(ask, &all))
}

/// The group as the pool's held capacity: its reservations of the pool's
/// VM size (or, when it has none, the size it does hold, which the plan
/// refuses), counted together.
fn held(ask: &HeldAsk, all: &[Reservation]) -> Held {
    let same = |r: &&Reservation| r.size.eq_ignore_ascii_case(&ask.instance_type);
    let of_size: Vec<&Reservation> = all.iter().filter(same).collect();
    let instance_type = match (of_size.is_empty(), all.first()) {
        (true, Some(other)) => other.size.clone(),
        _ => ask.instance_type.clone(),
    };
    let zones: Vec<&str> = of_size.iter().filter_map(|r| r.zone.as_deref()).collect();
    let zone = match zones.as_slice() {
        [first, rest @ ..] if rest.iter().all(|z| z == first) => Some(first.to_string()),
        _ => None,
    };
    let state = match of_size.iter().find(|r| r.state != "Succeeded") {
        None => HeldState::Active,
        Some(r) if r.state == "Failed" => HeldState::Over("failed".into()),
        Some(_) => HeldState::Scheduled,
    };
    let instances = of_size.iter().map(|r| r.capacity).sum();
    Held {
        id: ask.id.clone(),
        kind: HeldKind::Reservation,
        instance_type,
        zone,
        instances,
        available: instances,
        state,
        starts: None,
        ends: None,
        upfront: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(size: &str, capacity: u64, zone: Option<&str>, state: &str) -> Reservation {
        Reservation {
            size: size.into(),
            capacity,
            zone: zone.map(str::to_string),
            state: state.into(),
        }
    }

    /// The group's reservations of the pool's size are counted together,
    /// in their zone when they share one; a group of other sizes says the
    /// size it holds (which the plan refuses); an empty one holds nothing.
    #[test]
    fn a_group_holds_its_reservations_of_the_pools_size() {
        let ask = HeldAsk {
            region: "eastus".into(),
            id: "/subscriptions/s/resourceGroups/c/providers/Microsoft.Compute/capacityReservationGroups/g".into(),
            instance_type: "Standard_ND96isr_H100_v5".into(),
        };
        let h100 = "standard_nd96isr_h100_v5";
        let both = held(
            &ask,
            &[
                r(h100, 2, Some("1"), "Succeeded"),
                r(h100, 1, Some("1"), "Succeeded"),
                r("Standard_D4s_v5", 9, Some("2"), "Succeeded"),
            ],
        );
        assert_eq!(
            (both.instances, both.zone.as_deref(), &both.state),
            (3, Some("1"), &HeldState::Active)
        );
        assert_eq!(both.instance_type, "Standard_ND96isr_H100_v5");
        let spread = held(
            &ask,
            &[
                r(h100, 2, Some("1"), "Succeeded"),
                r(h100, 2, Some("2"), "Updating"),
            ],
        );
        assert_eq!((spread.zone, spread.state), (None, HeldState::Scheduled));
        let other = held(&ask, &[r("Standard_ND96asr_v4", 4, None, "Succeeded")]);
        assert_eq!(
            (other.instance_type.as_str(), other.instances),
            ("Standard_ND96asr_v4", 0)
        );
        let empty = held(&ask, &[]);
        assert_eq!(
            (empty.instance_type.as_str(), empty.instances),
            ("Standard_ND96isr_H100_v5", 0)
        );
        let failed = held(&ask, &[r(h100, 2, None, "Failed")]);
        assert_eq!(failed.state, HeldState::Over("failed".into()));
    }
}
