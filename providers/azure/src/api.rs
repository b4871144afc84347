//! How Azure Resource Manager speaks (errors, pages, capacity codes) and
//! how its long-running operations are followed to their end.

use crate::Ctx;
use serde_json::Value as Json;
use std::time::Duration;
use strata_provider::wait::{self, Poll};
use strata_provider::DriverError;
use strata_rest::{Method, Paging, Reply};
use strata_value::value::Value;

pub struct Arm;

/// Codes that say "no capacity or quota for this there now".
const CAPACITY: &[&str] = &[
    "SkuNotAvailable",
    "AllocationFailed",
    "ZonalAllocationFailed",
    "OverconstrainedAllocationRequest",
    "OverconstrainedZonalAllocationRequest",
    "QuotaExceeded",
    "InsufficientVCPUQuota",
];

impl strata_rest::Dialect for Arm {
    fn cloud(&self) -> &'static str {
        "Azure"
    }

    fn capacity(&self) -> &'static [&'static str] {
        CAPACITY
    }

    /// Quota refusals come as `OperationNotAllowed` with the quota named.
    fn is_capacity(&self, code: &str, message: &str) -> bool {
        let words = message
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| CAPACITY.contains(&w));
        CAPACITY.contains(&code)
            || words
            || (code == "OperationNotAllowed" && message.to_ascii_lowercase().contains("quota"))
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
