//! Capacity a team holds ahead of its use: an On-Demand Capacity
//! Reservation or a Capacity Block on AWS (and their kin on the other
//! clouds), as a cloud describes it when a pool's placement names it. The
//! placement puts such capacity before the spot and on-demand ladder: it is
//! paid for whether nodes use it or not, so using it costs nothing more.

use crate::money::Usd;

/// What kind of held capacity an id names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldKind {
    /// Reserved on-demand capacity, billed at the on-demand rate while it
    /// exists (an AWS On-Demand Capacity Reservation).
    Reservation,
    /// Capacity bought for a fixed window and paid up front (an AWS
    /// Capacity Block for ML): it ends at its end date, whatever runs on it.
    CapacityBlock,
}

impl HeldKind {
    /// As placements and the cost report spell it: the capacity type of
    /// a candidate on it.
    pub fn name(self) -> &'static str {
        match self {
            HeldKind::Reservation => "reserved",
            HeldKind::CapacityBlock => "capacity_block",
        }
    }
}

/// Whether held capacity can take instances now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeldState {
    Active,
    /// Not begun yet (a block bought for later): from when, if said.
    Scheduled,
    /// Ended, cancelled or failed: the cloud's word for it.
    Over(String),
}

/// One reservation as its cloud describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub id: String,
    pub kind: HeldKind,
    pub instance_type: String,
    /// The zone it is in (AWS reservations are zonal).
    pub zone: Option<String>,
    /// Instances it holds, and how many of them nothing runs on now.
    pub instances: u64,
    pub available: u64,
    pub state: HeldState,
    /// RFC 3339.
    pub starts: Option<String>,
    /// RFC 3339; `None`: until cancelled.
    pub ends: Option<String>,
    /// What was paid up front for it (a Capacity Block's fee).
    pub upfront: Option<Usd>,
}

/// A reservation asked for by id, in a region of the cloud, for a pool of
/// an instance type (a group of reservations, as Azure's, holds several).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldAsk {
    pub region: String,
    pub id: String,
    pub instance_type: String,
}

/// What a driver without held capacity answers an ask.
pub fn none_here(driver: &str, ask: &HeldAsk) -> crate::DriverError {
    crate::DriverError::InvalidConfig {
        type_name: "reserved".into(),
        detail: format!(
            "the {driver} driver has no reserved capacity to place nodes on ({:?})",
            ask.id
        ),
    }
}

/// Capacity Blocks to find: `instances` of a type for `hours`, starting
/// no earlier than `starts` and ending no later than `ends` (RFC 3339).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferAsk {
    pub region: String,
    pub instance_type: String,
    pub instances: u64,
    pub hours: u64,
    pub starts: Option<String>,
    pub ends: Option<String>,
}

/// A Capacity Block the cloud offers to sell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub id: String,
    pub zone: String,
    /// RFC 3339.
    pub starts: String,
    pub ends: String,
    /// The whole price, paid at purchase.
    pub upfront: Usd,
}

/// What a driver that sells no capacity blocks answers an ask.
pub fn no_offers(driver: &str) -> crate::DriverError {
    crate::DriverError::InvalidConfig {
        type_name: "capacity_block".into(),
        detail: format!("the {driver} driver sells no capacity blocks"),
    }
}
