//! Where a cluster node pool's `nodes` run: the candidates its `placement`
//! block allows, in order (zone → capacity type → region → cloud), each
//! priced and under the pool's price cap; the one this plan puts the nodes
//! on; and, after an apply that met a shortage, the failure to write down
//! so the next round tries further along.
//!
//! The cluster stage builds candidates (it knows the clouds, regions and
//! catalogs) and asks [`choose`] which is chosen, from the pool's record in
//! state; the plan carries the [`Decision`]s; the engine's failover loop
//! turns an apply's shortages into records with [`outcome`]. Where jobs
//! go between the clusters is decided likewise ([`Dispatch`]).
//! Nothing here calls a cloud.

mod dispatch;
mod seen;

pub use dispatch::{Dispatch, LeftOut, Worker};
pub use seen::{observation, GpusSeen, PoolRecords, RecordsSeen, Seen};

use std::time::Duration;
use strata_provider::money::Usd;
pub use strata_provider::reservation::Held;
use strata_provider::Shortage;
pub use strata_state::history::FirstGpu;
use strata_state::{Entry, Location, Placed, PlacementFailure, PoolPlacement};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// How long a location that had no capacity is skipped, unless the
/// placement block says otherwise.
pub const COOL_DOWN: Duration = Duration::from_secs(3600);

/// One place a pool's nodes may go.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub at: Location,
    /// The module call that builds this cloud region's cluster.
    pub call: String,
    pub instance_type: String,
    /// What a GPU-hour costs here; `None` when nothing prices it.
    pub gpu_hour: Option<Usd>,
    /// The zones the location's cluster spans.
    pub zones: Vec<String>,
    /// The label key whose value is the pool's name on its nodes there.
    pub node_label: String,
    /// The cloud's placement score here (1 unlikely … 10 very likely to
    /// get the capacity now), when asked and given.
    pub score: Option<u8>,
    /// Capacity held ahead (a reservation or Capacity Block) this place
    /// is on.
    pub held: Option<HeldAt>,
}

/// A reservation a candidate is on, and what its cloud said of it
/// (`None` where it was not asked: `validate`).
#[derive(Debug, Clone, PartialEq)]
pub struct HeldAt {
    pub id: String,
    pub facts: Option<Held>,
}

/// How long before a Capacity Block ends its nodes leave it. EKS advises
/// scaling to zero "more than 30 minutes" before the end, when EC2 starts
/// taking the instances back; the rest of the hour is for the pods to
/// drain and the next place's nodes to come up.
pub const LEAVE_BLOCK_BEFORE_END: Duration = Duration::from_secs(3600);

impl Candidate {
    /// `aws us-east-1 spot`.
    pub fn label(&self) -> String {
        label(&self.at)
    }
}

/// Whether nodes at `at` come only as jobs ask for them (GKE's queued
/// provisioning): there is no first GPU to wait for when it is placed.
pub fn waits_for_jobs(at: &Location) -> bool {
    at.capacity == strata_provider::billing::Capacity::Queued.name()
}

/// `aws us-east-1 spot`, for messages.
pub fn label(at: &Location) -> String {
    let place = format!(
        "{} {} {}",
        at.cloud,
        at.region,
        at.capacity.replace('_', "-")
    );
    match &at.reservation {
        Some(id) => format!("{place} {id}"),
        None => place,
    }
}

/// Why this plan puts the nodes where it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The first candidate that is not cooling down.
    First,
    /// Where the state says they are (placement is sticky).
    Recorded,
    /// `--replace-placement` asked for the first candidate again.
    Replaced,
    /// A better candidate's cool-down ended: a move back.
    CoolDownEnded,
    /// Capacity held ahead is there, paid for whether used or not: the
    /// nodes move onto it.
    Held,
}

/// A candidate passed over now, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub candidate: Candidate,
    pub why: String,
}

/// What the plan decided for one pool.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// `train.h100`.
    pub pool: String,
    pub nodes: u64,
    pub gpu: String,
    pub gpus_per_node: u64,
    /// Candidates that may be tried, in order; the chosen one first among
    /// those it is compared with.
    pub candidates: Vec<Candidate>,
    /// Index into `candidates` of where the nodes go; `None` when every
    /// candidate is cooling down or over the cap.
    pub chosen: Option<usize>,
    pub why: Why,
    /// Zones of the chosen candidate left out for lack of capacity.
    pub without_zones: Vec<String>,
    /// Cooling down, over the price cap or unpriced under a cap.
    pub skipped: Vec<Skipped>,
    pub cool_down: Duration,
    /// How long a new placement may take to show an allocatable GPU.
    pub wait_for_gpus: Option<Duration>,
    /// What state records now (kept, so the engine writes only changes).
    pub recorded: Option<PoolPlacement>,
    /// The spec's `min_score`: scores were asked, and a candidate scored
    /// under it is tried after the others.
    pub min_score: Option<u8>,
    /// The clouds that gave no scores, and why (`aws: AccessDenied…`).
    pub unscored: Vec<String>,
    /// The Capacity Block the pool's `capacity_block` buys (or keeps,
    /// once bought).
    pub purchase: Option<Purchase>,
}

/// A Capacity Block a region's cluster buys for a pool: the offering, as
/// the cloud's module takes it (`capacity_blocks`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Purchase {
    /// The module call of the region the block is in.
    pub call: String,
    pub offering: String,
    /// What this apply pays for it and on what terms (`2 × p5.48xlarge
    /// from … to … in us-east-1a`); `None` once it is bought.
    pub buys: Option<Buying>,
}

/// A purchase this apply makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buying {
    pub upfront: Usd,
    pub terms: String,
}

impl Decision {
    pub fn chosen(&self) -> Option<&Candidate> {
        self.chosen.and_then(|i| self.candidates.get(i))
    }

    /// Whether the nodes are placed where this plan keeps them but no GPU
    /// of theirs has been seen yet (an apply that ended before it did).
    pub fn awaits_first_gpu(&self) -> bool {
        let placed = self.recorded.as_ref().and_then(|r| r.chosen.as_ref());
        match (placed, self.chosen()) {
            (Some(p), Some(c)) => {
                p.at == c.at && p.first_gpu_after.is_none() && !waits_for_jobs(&c.at)
            }
            _ => false,
        }
    }

    /// Whether this plan moves the nodes from where state has them.
    pub fn moves(&self) -> bool {
        let was = self.recorded.as_ref().and_then(|r| r.chosen.as_ref());
        match (was, self.chosen()) {
            (Some(w), Some(c)) => w.at != c.at || w.without_zones != self.without_zones,
            (None, Some(_)) => true,
            _ => false,
        }
    }
}

/// The plan JSON's `"placements"`: each placed pool's candidates in
/// order, the chosen one's index, and what was skipped.
pub fn to_json(decisions: &[Decision]) -> serde_json::Value {
    let candidate = |c: &Candidate| {
        serde_json::json!({
            "cloud": c.at.cloud,
            "region": c.at.region,
            "capacity": c.at.capacity,
            "instance_type": c.instance_type,
            "gpu_hour": c.gpu_hour.map(|p| p.decimal()),
            "module": c.call,
            "score": c.score,
            "reservation": c.held.as_ref().map(held_json),
        })
    };
    let pools: Vec<serde_json::Value> = decisions
        .iter()
        .map(|d| {
            serde_json::json!({
                "pool": d.pool,
                "nodes": d.nodes,
                "gpu": d.gpu,
                "gpus_per_node": d.gpus_per_node,
                "candidates": d.candidates.iter().map(candidate).collect::<Vec<_>>(),
                "chosen": d.chosen,
                "moves": d.moves(),
                "without_zones": d.without_zones,
                "min_score": d.min_score,
                "unscored": d.unscored,
                "placed": d.recorded.as_ref().and_then(|r| r.chosen.as_ref()).map(|p| serde_json::json!({
                    "cloud": p.at.cloud,
                    "region": p.at.region,
                    "capacity": p.at.capacity,
                    "instance_type": p.instance_type,
                    "without_zones": p.without_zones,
                    "since": p.since,
                    "first_gpu_after": p.first_gpu_after,
                    "ready_gpus": p.ready_gpus,
                })),
                "skipped": d.skipped.iter().map(|s| {
                    let mut c = candidate(&s.candidate);
                    c["why"] = serde_json::json!(s.why);
                    c
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::Value::Array(pools)
}

fn held_json(h: &HeldAt) -> serde_json::Value {
    let facts = h.facts.as_ref();
    serde_json::json!({
        "id": h.id,
        "instances": facts.map(|f| f.instances),
        "available": facts.map(|f| f.available),
        "zone": facts.and_then(|f| f.zone.clone()),
        "starts": facts.and_then(|f| f.starts.clone()),
        "ends": facts.and_then(|f| f.ends.clone()),
    })
}

/// The pool's fields that decide its placement.
pub struct Spec {
    pub pool: String,
    pub nodes: u64,
    pub gpu: String,
    pub gpus_per_node: u64,
    pub cool_down: Duration,
    pub wait_for_gpus: Option<Duration>,
    pub min_score: Option<u8>,
    pub unscored: Vec<String>,
}

/// A moment as state writes it.
pub fn timestamp(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).unwrap_or_default()
}

fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok()
}

/// Whether `f` still keeps its location (or zone) out at `now`.
fn cooling(f: &PlacementFailure, now: OffsetDateTime, cool_down: Duration) -> bool {
    parse_time(&f.at_time).is_some_and(|t| now < t + cool_down)
}

/// Whether failure `f` rules out all of `c` (not just a zone of it).
fn rules_out(f: &PlacementFailure, c: &Candidate) -> bool {
    match f.cloud_wide {
        true => f.at.cloud == c.at.cloud,
        false => f.zone.is_none() && f.at == c.at,
    }
}

fn until(f: &PlacementFailure, cool_down: Duration) -> String {
    parse_time(&f.at_time)
        .map(|t| timestamp(t + cool_down))
        .unwrap_or_default()
}

/// Which candidate gets the nodes. `ordered` are every candidate within
/// the cap, in the order they are tried; `refused` those the cap (or a
/// missing price) rules out. `replace` is `--replace-placement`.
pub fn choose(
    spec: Spec,
    ordered: Vec<Candidate>,
    refused: Vec<Skipped>,
    record: Option<&PoolPlacement>,
    now: OffsetDateTime,
    replace: bool,
) -> Decision {
    let failures: &[PlacementFailure] = record.map_or(&[], |r| &r.failed);
    let active: Vec<&PlacementFailure> = failures
        .iter()
        .filter(|f| cooling(f, now, spec.cool_down))
        .collect();
    let zones_out = |c: &Candidate| -> Vec<String> {
        let mut z: Vec<String> = active
            .iter()
            .filter(|f| !f.cloud_wide && f.at == c.at)
            .filter_map(|f| f.zone.clone())
            .filter(|z| c.zones.contains(z))
            .collect();
        z.sort();
        z.dedup();
        z
    };
    let mut skipped = refused;
    let mut candidates = Vec::new();
    for c in ordered {
        let out = zones_out(&c);
        let why = match active.iter().find(|f| rules_out(f, &c)) {
            Some(f) => Some(format!(
                "no capacity at {}: {} (skipped until {})",
                f.at_time,
                f.reason,
                until(f, spec.cool_down)
            )),
            None if !c.zones.is_empty() && out.len() == c.zones.len() => Some(format!(
                "no capacity in any of its zones ({})",
                out.join(", ")
            )),
            None => None,
        };
        match why {
            Some(why) => skipped.push(Skipped { candidate: c, why }),
            None => candidates.push(c),
        }
    }
    let was = record.and_then(|r| r.chosen.as_ref());
    let at = |p: &Placed| candidates.iter().position(|c| c.at == p.at);
    // A candidate ahead of the recorded one whose failure has expired: the
    // reason the nodes moved away is over.
    let better_again = |i: usize| {
        candidates[..i].iter().any(|c| {
            failures
                .iter()
                .any(|f| (rules_out(f, c) || f.at == c.at) && !cooling(f, now, spec.cool_down))
        })
    };
    let held_ahead =
        |i: usize| candidates[i].held.is_none() && candidates[..i].iter().any(|c| c.held.is_some());
    let (chosen, why, without_zones) = match was.and_then(|p| Some((p, at(p)?))) {
        _ if replace => (first(&candidates), Why::Replaced, None),
        Some((_, i)) if held_ahead(i) => (Some(0), Why::Held, None),
        Some((_, i)) if better_again(i) => (Some(0), Why::CoolDownEnded, None),
        // Where the nodes are, less any zone that has since failed there
        // (else a shortage in a zone of the recorded place is met again
        // every round).
        Some((p, i)) => {
            let mut without = p.without_zones.clone();
            let failed_since = zones_out(&candidates[i]);
            without.extend(
                failed_since
                    .into_iter()
                    .filter(|z| !p.without_zones.contains(z)),
            );
            (Some(i), Why::Recorded, Some(without))
        }
        None => (first(&candidates), Why::First, None),
    };
    let without_zones = without_zones
        .or_else(|| chosen.map(|i| zones_out(&candidates[i])))
        .unwrap_or_default();
    Decision {
        pool: spec.pool,
        nodes: spec.nodes,
        gpu: spec.gpu,
        gpus_per_node: spec.gpus_per_node,
        candidates,
        chosen,
        why,
        without_zones,
        skipped,
        cool_down: spec.cool_down,
        wait_for_gpus: spec.wait_for_gpus,
        recorded: record.cloned(),
        min_score: spec.min_score,
        unscored: spec.unscored,
        purchase: None,
    }
}

/// Scored candidates in the order they are tried: within each run of
/// equal price (and of one cloud when `by_cloud`, so the spec's order of
/// clouds stands) the better score first, unscored last; then those scored
/// under `min`, after every other, in that order. Scores are advice: a
/// candidate is never dropped for one.
pub fn rank(ordered: Vec<Candidate>, min: u8, by_cloud: bool) -> Vec<Candidate> {
    let tie = |a: &Candidate, b: &Candidate| {
        a.gpu_hour == b.gpu_hour && (!by_cloud || a.at.cloud == b.at.cloud)
    };
    let mut runs: Vec<Vec<Candidate>> = Vec::new();
    for c in ordered {
        match runs.last_mut() {
            Some(run) if tie(&run[0], &c) => run.push(c),
            _ => runs.push(vec![c]),
        }
    }
    let mut out: Vec<Candidate> = Vec::new();
    for mut run in runs {
        run.sort_by_key(|c| std::cmp::Reverse(c.score));
        out.extend(run);
    }
    let (kept, last): (Vec<_>, Vec<_>) = out
        .into_iter()
        .partition(|c| c.score.is_none_or(|s| s >= min));
    kept.into_iter().chain(last).collect()
}

fn first(candidates: &[Candidate]) -> Option<usize> {
    (!candidates.is_empty()).then_some(0)
}

/// An operation of an apply that failed, as placement looks at it.
pub struct Failed<'a> {
    pub addr: String,
    pub shortage: Option<&'a Shortage>,
    pub why: &'a str,
}

/// What an apply round means for placements.
#[derive(Default)]
pub struct Outcome {
    /// Each shortage met where a pool was put, in words.
    pub attempts: Vec<String>,
    /// The failed operations those shortages account for (addresses).
    pub explained: Vec<String>,
    /// Records to write: failures, and placements made.
    pub entries: Vec<Entry>,
}

/// Whether `addr` is the pool `pool` (`train.h100`) in module call `call`.
fn of_pool(addr: &str, call: &str, pool: &str) -> bool {
    let name = pool.split_once('.').map_or(pool, |(_, p)| p);
    addr.starts_with(&format!("module.{call}.")) && addr.ends_with(&format!("[\"{name}\"]"))
}

/// The records an apply round leaves: a shortage where a pool was put
/// is a failure of that place; a pool whose objects all applied is placed
/// where the plan put it. `started` is when the round began.
pub fn outcome(
    decisions: &[Decision],
    failed: &[Failed<'_>],
    started: OffsetDateTime,
    now: OffsetDateTime,
) -> Outcome {
    let mut out = Outcome::default();
    for d in decisions {
        let Some(c) = d.chosen() else { continue };
        let mine: Vec<&Failed> = failed
            .iter()
            .filter(|f| of_pool(&f.addr, &c.call, &d.pool))
            .collect();
        let short = mine
            .iter()
            .find_map(|f| Some((f.shortage?, f.why, &f.addr)));
        let record = match short {
            Some((shortage, why, addr)) => {
                out.explained.push(addr.clone());
                // A refusal that names no region (GKE's quota words) was
                // for the region asked: say which.
                let shown = match shortage {
                    Shortage::Region(None) => Shortage::Region(Some(c.at.region.clone())),
                    other => other.clone(),
                };
                out.attempts.push(format!(
                    "Placement of {}: {} ({}) had no capacity {shown}.\n  {why}",
                    d.pool,
                    c.label(),
                    c.instance_type
                ));
                failed_at(d, shortage, why, now).map(|f| with_failure(d, f, now))
            }
            None if mine.is_empty() => placed(d, started, now),
            None => None,
        };
        if let Some(r) = record.filter(|r| Some(r) != d.recorded.as_ref()) {
            out.entries.push(Entry::Placement {
                pool: d.pool.clone(),
                placement: Some(r),
            });
        }
    }
    out
}

/// What a failover round tries next for `d`, in words.
pub fn next_try(d: &Decision) -> String {
    match d.chosen() {
        Some(c) => {
            let zones = match d.without_zones.is_empty() {
                true => String::new(),
                false => format!(" without {}", d.without_zones.join(", ")),
            };
            let price = c
                .gpu_hour
                .map(|p| format!(", {} per GPU-hour", p.dollars()))
                .unwrap_or_default();
            format!(
                "Placement of {}: trying {}{zones} ({}{price}).",
                d.pool,
                c.label(),
                c.instance_type
            )
        }
        None => format!("Placement of {}: no candidate left to try.", d.pool),
    }
}

/// The failure an apply's shortage at the decision's chosen candidate
/// records: a zone of it, all of it, or (a quota over every region) the
/// whole cloud.
pub fn failed_at(
    d: &Decision,
    shortage: &Shortage,
    reason: &str,
    now: OffsetDateTime,
) -> Option<PlacementFailure> {
    let c = d.chosen()?;
    // A zone already left out that fails again was not the whole story:
    // the location fails, so failover always moves on.
    let zone = match shortage {
        Shortage::Zone(Some(z)) if c.zones.contains(z) && !d.without_zones.contains(z) => {
            Some(z.clone())
        }
        _ => None,
    };
    Some(PlacementFailure {
        at: c.at.clone(),
        zone,
        cloud_wide: *shortage == Shortage::Cloud,
        instance_type: c.instance_type.clone(),
        reason: reason.to_string(),
        at_time: timestamp(now),
    })
}

/// The pool's record once `failure` is added: failures whose cool-down
/// is over are dropped, the chosen placement is kept.
pub fn with_failure(d: &Decision, failure: PlacementFailure, now: OffsetDateTime) -> PoolPlacement {
    let mut r = d.recorded.clone().unwrap_or_default();
    r.failed.retain(|f| cooling(f, now, d.cool_down));
    r.failed.push(failure);
    r
}

/// How long a new placement may take to show a node with allocatable
/// GPUs, unless the placement block says: the figure the users
/// quote for a GPU node pool coming up.
pub const WAIT_FOR_GPUS: Duration = Duration::from_secs(20 * 60);

/// The pool's record once its first node offers GPUs: when (seconds
/// from the placement's `since`, and where the time went), `gpus`
/// allocatable now.
pub fn first_gpu(record: &PoolPlacement, seen: FirstGpu, gpus: u64) -> PoolPlacement {
    let tenths = |s: f64| (s * 10.0).round() / 10.0;
    let mut r = record.clone();
    if let Some(p) = r.chosen.as_mut() {
        p.first_gpu_after = Some(tenths(seen.after));
        p.pool_created_after = seen.pool_created.map(tenths);
        p.node_joined_after = seen.node_joined.map(tenths);
        p.ready_gpus = Some(gpus);
    }
    r
}

/// The failure of a placement whose nodes offered no GPU in time.
pub fn no_gpus(d: &Decision, waited: Duration, now: OffsetDateTime) -> Option<PlacementFailure> {
    let c = d.chosen()?;
    Some(PlacementFailure {
        at: c.at.clone(),
        zone: None,
        cloud_wide: false,
        instance_type: c.instance_type.clone(),
        reason: format!(
            "no node of the pool offered an allocatable nvidia.com/gpu within {}s (wait_for_gpus)",
            waited.as_secs()
        ),
        at_time: timestamp(now),
    })
}

/// The pool's record once its nodes are where the decision put them.
/// `since` is when the create or resize was asked; a placement that did
/// not move keeps its own.
pub fn placed(d: &Decision, since: OffsetDateTime, now: OffsetDateTime) -> Option<PoolPlacement> {
    let c = d.chosen()?;
    let mut r = d.recorded.clone().unwrap_or_default();
    r.failed.retain(|f| cooling(f, now, d.cool_down));
    let kept = r
        .chosen
        .take()
        .filter(|p| p.at == c.at && p.without_zones == d.without_zones);
    r.chosen = Some(kept.unwrap_or_else(|| Placed {
        at: c.at.clone(),
        instance_type: c.instance_type.clone(),
        without_zones: d.without_zones.clone(),
        since: timestamp(since),
        first_gpu_after: None,
        pool_created_after: None,
        node_joined_after: None,
        ready_gpus: None,
    }));
    Some(r)
}

#[cfg(test)]
mod tests;
