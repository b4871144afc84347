//! What drift runs observed, kept beside the state in the same backend:
//! one JSON line per run, oldest first, for `strata report`. The history
//! is written under the state's lock, whole or not at all (a run killed
//! mid-write leaves the history it found), and kept under [`BOUND`] bytes
//! by dropping its oldest lines.

use crate::model::Location;
use serde::{Deserialize, Serialize};

/// The most bytes the history keeps: about a year of hourly drift runs
/// over five pools.
pub const BOUND: usize = 16 << 20;

/// One drift run's look at the placed pools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// When the run looked (RFC 3339).
    pub at: String,
    pub pools: Vec<PoolSeen>,
}

/// One placed pool as a drift run found it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolSeen {
    /// `train.h100`.
    pub pool: String,
    #[serde(flatten)]
    pub at: Location,
    pub instance_type: String,
    /// GPUs allocatable on the pool's nodes, as its cluster said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u64>,
    /// Why `gpus` is not known, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_why: Option<String>,
    /// What a GPU-hour costs there, as the cost table priced it (exact
    /// decimal dollars); absent where nothing prices it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_hour: Option<String>,
    /// When the placement these nodes belong to was made (RFC 3339).
    pub since: String,
    /// Its time to first GPU, when it was seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_gpu: Option<FirstGpu>,
    /// What the cloud recorded of the pool's nodes since the previous
    /// run (or since the placement, for the first), when it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<Recorded>,
    /// Why `records` is missing, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records_why: Option<String>,
}

/// Nodes the cloud preempted, and nodes that stopped for any reason (the
/// preempted among them), from `since` up to the observation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub since: String,
    pub preempted: u64,
    pub stopped: u64,
    /// What the cloud's record may leave out of the span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short: Option<String>,
    /// Bytes the pool's cluster network sent out over the span, where
    /// the cloud's metrics were read, else why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress_why: Option<String>,
}

/// A placement's time to first GPU, in seconds from its request, and
/// where the time went where it was measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FirstGpu {
    pub after: f64,
    /// Until the apply that created the pool was done with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_created: Option<f64>,
    /// Until the first of its nodes had joined the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_joined: Option<f64>,
}

/// The history as stored: its observations, oldest first, and how many
/// lines could not be read (written by a newer strata, or damaged).
#[derive(Debug, Default)]
pub struct History {
    pub observations: Vec<Observation>,
    pub unreadable: usize,
}

/// Reads the stored text.
pub fn parse(text: &str) -> History {
    let mut h = History::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str(line) {
            Ok(o) => h.observations.push(o),
            Err(_) => h.unreadable += 1,
        }
    }
    h
}

/// When the newest readable observation in `text` was made, reading
/// lines from the end only as far as that one.
pub fn last_at(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .find_map(|l| serde_json::from_str::<Observation>(l).ok())
        .map(|o| o.at)
}

/// `text` with `line` appended and its oldest lines dropped until it fits
/// in `bound` bytes (the new line is always kept).
pub fn appended(text: &str, line: &str, bound: usize) -> String {
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.push(line);
    let mut size: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut first = 0;
    while size > bound && first + 1 < lines.len() {
        size -= lines[first].len() + 1;
        first += 1;
    }
    let mut out = lines[first..].join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_lines_go_first_and_the_newest_always_stays() {
        let text = "aaaa\nbbbb\ncccc\n";
        assert_eq!(appended(text, "dddd", 100), "aaaa\nbbbb\ncccc\ndddd\n");
        assert_eq!(appended(text, "dddd", 10), "cccc\ndddd\n");
        assert_eq!(appended(text, "a-long-line", 4), "a-long-line\n");
        assert_eq!(appended("", "x", 10), "x\n");
    }

    #[test]
    fn lines_it_cannot_read_are_counted_not_fatal() {
        let good = serde_json::to_string(&Observation {
            at: "2026-11-01T00:00:00Z".into(),
            pools: vec![],
        })
        .unwrap_or_default();
        let h = parse(&format!("{good}\n{{\"at\": 3}}\n\n{good}\n"));
        assert_eq!((h.observations.len(), h.unreadable), (2, 1));
        let newest = last_at(&format!("{good}\n{{\"at\": 3}}\n"));
        assert_eq!(newest.as_deref(), Some("2026-11-01T00:00:00Z"));
        assert_eq!(last_at(""), None);
    }
}
