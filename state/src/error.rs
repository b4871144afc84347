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

    /// A remote backend's store failed or refused a request.
    #[error("the state backend at {location} failed: {detail}")]
    #[diagnostic(
        code(strata::state::backend),
        help("Nothing was changed by this request. Check the backend's address, credentials and permissions, then run again.")
    )]
    Backend { location: String, detail: String },

    #[error("the state at {location} is not valid state: {detail}")]
    #[diagnostic(
        code(strata::state::corrupt),
        help("Nothing was changed. The previous version is kept as the backup next to it (the .backup file, object or row); restore it from there if this one was damaged.")
    )]
    Corrupt { location: String, detail: String },

    #[error("the state at {location} has format version {found}; this strata reads up to version {supported}")]
    #[diagnostic(
        code(strata::state::too_new),
        help(
            "It was written by a newer strata. Upgrade strata; this one will not touch the state."
        )
    )]
    TooNew {
        location: String,
        found: u64,
        supported: u64,
    },

    #[error("the journal of {location} is damaged at line {line}: {detail}")]
    #[diagnostic(
        code(strata::state::journal),
        help("Nothing was changed. The journal holds operations that finished after the state was last written; keep it for inspection.")
    )]
    Journal {
        location: String,
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

    /// A state that the reader would refuse, about to be written: refused
    /// before it replaces one that reads.
    #[error("strata will not write a state it could not read back to {location}: {detail}")]
    #[diagnostic(
        code(strata::state::unreadable),
        help("Nothing was written; the stored state is as it was. This is strata refusing its own result (a state command asked for an edit that would break the state); please report it with the command that led here.")
    )]
    Unreadable { location: String, detail: String },

    /// Two local states of one workspace, each with objects: neither may
    /// replace the other.
    #[error("{old} holds {old_objects} object(s) and {new} holds {new_objects}: two states of one workspace")]
    #[diagnostic(
        code(strata::state::two_states),
        help("strata now keeps its state where Terraform keeps it ({new}), and found an older strata's state ({old}) as well. Nothing was moved. Keep the one that describes your objects: `strata state list --state FILE` shows each; move the other out of this directory, then run again.")
    )]
    TwoStates {
        old: String,
        old_objects: usize,
        new: String,
        new_objects: usize,
    },

    /// A local state's lock is the OS's and lives as long as its process:
    /// only ending the process releases it.
    #[error("the lock {id} is held by a process that is still running ({who})")]
    #[diagnostic(
        code(strata::state::lock_alive),
        help("A local state's lock ends with the run holding it, even when that run is killed; stop that run rather than unlocking its state under it. force-unlock clears only the lock of a run that has died.")
    )]
    LockAlive { id: String, who: String },

    #[error("the state is not locked")]
    #[diagnostic(code(strata::state::not_locked))]
    NotLocked,

    #[error("the state at {location} was changed by another writer since this run read it")]
    #[diagnostic(
        code(strata::state::conflict),
        help("Nothing was written. Another run wrote the state while this one held no valid lock (a lock released with force-unlock?). Run again to start from the state as it is now.")
    )]
    Conflict { location: String },

    #[error("the state at {location} has lineage {stored}; the state given has lineage {given}")]
    #[diagnostic(
        code(strata::state::lineage),
        help("They are different states, and one would replace the other. Nothing was written. If replacing it is really meant, `strata state push --force` does it.")
    )]
    LineageMismatch {
        location: String,
        stored: String,
        given: String,
    },

    #[error(
        "the state at {location} has serial {stored}, newer than the state given (serial {given})"
    )]
    #[diagnostic(
        code(strata::state::serial),
        help("Writing it would undo changes made since. Nothing was written. If replacing it is really meant, `strata state push --force` does it.")
    )]
    SerialBehind {
        location: String,
        stored: u64,
        given: u64,
    },

    /// The serial cannot grow any further; wrapping would make the next
    /// write look older than this one.
    #[error("the state at {location} has serial {serial}, the largest a serial can be")]
    #[diagnostic(
        code(strata::state::serial_exhausted),
        help("Nothing was written. A serial only grows, and this one cannot. Copy the state (`strata state pull`), lower its \"serial\" and push it with `strata state push --force`.")
    )]
    SerialExhausted { location: String, serial: u64 },

    /// The configured encryption could not open what is stored, or seal
    /// what is to be written.
    #[error("the state at {location}: {detail}")]
    #[diagnostic(
        code(strata::state::encryption),
        help("Nothing was changed. The state's encryption is the configuration's `terraform {{ encryption {{ state {{ … }} }} }}`: check its key provider's passphrase (and the variables it is made of); while a key is rotated, the old method stays in a `fallback` block.")
    )]
    Encryption { location: String, detail: String },

    /// An encrypted state (OpenTofu's format) read with no encryption
    /// configured.
    #[error(
        "the state at {location} is encrypted, and this configuration has no encryption to open it"
    )]
    #[diagnostic(
        code(strata::state::encrypted),
        help("Nothing was changed. Add the `encryption` block it was written with to the `terraform` block (key provider, method and `state {{ method = … }}`), then run again.")
    )]
    Encrypted { location: String },
}

impl StateError {
    /// The text of a stored state, or the place where it stops being UTF-8.
    pub fn text(location: &str, bytes: Vec<u8>) -> Result<String, StateError> {
        String::from_utf8(bytes).map_err(|e| {
            let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
            let col = good.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            StateError::Corrupt {
                location: location.to_string(),
                detail: format!(
                    "it is not UTF-8 text: an invalid byte at line {line}, column {col}"
                ),
            }
        })
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> StateError {
        StateError::Io {
            path: path.into(),
            source,
        }
    }

    /// A remote store's failure, worded from any error the client gives.
    pub fn backend(location: impl Into<String>, detail: impl std::fmt::Display) -> StateError {
        StateError::Backend {
            location: location.into(),
            detail: detail.to_string(),
        }
    }
}
