//! How Google's APIs speak (errors, pages, capacity codes) and how their
//! long-running operations are waited for; plus the conversions every
//! type here makes between strata values and API JSON.

use crate::Ctx;
use serde_json::Value as Json;
use std::time::Duration;
use strata_provider::wait::{self, Poll};
use strata_provider::{CapacityCodes, DriverError, Place, Reach, Shortage};
use strata_rest::{Method, Paging};
use strata_value::value::Value;

pub struct Google;

/// Codes (operation error codes, error reasons, quota metrics) that say
/// "no capacity or quota for this there now", and how far each reaches: a
/// zone's pool exhausted, a region's pool or quota, the quota on GPUs over
/// all regions (looked for before the quota codes that carry it).
const CAPACITY: &CapacityCodes = &CapacityCodes {
    codes: &[
        ("GPUS_ALL_REGIONS", Reach::Cloud),
        ("ZONE_RESOURCE_POOL_EXHAUSTED", Reach::Zone),
        ("ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS", Reach::Zone),
        ("GCE_STOCKOUT", Reach::Zone),
        ("REGION_RESOURCE_POOL_EXHAUSTED", Reach::Region),
        ("QUOTA_EXCEEDED", Reach::Region),
        ("quotaExceeded", Reach::Region),
    ],
    locate,
};

/// The zone (`us-central1-a`, also inside `zones/us-central1-a`) and
/// region (`us-central1`) a message names; a zone names its region too.
fn locate(message: &str) -> Place {
    let mut place = Place::default();
    for w in message.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
        match w.rsplit_once('-') {
            Some((region, z)) if place.zone.is_none() && z.len() == 1 && is_region(region) => {
                place.zone = Some(w.to_string());
                place.region = place.region.or_else(|| Some(region.to_string()));
            }
            _ if place.region.is_none() && is_region(w) => place.region = Some(w.to_string()),
            _ => {}
        }
    }
    place
}

/// `us-central1`, `europe-west4`, `northamerica-northeast1`.
fn is_region(w: &str) -> bool {
    match w.split_once('-') {
        Some((area, rest)) => {
            let digits = rest.trim_start_matches(|c: char| c.is_ascii_lowercase());
            !area.is_empty()
                && area.bytes().all(|b| b.is_ascii_lowercase())
                && digits.len() < rest.len()
                && !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

impl strata_rest::Dialect for Google {
    fn cloud(&self) -> &'static str {
        "GCP"
    }

    fn capacity(&self) -> &'static CapacityCodes {
        CAPACITY
    }

    /// The codes, and GKE's words for a quota it refuses a cluster or a
    /// pool for: a 403 `forbidden` (`PERMISSION_DENIED`) whose message
    /// alone says it ("Insufficient regional quota to satisfy request:
    /// resource \"NVIDIA_L4_GPUS\": …"), naming neither code nor region
    /// (the region is the one asked for).
    fn shortage(&self, code: &str, message: &str) -> Option<Shortage> {
        CAPACITY.shortage(code, message).or_else(|| {
            let lower = message.to_ascii_lowercase();
            let regional = lower.contains("insufficient regional quota")
                || lower.contains("insufficient quota to satisfy request");
            regional.then(|| Shortage::Region(locate(message).region))
        })
    }

    fn retryable(&self, code: &str, message: &str) -> bool {
        matches!(
            code,
            "rateLimitExceeded"
                | "userRateLimitExceeded"
                | "backendError"
                | "internalError"
                // Another operation on the object (or one it names) still
                // runs; Google's provider retries it too.
                | "resourceNotReady"
        ) || (code == "FAILED_PRECONDITION" && message.contains("incompatible operation"))
    }

    fn paging(&self) -> Paging {
        Paging::Token
    }

    /// One bucket for the project: Compute Engine's default quota of
    /// requests is counted per project by the minute (1 500 a minute is
    /// common), so strata sends at most 25 a second after a burst of 100
    /// (`STRATA_BUDGET_GCP`).
    fn rate(&self, bucket: &str) -> Option<strata_provider::budget::Rate> {
        let _ = bucket;
        strata_provider::budget::Rate::adjusted(
            "GCP",
            strata_provider::budget::Rate::new(100.0, 25.0),
        )
    }
}

/// Waits for a Compute Engine operation (`op` as an insert, patch or
/// delete returned it) through the `wait` method, which itself holds the
/// call until the operation is done or two minutes pass.
pub async fn compute_op(
    c: &Ctx,
    what: &str,
    op: &Json,
    timeout: Duration,
) -> Result<(), DriverError> {
    let Some(link) = op["selfLink"].as_str() else {
        return Err(DriverError::Api {
            operation: what.into(),
            detail: format!("the operation came back without a selfLink: {op}"),
            retryable: false,
        });
    };
    // The link names the public host; the configured endpoint is used.
    let path = link.split("/compute/v1/").nth(1).unwrap_or(link);
    let url = format!("{}{path}/wait", c.endpoints.compute);
    wait::until(
        what,
        timeout,
        wait::POLL,
        || async {
            let o = c.rest.call(what, Method::POST, &url, None).await?.body;
            Ok(compute_status(c, what, &o))
        },
        |p| matches!(p, Poll::Ready(_)),
    )
    .await
    .map(|_| ())
}

fn compute_status(c: &Ctx, what: &str, o: &Json) -> Poll {
    if o["status"] != "DONE" {
        return Poll::Pending(o["status"].as_str().unwrap_or("PENDING").to_string());
    }
    match o["error"]["errors"].as_array().filter(|e| !e.is_empty()) {
        Some(errors) => {
            let code = errors[0]["code"].as_str().unwrap_or("ERROR");
            let message = errors
                .iter()
                .filter_map(|e| e["message"].as_str())
                .collect::<Vec<_>>()
                .join("; ");
            Poll::Failed(c.rest.operation_error(what, code, &message))
        }
        None => Poll::Ready(Value::null()),
    }
}

/// Waits for a Kubernetes Engine operation: polled with backoff (GKE has no
/// wait method); its `error` (a `google.rpc.Status`) fails the wait.
pub async fn container_op(
    c: &Ctx,
    what: &str,
    scope: &str,
    op: &Json,
    timeout: Duration,
) -> Result<(), DriverError> {
    let name = op["name"].as_str().unwrap_or_default();
    let url = format!("{}{scope}/operations/{name}", c.endpoints.container);
    wait::until(
        what,
        timeout,
        wait::POLL,
        || async {
            let o = c.rest.call(what, Method::GET, &url, None).await?.body;
            if o["status"] != "DONE" {
                return Ok(Poll::Pending(
                    o["status"].as_str().unwrap_or("PENDING").to_string(),
                ));
            }
            let message = o["error"]["message"]
                .as_str()
                .or_else(|| o["statusMessage"].as_str().filter(|m| !m.is_empty()));
            Ok(match message {
                Some(m) => Poll::Failed(c.rest.operation_error(
                    what,
                    &grpc_code(&o["error"]["code"]),
                    m,
                )),
                None => Poll::Ready(Value::null()),
            })
        },
        |p| matches!(p, Poll::Ready(_)),
    )
    .await
    .map(|_| ())
}

/// A `google.rpc.Code` number by its name.
fn grpc_code(n: &Json) -> String {
    const NAMES: [&str; 17] = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];
    n.as_u64()
        .and_then(|i| NAMES.get(i as usize))
        .map_or_else(|| "ERROR".to_string(), |s| s.to_string())
}

/// A strata value as the JSON Terraform's attributes would be.
pub fn tf(v: &Value) -> Json {
    strata_value::json::plain_json(v)
}

pub use strata_rest::fields::to_value as value;

/// Copies attributes only the configuration knows (`force_destroy`,
/// `deletion_protection`, `timeouts`) from `from` into a read object.
pub fn carry(j: &mut Json, from: &Json, keys: &[&str]) {
    for k in keys {
        if let Some(v) = from.get(*k) {
            j[*k] = v.clone();
        }
    }
}

/// The last segment of a resource URL or path (`.../networks/main` → `main`).
pub fn last(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

pub fn invalid(type_name: &str, detail: impl Into<String>) -> DriverError {
    DriverError::InvalidConfig {
        type_name: type_name.to_string(),
        detail: detail.into(),
    }
}

/// An attribute's string, or the error a required one's absence is.
pub fn required(j: &Json, type_name: &str, name: &str) -> Result<String, DriverError> {
    j[name]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| invalid(type_name, format!("{name} is required")))
}

/// The strata ownership labels removed from a label map read from GCP;
/// null when none are left (as a configuration without labels has).
pub fn user_labels(labels: &Json) -> Json {
    let user: serde_json::Map<String, Json> = labels
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !strata_rest::labels::is_ownership(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if user.is_empty() {
        Json::Null
    } else {
        Json::Object(user)
    }
}

/// `labels` with the ownership labels for `tags` added.
pub fn with_ownership(labels: &Json, tags: &strata_provider::Tags) -> Json {
    let mut m = labels.as_object().cloned().unwrap_or_default();
    for (k, v) in strata_rest::labels::labels(tags) {
        m.insert(k, Json::String(v));
    }
    Json::Object(m)
}

/// The ownership labels of `labels` alone (kept when a user's labels change).
pub fn ownership_of(labels: &Json) -> Json {
    match labels.as_object() {
        Some(m) => Json::Object(
            m.iter()
                .filter(|(k, _)| strata_rest::labels::is_ownership(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        None => Json::Object(Default::default()),
    }
}

/// Whether a label map marks its object as created for `tags`.
pub fn owned(labels: &Json, tags: &strata_provider::Tags) -> bool {
    strata_rest::labels::owned(|k| labels[k].as_str(), tags)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GKE refusing a pool for quota, in its words (as users have
    /// reported them): a 403 `forbidden` whose message is all there is.
    #[test]
    fn gkes_quota_refusal_is_a_shortage_in_the_region_asked() {
        use strata_rest::Dialect;
        let message = "Insufficient regional quota to satisfy request: resource \"NVIDIA_L4_GPUS\": request requires '8.0' and is short '8.0'. project has a quota of '0.0' with '0.0' available. View and manage quotas at https://console.cloud.google.com/iam-admin/quotas?usage=USED&project=acme-ml.";
        assert_eq!(
            Google.shortage("forbidden", message),
            Some(Shortage::Region(None))
        );
        let all = "Insufficient quota to satisfy request: resource \"GPUS_ALL_REGIONS\": request requires '8.0' and is short '8.0'.";
        assert_eq!(Google.shortage("forbidden", all), Some(Shortage::Cloud));
        assert_eq!(
            Google.shortage("forbidden", "Permission 'container.clusters.create' denied"),
            None
        );
    }

    #[test]
    fn shortages_reach_a_zone_a_region_or_every_region() {
        let s = |code: &str, msg: &str| CAPACITY.shortage(code, msg);
        assert_eq!(
            s(
                "ZONE_RESOURCE_POOL_EXHAUSTED",
                "The zone 'projects/acme-ml/zones/us-central1-a' does not have enough resources available to fulfill the request."
            ),
            Some(Shortage::Zone(Some("us-central1-a".into())))
        );
        assert_eq!(
            s("", "GCE_STOCKOUT: no a3-highgpu-8g in europe-west4-b now"),
            Some(Shortage::Zone(Some("europe-west4-b".into())))
        );
        assert_eq!(
            s(
                "QUOTA_EXCEEDED",
                "Quota 'NVIDIA_H100_GPUS' exceeded. Limit: 0.0 in region northamerica-northeast1."
            ),
            Some(Shortage::Region(Some("northamerica-northeast1".into())))
        );
        assert_eq!(
            s(
                "QUOTA_EXCEEDED",
                "Quota 'GPUS_ALL_REGIONS' exceeded. Limit: 8.0 globally."
            ),
            Some(Shortage::Cloud)
        );
        assert_eq!(
            s(
                "notFound",
                "The resource 'projects/p/zones/us-central1-a/x' was not found"
            ),
            None
        );
        assert_eq!(
            locate("in us-central1"),
            Place {
                zone: None,
                region: Some("us-central1".into())
            }
        );
    }
}
