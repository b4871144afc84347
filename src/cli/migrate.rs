//! init's backend step: the backend the configuration names reached and
//! recorded as the one set up (`config::installed::InitializedBackend`);
//! when it is not the one init set up before (or a backend block was
//! added over a local state with objects), the state moved there with
//! `-migrate-state` (asking, unless `-force-copy`), left where it is with
//! `-reconfigure`, or init stopped, in Terraform's words.

use super::init::Init;
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
pub(super) fn backend(req: &Init<'_>, module: &Module) -> Result<String, Diags> {
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
        None => crate::backends::left_behind(module, "default").map(|_| Previous::DefaultFile),
    };
    let mut out = String::new();
    let changed = previous.is_some();
    if let Some(from) = previous.filter(|_| !req.reconfigure) {
        let asked = req.migrate_state || req.force_copy;
        if recorded.is_some() && !asked {
            return Err(refused("Backend configuration changed", "A change in the backend configuration has been detected, which may require migrating existing state.\n\nIf you wish to attempt automatic migration of the state, use \"strata init -migrate-state\".\nIf you wish to store the current configuration with no changes to the state, use \"strata init -reconfigure\"."));
        }
        if recorded.is_some() {
            out.push_str("Backend configuration changed!\n\nstrata has detected that the configuration specified for the backend\nhas changed. strata will now check for existing state in the backends.\n\n");
        }
        let to = module.settings.backend.as_ref();
        copy_states(from.backend(), to, req.force_copy)?;
    }
    let store = crate::backends::open_backend(
        None,
        module.settings.backend.as_ref(),
        config::workspace()?,
    )?;
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

/// Every workspace's state of `from` copied to `to` (`None`: the default
/// local file), each under both locks.
fn copy_states(from: Option<&Backend>, to: Option<&Backend>, force: bool) -> Result<(), Diags> {
    let open =
        |b: Option<&Backend>, ws: &str| crate::backends::open_backend(None, b, ws.to_string());
    let names = open(from, "default")?.workspaces().map_err(state_err)?;
    for ws in names {
        let source = open(from, &ws)?;
        let _held = source.lock("init -migrate-state").map_err(state_err)?;
        let loaded = source.load().map_err(state_err)?;
        if !loaded.replay.pending.is_empty() {
            return Err(refused("State not moved", format!("The state at {} has operations an interrupted run left unfinished. Run a plan against that backend first (strata recovers them), then init again.", source.location())));
        }
        if !loaded.existed {
            continue;
        }
        let target = open(to, &ws)?;
        let lock = target.lock("init -migrate-state").map_err(state_err)?;
        let there = target.load().map_err(state_err)?;
        let occupied = there.existed && !there.state.resources.is_empty();
        let question = match occupied {
            true => format!("Do you want to overwrite the state in the new backend with the previous state?\n  Both the previous backend and the newly configured backend have a state in workspace {ws:?}. Enter \"yes\" to copy the previous state over it, \"no\" to leave it."),
            false => format!("Do you want to copy existing state to the new backend?\n  Pre-existing state was found in workspace {ws:?} of the previous backend, and none in the newly configured one. Enter \"yes\" to copy it and \"no\" to start with an empty state."),
        };
        if !force && !crate::engine::ask(&question) {
            return Err(refused("State not copied", "The answer was not \"yes\". Run init again with -force-copy to copy without asking, or with -reconfigure to leave the state where it is."));
        }
        target.push(&lock, loaded.state, true).map_err(state_err)?;
    }
    Ok(())
}
