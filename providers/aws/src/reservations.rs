//! A Capacity Reservation named by a pool's placement (an On-Demand
//! Capacity Reservation or a Capacity Block for ML, both `cr-…`), read
//! with `DescribeCapacityReservations` in the region of the call asking.

use crate::error::api;
use aws_sdk_ec2::types::{CapacityReservation, CapacityReservationState, CapacityReservationType};
use aws_sdk_ec2::Client;
use aws_smithy_types::date_time::Format;
use strata_provider::reservation::{Held, HeldAsk, HeldKind, HeldState};
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
