//! The command line. Each subcommand loads what it needs, runs one stage and
//! maps the outcome to the exit codes in DESIGN.md (0 ok, 1 error).

use crate::config::variables::{self, CliInput};
use crate::config::{self, ConfigScope};
use crate::diag::{Diag, Diags, Sources};
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "strata",
    version,
    about = "Declarative GPU-cluster infrastructure in Terraform's language"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct VarArgs {
    /// Set a variable: --var name=value (repeatable).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Read variables from a .tfvars (HCL) or .tfvars.json file (repeatable).
    #[arg(long = "var-file", value_name = "FILE")]
    pub var_files: Vec<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Parse and check a configuration (a file or a directory of *.tf / *.hcl).
    Validate {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[command(flatten)]
        vars: VarArgs,
    },
    /// Evaluate expressions: interactively, or one per stdin line with --json.
    Console {
        /// A configuration whose variables and locals are in scope.
        path: Option<PathBuf>,
        /// One JSON object per input line: {"value": V, "type": T} or {"error": M}.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        vars: VarArgs,
    },
    /// Print the resource dependency graph as DOT, as `terraform graph` does.
    Graph {
        #[arg(default_value = ".")]
        path: PathBuf,
    },
    /// Inspect and change the state.
    State {
        #[command(subcommand)]
        command: StateCommand,
        /// The state file.
        #[arg(long = "state", global = true, default_value = crate::statecmd::DEFAULT_STATE)]
        state: PathBuf,
    },
    /// Show outputs from the state (`--json` as `terraform output -json`).
    Output {
        name: Option<String>,
        #[arg(long)]
        json: bool,
        #[arg(long = "state", default_value = crate::statecmd::DEFAULT_STATE)]
        state: PathBuf,
    },
    /// Release a stale state lock by its ID.
    ForceUnlock {
        id: String,
        #[arg(long = "state", default_value = crate::statecmd::DEFAULT_STATE)]
        state: PathBuf,
    },
    /// Rewrite files in Terraform's canonical format.
    Fmt {
        /// Exit 3 and change nothing when a file is not formatted.
        #[arg(long)]
        check: bool,
        #[arg(default_value = ".")]
        path: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum StateCommand {
    /// List resource instances, optionally only those matching addresses.
    List { addresses: Vec<String> },
    /// Show one resource instance's attributes.
    Show { address: String },
    /// Forget instances (they stay in the cloud).
    Rm {
        #[arg(required = true)]
        addresses: Vec<String>,
    },
    /// Move an instance or resource to a new address.
    Mv { from: String, to: String },
}

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
fn install_report_hook() {
    let _ = miette::set_hook(Box::new(|_| {
        let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Box::new(
            miette::MietteHandlerOpts::new()
                .terminal_links(false)
                .color(color)
                .unicode(true)
                .width(100)
                .build(),
        )
    }));
}

/// Parsing and evaluation recurse as deep as expressions nest (bounded by
/// `syntax::MAX_NESTING`), so the work runs on a thread with a large stack.
pub fn main() -> ExitCode {
    const STACK: usize = 512 << 20;
    match std::thread::Builder::new().stack_size(STACK).spawn(run) {
        Ok(handle) => handle.join().unwrap_or(ExitCode::from(1)),
        Err(_) => run(),
    }
}

fn run() -> ExitCode {
    install_report_hook();
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let inputs = cli_inputs(&matches);
    let mut sources = Sources::default();
    let result = match cli.command {
        Command::Validate { path, .. } => validate(&path, &inputs, &mut sources),
        Command::Console { path, json, .. } => {
            console(path.as_deref(), json, &inputs, &mut sources)
        }
        Command::Fmt { check, path } => return crate::fmt::run(&path, check),
        Command::Graph { path } => graph(&path, &mut sources),
        Command::State { command, state } => print(match command {
            StateCommand::List { addresses } => crate::statecmd::list(&state, &addresses),
            StateCommand::Show { address } => crate::statecmd::show(&state, &address),
            StateCommand::Rm { addresses } => crate::statecmd::rm(&state, &addresses),
            StateCommand::Mv { from, to } => crate::statecmd::mv(&state, &from, &to),
        }),
        Command::Output { name, json, state } => {
            print(crate::statecmd::output(&state, name.as_deref(), json))
        }
        Command::ForceUnlock { id, state } => print(crate::statecmd::force_unlock(&state, &id)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(diags) => {
            print_diags(&diags, &sources);
            ExitCode::from(1)
        }
    }
}

fn env_vars() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| k.starts_with(variables::ENV_PREFIX))
        .collect()
}

fn print(r: Result<String, Diags>) -> Result<(), Diags> {
    r.map(|text| print!("{text}"))
}

fn graph(path: &Path, sources: &mut Sources) -> Result<(), Diags> {
    let module = config::load(path, sources)?;
    let g = crate::graph::build(&module, sources)?;
    print!("{}", crate::graph::to_dot(&g));
    Ok(())
}

fn validate(path: &Path, inputs: &[CliInput], sources: &mut Sources) -> Result<(), Diags> {
    let module = config::load(path, sources)?;
    // Cycles first: they name every member, where evaluation would only
    // see the point it came back to.
    crate::graph::build(&module, sources)?;
    crate::config::check::check_module(&module, inputs, sources)?;
    println!("Success! The configuration is valid.");
    Ok(())
}

fn console(
    path: Option<&Path>,
    json: bool,
    inputs: &[CliInput],
    sources: &mut Sources,
) -> Result<(), Diags> {
    let stdin = std::io::stdin();
    let interactive = !json && stdin.is_terminal();
    let run = |scope: &dyn crate::eval::Scope, dir: PathBuf| -> Result<(), Diags> {
        let stdout = std::io::stdout();
        if interactive {
            return crate::console::interactive(stdin.lock(), stdout.lock(), scope, dir)
                .map_err(|e| Diags::from(Diag::new("strata::io", "I/O error", e.to_string())));
        }
        crate::console::run(stdin.lock(), stdout.lock(), json, scope, dir)
            .map_err(|e| Diags::from(Diag::new("strata::io", "I/O error", e.to_string())))
    };
    match path {
        None => {
            if !inputs.is_empty() {
                return Err(Diag::new(
                    "strata::cli",
                    "Variables without a configuration",
                    "--var and --var-file need a configuration PATH that declares the variables.",
                )
                .into());
            }
            // Like `terraform console` in an empty directory: path.module is ".".
            let module = config::Module {
                dir: PathBuf::from("."),
                ..config::Module::default()
            };
            let scope = ConfigScope::new(&module, Default::default(), PathBuf::from("."));
            run(&scope, PathBuf::from("."))
        }
        Some(p) => {
            let module = config::load(p, sources)?;
            let vars = variables::resolve(&module, inputs, env_vars(), sources)?;
            let scope = ConfigScope::new(&module, vars, module.dir.clone());
            run(&scope, module.dir.clone())
        }
    }
}
