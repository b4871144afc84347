//! What a plan costs by the hour: each node pool priced from its planned
//! object and from its prior one, and each managed control plane's fee.
//! Drivers say what their objects bill (`Billing::billing`: instance type,
//! region, capacity, node counts, fees); this stage resolves facts one
//! object holds for another (an AKS pool's region is its cluster's) and
//! prices nodes once for every cloud, from the driver's GPU catalog and the
//! user's price list. The plan carries the result, so renderings need no
//! drivers and a saved plan shows the cost it was made with.

mod estimate;
mod json;
#[cfg(test)]
mod tests;

pub use estimate::{estimate, Item};

use strata_provider::billing::{Capacity, Count, Nodes};
use strata_provider::money::Usd;
use strata_state::model::Address;

/// A plan's cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cost {
    pub pools: Vec<PoolCost>,
    pub fees: Vec<FeeCost>,
    /// What is billed but cannot be priced, and why: never counted as free.
    pub unpriced: Vec<Unpriced>,
    /// What the apply buys outright (a Capacity Block, paid up front):
    /// charged once, not by the hour.
    pub purchases: Vec<PurchaseCost>,
}

/// A purchase the apply makes, charged once when it is made.
#[derive(Debug, Clone, PartialEq)]
pub struct PurchaseCost {
    /// The module call that buys it (`train_aws`).
    pub call: String,
    /// What is bought: `Capacity Block cb-0abc: 2 × p5.48xlarge from … to … in us-east-1a`.
    pub what: String,
    pub amount: Usd,
}

/// One node pool: what it costs as planned, and as it was.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolCost {
    pub addr: Address,
    /// The part of the object that is the pool (`default_node_pool`).
    pub part: Option<String>,
    pub cloud: String,
    pub region: String,
    pub instance_type: String,
    /// GPU model and count per node; `None` for a machine without GPUs.
    pub gpu: Option<(String, u32)>,
    pub capacity: Capacity,
    pub node_hour: Usd,
    /// Total node counts as planned; all zero for a pool being deleted.
    pub nodes: Nodes,
    /// How many zones per-zone counts were multiplied by.
    pub zones: Option<u32>,
    pub prior: Option<PriorPool>,
    /// `AWS catalog 2026-11-30`, `prices.csv:12`.
    pub price_source: String,
    /// Capacity held ahead the placement puts the nodes on: they cost
    /// nothing more there (`node_hour` is then zero).
    pub committed: Option<Committed>,
}

/// Capacity held ahead (a reservation or Capacity Block) a pool's nodes
/// run on, paid for whether used or not.
#[derive(Debug, Clone, PartialEq)]
pub struct Committed {
    /// `reserved` or `capacity_block`.
    pub kind: String,
    /// `cr-…`.
    pub id: String,
    /// Instances it holds; `None` when not read (`validate`).
    pub instances: Option<u64>,
    /// Of them, the nodes the placement puts there.
    pub used: u64,
    /// RFC 3339; `None`: until cancelled.
    pub ends: Option<String>,
    /// What one node costs at list price: what a reserved instance left
    /// unused is still billed (a Capacity Block was paid up front).
    pub list_node_hour: Usd,
}

impl Committed {
    pub fn unused(&self) -> Option<u64> {
        Some(self.instances?.saturating_sub(self.used))
    }

    /// What the unused part of a reservation bills by the hour; a Capacity
    /// Block's was paid up front, so nothing more.
    pub fn unused_hour(&self) -> Option<Usd> {
        match self.kind.as_str() {
            "reserved" => Some(self.list_node_hour.times(self.unused()?)),
            _ => Some(Usd::ZERO),
        }
    }
}

/// Where a placement put a pool's nodes on held capacity: the pool's
/// object in `call`'s module, keyed by `pool`.
pub struct HeldPool {
    pub call: String,
    pub pool: String,
    pub committed: Committed,
    /// Whether the prior state had the nodes there already (then they
    /// cost nothing more before either).
    pub already: bool,
}

/// A pool as the prior state holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorPool {
    pub instance_type: String,
    pub node_hour: Usd,
    pub nodes: Nodes,
}

/// A flat fee (a managed control plane).
#[derive(Debug, Clone, PartialEq)]
pub struct FeeCost {
    pub addr: Address,
    pub cloud: String,
    pub region: String,
    pub what: String,
    /// Per hour as planned; `None` when the object is being deleted.
    pub hourly: Option<Usd>,
    /// Per hour as it was; `None` when it is being created.
    pub prior: Option<Usd>,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Unpriced {
    pub addr: Address,
    pub part: Option<String>,
    pub why: String,
}

/// An hourly range: at the fewest nodes and at the most. `None` where a
/// count is not known until apply.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Hourly {
    pub min: Option<Usd>,
    pub max: Option<Usd>,
}

impl Hourly {
    fn of(node_hour: Usd, nodes: &Nodes) -> Hourly {
        Hourly {
            min: nodes.min.known().map(|n| node_hour.times(n)),
            max: nodes.max.known().map(|n| node_hour.times(n)),
        }
    }

    fn fixed(amount: Usd) -> Hourly {
        Hourly {
            min: Some(amount),
            max: Some(amount),
        }
    }

    fn plus(self, o: Hourly) -> Hourly {
        let add = |a: Option<Usd>, b: Option<Usd>| Some(a? + b?);
        Hourly {
            min: add(self.min, o.min),
            max: add(self.max, o.max),
        }
    }
}

impl Cost {
    /// Marks the pools on held capacity as committed: their nodes cost
    /// nothing more there.
    pub fn commit(&mut self, held: Vec<HeldPool>) {
        for h in held {
            let on = self.pools.iter_mut().find(|p| {
                p.addr
                    .id
                    .module
                    .steps()
                    .first()
                    .is_some_and(|s| s.call == h.call)
                    && p.addr.key == Some(strata_state::model::InstanceKey::Str(h.pool.clone()))
            });
            if let Some(p) = on {
                let mut committed = h.committed;
                committed.list_node_hour = p.node_hour;
                p.node_hour = Usd::ZERO;
                p.committed = Some(committed);
                if let (Some(prior), true) = (p.prior.as_mut(), h.already) {
                    prior.node_hour = Usd::ZERO;
                }
            }
        }
    }
}

impl PoolCost {
    pub fn gpu_hour(&self) -> Option<Usd> {
        self.node_hour.per(self.gpu.as_ref()?.1)
    }

    pub fn hourly(&self) -> Hourly {
        Hourly::of(self.node_hour, &self.nodes)
    }

    /// The prior pool's range; zero for a pool being created.
    pub fn prior_hourly(&self) -> Hourly {
        match &self.prior {
            Some(p) => Hourly::of(p.node_hour, &p.nodes),
            None => Hourly::fixed(Usd::ZERO),
        }
    }

    /// The address as a reader needs it: with the part, when there is one.
    pub fn label(&self) -> String {
        label(&self.addr, self.part.as_deref())
    }
}

impl FeeCost {
    pub fn hourly(&self) -> Hourly {
        Hourly::fixed(self.hourly.unwrap_or_default())
    }

    pub fn prior_hourly(&self) -> Hourly {
        Hourly::fixed(self.prior.unwrap_or_default())
    }
}

impl Unpriced {
    pub fn label(&self) -> String {
        label(&self.addr, self.part.as_deref())
    }
}

fn label(addr: &Address, part: Option<&str>) -> String {
    match part {
        Some(p) => format!("{addr} ({p})"),
        None => addr.to_string(),
    }
}

/// A cloud's (or every cloud's) sum, as planned and as it was.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Total {
    pub hourly: Hourly,
    pub prior_hourly: Hourly,
}

impl Total {
    /// The change at the most nodes, when both sides are known.
    pub fn change_at_max(&self) -> Option<Usd> {
        Some(self.hourly.max? - self.prior_hourly.max?)
    }

    pub fn change_at_min(&self) -> Option<Usd> {
        Some(self.hourly.min? - self.prior_hourly.min?)
    }
}

impl Cost {
    /// Whether there is anything to report.
    pub fn is_empty(&self) -> bool {
        self.pools.is_empty()
            && self.fees.is_empty()
            && self.unpriced.is_empty()
            && self.purchases.is_empty()
    }

    /// The clouds priced, in name order.
    pub fn clouds(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .pools
            .iter()
            .map(|p| p.cloud.clone())
            .chain(self.fees.iter().map(|f| f.cloud.clone()))
            .collect();
        all.sort();
        all.dedup();
        all
    }

    /// The sum over `cloud`'s pools and fees (every cloud's for `None`).
    pub fn total(&self, cloud: Option<&str>) -> Total {
        let mine = |c: &str| cloud.is_none_or(|want| want == c);
        let zero = Total {
            hourly: Hourly::fixed(Usd::ZERO),
            prior_hourly: Hourly::fixed(Usd::ZERO),
        };
        let pools = self.pools.iter().filter(|p| mine(&p.cloud));
        let fees = self.fees.iter().filter(|f| mine(&f.cloud));
        let t = pools.fold(zero, |t, p| Total {
            hourly: t.hourly.plus(p.hourly()),
            prior_hourly: t.prior_hourly.plus(p.prior_hourly()),
        });
        fees.fold(t, |t, f| Total {
            hourly: t.hourly.plus(f.hourly()),
            prior_hourly: t.prior_hourly.plus(f.prior_hourly()),
        })
    }

    /// Why counts are unknown, per pool: what a reader of a null needs.
    pub fn unknown_counts(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for p in &self.pools {
            for c in [&p.nodes.min, &p.nodes.max] {
                if let Count::Unknown(why) = c {
                    out.push((p.label(), why.clone()));
                }
            }
        }
        out.dedup();
        out
    }
}
