//! `strata plan`, `cost` and `drift`: the commands that plan and stop
//! there, their results written by the printer.

use super::args::{CostArgs, DriftArgs, PlanArgs};
use super::printer::Printer;
use super::{outcome, Context};
use std::process::ExitCode;

pub fn plan(a: PlanArgs, cx: &mut Context<'_>) -> ExitCode {
    let mut shown = Printer {
        json: a.json,
        format: a.format,
    };
    shown.opening();
    let r = cx.options(&a.run, a.destroy).and_then(|opts| {
        let opts = crate::engine::Options {
            json: a.json,
            generate_config_out: a.generate_config_out,
            ..opts
        };
        let how = (a.out.as_deref(), a.format);
        let (sources, drivers) = (&mut cx.sources, cx.drivers);
        let done = crate::engine::plan(&a.path, &opts, how, &mut shown, sources, drivers)?;
        shown.planned(&done, a.out.as_deref());
        Ok(done.outcome)
    });
    shown.finish(outcome(r, a.detailed_exitcode), &cx.sources)
}

pub fn cost(a: CostArgs, cx: &mut Context<'_>) -> ExitCode {
    let mut shown = Printer {
        json: false,
        format: a.format,
    };
    let r = cx.options(&a.run, false).and_then(|opts| {
        let (sources, drivers) = (&mut cx.sources, cx.drivers);
        let costed = crate::engine::cost(&a.path, &opts, &mut shown, sources, drivers)?;
        shown.cost(&costed, sources);
        Ok(ExitCode::SUCCESS)
    });
    shown.finish(r, &cx.sources)
}

/// Exit 0 with no drift, 2 with drift (whatever `--detailed-exitcode`).
pub fn drift(a: DriftArgs, cx: &mut Context<'_>) -> ExitCode {
    let mut shown = Printer {
        json: false,
        format: a.format,
    };
    let r = cx.workspace.clone().and_then(|workspace| {
        let opts = crate::engine::Options {
            inputs: cx.inputs.clone(),
            state: a.state,
            parallelism: a.parallelism as usize,
            workspace,
            lock_timeout: cx.lock_timeout,
            ..Default::default()
        };
        let (sources, drivers) = (&mut cx.sources, cx.drivers);
        let ignore = &a.ignore;
        let drifted = crate::engine::drift(&a.path, &opts, ignore, &mut shown, sources, drivers)?;
        shown.drift(&drifted);
        Ok(drifted.outcome())
    });
    Printer::human().finish(outcome(r, true), &cx.sources)
}
