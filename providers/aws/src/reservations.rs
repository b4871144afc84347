//! A Capacity Reservation named by a pool's placement (an On-Demand
//! Capacity Reservation or a Capacity Block for ML, both `cr-…`), read
//! with `DescribeCapacityReservations` in the region of the call asking;
//! and the Capacity Blocks EC2 offers (`DescribeCapacityBlockOfferings`),
//! for the offering data source and for a placement that finds one.

use crate::error::api;
use crate::Clients;
use aws_sdk_ec2::types::{
    CapacityBlockOffering, CapacityReservation, CapacityReservationState, CapacityReservationType,
};
use aws_sdk_ec2::Client;
use aws_smithy_types::date_time::Format;
use aws_smithy_types::DateTime;
use strata_provider::money::Usd;
use strata_provider::reservation::{Held, HeldAsk, HeldKind, HeldState, Offer, OfferAsk};
use strata_provider::DriverError;

pub async fn reservation(c: &Clients, ask: &HeldAsk) -> Result<Held, DriverError> {
    if let Some(group) = group_name(&ask.id) {
        return group_reservation(c, ask, group).await;
    }
    let out = c
        .ec2
        .describe_capacity_reservations()
        .capacity_reservation_ids(&ask.id)
        .send()
        .await
        .map_err(|e| api("DescribeCapacityReservations", e))?;
    let found = out
        .capacity_reservations()
        .iter()
        .find(|r| r.capacity_reservation_id() == Some(ask.id.as_str()));
    match found {
        Some(r) => Ok(held(r, &ask.id)),
        None => Err(DriverError::InvalidConfig {
            type_name: "reserved".into(),
            detail: format!("no capacity reservation {:?} in {}", ask.id, ask.region),
        }),
    }
}

/// The group a Capacity Reservation group's ARN names
/// (`arn:aws:resource-groups:REGION:ACCOUNT:group/NAME`).
fn group_name(id: &str) -> Option<&str> {
    let rest = id.strip_prefix("arn:")?;
    let (head, name) = rest.split_once(":group/")?;
    head.contains(":resource-groups:").then_some(name)
}

/// A Capacity Reservation group, as the pool would use it: its On-Demand
/// Capacity Reservations of the pool's instance type (instances launched
/// into a group match any of them with capacity, EC2's guide says, and run
/// On-Demand where none has), summed, in the zone holding most; the
/// group's other members (other types, Capacity Blocks) are not the pool's.
async fn group_reservation(c: &Clients, ask: &HeldAsk, group: &str) -> Result<Held, DriverError> {
    let mut pages = c
        .resource_groups
        .list_group_resources()
        .group(&ask.id)
        .into_paginator()
        .send();
    let mut ids = Vec::new();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| api("ListGroupResources", e))?;
        let arns = page
            .resources()
            .iter()
            .filter_map(|r| r.identifier()?.resource_arn());
        ids.extend(arns.filter_map(|a| Some(a.split_once("capacity-reservation/")?.1.to_string())));
    }
    let members = match ids.is_empty() {
        true => Vec::new(),
        false => {
            let out = c
                .ec2
                .describe_capacity_reservations()
                .set_capacity_reservation_ids(Some(ids))
                .send()
                .await
                .map_err(|e| api("DescribeCapacityReservations", e))?;
            out.capacity_reservations()
                .iter()
                .map(|r| held(r, r.capacity_reservation_id().unwrap_or_default()))
                .filter(|h| h.kind == HeldKind::Reservation && h.instance_type == ask.instance_type)
                .collect()
        }
    };
    Ok(pooled(&ask.id, group, &ask.instance_type, &members))
}

/// The group's reservations of one instance type as one held place: the
/// active ones in the zone holding the most instances (then the most free).
fn pooled(arn: &str, group: &str, instance_type: &str, members: &[Held]) -> Held {
    let active: Vec<&Held> = members
        .iter()
        .filter(|m| m.state == HeldState::Active)
        .collect();
    let sum_in = |zone: &Option<String>, n: fn(&Held) -> u64| -> u64 {
        let here = active.iter().filter(|m| m.zone == *zone);
        here.map(|m| n(m)).sum()
    };
    // By what each zone holds first: the pool's own nodes take up room,
    // and the zone must not change under them.
    let zone = active.iter().map(|m| m.zone.clone()).max_by_key(|z| {
        let held = sum_in(z, |m| m.instances);
        let free = sum_in(z, |m| m.available);
        (held, free, std::cmp::Reverse(z.clone()))
    });
    let there: Vec<&&Held> = active
        .iter()
        .filter(|m| Some(&m.zone) == zone.as_ref())
        .collect();
    let state = match (there.is_empty(), members.is_empty()) {
        (false, _) => HeldState::Active,
        (true, true) => HeldState::Over(format!(
            "group {group} holds no On-Demand Capacity Reservation of {instance_type}"
        )),
        (true, false) => HeldState::Over(format!(
            "no reservation of {instance_type} in group {group} is active"
        )),
    };
    let ends: Option<Vec<&String>> = there.iter().map(|m| m.ends.as_ref()).collect();
    // None active: what the group holds of the type, none of it free.
    let instances = match there.is_empty() {
        true => members.iter().map(|m| m.instances).sum(),
        false => there.iter().map(|m| m.instances).sum(),
    };
    Held {
        id: arn.to_string(),
        kind: HeldKind::Reservation,
        instance_type: instance_type.to_string(),
        zone: zone.flatten(),
        instances,
        available: there.iter().map(|m| m.available).sum(),
        state,
        starts: None,
        // Until the last of them ends; none, when one lasts until cancelled.
        ends: ends.and_then(|e| e.into_iter().max().cloned()),
        upfront: None,
    }
}

fn held(r: &CapacityReservation, id: &str) -> Held {
    let count = |n: Option<i32>| n.and_then(|n| u64::try_from(n).ok()).unwrap_or(0);
    let date =
        |d: Option<&aws_smithy_types::DateTime>| d.and_then(|d| d.fmt(Format::DateTime).ok());
    Held {
        id: id.to_string(),
        kind: match r.reservation_type() {
            Some(CapacityReservationType::CapacityBlock) => HeldKind::CapacityBlock,
            _ => HeldKind::Reservation,
        },
        instance_type: r.instance_type().unwrap_or_default().to_string(),
        zone: r.availability_zone().map(str::to_string),
        instances: count(r.total_instance_count()),
        available: count(r.available_instance_count()),
        state: match r.state() {
            Some(CapacityReservationState::Active) => HeldState::Active,
            Some(
                CapacityReservationState::Scheduled
                | CapacityReservationState::PaymentPending
                | CapacityReservationState::Pending
                | CapacityReservationState::Assessing
                | CapacityReservationState::Delayed,
            ) => HeldState::Scheduled,
            Some(s) => HeldState::Over(s.as_str().to_string()),
            None => HeldState::Over("unknown".into()),
        },
        starts: date(r.start_date()),
        ends: date(r.end_date()),
        upfront: None,
    }
}

/// What `DescribeCapacityBlockOfferings` is asked.
pub struct OfferQuery<'a> {
    pub instance_type: &'a str,
    pub instances: i32,
    pub hours: i32,
    pub starts: Option<DateTime>,
    pub ends: Option<DateTime>,
}

pub async fn offerings(
    ec2: &Client,
    q: &OfferQuery<'_>,
) -> Result<Vec<CapacityBlockOffering>, DriverError> {
    let out = ec2
        .describe_capacity_block_offerings()
        .instance_type(q.instance_type)
        .instance_count(q.instances)
        .capacity_duration_hours(q.hours)
        .set_start_date_range(q.starts)
        .set_end_date_range(q.ends)
        .send()
        .await
        .map_err(|e| api("DescribeCapacityBlockOfferings", e))?;
    Ok(out.capacity_block_offerings.unwrap_or_default())
}

/// The offerings for a placement's `capacity_block`, earliest first.
pub async fn block_offers(ec2: &Client, ask: &OfferAsk) -> Result<Vec<Offer>, DriverError> {
    let bad = |what: &str| DriverError::InvalidConfig {
        type_name: "capacity_block".into(),
        detail: what.to_string(),
    };
    let date = |d: &Option<String>| {
        d.as_deref()
            .map(|d| {
                DateTime::from_str(d, Format::DateTime)
                    .map_err(|_| bad(&format!("{d:?} is not an RFC 3339 time")))
            })
            .transpose()
    };
    let q = OfferQuery {
        instance_type: &ask.instance_type,
        instances: i32::try_from(ask.instances).map_err(|_| bad("too many instances"))?,
        hours: i32::try_from(ask.hours).map_err(|_| bad("too many hours"))?,
        starts: date(&ask.starts)?,
        ends: date(&ask.ends)?,
    };
    let text = |d: Option<&DateTime>| {
        d.and_then(|d| d.fmt(Format::DateTime).ok())
            .unwrap_or_default()
    };
    let mut offers: Vec<Offer> = offerings(ec2, &q)
        .await?
        .iter()
        .filter_map(|o| {
            Some(Offer {
                id: o.capacity_block_offering_id()?.to_string(),
                zone: o.availability_zone().unwrap_or_default().to_string(),
                starts: text(o.start_date()),
                ends: text(o.end_date()),
                upfront: Usd::parse(o.upfront_fee()?)?,
            })
        })
        .collect();
    offers.sort_by(|a, b| a.starts.cmp(&b.starts));
    Ok(offers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(zone: &str, instances: u64, available: u64, state: HeldState) -> Held {
        Held {
            id: format!("cr-{zone}-{instances}"),
            kind: HeldKind::Reservation,
            instance_type: "p5.48xlarge".into(),
            zone: Some(zone.into()),
            instances,
            available,
            state,
            starts: None,
            ends: None,
            upfront: None,
        }
    }

    #[test]
    fn a_group_is_named_by_its_arn_only() {
        let arn = "arn:aws:resource-groups:us-east-1:123456789012:group/gpus";
        assert_eq!(group_name(arn), Some("gpus"));
        assert_eq!(group_name("cr-0123456789abcdef0"), None);
        let other = "arn:aws:iam::123456789012:group/gpus";
        assert_eq!(group_name(other), None);
    }

    #[test]
    fn a_groups_reservations_are_summed_in_the_zone_holding_most() {
        let active = HeldState::Active;
        let members = [
            member("us-east-1a", 2, 2, active.clone()),
            member("us-east-1b", 1, 0, active.clone()),
            member("us-east-1b", 2, 0, active.clone()),
            member("us-east-1c", 8, 8, HeldState::Over("expired".into())),
        ];
        // The pool's own nodes fill 1b: it stays the zone.
        let h = pooled("arn", "gpus", "p5.48xlarge", &members);
        assert_eq!(h.zone.as_deref(), Some("us-east-1b"));
        assert_eq!((h.instances, h.available), (3, 0));
        assert_eq!(h.state, HeldState::Active);
        let none = pooled("arn", "gpus", "p5.48xlarge", &[]);
        assert!(matches!(none.state, HeldState::Over(why) if why.contains("holds no")));
        let even = pooled("arn", "gpus", "p5.48xlarge", &members[..1]);
        assert_eq!(even.zone.as_deref(), Some("us-east-1a"));
        let over = pooled("arn", "gpus", "p5.48xlarge", &members[3..]);
        assert!(matches!(over.state, HeldState::Over(why) if why.contains("active")));
    }
}
