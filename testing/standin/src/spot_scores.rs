//! EC2's `GetSpotPlacementScores`, which moto 5.2.5 lacks, answered in
//! EC2's query protocol: a score from 1 to 10 per region asked for an
//! instance type and count. The stand-in's scores follow its shortages
//! ([`crate::capacity`]): a region short of that spot capacity scores 1,
//! any other 9.

use crate::capacity::{Ask, Shortages};
use crate::{Body, Req};
use hyper::Response;

/// Spot placement scores, when `req` asks for them.
pub fn answer(shortages: &Shortages, req: &Req) -> Option<Response<Body>> {
    let form = std::str::from_utf8(&req.body).ok()?;
    let fields: Vec<(String, String)> = form
        .split('&')
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (crate::decode(k), crate::decode(v))
        })
        .collect();
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    if get("Action") != Some("GetSpotPlacementScores") {
        return None;
    }
    let listed = |prefix: &str| -> Vec<&str> {
        fields
            .iter()
            .filter(|(k, _)| {
                k.strip_prefix(prefix)
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .map(|(_, v)| v.as_str())
            .collect()
    };
    let types = listed("InstanceType.");
    let regions = listed("RegionName.");
    let target: u64 = get("TargetCapacity")
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    if types.is_empty() || target == 0 {
        return Some(crate::aws_error(
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
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<GetSpotPlacementScoresResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"><requestId>spot-scores</requestId><spotPlacementScoreSet>{items}</spotPlacementScoreSet></GetSpotPlacementScoresResponse>"
    );
    Some(
        Response::builder()
            .status(200)
            .header("content-type", "text/xml")
            .body(http_body_util::Full::new(bytes::Bytes::from(xml)))
            .unwrap_or_default(),
    )
}
