//! How likely a cloud says a placement is to get its capacity now: the
//! clouds' placement-score APIs (AWS `GetSpotPlacementScores`), asked
//! before a pool's candidates are ordered. Scores are advice, on one scale
//! (1 unlikely … 10 very likely, AWS's own).

/// One place a pool's nodes may go, as a score API is asked about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoreAsk {
    pub region: String,
    pub instance_type: String,
    /// Spot capacity (else on-demand).
    pub spot: bool,
    /// How many instances the pool wants there.
    pub nodes: u64,
}

/// The lowest and highest score.
pub const SCORES: std::ops::RangeInclusive<u8> = 1..=10;
