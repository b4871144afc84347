//! When to try a failed call again: exponential backoff with full jitter
//! (so many parallel operations throttled together do not retry together),
//! or the server's own `Retry-After` when it gives one.

use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Retry {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The backoff's first ceiling; doubled per retry up to `cap`.
    pub base: Duration,
    pub cap: Duration,
    /// How long one request may take.
    pub request_timeout: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            max_retries: 8,
            base: Duration::from_millis(500),
            cap: Duration::from_secs(30),
            request_timeout: Duration::from_secs(60),
        }
    }
}

impl Retry {
    /// The pause before retry number `attempt` (0-based): the server's
    /// `Retry-After` when given (capped, so a bad header cannot stall an
    /// apply), else a random time up to the backoff ceiling.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(d) = retry_after {
            return d.min(self.cap);
        }
        let ceiling = self
            .base
            .saturating_mul(2u32.saturating_pow(attempt.min(16)))
            .min(self.cap);
        ceiling.mul_f64(fastrand::f64())
    }
}

impl Retry {
    /// Runs `call` until it succeeds, fails for good, or the retries are
    /// spent. `again` looks at a failure and the attempt it ended (from
    /// 0): `None` to give up, `Some(wait)` to try again after the backoff,
    /// or after `wait` when the server said how long.
    pub async fn run<T, E, F, Fut>(
        &self,
        mut call: F,
        again: impl Fn(&E, u32) -> Option<Option<Duration>>,
    ) -> Result<T, E>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, E>>,
    {
        let mut attempt = 0;
        loop {
            let err = match call().await {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            match again(&err, attempt) {
                Some(wait) if attempt < self.max_retries => {
                    tokio::time::sleep(self.delay(attempt, wait)).await;
                    attempt += 1;
                    // The earlier attempt may have been carried out.
                    strata_provider::resend::note();
                }
                _ => return Err(err),
            }
        }
    }
}

/// `Retry-After` as seconds or as an HTTP date.
pub fn retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(
        at.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_the_cap_with_jitter() {
        let r = Retry::default();
        for attempt in 0..20 {
            let d = r.delay(attempt, None);
            let ceiling = (r.base * 2u32.pow(attempt.min(16))).min(r.cap);
            assert!(d <= ceiling, "attempt {attempt}: {d:?} > {ceiling:?}");
        }
        let spread: std::collections::BTreeSet<_> = (0..20).map(|_| r.delay(5, None)).collect();
        assert!(spread.len() > 1, "jitter spreads retries");
    }

    #[tokio::test]
    async fn run_stops_at_success_a_final_failure_or_the_last_retry() {
        let quick = Retry {
            base: Duration::from_millis(1),
            cap: Duration::from_millis(1),
            ..Retry::default()
        };
        let calls = std::cell::Cell::new(0u32);
        let flaky = || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move {
                if n < 3 {
                    Err(n)
                } else {
                    Ok(n)
                }
            }
        };
        assert_eq!(quick.run(flaky, |_, _| Some(None)).await, Ok(3));
        calls.set(0);
        assert_eq!(
            quick.run(flaky, |_, _| None).await,
            Err(1),
            "a final failure"
        );
        calls.set(0);
        let always = || {
            calls.set(calls.get() + 1);
            async { Err::<(), _>("busy") }
        };
        assert_eq!(quick.run(always, |_, _| Some(None)).await, Err("busy"));
        assert_eq!(calls.get(), quick.max_retries + 1);
    }

    #[test]
    fn the_servers_retry_after_wins_but_is_capped() {
        let r = Retry::default();
        assert_eq!(
            r.delay(0, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(r.delay(0, Some(Duration::from_secs(3600))), r.cap);
        assert_eq!(retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(
            retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("soon"), None);
    }
}
