//! `strata report`: the four numbers a GPU team reviews each month, per
//! cloud, region and pool over a period, from the history drift runs
//! keep beside the state. Between two drift runs a pool is taken to have
//! had the GPUs the earlier run saw, at the price the earlier run priced
//! (step by step, as a meter read at each visit); a figure that cannot be
//! had is `None` with the reason beside it, never zero. Nothing here
//! reads a cloud or prints.

mod figures;

pub use figures::{Figure, FirstGpuFigures};

use std::collections::BTreeMap;
use strata_provider::money::Usd;
use strata_state::history::{Observation, PoolSeen};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// The time a report covers: from `from` up to `to`.
#[derive(Debug, Clone, Copy)]
pub struct Period {
    pub from: OffsetDateTime,
    pub to: OffsetDateTime,
}

/// Where a row's GPUs ran.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RowKey {
    pub cloud: String,
    pub region: String,
    pub pool: String,
}

/// One cloud, region and pool over the period.
#[derive(Debug, Clone)]
pub struct Row {
    pub key: RowKey,
    /// The capacity types its nodes ran on (`spot`, `on_demand`, …).
    pub capacity: Vec<String>,
    pub gpu_hours: Figure<f64>,
    pub cost: Figure<Usd>,
    pub first_gpu: Figure<FirstGpuFigures>,
    /// Preempted spot nodes over spot nodes that stopped (GCP's ratio).
    pub preemption_rate: Figure<f64>,
    pub preemptions_per_1000_gpu_hours: Figure<f64>,
    pub egress_bytes: Figure<u64>,
}

/// The report: its rows, and what it was made from.
#[derive(Debug, Clone)]
pub struct Report {
    pub period: Period,
    pub rows: Vec<Row>,
    /// Drift runs inside the period.
    pub observations: usize,
    /// The longest time between two drift runs, of those whose span
    /// meets the period, in hours: the span over which GPUs were taken as
    /// steady. `None` when no two runs span any of it.
    pub longest_gap_hours: Option<f64>,
    /// History lines this strata could not read.
    pub unreadable: usize,
}

/// What one row gathers before its figures are worked out.
#[derive(Default)]
struct Tally {
    capacity: Vec<String>,
    gpu_seconds: u64,
    unknown_seconds: u64,
    unknown_why: Option<String>,
    cost: Usd,
    unpriced_gpu_seconds: u64,
    /// Each placement's time to first GPU, by when it was made.
    first_gpu: BTreeMap<String, strata_state::history::FirstGpu>,
    /// Whether any of its time was on spot capacity.
    spot: bool,
    /// What the cloud recorded over the drift runs in the period that
    /// could read it, and why others could not.
    preempted: u64,
    stopped: u64,
    records_read: usize,
    records_why: Option<String>,
    /// What a cloud's record may have left out of a run's span.
    records_short: Option<String>,
    /// Bytes sent out over the runs whose records metered them, and how
    /// many runs' records did not.
    egress: Option<u64>,
    egress_unread: usize,
    egress_why: Option<String>,
}

/// The report over `history` for `period`.
pub fn report(history: &[Observation], unreadable: usize, period: Period) -> Report {
    let runs: Vec<(OffsetDateTime, &Observation)> = history
        .iter()
        .filter_map(|o| Some((OffsetDateTime::parse(&o.at, &Rfc3339).ok()?, o)))
        .collect();
    let mut tallies: BTreeMap<RowKey, Tally> = BTreeMap::new();
    for pair in runs.windows(2) {
        let [(start, run), (end, _)] = pair else {
            continue;
        };
        let seconds = overlap(*start, *end, period);
        if seconds == 0 {
            continue;
        }
        for seen in &run.pools {
            let tally = tallies.entry(key_of(seen)).or_default();
            tally.count(seen, seconds);
        }
    }
    for (at, run) in &runs {
        for seen in run.pools.iter().filter(|_| within(*at, period)) {
            let tally = tallies.entry(key_of(seen)).or_default();
            tally.place(seen);
            tally.placement(seen, period);
            tally.records(seen);
        }
    }
    let (observations, longest_gap_hours) = coverage(&runs, period);
    Report {
        period,
        rows: tallies
            .into_iter()
            .map(|(key, t)| figures::row(key, t))
            .collect(),
        observations,
        longest_gap_hours,
        unreadable,
    }
}

impl Tally {
    /// The capacity type `seen` ran on.
    fn place(&mut self, seen: &PoolSeen) {
        if !self.capacity.contains(&seen.at.capacity) {
            self.capacity.push(seen.at.capacity.clone());
        }
        self.spot |= seen.at.capacity == "spot";
    }

    /// `seconds` of `seen`'s GPUs, priced as they were.
    fn count(&mut self, seen: &PoolSeen, seconds: u64) {
        self.place(seen);
        let Some(gpus) = seen.gpus else {
            self.unknown_seconds += seconds;
            self.unknown_why = seen.gpus_why.clone();
            return;
        };
        let gpu_seconds = gpus.saturating_mul(seconds);
        self.gpu_seconds += gpu_seconds;
        match seen.gpu_hour.as_deref().and_then(Usd::parse) {
            Some(price) => self.cost += price.ratio(gpu_seconds, 3600).unwrap_or_default(),
            None => self.unpriced_gpu_seconds += gpu_seconds,
        }
    }

    /// What the cloud recorded up to `seen`'s run.
    fn records(&mut self, seen: &PoolSeen) {
        match &seen.records {
            Some(r) => {
                self.preempted += r.preempted;
                self.stopped += r.stopped;
                self.records_read += 1;
                if r.short.is_some() {
                    self.records_short.clone_from(&r.short);
                }
                match r.egress_bytes {
                    Some(b) => *self.egress.get_or_insert(0) += b,
                    None => {
                        self.egress_unread += 1;
                        self.egress_why.clone_from(&r.egress_why);
                    }
                }
            }
            None => {
                self.records_why = seen.records_why.clone();
                self.egress_unread += 1;
            }
        }
    }

    /// The placement `seen` belongs to, when it was made in the period.
    fn placement(&mut self, seen: &PoolSeen, period: Period) {
        let made = OffsetDateTime::parse(&seen.since, &Rfc3339).ok();
        if let (Some(first), Some(true)) = (seen.first_gpu, made.map(|m| within(m, period))) {
            self.first_gpu.insert(seen.since.clone(), first);
        }
    }
}

fn key_of(seen: &PoolSeen) -> RowKey {
    RowKey {
        cloud: seen.at.cloud.clone(),
        region: seen.at.region.clone(),
        pool: seen.pool.clone(),
    }
}

fn within(t: OffsetDateTime, period: Period) -> bool {
    period.from <= t && t < period.to
}

/// Whole seconds of `[start, end)` inside the period.
fn overlap(start: OffsetDateTime, end: OffsetDateTime, period: Period) -> u64 {
    let (a, b) = (start.max(period.from), end.min(period.to));
    u64::try_from((b - a).whole_seconds()).unwrap_or(0)
}

/// The drift runs inside the period, and the longest time between two
/// consecutive runs whose span meets it.
fn coverage(runs: &[(OffsetDateTime, &Observation)], period: Period) -> (usize, Option<f64>) {
    let inside = runs.iter().filter(|(t, _)| within(*t, period)).count();
    let longest = runs
        .windows(2)
        .filter(|w| overlap(w[0].0, w[1].0, period) > 0)
        .map(|w| (w[1].0 - w[0].0).as_seconds_f64() / 3600.0)
        .reduce(f64::max);
    (inside, longest)
}

#[cfg(test)]
mod tests;
