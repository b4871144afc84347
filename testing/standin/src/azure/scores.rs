//! Azure's Spot Placement Score (`POST …/locations/{location}/
//! placementScores/spot/generate`, API 2025-06-05): the request echoed
//! with a score per location asked, `Low` where the stand-in's shortages
//! leave no spot capacity for the size, else `High`.

use super::*;

impl World {
    pub(super) fn spot_scores(&self, req: &Req, version: &str) -> Response<Body> {
        if let Some(refused) = unless_version(version, "2025-06-05") {
            return refused;
        }
        let body: Json = serde_json::from_slice(&req.body).unwrap_or_default();
        let count = body["desiredCount"].as_u64().unwrap_or(0);
        let sizes: Vec<&str> = body["desiredSizes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["sku"].as_str())
            .collect();
        let locations: Vec<&str> = body["desiredLocations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .collect();
        if count == 0 || sizes.is_empty() || locations.is_empty() {
            return error(
                400,
                "InvalidParameter",
                "desiredCount, desiredSizes and desiredLocations are required.",
            );
        }
        let mut scores = Vec::new();
        for location in &locations {
            for size in &sizes {
                let short = self
                    .shortages
                    .hit(&crate::capacity::Ask {
                        region: location,
                        zones: &[],
                        instance_type: size,
                        capacity: "spot",
                        nodes: count,
                    })
                    .is_some();
                scores.push(json!({
                    "sku": size,
                    "region": location,
                    "score": if short { "Low" } else { "High" },
                    "isQuotaAvailable": true,
                }));
            }
        }
        let mut answer = body.clone();
        answer["placementScores"] = json!(scores);
        json(200, answer)
    }
}
