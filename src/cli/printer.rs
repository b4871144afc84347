//! The one place the CLI writes to the terminal: what the engine returns
//! and what its [`View`] is told, in Terraform's words on a terminal or as
//! its machine-readable UI (`-json`), and errors as diagnostics.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use crate::diag::{Diag, Diags, Sources};
use crate::engine::{
    ActionSaid, Applied, ApplyReport, Costed, Drifted, Format, ImportStep, Mode, Notice, Outcome,
    Plan, Showing, Shown, StateObject, View,
};
use crate::render::human;
use std::io::Write;
use std::process::ExitCode;

/// How a command's output is written.
#[derive(Clone, Copy)]
pub struct Printer {
    /// `-json`: Terraform's machine-readable UI, one message a line.
    pub json: bool,
    /// `--format`: how a plan, cost or drift report is written.
    pub format: Format,
}

impl Printer {
    /// An action's progress: Terraform's lines, or under `-json` its
    /// messages.
    fn action(&self, (addr, type_name, name): (&str, &str, &str), said: &str, step: ActionSaid) {
        use crate::ui::{ActionHook, ActionStep};
        if self.json {
            let step = match &step {
                ActionSaid::Started => ActionStep::Started,
                ActionSaid::Progress(m) => ActionStep::Progress(m),
                ActionSaid::Complete => ActionStep::Complete,
                ActionSaid::Failed(why) => ActionStep::Errored(why),
            };
            println!(
                "{}",
                crate::ui::action_said(
                    &ActionHook {
                        addr,
                        type_name,
                        name,
                        lifecycle: None,
                    },
                    step
                )
            );
            return;
        }
        match step {
            ActionSaid::Started => println!("Action started: {said}"),
            ActionSaid::Progress(m) => println!("Action {said}: {m}"),
            ActionSaid::Complete => println!("Action complete: {said}"),
            ActionSaid::Failed(why) => println!("Action failed: {said} - {why}"),
        }
    }

    pub fn human() -> Printer {
        Printer {
            json: false,
            format: Format::Human,
        }
    }

    /// The machine-readable UI's first message, before anything can fail.
    pub fn opening(&self) {
        if self.json {
            println!("{}", crate::ui::version(crate::engine::TERRAFORM_LANGUAGE));
        }
    }

    /// The exit code of `result`, its errors written: as diagnostics on
    /// stderr, or with `-json` as the UI's messages on stdout, where a
    /// reader of the stream looks.
    pub fn finish(&self, result: Result<ExitCode, Diags>, sources: &Sources) -> ExitCode {
        match result {
            Ok(code) => code,
            Err(diags) if self.json => {
                for d in &diags.0 {
                    let json = d.to_json(sources);
                    println!("{}", crate::ui::diagnostic(d.warning, &d.summary, json));
                }
                ExitCode::from(1)
            }
            Err(diags) => {
                diagnostics(&diags, sources);
                ExitCode::from(1)
            }
        }
    }

    /// Warnings (failed checks and the like): beside human output, where
    /// and as Terraform writes them (stdout, its layout); beside JSON or
    /// markdown, on stderr; with `-json`, as the UI's messages.
    pub fn warnings(&self, warnings: &[Diag], sources: &Sources) {
        if !self.json {
            return warn(warnings, sources, self.format == Format::Human);
        }
        for d in warnings {
            let json = d.to_json(sources);
            println!("{}", crate::ui::diagnostic(true, &d.summary, json));
        }
    }

    /// What `strata plan` says after its plan: where configuration was
    /// generated, and that an unsaved plan may not be what is applied.
    pub fn planned(&self, done: &crate::engine::PlanDone, out: Option<&std::path::Path>) {
        if self.json {
            return;
        }
        let human = self.format == Format::Human;
        // Advice a script (TF_IN_AUTOMATION) is not given.
        let advice = !crate::ui::in_automation();
        let applyable = done.outcome == Outcome::Changes;
        let unsaved = human && out.is_none() && applyable && advice;
        let written = done.generated.as_ref().filter(|_| advice);
        if unsaved || written.is_some() {
            println!("\n{}", human::RULE);
        }
        if let Some(file) = written {
            println!("\nstrata has generated configuration and written it to {}. Please review\nthe configuration and edit it as necessary before adding it to version\ncontrol.", file.display());
        }
        if unsaved {
            println!("\nNote: You didn't use the -out option to save this plan, so strata can't\nguarantee to take exactly these actions if you run \"strata apply\" now.");
        }
        if let (Some(file), true) = (out, human) {
            let (rule, file) = (human::RULE, file.display());
            println!("\n{rule}\n\nSaved the plan to: {file}\n\nTo perform exactly these actions, run the following command to apply:\n    strata apply \"{file}\"");
        }
    }

    /// What an apply did, or what failed: in Terraform's words, or its
    /// machine-readable UI's.
    pub fn applied(&self, applied: Applied, sources: &Sources) -> Result<Outcome, Diags> {
        let r = match applied {
            Applied::Done(r) => r,
            Applied::Nothing(r) => {
                self.summary(&r)?;
                return Ok(Outcome::NoChanges);
            }
        };
        self.warnings(r.scope_warning.as_slice(), sources);
        let outcome = self.summary(&r);
        warn(&r.report.warnings, sources, !self.json);
        match r.unplaced.is_empty() {
            true => outcome,
            false => Err(Diags(r.unplaced)),
        }
    }

    fn summary(&self, r: &ApplyReport) -> Result<Outcome, Diags> {
        let (report, destroy) = (&r.report, r.mode.is_destroy());
        if !report.failed.is_empty() || !report.not_started.is_empty() {
            if !self.json {
                println!("\n{}", stopped(r));
                // Interrupted, what did not start is the run's own choice:
                // the error names it, and no list of dependents follows.
                if report.not_started.is_empty() {
                    for s in &report.skipped {
                        println!("  skipped: {s}");
                    }
                }
            }
            return Err(r.failed.clone());
        }
        // An action invoked from the command line that failed is the
        // apply's error, as in Terraform (a triggered one whose
        // `on_failure` is `continue` is a warning).
        if !r.failed.is_empty() {
            return Err(r.failed.clone());
        }
        let outputs = crate::engine::state_outputs(&r.outputs);
        if self.json {
            let (a, c, d, i) = (
                report.added,
                report.changed,
                report.destroyed,
                report.imported,
            );
            let actions = (r.actions.invoked, r.actions.failed);
            println!(
                "{}",
                crate::render::ui::applied((a, c, d, i), actions, r.mode)
            );
            match crate::render::ui::outputs(&outputs, true) {
                Some(l) if !destroy => println!("{l}"),
                _ => {}
            }
            return Ok(Outcome::Changes);
        }
        // Terraform 1.14's count of actions, where any were invoked.
        let actions = match (r.actions.invoked, r.actions.failed) {
            (0, _) => String::new(),
            (n, 0) => format!(" Actions: {n} invoked."),
            (n, f) => format!(" Actions: {n} invoked, {f} failed."),
        };
        match destroy {
            true => println!(
                "\nDestroy complete! Resources: {} destroyed.{actions}",
                report.destroyed
            ),
            false => {
                let imported = match report.imported {
                    0 => String::new(),
                    n => format!("{n} imported, "),
                };
                // Terraform 1.11 does not count what `removed` blocks forgot here.
                println!(
                    "\nApply complete! Resources: {imported}{} added, {} changed, {} destroyed.{actions}",
                    report.added, report.changed, report.destroyed
                );
            }
        }
        if !destroy && !outputs.is_empty() {
            println!("\nOutputs:\n");
            for o in &outputs {
                let shown = match (o.sensitive, &o.after) {
                    (true, _) => "<sensitive>".to_string(),
                    (false, Some(v)) => crate::lang::display::show(v),
                    (false, None) => r.outputs[&o.name].value.to_string(),
                };
                println!("{} = {shown}", o.name);
            }
        }
        Ok(Outcome::Changes)
    }

    /// `strata cost`'s report.
    pub fn cost(&self, c: &Costed, sources: &Sources) {
        use crate::render::placement::{dispatch_human, dispatch_markdown, standing};
        let standing = standing(&c.placements, &std::collections::BTreeMap::new());
        let text = match self.format {
            Format::Human => {
                let cost = match c.cost.is_empty() {
                    true => "Nothing in this configuration or its state is priced: no node pools or managed control planes.\n".to_string(),
                    false => crate::render::cost::human(&c.cost),
                };
                cost + &standing + &dispatch_human(&c.dispatch)
            }
            Format::Json => crate::render::cost::json(&c.cost, &c.placements, &c.dispatch),
            Format::Markdown => format!(
                "### strata cost\n\n{}{standing}{}",
                crate::render::cost::markdown(&c.cost),
                dispatch_markdown(&c.dispatch)
            ),
        };
        print!("{}", text.trim_start_matches('\n'));
        warn(&c.warnings, sources, false);
    }

    /// `strata drift`'s report.
    pub fn drift(&self, d: &Drifted) {
        let standing = crate::render::placement::standing(&d.placements, &d.ready);
        let text = match self.format {
            Format::Human => crate::render::drift::human(&d.drift, &d.schemas) + &standing,
            Format::Json => crate::render::drift::report_json(&d.drift, &d.placements, &d.ready),
            Format::Markdown => crate::render::drift::markdown(&d.drift, &d.schemas) + &standing,
        };
        print!("{text}");
    }

    /// A line of a failover's rounds: as it reads, or with `-json` as a
    /// `log` message of the UI.
    fn round(&self, text: &str) {
        match self.json {
            true => println!(
                "{}",
                crate::ui::line("info", text.trim(), "log", serde_json::Value::Null)
            ),
            false => println!("{text}"),
        }
    }

    fn plan_made(&self, plan: &Plan, refreshed: bool, warnings: &[Diag], sources: &Sources) {
        if self.json {
            for l in crate::render::ui::plan(plan) {
                println!("{l}");
            }
            return self.warnings(warnings, sources);
        }
        if self.format == Format::Human {
            print!("{}", human::refreshing(plan, refreshed));
            print!("{}", plugin_note(plan));
        }
        print!("{}", render(plan, self.format));
        self.warnings(warnings, sources);
    }
}

impl View for Printer {
    fn notice(&mut self, notice: Notice) {
        match notice {
            Notice::Steps(text) => out(&text),
            Notice::DestroyWithoutConfiguration { dir } => eprintln!(
                "Note: {} holds no configuration files; every object the state records will be destroyed, using only what the state knows of it.",
                dir.display()
            ),
            Notice::LockTakenOver { who, operation, since } => eprintln!(
                "Warning: the state was locked by {who} (operation {operation}, since {since}), which is no longer running; this run took the lock over."
            ),
            // Terraform's words, said as a warning: what the command did
            // stands, and only the next run can be stopped by the lock.
            Notice::UnlockFailed { why } => eprint!(
                "\nWarning: Error releasing the state lock\n\nError message: {why}\n\nstrata acquires a lock when accessing your state to prevent others\nrunning strata to potentially modify the state at the same time. An\nerror occurred while releasing this lock. This could mean that the lock\ndid or did not release properly. If the lock didn't release properly,\nstrata may not be able to run future commands since it'll appear as if\nthe lock is held.\n\nIn this scenario, please call the \"force-unlock\" command to unlock the\nstate manually. This is a very dangerous operation since if it is done\nerroneously it could result in two people modifying state at the same time.\nOnly call this command if you're certain that the unlock above failed and\nthat no one else is holding a lock.\n"
            ),
            Notice::Interrupted { folded, pending } => {
                let written = match folded {
                    true => "what it finished is now written in the state, and ",
                    false => "",
                };
                eprintln!("Warning: the last apply was interrupted; {written}{pending} creates that may have happened will be checked by the next apply.");
            }
            Notice::Recovered {
                recorded,
                adopted,
                discarded,
            } => {
                eprintln!(
                    "Recovered an interrupted apply: {recorded} operations were already recorded, {adopted} objects created but not recorded were adopted."
                );
                for what in discarded {
                    eprintln!("  Deleted {what}: the interrupted apply made it, and it cannot be adopted (what only its create's answer held, such as a key's secret, died with that run).");
                }
            }
            // A failover's rounds, said in the stream's own form: a
            // `-json` reader parses every line of stdout.
            Notice::Placement(line) => self.round(&format!("\n{line}")),
            Notice::RoundFailed { addr, why } => self.round(&format!("  {addr} failed: {why}")),
            Notice::RoundWaits { addr } => self.round(&format!("  {addr} waits for the next round.")),
            Notice::NextTry(line) => self.round(&line),
            Notice::GpusUnknown { pool, why } => {
                eprintln!("Warning: the GPUs of {pool} are not known: {why}")
            }
            Notice::HistoryNotWritten { why } => {
                eprintln!("Warning: this run's observation was not added to the history `strata report` reads: {why}")
            }
            Notice::Import(step) => import_step(step),
            Notice::Action {
                addr,
                type_name,
                name,
                said,
                step,
            } => self.action((&addr, &type_name, &name), &said, step),
        }
    }

    fn plan(&mut self, shown: Shown<'_>, warnings: &[Diag], sources: &Sources) {
        match shown {
            Shown::Made { plan, refreshed } => self.plan_made(plan, refreshed, warnings, sources),
            // What a failed plan made is shown as a plan, whatever the
            // format asked for.
            Shown::Partial(plan) if !self.json => {
                print!("{}", human::refreshing(plan, true));
                print!("{}", human::plan(plan));
                warn(warnings, sources, true);
            }
            Shown::Partial(plan) => self.plan_made(plan, true, warnings, sources),
            // A failover's next round is said as its planned changes.
            Shown::Saved(plan) | Shown::Round(plan) if self.json => {
                for l in crate::render::ui::planned_changes(plan) {
                    println!("{l}");
                }
            }
            Shown::Saved(_) => {}
            Shown::Round(plan) => print!("{}", human::plan(plan)),
        }
    }

    fn test_step(&mut self, step: crate::engine::TestStep<'_>, sources: &Sources) {
        use crate::engine::TestStep;
        if self.json {
            return super::test_ui::step(&step, sources);
        }
        match step {
            TestStep::Found(_) | TestStep::RunBegins { .. } | TestStep::RunTearingDown { .. } => {}
            TestStep::FileBegins(file) => line(&format!("{file}... in progress")),
            TestStep::Run {
                name,
                status,
                diags,
                shown,
                ..
            } => {
                line(&format!("  run {name:?}... {}", status.word()));
                if let Some(text) = shown {
                    out(text);
                }
                diagnostics(diags, sources);
            }
            TestStep::TearingDown(file) => line(&format!("{file}... tearing down")),
            TestStep::FileDiags(_, diags) => diagnostics(diags, sources),
            TestStep::FileDone(file, status) => line(&format!("{file}... {}", status.word())),
        }
    }

    fn diagnostics(&mut self, diags: &Diags, sources: &Sources) {
        if !self.json {
            return diagnostics(diags, sources);
        }
        for d in &diags.0 {
            let json = d.to_json(sources);
            println!("{}", crate::ui::diagnostic(d.warning, &d.summary, json));
        }
    }

    fn progress(&self) -> fn(&str) {
        line
    }

    fn approve(&mut self, mode: Mode) -> bool {
        ask(match mode.is_destroy() {
            true => "Do you really want to destroy all resources?\n  strata will destroy all your managed infrastructure, as shown above.\n  There is no undo. Only 'yes' will be accepted to confirm.",
            false => "Do you want to perform these actions?\n  strata will perform the actions described above.\n  Only 'yes' will be accepted to approve.",
        })
    }

    fn confirm(&mut self, question: &str) -> bool {
        ask(question)
    }
}

fn import_step(step: ImportStep) {
    match step {
        ImportStep::Importing { to, id } => println!("{to}: Importing from ID {id:?}..."),
        ImportStep::Prepared { to, type_name } => {
            println!("{to}: Import prepared!\n  Prepared {type_name} for import")
        }
        ImportStep::Refreshing { to, id } => println!("{to}: Refreshing state... [id={id}]"),
        ImportStep::Done => println!("\nImport successful!\n\nThe resources that were imported are shown above. These resources are now in\nyour strata state and will henceforth be managed by strata.\n"),
    }
}

/// Warnings beside human output where and as Terraform writes them
/// (stdout, its layout); beside JSON or markdown, on stderr.
fn warn(warnings: &[Diag], sources: &Sources, human: bool) {
    for d in warnings {
        match human {
            true => print!("{}", d.terraform_text(sources)),
            false => eprintln!("{:?}", miette::Report::new(d.report(sources))),
        }
    }
}

/// Asks `what` on stdout and reads the answer: true for `yes` alone.
pub fn ask(what: &str) -> bool {
    print!("\n{what}\n\n  Enter a value: ");
    let _ = std::io::stdout().flush();
    // Ctrl-C at the question is a "no": the run lets go of the state.
    let line = crate::interrupt::read_answer().unwrap_or_default();
    println!();
    line.trim() == "yes"
}

/// Errors and warnings as diagnostics, on stderr.
pub fn diagnostics(diags: &Diags, sources: &Sources) {
    for d in &diags.0 {
        eprintln!("{:?}", miette::Report::new(d.report(sources)));
    }
}

/// A command's text, written as it is.
/// `strata report` in the form asked for.
pub fn report(r: &crate::engine::Report, format: Format) -> String {
    use crate::render::report;
    match format {
        Format::Human => report::human(r),
        Format::Json => format!("{}\n", report::json(r)),
        Format::Markdown => report::markdown(r),
    }
}

pub fn text(r: Result<String, Diags>) -> Result<(), Diags> {
    r.map(|text| out(&text))
}

/// Text on stdout, as it is.
pub fn out(text: &str) {
    print!("{text}");
}

/// A line of the CLI's own (a usage note, an error before any source is
/// read), on stderr.
pub fn say(line: &str) {
    eprintln!("{line}");
}

/// A line of a command's output, on stdout.
pub fn line(line: &str) {
    println!("{line}");
}

/// Which types provider plugins serve in place of strata's own drivers,
/// said before the plan (empty when none do).
fn plugin_note(plan: &Plan) -> String {
    if plan.plugin_served.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nProvider plugins serve, in place of strata's own drivers:\n");
    for served in &plan.plugin_served {
        out.push_str(&format!("  - {}\n", served.line()));
    }
    out.push('\n');
    out
}

/// `show`'s text: a saved plan or a state, as Terraform prints it or as
/// its JSON.
pub fn showing(showing: &Showing, format: Format) -> String {
    let language = crate::engine::TERRAFORM_LANGUAGE;
    match (showing, format) {
        (Showing::Plan(plan), _) => render(plan, format),
        (Showing::State { state, .. }, Format::Json) => {
            let something = !state.objects.is_empty() || !state.outputs.is_empty();
            let exists = state.existed && something;
            crate::render::json::state(&state.objects, &state.outputs, exists, language)
        }
        (Showing::State { state, schemas }, _) => {
            human::state(&state.objects, schemas, &state.outputs, state.existed)
        }
    }
}

/// `state show`'s text: one instance as Terraform prints it.
pub fn state_object(shown: &StateObject) -> String {
    human::state_object(&shown.object, &shown.schemas)
}

/// `state show -json`: the document, whether or not the instance could
/// be shown; what went wrong is in it, and the run still fails.
pub fn state_object_json(
    shown: Result<StateObject, Diags>,
    sources: &Sources,
) -> Result<(), Diags> {
    match shown {
        Ok(s) => {
            out(&crate::render::json::state_object(Some(&s.object), &[]));
            Ok(())
        }
        Err(d) => {
            let said = d.to_json(sources)["diagnostics"].as_array().cloned();
            out(&crate::render::json::state_object(
                None,
                &said.unwrap_or_default(),
            ));
            Err(Diags::default())
        }
    }
}

fn render(plan: &Plan, format: Format) -> String {
    match format {
        Format::Human => human::plan(plan),
        Format::Json => crate::render::json::plan(plan, crate::engine::TERRAFORM_LANGUAGE),
        Format::Markdown => crate::render::markdown::plan(plan),
    }
}

/// The line an apply that did not finish ends with: stopped by failures,
/// or interrupted (what it had not started counted apart from failures).
fn stopped(r: &ApplyReport) -> String {
    let report = &r.report;
    let done = format!(
        "{} added, {} changed, {} destroyed",
        report.added, report.changed, report.destroyed
    );
    if report.not_started.is_empty() {
        return format!(
            "Apply stopped: {done}; {} failed, {} skipped because something they depend on failed.",
            report.failed.len(),
            report.skipped.len()
        );
    }
    let failed = match report.failed.len() {
        0 => String::new(),
        n => format!(", {n} failed"),
    };
    let left = report.not_started.len() + report.skipped.len();
    format!("Apply interrupted: {done}; {left} not started{failed}.")
}
