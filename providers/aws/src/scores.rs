//! Spot placement scores (`GetSpotPlacementScores`): how likely AWS says a
//! spot request for an instance type and count is to succeed in each
//! region, 1 to 10. AWS scores spot only; on-demand asks get none.

use crate::error::api;
use aws_sdk_ec2::Client;
use strata_provider::score::{spot_calls, spot_scores, Answered, ScoreAsk, SCORES};
use strata_provider::DriverError;

/// A score per ask, in their order.
pub async fn placement_scores(
    ec2: &Client,
    asks: &[ScoreAsk],
) -> Result<Vec<Option<u8>>, DriverError> {
    let mut scores = Answered::new();
    for ((instance_type, nodes), regions) in spot_calls(asks) {
        let pages = ec2
            .get_spot_placement_scores()
            .instance_types(instance_type)
            .target_capacity(i32::try_from(nodes).unwrap_or(i32::MAX))
            .single_availability_zone(false)
            .set_region_names(Some(regions.iter().map(|r| r.to_string()).collect()))
            .into_paginator()
            .items()
            .send()
            .collect::<Vec<_>>()
            .await;
        for item in pages {
            let s = item.map_err(|e| api("GetSpotPlacementScores", e))?;
            let (Some(region), Some(score)) = (s.region(), s.score()) else {
                continue;
            };
            let score = u8::try_from(score)
                .unwrap_or(0)
                .clamp(*SCORES.start(), *SCORES.end());
            scores.insert(
                (
                    instance_type.to_string(),
                    nodes,
                    region.to_ascii_lowercase(),
                ),
                score,
            );
        }
    }
    Ok(spot_scores(asks, &scores))
}
