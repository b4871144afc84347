//! `aws_ec2_capacity_block_reservation`: a Capacity Block for ML bought
//! from an offering (`PurchaseCapacityBlock`), and the
//! `aws_ec2_capacity_block_offering` data source that finds one.
//!
//! A purchase is final: EC2 can neither modify nor cancel a block ("You
//! can't modify or cancel a Capacity Block", CancelCapacityReservation), so
//! the type has no delete. A destroy forgets the block, as the AWS
//! provider's delete does nothing, but strata says so in the plan
//! ([`lasting`]) instead of printing "destroyed" for something that stays
//! and stays billed.

use super::{arn, created, described, tag_spec, Ec2Type, Select};
use crate::data::DataKind;
use crate::error::{api, is_not_found};
use crate::reservations::{offerings, OfferQuery};
use crate::values::{int_value, number, object, required, str_value, string, timeouts_of};
use crate::wait::{ready, timeout, Poll};
use crate::Clients;
use async_trait::async_trait;
use aws_sdk_ec2::types::{
    CapacityReservation, CapacityReservationInstancePlatform, CapacityReservationState,
    ResourceType,
};
use aws_smithy_types::date_time::Format;
use aws_smithy_types::DateTime;
use std::collections::HashMap;
use std::time::Duration;
use strata_provider::{
    AttributeSchema as A, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

pub struct CapacityBlockReservation;

const TYPE: &str = "aws_ec2_capacity_block_reservation";

/// The computed attributes the block's description fills, beside `id`,
/// `arn` and the tags.
const DESCRIBED: [(&str, &str); 12] = [
    (
        "availability_zone",
        "The zone the block holds instances in.",
    ),
    ("created_date", "When it was bought (RFC 3339)."),
    ("end_date", "When EC2 takes the instances back (RFC 3339)."),
    ("end_date_type", "limited, for a block."),
    ("instance_type", "The instance type it holds."),
    ("outpost_arn", "The Outpost, where it is on one."),
    (
        "placement_group_arn",
        "The cluster placement group, if any.",
    ),
    ("reservation_type", "capacity-block."),
    (
        "start_date",
        "When its instances can be launched (RFC 3339).",
    ),
    ("tenancy", "default or dedicated."),
    ("instance_count", "How many instances it holds."),
    ("ebs_optimized", "Whether its instances are EBS-optimized."),
];

#[async_trait]
impl Ec2Type for CapacityBlockReservation {
    const TYPE: &'static str = TYPE;
    /// EC2 does not say which offering a block was bought from.
    const CONFIG_ONLY: &'static [&'static str] = &["capacity_block_offering_id"];

    fn schema(&self) -> ResourceSchema {
        let mut attributes = vec![
            (
                "capacity_block_offering_id",
                // Replaced by `plan`, not by the schema: see there.
                A::required(Type::String, "The offering to buy (a purchase is final)."),
            ),
            (
                "instance_platform",
                A::required(Type::String, "The operating system (Linux/UNIX, …).").force_new(),
            ),
        ];
        attributes.extend(DESCRIBED.iter().map(|(n, what)| {
            let ty = match *n {
                "instance_count" => Type::Number,
                "ebs_optimized" => Type::Bool,
                _ => Type::String,
            };
            (*n, A::computed(ty, what))
        }));
        let mut s = crate::tags::taggable_schema(attributes);
        s.blocks.insert("timeouts".into(), timeouts_of(&["create"]));
        s
    }

    /// Another offering is another purchase; but an imported block has no
    /// offering id (EC2 does not say it), and the configuration's is then
    /// taken as it is rather than as a new purchase, which the provider's
    /// plan would make of it.
    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = crate::tags::plan_taggable(schema, req, &[]);
        let offering = "capacity_block_offering_id";
        let bought_from = req.prior.and_then(|prior| string(prior, offering));
        let other = match (bought_from, crate::values::get(&p.planned, offering)) {
            (Some(had), Some(Value::String(want))) => had != *want,
            (Some(_), Some(v)) => !v.is_known(),
            _ => false,
        };
        if other {
            p.requires_replace.push(vec![offering.to_string()]);
        }
        p
    }

    async fn describe(
        &self,
        c: &Clients,
        select: Select<'_>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let reservations = match &select {
            Select::Ids(ids) => by_ids(c, ids).await?,
            Select::Owned(_) => c
                .ec2
                .describe_capacity_reservations()
                .set_filters(Some(select.filters("")))
                .send()
                .await
                .map_err(|e| api("DescribeCapacityReservations", e))?
                .capacity_reservations
                .unwrap_or_default(),
        };
        let mut found = HashMap::new();
        for (id, r) in select.keep(&reservations, |r| r.capacity_reservation_id(), |r| r.tags()) {
            found.insert(id.to_string(), block_value(c, id, r).await?);
        }
        Ok(found)
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<String, DriverError> {
        let offering = required(planned, TYPE, "capacity_block_offering_id")?;
        let platform = required(planned, TYPE, "instance_platform")?;
        let out = c
            .ec2
            .purchase_capacity_block()
            .capacity_block_offering_id(&offering)
            .instance_platform(CapacityReservationInstancePlatform::from(platform.as_str()))
            .tag_specifications(tag_spec(ResourceType::CapacityReservation, planned, t))
            // Sent once: the call takes no client token, so a resend after a
            // lost answer would buy a second block. A failure is followed by
            // a look for what carries this create's tags instead.
            .customize()
            .config_override(
                aws_sdk_ec2::config::Config::builder()
                    .retry_config(aws_sdk_ec2::config::retry::RetryConfig::disabled()),
            )
            .send()
            .await
            .map_err(|e| api("PurchaseCapacityBlock", e))?;
        let id = created(
            "PurchaseCapacityBlock",
            out.capacity_reservation()
                .and_then(|r| r.capacity_reservation_id()),
        )?;
        // Bought once the payment goes through: active, or scheduled for a
        // block that begins later (the provider's waiter, 40 minutes).
        let limit = timeout(planned, "create", Duration::from_secs(40 * 60));
        ready(&format!("waiting for Capacity Block {id}"), limit, || {
            look(c, &id)
        })
        .await?;
        Ok(id)
    }

    fn lasting(&self, prior: &Value) -> Option<String> {
        strata_provider::lasting::aws(TYPE, prior)
    }

    async fn delete(&self, _c: &Clients, _id: &str, _prior: &Value) -> Result<(), DriverError> {
        // EC2 cannot cancel a block; the plan forgot it instead
        // (`lasting`), and a replacement leaves the old one to run out.
        Ok(())
    }
}

/// The reservations by id; one that is gone (a block long expired is
/// removed from EC2's answers) is left out, as a filter would.
async fn by_ids(c: &Clients, ids: &[String]) -> Result<Vec<CapacityReservation>, DriverError> {
    let ask = |ids: &[String]| {
        c.ec2
            .describe_capacity_reservations()
            .set_capacity_reservation_ids(Some(ids.to_vec()))
            .send()
    };
    match ask(ids).await {
        Ok(out) => Ok(out.capacity_reservations.unwrap_or_default()),
        // One missing id fails the whole call: ask for each alone.
        Err(e) if is_not_found(&e) && ids.len() > 1 => {
            let mut all = Vec::new();
            for id in ids {
                match ask(std::slice::from_ref(id)).await {
                    Ok(out) => all.extend(out.capacity_reservations.unwrap_or_default()),
                    Err(e) if is_not_found(&e) => {}
                    Err(e) => return Err(api("DescribeCapacityReservations", e)),
                }
            }
            Ok(all)
        }
        Err(e) if is_not_found(&e) => Ok(Vec::new()),
        Err(e) => Err(api("DescribeCapacityReservations", e)),
    }
}

async fn block_value(c: &Clients, id: &str, r: &CapacityReservation) -> Result<Value, DriverError> {
    let date =
        |d: Option<&DateTime>| str_value(d.and_then(|d| d.fmt(Format::DateTime).ok()).as_deref());
    let arn = match r.capacity_reservation_arn() {
        Some(a) => Value::string(a),
        None => arn(c, r.owner_id(), "capacity-reservation", id).await?,
    };
    let mut v = described(
        id,
        arn,
        None,
        r.tags(),
        vec![
            ("availability_zone", str_value(r.availability_zone())),
            ("created_date", date(r.create_date())),
            ("end_date", date(r.end_date())),
            (
                "end_date_type",
                str_value(r.end_date_type().map(|t| t.as_str())),
            ),
            ("instance_type", str_value(r.instance_type())),
            ("outpost_arn", str_value(r.outpost_arn())),
            ("placement_group_arn", str_value(r.placement_group_arn())),
            (
                "reservation_type",
                str_value(r.reservation_type().map(|t| t.as_str())),
            ),
            ("start_date", date(r.start_date())),
            ("tenancy", str_value(r.tenancy().map(|t| t.as_str()))),
            ("instance_count", int_value(r.total_instance_count())),
            (
                "ebs_optimized",
                Value::Bool(r.ebs_optimized().unwrap_or(false)),
            ),
            (
                "instance_platform",
                str_value(r.instance_platform().map(|p| p.as_str())),
            ),
        ],
    );
    if let Value::Object(m) = &mut v {
        m.remove("owner_id");
    }
    Ok(v)
}

/// One look at a block being bought.
async fn look(c: &Clients, id: &str) -> Result<Poll, DriverError> {
    let out = c
        .ec2
        .describe_capacity_reservations()
        .capacity_reservation_ids(id)
        .send()
        .await;
    let out = match out {
        Ok(out) => out,
        // Eventual consistency: a block just bought may not be listed yet.
        Err(e) if is_not_found(&e) => return Ok(Poll::Pending("payment-pending".into())),
        Err(e) => return Err(api("DescribeCapacityReservations", e)),
    };
    let Some(r) = out.capacity_reservations().first() else {
        return Ok(Poll::Pending("payment-pending".into()));
    };
    Ok(match r.state() {
        Some(CapacityReservationState::Active | CapacityReservationState::Scheduled) => {
            Poll::Ready(Value::string(id))
        }
        Some(
            s @ (CapacityReservationState::PaymentFailed
            | CapacityReservationState::Failed
            | CapacityReservationState::Cancelled
            | CapacityReservationState::Expired),
        ) => Poll::Failed(crate::error::classify(
            "PurchaseCapacityBlock",
            format!("Capacity Block {id} is {}", s.as_str()),
            false,
        )),
        s => Poll::Pending(s.map_or("payment-pending", |s| s.as_str()).to_string()),
    })
}

/// `aws_ec2_capacity_block_offering`: the one offering that matches, as
/// the AWS provider reads it (none, or more than one, is an error: narrow
/// the date range).
pub struct CapacityBlockOffering;

#[async_trait]
impl DataKind for CapacityBlockOffering {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            (
                "capacity_duration_hours",
                A::required(Type::Number, "How long the block lasts, in hours."),
            ),
            (
                "instance_count",
                A::required(Type::Number, "How many instances it holds."),
            ),
            (
                "instance_type",
                A::required(Type::String, "The instance type (p5.48xlarge, …)."),
            ),
            (
                "start_date_range",
                A::optional(Type::String, "The earliest start (RFC 3339).").and_computed(),
            ),
            (
                "end_date_range",
                A::optional(Type::String, "The latest end (RFC 3339).").and_computed(),
            ),
            (
                "availability_zone",
                A::computed(Type::String, "The zone it is in."),
            ),
            (
                "capacity_block_offering_id",
                A::computed(Type::String, "The id to buy it by."),
            ),
            (
                "currency_code",
                A::computed(Type::String, "The currency of the fee."),
            ),
            (
                "tenancy",
                A::computed(Type::String, "default or dedicated."),
            ),
            (
                "upfront_fee",
                A::computed(Type::String, "What the block costs, paid at purchase."),
            ),
        ])
    }

    async fn read(&self, c: &Clients, config: &Value) -> Result<Value, DriverError> {
        let int = |name: &str| -> Result<i32, DriverError> {
            number(config, name)
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(|| DriverError::InvalidConfig {
                    type_name: "aws_ec2_capacity_block_offering".into(),
                    detail: format!("{name} must be a whole number"),
                })
        };
        let date = |name: &str| -> Result<Option<DateTime>, DriverError> {
            string(config, name)
                .map(|d| {
                    DateTime::from_str(&d, Format::DateTime).map_err(|_| {
                        DriverError::InvalidConfig {
                            type_name: "aws_ec2_capacity_block_offering".into(),
                            detail: format!("{name} {d:?} is not an RFC 3339 time"),
                        }
                    })
                })
                .transpose()
        };
        let ty = string(config, "instance_type").unwrap_or_default();
        let query = OfferQuery {
            instance_type: &ty,
            instances: int("instance_count")?,
            hours: int("capacity_duration_hours")?,
            starts: date("start_date_range")?,
            ends: date("end_date_range")?,
        };
        let offers = offerings(&c.ec2, &query).await?;
        let one = the_one(&offers, &ty)?;
        let date = |d: Option<&DateTime>| d.and_then(|d| d.fmt(Format::DateTime).ok());
        Ok(object(vec![
            (
                "capacity_duration_hours",
                config_value(config, "capacity_duration_hours"),
            ),
            ("instance_count", config_value(config, "instance_count")),
            ("instance_type", Value::string(&ty)),
            (
                "start_date_range",
                str_value(
                    string(config, "start_date_range")
                        .or(date(one.start_date()))
                        .as_deref(),
                ),
            ),
            (
                "end_date_range",
                str_value(
                    string(config, "end_date_range")
                        .or(date(one.end_date()))
                        .as_deref(),
                ),
            ),
            ("availability_zone", str_value(one.availability_zone())),
            (
                "capacity_block_offering_id",
                str_value(one.capacity_block_offering_id()),
            ),
            ("currency_code", str_value(one.currency_code())),
            ("tenancy", str_value(one.tenancy().map(|t| t.as_str()))),
            ("upfront_fee", str_value(one.upfront_fee())),
        ]))
    }
}

/// The one offering of `offers`, or why there is not one.
fn the_one<'o>(
    offers: &'o [aws_sdk_ec2::types::CapacityBlockOffering],
    ty: &str,
) -> Result<&'o aws_sdk_ec2::types::CapacityBlockOffering, DriverError> {
    match offers {
        [one] => Ok(one),
        [] => {
            Err(DriverError::InvalidConfig {
                type_name: "aws_ec2_capacity_block_offering".into(),
                detail: format!("no Capacity Block offering of {ty} matches: widen the date range or ask for fewer instances or hours"),
            })
        }
        many => {
            let starts: Vec<String> = many
                .iter()
                .map(|o| {
                    format!(
                        "{} in {} for {} {}",
                        o.start_date()
                            .and_then(|d| d.fmt(Format::DateTime).ok())
                            .unwrap_or_default(),
                        o.availability_zone().unwrap_or_default(),
                        o.upfront_fee().unwrap_or_default(),
                        o.currency_code().unwrap_or_default()
                    )
                })
                .collect();
            Err(DriverError::InvalidConfig {
                type_name: "aws_ec2_capacity_block_offering".into(),
                detail: format!(
                    "{} Capacity Block offerings of {ty} match ({}): narrow start_date_range and end_date_range to one",
                    many.len(),
                    starts.join("; ")
                ),
            })
        }
    }
}

fn config_value(config: &Value, name: &str) -> Value {
    crate::values::get(config, name)
        .cloned()
        .unwrap_or(Value::Null(Type::Number))
}
