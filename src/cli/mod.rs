//! The command line. Each subcommand loads what it needs, runs one stage and
//! maps the outcome to the exit codes in DESIGN.md (0 ok, 1 error).

use crate::builtin::Drivers;
use crate::config;
use crate::config::variables::CliInput;
use crate::diag::{Diag, Diags, Sources};
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use args::TERRAFORM_SPELLINGS;
pub use args::{price_list, Cli, Command, ProvidersCommand, RunArgs, StateCommand, VarArgs};

mod args;
mod console;
mod init;
mod migrate;
mod plugins;
mod providers;
mod serving;
mod spelling;
mod workspace;

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

fn print_diags(diags: &Diags, sources: &Sources) {
    for d in &diags.0 {
        eprintln!("{:?}", miette::Report::new(d.report(sources)));
    }
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
    let drivers = drivers.with_remote_states(Arc::new(crate::backends::RemoteStates));
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

/// The configuration directory whose provider plugins `command` needs,
/// if it needs any.
fn plugin_dir(command: &Command) -> Option<PathBuf> {
    let here = || Some(PathBuf::from("."));
    match command {
        Command::Plan { path, .. }
        | Command::Drift { path, .. }
        | Command::Cost { path, .. }
        | Command::Destroy { path, .. }
        | Command::Refresh { path, .. }
        | Command::Validate { path, .. }
        | Command::Graph { path }
        | Command::Import { path, .. }
        | Command::Providers {
            command: Some(ProvidersCommand::Schema { path, .. }),
            ..
        } => Some(path.clone()),
        // A saved plan is applied in the directory it was made in.
        Command::Apply { target, .. } if target.is_file() => here(),
        Command::Apply { target, .. } => Some(target.clone()),
        Command::Console { path, .. } => path.clone().or_else(here),
        Command::Show { .. } => here(),
        Command::State {
            command: StateCommand::Show { .. },
            ..
        } => here(),
        _ => None,
    }
}

fn outcome(r: Result<crate::engine::Outcome, Diags>, detailed: bool) -> Result<ExitCode, Diags> {
    r.map(|o| match o {
        crate::engine::Outcome::Changes if detailed => ExitCode::from(2),
        _ => ExitCode::SUCCESS,
    })
}

/// `strata version`: strata's own release and the language it speaks.
fn version(json: bool, providers: &std::collections::BTreeMap<String, String>) -> String {
    let strata = env!("CARGO_PKG_VERSION");
    let language = crate::config::TERRAFORM_LANGUAGE;
    if json {
        let doc = serde_json::json!({
            "strata_version": strata,
            "terraform_version": language,
            "provider_selections": providers,
            // Go's names for the architecture, as Terraform prints them.
            "platform": format!("{}_{}", std::env::consts::OS, match std::env::consts::ARCH {
                "x86_64" => "amd64",
                "aarch64" => "arm64",
                other => other,
            }),
        });
        format!("{doc:#}\n")
    } else {
        let listed: String = providers
            .iter()
            .map(|(source, v)| format!("+ provider {source} v{v}\n"))
            .collect();
        format!("strata v{strata}\nTerraform language v{language}\n{listed}")
    }
}

/// A usage error (an unknown flag, a missing argument) exits 1, never 2:
/// 2 is what `--detailed-exitcode` and `drift` say for "changes", and a
/// script must not read a typo as that. Help and version exit 0.
fn usage_error(e: clap::Error) -> ExitCode {
    let code = if e.use_stderr() { 1 } else { 0 };
    let _ = e.print();
    ExitCode::from(code)
}

fn run(drivers: &Drivers, args: Vec<std::ffi::OsString>) -> ExitCode {
    // Terraform's spellings (`-out=F`, `-chdir=DIR`, `TF_CLI_ARGS`) first.
    let read = match spelling::respell(args, &|name| std::env::var(name).ok()) {
        Ok(r) => r,
        Err(why) => {
            eprintln!("Error: {why}");
            return ExitCode::from(1);
        }
    };
    install_report_hook(read.no_color);
    if let Some(dir) = &read.chdir {
        if let Err(e) = std::env::set_current_dir(dir) {
            eprintln!("Error: -chdir={}: {e}", dir.display());
            return ExitCode::from(1);
        }
    }
    for note in &read.notes {
        eprintln!("{note}");
    }
    let lock_timeout = read.lock_timeout.unwrap_or_default();
    let parser = Cli::command().mut_subcommands(|c| c.after_help(TERRAFORM_SPELLINGS));
    let matches = match parser.try_get_matches_from(read.args) {
        Ok(m) => m,
        Err(e) => return usage_error(e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    let inputs = cli_inputs(&matches);
    let mut sources = Sources::default();
    // The provider plugins the directory's lock file selects, started for
    // the commands that plan, apply or read objects by their schemas.
    let started;
    let drivers = match plugin_dir(&cli.command) {
        Some(dir) => match plugins::with_plugins(&dir, drivers, &mut sources) {
            Ok(d) => {
                started = d;
                &started
            }
            Err(d) => return finish(Err(d), &sources),
        },
        None => drivers,
    };
    // Decided once here; an invalid name fails only the commands using it.
    let workspace = config::workspace();
    let destroying = matches!(cli.command, Command::Destroy { .. });
    let tainted = matches!(cli.command, Command::Taint { .. });
    let result = match cli.command {
        Command::Plan {
            path,
            run,
            out,
            detailed_exitcode,
            format,
            destroy,
            json,
            generate_config_out,
            ..
        } => {
            opening(json);
            let r = run
                .options(inputs, destroy, workspace, lock_timeout)
                .and_then(|opts| {
                    let opts = crate::engine::Options {
                        json,
                        generate_config_out,
                        ..opts
                    };
                    crate::engine::plan(&path, &opts, out.as_deref(), format, &mut sources, drivers)
                });
            return finish_as(json, outcome(r, detailed_exitcode), &sources);
        }
        Command::Drift {
            path,
            state,
            parallelism,
            format,
            ignore,
            ..
        } => {
            let r = workspace.and_then(|workspace| {
                let opts = crate::engine::Options {
                    inputs,
                    state,
                    parallelism: parallelism as usize,
                    workspace,
                    lock_timeout,
                    ..Default::default()
                };
                crate::engine::drift(&path, &opts, format, &ignore, &mut sources, drivers)
            });
            return finish(outcome(r, true), &sources);
        }
        Command::Cost {
            path, run, format, ..
        } => run
            .options(inputs, false, workspace, lock_timeout)
            .and_then(|opts| crate::engine::cost(&path, &opts, format, &mut sources, drivers)),
        Command::Comment { issue, name, .. } => crate::comment::run(issue.as_deref(), &name),
        Command::Apply {
            target,
            run,
            auto_approve,
            json,
            ..
        }
        | Command::Destroy {
            path: target,
            run,
            auto_approve,
            json,
            ..
        } => {
            opening(json);
            let r = run
                .options(inputs, destroying, workspace, lock_timeout)
                .and_then(|opts| {
                    let opts = crate::engine::Options { json, ..opts };
                    crate::engine::apply(&target, &opts, auto_approve, &mut sources, drivers)
                });
            return finish_as(json, outcome(r, false), &sources);
        }
        Command::Refresh { path, mut run, .. } => {
            run.refresh_only = true;
            let r = run
                .options(inputs, false, workspace, lock_timeout)
                .and_then(|opts| crate::engine::apply(&path, &opts, true, &mut sources, drivers));
            return finish(outcome(r, false), &sources);
        }
        Command::Show {
            planfile,
            json,
            state,
        } => workspace.and_then(|workspace| {
            crate::engine::show(
                planfile.as_deref(),
                json,
                state.as_deref(),
                &workspace,
                &mut sources,
                drivers,
            )
        }),
        Command::Validate {
            path, prices, json, ..
        } => {
            let r = workspace.and_then(|w| {
                let prices = price_list(prices.as_deref())?;
                crate::engine::validate(&path, &inputs, &w, &prices, &mut sources, drivers)
            });
            if !json {
                r.map(|()| println!("Success! The configuration is valid."))
            } else {
                let found = r.err().unwrap_or_default();
                let doc = found.to_json(&sources);
                println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
                return ExitCode::from(u8::from(!found.is_empty() && doc["valid"] == false));
            }
        }
        Command::Console {
            path,
            json,
            state,
            plan,
            ..
        } => workspace.and_then(|w| {
            let at = console::Consoled {
                path: path.as_deref(),
                state: state.as_deref(),
                plan,
                workspace: &w,
            };
            console::console(at, json, &inputs, &mut sources, drivers)
        }),
        Command::Fmt {
            check,
            recursive,
            no_list,
            no_write,
            diff,
            path,
        } => {
            let opts = crate::fmt::FmtOptions {
                check,
                recursive,
                list: !no_list,
                write: !no_write,
                diff,
            };
            return crate::fmt::run(&path, &opts);
        }
        Command::Version { json } => {
            // The providers this directory's lock file selects, as
            // Terraform lists them.
            let selected = crate::config::lockfile::LockFile::read(Path::new("."), &mut sources)
                .map(|l| l.providers.into_iter().map(|(s, l)| (s, l.version)).collect())
                .unwrap_or_default();
            print!("{}", version(json, &selected));
            Ok(())
        }
        Command::Graph { path } => {
            workspace.and_then(|w| print(crate::engine::graph(&path, &w, &mut sources, drivers)))
        }
        Command::State { command, state } => workspace
            .and_then(|w| crate::backends::open_here(state.as_deref(), &w, &mut sources))
            .and_then(|store| {
                print(match command {
                    StateCommand::List { addresses, id } => {
                        crate::statecmd::list(&store, &addresses, id.as_deref())
                    }
                    StateCommand::Show { address } => {
                        crate::engine::state_show(&store, &address, drivers)
                    }
                    StateCommand::Rm { addresses, dry_run } => {
                        crate::statecmd::rm(&store, &addresses, dry_run)
                    }
                    StateCommand::Mv { from, to, dry_run } => {
                        crate::statecmd::mv(&store, (&from, &to), dry_run)
                    }
                    StateCommand::Pull => crate::statecmd::pull(&store),
                    StateCommand::ReplaceProvider {
                        from,
                        to,
                        auto_approve,
                    } => {
                        let approve = |shown: &str| {
                            print!("{shown}");
                            auto_approve || crate::engine::ask("Do you want to make these changes?\nOnly 'yes' will be accepted to continue.")
                        };
                        crate::statecmd::replace_provider(&store, (&from, &to), &approve)
                    }
                    StateCommand::Push { file, force } => {
                        crate::statecmd::push(&store, &file, force)
                    }
                })
            }),
        Command::Import {
            address,
            id,
            path,
            run,
            ..
        } => run
            .options(inputs, false, workspace, lock_timeout)
            .and_then(|opts| {
                crate::engine::import(&path, &opts, (&address, &id), &mut sources, drivers)
            }),
        Command::Init {
            path,
            no_backend,
            no_get,
            upgrade,
            reconfigure,
            migrate_state,
            force_copy,
            backend_config,
            from_module,
        } => {
            let req = init::Init {
                path: &path,
                backend: !no_backend,
                get: !no_get,
                upgrade,
                reconfigure,
                migrate_state,
                force_copy,
                backend_config: &backend_config,
                from_module: from_module.as_deref(),
            };
            print(init::run(req, &mut sources, drivers))
        }
        Command::Get { path, update } => print(init::get(&path, update, &mut sources)),
        Command::Providers {
            command: Some(ProvidersCommand::Schema { json, path }),
            ..
        } => match json {
            true => workspace
                .and_then(|w| print(providers::schema(&path, &w, &mut sources, drivers))),
            false => Err(Diag::new(
                "strata::cli::usage",
                "The providers schema command requires the -json flag",
                "Run strata providers schema -json: JSON is its only form, as in Terraform.",
            )
            .into()),
        },
        Command::Providers {
            command: None,
            path,
        } => workspace.and_then(|w| print(providers::run(&path, &w, &mut sources, drivers))),
        Command::Workspace { command } => print(workspace::run(command, &mut sources)),
        Command::Taint {
            address,
            allow_missing,
            state,
        }
        | Command::Untaint {
            address,
            allow_missing,
            state,
        } => workspace
            .and_then(|w| crate::backends::open_here(state.as_deref(), &w, &mut sources))
            .and_then(|store| {
                let (said, warnings) =
                    crate::statecmd::taint(&store, &address, tainted, allow_missing)?;
                print_diags(&Diags(warnings), &sources);
                print!("{said}");
                Ok(())
            }),
        Command::Output {
            name,
            json,
            raw,
            state,
        } => {
            let format = match (json, raw) {
                (true, _) => crate::statecmd::OutputFormat::Json,
                (_, true) => crate::statecmd::OutputFormat::Raw,
                _ => crate::statecmd::OutputFormat::Human,
            };
            workspace
                .and_then(|w| crate::backends::open_here(state.as_deref(), &w, &mut sources))
                .and_then(|store| print(crate::statecmd::output(&store, name.as_deref(), format)))
        }
        Command::ForceUnlock { id, state } => workspace
            .and_then(|w| crate::backends::open_here(state.as_deref(), &w, &mut sources))
            .and_then(|store| print(crate::statecmd::force_unlock(&store, &id))),
    };
    finish(result.map(|()| ExitCode::SUCCESS), &sources)
}

fn finish(result: Result<ExitCode, Diags>, sources: &Sources) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(diags) => {
            print_diags(&diags, sources);
            ExitCode::from(1)
        }
    }
}

/// The machine-readable UI's first message, before anything can fail.
fn opening(json: bool) {
    if json {
        println!("{}", crate::ui::version(crate::config::TERRAFORM_LANGUAGE));
    }
}

/// [`finish`], or with `json` the problems as the machine-readable UI's
/// diagnostic messages on stdout, where a reader of the stream looks.
fn finish_as(json: bool, result: Result<ExitCode, Diags>, sources: &Sources) -> ExitCode {
    match (json, result) {
        (true, Err(diags)) => {
            for d in &diags.0 {
                println!(
                    "{}",
                    crate::ui::diagnostic(d.warning, &d.summary, d.to_json(sources))
                );
            }
            ExitCode::from(1)
        }
        (_, result) => finish(result, sources),
    }
}

fn print(r: Result<String, Diags>) -> Result<(), Diags> {
    r.map(|text| print!("{text}"))
}
