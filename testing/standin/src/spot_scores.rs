//! EC2's `GetSpotPlacementScores`, which moto 5.2.5 lacks, answered in
//! EC2's query protocol: a score from 1 to 10 per region asked for an
//! instance type and count. The stand-in's scores follow its shortages
//! ([`crate::capacity`]): a region short of that spot capacity scores 1,
//! any other 9.

use crate::capacity::{Ask, Shortages};
use crate::ec2_query::{self, Form};
use crate::{Body, Req};
use hyper::Response;

/// Spot placement scores, when `req` asks for them.
pub fn answer(shortages: &Shortages, req: &Req) -> Option<Response<Body>> {
    let form = Form::of(req)?;
    if form.action() != Some("GetSpotPlacementScores") {
        return None;
    }
    let listed = |prefix: &str| form.listed(prefix);
    let types = listed("InstanceType.");
    let regions = listed("RegionName.");
    let target: u64 = form
        .get("TargetCapacity")
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    if types.is_empty() || target == 0 {
        return Some(ec2_query::error(
            400,
            "InvalidParameterValue",
            "GetSpotPlacementScores needs InstanceType and a TargetCapacity of at least 1",
        ));
    }
    let mut items = String::new();
    for region in regions {
        let short = types.iter().all(|t| {
            shortages
                .hit(&Ask {
                    region,
                    zones: &[],
                    instance_type: t,
                    capacity: "spot",
                    nodes: target,
                })
                .is_some()
        });
        let score = if short { 1 } else { 9 };
        items.push_str(&format!(
            "<item><region>{region}</region><score>{score}</score></item>"
        ));
    }
    Some(ec2_query::answer(
        "GetSpotPlacementScores",
        &format!("<spotPlacementScoreSet>{items}</spotPlacementScoreSet>"),
    ))
}
