//! A drift run's look at the placed pools, as the history keeps it: where
//! each pool's nodes are, the GPUs its cluster offers, what a GPU-hour
//! costs there, and its placement's time to first GPU.

use super::{timestamp, Decision};
use std::collections::BTreeMap;
use strata_provider::records::Records;
use strata_state::history::{FirstGpu, Observation, PoolSeen, Recorded};
use time::OffsetDateTime;

/// What a drift run saw of each pool's GPUs: the count, or why it could
/// not be counted.
pub type GpusSeen = BTreeMap<String, Result<u64, String>>;

/// What a cloud recorded of a pool's nodes, or why it could not be read.
pub type RecordsSeen = Result<Records, String>;

/// A pool's records and where their span starts (RFC 3339): the
/// previous drift run, or the pool's placement for the first.
pub struct PoolRecords {
    pub since: String,
    pub seen: RecordsSeen,
}

/// What a drift run saw, by pool.
pub struct Seen<'a> {
    pub gpus: &'a GpusSeen,
    pub records: &'a BTreeMap<String, PoolRecords>,
}

/// The observation of `decisions` at `now`: every pool the state places,
/// priced as the plan's candidates are.
pub fn observation(decisions: &[Decision], seen: Seen<'_>, now: OffsetDateTime) -> Observation {
    let gpus = seen.gpus;
    let pools = decisions
        .iter()
        .filter_map(|d| {
            let placed = d.recorded.as_ref()?.chosen.as_ref()?;
            let price = d
                .candidates
                .iter()
                .find(|c| c.at == placed.at)
                .and_then(|c| c.gpu_hour);
            let (count, why) = match gpus.get(&d.pool) {
                Some(Ok(n)) => (Some(*n), None),
                Some(Err(why)) => (None, Some(why.clone())),
                None => (None, Some("its cluster was not asked".to_string())),
            };
            Some(PoolSeen {
                pool: d.pool.clone(),
                at: placed.at.clone(),
                instance_type: placed.instance_type.clone(),
                gpus: count,
                gpus_why: why,
                gpu_hour: price.map(|p| p.decimal()),
                since: placed.since.clone(),
                first_gpu: placed.first_gpu_after.map(|after| FirstGpu {
                    after,
                    pool_created: placed.pool_created_after,
                    node_joined: placed.node_joined_after,
                }),
                records: match seen.records.get(&d.pool) {
                    Some(PoolRecords { since, seen: Ok(r) }) => Some(Recorded {
                        since: since.clone(),
                        preempted: r.preempted,
                        stopped: r.stopped,
                        short: r.short.clone(),
                        egress_bytes: r.egress.as_ref().ok().copied(),
                        egress_why: r.egress.as_ref().err().cloned(),
                    }),
                    _ => None,
                },
                records_why: match seen.records.get(&d.pool).map(|r| &r.seen) {
                    Some(Ok(_)) => None,
                    Some(Err(why)) => Some(why.clone()),
                    None => Some("its cloud was not asked".into()),
                },
            })
        })
        .collect();
    Observation {
        at: timestamp(now),
        pools,
    }
}
