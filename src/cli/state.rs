//! The commands over the state alone: `state …`, `taint` and `untaint`,
//! `output`, `force-unlock`, and `report` over the history beside it. Each opens the store the configuration (or
//! `--state`) names and writes what the command says.

use super::args::{ForceUnlockArgs, OutputArgs, ReportArgs, StateArgs, StateCommand, TaintArgs};
use super::{print, printer, Context};
use crate::diag::Diags;
use crate::engine::{self, OutputFormat};

pub fn state(a: StateArgs, cx: &mut Context<'_>) -> Result<(), Diags> {
    let store = cx.store(a.state.as_deref())?;
    print(match a.command {
        StateCommand::List { addresses, id } => {
            engine::state_list(&store, &addresses, id.as_deref())
        }
        StateCommand::Identities {
            addresses,
            id,
            json: true,
        } => engine::state_identities(&store, &addresses, id.as_deref()),
        StateCommand::Identities { json: false, .. } => Err(crate::diag::Diag::new(
            "strata::cli::usage",
            "The state identities command requires the -json flag",
            "Run strata state identities -json: JSON is its only form, as in Terraform.",
        )
        .into()),
        StateCommand::Show { address, json } => {
            let shown = engine::state_show(&store, &address, cx.drivers);
            match json {
                true => return printer::state_object_json(shown, &cx.sources),
                false => shown.map(|shown| printer::state_object(&shown)),
            }
        }
        StateCommand::Rm { addresses, dry_run } => engine::state_rm(&store, &addresses, dry_run),
        StateCommand::Mv { from, to, dry_run } => engine::state_mv(&store, (&from, &to), dry_run),
        StateCommand::Pull => engine::state_pull(&store),
        StateCommand::ReplaceProvider {
            from,
            to,
            auto_approve,
        } => {
            let approve = |shown: &str| {
                printer::out(shown);
                auto_approve
                    || printer::ask("Do you want to make these changes?\nOnly 'yes' will be accepted to continue.")
            };
            engine::replace_provider(&store, (&from, &to), &approve)
        }
        StateCommand::Push { file, force } => engine::state_push(&store, &file, force),
    })
}

/// `taint` (`tainted`) or `untaint`.
pub fn taint(a: TaintArgs, tainted: bool, cx: &mut Context<'_>) -> Result<(), Diags> {
    let store = cx.store(a.state.as_deref())?;
    let (said, warnings) = engine::taint(&store, &a.address, tainted, a.allow_missing)?;
    printer::diagnostics(&Diags(warnings), &cx.sources);
    printer::text(Ok(said))
}

pub fn output(a: OutputArgs, cx: &mut Context<'_>) -> Result<(), Diags> {
    let format = match (a.json, a.raw) {
        (true, _) => OutputFormat::Json,
        (_, true) => OutputFormat::Raw,
        _ => OutputFormat::Human,
    };
    let store = cx.store(a.state.as_deref())?;
    print(engine::output(&store, a.name.as_deref(), format))
}

pub fn force_unlock(a: ForceUnlockArgs, cx: &mut Context<'_>) -> Result<(), Diags> {
    let store = cx.store(a.state.as_deref())?;
    print(engine::force_unlock(&store, &a.id))
}

pub fn report(a: ReportArgs, cx: &mut Context<'_>) -> Result<(), Diags> {
    let store = cx.store(a.state.as_deref())?;
    let r = engine::report(&store, a.since.as_deref(), a.until.as_deref())?;
    printer::text(Ok(printer::report(&r, a.format)))
}
