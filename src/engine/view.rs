//! What the engine tells its user while a command runs, as values: the
//! engine never writes to the terminal. The CLI's printer implements
//! [`View`] (Terraform's words, or its machine-readable UI); a test can
//! implement it to see what a command said.

use crate::diag::{Diag, Sources};
use crate::plan::{Mode, Plan};
use std::path::PathBuf;

/// The engine's side of the terminal.
pub trait View {
    /// Something said as it happens, beside the command's results.
    fn notice(&mut self, notice: Notice);
    /// A plan, as the command shows it (`warnings` said beneath it).
    fn plan(&mut self, shown: Shown<'_>, warnings: &[Diag], sources: &Sources);
    /// Whether the user approves the plan just shown (`yes` alone does).
    fn approve(&mut self, mode: Mode) -> bool;
    /// Whether the user answers `question` with `yes` (init's question
    /// before it copies states to a new backend).
    fn confirm(&mut self, question: &str) -> bool;
    /// Where an apply's progress lines go as its operations run (a
    /// function: they run on threads of their own).
    fn progress(&self) -> fn(&str);
    /// A test's progress, as it happens (`strata test`).
    fn test_step(&mut self, _step: super::test::TestStep<'_>, _sources: &Sources) {}
    /// Problems said as a command goes on (a test file that does not read).
    fn diagnostics(&mut self, _diags: &crate::diag::Diags, _sources: &Sources) {}
}

/// How a plan is being shown.
#[derive(Clone, Copy)]
pub enum Shown<'p> {
    /// A plan made by this run (`refreshed`: its objects were read first).
    Made { plan: &'p Plan, refreshed: bool },
    /// The part of a plan made before its errors (shown above them).
    Partial(&'p Plan),
    /// A saved plan about to be applied, said in the machine-readable UI
    /// only (Terraform applies a saved plan without showing it again).
    Saved(&'p Plan),
    /// A failover's next round, planned again after a shortage.
    Round(&'p Plan),
}

/// What a command says as it goes.
pub enum Notice {
    /// An action invoked (`-invoke`): its address, type and name, and
    /// how Terraform's lines name it (`action.x.y (triggered by CLI)`).
    Action {
        addr: String,
        type_name: String,
        name: String,
        said: String,
        step: ActionSaid,
    },
    /// What a command did so far, said before a question or an error
    /// that comes next (init's steps, as Terraform says them).
    Steps(String),
    /// A destroy in a directory without configuration.
    DestroyWithoutConfiguration {
        dir: PathBuf,
    },
    /// The state's lock belonged to a run that is no longer running.
    LockTakenOver {
        who: String,
        operation: String,
        since: String,
    },
    /// The state's lock could not be released: it may still be held.
    UnlockFailed {
        why: String,
    },
    /// A command that does not write found an interrupted apply's journal.
    Interrupted {
        /// What the journal finished is now in the state.
        folded: bool,
        /// Creates in question, left for the next apply.
        pending: usize,
    },
    /// An apply recovered what an interrupted one left.
    Recovered {
        recorded: usize,
        adopted: usize,
        /// Objects made but impossible to adopt (untagged, a secret given
        /// once), deleted: each as `ADDRESS ID`.
        discarded: Vec<String>,
    },
    /// A failover round's report on one placed pool.
    Placement(String),
    /// An operation a failover round left undone, for the next round.
    RoundFailed {
        addr: String,
        why: String,
    },
    RoundWaits {
        addr: String,
    },
    /// Where a pool goes in the next round.
    NextTry(String),
    /// The GPUs of a placed pool could not be counted.
    GpusUnknown {
        pool: String,
        why: String,
    },
    /// A drift run's observation could not be added to the history.
    HistoryNotWritten {
        why: String,
    },
    /// `import`'s steps.
    Import(ImportStep),
}

/// What `strata import ADDR ID` says, as Terraform's import does.
pub enum ImportStep {
    Importing { to: String, id: String },
    Prepared { to: String, type_name: String },
    Refreshing { to: String, id: String },
    Done,
}

/// What an action invocation has come to.
#[derive(Debug, Clone)]
pub enum ActionSaid {
    Started,
    Progress(String),
    Complete,
    Failed(String),
}
