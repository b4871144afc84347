//! EC2 Capacity Reservations, which moto 5.2.5 lacks: On-Demand Capacity
//! Reservations (`CreateCapacityReservation`, `CancelCapacityReservation`)
//! and Capacity Blocks for ML (`DescribeCapacityBlockOfferings`,
//! `PurchaseCapacityBlock`), both read with `DescribeCapacityReservations`,
//! in EC2's documented shapes and errors. A block's state follows the
//! clock: `scheduled` before its start, `active` until its end, then
//! `expired`. Offerings start at 11:30 UTC as AWS's do, from the next such
//! time on (or the start of the range asked), and cost a fixed fee per
//! instance-hour.

use crate::clock::Clock;
use crate::ec2_query::{self, escape, Form};
use crate::{Body, Req};
use hyper::Response;
use std::collections::BTreeMap;
use std::sync::Mutex;
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime, Time};

mod groups;

/// The instance types AWS sells Capacity Blocks of (EC2 User Guide,
/// "Capacity Blocks for ML", supported instance types).
pub const BLOCK_TYPES: &[&str] = &[
    "p4d.24xlarge",
    "p4de.24xlarge",
    "p5.48xlarge",
    "p5e.48xlarge",
    "p5en.48xlarge",
    "p6-b200.48xlarge",
    "trn1.32xlarge",
    "trn2.48xlarge",
];

/// What a block costs per instance-hour here (one price; the sandbox's
/// offerings are not a market).
const BLOCK_FEE_PER_INSTANCE_HOUR: f64 = 31.464;

#[derive(Debug, Clone)]
struct Reservation {
    id: String,
    region: String,
    instance_type: String,
    zone: String,
    count: u64,
    block: bool,
    start: OffsetDateTime,
    end: Option<OffsetDateTime>,
    created: OffsetDateTime,
    cancelled: bool,
    match_criteria: String,
    tags: BTreeMap<String, String>,
}

impl Reservation {
    fn state(&self, now: OffsetDateTime) -> &'static str {
        match (self.cancelled, self.end) {
            (true, _) => "cancelled",
            (_, Some(end)) if now >= end => "expired",
            _ if now < self.start => "scheduled",
            _ => "active",
        }
    }

    fn xml(&self, now: OffsetDateTime, in_use: u64) -> String {
        let date = |t: OffsetDateTime| t.format(&Rfc3339).unwrap_or_default();
        let end = self
            .end
            .map_or(String::new(), |e| format!("<endDate>{}</endDate>", date(e)));
        format!(
            "<capacityReservationId>{id}</capacityReservationId><ownerId>123456789012</ownerId><capacityReservationArn>arn:aws:ec2:{region}:123456789012:capacity-reservation/{id}</capacityReservationArn><instanceType>{ty}</instanceType><instancePlatform>Linux/UNIX</instancePlatform><availabilityZone>{zone}</availabilityZone><tenancy>default</tenancy><totalInstanceCount>{n}</totalInstanceCount><availableInstanceCount>{free}</availableInstanceCount><ebsOptimized>true</ebsOptimized><ephemeralStorage>false</ephemeralStorage><state>{state}</state><startDate>{start}</startDate>{end}<endDateType>{end_type}</endDateType><instanceMatchCriteria>{criteria}</instanceMatchCriteria><createDate>{created}</createDate><reservationType>{kind}</reservationType><tagSet>{tags}</tagSet>",
            id = self.id,
            region = self.region,
            ty = escape(&self.instance_type),
            zone = escape(&self.zone),
            n = self.count,
            free = self.count.saturating_sub(in_use),
            state = self.state(now),
            start = date(self.start),
            end_type = if self.end.is_some() { "limited" } else { "unlimited" },
            criteria = self.match_criteria,
            created = date(self.created),
            kind = if self.block { "capacity-block" } else { "default" },
            tags = self
                .tags
                .iter()
                .map(|(k, v)| format!(
                    "<item><key>{}</key><value>{}</value></item>",
                    escape(k),
                    escape(v)
                ))
                .collect::<String>(),
        )
    }
}

/// The reservations the proxy holds, across regions.
pub struct Reservations {
    held: Mutex<Vec<Reservation>>,
    /// Instances running in reservations, by the node group
    /// (`cluster/name`) that launched them: each reservation's id and how
    /// many (several, for a launch into a group).
    used: Mutex<BTreeMap<String, Vec<(String, u64)>>>,
    /// Capacity Reservation groups (see `groups.rs`).
    groups: groups::Groups,
    clock: Clock,
}

/// A node group launching nodes.
pub struct Launch<'a> {
    /// `cluster/name`.
    pub group: String,
    pub region: &'a str,
    pub instance_type: &'a str,
    /// The zones of its subnets.
    pub zones: &'a [String],
    /// How many it will run.
    pub nodes: u64,
}

/// How a node group buys its instances: its launch template's market type
/// and its EKS capacity type.
pub struct Market<'a> {
    pub template: Option<&'a str>,
    pub capacity_type: Option<&'a str>,
}

impl Reservations {
    pub fn new(clock: Clock) -> Reservations {
        Reservations {
            held: Mutex::new(Vec::new()),
            used: Mutex::new(BTreeMap::new()),
            groups: Default::default(),
            clock,
        }
    }

    /// Launches `launch`'s nodes into reservation `id`, by the rules EC2
    /// documents ("Launch instances into an existing Capacity
    /// Reservation": matching instance type and zone, enough available
    /// capacity, the active state; a Capacity Block only through the
    /// `capacity-block` market, which EKS takes as `CAPACITY_BLOCK`); `Err`
    /// is the launch failure as EC2 words it.
    pub fn launch(&self, id: &str, market: &Market<'_>, launch: &Launch<'_>) -> Result<(), String> {
        let now = self.clock.now();
        let held = self.held.lock().map_err(|_| "poisoned".to_string())?;
        let Some(r) = held
            .iter()
            .find(|r| r.id == id && r.region == launch.region)
        else {
            return Err(format!("InvalidCapacityReservationId.NotFound - The capacity reservation ID '{id}' does not exist."));
        };
        let state = r.state(now);
        if state != "active" {
            return Err(format!("InvalidCapacityReservationId.Malformed - The Capacity Reservation {id} is {state}: instances launch only into an active one."));
        }
        if r.instance_type != launch.instance_type || !launch.zones.iter().all(|z| *z == r.zone) {
            return Err(format!("InvalidParameterValue - The Capacity Reservation {id} holds {} in {}; the launch asks for {} in {}.", r.instance_type, r.zone, launch.instance_type, launch.zones.join(", ")));
        }
        let block_market = market.template == Some("capacity-block")
            && market.capacity_type == Some("CAPACITY_BLOCK");
        if r.block != block_market {
            return Err(match r.block {
                true => format!("InvalidParameterCombination - {id} is a Capacity Block: instances launch into it with the capacity-block market type (CAPACITY_BLOCK)."),
                false => format!("InvalidParameterCombination - {id} is not a Capacity Block: the capacity-block market type launches only into one."),
            });
        }
        let mut used = self.used.lock().map_err(|_| "poisoned".to_string())?;
        let others = in_use_by_others(&used, id, &launch.group);
        if others + launch.nodes > r.count {
            return Err(format!(
                "ReservationCapacityExceeded - The Capacity Reservation {id} in {} has {} instances available; {} asked.",
                r.zone,
                r.count.saturating_sub(others),
                launch.nodes
            ));
        }
        used.insert(launch.group.clone(), vec![(id.to_string(), launch.nodes)]);
        Ok(())
    }

    /// The node group's instances leave whatever reservation they were in.
    pub fn release(&self, group: &str) {
        if let Ok(mut used) = self.used.lock() {
            used.remove(group);
        }
    }

    fn in_use(&self, id: &str) -> u64 {
        self.used
            .lock()
            .map(|u| in_use_by_others(&u, id, ""))
            .unwrap_or(0)
    }

    /// The answer to `req` when it is one of the reservation actions.
    pub fn answer(&self, req: &Req, region: &str) -> Option<Response<Body>> {
        let form = Form::of(req)?;
        let now = self.clock.now();
        let mut held = self.held.lock().ok()?;
        Some(match form.action()? {
            "CreateCapacityReservation" => create(&mut held, &form, region, now),
            "DescribeCapacityReservations" => {
                describe(&held, &form, region, now, &|id| self.in_use(id))
            }
            "CancelCapacityReservation" => cancel(&mut held, &form, region, now),
            "DescribeCapacityBlockOfferings" => offerings(&form, region, now),
            "PurchaseCapacityBlock" => purchase(&mut held, &form, region, now),
            "CreateTags" | "DeleteTags" => retag(&mut held, &form, region)?,
            "DescribeTags" => described_tags(&held, &form, region)?,
            _ => return None,
        })
    }
}

/// Instances in reservation `id` that node groups other than `group` run.
fn in_use_by_others(used: &BTreeMap<String, Vec<(String, u64)>>, id: &str, group: &str) -> u64 {
    used.iter()
        .filter(|(g, _)| *g != group)
        .flat_map(|(_, runs)| runs)
        .filter(|(r, _)| r == id)
        .map(|(_, n)| n)
        .sum()
}

fn invalid(message: &str) -> Response<Body> {
    ec2_query::error(400, "InvalidParameterValue", message)
}

fn missing(name: &str) -> Response<Body> {
    ec2_query::error(
        400,
        "MissingParameter",
        &format!("The request must contain the parameter {name}"),
    )
}

fn new_id(prefix: &str) -> String {
    format!("{prefix}-{:017x}", rand::random::<u64>() >> 4)
}

fn create(
    held: &mut Vec<Reservation>,
    form: &Form,
    region: &str,
    now: OffsetDateTime,
) -> Response<Body> {
    let (Some(ty), Some(count), Some(_platform)) = (
        form.get("InstanceType"),
        form.get("InstanceCount"),
        form.get("InstancePlatform"),
    ) else {
        return missing("InstanceType, InstanceCount and InstancePlatform");
    };
    let Some(count) = count.parse::<u64>().ok().filter(|n| *n >= 1) else {
        return invalid("InstanceCount must be at least 1");
    };
    let zone = match form.get("AvailabilityZone") {
        Some(z) if z.starts_with(region) => z.to_string(),
        Some(z) => return invalid(&format!("Invalid availability zone: [{z}]")),
        None => return missing("AvailabilityZone"),
    };
    let end = match (form.get("EndDateType"), form.get("EndDate")) {
        (Some("limited"), Some(d)) => match OffsetDateTime::parse(d, &Rfc3339) {
            Ok(t) if t > now => Some(t),
            _ => return invalid("EndDate must be a future date"),
        },
        (Some("limited"), None) => return missing("EndDate"),
        (_, Some(_)) => return invalid("EndDate is for an EndDateType of limited"),
        _ => None,
    };
    let r = Reservation {
        id: new_id("cr"),
        region: region.to_string(),
        instance_type: ty.to_string(),
        zone,
        count,
        block: false,
        start: now,
        end,
        created: now,
        cancelled: false,
        match_criteria: form
            .get("InstanceMatchCriteria")
            .unwrap_or("open")
            .to_string(),
        tags: specified_tags(form),
    };
    let xml = format!(
        "<capacityReservation>{}</capacityReservation>",
        r.xml(now, 0)
    );
    held.push(r);
    ec2_query::answer("CreateCapacityReservation", &xml)
}

fn describe(
    held: &[Reservation],
    form: &Form,
    region: &str,
    now: OffsetDateTime,
    in_use: &dyn Fn(&str) -> u64,
) -> Response<Body> {
    let ids = form.listed("CapacityReservationId.");
    if let Some(unknown) = ids
        .iter()
        .find(|id| !held.iter().any(|r| r.id == **id && r.region == region))
    {
        return ec2_query::error(
            400,
            "InvalidCapacityReservationId.NotFound",
            &format!("The capacity reservation ID '{unknown}' does not exist"),
        );
    }
    let filters = filters(form);
    let items: String = held
        .iter()
        .filter(|r| r.region == region && (ids.is_empty() || ids.contains(&r.id.as_str())))
        .filter(|r| filters.iter().all(|f| f.admits(&r.tags)))
        .map(|r| format!("<item>{}</item>", r.xml(now, in_use(&r.id))))
        .collect();
    ec2_query::answer(
        "DescribeCapacityReservations",
        &format!("<capacityReservationSet>{items}</capacityReservationSet>"),
    )
}

fn cancel(
    held: &mut [Reservation],
    form: &Form,
    region: &str,
    now: OffsetDateTime,
) -> Response<Body> {
    let Some(id) = form.get("CapacityReservationId") else {
        return missing("CapacityReservationId");
    };
    let Some(r) = held.iter_mut().find(|r| r.id == id && r.region == region) else {
        return ec2_query::error(
            400,
            "InvalidCapacityReservationId.NotFound",
            &format!("The capacity reservation ID '{id}' does not exist"),
        );
    };
    // A Capacity Block is bought for its whole window: it cannot be
    // cancelled (EC2 User Guide, "Capacity Blocks for ML").
    if r.block || r.state(now) != "active" {
        return ec2_query::error(
            400,
            "InvalidCapacityReservationId.Malformed",
            &format!(
                "The capacity reservation '{id}' cannot be cancelled in its current state ({}).",
                if r.block {
                    "capacity-block"
                } else {
                    r.state(now)
                }
            ),
        );
    }
    r.cancelled = true;
    ec2_query::answer("CancelCapacityReservation", "<return>true</return>")
}

/// The tags a create asks for in its capacity-reservation
/// `TagSpecification`.
fn specified_tags(form: &Form) -> BTreeMap<String, String> {
    let spec = (1..)
        .map(|n| format!("TagSpecification.{n}."))
        .take_while(|p| form.get(&format!("{p}ResourceType")).is_some())
        .find(|p| form.get(&format!("{p}ResourceType")) == Some("capacity-reservation"));
    spec.map(|p| pairs(form, &format!("{p}Tag.")))
        .unwrap_or_default()
}

/// `Prefix.N.Key` / `Prefix.N.Value` pairs.
fn pairs(form: &Form, prefix: &str) -> BTreeMap<String, String> {
    (1..)
        .map_while(|n| {
            let key = form.get(&format!("{prefix}{n}.Key"))?;
            let value = form.get(&format!("{prefix}{n}.Value")).unwrap_or("");
            Some((key.to_string(), value.to_string()))
        })
        .collect()
}

/// A describe filter EC2 documents for reservations' tags.
enum TagFilter {
    /// `tag-key`: any of these keys is set.
    Key(Vec<String>),
    /// `tag:<key>`: the key holds one of these values.
    Value(String, Vec<String>),
    /// A filter on something else, which the sandbox does not narrow by.
    Other,
}

impl TagFilter {
    fn admits(&self, tags: &BTreeMap<String, String>) -> bool {
        match self {
            TagFilter::Key(keys) => keys.iter().any(|k| tags.contains_key(k)),
            TagFilter::Value(k, values) => tags.get(k).is_some_and(|v| values.contains(v)),
            TagFilter::Other => true,
        }
    }
}

fn filters(form: &Form) -> Vec<TagFilter> {
    (1..)
        .map_while(|n| {
            let name = form.get(&format!("Filter.{n}.Name"))?;
            let values: Vec<String> = form
                .listed(&format!("Filter.{n}.Value."))
                .into_iter()
                .map(str::to_string)
                .collect();
            Some(match name.strip_prefix("tag:") {
                Some(k) => TagFilter::Value(k.to_string(), values),
                None if name == "tag-key" => TagFilter::Key(values),
                None => TagFilter::Other,
            })
        })
        .collect()
}

/// `DescribeTags` for reservations the proxy holds, by `resource-id`
/// filter, as EC2 lists tags (`None` for other resources: moto's).
fn described_tags(held: &[Reservation], form: &Form, region: &str) -> Option<Response<Body>> {
    let ids: Vec<&str> = (1..)
        .map_while(|n| Some((n, form.get(&format!("Filter.{n}.Name"))?)))
        .filter(|(_, name)| *name == "resource-id")
        .flat_map(|(n, _)| form.listed(&format!("Filter.{n}.Value.")))
        .collect();
    let ours: Vec<&Reservation> = held
        .iter()
        .filter(|r| r.region == region && ids.contains(&r.id.as_str()))
        .collect();
    if ids.is_empty() || ours.len() != ids.len() {
        return None;
    }
    let items: String = ours
        .iter()
        .flat_map(|r| r.tags.iter().map(move |(k, v)| (r, k, v)))
        .map(|(r, k, v)| {
            format!(
                "<item><resourceId>{}</resourceId><resourceType>capacity-reservation</resourceType><key>{}</key><value>{}</value></item>",
                r.id,
                escape(k),
                escape(v)
            )
        })
        .collect();
    Some(ec2_query::answer(
        "DescribeTags",
        &format!("<tagSet>{items}</tagSet>"),
    ))
}

/// `CreateTags` and `DeleteTags` on reservations the proxy holds (`None`
/// for other resources: moto tags those).
fn retag(held: &mut [Reservation], form: &Form, region: &str) -> Option<Response<Body>> {
    let ids = form.listed("ResourceId.");
    let ours = |r: &Reservation| r.region == region && ids.contains(&r.id.as_str());
    if ids.is_empty() || !ids.iter().all(|id| held.iter().any(|r| r.id == *id)) {
        return None;
    }
    let tags = pairs(form, "Tag.");
    let action = form.action()?;
    for r in held.iter_mut().filter(|r| ours(r)) {
        if action == "CreateTags" {
            r.tags.extend(tags.clone());
        } else {
            r.tags.retain(|k, _| !tags.contains_key(k));
        }
    }
    Some(ec2_query::answer(action, "<return>true</return>"))
}

/// The first 11:30 UTC at or after `t`: when AWS starts and ends blocks.
fn half_past_eleven(t: OffsetDateTime) -> OffsetDateTime {
    let at = t.replace_time(Time::from_hms(11, 30, 0).unwrap_or(Time::MIDNIGHT));
    if at >= t {
        at
    } else {
        at + Duration::days(1)
    }
}

/// The offerings of `InstanceCount` instances of the type for
/// `CapacityDurationHours` (24-hour steps up to 14 days, then 7-day steps
/// up to 182 days): one per 11:30 UTC start, up to eight weeks ahead as
/// AWS sells them, that ends within the range asked, or only the first
/// start when no end is given.
fn offering(form: &Form, region: &str, now: OffsetDateTime) -> Result<Vec<Offer>, Response<Body>> {
    let ty = form
        .get("InstanceType")
        .ok_or_else(|| missing("InstanceType"))?;
    let count: u64 = form
        .get("InstanceCount")
        .ok_or_else(|| missing("InstanceCount"))?
        .parse()
        .ok()
        .filter(|n| (1..=64).contains(n))
        .ok_or_else(|| invalid("InstanceCount must be between 1 and 64"))?;
    let hours: i64 = form
        .get("CapacityDurationHours")
        .ok_or_else(|| missing("CapacityDurationHours"))?
        .parse()
        .ok()
        .filter(|h| (*h <= 336 && h % 24 == 0 || *h <= 4368 && h % 168 == 0) && *h > 0)
        .ok_or_else(|| invalid("CapacityDurationHours must be 24-hour steps up to 14 days, or 7-day steps up to 182 days"))?;
    if !BLOCK_TYPES.contains(&ty) {
        return Err(invalid(&format!(
            "Capacity Blocks are not offered for instance type {ty}"
        )));
    }
    let date = |name: &str| -> Result<Option<OffsetDateTime>, Response<Body>> {
        form.get(name)
            .map(|d| {
                OffsetDateTime::parse(d, &Rfc3339)
                    .map_err(|_| invalid(&format!("{name} is not a date")))
            })
            .transpose()
    };
    let from = date("StartDateRange")?.unwrap_or(now).max(now);
    let first = half_past_eleven(from);
    let latest = date("EndDateRange")?;
    let starts = (0..)
        .map(|day| first + Duration::days(day))
        .take_while(|start| match latest {
            Some(latest) => *start + Duration::hours(hours) <= latest,
            None => *start == first,
        })
        // Blocks are sold to start at most eight weeks ahead.
        .take_while(|start| *start <= now + Duration::weeks(8));
    let offer = |start: OffsetDateTime| Offer {
        id: format!(
            "cb-{}-{}-{}-{}",
            ty.replace('.', "_"),
            count,
            hours,
            start.unix_timestamp()
        ),
        instance_type: ty.to_string(),
        zone: format!("{region}a"),
        count,
        start,
        end: start + Duration::hours(hours),
        fee: BLOCK_FEE_PER_INSTANCE_HOUR * (count as f64) * (hours as f64),
    };
    Ok(starts.map(offer).collect())
}

struct Offer {
    id: String,
    instance_type: String,
    zone: String,
    count: u64,
    start: OffsetDateTime,
    end: OffsetDateTime,
    fee: f64,
}

fn offerings(form: &Form, region: &str, now: OffsetDateTime) -> Response<Body> {
    let offers = match offering(form, region, now) {
        Ok(o) => o,
        Err(answer) => return answer,
    };
    let date = |t: OffsetDateTime| t.format(&Rfc3339).unwrap_or_default();
    let item = |o: Offer| {
        format!(
        "<item><capacityBlockOfferingId>{}</capacityBlockOfferingId><instanceType>{}</instanceType><availabilityZone>{}</availabilityZone><instanceCount>{}</instanceCount><startDate>{}</startDate><endDate>{}</endDate><capacityBlockDurationHours>{}</capacityBlockDurationHours><upfrontFee>{:.2}</upfrontFee><currencyCode>USD</currencyCode><tenancy>default</tenancy></item>",
        o.id,
        escape(&o.instance_type),
        o.zone,
        o.count,
        date(o.start),
        date(o.end),
        (o.end - o.start).whole_hours(),
        o.fee,
    )
    };
    let items: String = offers.into_iter().map(item).collect();
    ec2_query::answer(
        "DescribeCapacityBlockOfferings",
        &format!("<capacityBlockOfferingSet>{items}</capacityBlockOfferingSet>"),
    )
}

/// Buys the offering the id names (the sandbox's ids say what they offer).
fn purchase(
    held: &mut Vec<Reservation>,
    form: &Form,
    region: &str,
    now: OffsetDateTime,
) -> Response<Body> {
    let (Some(id), Some(_platform)) = (
        form.get("CapacityBlockOfferingId"),
        form.get("InstancePlatform"),
    ) else {
        return missing("CapacityBlockOfferingId and InstancePlatform");
    };
    let parts: Vec<&str> = id
        .strip_prefix("cb-")
        .unwrap_or("")
        .rsplitn(4, '-')
        .collect();
    let [start, hours, count, ty] = parts.as_slice() else {
        return invalid(&format!("The capacity block offering {id} does not exist"));
    };
    let (Ok(start), Ok(hours), Ok(count)) = (
        start
            .parse::<i64>()
            .map(OffsetDateTime::from_unix_timestamp),
        hours.parse::<i64>(),
        count.parse::<u64>(),
    ) else {
        return invalid(&format!("The capacity block offering {id} does not exist"));
    };
    let Ok(start) = start else {
        return invalid(&format!("The capacity block offering {id} does not exist"));
    };
    let r = Reservation {
        id: new_id("cr"),
        region: region.to_string(),
        instance_type: ty.replace('_', "."),
        zone: format!("{region}a"),
        count,
        block: true,
        start,
        end: Some(start + Duration::hours(hours)),
        created: now,
        cancelled: false,
        match_criteria: "targeted".into(),
        tags: specified_tags(form),
    };
    let xml = format!(
        "<capacityReservation>{}</capacityReservation>",
        r.xml(now, 0)
    );
    held.push(r);
    ec2_query::answer("PurchaseCapacityBlock", &xml)
}

#[cfg(test)]
mod tests;
