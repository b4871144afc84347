//! A plan's placements for people: each placed pool's candidates in the
//! order they are tried, with prices, the one its nodes go to, and what is
//! passed over and why. "Apply does what the plan said": the plan says
//! "the first of these with capacity".

use crate::placement::{label, Decision, Dispatch, Why};
use std::collections::BTreeMap;

/// The human rendering; empty when no pool is placed.
pub fn human(decisions: &[Decision]) -> String {
    let mut out = String::new();
    for d in decisions {
        out.push_str(&format!(
            "\nPlacement of {}: {} × {}×{} on the first of these with capacity:\n",
            d.pool, d.nodes, d.gpus_per_node, d.gpu
        ));
        for (i, c) in d.candidates.iter().enumerate() {
            let mark = if d.chosen == Some(i) { "→" } else { " " };
            let price = c
                .gpu_hour
                .map(|p| format!("{}/GPU-h", p.dollars()))
                .unwrap_or_else(|| "unpriced".into());
            let note = match d.chosen == Some(i) {
                true => format!("  ({})", chosen_note(d)),
                false => String::new(),
            };
            out.push_str(&format!(
                "  {mark} {}. {:<28} {:<26} {price:>14}{}{note}\n",
                i + 1,
                c.label(),
                c.instance_type,
                score(d, c)
            ));
        }
        if d.candidates.is_empty() {
            out.push_str("    none: the nodes run nowhere until a cool-down ends\n");
        }
        for u in &d.unscored {
            out.push_str(&format!("    no placement scores from {u}\n"));
        }
        for s in &d.skipped {
            out.push_str(&format!("    skipped {}: {}\n", s.candidate.label(), s.why));
        }
    }
    out
}

/// A candidate's placement score, when scores were asked: `score 9`,
/// and a low one says it is tried after the others.
fn score(d: &Decision, c: &crate::placement::Candidate) -> String {
    let Some(min) = d.min_score else {
        return String::new();
    };
    match c.score {
        Some(s) if s < min => {
            format!("  score {s:>2}, under min_score {min}: tried after the others")
        }
        Some(s) => format!("  score {s:>2}"),
        None => "  score  -".to_string(),
    }
}

/// Each MultiKueue manager's workers in the order jobs try them, with
/// the price that put them there, and those left out; empty when there
/// is no manager.
pub fn dispatch_human(all: &[Dispatch]) -> String {
    let mut out = String::new();
    for d in all {
        out.push_str(&format!(
            "\nMultiKueue of {}: a job submitted to the manager (module.{}) runs on the first of these workers with room:\n",
            d.cluster, d.manager
        ));
        for (i, w) in d.workers.iter().enumerate() {
            out.push_str(&format!(
                "    {}. {:<32} {:>14}\n",
                i + 1,
                w.name,
                gpu_hour(w)
            ));
        }
        for l in &d.left_out {
            out.push_str(&format!("    left out {}: {}\n", l.worker.name, l.why));
        }
    }
    out
}

/// The markdown rendering of [`dispatch_human`].
pub fn dispatch_markdown(all: &[Dispatch]) -> String {
    let mut out = String::new();
    for d in all {
        let workers: Vec<String> = d
            .workers
            .iter()
            .map(|w| format!("`{}` {}", w.name, gpu_hour(w)))
            .collect();
        out.push_str(&format!(
            "**MultiKueue of `{}`**: jobs run on the first with room of {}.\n",
            d.cluster,
            workers.join(" → ")
        ));
        for l in &d.left_out {
            out.push_str(&format!("Left out `{}`: {}.\n", l.worker.name, l.why));
        }
        out.push('\n');
    }
    out
}

fn gpu_hour(w: &crate::placement::Worker) -> String {
    w.gpu_hour
        .map(|p| format!("{}/GPU-h", p.dollars()))
        .unwrap_or_else(|| "unpriced".into())
}

/// Why the chosen candidate, and where the nodes move from.
fn chosen_note(d: &Decision) -> String {
    let mut note = match d.why {
        Why::First => "the first".to_string(),
        Why::Recorded => "where they are".to_string(),
        Why::Replaced => "--replace-placement".to_string(),
        Why::CoolDownEnded => "a better place's cool-down ended".to_string(),
    };
    if !d.without_zones.is_empty() {
        note.push_str(&format!(", without {}", d.without_zones.join(", ")));
    }
    let was = d.recorded.as_ref().and_then(|r| r.chosen.as_ref());
    if let (true, Some(w)) = (d.moves(), was) {
        note.push_str(&format!("; moves from {}", label(&w.at)));
    }
    note
}

/// The markdown rendering, for a pull-request comment.
pub fn markdown(decisions: &[Decision]) -> String {
    let mut out = String::new();
    for d in decisions {
        out.push_str(&format!(
            "**Placement of `{}`**: {} × {}×{} on the first with capacity of ",
            d.pool, d.nodes, d.gpus_per_node, d.gpu
        ));
        let items: Vec<String> = d
            .candidates
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let price = c
                    .gpu_hour
                    .map(|p| format!(" {}/GPU-h", p.dollars()))
                    .unwrap_or_default();
                let text = format!("{} {}{price}{}", c.label(), c.instance_type, score(d, c));
                match d.chosen == Some(i) {
                    true => format!("**{text}** ({})", chosen_note(d)),
                    false => text,
                }
            })
            .collect();
        out.push_str(&match items.is_empty() {
            true => "nothing: every candidate is cooling down or over the cap".to_string(),
            false => items.join(" → "),
        });
        out.push_str(".\n\n");
    }
    out
}

/// Where each placed pool's nodes are, as state records them, for `strata
/// cost` and the drift report: since when, the time to its first GPU, and
/// the GPUs allocatable (`ready_now` by pool when looked at now, else when
/// placed). Empty when nothing is placed yet.
pub fn standing(decisions: &[Decision], ready_now: &BTreeMap<String, u64>) -> String {
    let lines: Vec<String> = decisions
        .iter()
        .filter_map(|d| {
            let p = d.recorded.as_ref()?.chosen.as_ref()?;
            let first = match p.first_gpu_after {
                Some(s) => format!("first GPU after {s:.1}s"),
                None => "no GPU seen yet".to_string(),
            };
            let gpus = match (ready_now.get(&d.pool), p.ready_gpus) {
                (Some(n), _) => format!(", {n} GPUs allocatable now"),
                (None, Some(n)) => format!(", {n} GPUs allocatable when placed"),
                (None, None) => String::new(),
            };
            Some(format!(
                "  {}: {} × {}×{} on {} ({}) since {}, {first}{gpus}\n",
                d.pool,
                d.nodes,
                d.gpus_per_node,
                d.gpu,
                label(&p.at),
                p.instance_type,
                p.since.split('.').next().unwrap_or(&p.since)
            ))
        })
        .collect();
    let nowhere: Vec<String> = decisions
        .iter()
        .filter(|d| d.chosen.is_none() && d.nodes > 0)
        .map(|d| {
            format!(
                "  {}: {} × {}×{} wanted, running nowhere: no candidate has capacity or is under the cap\n",
                d.pool, d.nodes, d.gpus_per_node, d.gpu
            )
        })
        .collect();
    let mut out = String::new();
    if !lines.is_empty() {
        out.push_str(&format!("\nPlaced node pools:\n\n{}", lines.concat()));
    }
    if !nowhere.is_empty() {
        out.push_str(&format!("\nUnplaced node pools:\n\n{}", nowhere.concat()));
    }
    out
}
