//! A Capacity Reservation named by a pool's placement (an On-Demand
//! Capacity Reservation or a Capacity Block for ML, both `cr-…`), read
//! with `DescribeCapacityReservations` in the region of the call asking;
//! and the Capacity Blocks EC2 offers (`DescribeCapacityBlockOfferings`),
//! for the offering data source and for a placement that finds one.

use crate::error::api;
use aws_sdk_ec2::types::{
    CapacityBlockOffering, CapacityReservation, CapacityReservationState, CapacityReservationType,
};
use aws_sdk_ec2::Client;
use aws_smithy_types::date_time::Format;
use aws_smithy_types::DateTime;
use strata_provider::money::Usd;
use strata_provider::reservation::{Held, HeldAsk, HeldKind, HeldState, Offer, OfferAsk};
use strata_provider::DriverError;

pub async fn reservation(ec2: &Client, ask: &HeldAsk) -> Result<Held, DriverError> {
    let out = ec2
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
