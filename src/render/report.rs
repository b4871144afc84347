//! `strata report` in its three forms: a table for people, JSON rows for
//! tools (one per cloud, region and pool; a figure that is not known is
//! `null`, its reason under `why`), and markdown for a monthly review.

use crate::report::{Figure, FirstGpuFigures, Report, Row};
use serde_json::{json, Value as Json};
use strata_provider::money::Usd;
use time::format_description::well_known::Rfc3339;

/// The period's ends, to the second.
fn period(r: &Report) -> (String, String) {
    let f = |t: time::OffsetDateTime| {
        let whole = t.replace_nanosecond(0).unwrap_or(t);
        whole.format(&Rfc3339).unwrap_or_default()
    };
    (f(r.period.from), f(r.period.to))
}

/// `--format json`.
pub fn json(r: &Report) -> Json {
    let (from, to) = period(r);
    json!({
        "format_version": "1.0",
        "since": from,
        "until": to,
        "observations": r.observations,
        "longest_gap_hours": r.longest_gap_hours.map(|h| round(h, 2)),
        "unreadable_history_lines": r.unreadable,
        "rows": r.rows.iter().map(row_json).collect::<Vec<_>>(),
    })
}

fn row_json(row: &Row) -> Json {
    let mut why = serde_json::Map::new();
    let mut note = |name: &str, w: &Option<String>| {
        if let Some(w) = w {
            why.insert(name.to_string(), json!(w));
        }
    };
    note("gpu_hours", &row.gpu_hours.why);
    note("cost_usd", &row.cost.why);
    note("time_to_first_gpu_seconds", &row.first_gpu.why);
    note("preemption_rate", &row.preemption_rate.why);
    note(
        "preemptions_per_1000_gpu_hours",
        &row.preemptions_per_1000_gpu_hours.why,
    );
    note("egress_bytes", &row.egress_bytes.why);
    let first = row.first_gpu.value.as_ref();
    json!({
        "cloud": row.key.cloud,
        "region": row.key.region,
        "pool": row.key.pool,
        "capacity": row.capacity,
        "gpu_hours": row.gpu_hours.value.map(|h| round(h, 3)),
        "cost_usd": row.cost.value.map(Usd::decimal),
        "time_to_first_gpu_seconds": first.map(|f| round(f.seconds, 1)),
        "time_to_first_gpu_segments": first.map(segments_json),
        "placements": first.map_or(0, |f| f.placements),
        "preemption_rate": row.preemption_rate.value,
        "preemptions_per_1000_gpu_hours": row.preemptions_per_1000_gpu_hours.value,
        "egress_bytes": row.egress_bytes.value,
        "why": why,
    })
}

fn segments_json(f: &FirstGpuFigures) -> Json {
    let r = |v: Option<f64>| v.map(|s| round(s, 1));
    json!({
        "pool_creation": r(f.pool_creation),
        "node_join": r(f.node_join),
        "gpu_ready": r(f.gpu_ready),
    })
}

fn round(v: f64, places: i32) -> f64 {
    let p = 10f64.powi(places);
    (v * p).round() / p
}

/// The columns both tables have, for one row.
fn cells(row: &Row) -> [String; 8] {
    let or_dash = |f: &Figure<String>| match (&f.value, &f.why) {
        (Some(v), Some(_)) => format!("{v}*"),
        (Some(v), None) => v.clone(),
        (None, _) => "—".to_string(),
    };
    let shown = |v: Figure<String>| or_dash(&v);
    [
        format!("{} {}", row.key.cloud, row.key.region),
        row.key.pool.clone(),
        row.capacity.join(", ").replace('_', "-"),
        shown(map(&row.gpu_hours, |h| format!("{h:.1}"))),
        shown(map(&row.cost, |c| c.dollars())),
        shown(map(&row.first_gpu, first_gpu_cell)),
        shown(map(&row.preemption_rate, |p| format!("{:.1} %", p * 100.0))),
        shown(map(&row.egress_bytes, |b| bytes(*b))),
    ]
}

fn map<T>(f: &Figure<T>, show: impl Fn(&T) -> String) -> Figure<String> {
    Figure {
        value: f.value.as_ref().map(show),
        why: f.why.clone(),
    }
}

fn first_gpu_cell(f: &FirstGpuFigures) -> String {
    let part = |v: Option<f64>| v.map_or("?".to_string(), |s| format!("{s:.0}"));
    format!(
        "{:.0}s ({} + {} + {})",
        f.seconds,
        part(f.pool_creation),
        part(f.node_join),
        part(f.gpu_ready)
    )
}

fn bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1000.0 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

const HEADERS: [&str; 8] = [
    "Where",
    "Pool",
    "Capacity",
    "GPU-hours",
    "Cost",
    "First GPU (create + join + ready)",
    "Preempted",
    "Egress",
];

/// Every reason a figure is missing or partial, once each, as notes.
fn notes(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    for row in &r.rows {
        let figures = [
            ("GPU-hours", &row.gpu_hours.why),
            ("cost", &row.cost.why),
            ("time to first GPU", &row.first_gpu.why),
            ("preemption rate", &row.preemption_rate.why),
            ("egress", &row.egress_bytes.why),
        ];
        for (what, why) in figures {
            if let Some(why) = why {
                out.push(format!("{} {} {what}: {why}", row.key.cloud, row.key.pool));
            }
        }
    }
    out
}

fn summary(r: &Report) -> String {
    let (from, to) = period(r);
    let runs = match r.observations {
        1 => "1 drift run".to_string(),
        n => format!("{n} drift runs"),
    };
    let gap = match r.longest_gap_hours {
        Some(h) => format!(
            "at most {h:.1} h apart (a pool's GPUs are taken as steady from one run to the next)"
        ),
        None => "no two runs span it, so nothing is counted".to_string(),
    };
    let mut s = format!("From {from} to {to}: {runs}, {gap}.");
    if r.unreadable > 0 {
        s.push_str(&format!(
            " {} history lines could not be read (written by a newer strata?).",
            r.unreadable
        ));
    }
    s
}

/// For people: a table, then why each missing figure is missing.
pub fn human(r: &Report) -> String {
    if r.rows.is_empty() {
        return format!("{}\nNo placed node pool was observed: run `strata drift` (a cron does) to build the history.\n", summary(r));
    }
    let rows: Vec<[String; 8]> = r.rows.iter().map(cells).collect();
    let widths: Vec<usize> = (0..8)
        .map(|i| {
            rows.iter()
                .map(|c| c[i].chars().count())
                .chain([HEADERS[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = format!("{}\n\n", summary(r));
    out += &line(HEADERS.to_vec());
    for c in &rows {
        out += &line(c.iter().map(String::as_str).collect());
    }
    let notes = notes(r);
    if !notes.is_empty() {
        out += "\n— not known; * partial:\n";
        for n in notes {
            out += &format!("  {n}\n");
        }
    }
    out
}

/// For a monthly review: a markdown table and the notes under it.
pub fn markdown(r: &Report) -> String {
    let mut out = format!("### GPU report\n\n{}\n\n", summary(r));
    out += &format!("| {} |\n", HEADERS.join(" | "));
    out += &format!("|{}\n", "---|".repeat(HEADERS.len()));
    for row in &r.rows {
        out += &format!("| {} |\n", cells(row).join(" | "));
    }
    let notes = notes(r);
    if !notes.is_empty() {
        out += "\n— not known; * partial:\n\n";
        for n in notes {
            out += &format!("- {n}\n");
        }
    }
    out
}
