//! A plan's cost for people: a table of node pools (what each costs by
//! the hour at its fewest and most nodes, and the change from the prior
//! state), the control planes' fees, a line per cloud and the total, hourly
//! and monthly; and what could not be priced. Plain text for the terminal,
//! a table for the pull-request comment.

use crate::cost::{Cost, FeeCost, Hourly, PoolCost, Total};
use strata_provider::billing::{Count, Nodes};
use strata_provider::money::{Usd, HOURS_PER_MONTH};

const HEADERS: [&str; 10] = [
    "pool",
    "cloud · region",
    "instance type",
    "capacity",
    "GPUs",
    "$/GPU-h",
    "nodes",
    "$/h at min",
    "$/h at max",
    "change at max",
];

fn amount(u: Option<Usd>) -> String {
    u.map_or("unknown".into(), Usd::dollars)
}

fn count(c: &Count) -> String {
    c.known().map_or("?".into(), |n| n.to_string())
}

/// `0–4`, or `2` for a pool of a fixed size.
fn bounds(n: &Nodes) -> String {
    match n.min == n.max {
        true => count(&n.max),
        false => format!("{}–{}", count(&n.min), count(&n.max)),
    }
}

fn nodes(p: &PoolCost) -> String {
    let now = bounds(&p.nodes);
    match &p.prior {
        Some(prior) if prior.nodes.min != p.nodes.min || prior.nodes.max != p.nodes.max => {
            format!("{now} (was {})", bounds(&prior.nodes))
        }
        _ => now,
    }
}

fn change(now: Option<Usd>, was: Option<Usd>) -> String {
    match (now, was) {
        (Some(n), Some(w)) => (n - w).signed_dollars(),
        _ => "unknown".into(),
    }
}

fn pool_row(p: &PoolCost) -> Vec<String> {
    let gpus = match &p.gpu {
        Some((g, n)) => format!("{n}×{g}"),
        None => "—".into(),
    };
    let zones = match p.zones {
        Some(z) if z > 1 => format!(" ({z} zones)"),
        _ => String::new(),
    };
    let h = p.hourly();
    let change = match &p.prior {
        None => "new".into(),
        Some(_) => change(h.max, p.prior_hourly().max),
    };
    vec![
        p.label(),
        format!("{} · {}{zones}", p.cloud, p.region),
        p.instance_type.clone(),
        match &p.committed {
            Some(c) => format!("{} (committed)", c.kind.replace('_', "-")),
            None => p.capacity.name().replace('_', "-"),
        },
        gpus,
        p.gpu_hour().map_or("—".into(), Usd::dollars),
        nodes(p),
        amount(h.min),
        amount(h.max),
        change,
    ]
}

/// `$0.10–$393.38/h ($73.00–$287 167.40/month)`.
fn range(h: Hourly) -> String {
    let month = |u: Option<Usd>| u.map(|u| u.times(HOURS_PER_MONTH));
    let span = |a: Option<Usd>, b: Option<Usd>| match (a, b) {
        (Some(a), Some(b)) if a == b => a.dollars(),
        _ => format!("{}–{}", amount(a), amount(b)),
    };
    format!(
        "{}/h ({}/month)",
        span(h.min, h.max),
        span(month(h.min), month(h.max))
    )
}

/// `+$1 180.00/h at max` (or at min too, when that changed).
fn headline(t: &Total) -> String {
    let Some(at_max) = t.change_at_max() else {
        return "change at max not known until apply".into();
    };
    let mut out = format!("{}/h at max", at_max.signed_dollars());
    if let Some(min) = t.change_at_min().filter(|m| *m != Usd::ZERO) {
        out.push_str(&format!(", {}/h at min", min.signed_dollars()));
    }
    out
}

fn summary_lines(cost: &Cost) -> Vec<(String, String)> {
    let mut lines: Vec<(String, String)> = cost
        .clouds()
        .into_iter()
        .map(|c| {
            let t = cost.total(Some(&c));
            (c, line(&t))
        })
        .collect();
    lines.push(("total".into(), line(&cost.total(None))));
    lines
}

fn line(t: &Total) -> String {
    format!(
        "{}, was {}: {}",
        range(t.hourly),
        range(t.prior_hourly).split(" (").next().unwrap_or_default(),
        headline(t)
    )
}

fn sources(cost: &Cost) -> String {
    let mut all: Vec<String> = cost
        .pools
        .iter()
        .map(|p| p.price_source.clone())
        .chain(cost.fees.iter().map(|f| f.source.clone()))
        .collect();
    all.sort();
    all.dedup();
    all.join("; ")
}

/// Pads each column to its widest cell; money and counts to the right.
fn aligned(rows: &[Vec<String>]) -> String {
    let cols = rows.first().map_or(0, Vec::len);
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols).map(width).collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::from(" ");
        for (i, cell) in r.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            line.push(' ');
            match i >= 7 {
                true => line.push_str(&format!("{}{cell}", " ".repeat(pad))),
                false => line.push_str(&format!("{cell}{}", " ".repeat(pad))),
            }
            line.push(' ');
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The cost section of `strata plan` and `strata cost`: empty when the
/// plan bills nothing.
pub fn human(cost: &Cost) -> String {
    if cost.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nCost by the hour (list prices in USD, not a bill):\n\n");
    if !cost.pools.is_empty() {
        let mut rows = vec![HEADERS.iter().map(|h| h.to_string()).collect()];
        rows.extend(cost.pools.iter().map(pool_row));
        out.push_str(&aligned(&rows));
        out.push('\n');
    }
    for f in &cost.fees {
        out.push_str(&format!("  {}: {}\n", f.addr, fee(f)));
    }
    if !cost.fees.is_empty() {
        out.push('\n');
    }
    for (who, text) in summary_lines(cost) {
        out.push_str(&format!("  {who:<6} {text}\n"));
    }
    let mut notes = |title: &str, lines: Vec<(String, String)>| {
        if !lines.is_empty() {
            out.push_str(&format!("\n  {title}:\n"));
            for (what, why) in lines {
                out.push_str(&format!("    {what}: {why}\n"));
            }
        }
    };
    notes(
        "Bought by this apply, once (a purchase is final; not in the hourly figures)",
        purchases(cost),
    );
    notes(
        "Committed (held ahead, paid whether used or not)",
        committed(cost),
    );
    notes("Node counts not known until apply", cost.unknown_counts());
    notes(
        "Not priced (not counted above)",
        cost.unpriced
            .iter()
            .map(|u| (u.label(), u.why.clone()))
            .collect(),
    );
    out.push_str(&format!("\n  {}\n", footnote(cost)));
    out
}

/// Each purchase: the module buying it, what, and what it costs.
fn purchases(cost: &Cost) -> Vec<(String, String)> {
    cost.purchases
        .iter()
        .map(|p| {
            (
                format!("module.{}", p.call),
                format!("{}, {}", p.what, p.amount.dollars()),
            )
        })
        .collect()
}

/// Each pool on held capacity: what it is on, until when, and what of it
/// is left unused (and what that bills).
fn committed(cost: &Cost) -> Vec<(String, String)> {
    cost.pools
        .iter()
        .filter_map(|p| Some((p.label(), committed_terms(p.committed.as_ref()?))))
        .collect()
}

/// `reserved cr-0abc until cancelled: 2 of 3 instances used, 1 unused ($55.04/h billed for it)`.
pub fn committed_terms(c: &crate::cost::Committed) -> String {
    let term = match &c.ends {
        Some(e) => format!("until {e}"),
        None => "until cancelled".into(),
    };
    let used = match (c.instances, c.unused(), c.unused_hour()) {
        (Some(n), Some(0), _) => format!("all {n} instances used"),
        (Some(n), Some(u), Some(h)) if h > Usd::ZERO => format!(
            "{} of {n} instances used, {u} unused ({}/h billed for them)",
            c.used,
            h.dollars()
        ),
        (Some(n), Some(u), _) => format!(
            "{} of {n} instances used, {u} unused (paid up front)",
            c.used
        ),
        _ => format!("{} nodes; its size is read once the state is", c.used),
    };
    format!("{} {} {term}: {used}", c.kind.replace('_', "-"), c.id)
}

/// `EKS control plane, standard support in us-east-1, $0.10/h (new)`.
fn fee(f: &FeeCost) -> String {
    let now = match (f.hourly, f.prior) {
        (Some(h), None) => format!("{}/h (new)", h.dollars()),
        (None, Some(p)) => format!("removed (was {}/h)", p.dollars()),
        (Some(h), Some(p)) if h != p => format!("{}/h (was {}/h)", h.dollars(), p.dollars()),
        (h, _) => format!("{}/h", amount(h)),
    };
    format!("{} in {}, {now}", f.what, f.region)
}

/// `Prices: AWS catalog 2026-11-30; 730 hours a month.`
fn footnote(cost: &Cost) -> String {
    match sources(cost) {
        s if s.is_empty() => format!("{HOURS_PER_MONTH} hours a month."),
        s => format!("Prices: {s}; {HOURS_PER_MONTH} hours a month."),
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The cost as the pull-request comment shows it: the total's change
/// first, then the pools and the clouds.
/// `strata cost --format json`: the cost, with the placed pools and the
/// MultiKueue managers' workers in order when there are any.
pub fn json(
    cost: &Cost,
    placements: &[crate::placement::Decision],
    dispatch: &[crate::placement::Dispatch],
) -> String {
    let mut j = cost.to_json();
    if let (Some(o), false) = (j.as_object_mut(), placements.is_empty()) {
        o.insert("placements".into(), crate::placement::to_json(placements));
    }
    if let (Some(o), false) = (j.as_object_mut(), dispatch.is_empty()) {
        let all = dispatch.iter().map(|d| d.to_json()).collect();
        o.insert("dispatch".into(), serde_json::Value::Array(all));
    }
    format!("{j}\n")
}

pub fn markdown(cost: &Cost) -> String {
    if cost.is_empty() {
        return String::new();
    }
    let total = cost.total(None);
    let mut out = format!(
        "**Cost: {}** ({} → {} at max; list prices, not a bill)\n\n",
        headline(&total),
        amount(total.prior_hourly.max) + "/h",
        amount(total.hourly.max) + "/h"
    );
    if !cost.pools.is_empty() {
        out.push_str(&format!("| {} |\n", HEADERS.join(" | ")));
        out.push_str(&format!("|{}\n", " --- |".repeat(HEADERS.len())));
        for p in &cost.pools {
            let row: Vec<String> = pool_row(p).iter().map(|c| cell(c)).collect();
            out.push_str(&format!("| `{}` | {} |\n", row[0], row[1..].join(" | ")));
        }
        out.push('\n');
    }
    for f in &cost.fees {
        out.push_str(&format!("- `{}`: {}\n", f.addr, fee(f)));
    }
    for (who, text) in summary_lines(cost) {
        out.push_str(&format!("- **{who}**: {text}\n"));
    }
    for (module, what) in purchases(cost) {
        out.push_str(&format!(
            "- `{module}`: **bought once by this apply**: {what}\n"
        ));
    }
    for (pool, terms) in committed(cost) {
        out.push_str(&format!("- `{pool}`: committed: {terms}\n"));
    }
    for (pool, why) in cost.unknown_counts() {
        out.push_str(&format!("- `{pool}`: node count unknown: {why}\n"));
    }
    for u in &cost.unpriced {
        out.push_str(&format!("- not priced: `{}`: {}\n", u.label(), u.why));
    }
    out.push_str(&format!("\n<sub>{}</sub>\n\n", footnote(cost)));
    out
}
