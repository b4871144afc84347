//! init's backend step: the backend the configuration names reached and
//! recorded as the one set up (`config::installed::InitializedBackend`);
//! when it is not the one init set up before (or a backend block was
//! added over a local state with objects), the state moved there with
//! `-migrate-state` (asking, unless `-force-copy`), left where it is with
//! `-reconfigure`, or init stopped, in Terraform's words.

use super::view::View;
use crate::config::installed::InitializedBackend;
use crate::config::{self, Backend, Module};
use crate::diag::{Diag, Diags};
use crate::statecmd::state_err;

/// Where the state to move is.
enum Previous {
    /// The backend init set up before.
    Backend(Backend),
    /// The default local file (init never ran; a backend block was added).
    DefaultFile,
}

impl Previous {
    /// As `open_backend` takes it: `None` is the default file.
    fn backend(&self) -> Option<&Backend> {
        match self {
            Previous::Backend(b) => Some(b),
            Previous::DefaultFile => None,
        }
    }
}

fn refused(summary: &str, detail: impl Into<String>) -> Diags {
    Diags::from(Diag::new("strata::init::backend", summary, detail))
}

/// Sets the backend up; what init says about it.
/// What `init` was told about the backend: its flags, as the command
/// read them (a struct of its own, so this step needs nothing of init's).
pub(super) struct Asked<'a> {
    pub path: &'a std::path::Path,
    /// `-reconfigure`.
    pub reconfigure: bool,
    /// `-migrate-state`.
    pub migrate_state: bool,
    /// `-force-copy`.
    pub force_copy: bool,
}

pub(super) fn backend(
    req: &Asked<'_>,
    module: &Module,
    view: &mut dyn View,
) -> Result<String, Diags> {
    let current = InitializedBackend::of(module);
    let recorded = InitializedBackend::read(req.path)
        .map_err(|why| refused("Cannot read the backend init set up", why))?;
    let span = module
        .settings
        .backend
        .as_ref()
        .map(|b| b.span)
        .unwrap_or_default();
    let previous = match &recorded {
        Some(r) if *r != current => {
            Some(Previous::Backend(r.block(span).map_err(|why| {
                refused("Cannot read the backend init set up", why)
            })?))
        }
        Some(_) => None,
        None => crate::backends::left_behind_in_any(module).map(|_| Previous::DefaultFile),
    };
    let mut out = String::new();
    let changed = previous.is_some();
    // A backend block changed, as against one added or removed (where
    // Terraform moves the state after its question, without a flag).
    let replaced = recorded
        .as_ref()
        .is_some_and(|r| !r.is_default() && !current.is_default());
    if let Some(from) = previous.filter(|_| !req.reconfigure) {
        let asked = req.migrate_state || req.force_copy;
        if replaced && !asked {
            return Err(refused("Backend configuration changed", "A change in the backend configuration has been detected, which may require migrating existing state.\n\nIf you wish to attempt automatic migration of the state, use \"strata init -migrate-state\".\nIf you wish to store the current configuration with no changes to the state, use \"strata init -reconfigure\"."));
        }
        if replaced {
            out.push_str("Backend configuration changed!\n\nstrata has detected that the configuration specified for the backend\nhas changed. strata will now check for existing state in the backends.\n\n");
        }
        let to = module.settings.backend.as_ref();
        copy_states(
            (from.backend(), to),
            &module.settings.sealings,
            req.force_copy,
            view,
        )?;
    }
    let store = crate::backends::open_backend(
        None,
        module.settings.backend.as_ref(),
        config::workspace()?,
    )?;
    let store = crate::backends::sealed(store, &module.settings.sealings)?;
    store.load().map_err(state_err)?;
    current
        .write(req.path)
        .map_err(|e| refused("Cannot record the backend", e.to_string()))?;
    // Terraform announces a local backend only when it changed.
    if let Some(b) = module
        .settings
        .backend
        .as_ref()
        .filter(|b| b.kind != "local" || changed)
    {
        out.push_str(&format!("\nSuccessfully configured the backend {:?}! strata will automatically\nuse this backend unless the backend configuration changes.\n", b.kind));
    }
    Ok(out)
}

/// One workspace's state on its way: the source held locked and loaded.
struct Moving {
    workspace: String,
    _held: strata_state::Lock,
    loaded: strata_state::Loaded,
    source: strata_state::Store,
}

/// Every workspace's state of `from` copied to `to` (`None`: the default
/// local file), or none: all are read under their locks and one question
/// asked (as Terraform asks "migrate all workspaces") before any is
/// written. A run's unfinished operations (intents in the journal) go
/// with its state, into the new backend's journal, where the next apply
/// recovers them as it would have in the old.
/// Asks `view` before copying, unless `force`.
fn copy_states(
    (from, to): (Option<&Backend>, Option<&Backend>),
    sealings: &config::encryption::Sealings,
    force: bool,
    view: &mut dyn View,
) -> Result<(), Diags> {
    let open = |b: Option<&Backend>, ws: &str| {
        crate::backends::open_backend(None, b, ws.to_string())
            .and_then(|s| crate::backends::sealed(s, sealings))
    };
    let mut moving = Vec::new();
    for workspace in open(from, "default")?.workspaces().map_err(state_err)? {
        let source = open(from, &workspace)?;
        // Kept in one place by both (a local backend's `path` moves only
        // the default workspace's file): already where it goes.
        if open(to, &workspace)?.location() == source.location() {
            continue;
        }
        let held = source.lock("init -migrate-state").map_err(state_err)?;
        let loaded = source.load().map_err(state_err)?;
        if loaded.existed || !loaded.replay.pending.is_empty() {
            moving.push(Moving {
                workspace,
                _held: held,
                loaded,
                source,
            });
        }
    }
    let mut targets = Vec::new();
    for m in &moving {
        let target = open(to, &m.workspace)?;
        let lock = target.lock("init -migrate-state").map_err(state_err)?;
        let there = target.load().map_err(state_err)?;
        let occupied = there.existed && !there.state.resources.is_empty();
        targets.push((target, lock, occupied));
    }
    if moving.is_empty() {
        return Ok(());
    }
    let occupied: Vec<&str> = moving
        .iter()
        .zip(&targets)
        .filter(|(_, (_, _, o))| *o)
        .map(|(m, _)| m.workspace.as_str())
        .collect();
    if !force && !view.confirm(&question(from, to, &moving, &occupied)) {
        // Let go last-taken first, so folders the locks made (a local
        // backend's `<dir>/<workspace>/` under `<dir>/`) go with them.
        while let Some(target) = targets.pop() {
            drop(target);
        }
        return Err(refused("State not copied", "The answer was not \"yes\"; no workspace was copied. Run init again with -force-copy to copy without asking, or with -reconfigure to leave the state where it is."));
    }
    for (m, (target, lock, _)) in moving.into_iter().zip(targets) {
        target
            .push(&lock, m.loaded.state, true)
            .map_err(state_err)?;
        // What drift runs observed goes with the state `report` reads it
        // beside.
        m.source.copy_history(&target).map_err(state_err)?;
        if !m.loaded.replay.pending.is_empty() {
            let mut journal = target.journal(&lock).map_err(state_err)?;
            journal
                .append_all(&m.loaded.replay.pending)
                .map_err(state_err)?;
        }
    }
    Ok(())
}

/// The one question before copying: every workspace, and those whose
/// copy replaces a state already there.
fn question(
    from: Option<&Backend>,
    to: Option<&Backend>,
    moving: &[Moving],
    occupied: &[&str],
) -> String {
    let kind = |b: Option<&Backend>| b.map_or("local", |b| b.kind.as_str()).to_string();
    let names: Vec<String> = moving
        .iter()
        .map(|m| format!("{:?}", m.workspace))
        .collect();
    let over = match occupied {
        [] => String::new(),
        some => format!(
            " The new backend already holds objects in {}, which the copy replaces.",
            some.iter()
                .map(|w| format!("{w:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "Do you want to migrate all workspaces to {:?}?\n  Every workspace of the {:?} backend is copied to the {:?} backend under the same name: {}.{over} Enter \"yes\" to copy them all, \"no\" to copy none and stop.",
        kind(to),
        kind(from),
        kind(to),
        names.join(", ")
    )
}
