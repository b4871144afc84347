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

/// The spot asks as the calls a regional score API takes: one per
/// instance type and count, naming every region asked for them.
pub fn spot_calls(asks: &[ScoreAsk]) -> std::collections::BTreeMap<(&str, u64), Vec<&str>> {
    let mut calls: std::collections::BTreeMap<(&str, u64), Vec<&str>> = Default::default();
    for a in asks.iter().filter(|a| a.spot) {
        calls
            .entry((a.instance_type.as_str(), a.nodes.max(1)))
            .or_default()
            .push(a.region.as_str());
    }
    calls
}

/// A score answered for an instance type, count and region (lower case).
pub type Answered = std::collections::BTreeMap<(String, u64, String), u8>;

/// Each ask's score among those `answered` (spot asks only), in order.
pub fn spot_scores(asks: &[ScoreAsk], answered: &Answered) -> Vec<Option<u8>> {
    asks.iter()
        .map(|a| {
            let key = (
                a.instance_type.clone(),
                a.nodes.max(1),
                a.region.to_ascii_lowercase(),
            );
            a.spot.then(|| answered.get(&key).copied()).flatten()
        })
        .collect()
}
