//! The commands that set the working directory up and look at it:
//! `init`, `get`, `providers [schema -json]`, `workspace …`. The engine
//! does each; this reads clap's arguments into its requests.

use super::args::{InitArgs, ProvidersCommand};
use super::{printer, Context};
use crate::diag::{Diag, Diags};
use std::path::PathBuf;

pub fn init(a: InitArgs, cx: &mut Context<'_>) -> Result<(), Diags> {
    let req = crate::engine::Init {
        path: &a.path,
        backend: !a.no_backend,
        get: !a.no_get,
        upgrade: a.upgrade,
        reconfigure: a.reconfigure,
        migrate_state: a.migrate_state,
        force_copy: a.force_copy,
        backend_config: &a.backend_config,
        from_module: a.from_module.as_deref(),
        inputs: cx.inputs.clone(),
        test_directory: &a.test_directory,
    };
    let view = &mut printer::Printer::human();
    printer::text(crate::engine::init(req, view, &mut cx.sources, cx.drivers))
}

pub fn get(
    path: PathBuf,
    (update, tests): (bool, &std::path::Path),
    cx: &mut Context<'_>,
) -> Result<(), Diags> {
    let inputs = cx.inputs.clone();
    let how = crate::engine::Getting { update, tests };
    printer::text(crate::engine::get(&path, how, &inputs, &mut cx.sources))
}

/// `strata providers [schema -json]`.
pub fn providers(
    command: Option<ProvidersCommand>,
    path: PathBuf,
    cx: &mut Context<'_>,
) -> Result<(), Diags> {
    let workspace = cx.workspace.clone()?;
    let (sources, drivers) = (&mut cx.sources, cx.drivers);
    printer::text(match command {
        Some(ProvidersCommand::Schema { json: true, path }) => {
            crate::engine::provider_schemas(&path, &workspace, sources, drivers)
        }
        Some(ProvidersCommand::Schema { json: false, .. }) => Err(Diag::new(
            "strata::cli::usage",
            "The providers schema command requires the -json flag",
            "Run strata providers schema -json: JSON is its only form, as in Terraform.",
        )
        .into()),
        Some(ProvidersCommand::Lock {
            providers,
            platforms,
            fs_mirror,
            net_mirror,
            enable_plugin_cache,
        }) => {
            let req = crate::engine::ProvidersLock {
                providers,
                platforms,
                fs_mirror,
                net_mirror,
                plugin_cache: enable_plugin_cache,
            };
            let mut view = printer::Printer::human();
            crate::engine::providers_lock(&path, &req, &mut view, sources, drivers)
        }
        Some(ProvidersCommand::Mirror {
            dir,
            platforms,
            lock_file,
        }) => {
            let req = crate::engine::ProvidersMirror {
                dir,
                platforms,
                lock_file,
            };
            let mut view = printer::Printer::human();
            crate::engine::providers_mirror(&path, &req, &mut view, sources, drivers)
        }
        None => crate::engine::providers(&path, &workspace, sources, drivers),
    })
}

pub fn workspace(
    command: crate::engine::WorkspaceCommand,
    cx: &mut Context<'_>,
) -> Result<(), Diags> {
    let json = matches!(
        command,
        crate::engine::WorkspaceCommand::List { json: true }
    );
    match crate::engine::workspace(command, &mut cx.sources) {
        // The JSON document says what went wrong itself, and the run
        // still fails.
        Err(d) if json => {
            let said = d.to_json(&cx.sources)["diagnostics"].as_array().cloned();
            printer::out(&crate::engine::workspaces_json(
                &[],
                "",
                &said.unwrap_or_default(),
            ));
            Err(Diags::default())
        }
        r => printer::text(r),
    }
}
