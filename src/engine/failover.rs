//! An apply in rounds, for placed node pools: a shortage where a pool was
//! put is recorded (through the journal) and the configuration planned
//! again and applied, so the nodes go to the next place; a pool newly
//! placed is watched until its first node offers GPUs (time to first GPU),
//! or fails over when none does within `wait_for_gpus`.

use super::prepare::{placements, prepare, CloudAsks};
use super::session::{Session, Source};
use super::view::{Notice, Shown, View};
use super::Options;
use crate::apply;
use crate::builtin::Drivers;
use crate::diag::{Diag, Diags, Sources};
use crate::plan::Plan;
use crate::statecmd::state_err;
use std::collections::BTreeMap;
use strata_state::Entry;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// What an apply's rounds did, together.
pub(super) struct Rounds {
    pub applied: apply::Report,
    /// Placed pools that found no candidate with capacity.
    pub unplaced: Vec<Diag>,
}

/// What an apply's rounds share: how to prepare the configuration again
/// for the next round of a failover.
pub(super) struct Applying<'a> {
    pub opts: &'a Options,
    /// Where the apply's progress lines go (the view's).
    pub say: fn(&str),
    pub drivers: &'a Drivers,
    pub from: &'a Source<'a>,
}

/// More rounds than any spec's candidates and zones need: a bound on a
/// cloud that keeps answering with shortages.
const MAX_ROUNDS: usize = 24;

impl Applying<'_> {
    /// Applies `plan`. When a placed pool met a shortage where it was put,
    /// the failure is recorded, the configuration planned again (the pool
    /// now goes to its next candidate, and what failed is scaled back or
    /// replaced) and applied, until every pool is placed or has nowhere
    /// left to go. Every chosen placement is recorded.
    pub fn rounds(
        &self,
        session: &mut Session,
        mut plan: Plan,
        view: &mut dyn View,
        sources: &mut Sources,
    ) -> Result<Rounds, Diags> {
        let mut total = apply::Report::default();
        for round in 1.. {
            let started = OffsetDateTime::now_utc();
            let report = self.once(session, &plan)?;
            let now = OffsetDateTime::now_utc();
            let outcome = placed(&plan, &report, (started, now));
            said(&outcome, &report, view);
            self.record(session, outcome.entries)?;
            total.absorb(report);
            let mut moved_on = outcome.attempts.len();
            if moved_on == 0 {
                let gpus = self.first_gpus(&plan.placements, session);
                for line in gpus.said {
                    view.notice(Notice::Placement(line));
                }
                moved_on = gpus.timed_out;
                self.record(session, gpus.entries)?;
            }
            // A stop asked for ends the rounds: what is placed stays placed.
            if moved_on == 0 || round == MAX_ROUNDS || crate::interrupt::requested() {
                break;
            }
            let asks = CloudAsks::new(self.drivers, &session.rt);
            let mut recorded = placements(
                Some(&session.state),
                &self.opts.replace_placement,
                strata_provider::clock::now(),
            );
            asks.lend(&mut recorded);
            let (dir, vars) = (self.from.dir, self.from.vars.clone());
            session.p = prepare(dir, vars, self.opts, &recorded, sources, self.drivers)?;
            plan = session
                .plan(self.opts, crate::plan::Purpose::Applied, self.drivers)
                .map_err(|f| session.p.expansion.explain(f.diags, sources))?;
            for d in &plan.placements {
                view.notice(Notice::NextTry(crate::placement::next_try(d)));
            }
            if !plan.has_changes() {
                break;
            }
            view.plan(Shown::Round(&plan), &[], sources);
        }
        let unplaced = unplaced(&plan);
        // Freeing a plan is a walk over every value it holds (1.4 % of an
        // apply of 500 objects' samples): not waited for, as a plan's is not.
        crate::par::drop_later(plan);
        Ok(Rounds {
            applied: total,
            unplaced,
        })
    }

    /// One round: the plan applied through the journal, the state
    /// persisted.
    fn once(&self, session: &mut Session, plan: &Plan) -> Result<apply::Report, Diags> {
        let (store, lock) = (&session.store, &session.lock);
        let sink = apply::Sink {
            store,
            lock,
            journal: store.journal(lock).map_err(state_err)?,
            every: apply::persist_interval(),
        };
        let p = &session.p;
        let state = std::mem::take(&mut session.state);
        let result = apply::apply(
            &apply::Request {
                root: &p.module,
                graph: &p.graph,
                drivers: self.drivers,
                vars: p.vars.clone(),
                run: p.run.clone(),
                plan,
                lineage: state.lineage.clone(),
                parallelism: self.opts.parallelism,
                progress: apply::Progress {
                    form: match self.opts.json {
                        true => apply::Form::Json,
                        false => apply::Form::Lines,
                    },
                    say: self.say,
                },
                settle: self.opts.check_settle,
            },
            state,
            sink,
            &session.rt,
        );
        let (state, report) = result?;
        session.state = state;
        crate::timings::stage("applied");
        session.persist()?;
        crate::timings::stage("persisted");
        Ok(report)
    }

    /// Placement records, through the journal (a crash right after still
    /// has them) and into the persisted state.
    fn record(&self, session: &mut Session, entries: Vec<Entry>) -> Result<(), Diags> {
        if entries.is_empty() {
            return Ok(());
        }
        session.record(&entries)
    }
}

/// What a round did to the placed pools: where each was put, or the
/// shortage that moves it on.
fn placed(
    plan: &Plan,
    report: &apply::Report,
    (started, now): (OffsetDateTime, OffsetDateTime),
) -> crate::placement::Outcome {
    // What was not attempted (its dependencies failed or were halted by a
    // stop) is not applied either: a pool with any of it is not placed yet.
    let not_attempted = "not attempted".to_string();
    let unattempted = report.skipped.iter().chain(&report.not_started);
    let skipped = unattempted.map(|a| crate::placement::Failed {
        addr: a.to_string(),
        shortage: None,
        why: &not_attempted,
    });
    let failed: Vec<crate::placement::Failed> = report
        .failed
        .iter()
        .map(|f| crate::placement::Failed {
            addr: f.addr.to_string(),
            shortage: f.shortage.as_ref(),
            why: &f.why,
        })
        .chain(skipped)
        .collect();
    crate::placement::outcome(&plan.placements, &failed, started, now)
}

/// A round's placements told, and what else it left undone for the next
/// round to plan again.
fn said(outcome: &crate::placement::Outcome, report: &apply::Report, view: &mut dyn View) {
    for line in &outcome.attempts {
        view.notice(Notice::Placement(line.clone()));
    }
    if outcome.attempts.is_empty() {
        return;
    }
    let unexplained = report
        .failed
        .iter()
        .filter(|f| !outcome.explained.contains(&f.addr.to_string()));
    for f in unexplained {
        let (addr, why) = (f.addr.to_string(), f.why.clone());
        view.notice(Notice::RoundFailed { addr, why });
    }
    for s in report.skipped.iter().chain(&report.not_started) {
        let addr = s.to_string();
        view.notice(Notice::RoundWaits { addr });
    }
}

/// What watching new placements for their first GPU found.
#[derive(Default)]
struct FirstGpus {
    said: Vec<String>,
    entries: Vec<Entry>,
    /// Placements that showed no GPU in time (failed over next round).
    timed_out: usize,
}

/// How often a new placement's nodes are looked at.
const LOOK_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

impl Applying<'_> {
    /// Watches each pool placed anew (no first GPU recorded) until a node
    /// of it offers an allocatable `nvidia.com/gpu`, through its cluster's
    /// Kubernetes API: the time from the placement's request is recorded;
    /// a pool with none within `wait_for_gpus` fails there.
    fn first_gpus(&self, decisions: &[crate::placement::Decision], session: &Session) -> FirstGpus {
        let state = &session.state;
        let mut out = FirstGpus::default();
        // The apply round that created the pools is done: where pool
        // creation ends and waiting for nodes begins.
        let round_done = OffsetDateTime::now_utc();
        for d in decisions {
            let (Some(c), Some(record)) = (d.chosen(), state.placements.get(&d.pool)) else {
                continue;
            };
            if crate::placement::waits_for_jobs(&c.at) {
                if d.moves() {
                    out.said.push(format!(
                        "Placement of {}: on {}; its nodes come as Kueue admits jobs (no GPU to wait for).",
                        d.pool,
                        c.label()
                    ));
                }
                continue;
            }
            let Some(placed) = record
                .chosen
                .as_ref()
                .filter(|p| p.at == c.at && p.first_gpu_after.is_none())
            else {
                continue;
            };
            let since = OffsetDateTime::parse(&placed.since, &Rfc3339)
                .unwrap_or_else(|_| OffsetDateTime::now_utc());
            let limit = d.wait_for_gpus.unwrap_or(crate::placement::WAIT_FOR_GPUS);
            let pool = d.pool.split_once('.').map_or(d.pool.as_str(), |(_, p)| p);
            let seen = session
                .rt
                .block_on(gpus_ready(self.drivers, c, pool, since + limit));
            let now = OffsetDateTime::now_utc();
            match seen {
                Ok(Some(ready)) => {
                    let after = (now - since).as_seconds_f64();
                    let seen = crate::placement::FirstGpu {
                        after,
                        pool_created: Some((round_done - since).as_seconds_f64()),
                        node_joined: Some((ready.joined - since).as_seconds_f64()),
                    };
                    out.said.push(format!(
                        "Placement of {}: first GPU after {after:.1}s on {} ({} GPUs allocatable on {} nodes).",
                        d.pool,
                        c.label(),
                        ready.gpus,
                        ready.nodes
                    ));
                    let r = crate::placement::first_gpu(record, seen, ready.gpus);
                    out.entries.push(Entry::Placement {
                        pool: d.pool.clone(),
                        placement: Some(r),
                    });
                }
                Ok(None) => {
                    let Some(f) = crate::placement::no_gpus(d, limit, now) else {
                        continue;
                    };
                    out.said.push(format!(
                        "Placement of {}: {} had no GPU node in time.\n  {}",
                        d.pool,
                        c.label(),
                        f.reason
                    ));
                    let r = crate::placement::with_failure(d, f, now);
                    out.entries.push(Entry::Placement {
                        pool: d.pool.clone(),
                        placement: Some(r),
                    });
                    out.timed_out += 1;
                }
                Err(why) => out.said.push(format!(
                    "Placement of {}: its time to first GPU is not known: {why}",
                    d.pool
                )),
            }
        }
        out
    }
}

/// The GPUs each placed pool's nodes offer now, by pool (one look each),
/// or why its cluster could not say.
pub(super) async fn gpus_now(
    drivers: &Drivers,
    decisions: &[crate::placement::Decision],
) -> crate::placement::GpusSeen {
    let mut out = BTreeMap::new();
    for d in decisions {
        let Some(p) = d.recorded.as_ref().and_then(|r| r.chosen.as_ref()) else {
            continue;
        };
        let Some(c) = d.candidates.iter().find(|c| c.at == p.at) else {
            continue;
        };
        let pool = d.pool.split_once('.').map_or(d.pool.as_str(), |(_, p)| p);
        let now = OffsetDateTime::now_utc();
        let seen = gpus_ready(drivers, c, pool, now).await;
        out.insert(d.pool.clone(), seen.map(|r| r.map_or(0, |r| r.gpus)));
    }
    out
}

/// GPUs a pool's nodes offer now.
struct Ready {
    gpus: u64,
    nodes: usize,
    /// When its nodes were first seen in the cluster (by the looks made).
    joined: OffsetDateTime,
}

/// Looks at the nodes of pool `pool` at candidate `c` (its cluster's
/// `kubernetes_nodes`, through the kubernetes provider configured for the
/// candidate's module call) until one offers GPUs or `until` passes.
async fn gpus_ready(
    drivers: &Drivers,
    c: &crate::placement::Candidate,
    pool: &str,
    until: OffsetDateTime,
) -> Result<Option<Ready>, String> {
    const NODES: &str = "kubernetes_nodes";
    let base = drivers.named("kubernetes").ok_or("no kubernetes driver")?;
    let provider = crate::builtin::provider_address(base.as_ref(), Some(&c.call));
    if drivers.deferred(&provider).is_some() {
        return Err(format!("{provider} is not configured yet"));
    }
    let (driver, schema) = drivers
        .configured(NODES, &provider, crate::config::Mode::Data)
        .ok_or("no kubernetes_nodes data source")?;
    let config =
        serde_json::json!({ "metadata": [{ "labels": { &c.node_label: pool } }], "nodes": null });
    let config = crate::lang::json::value_from_json(&config, &schema.object_type())?;
    let mut joined = None;
    loop {
        let read = driver
            .read_data(NODES, &config)
            .await
            .map_err(|e| e.to_string())?;
        let nodes = crate::lang::json::plain_json(&read)["nodes"].clone();
        let gpus: Vec<u64> = nodes
            .as_array()
            .into_iter()
            .flatten()
            .map(|n| {
                n["status"][0]["allocatable"]["nvidia.com/gpu"]
                    .as_str()
                    .and_then(|g| g.parse().ok())
                    .unwrap_or(0)
            })
            .collect();
        let now = OffsetDateTime::now_utc();
        if !gpus.is_empty() {
            joined.get_or_insert(now);
        }
        let total: u64 = gpus.iter().sum();
        if total > 0 {
            return Ok(Some(Ready {
                gpus: total,
                nodes: gpus.iter().filter(|g| **g > 0).count(),
                joined: joined.unwrap_or(now),
            }));
        }
        // A mock's nodes are what the test says they are: no later look
        // would find others.
        if now >= until || driver.reads() == strata_provider::Reads::Fixed {
            return Ok(None);
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

/// A pool left with nowhere to go is an error: the apply did not give the
/// spec its nodes.
fn unplaced(plan: &Plan) -> Vec<Diag> {
    plan.placements
        .iter()
        .filter(|d| d.chosen.is_none())
        .map(|d| {
            let why: Vec<String> = d
                .skipped
                .iter()
                .map(|s| format!("{}: {}", s.candidate.label(), s.why))
                .collect();
            Diag::new(
                "strata::placement::none",
                format!("Node pool {} has no place with capacity", d.pool),
                format!("Every candidate is cooling down after a shortage or over the price cap, so its {} nodes run nowhere; the next apply after a cool-down tries again.\n  {}", d.nodes, why.join("\n  ")),
            )
        })
        .collect()
}
