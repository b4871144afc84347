//! A row's figures from what its tally gathered, each with the reason it
//! is missing or partial.

use super::{Row, RowKey, Tally};
use strata_provider::money::Usd;

/// A figure, or why there is none. A partial figure has both: the value
/// over what is known, and what it leaves out.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure<T> {
    pub value: Option<T>,
    pub why: Option<String>,
}

impl<T> Figure<T> {
    pub(super) fn known(value: T) -> Figure<T> {
        Figure {
            value: Some(value),
            why: None,
        }
    }

    pub(super) fn unknown(why: impl Into<String>) -> Figure<T> {
        Figure {
            value: None,
            why: Some(why.into()),
        }
    }
}

/// Time to first GPU over the placements made in the period: the median
/// of each placement's time, and of each of its three parts.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstGpuFigures {
    pub placements: usize,
    pub seconds: f64,
    /// From the placement's request until the apply creating the pool was
    /// done with it.
    pub pool_creation: Option<f64>,
    /// Then until the first node joined the cluster.
    pub node_join: Option<f64>,
    /// Then until a node offered an allocatable GPU.
    pub gpu_ready: Option<f64>,
}

pub(super) fn row(key: RowKey, t: Tally) -> Row {
    let gpu_hours = gpu_hours(&t);
    let (preemption_rate, per_1000) = preemptions(&t, gpu_hours.value);
    Row {
        egress_bytes: egress(&t, &key.cloud),
        first_gpu: first_gpu(&t),
        cost: cost(&t),
        capacity: t.capacity,
        gpu_hours,
        preemption_rate,
        preemptions_per_1000_gpu_hours: per_1000,
        key,
    }
}

fn hours(gpu_seconds: u64) -> f64 {
    gpu_seconds as f64 / 3600.0
}

fn gpu_hours(t: &Tally) -> Figure<f64> {
    let unknown = hours(t.unknown_seconds);
    let why = t
        .unknown_why
        .as_deref()
        .unwrap_or("its cluster was not asked");
    match (t.gpu_seconds, t.unknown_seconds) {
        (0, 0) => Figure::known(0.0),
        (0, _) => Figure::unknown(format!(
            "the pool's GPUs were not counted for {unknown:.1} h: {why}"
        )),
        (known, 0) => Figure::known(hours(known)),
        (known, _) => Figure {
            value: Some(hours(known)),
            why: Some(format!(
                "leaves out {unknown:.1} h when the pool's GPUs were not counted: {why}"
            )),
        },
    }
}

fn cost(t: &Tally) -> Figure<Usd> {
    let unpriced = hours(t.unpriced_gpu_seconds);
    match (t.gpu_seconds, t.unpriced_gpu_seconds) {
        (0, 0) if t.unknown_seconds > 0 => Figure::unknown("the pool's GPUs were not counted"),
        (known, u) if known == u && u > 0 => Figure::unknown(format!(
            "no price for this instance type and capacity ({unpriced:.1} GPU-hours)"
        )),
        (_, 0) => Figure::known(t.cost),
        _ => Figure {
            value: Some(t.cost),
            why: Some(format!("leaves out {unpriced:.1} GPU-hours nothing prices")),
        },
    }
}

fn first_gpu(t: &Tally) -> Figure<FirstGpuFigures> {
    if t.first_gpu.is_empty() {
        return Figure::unknown("no placement made in the period showed its first GPU");
    }
    let all: Vec<_> = t.first_gpu.values().collect();
    let part = |f: &dyn Fn(&strata_state::history::FirstGpu) -> Option<f64>| {
        let each: Option<Vec<f64>> = all.iter().map(|g| f(g)).collect();
        each.map(median)
    };
    Figure::known(FirstGpuFigures {
        placements: all.len(),
        seconds: median(all.iter().map(|g| g.after).collect()),
        pool_creation: part(&|g| g.pool_created),
        node_join: part(&|g| Some(g.node_joined? - g.pool_created?)),
        gpu_ready: part(&|g| Some(g.after - g.node_joined?)),
    })
}

/// The median (the mean of the middle two for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The preemption rate (preempted over stopped nodes) and preemptions
/// per 1 000 GPU-hours, from what the clouds recorded up to each drift
/// run (GCP's `compute.instances.preempted` operations, …).
fn preemptions(t: &Tally, gpu_hours: Option<f64>) -> (Figure<f64>, Figure<f64>) {
    if !t.spot {
        let none = || Figure::unknown("no spot capacity: nothing to preempt");
        return (none(), none());
    }
    let why = t.records_why.as_deref().unwrap_or("no drift run read it");
    if t.records_read == 0 {
        let unread = || Figure::unknown(why);
        return (unread(), unread());
    }
    // Some runs could not read the record, or read one kept for less
    // than their span: the figures may leave some out, and say so.
    let partial = match (&t.records_why, &t.records_short) {
        (Some(w), _) => Some(format!("leaves out drift runs that could not read it: {w}")),
        (None, Some(short)) => Some(format!("may leave some out: {short}")),
        (None, None) => None,
    };
    let with = |value: f64| Figure {
        value: Some(value),
        why: partial.clone(),
    };
    let rate = match t.stopped {
        0 => Figure::unknown("no spot node stopped in the period"),
        n => with(t.preempted as f64 / n as f64),
    };
    let per_1000 = match gpu_hours {
        Some(h) if h > 0.0 => with(t.preempted as f64 * 1000.0 / h),
        _ => Figure::unknown("no GPU-hours counted to divide by"),
    };
    (rate, per_1000)
}

/// Bytes the pool's cluster network sent out through its NAT gateways
/// over the drift runs in the period, from the cloud's metrics.
fn egress(t: &Tally, cloud: &str) -> Figure<u64> {
    let unread = || match (&t.egress_why, &t.records_why) {
        (Some(why), _) => why.clone(),
        (None, Some(why)) => format!("the cloud's records were not read: {why}"),
        (None, None) => format!("strata does not yet read {cloud}'s network egress metrics"),
    };
    match (t.egress, t.egress_unread) {
        (None, _) => Figure::unknown(unread()),
        (Some(b), 0) => Figure::known(b),
        (Some(b), n) => Figure {
            value: Some(b),
            why: Some(format!(
                "leaves out {n} drift runs that could not read it: {}",
                unread()
            )),
        },
    }
}
