//! The command line. Each subcommand loads what it needs, runs one stage and
//! maps the outcome to the exit codes in DESIGN.md (0 ok, 1 error).

use crate::diag::{Diag, Diags, Sources};
use crate::engine::{CliInput, Drivers};
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use args::TERRAFORM_SPELLINGS;
pub use args::{price_list, Cli, Command, ProvidersCommand, RunArgs, StateCommand, VarArgs};
use args::{
    CostArgs, DestroyArgs, DriftArgs, ImportArgs, PlanArgs, RefreshArgs, ShowArgs, StateArgs,
    ValidateArgs,
};
use printer::Printer;

mod apply;
mod args;
mod fmt;
mod inspect;
mod junit;
mod plan;
mod printer;
mod spelling;
mod state;
mod test_ui;
mod workdir;

/// What `--help` says of Terraform's spellings (which `spelling.rs` reads).
/// `--var` and `--var-file` in the order they were given, which decides
/// which wins when both set the same variable.
fn cli_inputs(m: &ArgMatches) -> Vec<CliInput> {
    let Some((_, sub)) = m.subcommand() else {
        return Vec::new();
    };
    let mut items: Vec<(usize, CliInput)> = Vec::new();
    // Commands without variables (fmt) have no such arguments at all.
    if sub.try_contains_id("vars").is_err() {
        return Vec::new();
    }
    if let (Some(idx), Some(vals)) = (sub.indices_of("vars"), sub.get_many::<String>("vars")) {
        items.extend(idx.zip(vals).map(|(i, v)| (i, CliInput::Var(v.clone()))));
    }
    if let (Some(idx), Some(vals)) = (
        sub.indices_of("var_files"),
        sub.get_many::<PathBuf>("var_files"),
    ) {
        items.extend(idx.zip(vals).map(|(i, v)| (i, CliInput::File(v.clone()))));
    }
    items.sort_by_key(|(i, _)| *i);
    items.into_iter().map(|(_, c)| c).collect()
}

/// Colours only on a terminal and never with NO_COLOR; no hyperlinks, so the
/// output reads the same in CI logs as on a laptop.
fn install_report_hook(no_color: bool) {
    let _ = miette::set_hook(Box::new(move |_| {
        let color =
            !no_color && std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Box::new(
            miette::MietteHandlerOpts::new()
                .terminal_links(false)
                .word_splitter(textwrap::WordSplitter::NoHyphenation)
                .color(color)
                .unicode(true)
                .width(100)
                .build(),
        )
    }));
}

/// Parsing and evaluation recurse as deep as expressions nest (bounded by
/// `syntax::MAX_NESTING`), so the work runs on a thread with a large stack.
/// The command line with a given set of drivers and arguments (tests run
/// the real command line with drivers of their own).
pub fn main_with(drivers: Drivers, args: Vec<std::ffi::OsString>) -> ExitCode {
    let drivers = crate::engine::reading_remote_states(drivers);
    crate::interrupt::install();
    let (d, a) = (drivers.clone(), args.clone());
    match std::thread::Builder::new()
        .stack_size(crate::par::STACK)
        .spawn(move || run(&d, a))
    {
        Ok(handle) => handle.join().unwrap_or(ExitCode::from(1)),
        Err(_) => run(&drivers, args),
    }
}

/// The configuration (and, for `test`, its runs' modules) whose provider
/// plugins `command` needs, if it needs any.
fn plugin_dir(command: &Command) -> Option<crate::engine::PluginsFor> {
    use crate::engine::PluginsFor;
    if let Command::Test(a) = command {
        return Some(PluginsFor::Tests {
            dir: PathBuf::from("."),
            test_directory: a.test_directory.clone(),
        });
    }
    let saved = match command {
        Command::Apply(a) if a.target.is_file() => Some(&a.target),
        Command::Show(ShowArgs {
            planfile: Some(f), ..
        }) if f.is_file() => Some(f),
        _ => None,
    };
    match saved {
        // A saved plan is applied in the directory it was made in.
        Some(file) => Some(PluginsFor::SavedPlan {
            dir: PathBuf::from("."),
            file: file.clone(),
        }),
        None => plugin_config_dir(command).map(PluginsFor::Config),
    }
}

/// The configuration directory whose provider plugins `command` needs.
fn plugin_config_dir(command: &Command) -> Option<PathBuf> {
    let here = || Some(PathBuf::from("."));
    match command {
        Command::Plan(PlanArgs { path, .. })
        | Command::Drift(DriftArgs { path, .. })
        | Command::Cost(CostArgs { path, .. })
        | Command::Destroy(DestroyArgs { path, .. })
        | Command::Refresh(RefreshArgs { path, .. })
        | Command::Import(ImportArgs { path, .. })
        | Command::Validate(ValidateArgs { path, .. })
        | Command::Graph { path, .. }
        | Command::Providers {
            command: Some(ProvidersCommand::Schema { path, .. }),
            ..
        } => Some(path.clone()),
        Command::Apply(a) => Some(a.target.clone()),
        Command::Console(a) => a.path.clone().or_else(here),
        Command::Query(_) => here(),
        Command::Show(_) => here(),
        Command::State(StateArgs {
            command: StateCommand::Show { .. },
            ..
        }) => here(),
        _ => None,
    }
}

/// The request budgets set in the environment (`STRATA_BUDGET_*`),
/// checked by the commands that may ask a cloud something, before they do.
fn budget_settings() -> Result<(), Diags> {
    let vars = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())));
    strata_provider::budget::check_settings(vars).map_err(|e| {
        let d = Diag::new(
            "strata::budget::setting",
            "Invalid request budget",
            e.to_string(),
        );
        Diags::from(d)
    })
}

/// What every command is run with, decided once from the command line.
struct Context<'d> {
    /// `--var` and `--var-file`, in the order given.
    inputs: Vec<CliInput>,
    /// The workspace; an invalid name fails only the commands using it.
    workspace: Result<String, Diags>,
    lock_timeout: std::time::Duration,
    sources: Sources,
    drivers: &'d Drivers,
}

impl Context<'_> {
    /// The store the configuration's backend (or `--state FILE`) keeps
    /// the workspace's state in.
    fn store(&mut self, state: Option<&Path>) -> Result<strata_state::Store, Diags> {
        let workspace = self.workspace.clone()?;
        crate::engine::open_store(state, &workspace, &mut self.sources)
    }

    /// The engine's options for a command that plans.
    fn options(&self, run: &RunArgs, destroy: bool) -> Result<crate::engine::Options, Diags> {
        let (inputs, workspace) = (self.inputs.clone(), self.workspace.clone());
        run.options(inputs, destroy, workspace, self.lock_timeout)
    }
}

fn outcome(r: Result<crate::engine::Outcome, Diags>, detailed: bool) -> Result<ExitCode, Diags> {
    r.map(|o| match o {
        crate::engine::Outcome::Changes if detailed => ExitCode::from(2),
        _ => ExitCode::SUCCESS,
    })
}

/// A usage error (an unknown flag, a missing argument) exits 1, never 2:
/// 2 is what `--detailed-exitcode` and `drift` say for "changes", and a
/// script must not read a typo as that. Help and version exit 0.
fn usage_error(e: clap::Error) -> ExitCode {
    let code = if e.use_stderr() { 1 } else { 0 };
    let _ = e.print();
    ExitCode::from(code)
}

/// The command line read: Terraform's spellings (`-out=F`, `-chdir=DIR`,
/// `TF_CLI_ARGS`) first, then clap; the exit code when it cannot be.
fn parsed(
    args: Vec<std::ffi::OsString>,
) -> Result<(Cli, ArgMatches, std::time::Duration), ExitCode> {
    let read = spelling::respell(args, &|name| std::env::var(name).ok()).map_err(|why| {
        printer::say(&format!("Error: {why}"));
        ExitCode::from(1)
    })?;
    install_report_hook(read.no_color);
    if let Some(dir) = &read.chdir {
        std::env::set_current_dir(dir).map_err(|e| {
            printer::say(&format!("Error: -chdir={}: {e}", dir.display()));
            ExitCode::from(1)
        })?;
    }
    for note in &read.notes {
        printer::say(note);
    }
    let parser = Cli::command().mut_subcommands(|c| c.after_help(TERRAFORM_SPELLINGS));
    let matches = parser
        .try_get_matches_from(read.args)
        .map_err(usage_error)?;
    let cli = Cli::from_arg_matches(&matches).map_err(usage_error)?;
    Ok((cli, matches, read.lock_timeout.unwrap_or_default()))
}

fn run(drivers: &Drivers, args: Vec<std::ffi::OsString>) -> ExitCode {
    let (cli, matches, lock_timeout) = match parsed(args) {
        Ok(read) => read,
        Err(code) => return code,
    };
    crate::timings::stage("command read");
    let inputs = cli_inputs(&matches);
    let mut sources = Sources::default();
    // The provider plugins the directory's lock file selects, started for
    // the commands that plan, apply or read objects by their schemas.
    let started;
    let drivers = match plugin_dir(&cli.command) {
        Some(dir) => match budget_settings()
            .and_then(|()| crate::engine::with_plugins(&dir, drivers, &mut sources))
        {
            Ok(d) => {
                started = d;
                &started
            }
            Err(d) => return finish(Err(d), &sources),
        },
        None => drivers,
    };
    // Decided once here; an invalid name fails only the commands using it.
    let workspace = crate::engine::current_workspace();
    let mut cx = Context {
        inputs,
        workspace,
        lock_timeout,
        sources,
        drivers,
    };
    let result = match cli.command {
        Command::Plan(a) => return plan::plan(a, &mut cx),
        Command::Cost(a) => return plan::cost(a, &mut cx),
        Command::Drift(a) => return plan::drift(a, &mut cx),
        Command::Apply(a) => return apply::apply(a, &mut cx),
        Command::Destroy(a) => return apply::destroy(a, &mut cx),
        Command::Refresh(a) => return apply::refresh(a, &mut cx),
        Command::Import(a) => return apply::import(a, &mut cx),
        Command::Validate(a) => return inspect::validate(a, &mut cx),
        Command::Fmt(a) => return fmt::command(a),
        Command::Comment { issue, name, .. } => {
            print(crate::engine::comment(issue.as_deref(), &name))
        }
        Command::Show(a) => inspect::show(a, &mut cx),
        Command::Console(a) => inspect::console(a, &mut cx),
        Command::Test(a) => return inspect::test(a, &mut cx),
        Command::Query(a) => return inspect::query(a, &mut cx),
        Command::Graph { path, format } => inspect::graph(path, format, &mut cx),
        Command::Version { json } => inspect::version(json),
        Command::Modules { json } => inspect::modules(json, &mut cx),
        Command::Metadata { command } => inspect::metadata(command),
        Command::Logout { host } => print(crate::engine::logout(host.as_deref(), &mut cx.sources)),
        Command::Login { host } => Err(inspect::login_refused(host.as_deref())),
        Command::State(a) => state::state(a, &mut cx),
        Command::Taint(a) => state::taint(a, true, &mut cx),
        Command::Untaint(a) => state::taint(a, false, &mut cx),
        Command::Output(a) => state::output(a, &mut cx),
        Command::Report(a) => state::report(a, &mut cx),
        Command::ForceUnlock(a) => state::force_unlock(a, &mut cx),
        Command::Init(a) => workdir::init(a, &mut cx),
        Command::Get {
            path,
            update,
            test_directory,
            ..
        } => workdir::get(path, (update, &test_directory), &mut cx),
        Command::Providers { command, path } => workdir::providers(command, path, &mut cx),
        Command::Workspace { command } => workdir::workspace(command, &mut cx),
    };
    finish(result.map(|()| ExitCode::SUCCESS), &cx.sources)
}

fn finish(result: Result<ExitCode, Diags>, sources: &Sources) -> ExitCode {
    Printer::human().finish(result, sources)
}

fn print(r: Result<String, Diags>) -> Result<(), Diags> {
    printer::text(r)
}
