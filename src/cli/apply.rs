//! `strata apply`, `destroy`, `refresh` and `import`: the commands that
//! change the state, their progress and summary written by the printer.

use super::args::{ApplyArgs, Changing, DestroyArgs, ImportArgs, RefreshArgs};
use super::printer::Printer;
use super::{outcome, Context};
use std::path::Path;
use std::process::ExitCode;

pub fn apply(a: ApplyArgs, cx: &mut Context<'_>) -> ExitCode {
    applied(&a.target, &a.changing, false, cx)
}

pub fn destroy(a: DestroyArgs, cx: &mut Context<'_>) -> ExitCode {
    applied(&a.path, &a.changing, true, cx)
}

/// `apply --refresh-only --auto-approve`, as Terraform's `refresh` is.
pub fn refresh(mut a: RefreshArgs, cx: &mut Context<'_>) -> ExitCode {
    a.run.refresh_only = true;
    let changing = Changing {
        vars: a.vars,
        run: a.run,
        auto_approve: true,
        json: false,
    };
    applied(&a.path, &changing, false, cx)
}

fn applied(target: &Path, how: &Changing, destroy: bool, cx: &mut Context<'_>) -> ExitCode {
    let mut shown = Printer {
        json: how.json,
        format: crate::engine::Format::Human,
    };
    shown.opening();
    let r = cx.options(&how.run, destroy).and_then(|opts| {
        let opts = crate::engine::Options {
            json: how.json,
            ..opts
        };
        let (sources, drivers, yes) = (&mut cx.sources, cx.drivers, how.auto_approve);
        let applied = crate::engine::apply(target, &opts, yes, &mut shown, sources, drivers)?;
        shown.applied(applied, sources)
    });
    shown.finish(outcome(r, false), &cx.sources)
}

pub fn import(a: ImportArgs, cx: &mut Context<'_>) -> ExitCode {
    let mut shown = Printer::human();
    let r = cx.options(&a.run, false).and_then(|opts| {
        let what = (a.address.as_str(), a.id.as_str());
        let (sources, drivers) = (&mut cx.sources, cx.drivers);
        crate::engine::import(&a.path, &opts, what, &mut shown, sources, drivers)
    });
    shown.finish(r.map(|()| ExitCode::SUCCESS), &cx.sources)
}
