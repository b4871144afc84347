//! Waiting for asynchronous AWS objects (EKS clusters and node groups take
//! minutes): poll until ready, a failure status (its health issues in the
//! error) or the timeout, with backoff; progress comes from the engine's
//! "Still creating..." lines.

use crate::values::{get, string};
use crate::DriverError;
use std::future::Future;
use std::time::Duration;
use strata_value::value::Value;

/// One look at the object.
pub enum Poll {
    Ready(Value),
    /// Still in a transitional status.
    Pending(String),
    /// Still in a transitional status; the service asks for the next look
    /// after this long (`Retry-After`).
    PendingFor(String, Duration),
    /// In a failure status: the error says why, classified by the driver
    /// (a capacity failure is [`DriverError::Capacity`]).
    Failed(DriverError),
    /// Not there (what a delete waits for).
    Gone,
}

impl Poll {
    /// Still in `status`; the next look after `after` when the service
    /// asked (`Retry-After`), else on the usual backoff.
    pub fn pending(status: String, after: Option<Duration>) -> Poll {
        match after {
            Some(d) => Poll::PendingFor(status, d),
            None => Poll::Pending(status),
        }
    }
}

/// Polls every `first` growing to at most `cap`, until `done` accepts a
/// look or `timeout` passes.
pub async fn until<F, Fut>(
    what: &str,
    timeout: Duration,
    (first, cap): (Duration, Duration),
    mut look: F,
    done: impl Fn(&Poll) -> bool,
) -> Result<Poll, DriverError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Poll, DriverError>>,
{
    let started = tokio::time::Instant::now();
    let mut interval = first;
    let mut last = String::from("not looked at yet");
    loop {
        let p = look().await?;
        if let Poll::Failed(e) = p {
            return Err(e);
        }
        if done(&p) {
            return Ok(p);
        }
        let mut pause = interval;
        match &p {
            Poll::Pending(status) => last = status.clone(),
            Poll::PendingFor(status, after) => {
                last = status.clone();
                pause = (*after).min(cap);
            }
            _ => {}
        }
        if started.elapsed() + pause > timeout {
            return Err(DriverError::Api {
                operation: what.to_string(),
                detail: format!(
                    "still {last} after {}s (the timeout; raise it in a timeouts block)",
                    timeout.as_secs()
                ),
                retryable: false,
            });
        }
        tokio::time::sleep(pause).await;
        interval = (interval * 2).min(cap);
    }
}

/// Waits for the object to be ready; its disappearing meanwhile is an error.
pub async fn ready<F, Fut>(what: &str, timeout: Duration, look: F) -> Result<Value, DriverError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Poll, DriverError>>,
{
    match until(what, timeout, POLL, look, |p| {
        matches!(p, Poll::Ready(_) | Poll::Gone)
    })
    .await?
    {
        Poll::Ready(v) => Ok(v),
        _ => Err(DriverError::Api {
            operation: what.to_string(),
            detail: "it disappeared while being waited for".into(),
            retryable: false,
        }),
    }
}

/// Waits for the object to be gone.
pub async fn gone<F, Fut>(what: &str, timeout: Duration, look: F) -> Result<(), DriverError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Poll, DriverError>>,
{
    until(what, timeout, POLL, look, |p| matches!(p, Poll::Gone))
        .await
        .map(|_| ())
}

/// How often to look: soon at first (many operations finish in seconds),
/// then every 15 s at most.
pub const POLL: (Duration, Duration) = (Duration::from_millis(500), Duration::from_secs(15));

/// The `timeouts` block's entry for `op` in `v`, or Terraform's default.
pub fn timeout(v: &Value, op: &str, default: Duration) -> Duration {
    get(v, "timeouts")
        .and_then(|t| string(t, op))
        .and_then(|s| parse_duration(&s))
        .unwrap_or(default)
}

/// Terraform's duration syntax in `timeouts` blocks: `30m`, `1h30m`, `45s`.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let mut total = 0u64;
    let mut num = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let n: u64 = num.parse().ok()?;
        num.clear();
        total += n * match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return None,
        };
    }
    num.is_empty().then_some(Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify;
    use std::cell::Cell;

    const CAPACITY: &crate::CapacityCodes = &crate::CapacityCodes {
        codes: &[("InsufficientInstanceCapacity", crate::Reach::Zone)],
        locate: |_| crate::Place::default(),
    };

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("runtime")
    }

    #[test]
    fn waits_through_transitional_states() {
        let looks = Cell::new(0);
        let r = rt().block_on(until(
            "cluster",
            Duration::from_secs(60),
            (Duration::from_secs(1), Duration::from_secs(8)),
            || {
                looks.set(looks.get() + 1);
                let n = looks.get();
                async move {
                    Ok(if n < 4 {
                        Poll::Pending("CREATING".into())
                    } else {
                        Poll::Ready(Value::string("ok"))
                    })
                }
            },
            |p| matches!(p, Poll::Ready(_)),
        ));
        assert!(matches!(r, Ok(Poll::Ready(_))));
        assert_eq!(looks.get(), 4);
    }

    #[test]
    fn a_failure_status_and_the_timeout_are_errors() {
        let failed = rt().block_on(until(
            "node group",
            Duration::from_secs(60),
            (Duration::from_secs(1), Duration::from_secs(1)),
            || async {
                Ok(Poll::Failed(classify(
                    "node group",
                    "CREATE_FAILED: InsufficientFreeAddresses".into(),
                    false,
                    CAPACITY,
                )))
            },
            |p| matches!(p, Poll::Ready(_)),
        ));
        let e = failed.err().expect("an error").to_string();
        assert!(e.contains("InsufficientFreeAddresses"), "{e}");
        let full = rt().block_on(until(
            "node group",
            Duration::from_secs(60),
            POLL,
            || async {
                Ok(Poll::Failed(classify(
                    "node group",
                    "CREATE_FAILED: AsgInstanceLaunchFailures: InsufficientInstanceCapacity".into(),
                    false,
                    CAPACITY,
                )))
            },
            |p| matches!(p, Poll::Ready(_)),
        ));
        assert!(
            matches!(full, Err(DriverError::Capacity { .. })),
            "a capacity failure is its own kind"
        );
        let slow = rt().block_on(until(
            "cluster",
            Duration::from_secs(10),
            (Duration::from_secs(2), Duration::from_secs(4)),
            || async { Ok(Poll::Pending("CREATING".into())) },
            |p| matches!(p, Poll::Ready(_)),
        ));
        let e = slow.err().expect("an error").to_string();
        assert!(e.contains("still CREATING"), "{e}");
    }

    #[test]
    fn terraform_durations() {
        assert_eq!(parse_duration("30m"), Some(Duration::from_secs(1800)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("45s"), Some(Duration::from_secs(45)));
        assert_eq!(parse_duration("10"), None);
        assert_eq!(parse_duration("5d"), None);
    }
}
