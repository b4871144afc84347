//! How Azure Resource Manager speaks (errors, pages, capacity codes) and
//! how its long-running operations are followed to their end.

use crate::Ctx;
use serde_json::Value as Json;
use std::time::Duration;
use strata_provider::wait::{self, Poll};
use strata_provider::{CapacityCodes, DriverError, Place, Reach, Shortage};
use strata_rest::{Method, Paging, Reply};
use strata_value::value::Value;

pub struct Arm;

/// Codes that say "no capacity or quota for this there now", and how far
/// each reaches: a zone's allocation, or the location's (a size it does
/// not offer now, its quota, an allocation over its zones).
const CAPACITY: &CapacityCodes = &CapacityCodes {
    codes: &[
        ("ZonalAllocationFailed", Reach::Zone),
        ("OverconstrainedZonalAllocationRequest", Reach::Zone),
        ("SkuNotAvailable", Reach::Region),
        ("AllocationFailed", Reach::Region),
        ("OverconstrainedAllocationRequest", Reach::Region),
        ("QuotaExceeded", Reach::Region),
        ("InsufficientVCPUQuota", Reach::Region),
    ],
    locate,
};

/// The location (`location 'eastus'`) and zone (`zone '2'`) a message
/// names.
fn locate(message: &str) -> Place {
    let words: Vec<&str> = message
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let after = |key: &str| {
        words
            .windows(2)
            .find(|p| p[0].eq_ignore_ascii_case(key))
            .map(|p| p[1].to_string())
    };
    Place {
        zone: after("zone").filter(|z| z.bytes().all(|b| b.is_ascii_digit())),
        region: after("location").map(|l| l.to_ascii_lowercase()),
    }
}

impl strata_rest::Dialect for Arm {
    fn cloud(&self) -> &'static str {
        "Azure"
    }

    fn capacity(&self) -> &'static CapacityCodes {
        CAPACITY
    }

    /// Quota refusals come as `OperationNotAllowed` with the quota named:
    /// the location's.
    fn shortage(&self, code: &str, message: &str) -> Option<Shortage> {
        CAPACITY.shortage(code, message).or_else(|| {
            (code == "OperationNotAllowed" && message.to_ascii_lowercase().contains("quota"))
                .then(|| Shortage::Region(locate(message).region))
        })
    }

    /// AKS refuses an operation while another runs on the cluster; a role
    /// assignment for a just-made identity fails until the directory has
    /// it; ARM asks for retries in so many words.
    fn retryable(&self, code: &str, message: &str) -> bool {
        (code == "OperationNotAllowed" && message.contains("in progress"))
            || matches!(
                code,
                "PrincipalNotFound" | "AnotherOperationInProgress" | "RetryableError"
            )
    }

    fn paging(&self) -> Paging {
        Paging::Link
    }

    /// Azure Resource Manager's token buckets, per subscription and
    /// region: reads 250 at once and 25 a second, writes and deletes 200
    /// and 10 (`STRATA_BUDGET_AZURE_READS`, `_WRITES`, `_DELETES`).
    fn bucket(&self, method: &Method) -> &'static str {
        match *method {
            Method::GET | Method::HEAD => "READS",
            Method::DELETE => "DELETES",
            _ => "WRITES",
        }
    }

    fn rate(&self, bucket: &str) -> Option<strata_provider::budget::Rate> {
        use strata_provider::budget::Rate;
        let default = match bucket {
            "READS" => Rate::new(250.0, 25.0),
            _ => Rate::new(200.0, 10.0),
        };
        Rate::adjusted(&format!("AZURE_{bucket}"), default)
    }
}

/// Follows a write's long-running operation to its end: the
/// `Azure-AsyncOperation` URL until its status is terminal, else the
/// `Location` URL until it stops answering 202, each look after the
/// `Retry-After` the service asks for. Returns the final body a `Location`
/// poll gave, if any.
pub async fn finish(
    c: &Ctx,
    what: &str,
    r: &Reply,
    timeout: Duration,
) -> Result<Option<Json>, DriverError> {
    let after = |r: &Reply| {
        r.header("retry-after")
            .and_then(|s| s.parse().ok())
            .map(Duration::from_secs)
    };
    if let Some(url) = r.header("azure-asyncoperation").map(str::to_string) {
        wait::until(
            what,
            timeout,
            wait::POLL,
            || async {
                let p = c.rest.call(what, Method::GET, &url, None).await?;
                let status = p.body["status"]
                    .as_str()
                    .unwrap_or("InProgress")
                    .to_string();
                Ok(match status.as_str() {
                    "Succeeded" => Poll::Ready(Value::null()),
                    "Failed" | "Canceled" => Poll::Failed(
                        c.rest.operation_error(
                            what,
                            p.body["error"]["code"].as_str().unwrap_or(&status),
                            p.body["error"]["message"]
                                .as_str()
                                .unwrap_or("the operation failed"),
                        ),
                    ),
                    _ => Poll::pending(status, after(&p)),
                })
            },
            |p| matches!(p, Poll::Ready(_)),
        )
        .await?;
        return Ok(None);
    }
    let Some(url) = r
        .header("location")
        .filter(|_| r.status == 202)
        .map(str::to_string)
    else {
        return Ok(None);
    };
    let mut last = None;
    wait::until(
        what,
        timeout,
        wait::POLL,
        || async {
            let p = c.rest.call(what, Method::GET, &url, None).await?;
            Ok(if p.status == 202 {
                Poll::pending("Accepted".into(), after(&p))
            } else {
                Poll::Ready(Value::string(p.body.to_string()))
            })
        },
        |p| matches!(p, Poll::Ready(_)),
    )
    .await
    .map(|p| {
        if let Poll::Ready(v) = p {
            last = v.as_str().and_then(|s| serde_json::from_str(s).ok());
        }
    })?;
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_rest::Dialect;

    #[test]
    fn shortages_reach_a_zone_or_the_location() {
        assert_eq!(
            Arm.shortage(
                "SkuNotAvailable",
                "The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: Standard_ND96isr_H100_v5' is currently not available in location 'westus'."
            ),
            Some(Shortage::Region(Some("westus".into())))
        );
        assert_eq!(
            Arm.shortage(
                "ZonalAllocationFailed",
                "Allocation failed. We do not have sufficient capacity for the requested VM size in zone '2'."
            ),
            Some(Shortage::Zone(Some("2".into())))
        );
        assert_eq!(
            Arm.shortage(
                "OperationNotAllowed",
                "Operation could not be completed as it results in exceeding approved standardNDSH100v5Family Cores quota. Location: eastus"
            ),
            Some(Shortage::Region(Some("eastus".into())))
        );
        assert_eq!(
            Arm.shortage("OperationNotAllowed", "Another operation is in progress"),
            None
        );
    }
}
