//! A cloud's request budget: token buckets sized from the vendor's
//! documented limits, which a driver takes a token from before each
//! request, so that a large refresh or apply spaces its calls instead of
//! running into throttling and paying for it in retries and backoff.
//!
//! Every rate can be changed without a rebuild (an account with raised
//! limits, a stand-in that has none): `STRATA_BUDGET_<NAME>=BURST/PER_SECOND`,
//! or `off`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// The budgets drivers take from, by the name `STRATA_BUDGET_<NAME>`
/// adjusts.
pub const NAMES: &[&str] = &[
    "AWS_EC2_DESCRIBE",
    "AWS_EC2",
    "AWS_IAM",
    "AWS_EKS",
    "GCP",
    "AZURE_READS",
    "AZURE_WRITES",
    "AZURE_DELETES",
];

const PREFIX: &str = "STRATA_BUDGET_";

/// A `STRATA_BUDGET_*` setting that cannot be honoured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BudgetError {
    #[error("{PREFIX}{name}={value:?} does not read: give BURST/PER_SECOND (100/20: a burst of at least 1, a rate above 0) or off")]
    Unreadable { name: String, value: String },
    #[error("{PREFIX}{name} names no budget; the budgets are {}", NAMES.join(", "))]
    Unknown { name: String },
}

/// Every `STRATA_BUDGET_*` among `vars` (the environment's) checked: a
/// value that does not read, or a name no driver takes from (a typo),
/// would otherwise leave the default quietly in force.
pub fn check_settings(vars: impl IntoIterator<Item = (String, String)>) -> Result<(), BudgetError> {
    for (key, value) in vars {
        let Some(name) = key.strip_prefix(PREFIX) else {
            continue;
        };
        if !NAMES.contains(&name) {
            let name = name.to_string();
            return Err(BudgetError::Unknown { name });
        }
        if Rate::parse(&value).is_none() {
            let name = name.to_string();
            return Err(BudgetError::Unreadable { name, value });
        }
    }
    Ok(())
}

/// How many requests may go at once (`burst`) and how many more each
/// second brings (`per_second`); `None` for no budget at all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub burst: f64,
    pub per_second: f64,
}

impl Rate {
    pub const fn new(burst: f64, per_second: f64) -> Rate {
        Rate { burst, per_second }
    }

    /// `default`, unless `STRATA_BUDGET_<name>` gives another (`100/20`)
    /// or none (`off`); a value that does not read keeps the default (the
    /// command line refuses it first: [`check_settings`]).
    pub fn adjusted(name: &str, default: Rate) -> Option<Rate> {
        debug_assert!(NAMES.contains(&name), "{name} is not in budget::NAMES");
        match std::env::var(format!("{PREFIX}{name}")) {
            Ok(v) => Rate::parse(&v).unwrap_or(Some(default)),
            Err(_) => Some(default),
        }
    }

    /// `BURST/PER_SECOND` or `off`; `None` when it does not read.
    fn parse(text: &str) -> Option<Option<Rate>> {
        if text.trim() == "off" {
            return Some(None);
        }
        let (burst, per_second) = text.trim().split_once('/')?;
        let burst: f64 = burst.trim().parse().ok()?;
        let per_second: f64 = per_second.trim().parse().ok()?;
        (burst >= 1.0 && per_second > 0.0).then_some(Some(Rate { burst, per_second }))
    }
}

/// One token bucket.
#[derive(Debug)]
pub struct Bucket {
    rate: Rate,
    state: Mutex<Level>,
}

#[derive(Debug)]
struct Level {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// A full bucket.
    pub fn new(rate: Rate) -> Bucket {
        Bucket {
            rate,
            state: Mutex::new(Level {
                tokens: rate.burst,
                at: Instant::now(),
            }),
        }
    }

    /// Waits until a request may go, and takes its token.
    pub async fn take(&self) {
        while let Some(wait) = self.try_take() {
            tokio::time::sleep(wait).await;
        }
    }

    /// Takes a token when there is one (`None`), else says how long until
    /// there will be.
    fn try_take(&self) -> Option<Duration> {
        let mut level = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let gained = now.duration_since(level.at).as_secs_f64() * self.rate.per_second;
        level.tokens = (level.tokens + gained).min(self.rate.burst);
        level.at = now;
        // A bucket that never refills (a rate made in code with none)
        // holds nothing back rather than waiting for ever.
        if level.tokens >= 1.0 || self.rate.per_second <= 0.0 {
            level.tokens -= 1.0;
            return None;
        }
        Some(Duration::from_secs_f64(
            (1.0 - level.tokens) / self.rate.per_second,
        ))
    }
}

/// What rate a bucket of a name has (none: not budgeted).
type RateOf = Box<dyn Fn(&str) -> Option<Rate> + Send + Sync>;

/// A cloud's buckets by name (an API action, a kind of call), each made
/// when first used with the rate `rate_of` gives its name; a name without
/// a rate is not budgeted.
pub struct Budget {
    rate_of: RateOf,
    buckets: Mutex<HashMap<String, Option<Arc<Bucket>>>>,
}

impl Budget {
    pub fn new(rate_of: impl Fn(&str) -> Option<Rate> + Send + Sync + 'static) -> Budget {
        Budget {
            rate_of: Box::new(rate_of),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Waits until a request of `name` may go, and takes its token.
    pub async fn take(&self, name: &str) {
        let bucket = {
            let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
            buckets
                .entry(name.to_string())
                .or_insert_with(|| (self.rate_of)(name).map(|r| Arc::new(Bucket::new(r))))
                .clone()
        };
        if let Some(b) = bucket {
            b.take().await;
        }
    }
}

impl std::fmt::Debug for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Budget")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> Result<(), BudgetError> {
        check_settings(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    /// A setting that would quietly keep the default is refused by name.
    #[test]
    fn settings_that_do_not_read_are_refused() {
        let fine = [
            ("STRATA_BUDGET_AWS_EC2", "10/2"),
            ("STRATA_BUDGET_GCP", " off "),
            ("PATH", "/bin"),
        ];
        assert_eq!(settings(&fine), Ok(()));
        for bad in ["fast", "10", "0/5", "10/0", "10/-1", "a/b", ""] {
            let e = settings(&[("STRATA_BUDGET_AZURE_READS", bad)]).unwrap_err();
            assert!(matches!(e, BudgetError::Unreadable { .. }), "{bad:?}: {e}");
        }
        let e = settings(&[("STRATA_BUDGET_AWS_EC3", "10/2")]).unwrap_err();
        assert_eq!(
            e,
            BudgetError::Unknown {
                name: "AWS_EC3".into()
            }
        );
        assert!(e.to_string().contains("AWS_EC2_DESCRIBE, AWS_EC2"), "{e}");
    }

    /// The burst goes at once; every request past it waits for its token:
    /// 30 requests at 10 at once and 5 a second take 4 s (of the test's
    /// own clock, paused and advanced by the runtime).
    #[tokio::test(start_paused = true)]
    async fn requests_past_the_burst_wait_for_the_refill() {
        let bucket = Bucket::new(Rate::new(10.0, 5.0));
        let start = Instant::now();
        for _ in 0..10 {
            bucket.take().await;
        }
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "the burst waits for nothing"
        );
        for _ in 0..20 {
            bucket.take().await;
        }
        let took = start.elapsed().as_secs_f64();
        assert!((3.99..4.01).contains(&took), "{took} s");
    }

    /// Buckets are per name, and a name without a rate is not held back.
    #[tokio::test(start_paused = true)]
    async fn each_name_has_its_own_bucket() {
        let budget = Budget::new(|name| (name != "free").then_some(Rate::new(1.0, 1.0)));
        let start = Instant::now();
        for name in ["DescribeVpcs", "DescribeSubnets", "free", "free", "free"] {
            budget.take(name).await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO);
        budget.take("DescribeVpcs").await;
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }

    /// A rate that never refills holds nothing back past its burst
    /// rather than waiting for ever.
    #[tokio::test(start_paused = true)]
    async fn a_bucket_without_refill_does_not_wait_for_ever() {
        let bucket = Bucket::new(Rate::new(1.0, 0.0));
        for _ in 0..3 {
            bucket.take().await;
        }
    }

    #[test]
    fn rates_read_from_their_variable() {
        assert_eq!(Rate::parse("100/20"), Some(Some(Rate::new(100.0, 20.0))));
        assert_eq!(Rate::parse(" 5 / 0.5 "), Some(Some(Rate::new(5.0, 0.5))));
        assert_eq!(Rate::parse("off"), Some(None));
        for bad in ["", "100", "0/5", "10/0", "ten/5"] {
            assert_eq!(Rate::parse(bad), None, "{bad}");
        }
    }
}
