//! A drift run's look at the placed pools, as the history keeps it: where
//! each pool's nodes are, the GPUs its cluster offers, what a GPU-hour
//! costs there, and its placement's time to first GPU.

use super::{timestamp, Decision};
use std::collections::BTreeMap;
use strata_state::history::{FirstGpu, Observation, PoolSeen};
use time::OffsetDateTime;

/// What a drift run saw of each pool's GPUs: the count, or why it could
/// not be counted.
pub type GpusSeen = BTreeMap<String, Result<u64, String>>;

/// The observation of `decisions` at `now`: every pool the state places,
/// priced as the plan's candidates are.
pub fn observation(decisions: &[Decision], gpus: &GpusSeen, now: OffsetDateTime) -> Observation {
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
            })
        })
        .collect();
    Observation {
        at: timestamp(now),
        pools,
    }
}
