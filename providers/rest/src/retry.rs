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
