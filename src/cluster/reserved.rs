//! A pool's `reserved` blocks: capacity the team holds ahead of its use
//! (an AWS On-Demand Capacity Reservation or Capacity Block for ML, by
//! id), placed before the spot and on-demand ladder — it is paid for
//! whether nodes run on it or not, so using it costs nothing more. Each is
//! read from its cloud once the state is read; the rules of its kind
//! (instance type, size, window) decide whether it can take the nodes now.

use super::diag;
use super::rules::{allowed, known_string};
use crate::config::ConfigScope;
use crate::diag::{Diags, Span};
use crate::placement::{Candidate, HeldAt, Skipped, LEAVE_BLOCK_BEFORE_END};
use crate::syntax::Body;
use strata_provider::money::Usd;
use strata_provider::reservation::{Held, HeldAsk, HeldKind, HeldState};
use strata_state::Location;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Asks a cloud for the reservation `ask` names, through the provider
/// configuration of a region's module call (driver `aws`, call
/// `train_aws`): `Err` says why it could not be read.
pub type HeldLookup<'a> = dyn Fn(&str, &str, &HeldAsk) -> Result<Held, String> + 'a;

/// The clouds whose drivers read held capacity.
const CLOUDS: &[&str] = &["aws", "azure", "gcp"];

/// One `reserved "<cloud>"` block.
#[derive(Clone)]
pub(super) struct Reserved {
    cloud: String,
    region: Option<String>,
    id: String,
    span: Span,
}

impl Reserved {
    /// A block bought for the pool (its `capacity_block`), held from then
    /// on as if a `reserved` block named it.
    pub(super) fn bought(cloud: &str, region: &str, id: &str, span: Span) -> Reserved {
        Reserved {
            cloud: cloud.to_string(),
            region: Some(region.to_string()),
            id: id.to_string(),
            span,
        }
    }
}

/// The `reserved` blocks of a placement block, in the order written.
pub(super) fn read(placement: &Body, scope: &ConfigScope, diags: &mut Diags) -> Vec<Reserved> {
    let mut out = Vec::new();
    for b in placement.blocks.iter().filter(|b| b.kind == "reserved") {
        allowed(&b.body, "a reserved block", &["id", "region"], &[], diags);
        let Some(cloud) = b.labels.first().map(|(l, _)| l.clone()) else {
            diags.push(diag(
                "Missing name for reserved",
                "A reserved block is labelled with the cloud that holds the capacity, such as reserved \"aws\".",
                b.kind_span,
            ));
            continue;
        };
        if !CLOUDS.contains(&cloud.as_str()) {
            diags.push(diag(
                "Unsupported reserved capacity",
                format!("strata places pools on reserved capacity on {} (AWS: a Capacity Reservation or Capacity Block, by its cr- id; Azure: a capacity reservation group, by its resource id; GCP: a reservation, by its path); {cloud:?} is not one of them.", CLOUDS.join(", ")),
                b.kind_span,
            ));
            continue;
        }
        let text = |name: &str, diags: &mut Diags| known_string(&b.body, name, scope, diags);
        let Some(id) = text("id", diags) else {
            if b.body.attr("id").is_none() {
                diags.push(diag(
                    "Missing id",
                    "A reserved block names the capacity by its id: on AWS the Capacity Reservation's or Capacity Block's cr-…, on Azure the capacity reservation group's resource id, on GCP the reservation's path (projects/P/zones/Z/reservations/NAME).",
                    b.kind_span,
                ));
            }
            continue;
        };
        out.push(Reserved {
            cloud,
            region: text("region", diags),
            id,
            span: b.kind_span,
        });
    }
    out
}

/// A cloud region the pool can run in, as held capacity is matched to it.
#[derive(Clone, Copy)]
pub(super) struct Place<'a> {
    pub cloud: &'a str,
    pub provider: &'a str,
    pub region: &'a str,
    pub call: &'a str,
    pub instance_type: &'a str,
    pub node_label: &'a str,
}

/// What the candidates on held capacity are judged by.
pub(super) struct Judge<'a> {
    pub pool: &'a str,
    pub nodes: u64,
    pub lookup: Option<&'a HeldLookup<'a>>,
    pub now: OffsetDateTime,
    /// The reservation state has the pool's nodes on.
    pub placed_on: Option<&'a str>,
}

/// The candidates on held capacity, in the order written, and those whose
/// kind's rules keep the nodes off now (with why).
pub(super) fn candidates(
    reserved: &[Reserved],
    places: &[Place<'_>],
    judge: &Judge<'_>,
    diags: &mut Diags,
) -> (Vec<Candidate>, Vec<Skipped>) {
    let (mut found, mut skipped) = (Vec::new(), Vec::new());
    for r in reserved {
        let Some(place) = place_of(&r.cloud, r.region.as_deref(), &r.id, r.span, places, diags)
        else {
            continue;
        };
        let facts = match judge.lookup {
            None => None,
            Some(lookup) => {
                let ask = HeldAsk {
                    region: place.region.to_string(),
                    id: r.id.clone(),
                    instance_type: place.instance_type.to_string(),
                };
                match lookup(place.provider, place.call, &ask) {
                    Ok(h) => Some(h),
                    // Nodes already on it stay while it cannot be read: a
                    // failed read is no reason to move them.
                    Err(_) if judge.placed_on == Some(r.id.as_str()) => None,
                    Err(why) => {
                        let c = candidate(r, place, None);
                        skipped.push(Skipped {
                            candidate: c,
                            why: format!("could not be read: {why}"),
                        });
                        continue;
                    }
                }
            }
        };
        if let Some(h) = &facts {
            if !h.instance_type.eq_ignore_ascii_case(place.instance_type) {
                diags.push(diag(
                    "Reserved capacity of another instance type",
                    format!(
                        "{} holds {} instances; node_pool {:?} runs {} on {} {}.",
                        r.id,
                        h.instance_type,
                        judge.pool,
                        place.instance_type,
                        r.cloud,
                        place.region
                    ),
                    r.span,
                ));
                continue;
            }
            if h.instances == 0 {
                // Both clouds go on without the group, all but silently.
                let without = match r.cloud.as_str() {
                    "aws" => format!("EC2 would launch node_pool {:?}'s instances On-Demand, outside it, without a word", judge.pool),
                    _ => format!("AKS would make node_pool {:?} without it, with only a warning", judge.pool),
                };
                diags.push(diag(
                    "Reserved capacity that reserves nothing",
                    format!("{} holds no capacity reservation of {}: {without}. Add a reservation of {} to the group, or take the reserved block out.", r.id, place.instance_type, place.instance_type),
                    r.span,
                ));
                continue;
            }
        }
        let c = candidate(r, place, facts);
        match c
            .held
            .as_ref()
            .and_then(|h| h.facts.as_ref())
            .and_then(|h| unusable(h, judge))
        {
            Some(why) => skipped.push(Skipped { candidate: c, why }),
            None => found.push(c),
        }
    }
    (found, skipped)
}

/// The region a block names (`what` it holds, at `span`), or its
/// cloud's first.
pub(super) fn place_of<'p>(
    cloud: &str,
    region: Option<&str>,
    what: &str,
    span: Span,
    places: &'p [Place<'p>],
    diags: &mut Diags,
) -> Option<&'p Place<'p>> {
    let found = places
        .iter()
        .find(|p| p.cloud == cloud && region.is_none_or(|reg| p.region == reg));
    if found.is_none() {
        let regions: Vec<String> = places
            .iter()
            .filter(|p| p.cloud == cloud)
            .map(|p| p.region.to_string())
            .collect();
        diags.push(diag(
            "Reserved capacity outside the cluster",
            match regions.is_empty() {
                true => format!("The cluster has no {cloud} region for {what} to place nodes in."),
                false => format!(
                    "{what} is in {}, where the cluster does not run; its {cloud} regions are {}.",
                    region.unwrap_or("?"),
                    regions.join(", ")
                ),
            },
            span,
        ));
    }
    found
}

fn candidate(r: &Reserved, place: &Place<'_>, facts: Option<Held>) -> Candidate {
    let kind = facts.as_ref().map_or(HeldKind::Reservation, |h| h.kind);
    Candidate {
        at: Location {
            cloud: r.cloud.clone(),
            region: place.region.to_string(),
            capacity: kind.name().to_string(),
            reservation: Some(r.id.clone()),
        },
        call: place.call.to_string(),
        instance_type: place.instance_type.to_string(),
        // Paid for whether used or not: using it costs nothing more.
        gpu_hour: Some(Usd::ZERO),
        zones: facts
            .as_ref()
            .and_then(|h| h.zone.clone())
            .into_iter()
            .collect(),
        node_label: place.node_label.to_string(),
        score: None,
        held: Some(HeldAt {
            id: r.id.clone(),
            facts,
        }),
    }
}

/// Why the held capacity cannot take the pool's nodes now, if it cannot.
fn unusable(h: &Held, judge: &Judge<'_>) -> Option<String> {
    let at = |t: &Option<String>| {
        t.as_deref()
            .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
    };
    if let HeldState::Over(state) = &h.state {
        return Some(format!("{} is {state}", h.id));
    }
    match at(&h.starts) {
        Some(start) if judge.now < start => {
            return Some(format!(
                "{} starts at {}",
                h.id,
                crate::placement::timestamp(start)
            ));
        }
        None if h.state == HeldState::Scheduled => return Some(format!("{} has not begun", h.id)),
        _ => {}
    }
    if h.kind == HeldKind::CapacityBlock {
        if let Some(end) = at(&h.ends).filter(|e| judge.now + LEAVE_BLOCK_BEFORE_END >= *e) {
            return Some(format!(
                "{} ends at {}: nodes leave a Capacity Block an hour before its end",
                h.id,
                crate::placement::timestamp(end)
            ));
        }
    }
    (h.instances < judge.nodes).then(|| {
        format!(
            "{} holds {} instances; the pool wants {}",
            h.id, h.instances, judge.nodes
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(id: &str, kind: HeldKind, instances: u64, ends: Option<&str>) -> Held {
        Held {
            id: id.into(),
            kind,
            instance_type: "p5.48xlarge".into(),
            zone: Some("us-east-1b".into()),
            instances,
            available: instances,
            state: HeldState::Active,
            starts: Some("2026-12-01T11:30:00Z".into()),
            ends: ends.map(str::to_string),
            upfront: None,
        }
    }

    /// What the cloud says of each id: one of each rule's cases, and one
    /// that cannot be read.
    fn facts(id: &str) -> Result<Held, String> {
        match id {
            "cr-odcr" => Ok(held(id, HeldKind::Reservation, 2, None)),
            "cr-small" => Ok(held(id, HeldKind::Reservation, 1, None)),
            "cr-ending" => Ok(held(
                id,
                HeldKind::CapacityBlock,
                2,
                Some("2026-12-05T10:30:00Z"),
            )),
            "cr-later" => Ok(held(
                id,
                HeldKind::CapacityBlock,
                2,
                Some("2026-12-06T11:30:00Z"),
            )),
            _ => Err("InvalidCapacityReservationId.NotFound".into()),
        }
    }

    const PLACE: Place<'static> = Place {
        cloud: "aws",
        provider: "aws",
        region: "us-east-1",
        call: "train_aws",
        instance_type: "p5.48xlarge",
        node_label: "eks.amazonaws.com/nodegroup",
    };

    fn reserved(ids: &[&str]) -> Vec<Reserved> {
        ids.iter()
            .map(|id| Reserved::bought("aws", "us-east-1", id, Span::default()))
            .collect()
    }

    /// The candidates and the skipped ones, judged at 10:00 on the 5th.
    fn judged(ids: &[&str], placed_on: Option<&str>) -> (Vec<Candidate>, Vec<Skipped>) {
        let lookup = |_: &str, _: &str, ask: &HeldAsk| facts(&ask.id);
        let judge = Judge {
            pool: "h100",
            nodes: 2,
            lookup: Some(&lookup),
            now: OffsetDateTime::parse("2026-12-05T10:00:00Z", &Rfc3339).expect("a time"),
            placed_on,
        };
        let mut diags = Diags::default();
        let out = candidates(&reserved(ids), &[PLACE], &judge, &mut diags);
        assert!(diags.0.is_empty());
        out
    }

    /// Each kind's rules, and a reservation that cannot be read: passed
    /// over, unless the pool's nodes are on it (a failed read is no
    /// reason to move them).
    #[test]
    fn held_capacity_is_judged_by_its_rules() {
        let ids = ["cr-odcr", "cr-small", "cr-ending", "cr-later", "cr-gone"];
        for (placed_on, kept) in [
            (None, vec!["cr-odcr", "cr-later"]),
            (Some("cr-gone"), vec!["cr-odcr", "cr-later", "cr-gone"]),
        ] {
            let (found, skipped) = judged(&ids, placed_on);
            let found: Vec<&str> = found
                .iter()
                .filter_map(|c| c.at.reservation.as_deref())
                .collect();
            assert_eq!(found, kept, "placed on {placed_on:?}");
            let why = |id: &str| {
                skipped
                    .iter()
                    .find(|s| s.candidate.at.reservation.as_deref() == Some(id))
                    .map(|s| s.why.clone())
            };
            assert_eq!(
                why("cr-small").as_deref(),
                Some("cr-small holds 1 instances; the pool wants 2")
            );
            assert!(
                why("cr-ending").is_some_and(
                    |w| w.contains("nodes leave a Capacity Block an hour before its end")
                )
            );
            assert_eq!(
                why("cr-gone").is_some(),
                placed_on.is_none(),
                "a failed read passes over only a reservation the nodes are not on"
            );
        }
    }

    /// A usable reservation is a candidate of its kind, in its zone.
    #[test]
    fn held_capacity_is_a_candidate_in_its_zone() {
        let (found, _) = judged(&["cr-odcr", "cr-later"], None);
        assert_eq!(found[0].at.capacity, "reserved");
        assert_eq!(found[1].at.capacity, "capacity_block");
        assert_eq!(found[0].zones, vec!["us-east-1b".to_string()]);
    }
}
