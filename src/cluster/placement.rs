//! A node pool's `nodes` and `placement` block, read from the spec, and
//! the candidates they allow across the cluster's clouds: each cloud's
//! region with each capacity type, priced from the catalogs, in the order
//! failover tries them. [`crate::placement::choose`] then picks one.

use super::blocks::{self, BlockWanted, ForPool};
pub use super::blocks::{Bought, BoughtBlocks, OfferLookup};
pub use super::reserved::HeldLookup;
use super::reserved::{self, Judge, Place, Reserved};
use super::{diag, known, Catalogs, CloudKind, CAP};
use crate::config::ConfigScope;
use crate::diag::{Diags, Span};
use crate::placement::{self, Candidate, Decision, Purchase, Skipped, Spec};
use crate::syntax::{Attribute, Block, Body};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use strata_provider::billing::Capacity;
use strata_provider::catalog::quote;
use strata_provider::money::Usd;
use strata_provider::score::{ScoreAsk, SCORES};
use strata_state::{Location, PoolPlacement};
use time::OffsetDateTime;

/// The attributes a `placement` block takes.
const FIELDS: &[&str] = &[
    "order",
    "capacity",
    CAP,
    "wait_for_gpus",
    "cool_down",
    "min_score",
    "max_run",
];

/// Asks a cloud for its placement score of each place, through the
/// provider configuration of the region's module call (driver `aws`,
/// call `train_aws`): `Err` says why none could be had.
pub type Scorer<'a> = dyn Fn(&str, &str, &[ScoreAsk]) -> Result<Vec<Option<u8>>, String> + 'a;

/// What state says about placements, and what the command asks of them.
#[derive(Clone)]
pub struct Recorded<'s> {
    /// By `cluster.pool`.
    pub pools: &'s BTreeMap<String, PoolPlacement>,
    /// The root module calls state holds objects of (a region no longer
    /// listed keeps its provider configuration while they are there).
    pub calls: BTreeSet<String>,
    /// Where each MultiKueue manager state holds runs (`aws us-east-1`),
    /// by its call: a manager block that moves it is refused.
    pub managers: BTreeMap<String, String>,
    /// `--replace-placement`: `cluster.pool` or a pool name.
    pub replace: &'s [String],
    pub now: OffsetDateTime,
    /// The clouds' placement scores, asked for pools that set `min_score`
    /// (none before the state is read, nor in `validate`).
    pub scores: Option<&'s Scorer<'s>>,
    /// Reads the reservations pools name (none before the state is read,
    /// nor in `validate`).
    pub held: Option<&'s HeldLookup<'s>>,
    /// Reads the Capacity Blocks pools may buy (likewise).
    pub offers: Option<&'s OfferLookup<'s>>,
    /// The blocks pools bought, as state holds them.
    pub bought: BoughtBlocks,
}

/// A pool's placement as the spec writes it.
pub(super) struct Wanted {
    pub nodes: u64,
    /// Clouds in the order tried; `None`: cheapest first.
    order: Option<(Vec<String>, Span)>,
    /// Capacity types in the order tried.
    pub capacity: Vec<Capacity>,
    /// Where the placement lists them.
    capacity_span: Option<Span>,
    cap: Option<(Usd, Span)>,
    wait_for_gpus: Option<Duration>,
    cool_down: Duration,
    /// How long a flex-start node may run (GKE's default: seven days).
    pub max_run: Option<Duration>,
    /// Scores asked, and below which a candidate is tried last.
    min_score: Option<u8>,
    /// Capacity held ahead, tried first in the order written.
    reserved: Vec<Reserved>,
    /// A Capacity Block to find, and buy when it says so.
    block: Option<BlockWanted>,
}

/// One cloud of the cluster as a place to put nodes: its region's cluster
/// (the module call) and the instance type each pool gets there.
pub(super) struct Site<'k> {
    pub kind: &'k CloudKind,
    pub call: String,
    pub region: String,
    pub zones: Vec<String>,
    /// By pool name.
    pub instance_types: BTreeMap<String, String>,
    /// The capacity type each pool asks for here, by pool name.
    pub capacities: BTreeMap<String, Capacity>,
}

fn duration(scope: &ConfigScope, a: &Attribute, diags: &mut Diags) -> Option<Duration> {
    let v = known(scope, a, diags)?;
    let parsed = v.as_str().and_then(strata_provider::wait::parse_duration);
    if parsed.is_none() {
        diags.push(diag(
            &format!("Invalid {}", a.name),
            format!(
                "{} is a duration such as \"20m\", \"1h\" or \"1h30m\".",
                a.name
            ),
            a.expr.span,
        ));
    }
    parsed
}

/// The longest a flex-start VM runs.
const FLEX_START_MAX_RUN: Duration = Duration::from_secs(7 * 24 * 3600);

/// `max_run`: how long a flex-start node may run, at most seven days, for
/// a placement that tries flex-start.
fn max_run(
    scope: &ConfigScope,
    a: &Attribute,
    capacity: &[Capacity],
    diags: &mut Diags,
) -> Option<Duration> {
    let d = duration(scope, a, diags)?;
    let why = if !capacity.contains(&Capacity::FlexStart) {
        Some("max_run is how long a flex-start node may run; the placement's capacity lists no \"flex_start\".")
    } else if d.is_zero() || d > FLEX_START_MAX_RUN {
        Some("A flex-start node runs at most seven days: max_run is from \"1m\" to \"168h\".")
    } else {
        None
    };
    match why {
        Some(why) => {
            diags.push(diag("Invalid max_run", why, a.expr.span));
            None
        }
        None => Some(d),
    }
}

fn strings(scope: &ConfigScope, a: &Attribute, diags: &mut Diags) -> Option<Vec<String>> {
    let items = super::string_list(&known(scope, a, diags)?);
    if items.is_none() {
        diags.push(diag(
            &format!("Invalid {}", a.name),
            format!("{} is a list of strings.", a.name),
            a.expr.span,
        ));
    }
    items
}

/// The pool's `nodes` and `placement` block; `None` when it has no
/// `nodes` (its size is then min_nodes everywhere, as before).
pub(super) fn wanted(pool: &Block, scope: &ConfigScope, diags: &mut Diags) -> Option<Wanted> {
    let block = super::single(&pool.body, "placement", diags);
    let (nodes, nodes_attr) = nodes_of(pool, scope, diags)?;
    if let Some(b) = block {
        super::allowed(
            b,
            "placement",
            FIELDS,
            &["reserved", "capacity_block"],
            diags,
        );
    }
    let field = |name: &str| block.and_then(|b: &Body| b.attr(name));
    check_size(pool, nodes, nodes_attr.expr.span, scope, diags);
    let order = field("order").and_then(|a| Some((strings(scope, a, diags)?, a.expr.span)));
    let pool_capacity = pool
        .body
        .attr("capacity")
        .and_then(|a| known(scope, a, diags))
        .and_then(|v| v.as_str().map(str::to_string));
    let capacity = match field("capacity") {
        Some(a) => capacities(a, strings(scope, a, diags)?, diags)?,
        None => vec![match pool_capacity.as_deref() {
            Some("spot") => Capacity::Spot,
            _ => Capacity::OnDemand,
        }],
    };
    let capacity_span = field("capacity").map(|a| a.expr.span);
    let cap = match field(CAP).or_else(|| pool.body.attr(CAP)) {
        Some(a) => Some(cap_of(a, scope, diags)?),
        None => None,
    };
    let wait_for_gpus = match field("wait_for_gpus") {
        Some(a) => Some(duration(scope, a, diags)?),
        None => None,
    };
    let cool_down = match field("cool_down") {
        Some(a) => duration(scope, a, diags)?,
        None => placement::COOL_DOWN,
    };
    let max_run = match field("max_run") {
        Some(a) => Some(max_run(scope, a, &capacity, diags)?),
        None => None,
    };
    let min_score = match field("min_score") {
        Some(a) => Some(min_score(scope, a, diags)?),
        None => None,
    };
    let reserved = block.map_or_else(Vec::new, |b| reserved::read(b, scope, diags));
    let capacity_block = block.and_then(|b| blocks::read(b, scope, diags));
    Some(Wanted {
        nodes,
        order,
        capacity,
        capacity_span,
        cap,
        wait_for_gpus,
        cool_down,
        max_run,
        min_score,
        reserved,
        block: capacity_block,
    })
}

/// The pool's `nodes` (a placement block places them: without them it is
/// an error), and where it is written.
fn nodes_of<'p>(
    pool: &'p Block,
    scope: &ConfigScope,
    diags: &mut Diags,
) -> Option<(u64, &'p Attribute)> {
    let Some(nodes_attr) = pool.body.attr("nodes") else {
        if let Some(b) = pool.body.blocks.iter().find(|b| b.kind == "placement") {
            diags.push(diag(
                "Missing nodes",
                "A placement block places the pool's `nodes`: say how many nodes are wanted running, such as nodes = 2.",
                b.kind_span,
            ));
        }
        return None;
    };
    let nodes = known(scope, nodes_attr, diags)?;
    let Some(nodes) = nodes
        .as_number()
        .filter(|n| n.is_integer())
        .and_then(|n| n.to_i64())
        .filter(|n| *n >= 1)
    else {
        diags.push(diag(
            "Invalid nodes",
            "nodes is a whole number of at least 1: the nodes wanted running, which strata places.",
            nodes_attr.expr.span,
        ));
        return None;
    };
    let nodes = nodes as u64;
    Some((nodes, nodes_attr))
}

/// The price cap (the placement's, else the pool's) and where it is.
fn cap_of(a: &Attribute, scope: &ConfigScope, diags: &mut Diags) -> Option<(Usd, Span)> {
    let v = known(scope, a, diags)?;
    let amount = super::pricing::cap_amount(&v, a.expr.span, diags)?;
    Some((amount, a.expr.span))
}

/// `min_score`: 0 (scores order equal prices, nothing is tried last) to 10.
fn min_score(scope: &ConfigScope, a: &Attribute, diags: &mut Diags) -> Option<u8> {
    let v = known(scope, a, diags)?;
    let n = v
        .as_number()
        .filter(|n| n.is_integer())
        .and_then(|n| n.to_i64())
        .and_then(|n| u8::try_from(n).ok())
        .filter(|n| *n <= *SCORES.end());
    if n.is_none() {
        diags.push(diag(
            "Invalid min_score",
            "min_score is a whole number from 0 to 10: the placement score (10 most likely to get capacity) below which a candidate is tried only after the others.",
            a.expr.span,
        ));
    }
    n
}

fn capacities(a: &Attribute, names: Vec<String>, diags: &mut Diags) -> Option<Vec<Capacity>> {
    let mut out = Vec::new();
    for n in names {
        let Some(c) = Capacity::named(&n) else {
            diags.push(diag(
                "Invalid capacity",
                format!("{n:?} is not a capacity type; they are \"spot\", \"on_demand\", \"flex_start\" and \"queued\" (GKE only), listed in the order to try them."),
                a.expr.span,
            ));
            return None;
        };
        if !out.contains(&c) {
            out.push(c);
        }
    }
    if out.is_empty() {
        diags.push(diag(
            "Invalid capacity",
            "capacity lists at least one capacity type to try.",
            a.expr.span,
        ));
        return None;
    }
    let queued_at = out.iter().position(|c| *c == Capacity::Queued);
    if queued_at.is_some_and(|i| i + 1 < out.len()) {
        diags.push(diag(
            "Invalid capacity",
            "\"queued\" never fails to place (its nodes come when Kueue admits a job and GKE finds them), so what is listed after it would never be tried: list it last.",
            a.expr.span,
        ));
        return None;
    }
    Some(out)
}

/// `ordered` with queued-provisioning candidates moved after every other
/// (in their order): a queued pool is placed at once and waits for its
/// jobs, so it is the place of last resort, after every other cloud and
/// region has been tried.
fn queued_last(ordered: Vec<Candidate>) -> Vec<Candidate> {
    let queued = |c: &Candidate| c.at.capacity == Capacity::Queued.name();
    let (last, first): (Vec<_>, Vec<_>) = ordered.into_iter().partition(queued);
    first.into_iter().chain(last).collect()
}

/// `nodes` fits between the pool's min_nodes and max_nodes.
fn check_size(pool: &Block, nodes: u64, span: Span, scope: &ConfigScope, diags: &mut Diags) {
    let number = |name: &str| {
        let a = pool.body.attr(name)?;
        let v = scope.evaluator().eval(&a.expr).ok()?;
        v.unmarked().as_number().and_then(|n| n.to_i64())
    };
    let max = number("max_nodes").unwrap_or(1);
    if nodes as i64 > max {
        diags.push(diag(
            "Invalid nodes",
            format!("nodes is {nodes}, more than max_nodes ({max}): the pool could not hold them."),
            span,
        ));
    }
}

/// Every place the pool's nodes may go, in the order tried, and the
/// places the price cap rules out.
fn candidates(
    pool: &str,
    w: &Wanted,
    sites: &[&Site<'_>],
    catalogs: &Catalogs<'_>,
    gpus_per_node: u64,
) -> (Vec<Candidate>, Vec<Skipped>) {
    let mut by_cloud: Vec<(usize, Vec<Candidate>)> = Vec::new();
    let mut refused = Vec::new();
    for (i, site) in sites.iter().enumerate() {
        let Some(instance_type) = site.instance_types.get(pool) else {
            continue;
        };
        let mut found = Vec::new();
        for capacity in w.capacity.iter().filter(|c| site.kind.offers(**c)) {
            let c = candidate(site, instance_type, *capacity, catalogs, gpus_per_node);
            match over_cap(w, &c) {
                Some(why) => refused.push(Skipped { why, candidate: c }),
                None => found.push(c),
            }
        }
        by_cloud.push((i, found));
    }
    // A cloud's regions stay together in the order listed (sites come so,
    // and the sorts are stable): region before cloud.
    let cloud = |i: usize| sites[i].kind.name;
    match &w.order {
        Some((order, _)) => by_cloud.sort_by_key(|(i, _)| {
            order
                .iter()
                .position(|c| c == cloud(*i))
                .unwrap_or(usize::MAX)
        }),
        // Cheapest first, by what each cloud's first priced candidate (in
        // its first region with one) costs — an unpriced first rung
        // (flex-start without a price list) does not send its cloud last;
        // a cloud nothing prices goes last.
        None => {
            let first_price = |name: &str| {
                by_cloud
                    .iter()
                    .filter(|(i, _)| cloud(*i) == name)
                    .find_map(|(_, cs)| cs.iter().find_map(|c| c.gpu_hour))
            };
            let rank: BTreeMap<&str, Option<Usd>> = by_cloud
                .iter()
                .map(|(i, _)| (cloud(*i), first_price(cloud(*i))))
                .collect();
            by_cloud.sort_by_key(|(i, _)| {
                let price = rank[cloud(*i)];
                (price.is_none(), price)
            });
        }
    }
    let ordered = by_cloud.into_iter().flat_map(|(_, cs)| cs).collect();
    (ordered, refused)
}

/// The place at `site` with `capacity`, priced by the GPU-hour.
fn candidate(
    site: &Site<'_>,
    instance_type: &str,
    capacity: Capacity,
    catalogs: &Catalogs<'_>,
    gpus_per_node: u64,
) -> Candidate {
    let (catalog, prices) = (catalogs.of(site.kind), &catalogs.prices);
    let q = quote(catalog, prices, instance_type, &site.region, capacity);
    Candidate {
        at: Location {
            cloud: site.kind.name.to_string(),
            region: site.region.clone(),
            capacity: capacity.name().to_string(),
            reservation: None,
        },
        call: site.call.clone(),
        instance_type: instance_type.to_string(),
        gpu_hour: q.ok().and_then(|q| q.node_hour.per(gpus_per_node as u32)),
        zones: site.zones.clone(),
        node_label: site.kind.pool_label.to_string(),
        score: None,
        held: None,
    }
}

/// Why the pool's price cap rules `c` out, if it does.
fn over_cap(w: &Wanted, c: &Candidate) -> Option<String> {
    match (w.cap, c.gpu_hour) {
        (Some((cap, _)), Some(p)) if p > cap => {
            let (price, cap) = p.apart(cap);
            Some(format!("{price} per GPU-hour, over the cap of {cap}"))
        }
        (Some(_), None) => Some(format!(
            "{} has no price here, and the pool has a price cap",
            c.instance_type
        )),
        _ => None,
    }
}

/// `ordered` with each cloud's placement scores, ranked by them
/// ([`placement::rank`]); and the clouds that gave none, with why.
fn scored(
    mut ordered: Vec<Candidate>,
    w: &Wanted,
    sites: &[&Site<'_>],
    scorer: &Scorer<'_>,
    min: u8,
) -> (Vec<Candidate>, Vec<String>) {
    let mut unscored = Vec::new();
    for site in sites {
        let at: Vec<usize> = (0..ordered.len())
            .filter(|i| ordered[*i].call == site.call)
            .collect();
        if at.is_empty() {
            continue;
        }
        let asks: Vec<ScoreAsk> = at
            .iter()
            .map(|i| ScoreAsk {
                region: ordered[*i].at.region.clone(),
                instance_type: ordered[*i].instance_type.clone(),
                spot: ordered[*i].at.capacity == Capacity::Spot.name(),
                nodes: w.nodes,
            })
            .collect();
        match scorer(site.kind.provider.0, &site.call, &asks) {
            Ok(scores) => {
                for (i, s) in at.iter().zip(scores) {
                    ordered[*i].score = s;
                }
            }
            Err(why) => unscored.push(format!("{} {}: {why}", site.kind.name, site.region)),
        }
    }
    (placement::rank(ordered, min, w.order.is_some()), unscored)
}

/// The pool held capacity is judged for, and the reservation state has
/// its nodes on.
struct HeldOn<'a> {
    pool: &'a str,
    placed_on: Option<&'a str>,
}

/// The candidates on held capacity ahead of `ordered`, those its rules
/// keep the nodes off now beside `refused` (with the Capacity Block found
/// to buy, or why none), and the block the pool buys.
fn with_held(
    ordered: Vec<Candidate>,
    refused: Vec<Skipped>,
    on: &HeldOn<'_>,
    w: &Wanted,
    sites: &[&Site<'_>],
    recorded: &Recorded<'_>,
    diags: &mut Diags,
) -> (Vec<Candidate>, Vec<Skipped>, Option<Purchase>) {
    if w.reserved.is_empty() && w.block.is_none() {
        return (ordered, refused, None);
    }
    let places: Vec<Place<'_>> = sites
        .iter()
        .filter_map(|s| {
            Some(Place {
                cloud: s.kind.name,
                provider: s.kind.provider.0,
                region: &s.region,
                call: &s.call,
                instance_type: s.instance_types.get(on.pool)?,
                node_label: s.kind.pool_label,
            })
        })
        .collect();
    let judge = Judge {
        pool: on.pool,
        nodes: w.nodes,
        lookup: recorded.held,
        now: recorded.now,
        placed_on: on.placed_on,
    };
    let for_pool = ForPool {
        pool: on.pool,
        nodes: w.nodes,
        bought: &recorded.bought,
        offers: recorded.offers,
    };
    let block = match &w.block {
        Some(b) => blocks::consider(b, &places, &for_pool, diags),
        None => blocks::BlockOutcome::default(),
    };
    // The block bought for the pool first: it was bought for these nodes.
    let all: Vec<Reserved> = block
        .held
        .into_iter()
        .chain(w.reserved.iter().cloned())
        .collect();
    let (mut held, skipped) = reserved::candidates(&all, &places, &judge, diags);
    held.extend(ordered);
    let skipped = skipped
        .into_iter()
        .chain(block.shown)
        .chain(refused)
        .collect();
    (held, skipped, block.purchase)
}

/// Checks `order` against the cluster's clouds.
fn check_order(w: &Wanted, sites: &[&Site<'_>], diags: &mut Diags) {
    let Some((order, span)) = &w.order else {
        return;
    };
    for name in order {
        if !sites.iter().any(|s| s.kind.name == name) {
            // A cloud in two regions is two sites and one name.
            let clouds: Vec<&str> = sites
                .iter()
                .map(|s| s.kind.name)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            diags.push(diag(
                "Unknown cloud in placement order",
                format!("{name:?} is not one of the clouds this cluster runs on with GPU catalogs ({}).", clouds.join(", ")),
                *span,
            ));
        }
    }
}

/// Each capacity type listed is one some cloud of the pool offers.
fn check_capacities(w: &Wanted, sites: &[&Site<'_>], diags: &mut Diags) {
    let Some(span) = w.capacity_span else {
        return;
    };
    for c in &w.capacity {
        if sites.iter().any(|s| s.kind.offers(*c)) {
            continue;
        }
        let offering: Vec<&str> = super::clouds::CLOUDS
            .iter()
            .filter(|k| k.offers(*c))
            .map(|k| k.name)
            .collect();
        diags.push(diag(
            "Capacity type not offered",
            format!(
                "{:?} is a capacity type of {} only, and the pool runs on none of them here.",
                c.name(),
                offering.join(", ")
            ),
            span,
        ));
    }
}

/// The decision for one pool of cluster `cluster`.
#[allow(clippy::too_many_arguments)]
pub(super) fn decide(
    cluster: &str,
    pool: &Block,
    name: &str,
    w: &Wanted,
    sites: &[&Site<'_>],
    catalogs: &Catalogs<'_>,
    recorded: &Recorded<'_>,
    scope: &ConfigScope,
    diags: &mut Diags,
) -> Decision {
    check_order(w, sites, diags);
    check_capacities(w, sites, diags);
    let text = |field: &str| {
        pool.body
            .attr(field)
            .and_then(|a| scope.evaluator().eval(&a.expr).ok())
            .map(|v| v.unmark_deep().0)
    };
    let gpu = text("gpu")
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let gpus_per_node = text("gpus_per_node")
        .and_then(|v| v.as_number().and_then(|n| n.to_i64()))
        .map_or(8, |n| n.max(1) as u64);
    let key = format!("{cluster}.{name}");
    let (ordered, refused) = candidates(name, w, sites, catalogs, gpus_per_node);
    let (ordered, unscored) = match (w.min_score, recorded.scores) {
        (Some(min), Some(scorer)) => scored(ordered, w, sites, scorer, min),
        _ => (ordered, Vec::new()),
    };
    let ordered = queued_last(ordered);
    let placed_on = recorded
        .pools
        .get(&key)
        .and_then(|r| r.chosen.as_ref())
        .and_then(|p| p.at.reservation.as_deref());
    let held_on = HeldOn {
        pool: name,
        placed_on,
    };
    let (ordered, refused, purchase) =
        with_held(ordered, refused, &held_on, w, sites, recorded, diags);
    let replace = recorded.replace.iter().any(|r| *r == key || r == name);
    let mut d = placement::choose(
        Spec {
            pool: key,
            nodes: w.nodes,
            gpu,
            gpus_per_node,
            cool_down: w.cool_down,
            wait_for_gpus: w.wait_for_gpus,
            min_score: w.min_score,
            unscored,
        },
        ordered,
        refused,
        recorded.pools.get(&format!("{cluster}.{name}")),
        recorded.now,
        replace,
    );
    d.purchase = purchase;
    if d.candidates.is_empty() && d.skipped.iter().all(|s| !s.why.starts_with("no capacity")) {
        let span = w.cap.map_or(pool.kind_span, |(_, s)| s);
        diags.push(diag(
            "No placement within the price cap",
            format!(
                "node_pool {name:?} has nowhere to go: {}.",
                d.skipped
                    .iter()
                    .map(|s| format!("{} ({})", s.candidate.label(), s.why))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            span,
        ));
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(cloud: &str, capacity: &str) -> Candidate {
        Candidate {
            at: Location {
                cloud: cloud.into(),
                region: "r".into(),
                capacity: capacity.into(),
                reservation: None,
            },
            call: cloud.into(),
            instance_type: "t".into(),
            gpu_hour: None,
            zones: Vec::new(),
            node_label: String::new(),
            score: None,
            held: None,
        }
    }

    #[test]
    fn queued_places_go_after_every_other_in_their_order() {
        let ordered = vec![
            at("gcp", "spot"),
            at("gcp", "queued"),
            at("aws", "spot"),
            at("gcp2", "queued"),
            at("aws", "on_demand"),
        ];
        let labels: Vec<String> = queued_last(ordered).iter().map(Candidate::label).collect();
        assert_eq!(
            labels,
            [
                "gcp r spot",
                "aws r spot",
                "aws r on-demand",
                "gcp r queued",
                "gcp2 r queued"
            ]
        );
    }
}
