//! The command line's shape: the commands, their flags and arguments as
//! clap reads them, and the options they make for the engine. What each
//! command does is in the files beside this one.

use crate::diag::{Diag, Diags};
use crate::engine::CliInput;
use crate::engine::Target;
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::time::Duration;
use strata_state::model::Address;

pub(super) const TERRAFORM_SPELLINGS: &str = "Terraform's spellings work beside these: single-dash flags (-out=tfplan, -out tfplan, -var 'k=v', -var-file=F, -auto-approve, -detailed-exitcode, -parallelism=N, -state=F, -refresh=false, -refresh-only, -target=ADDR, -exclude=ADDR, -replace=ADDR, -no-color, -input=false, -lock-timeout=5m), apply -destroy, the global -chdir=DIR, -help and -version, TF_CLI_ARGS and TF_CLI_ARGS_<command>, TF_VAR_<name> and TF_WORKSPACE. Flags strata does not do yet (-generate-config-out, plan -json, ...) are refused by name with exit 1.";

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
    /// Read back only the objects a plan made without reading would
    /// change, then plan them again (Terraform 1.17's -minimal-refresh).
    #[arg(long, conflicts_with_all = ["no_refresh", "refresh_only"])]
    pub minimal_refresh: bool,
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
    /// Invoke this action (`action.TYPE.NAME`) and nothing else
    /// (Terraform 1.14's -invoke).
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["refresh_only", "targets", "excludes", "replace"])]
    pub invoke: Option<String>,
}

impl RunArgs {
    pub(super) fn options(
        &self,
        inputs: Vec<CliInput>,
        destroy: bool,
        workspace: Result<String, Diags>,
        lock_timeout: Duration,
    ) -> Result<crate::engine::Options, Diags> {
        let mode = crate::engine::Mode::from_flags(destroy, self.refresh_only)?;
        Ok(crate::engine::Options {
            inputs,
            state: self.state.clone(),
            refresh: !self.no_refresh,
            parallelism: self.parallelism as usize,
            mode,
            workspace: workspace?,
            prices: price_list(self.prices.as_deref())?,
            replace_placement: self.replace_placement.clone(),
            lock_timeout,
            scope: crate::engine::Scope {
                targets: addresses("Invalid target", &self.targets, Target::parse)?,
                excludes: addresses("Invalid exclude target", &self.excludes, Target::parse)?,
            },
            replace: self.replacements(mode)?,
            json: false,
            generate_config_out: None,
            minimal_refresh: self.minimal_refresh,
            check_settle: None,
            provider_blocks: Vec::new(),
            installed_under: None,
            query: false,
            invoke: self.invoke.clone(),
        })
    }

    /// `--replace`'s instances; refused, as Terraform refuses it, outside a
    /// normal plan.
    fn replacements(&self, mode: crate::engine::Mode) -> Result<Vec<Address>, Diags> {
        if !self.replace.is_empty() && mode != crate::engine::Mode::Normal {
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
pub(super) fn usage(summary: &str, detail: &str) -> Diags {
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
    Validate(ValidateArgs),
    /// Evaluate expressions: interactively, or one per stdin line with --json.
    Console(ConsoleArgs),
    /// Run the configuration's test files (*.tftest.hcl), as `terraform test`.
    Test(TestArgs),
    /// List what providers find (the query files' list blocks, *.tfquery.hcl),
    /// as `terraform query`.
    Query(QueryArgs),
    /// Print the resource dependency graph as DOT, as `terraform graph` does.
    Graph {
        #[arg(default_value = ".")]
        path: PathBuf,
        /// `dot` (Graphviz, the default) or `mermaid` (a Mermaid
        /// flowchart, as Terraform 1.15's `-format=mermaid`).
        #[arg(long, value_enum, default_value = "dot")]
        format: crate::engine::GraphFormat,
    },
    /// Inspect and change the state.
    State(StateArgs),
    /// Show outputs from the state (`--json` as `terraform output -json`).
    Output(OutputArgs),
    /// Release a stale state lock by its ID.
    ForceUnlock(ForceUnlockArgs),
    /// Show what apply would change.
    Plan(PlanArgs),
    /// Compare the real infrastructure with the state, changing nothing.
    /// Exit 0 no drift, 2 drift, 1 error.
    Drift(DriftArgs),
    /// GPU-hours and their cost, time to first GPU, preemption rate and
    /// egress per cloud, region and pool, from what drift runs observed.
    Report(ReportArgs),
    /// What the state's node pools and control planes cost by the hour,
    /// and what the configuration's would: per pool, per cloud, in total.
    Cost(CostArgs),
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
    Apply(ApplyArgs),
    /// Destroy everything in the state, dependents first.
    Destroy(DestroyArgs),
    /// Prepare a working directory as `terraform init` does: reach the
    /// backend, install the modules (registry, git, archive and local
    /// sources), check that every provider the configuration needs is
    /// built in.
    Init(InitArgs),
    /// Install the modules the configuration calls, as `terraform get`
    /// does: init's module step alone.
    Get {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[command(flatten)]
        vars: VarArgs,
        /// Fetch every remote module again, at the newest version its
        /// constraint allows (Terraform's -update).
        #[arg(long)]
        update: bool,
        /// Where the test files are whose runs' modules are installed too.
        #[arg(long = "test-directory", value_name = "DIR", default_value = "tests")]
        test_directory: PathBuf,
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
    Import(ImportArgs),
    /// List, show, create, select and delete workspaces, as Terraform's
    /// `workspace` commands.
    Workspace {
        #[command(subcommand)]
        command: crate::engine::WorkspaceCommand,
    },
    /// Mark a resource instance to be replaced by the next plan.
    Taint(TaintArgs),
    /// Take a taint mark away.
    Untaint(TaintArgs),
    /// Record in the state what the objects are now, changing none of
    /// them: `apply --refresh-only --auto-approve` (Terraform's `refresh`).
    Refresh(RefreshArgs),
    /// Show a saved plan, or the state.
    Show(ShowArgs),
    /// Forget the API token saved for a host (Terraform's `logout`).
    Logout {
        /// The host (HCP Terraform's, app.terraform.io, by default).
        host: Option<String>,
    },
    /// Terraform's `login`, which strata does not do yet: refused, naming
    /// the ways to give strata a token.
    Login { host: Option<String> },
    /// What strata knows of the language, for editors (Terraform's
    /// `metadata`).
    Metadata {
        #[command(subcommand)]
        command: MetadataCommand,
    },
    /// The module calls of the configuration, as a tree (Terraform's
    /// `modules`).
    Modules {
        /// As Terraform's JSON document: every call, flattened.
        #[arg(long)]
        json: bool,
    },
    /// Print strata's version and the Terraform language version it implements.
    Version {
        /// As JSON, the fields `terraform version -json` has.
        #[arg(long)]
        json: bool,
    },
    /// Rewrite files in Terraform's canonical format.
    Fmt(FmtArgs),
}

#[derive(Subcommand, Debug)]
pub enum MetadataCommand {
    /// The signatures of the language's functions, as Terraform's
    /// `metadata functions -json` prints them.
    Functions {
        /// Required, as Terraform requires it: JSON is the only form.
        #[arg(long)]
        json: bool,
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
    /// Write the checksums of the configuration's providers for each
    /// platform asked into the lock file, as Terraform's `providers lock`.
    Lock {
        /// Only these providers (`hashicorp/aws`); all by default.
        providers: Vec<String>,
        /// A platform to lock for (`linux_amd64`), repeatable; this
        /// machine's by default.
        #[arg(long = "platform", value_name = "OS_ARCH")]
        platforms: Vec<String>,
        /// Fetch the packages from this filesystem mirror.
        #[arg(long = "fs-mirror", value_name = "DIR")]
        fs_mirror: Option<PathBuf>,
        /// Fetch the packages from this network mirror (https).
        #[arg(long = "net-mirror", value_name = "URL")]
        net_mirror: Option<String>,
        /// Use the CLI configuration's plugin cache first.
        #[arg(long = "enable-plugin-cache")]
        enable_plugin_cache: bool,
    },
    /// Save the packages of the configuration's providers for each
    /// platform asked in DIR, as a mirror (Terraform's `providers mirror`).
    Mirror {
        dir: PathBuf,
        /// A platform to mirror for (`linux_amd64`), repeatable; this
        /// machine's by default.
        #[arg(long = "platform", value_name = "OS_ARCH")]
        platforms: Vec<String>,
        /// Follow the lock file's versions (`-lock-file=false`: the
        /// newest the constraints allow).
        #[arg(long = "lock-file", value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
        lock_file: bool,
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
    /// The identities of resource instances, as JSON (Terraform 1.12's
    /// `state identities -json`), optionally only those matching
    /// addresses.
    Identities {
        addresses: Vec<String>,
        /// Only the instances whose `id` attribute is this.
        #[arg(long)]
        id: Option<String>,
        /// Required, as Terraform requires it: JSON is the only form.
        #[arg(long)]
        json: bool,
    },
    /// Show one resource instance's attributes.
    Show {
        address: String,
        /// One JSON document (`format_version`, `resource` as `show -json`
        /// writes one, `diagnostics`), as Terraform 1.15's.
        #[arg(long)]
        json: bool,
    },
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

// `strata plan`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub vars: VarArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Write the plan to FILE for `strata apply FILE`.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Exit 0 when there is nothing to do, 2 when there are changes, 1 on error.
    #[arg(long)]
    pub detailed_exitcode: bool,
    #[arg(long, value_enum, default_value = "human")]
    pub format: crate::engine::Format,
    /// Plan to destroy everything in the state.
    #[arg(long)]
    pub destroy: bool,
    /// Terraform's machine-readable UI: one JSON message a line.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Write configuration for `import` blocks whose targets have none
    /// into FILE (a new file), then plan with it.
    #[arg(long, value_name = "FILE")]
    pub generate_config_out: Option<PathBuf>,
}

// `strata drift`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct DriftArgs {
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub vars: VarArgs,
    /// A local state file, used in place of the backend the configuration
    /// names (default: that backend, else terraform.tfstate).
    #[arg(long = "state", value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Driver operations in flight at once.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub parallelism: u16,
    #[arg(long, value_enum, default_value = "human")]
    pub format: crate::engine::Format,
    /// Leave out resources whose address matches this pattern (`*` any
    /// characters, `?` one; e.g. `aws_security_group.*`). Repeatable.
    #[arg(long, value_name = "ADDR_PATTERN")]
    pub ignore: Vec<String>,
}

// `strata cost`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct CostArgs {
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub vars: VarArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[arg(long, value_enum, default_value = "human")]
    pub format: crate::engine::Format,
}

// `strata apply`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct ApplyArgs {
    /// A configuration directory or file, or a plan file from `strata plan --out`.
    #[arg(default_value = ".")]
    pub target: PathBuf,
    #[command(flatten)]
    pub changing: Changing,
}

// `strata destroy`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct DestroyArgs {
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub changing: Changing,
}

/// What `apply` and `destroy` share: the run's flags, and how it is
/// approved and shown.
#[derive(clap::Args, Debug)]
pub struct Changing {
    #[command(flatten)]
    pub vars: VarArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub auto_approve: bool,
    /// Terraform's machine-readable UI: one JSON message a line.
    #[arg(long)]
    pub json: bool,
}

// `strata refresh`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct RefreshArgs {
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub vars: VarArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

// `strata import`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// The resource instance to record it at (its configuration must exist).
    pub address: String,
    /// The object's id, as its driver reads it.
    pub id: String,
    /// The configuration directory.
    #[arg(long = "config", default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub vars: VarArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

// `strata validate`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub vars: VarArgs,
    /// Your own prices, over the list prices (for node pools' price caps).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Terraform's diagnostics JSON on stdout (`valid`, counts, each
    /// problem with its range).
    #[arg(long)]
    pub json: bool,
    /// The folder of test files (*.tftest.hcl), checked with the
    /// configuration.
    #[arg(long = "test-directory", value_name = "DIR", default_value = "tests")]
    pub test_directory: PathBuf,
    /// Leave the test files unchecked.
    #[arg(long = "no-tests")]
    pub no_tests: bool,
    /// Check the query files (*.tfquery.hcl) too (Terraform 1.14).
    #[arg(long)]
    pub query: bool,
}

// `strata test`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct TestArgs {
    /// A test file to run (its path from the configuration's directory);
    /// again for more. All of them by default.
    #[arg(long, value_name = "FILE")]
    pub filter: Vec<PathBuf>,
    /// The folder of test files besides the configuration's own.
    #[arg(long = "test-directory", value_name = "DIR", default_value = "tests")]
    pub test_directory: PathBuf,
    /// Show each run's plan, or the state its apply left.
    #[arg(long)]
    pub verbose: bool,
    /// Terraform's machine-readable UI, one message a line.
    #[arg(long)]
    pub json: bool,
    /// Also write the outcome as a JUnit XML report to FILE.
    #[arg(long = "junit-xml", value_name = "FILE")]
    pub junit_xml: Option<PathBuf>,
    /// Driver operations in flight at once in each run's plan or apply.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub parallelism: u16,
    /// Runs of a file marked `parallel` that may run at once (Terraform
    /// 1.13). strata runs them one after another, which any bound
    /// allows; their verdicts are the same.
    #[arg(long = "run-parallelism", value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..))]
    pub run_parallelism: u16,
    #[command(flatten)]
    pub vars: VarArgs,
}

// `strata query`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct QueryArgs {
    /// Write a `resource` and an `import` block for everything found into
    /// FILE (a new file).
    #[arg(long, value_name = "FILE")]
    pub generate_config_out: Option<PathBuf>,
    /// Terraform's machine-readable UI, one message a line.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub vars: VarArgs,
}

// `strata console`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct ConsoleArgs {
    /// A configuration whose variables, locals and resources (as its
    /// state holds them) are in scope; the working directory's by
    /// default.
    pub path: Option<PathBuf>,
    /// A local state file, read in place of the backend the
    /// configuration names.
    #[arg(long = "state", value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Evaluate as a plan would leave things: each object as planned,
    /// unknown where only the apply can know.
    #[arg(long)]
    pub plan: bool,
    /// One JSON object per input line: {"value": V, "type": T} or {"error": M}.
    #[arg(long)]
    pub json: bool,
    /// Evaluate in this module instance (`module.net[0]`): its variables,
    /// locals and resources, as Terraform 1.16's console -scope.
    #[arg(long, value_name = "MODULE")]
    pub scope: Option<String>,
    #[command(flatten)]
    pub vars: VarArgs,
}

// `strata state`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct StateArgs {
    #[command(subcommand)]
    pub command: StateCommand,
    /// A local state file, used in place of the backend the configuration
    /// names (default: that backend, else terraform.tfstate).
    #[arg(long = "state", value_name = "FILE", global = true)]
    pub state: Option<PathBuf>,
}

// `strata output`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct OutputArgs {
    pub name: Option<String>,
    #[arg(long, conflicts_with = "raw")]
    pub json: bool,
    /// One string, number or bool as it is, for scripts (no quotes,
    /// no newline).
    #[arg(long, requires = "name")]
    pub raw: bool,
    /// A local state file, used in place of the backend the configuration
    /// names (default: that backend, else terraform.tfstate).
    #[arg(long = "state", value_name = "FILE")]
    pub state: Option<PathBuf>,
}

// `strata report`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The period's start: a date (2026-11-01) or an RFC 3339 time
    /// (default: 30 days before --until).
    #[arg(long)]
    pub since: Option<String>,
    /// The period's end, not included (default: now).
    #[arg(long)]
    pub until: Option<String>,
    #[arg(long, value_enum, default_value = "human")]
    pub format: crate::engine::Format,
    /// A local state file, used in place of the backend the configuration
    /// names (default: that backend, else terraform.tfstate).
    #[arg(long = "state", value_name = "FILE")]
    pub state: Option<PathBuf>,
}

// `strata force-unlock`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct ForceUnlockArgs {
    pub id: String,
    /// A local state file, used in place of the backend the configuration
    /// names (default: that backend, else terraform.tfstate).
    #[arg(long = "state", value_name = "FILE")]
    pub state: Option<PathBuf>,
}

// `strata show`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    pub planfile: Option<PathBuf>,
    /// Terraform's plan JSON format (1.2) for a plan; the state document otherwise.
    #[arg(long)]
    pub json: bool,
    /// A local state file, used in place of the backend the configuration
    /// names (default: that backend, else terraform.tfstate).
    #[arg(long = "state", value_name = "FILE")]
    pub state: Option<PathBuf>,
}

// `strata init`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct InitArgs {
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Values for the const variables module sources are made of
    /// (Terraform 1.15).
    #[command(flatten)]
    pub vars: VarArgs,
    /// Leave the backend alone (Terraform's -backend=false).
    #[arg(long)]
    pub no_backend: bool,
    /// Leave the modules as they are (Terraform's -get=false).
    #[arg(long)]
    pub no_get: bool,
    /// Fetch every remote module again, at the newest version its
    /// constraint allows.
    #[arg(long)]
    pub upgrade: bool,
    /// Forget the backend settings an earlier init kept, and set a
    /// changed backend up without moving any state.
    #[arg(long)]
    pub reconfigure: bool,
    /// Move the state from the backend set up before to the one the
    /// configuration names now.
    #[arg(long)]
    pub migrate_state: bool,
    /// Move it without asking (implies --migrate-state).
    #[arg(long)]
    pub force_copy: bool,
    /// A backend setting, `key=value`, or a file of them, laid over
    /// the backend block and kept for the commands that follow
    /// (repeatable).
    #[arg(long = "backend-config", value_name = "KEY=VALUE|FILE")]
    pub backend_config: Vec<String>,
    /// Copy the module at SOURCE (any module source) into this empty
    /// directory first.
    #[arg(long, value_name = "SOURCE")]
    pub from_module: Option<String>,
    /// Where the test files are whose runs' modules are installed too.
    #[arg(long = "test-directory", value_name = "DIR", default_value = "tests")]
    pub test_directory: PathBuf,
}

// `strata taint` and `untaint`: their flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct TaintArgs {
    pub address: String,
    /// An instance not in the state is a warning, not an error.
    #[arg(long)]
    pub allow_missing: bool,
    #[arg(long = "state", value_name = "FILE")]
    pub state: Option<PathBuf>,
}

// `strata fmt`: its flags and arguments (the variant of `Command` says what it does).
#[derive(clap::Args, Debug)]
pub struct FmtArgs {
    /// Exit 3 and change nothing when a file is not formatted.
    #[arg(long)]
    pub check: bool,
    /// Also the files in subdirectories (hidden ones left out).
    #[arg(long)]
    pub recursive: bool,
    /// Do not name the files that are not formatted.
    #[arg(long)]
    pub no_list: bool,
    /// Do not rewrite them.
    #[arg(long)]
    pub no_write: bool,
    /// Show each change as a unified diff.
    #[arg(long)]
    pub diff: bool,
    /// A file or directory, or `-` to format stdin to stdout.
    #[arg(default_value = ".")]
    pub path: PathBuf,
}
