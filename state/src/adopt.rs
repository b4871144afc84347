//! Moving a local state from one layout to another once: strata before
//! 0.1 kept its default state in `strata.tfstate` (`strata.tfstate.d/`
//! for workspaces), where Terraform keeps `terraform.tfstate`; a
//! directory must be one state for both tools, so the old files move to
//! Terraform's names. Every workspace is judged before anything moves: if
//! any would put one state over another that holds objects, nothing
//! moves. A crash half way leaves each workspace moved or not, and the
//! next run moves the rest.

use crate::backend::{Backend, JournalAfter, LockInfo, Version};
use crate::error::StateError;
use crate::local::{sibling, Layout, LocalBackend};
use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// What became of one old state file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adopted {
    pub workspace: String,
    pub from: PathBuf,
    pub to: PathBuf,
    pub how: Adoption,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adoption {
    /// The old state is now the state under the new name.
    Moved,
    /// The new name already held this workspace's objects and the old
    /// state held none: the old file is kept aside, under `to`.
    SetAside,
}

/// One workspace's files in the old layout, and what they hold.
struct Old {
    workspace: String,
    backend: LocalBackend,
    state: PathBuf,
    /// The lock file of the strata that wrote it (`<state>.lock`).
    lock: PathBuf,
    text: Option<String>,
    holds: Holding,
}

/// What a state holds, for deciding which one wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holding {
    Nothing,
    /// A state or journal without objects (outputs, an emptied estate).
    NoObjects,
    Objects(usize),
}

/// Moves every workspace of `from` to `to` (see the module's words), or
/// refuses, moving nothing, when one would replace a state with objects.
pub fn adopt(from: &Layout, to: &Layout) -> Result<Vec<Adopted>, StateError> {
    let mut olds = Vec::new();
    for workspace in LocalBackend::workspace(from.clone(), "default").workspaces()? {
        if let Some(old) = read_old(from, &workspace)? {
            olds.push(old);
        }
    }
    let mut plans = Vec::new();
    for old in olds {
        let new = LocalBackend::workspace(to.clone(), &old.workspace);
        let new_holds = holding(LocalBackend::workspace(to.clone(), &old.workspace))?;
        if let (Holding::Objects(ours), Holding::Objects(theirs)) = (old.holds, new_holds) {
            return Err(StateError::TwoStates {
                old: old.state.display().to_string(),
                old_objects: ours,
                new: new.location(),
                new_objects: theirs,
            });
        }
        plans.push((old, new, new_holds));
    }
    let mut done = Vec::new();
    for (old, new, new_holds) in plans {
        done.push(move_one(old, new, new_holds)?);
    }
    if let Some(dir) = from.dir.to_str().filter(|d| !d.is_empty()) {
        // Empty now that its workspaces moved; kept if anything else is in it.
        let _ = std::fs::remove_dir(dir);
    }
    Ok(done)
}

fn read_old(from: &Layout, workspace: &str) -> Result<Option<Old>, StateError> {
    let backend = LocalBackend::workspace(from.clone(), workspace);
    let state = from.path(workspace);
    let journal = backend.journal_path();
    if !state.exists() && !journal.exists() {
        return Ok(None);
    }
    let holds = holding(LocalBackend::workspace(from.clone(), workspace))?;
    Ok(Some(Old {
        workspace: workspace.to_string(),
        text: backend.read()?.state,
        lock: sibling(&state, ".lock"),
        state,
        backend,
        holds,
    }))
}

/// What the state (with its journal replayed) at a backend holds.
fn holding(backend: LocalBackend) -> Result<Holding, StateError> {
    let loaded = crate::Store::new(backend).load()?;
    let replay = &loaded.replay;
    if !loaded.existed && replay.applied == 0 && replay.pending.is_empty() {
        return Ok(Holding::Nothing);
    }
    let instances: usize = loaded
        .state
        .resources
        .iter()
        .map(|r| r.instances.len())
        .sum();
    Ok(match instances + replay.pending.len() {
        0 => Holding::NoObjects,
        n => Holding::Objects(n),
    })
}

fn move_one(old: Old, new: LocalBackend, new_holds: Holding) -> Result<Adopted, StateError> {
    let _old_lock = old_strata_lock(&old.lock)?;
    let info = LockInfo::new("adopt", new.location());
    let _new_lock = new.lock(&info)?;
    let result = match (old.holds, new_holds) {
        // The new name holds objects and the old file none (both holding
        // objects was refused before anything moved).
        (_, Holding::Objects(_)) => set_aside(&old),
        (_, Holding::NoObjects) if matches!(old.holds, Holding::Nothing | Holding::NoObjects) => {
            set_aside(&old)
        }
        _ => move_over(&old, &new),
    };
    // Released whatever the move did; a lock left behind would stop
    // every command after this one, so it is an error too.
    let unlocked = new.unlock(&info.id);
    let adopted = result?;
    unlocked?;
    let _ = std::fs::remove_file(&old.lock);
    if let Some(dir) = old.state.parent().filter(|_| old.workspace != "default") {
        let _ = std::fs::remove_dir(dir);
    }
    Ok(adopted)
}

/// The old state's text becomes the new state (the new one's own text, if
/// it had any, its backup), and the old journal and backup follow it.
fn move_over(old: &Old, new: &LocalBackend) -> Result<Adopted, StateError> {
    let to = PathBuf::from(new.location());
    if let Some(text) = &old.text {
        let expected = stat_version(new)?;
        new.write(text, expected.as_ref(), JournalAfter::Dropped)?;
    }
    rename_if_absent(&old.backend.journal_path(), &new.journal_path())?;
    rename_if_absent(&old.backend.backup_path(), &new.backup_path())?;
    remove_if_present(&old.state)?;
    remove_if_present(&old.backend.backup_path())?;
    Ok(Adopted {
        workspace: old.workspace.clone(),
        from: old.state.clone(),
        to,
        how: Adoption::Moved,
    })
}

/// Keeps the old state under `<old>.superseded`, out of either tool's way.
fn set_aside(old: &Old) -> Result<Adopted, StateError> {
    let aside = sibling(&old.state, ".superseded");
    for (from, suffix) in [(&old.state, ""), (&old.backend.journal_path(), ".journal")] {
        rename_if_present(from, &sibling(&aside, suffix))?;
    }
    remove_if_present(&old.backend.backup_path())?;
    Ok(Adopted {
        workspace: old.workspace.clone(),
        from: old.state.clone(),
        to: aside,
        how: Adoption::SetAside,
    })
}

/// Holds the old strata's lock file (an OS lock on `<state>.lock`) while
/// its files move, or names the old strata run that holds it.
fn old_strata_lock(path: &Path) -> Result<Option<std::fs::File>, StateError> {
    let file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StateError::io(path, e)),
    };
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            Err(LockInfo::decode(&text).map_or_else(
                || StateError::Locked {
                    id: "unknown".into(),
                    who: format!("an older strata run ({})", path.display()),
                    operation: "unknown".into(),
                    created: "unknown".into(),
                },
                |i| i.held(),
            ))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(StateError::io(path, e)),
    }
}

fn stat_version(backend: &LocalBackend) -> Result<Option<Version>, StateError> {
    backend.read().map(|s| s.version)
}

fn rename_if_present(from: &Path, to: &Path) -> Result<(), StateError> {
    match std::fs::rename(from, to) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(StateError::io(from, e)),
        _ => Ok(()),
    }
}

/// Moves `from` to `to` unless `to` is there (the new state's own
/// backup is newer than anything of the old one's).
fn rename_if_absent(from: &Path, to: &Path) -> Result<(), StateError> {
    if to.exists() {
        return Ok(());
    }
    rename_if_present(from, to)
}

fn remove_if_present(path: &Path) -> Result<(), StateError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(StateError::io(path, e)),
        _ => Ok(()),
    }
}
