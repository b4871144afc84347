//! `strata apply` and `strata destroy`: a plan made here and approved,
//! or a saved plan checked against the state it was made for, then
//! applied in rounds (see failover.rs) with the state written as it goes.

use super::failover::Applying;
use super::prepare::plugin_served;
use super::session::{require_configuration, Opening, Operation, Session, Source};
use super::view::{Shown, View};
use super::{io_diag, Options};
use crate::apply;
use crate::builtin::Drivers;
use crate::config::Module;
use crate::diag::{Diag, Diags, Sources};
use crate::lang::value::Value;
use crate::plan::{Mode, Plan, Saved, Schemas};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use time::OffsetDateTime;

/// What an apply did.
pub enum Applied {
    /// The plan had nothing to do; nothing was applied. Said all the same
    /// ("Apply complete! Resources: 0 added…", with the state's outputs),
    /// as Terraform says it.
    Nothing(Box<ApplyReport>),
    Done(Box<ApplyReport>),
}

/// What an apply's rounds did together, for the CLI to sum up.
pub struct ApplyReport {
    pub mode: Mode,
    pub report: apply::Report,
    /// Each failed operation as an error, at its block where it has one.
    pub failed: Diags,
    /// Placed pools that found no candidate with capacity.
    pub unplaced: Vec<Diag>,
    /// The state's outputs after the apply.
    pub outputs: BTreeMap<String, strata_state::model::OutputState>,
    /// What `-target` or `-exclude` left out, said after the apply.
    pub scope_warning: Option<Diag>,
    /// The actions the apply invoked (`-invoke`).
    pub actions: crate::apply::Invocations,
}

/// `strata apply [PATH|PLANFILE]` and `strata destroy [PATH]`.
pub fn apply(
    target: &Path,
    opts: &Options,
    auto_approve: bool,
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Applied, Diags> {
    crate::timings::stage("start");
    let saved = match opts.mode.is_destroy() {
        true => None,
        false => saved_plan(target, drivers, sources)?,
    };
    refused(saved.as_ref(), opts.json, auto_approve)?;
    let (from, opts) = match &saved {
        Some(s) => as_planned(s, opts),
        None => {
            require_configuration(target, Operation::Apply, opts.mode, view)?;
            let now = strata_provider::clock::now();
            (From::new(target.to_path_buf(), None, now), opts.clone())
        }
    };
    let opts = &opts;
    let source = from.source();
    let early = super::session::early_state(opts);
    let p = source.prepare(opts, sources, drivers)?;
    if let Some(s) = &saved {
        unchanged(&p.files, s)?;
    }
    crate::timings::stage("prepared");
    let op = match opts.mode.is_destroy() {
        true => Operation::Destroy,
        false => Operation::Apply,
    };
    let opening = Opening {
        op,
        from: &source,
        opts,
        view,
        early,
    };
    let mut session = Session::open(p, opening, sources, drivers)?;
    let run = Applying {
        opts,
        say: view.progress(),
        drivers,
        from: &source,
    };
    let result = applied_in(&mut session, (saved, auto_approve), &run, view, sources);
    // Released on every path, and a release that failed is told.
    session.close(view);
    result
}

/// The apply's steps once the session is open: the plan (saved and
/// checked, or made here and approved), then its rounds.
fn applied_in(
    session: &mut Session,
    (saved, auto_approve): (Option<Saved>, bool),
    run: &Applying<'_>,
    view: &mut dyn View,
    sources: &mut Sources,
) -> Result<Applied, Diags> {
    let (opts, drivers) = (run.opts, run.drivers);
    let plan = match saved {
        Some(s) => {
            let plan = for_this_state(s.plan, session)?;
            view.plan(Shown::Saved(&plan), &[], sources);
            plan
        }
        None => match approved(session, opts, auto_approve, view, sources, drivers)? {
            Some(plan) => plan,
            None => {
                if session.existed && session.store.sealed_by_fallback() {
                    session.persist()?;
                }
                return Ok(Applied::Nothing(Box::new(ApplyReport {
                    mode: opts.mode,
                    report: apply::Report::default(),
                    failed: Diags::default(),
                    unplaced: Vec::new(),
                    outputs: session.state.outputs.clone(),
                    scope_warning: None,
                    actions: Default::default(),
                })));
            }
        },
    };
    let scope_warning = crate::plan::applied_scope_warning(&plan.scope);
    // `-invoke`'s actions run after the walk; those resources' changes
    // trigger ran within it.
    let cli: Vec<_> = plan
        .actions
        .iter()
        .filter(|a| a.lifecycle().is_none())
        .cloned()
        .collect();
    let rounds = run.rounds(session, plan, view, sources)?;
    let (mut invoked, action_failed) = super::invoke::invoke(&session.rt, &cli, view, drivers);
    invoked.add(rounds.applied.invoked);
    let mut failed = failures(&rounds.applied, &session.p.module);
    failed.extend(action_failed);
    Ok(Applied::Done(Box::new(ApplyReport {
        mode: opts.mode,
        actions: invoked,
        failed,
        report: rounds.applied,
        unplaced: rounds.unplaced,
        outputs: session.state.outputs.clone(),
        scope_warning,
    })))
}

/// Where an apply's configuration comes from, owned.
struct From {
    dir: PathBuf,
    vars: Option<BTreeMap<String, Value>>,
    now: OffsetDateTime,
}

impl From {
    fn new(dir: PathBuf, vars: Option<BTreeMap<String, Value>>, now: OffsetDateTime) -> From {
        From { dir, vars, now }
    }

    fn source(&self) -> Source<'_> {
        Source {
            dir: &self.dir,
            vars: self.vars.clone(),
            now: self.now,
        }
    }
}

/// A saved plan that cannot be applied, or cannot be approved.
fn refused(saved: Option<&Saved>, json: bool, auto_approve: bool) -> Result<(), Diags> {
    if saved.is_some_and(|s| s.plan.errored) {
        return Err(Diags::from(Diag::new(
            "strata::apply::incomplete",
            "Cannot apply incomplete plan",
            "strata encountered an error when generating this plan, so it cannot be applied.",
        )));
    }
    if json && saved.is_none() && !auto_approve {
        return Err(Diags::from(Diag::new(
            "strata::apply::json",
            "Plan file or auto-approve required",
            "strata cannot ask for interactive approval when -json is set. You can either apply a saved plan file, or enable the -auto-approve option.",
        )));
    }
    Ok(())
}

/// A saved plan's configuration, expanded as when it was planned: its
/// moment decides which cool-downs are over, its `--replace-placement`
/// which pools move, its scope what the graph is narrowed to.
fn as_planned(s: &Saved, opts: &Options) -> (From, Options) {
    if !s.plan.timestamp.is_empty() {
        crate::funcs::set_plan_timestamp(&s.plan.timestamp);
    }
    let at = OffsetDateTime::parse(
        &s.plan.timestamp,
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap_or_else(|_| OffsetDateTime::now_utc());
    let opts = Options {
        replace_placement: s.replace_placement.clone(),
        scope: s.plan.scope.clone(),
        // A saved plan's refresh-only mode is kept; the command that
        // applies it is an apply, whatever it planned.
        mode: match s.plan.mode {
            Mode::RefreshOnly => Mode::RefreshOnly,
            _ => opts.mode,
        },
        ..opts.clone()
    };
    let vars = Some(s.plan.variables.clone());
    (From::new(planned_dir(&s.config_dir), vars, at), opts)
}

/// The saved plan's configuration directory as its plan named it: kept
/// absolute so the file applies from anywhere, but relative to here when
/// it is here or below, so `path.module` and `path.root` evaluate again
/// to what the plan saw ("." rather than the absolute path, which would
/// change every argument made of them).
fn planned_dir(config_dir: &str) -> PathBuf {
    let dir = PathBuf::from(config_dir);
    let here = std::env::current_dir().and_then(|d| d.canonicalize());
    match here
        .ok()
        .and_then(|h| dir.strip_prefix(&h).ok().map(PathBuf::from))
    {
        Some(rel) if rel.as_os_str().is_empty() => PathBuf::from("."),
        Some(rel) => rel,
        None => dir,
    }
}

/// The configuration a saved plan was made from is the one here.
fn unchanged(files: &BTreeMap<String, String>, s: &Saved) -> Result<(), Diags> {
    if *files == s.files {
        return Ok(());
    }
    Err(Diags::from(Diag::new(
        "strata::apply::config_changed",
        "Saved plan does not match the configuration",
        format!("The configuration in {} has changed since this plan was made, so the plan may no longer describe it. Make a new plan.", s.config_dir),
    )))
}

/// A saved plan, checked to be made against this very state: its lineage
/// and serial.
fn for_this_state(mut plan: Plan, session: &mut Session) -> Result<Plan, Diags> {
    let state = &mut session.state;
    if !session.existed && plan.serial == 0 && state.resources.is_empty() {
        // Planned against no state: the new state takes the lineage.
        state.lineage = plan.lineage.clone();
    }
    if plan.lineage != state.lineage {
        // No state here: its lineage is only the one a new state would
        // have been given, not worth naming.
        let location = session.store.location();
        let found = match session.existed {
            true => format!("{location} has lineage {}", state.lineage),
            false => format!("there is no state at {location}"),
        };
        return Err(Diags::from(Diag::new(
            "strata::apply::lineage",
            "Saved plan does not match the given state",
            format!("The given plan file can not be applied because it was created from a different state lineage: it was made against state lineage {}, and {found}. Nothing was changed.", plan.lineage),
        )));
    }
    if plan.serial != state.serial {
        return Err(Diags::from(Diag::new(
            "strata::apply::stale",
            "Saved plan is stale",
            format!("The state has changed since this plan was made (serial {} then, {} now), so applying it could undo those changes. Nothing was changed; make a new plan.", plan.serial, state.serial),
        )));
    }
    plan.placements = session.p.expansion.placements().cloned().collect();
    plan.dispatch = session.p.expansion.dispatch().cloned().collect();
    Ok(plan)
}

/// The plan made here, shown and approved; `None` when it has nothing
/// to do.
fn approved(
    session: &Session,
    opts: &Options,
    auto_approve: bool,
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Option<Plan>, Diags> {
    let explain = |d: Diags, sources: &Sources| session.p.expansion.explain(d, sources);
    let plan = match session.plan(opts, crate::plan::Purpose::Applied, drivers) {
        Ok(plan) => plan,
        Err(f) => {
            if let Some(partial) = f.partial.as_deref().filter(|p| p.has_changes()) {
                view.plan(Shown::Partial(partial), &partial.warnings, sources);
            }
            return Err(explain(f.diags, sources));
        }
    };
    crate::timings::stage("planned");
    // What the plan warns of is said before it is approved, as Terraform
    // prints a plan's diagnostics ahead of its prompt.
    let mut warnings = plan.warnings.clone();
    warnings.extend(crate::plan::scope_warning(&plan.scope));
    let shown = Shown::Made {
        plan: &plan,
        refreshed: opts.refresh && opts.invoke.is_none(),
    };
    view.plan(shown, &warnings, sources);
    // Objects changed outside strata are recorded even when nothing else
    // is to be done.
    let placing = plan
        .placements
        .iter()
        .any(|d| d.moves() || d.awaits_first_gpu());
    let stale = !apply::stale_dependencies(&plan, &session.state).is_empty();
    if !plan.has_changes() && plan.drift.is_empty() && !stale && !placing {
        return Ok(None);
    }
    if plan.has_changes() && !auto_approve && !view.approve(opts.mode) {
        return Err(Diags::from(Diag::new(
            "strata::apply::cancelled",
            match opts.mode.is_destroy() {
                true => "Destroy cancelled",
                false => "Apply cancelled",
            },
            "Only 'yes' approves. Nothing was changed.",
        )));
    }
    Ok(Some(plan))
}

/// The plan file at `path`, with the schemas of its types from `drivers`;
/// `None` when `path` is not a plan file but a configuration.
pub(super) fn saved_plan(
    path: &Path,
    drivers: &Drivers,
    sources: &mut Sources,
) -> Result<Option<Saved>, Diags> {
    if !path.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).map_err(|e| io_diag("read", path, e))?;
    if !text.trim_start().starts_with('{') {
        return Ok(None);
    }
    let text = super::sealing::open_plan(text, sources)?;
    let mut saved = Saved::decode(&text).map_err(|e| {
        Diags::from(Diag::new(
            "strata::plan::file",
            format!("{} is not a usable plan file", path.display()),
            e,
        ))
    })?;
    let plan = &saved.plan;
    saved.plan.schemas = Schemas::gather(plan.changes.iter().chain(&plan.drift), drivers);
    // Like the schemas, which served what is this run's drivers'.
    saved.plan.plugin_served = plugin_served(drivers);
    Ok(Some(saved))
}

/// Each failed operation as an error, pointed at its block when the
/// configuration still has it.
fn failures(report: &apply::Report, root: &Module) -> Diags {
    let mut diags = Diags::default();
    if let Some(d) = interrupted(report) {
        diags.push(d);
    }
    for f in &report.failed {
        if let Some(d) = &f.diag {
            diags.push(d.clone());
            continue;
        }
        let r = root.resource_at(&f.addr.id);
        // A provider's own errors, each where its path leads in the block,
        // as Terraform shows them.
        if let (Some(r), true) = (r, f.problems.iter().any(|p| p.error)) {
            for d in crate::walk::provider_problems(&f.problems, r) {
                diags.push(d);
            }
            continue;
        }
        let mut d = Diag::new(
            "strata::apply::failed",
            format!("{} failed", f.addr),
            f.why.clone(),
        );
        if let Some(r) = r {
            d = d.at(r.span);
        }
        diags.push(d);
    }
    diags
}

/// An apply interrupted before some changes started, told once (Terraform
/// says "execution halted" for each): not a failure of theirs, their
/// objects are as they were.
fn interrupted(report: &apply::Report) -> Option<Diag> {
    const NAMED: usize = 5;
    let left = &report.not_started;
    if left.is_empty() {
        return None;
    }
    let mut named: Vec<String> = left.iter().take(NAMED).map(|a| a.to_string()).collect();
    if left.len() > NAMED {
        named.push(format!("and {} more", left.len() - NAMED));
    }
    let (what, them) = match left.len() {
        1 => ("1 planned change".to_string(), "it"),
        n => (format!("{n} planned changes"), "them"),
    };
    Some(Diag::new(
        "strata::interrupted",
        crate::interrupt::HALTED,
        format!(
            "Interrupted: {what} not started ({}), nor what depends on {them}; their objects are as they were. Run apply again to make the rest of the plan.",
            named.join(", ")
        ),
    ))
}
