//! The command line. Each subcommand loads what it needs, runs one stage and
//! maps the outcome to the exit codes in DESIGN.md (0 ok, 1 error).

use crate::builtin::Drivers;
use crate::config::variables::{self, CliInput};
use crate::config::{self, ConfigScope};
use crate::diag::{Diag, Diags, Sources};
use crate::graph::Target;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use strata_state::model::Address;

mod init;
mod migrate;
mod plugins;
mod providers;
mod serving;
mod spelling;
mod workspace;

/// What `--help` says of Terraform's spellings (which `spelling.rs` reads).
const TERRAFORM_SPELLINGS: &str = "Terraform's spellings work beside these: single-dash flags (-out=tfplan, -out tfplan, -var 'k=v', -var-file=F, -auto-approve, -detailed-exitcode, -parallelism=N, -state=F, -refresh=false, -refresh-only, -target=ADDR, -exclude=ADDR, -replace=ADDR, -no-color, -input=false, -lock-timeout=5m), apply -destroy, the global -chdir=DIR, -help and -version, TF_CLI_ARGS and TF_CLI_ARGS_<command>, TF_VAR_<name> and TF_WORKSPACE. Flags strata does not do yet (-generate-config-out, plan -json, ...) are refused by name with exit 1.";

#[derive(Parser, Debug)]
#[command(
    name = "strata",
    version,
    about = "Declarative GPU-cluster infrastructure in Terraform's language",
    after_help = TERRAFORM_SPELLINGS
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

/// Options of the commands that plan and apply.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// A local state file, used in place of the backend the configuration
    /// names (default: that backend, else terraform.tfstate).
    #[arg(long = "state", value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Use the state as stored, without reading objects back through the drivers.
    #[arg(long)]
    pub no_refresh: bool,
    /// Driver operations in flight at once.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub parallelism: u16,
    /// Your own prices (the catalogs' CSV columns), over the list prices.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Place a cluster node pool (`cluster.pool`, or the pool's name) on
    /// its first candidate again, rather than where it is (repeatable).
    #[arg(long = "replace-placement", value_name = "POOL")]
    pub replace_placement: Vec<String>,
    /// Plan only this resource, instance or module and what it depends on
    /// (repeatable; Terraform's -target).
    #[arg(long = "target", value_name = "ADDR")]
    pub targets: Vec<String>,
    /// Leave this resource, instance or module and what depends on it out
    /// of the plan (repeatable; OpenTofu's -exclude).
    #[arg(long = "exclude", value_name = "ADDR", conflicts_with = "targets")]
    pub excludes: Vec<String>,
    /// Replace this resource instance whatever its attributes say
    /// (repeatable; Terraform's -replace).
    #[arg(long = "replace", value_name = "ADDR")]
    pub replace: Vec<String>,
    /// Only bring the state up to date with what the objects are now;
    /// change nothing.
    #[arg(long)]
    pub refresh_only: bool,
}

impl RunArgs {
    fn options(
        &self,
        inputs: Vec<CliInput>,
        destroy: bool,
        workspace: Result<String, Diags>,
        lock_timeout: Duration,
    ) -> Result<crate::engine::Options, Diags> {
        Ok(crate::engine::Options {
            inputs,
            state: self.state.clone(),
            refresh: !self.no_refresh,
            parallelism: self.parallelism as usize,
            destroy,
            workspace: workspace?,
            prices: price_list(self.prices.as_deref())?,
            replace_placement: self.replace_placement.clone(),
            lock_timeout,
            scope: crate::graph::Scope {
                targets: addresses("Invalid target", &self.targets, Target::parse)?,
                excludes: addresses("Invalid exclude target", &self.excludes, Target::parse)?,
            },
            replace: self.replacements(destroy)?,
            refresh_only: self.refresh_only,
            json: false,
            generate_config_out: None,
        })
    }

    /// `--replace`'s instances; refused, as Terraform refuses it, outside a
    /// normal plan.
    fn replacements(&self, destroy: bool) -> Result<Vec<Address>, Diags> {
        if self.refresh_only && destroy {
            return Err(usage(
                "Incompatible plan mode options",
                "The -destroy and -refresh-only options are mutually-exclusive.",
            ));
        }
        if !self.replace.is_empty() && (destroy || self.refresh_only) {
            return Err(usage(
                "Unsupported plan mode",
                "Forcing resource instance replacement (with -replace=...) is allowed only in normal planning mode.",
            ));
        }
        addresses("Invalid force-replace address", &self.replace, |text| {
            match Target::parse(text)? {
            Target::Resource(r) => Ok(r.instance(None)),
            Target::Instance(a) => Ok(a),
            Target::Module(_) => Err("A resource instance address is required here. The module path must be followed by a resource instance specification.".into()),
        }
        })
    }
}

/// An error in how the command was asked (exit code 1).
fn usage(summary: &str, detail: &str) -> Diags {
    Diags::from(Diag::new("strata::cli::usage", summary, detail))
}

/// Each address of a repeatable flag read, the first that is not one
/// refused with Terraform's words (`invalid`: "Invalid target", …).
fn addresses<T>(
    invalid: &str,
    texts: &[String],
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, Diags> {
    texts
        .iter()
        .map(|t| parse(t).map_err(|why| usage(&format!("{invalid} {t:?}"), &why)))
        .collect()
}

/// The `--prices` file, read; none gives an empty list.
pub fn price_list(path: Option<&Path>) -> Result<strata_provider::catalog::PriceList, Diags> {
    let Some(path) = path else {
        return Ok(Default::default());
    };
    let bad = |detail: String| {
        Diags::from(Diag::new(
            "strata::prices",
            format!("Cannot read the prices in {}", path.display()),
            detail,
        ))
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let name = path.display().to_string();
    strata_provider::catalog::PriceList::parse(&name, &text).map_err(bad)
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Parse and check a configuration (a file or a directory of *.tf / *.hcl).
    Validate {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[command(flatten)]
        vars: VarArgs,
        /// Your own prices, over the list prices (for node pools' price caps).
        #[arg(long, value_name = "FILE")]
        prices: Option<PathBuf>,
        /// Terraform's diagnostics JSON on stdout (`valid`, counts, each
        /// problem with its range).
        #[arg(long)]
        json: bool,
    },
    /// Evaluate expressions: interactively, or one per stdin line with --json.
    Console {
        /// A configuration whose variables, locals and resources (as its
        /// state holds them) are in scope; the working directory's by
        /// default.
        path: Option<PathBuf>,
        /// A local state file, read in place of the backend the
        /// configuration names.
        #[arg(long = "state", value_name = "FILE")]
        state: Option<PathBuf>,
        /// Evaluate as a plan would leave things: each object as planned,
        /// unknown where only the apply can know.
        #[arg(long)]
        plan: bool,
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
        /// A local state file, used in place of the backend the configuration
        /// names (default: that backend, else terraform.tfstate).
        #[arg(long = "state", value_name = "FILE", global = true)]
        state: Option<PathBuf>,
    },
    /// Show outputs from the state (`--json` as `terraform output -json`).
    Output {
        name: Option<String>,
        #[arg(long, conflicts_with = "raw")]
        json: bool,
        /// One string, number or bool as it is, for scripts (no quotes,
        /// no newline).
        #[arg(long, requires = "name")]
        raw: bool,
        /// A local state file, used in place of the backend the configuration
        /// names (default: that backend, else terraform.tfstate).
        #[arg(long = "state", value_name = "FILE")]
        state: Option<PathBuf>,
    },
    /// Release a stale state lock by its ID.
    ForceUnlock {
        id: String,
        /// A local state file, used in place of the backend the configuration
        /// names (default: that backend, else terraform.tfstate).
        #[arg(long = "state", value_name = "FILE")]
        state: Option<PathBuf>,
    },
    /// Show what apply would change.
    Plan {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[command(flatten)]
        vars: VarArgs,
        #[command(flatten)]
        run: RunArgs,
        /// Write the plan to FILE for `strata apply FILE`.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Exit 0 when there is nothing to do, 2 when there are changes, 1 on error.
        #[arg(long)]
        detailed_exitcode: bool,
        #[arg(long, value_enum, default_value = "human")]
        format: crate::engine::Format,
        /// Plan to destroy everything in the state.
        #[arg(long)]
        destroy: bool,
        /// Terraform's machine-readable UI: one JSON message a line.
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// Write configuration for `import` blocks whose targets have none
        /// into FILE (a new file), then plan with it.
        #[arg(long, value_name = "FILE")]
        generate_config_out: Option<PathBuf>,
    },
    /// Compare the real infrastructure with the state, changing nothing.
    /// Exit 0 no drift, 2 drift, 1 error.
    Drift {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[command(flatten)]
        vars: VarArgs,
        /// A local state file, used in place of the backend the configuration
        /// names (default: that backend, else terraform.tfstate).
        #[arg(long = "state", value_name = "FILE")]
        state: Option<PathBuf>,
        /// Driver operations in flight at once.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=256))]
        parallelism: u16,
        #[arg(long, value_enum, default_value = "human")]
        format: crate::engine::Format,
        /// Leave out resources whose address matches this pattern (`*` any
        /// characters, `?` one; e.g. `aws_security_group.*`). Repeatable.
        #[arg(long, value_name = "ADDR_PATTERN")]
        ignore: Vec<String>,
    },
    /// What the state's node pools and control planes cost by the hour,
    /// and what the configuration's would: per pool, per cloud, in total.
    Cost {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[command(flatten)]
        vars: VarArgs,
        #[command(flatten)]
        run: RunArgs,
        #[arg(long, value_enum, default_value = "human")]
        format: crate::engine::Format,
    },
    /// Post a markdown report read from stdin (`plan` or `drift --format
    /// markdown`) to GitHub: the pull request's one strata comment and label,
    /// or, with --issue, a drift issue opened and closed as drift comes and goes.
    Comment {
        /// Through GitHub's REST API, from a GitHub Actions run.
        #[arg(long, required = true)]
        github: bool,
        /// Keep an issue with this title open while the drift report says
        /// there is drift; close it when there is none.
        #[arg(long, value_name = "TITLE")]
        issue: Option<String>,
        /// Tells this comment from other strata comments on the same pull
        /// request (one per configuration).
        #[arg(long, default_value = "plan")]
        name: String,
    },
    /// Make the changes: plan and ask, or apply a saved plan as it is.
    Apply {
        /// A configuration directory or file, or a plan file from `strata plan --out`.
        #[arg(default_value = ".")]
        target: PathBuf,
        #[command(flatten)]
        vars: VarArgs,
        #[command(flatten)]
        run: RunArgs,
        /// Do not ask for confirmation.
        #[arg(long)]
        auto_approve: bool,
        /// Terraform's machine-readable UI: one JSON message a line.
        #[arg(long)]
        json: bool,
    },
    /// Destroy everything in the state, dependents first.
    Destroy {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[command(flatten)]
        vars: VarArgs,
        #[command(flatten)]
        run: RunArgs,
        #[arg(long)]
        auto_approve: bool,
        /// Terraform's machine-readable UI: one JSON message a line.
        #[arg(long)]
        json: bool,
    },
    /// Prepare a working directory as `terraform init` does: reach the
    /// backend, install the modules (registry, git, archive and local
    /// sources), check that every provider the configuration needs is
    /// built in.
    Init {
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Leave the backend alone (Terraform's -backend=false).
        #[arg(long)]
        no_backend: bool,
        /// Leave the modules as they are (Terraform's -get=false).
        #[arg(long)]
        no_get: bool,
        /// Fetch every remote module again, at the newest version its
        /// constraint allows.
        #[arg(long)]
        upgrade: bool,
        /// Forget the backend settings an earlier init kept, and set a
        /// changed backend up without moving any state.
        #[arg(long)]
        reconfigure: bool,
        /// Move the state from the backend set up before to the one the
        /// configuration names now.
        #[arg(long)]
        migrate_state: bool,
        /// Move it without asking (implies --migrate-state).
        #[arg(long)]
        force_copy: bool,
        /// A backend setting, `key=value`, or a file of them, laid over
        /// the backend block and kept for the commands that follow
        /// (repeatable).
        #[arg(long = "backend-config", value_name = "KEY=VALUE|FILE")]
        backend_config: Vec<String>,
        /// Copy the module at SOURCE (any module source) into this empty
        /// directory first.
        #[arg(long, value_name = "SOURCE")]
        from_module: Option<String>,
    },
    /// Install the modules the configuration calls, as `terraform get`
    /// does: init's module step alone.
    Get {
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Fetch every remote module again, at the newest version its
        /// constraint allows (Terraform's -update).
        #[arg(long)]
        update: bool,
    },
    /// The providers the configuration needs, module by module, and those
    /// the state's objects were made with.
    Providers {
        #[command(subcommand)]
        command: Option<ProvidersCommand>,
        #[arg(default_value = ".")]
        path: PathBuf,
    },
    /// Record an existing object at a resource address, as Terraform's
    /// `import`: read through its driver, nothing changed.
    Import {
        /// The resource instance to record it at (its configuration must exist).
        address: String,
        /// The object's id, as its driver reads it.
        id: String,
        /// The configuration directory.
        #[arg(long = "config", default_value = ".")]
        path: PathBuf,
        #[command(flatten)]
        vars: VarArgs,
        #[command(flatten)]
        run: RunArgs,
    },
    /// List, show, create, select and delete workspaces, as Terraform's
    /// `workspace` commands.
    Workspace {
        #[command(subcommand)]
        command: workspace::WorkspaceCommand,
    },
    /// Mark a resource instance to be replaced by the next plan.
    Taint {
        address: String,
        /// An instance not in the state is a warning, not an error.
        #[arg(long)]
        allow_missing: bool,
        #[arg(long = "state", value_name = "FILE")]
        state: Option<PathBuf>,
    },
    /// Take a taint mark away.
    Untaint {
        address: String,
        #[arg(long)]
        allow_missing: bool,
        #[arg(long = "state", value_name = "FILE")]
        state: Option<PathBuf>,
    },
    /// Record in the state what the objects are now, changing none of
    /// them: `apply --refresh-only --auto-approve` (Terraform's `refresh`).
    Refresh {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[command(flatten)]
        vars: VarArgs,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Show a saved plan, or the state.
    Show {
        planfile: Option<PathBuf>,
        /// Terraform's plan JSON format (1.2) for a plan; the state document otherwise.
        #[arg(long)]
        json: bool,
        /// A local state file, used in place of the backend the configuration
        /// names (default: that backend, else terraform.tfstate).
        #[arg(long = "state", value_name = "FILE")]
        state: Option<PathBuf>,
    },
    /// Print strata's version and the Terraform language version it implements.
    Version {
        /// As JSON, the fields `terraform version -json` has.
        #[arg(long)]
        json: bool,
    },
    /// Rewrite files in Terraform's canonical format.
    Fmt {
        /// Exit 3 and change nothing when a file is not formatted.
        #[arg(long)]
        check: bool,
        /// Also the files in subdirectories (hidden ones left out).
        #[arg(long)]
        recursive: bool,
        /// Do not name the files that are not formatted.
        #[arg(long)]
        no_list: bool,
        /// Do not rewrite them.
        #[arg(long)]
        no_write: bool,
        /// Show each change as a unified diff.
        #[arg(long)]
        diff: bool,
        /// A file or directory, or `-` to format stdin to stdout.
        #[arg(default_value = ".")]
        path: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum ProvidersCommand {
    /// The schemas of the providers the configuration needs, as
    /// Terraform's `providers schema -json` prints them.
    Schema {
        /// Required, as Terraform requires it: JSON is the only form.
        #[arg(long)]
        json: bool,
        #[arg(default_value = ".")]
        path: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum StateCommand {
    /// List resource instances, optionally only those matching addresses.
    List {
        addresses: Vec<String>,
        /// Only the instances whose `id` attribute is this.
        #[arg(long)]
        id: Option<String>,
    },
    /// Show one resource instance's attributes.
    Show { address: String },
    /// Forget instances (they stay in the cloud).
    Rm {
        #[arg(required = true)]
        addresses: Vec<String>,
        /// Say what would be removed, changing nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Move an instance or resource to a new address.
    Mv {
        from: String,
        to: String,
        /// Say what would be moved, changing nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Print the state as stored (with an interrupted run's journal folded
    /// in), to keep a copy or move it to another backend.
    Pull,
    /// Record the resources made with provider FROM as made with TO.
    ReplaceProvider {
        from: String,
        to: String,
        /// Do not ask for confirmation.
        #[arg(long)]
        auto_approve: bool,
    },
    /// Replace the stored state with FILE (`-` for stdin): refused if it is
    /// another lineage or older than the stored state, unless --force.
    Push {
        file: PathBuf,
        #[arg(long)]
        force: bool,
    },
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
                    refresh: true,
                    parallelism: parallelism as usize,
                    destroy: false,
                    workspace,
                    prices: Default::default(),
                    replace_placement: Vec::new(),
                    lock_timeout,
                    scope: Default::default(),
                    replace: Vec::new(),
                    refresh_only: false,
                    json: false,
                    generate_config_out: None,
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
                validate(&path, &inputs, &w, prices.as_deref(), &mut sources, drivers)
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
            let at = Consoled {
                path: path.as_deref(),
                state: state.as_deref(),
                plan,
                workspace: &w,
            };
            console(at, json, &inputs, &mut sources, drivers)
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
        Command::Graph { path } => workspace.and_then(|w| graph(&path, &w, &mut sources, drivers)),
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

/// The configuration at `path` with its `cluster` blocks expanded, as
/// plan sees it; variables without values leave `clouds` to the cloud
/// blocks.
/// A configuration loaded, its cluster specs expanded.
struct Loaded {
    module: config::Module,
    run: Rc<config::Run>,
    clusters: Option<(crate::cluster::Expansion, ValueMap)>,
}

fn load_expanded(
    path: &Path,
    inputs: &[CliInput],
    workspace: &str,
    prices: &strata_provider::catalog::PriceList,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Loaded, Diags> {
    let mut module = config::load(path, sources)?;
    let functions = Rc::new(crate::walk::Functions(drivers.clone()));
    let run = config::Run::with_functions(module.dir.clone(), workspace, functions);
    if module.clusters.is_empty() {
        return Ok(Loaded {
            module,
            run,
            clusters: None,
        });
    }
    let vars =
        variables::resolve(&module, inputs, variables::environment(), sources).unwrap_or_default();
    let none = crate::engine::placements(None, &[], time::OffsetDateTime::now_utc());
    let expansion = crate::engine::expand(
        &mut module,
        vars.clone(),
        &run,
        drivers,
        prices,
        &none,
        sources,
    )?;
    Ok(Loaded {
        module,
        run,
        clusters: Some((expansion, vars)),
    })
}

type ValueMap = std::collections::BTreeMap<String, crate::lang::value::Value>;

fn graph(
    path: &Path,
    workspace: &str,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<(), Diags> {
    let loaded = load_expanded(path, &[], workspace, &Default::default(), sources, drivers)?;
    let g = crate::graph::build(&loaded.module, sources)?;
    print!("{}", crate::graph::to_dot(&g));
    Ok(())
}

fn validate(
    path: &Path,
    inputs: &[CliInput],
    workspace: &str,
    prices: Option<&Path>,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<(), Diags> {
    let prices = price_list(prices)?;
    let Loaded {
        module,
        run,
        clusters,
    } = load_expanded(path, inputs, workspace, &prices, sources, drivers)?;
    // The values given are held to their types and validations, as a plan
    // holds them; a variable left unset is no error here (validate checks
    // the configuration for any values).
    if !inputs.is_empty() {
        let given = variables::resolve(&module, inputs, Vec::new(), sources).err();
        let refused: Vec<Diag> = given
            .map(|d| d.0)
            .unwrap_or_default()
            .into_iter()
            .filter(|d| d.code != "strata::config::missing_variable")
            .collect();
        Diags(refused).into_result(())?;
    }
    let checked = (|| {
        // Cycles first: they name every member, where evaluation would only
        // see the point it came back to.
        let graph = crate::graph::build(&module, sources)?;
        // References and schemas are checked apart, and reported together.
        let write_only = |r: &crate::config::Resource, path: &[String]| {
            crate::walk::write_only(drivers, r, path)
        };
        let mut found = crate::config::check::check_module(&module, &run, &write_only, sources)
            .err()
            .unwrap_or_default();
        // The same expression may fail in both: said once.
        for d in crate::walk::check_schemas(&module, &run, drivers, sources).0 {
            found.push(d);
        }
        found.into_result(())?;
        if let Some((expansion, vars)) = &clusters {
            let vars = vars.clone();
            crate::engine::check_portability(&module, &graph, vars, &run, expansion, drivers)?;
        }
        Ok(())
    })();
    // An error inside strata's own modules names the cluster spec too.
    checked.map_err(|d| match &clusters {
        Some((expansion, _)) => expansion.explain(d, sources),
        None => d,
    })
}

/// What `console -plan` plans with: the console's variables and state.
fn console_plan_options(
    at: &Consoled<'_>,
    inputs: &[CliInput],
) -> Result<crate::engine::Options, Diags> {
    Ok(crate::engine::Options {
        inputs: inputs.to_vec(),
        state: at.state.map(Path::to_path_buf),
        refresh: true,
        parallelism: 10,
        destroy: false,
        workspace: at.workspace.to_string(),
        prices: Default::default(),
        replace_placement: Vec::new(),
        lock_timeout: Duration::ZERO,
        scope: Default::default(),
        replace: Vec::new(),
        refresh_only: false,
        json: false,
        generate_config_out: None,
    })
}

/// Where the console evaluates.
struct Consoled<'a> {
    path: Option<&'a Path>,
    /// `-state=FILE`: this state's resources, not the backend's.
    state: Option<&'a Path>,
    /// `-plan`: as a plan would leave them.
    plan: bool,
    workspace: &'a str,
}

fn console(
    at: Consoled<'_>,
    json: bool,
    inputs: &[CliInput],
    sources: &mut Sources,
    drivers: &Drivers,
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
    // As `terraform console`: the working directory's configuration when
    // there is one.
    let here = Path::new(".");
    let path = at.path.or_else(|| {
        config::config_files(here)
            .is_ok_and(|f| !f.is_empty())
            .then_some(here)
    });
    let Some(p) = path else {
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
        // The console calls `timestamp()` and its kind, as Terraform's does.
        let run_at = config::Run::new(PathBuf::from("."), at.workspace).calling();
        let scope = ConfigScope::new(&module, Default::default(), run_at);
        return run(&scope, PathBuf::from("."));
    };
    let module = config::load(p, sources)?;
    let vars = variables::resolve(&module, inputs, variables::environment(), sources)?;
    let known = match at.plan {
        true => {
            let opts = console_plan_options(&at, inputs)?;
            crate::engine::planned_values(p, &opts, sources, drivers)?
        }
        false => {
            let store = crate::backends::open(at.state, &module, at.workspace)?;
            crate::engine::state_values(&store, drivers)?
        }
    };
    let functions = Rc::new(crate::walk::Functions(drivers.clone()));
    let run_at = config::Run::with_functions(module.dir.clone(), at.workspace, functions).calling();
    let scope = ConfigScope::new(&module, vars, run_at).knowing(&known);
    run(&scope, module.dir.clone())
}
