//! The commands that plan and stop there: `plan`, `cost` and `drift`.
//! Each opens a session, plans, and returns what it found; the view is
//! shown the plan where the command shows one.

use super::session::{require_configuration, Opening, Operation, Session, Source};
use super::view::{Notice, Shown, View};
use super::{failover, generate, write_file, Format, Options, Outcome};
use crate::builtin::Drivers;
use crate::diag::{Diag, Diags, Sources};
use crate::plan::{Failed, Plan, Purpose, ResourceChange, Saved, Schemas};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `plan`, `cost`, `drift` and `console -plan` share: a session
/// over the configuration at `path` and its plan. The state's lock is held
/// while this lives.
pub(super) struct Planned {
    pub session: Session,
    pub plan: Plan,
}

/// How a command wants its plan made.
#[derive(Clone, Copy)]
pub(super) struct Planning<'a> {
    pub op: Operation,
    /// What the plan is made for.
    pub purpose: Purpose,
    /// Where a plan that fails is saved, as Terraform saves one (marked
    /// errored: tools read it, apply refuses it).
    pub partial_out: Option<&'a Path>,
}

impl Planning<'_> {
    /// A plan that is neither shown as JSON nor saved.
    pub fn plain(op: Operation) -> Planning<'static> {
        Planning {
            op,
            purpose: Purpose::Shown,
            partial_out: None,
        }
    }
}

pub(super) fn planned(
    path: &Path,
    how: Planning<'_>,
    opts: &Options,
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Planned, Failed> {
    crate::timings::stage("start");
    require_configuration(path, how.op, opts.mode, view)?;
    let from = Source {
        dir: path,
        vars: None,
        now: strata_provider::clock::now(),
    };
    let early = super::session::early_state(opts);
    let p = from.prepare(opts, sources, drivers)?;
    crate::timings::stage("prepared");
    let opening = Opening {
        op: how.op,
        from: &from,
        opts,
        view,
        early,
    };
    let session = Session::open(p, opening, sources, drivers)?;
    let plan = session
        .plan(opts, how.purpose, drivers)
        .map_err(|f| f.map_diags(|d| session.p.expansion.explain(d, sources)));
    let plan = match plan {
        Ok(plan) => plan,
        Err(f) => {
            let mut written = Ok(());
            if let (Some(out), Some(partial)) = (how.partial_out, f.partial.as_deref()) {
                let saved = saved_of(&session.p, partial.clone(), opts, drivers);
                written = super::sealing::seal_plan(&session.p.module, &saved.encode())
                    .and_then(|text| write_file(out, &text));
            }
            session.close(view);
            written?;
            return Err(f);
        }
    };
    crate::timings::stage("planned");
    Ok(Planned { session, plan })
}

/// `plan` as a plan file holds it, with the configuration it was made
/// from and the plugins' schemas of the types it used.
pub(super) fn saved_of(
    p: &super::prepare::Prepared,
    plan: Plan,
    opts: &Options,
    drivers: &Drivers,
) -> Saved {
    let provider_schemas = drivers
        .all()
        .filter_map(|d| Some((crate::builtin::source_of(d.as_ref()), d.used_schemas()?)))
        .collect();
    // Absolute, so `strata apply FILE` finds it from any directory.
    let dir = match p.module.dir.as_os_str().is_empty() {
        true => PathBuf::from("."),
        false => p.module.dir.clone(),
    };
    let dir = dir.canonicalize().unwrap_or(dir);
    Saved {
        config_dir: dir.display().to_string(),
        files: p.files.clone(),
        plan,
        replace_placement: opts.replace_placement.clone(),
        provider_schemas,
    }
}

/// What `strata plan` leaves for the CLI to say after the plan.
pub struct PlanDone {
    pub outcome: Outcome,
    /// `-generate-config-out`, when it wrote configuration.
    pub generated: Option<PathBuf>,
}

/// `strata plan`: the plan shown, and saved to `out` when given.
pub fn plan(
    path: &Path,
    opts: &Options,
    (out, format): (Option<&Path>, Format),
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<PlanDone, Diags> {
    let how = Planning {
        op: Operation::Plan,
        purpose: match format == Format::Json || out.is_some() {
            true => Purpose::Described,
            false => Purpose::Shown,
        },
        partial_out: out,
    };
    let generated = match &opts.generate_config_out {
        Some(file) => generate::config(path, opts, file, sources, drivers)?,
        None => generate::Generated::default(),
    };
    let written = opts
        .generate_config_out
        .clone()
        .filter(|_| !generated.blocks.is_empty());
    let experimental = written.as_ref().map(|_| {
        Diag::new(
            "strata::plan::generate_config",
            "Config generation is experimental",
            "Generating configuration during import is currently experimental, and the generated configuration format may change in future versions.",
        )
        .warning()
    });
    let Planned {
        mut session,
        mut plan,
    } = match planned(path, how, opts, view, sources, drivers) {
        Ok(held) => held,
        Err(mut f) => {
            if let Some(partial) = f.partial.as_mut() {
                let importing = |addr: &str| {
                    let change = partial.changes.iter().find(|c| c.addr.to_string() == addr);
                    change.is_some_and(|c| c.importing.is_some())
                };
                generated.settle(&importing)?;
                partial.generated_config = generated.blocks;
                partial.warnings.extend(experimental);
                view.plan(Shown::Partial(partial), &partial.warnings, sources);
            }
            return Err(f.diags);
        }
    };
    if let Some(warning) = experimental {
        plan.generated_config = generated.blocks;
        plan.warnings.push(warning);
    }
    let shown = Shown::Made {
        plan: &plan,
        refreshed: opts.refresh && opts.invoke.is_none(),
    };
    view.plan(shown, &plan.warnings, sources);
    crate::timings::stage("rendered");
    let outcome = outcome_of(&plan);
    let state = std::mem::take(&mut session.state);
    let saving = match out {
        Some(out) => {
            let saved = saved_of(&session.p, plan, opts, drivers);
            let saving = super::sealing::seal_plan(&session.p.module, &saved.encode())
                .and_then(|text| write_file(out, &text));
            crate::par::drop_later((saved, state));
            saving
        }
        None => {
            crate::par::drop_later((plan, state));
            Ok(())
        }
    };
    session.close(view);
    saving?;
    Ok(PlanDone {
        outcome,
        generated: written,
    })
}

/// What `strata cost` reports: the plan's cost, its placed pools and
/// where its MultiKueue managers send jobs.
pub struct Costed {
    pub cost: crate::cost::Cost,
    pub placements: Vec<crate::placement::Decision>,
    pub dispatch: Vec<crate::placement::Dispatch>,
    pub warnings: Vec<Diag>,
}

/// `strata cost`: the plan's cost alone, for the monthly review (what
/// the state holds against what the configuration would make). Nothing is
/// applied or saved.
pub fn cost(
    path: &Path,
    opts: &Options,
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Costed, Diags> {
    let how = Planning::plain(Operation::Plan);
    let Planned {
        mut session,
        mut plan,
    } = planned(path, how, opts, view, sources, drivers)?;
    let costed = Costed {
        cost: std::mem::take(&mut plan.cost),
        placements: std::mem::take(&mut plan.placements),
        dispatch: std::mem::take(&mut plan.dispatch),
        warnings: std::mem::take(&mut plan.warnings),
    };
    crate::par::drop_later((plan, std::mem::take(&mut session.state)));
    session.close(view);
    Ok(costed)
}

pub(super) fn outcome_of(plan: &Plan) -> Outcome {
    match plan.applyable() {
        true => Outcome::Changes,
        false => Outcome::NoChanges,
    }
}

/// What `strata drift` found.
pub struct Drifted {
    /// Objects changed outside strata (less those `--ignore` names).
    pub drift: Vec<ResourceChange>,
    pub schemas: Schemas,
    pub placements: Vec<crate::placement::Decision>,
    /// Placed pools' GPUs as their clusters offer them now.
    pub ready: BTreeMap<String, u64>,
    /// Wanted GPU nodes that run nowhere: drift a cron must report.
    pub unplaced: bool,
}

impl Drifted {
    pub fn outcome(&self) -> Outcome {
        match self.drift.is_empty() && !self.unplaced {
            true => Outcome::NoChanges,
            false => Outcome::Changes,
        }
    }
}

/// When the previous drift run looked, as the history says (none: this
/// is the first, or the history cannot be read, which the write says).
fn previous_run(session: &super::session::Session) -> Option<String> {
    session.store.last_observed().ok().flatten()
}

/// `strata drift`: the plan's refresh, reported on its own. The plan is
/// made (a provider configured from another resource's attributes is
/// only known in its walk) but neither shown nor saved, and the state is
/// never written.
pub fn drift(
    path: &Path,
    opts: &Options,
    ignore: &[String],
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Drifted, Diags> {
    let patterns = ignore
        .iter()
        .map(|p| {
            glob::Pattern::new(p).map_err(|e| {
                Diags::from(Diag::new(
                    "strata::drift::ignore",
                    format!("Invalid --ignore pattern {p:?}"),
                    e.to_string(),
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let how = Planning::plain(Operation::Drift);
    let Planned { session, plan } = planned(path, how, opts, view, sources, drivers)?;
    let unplaced = plan.unplaced().next().is_some();
    let gpus = failover::gpus_now(drivers, &plan.placements);
    let seen = session.rt.block_on(gpus);
    let mut ready = BTreeMap::new();
    for (pool, gpus) in &seen {
        match gpus {
            Ok(n) => {
                ready.insert(pool.clone(), *n);
            }
            Err(why) => view.notice(Notice::GpusUnknown {
                pool: pool.clone(),
                why: why.clone(),
            }),
        }
    }
    // A drift cron builds the history `strata report` reads: each run
    // asks the clouds' records from the previous run on (the first, from
    // each pool's placement).
    let now = strata_provider::clock::now();
    let until = crate::placement::timestamp(now);
    let since = previous_run(&session);
    let how = (drivers, &session.rt);
    let span = (since.as_deref(), until.as_str());
    let records = super::observe::records(&plan.placements, &session.state, how, span);
    let seen = crate::placement::Seen {
        gpus: &seen,
        records: &records,
    };
    let observed = crate::placement::observation(&plan.placements, seen, now);
    if !observed.pools.is_empty() {
        if let Err(e) = session.store.observe(&session.lock, &observed) {
            view.notice(Notice::HistoryNotWritten { why: e.to_string() });
        }
    }
    session.close(view);
    let drift = plan
        .drift
        .into_iter()
        .filter(|c| {
            let addr = c.addr.to_string();
            !patterns.iter().any(|p| p.matches(&addr))
        })
        .collect();
    Ok(Drifted {
        drift,
        schemas: plan.schemas,
        placements: plan.placements,
        ready,
        unplaced,
    })
}
