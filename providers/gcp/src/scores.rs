//! Compute Engine's capacity advice (`regions.advice.capacity`): how
//! obtainable a count of a machine type is in a region now, spot or
//! standard, as `scores.obtainability` (0 to 1) per recommendation. The
//! best recommendation read onto AWS's 1–10 scale.

use crate::Ctx;
use serde_json::json;
use strata_provider::score::{ScoreAsk, SCORES};
use strata_provider::DriverError;
use strata_rest::Method;

/// A score per ask, in their order.
pub async fn placement_scores(c: &Ctx, asks: &[ScoreAsk]) -> Result<Vec<Option<u8>>, DriverError> {
    let project = c.project(&json!({}), "placement scores")?;
    let mut out = Vec::new();
    for a in asks {
        let url = format!(
            "{}projects/{project}/regions/{}/advice/capacity",
            c.endpoints.compute, a.region
        );
        let body = json!({
            "size": a.nodes.max(1),
            "instanceProperties": {"scheduling": {
                "provisioningModel": if a.spot { "SPOT" } else { "STANDARD" }
            }},
            "instanceFlexibilityPolicy": {"instanceSelections": {
                "pool": {"machineTypes": [a.instance_type]}
            }},
            "distributionPolicy": {"targetShape": "ANY"},
        });
        let reply = c
            .rest
            .call("capacity advice", Method::POST, &url, Some(&body))
            .await?;
        let best = reply.body["recommendations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["scores"]["obtainability"].as_f64())
            .fold(None, |m: Option<f64>, o| Some(m.map_or(o, |m| m.max(o))));
        out.push(best.map(scale));
    }
    Ok(out)
}

/// Obtainability (0 to 1) on the 1–10 scale.
fn scale(obtainability: f64) -> u8 {
    let s = (1.0 + 9.0 * obtainability.clamp(0.0, 1.0)).round() as u8;
    s.clamp(*SCORES.start(), *SCORES.end())
}

#[cfg(test)]
mod tests {
    #[test]
    fn obtainability_reads_onto_the_one_scale() {
        assert_eq!(super::scale(0.0), 1);
        assert_eq!(super::scale(0.1), 2);
        assert_eq!(super::scale(0.5), 6);
        assert_eq!(super::scale(1.0), 10);
        assert_eq!(super::scale(7.0), 10);
    }
}
