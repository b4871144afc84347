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
            let price = match (&c.held, c.gpu_hour) {
                (Some(_), _) => "committed".to_string(),
                (None, Some(p)) => format!("{}/GPU-h", p.dollars()),
                (None, None) => "unpriced".into(),
            };
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
            if let Some(h) = &c.held {
                out.push_str(&format!("         {}\n", held_terms(h)));
            }
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

/// What held capacity is, as its cloud said: its size, zone and window.
pub fn held_terms(h: &crate::placement::HeldAt) -> String {
    let Some(f) = &h.facts else {
        return format!("{}: not read yet (it is read once the state is)", h.id);
    };
    let zone = f
        .zone
        .as_deref()
        .map(|z| format!(" in {z}"))
        .unwrap_or_default();
    let ends = match &f.ends {
        Some(e) => format!("until {e}"),
        None => "until cancelled".to_string(),
    };
    format!(
        "{}: {} × {}{zone}, {} free now, {ends}; paid whether used or not",
        h.id, f.instances, f.instance_type, f.available
    )
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
        Why::Held => "reserved capacity, paid for whether used or not".to_string(),
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
            let queued = crate::placement::waits_for_jobs(&p.at);
            let first = match p.first_gpu_after {
                Some(s) => format!("first GPU after {s:.1}s"),
                None if queued => "its nodes come as Kueue admits jobs".to_string(),
                None => "no GPU seen yet".to_string(),
            };
            // A queued pool has no count of its own: jobs ask for nodes.
            let count = match queued {
                true => String::new(),
                false => format!("{} × ", d.nodes),
            };
            let gpus = match (ready_now.get(&d.pool), p.ready_gpus) {
                (Some(n), _) => format!(", {n} GPUs allocatable now"),
                (None, Some(n)) => format!(", {n} GPUs allocatable when placed"),
                (None, None) => String::new(),
            };
            Some(format!(
                "  {}: {count}{}×{} on {} ({}) since {}, {first}{gpus}\n",
                d.pool,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::{choose, Candidate, Spec, COOL_DOWN};
    use strata_provider::money::Usd;
    use strata_state::Location;

    fn place(cloud: &str, capacity: &str, price: &str, score: Option<u8>) -> Candidate {
        Candidate {
            at: Location {
                cloud: cloud.into(),
                region: "r1".into(),
                capacity: capacity.into(),
                reservation: None,
            },
            call: format!("train_{cloud}"),
            instance_type: "gpu8".into(),
            gpu_hour: Usd::parse(price),
            zones: Vec::new(),
            node_label: "pool".into(),
            score,
            held: None,
        }
    }

    /// Scores show beside each place when asked, a low one says why it
    /// went last, and a cloud that gave none says why; unasked, nothing.
    #[test]
    fn the_plan_shows_scores_and_why_a_place_went_last() {
        let spec = |min_score, unscored: Vec<String>| Spec {
            pool: "train.h100".into(),
            nodes: 2,
            gpu: "H100".into(),
            gpus_per_node: 8,
            cool_down: COOL_DOWN,
            wait_for_gpus: None,
            min_score,
            unscored,
        };
        let places = vec![
            place("gcp", "spot", "3.35", Some(9)),
            place("azure", "on_demand", "12.29", None),
            place("aws", "spot", "2.20", Some(1)),
        ];
        let why = vec!["aws us-east-2: AccessDenied: not authorized".to_string()];
        let now = time::OffsetDateTime::UNIX_EPOCH;
        let d = choose(
            spec(Some(5), why),
            places.clone(),
            Vec::new(),
            None,
            now,
            false,
        );
        let shown = human(std::slice::from_ref(&d));
        let lines: Vec<&str> = shown.lines().map(str::trim_end).collect();
        assert!(
            lines[2].ends_with("$3.35/GPU-h  score  9  (the first)"),
            "{shown}"
        );
        assert!(lines[3].ends_with("$12.29/GPU-h  score  -"), "{shown}");
        assert!(
            lines[4].ends_with("$2.20/GPU-h  score  1, under min_score 5: tried after the others"),
            "{shown}"
        );
        assert_eq!(
            lines[5],
            "    no placement scores from aws us-east-2: AccessDenied: not authorized"
        );
        assert!(markdown(std::slice::from_ref(&d)).contains("score  1, under min_score 5"));
        let unasked = choose(spec(None, Vec::new()), places, Vec::new(), None, now, false);
        assert!(!human(&[unasked]).contains("score"));
    }
}
