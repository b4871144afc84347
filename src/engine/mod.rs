//! The engine: each command a short list of steps over a [`session`]
//! (the configuration prepared, the state locked and loaded, the runtime
//! started). It returns values and tells its [`View`] what happens as it
//! goes; it never writes to the terminal.
//!
//! `prepare` loads and expands the configuration; `session` opens the
//! state; `plan` (plan, cost, drift), `apply` (apply, destroy, with
//! `failover`'s rounds), `import`, `generate`, `show`, `validate` and
//! `console` are the commands over them; `report` reads the history drift
//! runs keep beside the state. The working directory's own
//! commands are here too, so the CLI reaches nothing past the engine:
//! `init` (with `migrate`, the backend step), `workspace`, `providers`,
//! `plugins` (with `serving`: which provider serves a type) and `fmt`.

mod apply;
mod console;
mod console_scope;
mod credentials;
mod failover;
mod fmt;
mod generate;
mod import;
mod init;
mod invoke;
mod metadata;
mod migrate;
mod modules;
mod observe;
mod packages;
mod plan;
mod plugins;
mod prepare;
mod providers;
mod query;
mod report;
mod sealing;
mod serving;
mod session;
mod show;
mod test;
#[cfg(test)]
mod tests;
mod validate;
mod view;
mod workspace;

/// A plan's mode, which a command's options carry.
pub use crate::plan::Mode;
/// The plan a command shows its view.
pub use crate::plan::Plan;
pub use crate::plan::{Generated, ListFound, Queried};
pub use crate::report::Report;
pub use apply::{apply, Applied, ApplyReport};
pub use console::{console, ConsoleForm, Consoled, Terminal};
pub use credentials::{logout, DEFAULT_HOST};
pub use fmt::{fmt, fmt_text, FmtOptions, Formatted};
pub use import::import;
pub use init::{get, init, Getting, Init};
pub use metadata::function_signatures;
pub use modules::modules;
pub use packages::{providers_lock, providers_mirror, ProvidersLock, ProvidersMirror};
pub use plan::{cost, drift, plan, Costed, Drifted, PlanDone};
pub use plugins::{with_plugins, PluginsFor};
pub use providers::{providers, schema as provider_schemas};
pub use query::{query, validate_query};
pub use report::report;
pub use show::{
    planned_values, show, state_outputs, state_show, state_values, ConsoleObjects, Decoded,
    Showing, StateObject, StateValues,
};
pub use test::{test, validate_tests, Status as TestStatus, TestRequest, TestStep, TestTally};
pub use validate::{graph, validate, GraphFormat};
pub use view::{ActionSaid, ImportStep, Notice, Shown, View};
pub use workspace::{listed_json as workspaces_json, workspace, WorkspaceCommand};

// The types and steps of the stages below that the CLI names, so that it
// names nothing past the engine (tests/architecture.rs holds it to that).
pub use crate::backends::open_here as open_store;
pub use crate::builtin::Drivers;
pub use crate::comment::run as comment;
pub use crate::config::variables::CliInput;
pub use crate::config::{workspace as current_workspace, TERRAFORM_LANGUAGE};
pub use crate::graph::{Scope, Target};
pub use crate::statecmd::{
    force_unlock, identities as state_identities, list as state_list, mv as state_mv, output,
    pull as state_pull, push as state_push, replace_provider, rm as state_rm, taint, OutputFormat,
};

use crate::diag::{Diag, Diags};
use std::path::{Path, PathBuf};
use strata_provider::catalog::PriceList;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Format {
    #[default]
    Human,
    Json,
    Markdown,
}

/// What `plan` and `apply` share on the command line. The default is a
/// normal plan with refresh, ten calls at once, the `default` workspace.
#[derive(Debug, Clone)]
pub struct Options {
    pub inputs: Vec<CliInput>,
    /// `--state FILE`: a local file, in place of the configured backend.
    pub state: Option<PathBuf>,
    pub refresh: bool,
    pub parallelism: usize,
    /// `-destroy`, `-refresh-only`, or neither.
    pub mode: Mode,
    /// The workspace, decided once by the command: the backend opens its
    /// state and expressions read it as `terraform.workspace`.
    pub workspace: String,
    /// `--prices FILE`: the user's prices, over the catalogs.
    pub prices: PriceList,
    /// `--replace-placement POOL`.
    pub replace_placement: Vec<String>,
    /// `-lock-timeout=D`: how long to wait for a state lock another run
    /// holds before giving up (zero: at once, as Terraform's default).
    pub lock_timeout: std::time::Duration,
    /// `-target` / `-exclude`: the part of the configuration planned.
    pub scope: crate::graph::Scope,
    /// `-replace ADDR`: instances replaced whatever their attributes say.
    pub replace: Vec<strata_state::model::Address>,
    /// `-json`: Terraform's machine-readable UI on stdout, one message a
    /// line, in place of the human output.
    pub json: bool,
    /// `-generate-config-out=FILE`: configuration for import targets that
    /// have none, written into this new file before the plan.
    pub generate_config_out: Option<PathBuf>,
    /// `-minimal-refresh`: read back only what a plan without reading
    /// would change (see `prepare::make_plan`).
    pub minimal_refresh: bool,
    /// How long failing checks are looked at again after an apply
    /// (`None`: the apply's default; a test run's: not at all).
    pub check_settle: Option<std::time::Duration>,
    /// A test run's `provider` blocks, in place of the root module's of
    /// the same name and alias.
    pub provider_blocks: Vec<crate::config::Provider>,
    /// A test run's `module`: the modules it calls are where init of the
    /// configuration under test installed them (Terraform's
    /// `test.<file>.<run>` keys), not in a manifest of its own.
    pub installed_under: Option<crate::config::InstalledUnder>,
    /// `query`: the query files (`*.tfquery.hcl`) are read too.
    pub query: bool,
    /// `-invoke=action.TYPE.NAME`: the plan invokes that action and
    /// changes nothing else.
    pub invoke: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            inputs: Vec::new(),
            state: None,
            refresh: true,
            parallelism: 10,
            mode: Mode::Normal,
            workspace: "default".into(),
            prices: PriceList::default(),
            replace_placement: Vec::new(),
            lock_timeout: std::time::Duration::ZERO,
            scope: crate::graph::Scope::default(),
            replace: Vec::new(),
            json: false,
            generate_config_out: None,
            minimal_refresh: false,
            check_settle: None,
            provider_blocks: Vec::new(),
            installed_under: None,
            query: false,
            invoke: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Success and nothing to do (exit 0).
    NoChanges,
    /// Success with changes (exit 2 under --detailed-exitcode, else 0).
    Changes,
}

/// `drivers` with `terraform_remote_state` able to open other states
/// through the backends.
pub fn reading_remote_states(drivers: Drivers) -> Drivers {
    drivers.with_remote_states(std::sync::Arc::new(crate::backends::RemoteStates))
}

/// The provider versions the lock file in `dir` selects (none when it
/// cannot be read), as `version` lists them.
pub fn selected_providers(dir: &Path) -> std::collections::BTreeMap<String, String> {
    crate::config::lockfile::LockFile::read(dir, &mut crate::diag::Sources::default())
        .map(|l| {
            l.providers
                .into_iter()
                .map(|(s, l)| (s, l.version))
                .collect()
        })
        .unwrap_or_default()
}

fn io_diag(what: &str, path: &Path, e: std::io::Error) -> Diags {
    Diags::from(Diag::new(
        "strata::io",
        format!("Cannot {what} {}", path.display()),
        e.to_string(),
    ))
}

fn write_file(path: &Path, text: &str) -> Result<(), Diags> {
    let tmp = PathBuf::from(format!("{}.tmp", path.display()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| io_diag("write", path, e))
}
