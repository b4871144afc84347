use std::path::PathBuf;

/// Everything that can go wrong with state. Each says what to do about it;
/// none of them overwrites anything.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum StateError {
    #[error("cannot read or write {}: {source}", path.display())]
    #[diagnostic(code(strata::state::io))]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("the state file {} is not valid state: {detail}", path.display())]
    #[diagnostic(
        code(strata::state::corrupt),
        help("Nothing was changed. The previous state is kept in {}.backup; restore it from there if this file was damaged.", path.display())
    )]
    Corrupt { path: PathBuf, detail: String },

    #[error("the state file {} has format version {found}; this strata reads up to version {supported}", path.display())]
    #[diagnostic(
        code(strata::state::too_new),
        help(
            "It was written by a newer strata. Upgrade strata; this one will not touch the file."
        )
    )]
    TooNew {
        path: PathBuf,
        found: u64,
        supported: u64,
    },

    #[error("the journal {} is damaged at line {line}: {detail}", path.display())]
    #[diagnostic(
        code(strata::state::journal),
        help("Nothing was changed. The journal holds operations that finished after the state was last written; keep the file for inspection.")
    )]
    Journal {
        path: PathBuf,
        line: usize,
        detail: String,
    },

    #[error("the state is locked by {who} (operation {operation}, since {created}, lock ID {id})")]
    #[diagnostic(
        code(strata::state::locked),
        help("Wait for that run to finish. If it died, release the lock with `strata force-unlock {id}`.")
    )]
    Locked {
        id: String,
        who: String,
        operation: String,
        created: String,
    },

    #[error("the lock ID {given} does not match the lock held ({held})")]
    #[diagnostic(
        code(strata::state::lock_id),
        help("Run `strata force-unlock {held}` if that lock is stale.")
    )]
    LockMismatch { given: String, held: String },

    #[error("the state is not locked")]
    #[diagnostic(code(strata::state::not_locked))]
    NotLocked,
}

impl StateError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> StateError {
        StateError::Io {
            path: path.into(),
            source,
        }
    }
}
