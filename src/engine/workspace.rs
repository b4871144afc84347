//! `strata workspace list|show|new|select|delete`, as Terraform's: over
//! whichever backend the configuration in the working directory names
//! (local, s3, pg), the choice recorded where Terraform records it
//! (`.terraform/environment`), `STRATA_WORKSPACE` and `TF_WORKSPACE`
//! overriding it.

use crate::config;
use crate::diag::{Diag, Diags, Sources};
use crate::statecmd::state_err;
use clap::Subcommand;
use strata_state::{State, Store};

#[derive(Subcommand, Debug)]
pub enum WorkspaceCommand {
    /// List the workspaces, the current one marked with `*`.
    List {
        /// One JSON document (`format_version`, each workspace's `name`
        /// and `is_current`, `diagnostics`), as Terraform 1.16's.
        #[arg(long)]
        json: bool,
    },
    /// Print the current workspace's name.
    Show,
    /// Create a workspace and switch to it.
    New {
        name: String,
        /// Start it with this state file's contents.
        #[arg(long, value_name = "FILE")]
        state: Option<std::path::PathBuf>,
    },
    /// Switch to a workspace.
    Select {
        name: String,
        /// Create it when there is none of that name.
        #[arg(long)]
        or_create: bool,
    },
    /// Delete a workspace's state (refused for the current one, the
    /// default, or one still tracking objects unless --force).
    Delete {
        name: String,
        #[arg(long)]
        force: bool,
    },
}

/// `workspace list -json`'s document (hashicorp/terraform#38397): the
/// same shape whatever happened, `diagnostics` saying what went wrong.
pub fn listed_json(names: &[String], current: &str, diagnostics: &[serde_json::Value]) -> String {
    let doc = serde_json::json!({
        "format_version": "1.0",
        "workspaces": names
            .iter()
            .map(|n| serde_json::json!({"name": n, "is_current": n == current}))
            .collect::<Vec<_>>(),
        "diagnostics": diagnostics,
    });
    format!(
        "{}\n",
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    )
}

fn refused(summary: &str, detail: impl Into<String>) -> Diags {
    Diags::from(Diag::new("strata::workspace", summary, detail))
}

/// What the command prints on success.
pub fn workspace(command: WorkspaceCommand, sources: &mut Sources) -> Result<String, Diags> {
    let current = config::workspace()?;
    let open = |name: &str, sources: &mut Sources| crate::backends::open_here(None, name, sources);
    match command {
        WorkspaceCommand::Show => Ok(format!("{current}\n")),
        WorkspaceCommand::List { json } => {
            let mut names = open(&current, sources)?.workspaces().map_err(state_err)?;
            if json {
                if !names.contains(&current) {
                    names.push(current.clone());
                }
                return Ok(listed_json(&names, &current, &[]));
            }
            let mut out: String = names
                .iter()
                .map(|n| match *n == current {
                    true => format!("* {n}\n"),
                    false => format!("  {n}\n"),
                })
                .collect();
            if !names.contains(&current) {
                out.push_str(&format!("* {current}\n"));
            }
            Ok(out + "\n")
        }
        WorkspaceCommand::New { name, state } => {
            let store = open(&name, sources)?;
            if store.workspaces().map_err(state_err)?.contains(&name) {
                return Err(refused(&format!("Workspace {name:?} already exists"), ""));
            }
            create(&store, &name)?;
            if let Some(file) = state {
                // The workspace was made empty a moment ago: nothing to protect.
                crate::statecmd::push(&store, &file, true)?;
            }
            select(&name)?;
            Ok(created(&name))
        }
        WorkspaceCommand::Select { name, or_create } => {
            let store = open(&name, sources)?;
            if !store.workspaces().map_err(state_err)?.contains(&name) {
                if !or_create {
                    return Err(refused(&format!("Workspace {name:?} doesn't exist."), "You can create this workspace with the \"new\" subcommand or include the \"-or-create\" flag with the \"select\" subcommand."));
                }
                create(&store, &name)?;
                select(&name)?;
                return Ok(created(&name));
            }
            select(&name)?;
            Ok(format!("Switched to workspace {name:?}.\n"))
        }
        WorkspaceCommand::Delete { name, force } => {
            let store = open(&name, sources)?;
            delete(&store, &name, &current, force)
        }
    }
}

fn created(name: &str) -> String {
    format!("Created and switched to workspace {name:?}!\n\nYou're now on a new, empty workspace. Workspaces isolate their state,\nso if you run \"strata plan\" strata will not see any existing state\nfor this configuration.\n")
}

/// A new workspace holds an empty state from the start, so every backend
/// lists it (a local one in its folder, S3 as an object, pg as a row).
fn create(store: &Store, name: &str) -> Result<(), Diags> {
    if !config::valid_workspace_name(name) {
        return Err(refused("Invalid workspace name", format!("The workspace name {name:?} is not allowed. The name must contain only letters, digits, '-' and '_', and no path separators.")));
    }
    let lock = store.lock("workspace new").map_err(state_err)?;
    store.persist(&lock, &mut State::new()).map_err(state_err)
}

/// Records `name` as the workspace of the commands that follow.
fn select(name: &str) -> Result<(), Diags> {
    if let Some((var, _)) = config::workspace_override() {
        return Err(refused("The selected workspace is currently overridden", format!("The selected workspace is currently overridden using the {var} environment variable. To select a new workspace, either update this environment variable or unset it and then run this command again.")));
    }
    let file = config::selected_workspace_file();
    let write = || {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&file, name)
    };
    write().map_err(|e| {
        refused(
            "Cannot record the workspace",
            format!("{}: {e}", file.display()),
        )
    })
}

fn delete(store: &Store, name: &str, current: &str, force: bool) -> Result<String, Diags> {
    if name == "default" {
        return Err(refused(
            "Cannot delete the default workspace",
            "The default workspace always exists; it cannot be deleted.",
        ));
    }
    if name == current {
        return Err(refused(&format!("Workspace {name:?} is your active workspace."), "You cannot delete the currently active workspace. Please switch to another workspace and try again."));
    }
    if !store
        .workspaces()
        .map_err(state_err)?
        .iter()
        .any(|n| n == name)
    {
        return Err(refused(&format!("Workspace {name:?} doesn't exist."), ""));
    }
    let lock = store.lock("workspace delete").map_err(state_err)?;
    let loaded = store.load().map_err(state_err)?;
    // A create a killed run left unfinished may have made its object: the
    // journal that says so is state, and keeps the workspace from going.
    let mut tracked = loaded.state.addresses();
    tracked.extend(loaded.replay.pending.iter().filter_map(|e| match e {
        strata_state::Entry::Intent {
            address, action, ..
        } => Some(format!(
            "{address} (a {action} an interrupted run left unfinished)"
        )),
        _ => None,
    }));
    if !tracked.is_empty() && !force {
        let list: String = tracked.iter().map(|a| format!("  - {a}\n")).collect();
        return Err(refused("Workspace is not empty", format!("Workspace {name:?} is currently tracking the following resource instances:\n{list}\nDeleting this workspace would cause strata to lose track of any associated remote objects, which would then require you to delete them manually outside of strata. You should destroy these objects with strata before deleting the workspace.\n\nIf you want to delete this workspace anyway, and have strata forget about these managed objects, use the -force option to disable this safety check.")));
    }
    store.delete_workspace(lock).map_err(state_err)?;
    let mut out = format!("Deleted workspace {name:?}!\n");
    if !tracked.is_empty() {
        out.push_str(&format!("WARNING: {name:?} was non-empty.\nThe resources managed by the deleted workspace may still exist,\nbut are no longer manageable by strata since the state has\nbeen deleted.\n\n"));
    }
    Ok(out)
}
