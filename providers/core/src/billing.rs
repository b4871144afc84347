//! What an object bills by the hour, as its driver reads it from the
//! object's own attributes: the nodes of a pool (instance type, region,
//! capacity, how many) or a flat fee (a managed control plane). The
//! engine prices the nodes from the driver's GPU catalog and the user's
//! price list ([`crate::catalog`]); a driver says only what its API's
//! attributes mean.

use crate::money::Usd;
use strata_value::value::Value;

/// One thing an object is billed for. A cluster may be two: its control
/// plane's fee and the nodes of the pool it was created with.
#[derive(Debug, Clone, PartialEq)]
pub enum Billed {
    Nodes(NodePool),
    Fee(Fee),
}

/// The cloud a driver bills on, as the cluster spec names it
/// (`aws`, `gcp`, `azure`).
pub type CloudName = &'static str;

/// Nodes of one instance type in one region.
#[derive(Debug, Clone, PartialEq)]
pub struct NodePool {
    pub cloud: CloudName,
    /// Which part of the object, when it is not the whole object
    /// (`default_node_pool` of a cluster).
    pub part: Option<&'static str>,
    pub region: Known<String>,
    pub instance_type: Known<String>,
    pub capacity: Capacity,
    /// For spot capacity, the most the object says it pays per node-hour
    /// (Azure's `spot_max_price`): what a node costs at most.
    pub max_price: Option<Usd>,
    pub nodes: Nodes,
    /// How many zones the counts are multiplied by (GKE's per-zone
    /// counts); the counts in `nodes` are the pool's totals already.
    pub zones: Option<u32>,
}

/// On demand, spot, flex-start (GKE's Dynamic Workload Scheduler: VMs
/// that wait for capacity and run at most seven days) or queued (GKE's
/// queued provisioning: flex-start VMs that come only when a job asks for
/// them, through a ProvisioningRequest): which column of a catalog prices
/// the nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Capacity {
    OnDemand,
    Spot,
    FlexStart,
    Queued,
}

impl Capacity {
    /// As the cluster spec and the cost report spell it.
    pub fn name(self) -> &'static str {
        match self {
            Capacity::OnDemand => "on_demand",
            Capacity::Spot => "spot",
            Capacity::FlexStart => "flex_start",
            Capacity::Queued => "queued",
        }
    }

    /// As price lists and messages say it.
    pub fn words(self) -> &'static str {
        match self {
            Capacity::OnDemand => "on-demand",
            Capacity::Spot => "spot",
            Capacity::FlexStart => "flex-start",
            Capacity::Queued => "queued-provisioning",
        }
    }

    /// From the spec's spelling.
    pub fn named(name: &str) -> Option<Capacity> {
        [
            Capacity::OnDemand,
            Capacity::Spot,
            Capacity::FlexStart,
            Capacity::Queued,
        ]
        .into_iter()
        .find(|c| c.name() == name)
    }
}

/// A pool's total node counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Nodes {
    pub min: Count,
    pub desired: Count,
    pub max: Count,
}

impl Nodes {
    /// A pool of a fixed size.
    pub fn fixed(n: Count) -> Nodes {
        Nodes {
            min: n.clone(),
            desired: n.clone(),
            max: n,
        }
    }
}

/// A node count, or why the plan cannot know it.
#[derive(Debug, Clone, PartialEq)]
pub enum Count {
    Known(u64),
    Unknown(String),
}

impl Count {
    pub fn known(&self) -> Option<u64> {
        match self {
            Count::Known(n) => Some(*n),
            Count::Unknown(_) => None,
        }
    }

    /// This count `k` times (per-zone counts × zones).
    pub fn times(self, k: u32) -> Count {
        match self {
            Count::Known(n) => Count::Known(n.saturating_mul(u64::from(k))),
            unknown => unknown,
        }
    }
}

/// A fact about a billed object that is either in the object, unknown
/// until apply (with why), or an attribute of another object the plan
/// holds: an AKS pool's region is its cluster's `location`, an EKS node
/// group's instance type may be its launch template's.
#[derive(Debug, Clone, PartialEq)]
pub enum Known<T> {
    Is(T),
    Unknown(String),
    Elsewhere(Lookup),
}

/// Where to find a fact in another object: `attribute` of the object of
/// `type_name` whose `key` attribute (`id`, `name`) is `value` (or, while
/// that is unknown, the one such object the billed object depends on).
#[derive(Debug, Clone, PartialEq)]
pub struct Lookup {
    pub type_name: &'static str,
    pub key: &'static str,
    pub value: Option<String>,
    pub attribute: &'static str,
}

/// A flat hourly fee, from the driver's own price table.
#[derive(Debug, Clone, PartialEq)]
pub struct Fee {
    pub cloud: CloudName,
    /// What is billed: `EKS control plane, extended support`.
    pub what: String,
    pub region: Known<String>,
    pub hourly: Usd,
    /// Where the figure comes from and when it was read.
    pub source: &'static str,
}

/// The value at `path` in an object, stepping into the first element of a
/// block list (`scaling_config.max_size`): `None` when null or absent,
/// `Err` (why) when not known until apply.
pub fn at<'v>(object: &'v Value, path: &[&str]) -> Option<Result<&'v Value, String>> {
    let mut v = object.unmarked();
    for (i, name) in path.iter().enumerate() {
        if !v.is_known() {
            return Some(Err(unknown_why(&path[..i])));
        }
        if let Some(items) = v.elements() {
            v = items.first()?.unmarked();
            if !v.is_known() {
                return Some(Err(unknown_why(&path[..i])));
            }
        }
        v = v.entries()?.get(*name)?.unmarked();
        if v.is_null() {
            return None;
        }
    }
    match v.is_wholly_known() {
        true => Some(Ok(v)),
        false => Some(Err(unknown_why(path))),
    }
}

fn unknown_why(path: &[&str]) -> String {
    format!("{} is known only after apply", path.join("."))
}

/// A string attribute as a fact; `None` when null.
pub fn fact(object: &Value, path: &[&str]) -> Option<Known<String>> {
    Some(match at(object, path)? {
        Ok(v) => Known::Is(v.as_str()?.to_string()),
        Err(why) => Known::Unknown(why),
    })
}

/// A whole-number attribute as a node count; `None` when null.
pub fn count(object: &Value, path: &[&str]) -> Option<Count> {
    Some(match at(object, path)? {
        Ok(v) => Count::Known(
            v.as_number()?
                .to_i64()
                .and_then(|n| u64::try_from(n).ok())?,
        ),
        Err(why) => Count::Unknown(why),
    })
}

/// A boolean attribute; unknown and null read as `false`.
pub fn flag(object: &Value, path: &[&str]) -> bool {
    matches!(at(object, path), Some(Ok(v)) if v.as_bool() == Some(true))
}
