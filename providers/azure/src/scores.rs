//! Azure's Spot Placement Score (`POST …/providers/Microsoft.Compute/
//! locations/{location}/placementScores/spot/generate`): how likely a spot
//! request for a VM size and count is to be allocated in each location,
//! as `High`, `Medium` or `Low`. Read onto AWS's 1–10 scale (High 9,
//! Medium 5, Low 2; no quota for it 1); `DataNotFoundOrStale` is no
//! score. Azure scores spot only.

use crate::Ctx;
use serde_json::json;
use strata_provider::score::{spot_calls, spot_scores, Answered, ScoreAsk};
use strata_provider::DriverError;
use strata_rest::Method;

const API: &str = "2025-06-05";

/// A score per ask, in their order.
pub async fn placement_scores(c: &Ctx, asks: &[ScoreAsk]) -> Result<Vec<Option<u8>>, DriverError> {
    let mut scores = Answered::new();
    for ((size, nodes), locations) in spot_calls(asks) {
        let sub = c.subscription("placement scores")?;
        let path = format!(
            "/subscriptions/{sub}/providers/Microsoft.Compute/locations/{}/placementScores/spot/generate",
            locations[0]
        );
        let body = json!({
            "availabilityZones": false,
            "desiredCount": nodes,
            "desiredLocations": locations,
            "desiredSizes": [{ "sku": size }],
        });
        let what = "generate spot placement scores";
        let reply = c
            .rest
            .call(what, Method::POST, &c.url(&path, API), Some(&body))
            .await?;
        for s in reply.body["placementScores"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let (Some(region), Some(score)) = (s["region"].as_str(), scale(s)) else {
                continue;
            };
            scores.insert(
                (size.to_string(), nodes, region.to_ascii_lowercase()),
                score,
            );
        }
    }
    Ok(spot_scores(asks, &scores))
}

/// One placement score on the 1–10 scale.
fn scale(s: &serde_json::Value) -> Option<u8> {
    if s["isQuotaAvailable"] == false {
        return Some(1);
    }
    match s["score"].as_str()? {
        "High" => Some(9),
        "Medium" => Some(5),
        "Low" => Some(2),
        // A size restricted there cannot be had.
        "RestrictedSKU" => Some(1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn azures_words_read_onto_the_one_scale() {
        let s =
            |score: &str, quota: bool| scale(&json!({"score": score, "isQuotaAvailable": quota}));
        assert_eq!(s("High", true), Some(9));
        assert_eq!(s("Medium", true), Some(5));
        assert_eq!(s("Low", true), Some(2));
        assert_eq!(s("High", false), Some(1));
        assert_eq!(s("DataNotFoundOrStale", true), None);
    }
}
