//! The local-file backend: `terraform.tfstate`-style JSON next to the
//! configuration, with a lock file, a backup of the previous version, an
//! apply journal, and writes that are never partial.

use crate::error::StateError;
use crate::journal::{self, Entry, Replay};
use crate::model::{State, FORMAT_VERSION};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

/// Who holds the lock, as Terraform's lock info records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LockInfo {
    #[serde(rename = "ID")]
    pub id: String,
    pub operation: String,
    pub who: String,
    pub version: String,
    pub created: String,
    pub path: String,
    #[serde(rename = "PID")]
    pub pid: u32,
}

/// A held lock; dropping it releases the lock.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
    pub info: LockInfo,
    /// Open for as long as the lock is held, with an OS lock on it: when
    /// the process dies, however it dies, the OS lock goes with it, which
    /// is how the next run tells a stale lock file from a held one.
    _file: File,
    /// Set when this lock replaced one left by a process that had died.
    pub took_over: Option<LockInfo>,
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Only remove the lock file if it is still ours (force-unlock may
        // have handed it to another run since).
        if let Ok(text) = std::fs::read_to_string(&self.path) {
            if serde_json::from_str::<LockInfo>(&text).is_ok_and(|i| i.id == self.info.id) {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

/// The state as loaded: the last written state plus any journal left by a
/// run that died.
#[derive(Debug)]
pub struct Loaded {
    pub state: State,
    pub replay: Replay,
    /// Whether a state file existed (a new state has a fresh lineage).
    pub existed: bool,
}

#[derive(Debug, Clone)]
pub struct LocalStore {
    path: PathBuf,
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn who() -> String {
    let user = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    format!("{user}@{host}")
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Opens a new file readable and writable by its owner only.
fn create_private(path: &Path, exclusive: bool) -> std::io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.write(true);
    if exclusive {
        opts.create_new(true);
    } else {
        opts.create(true).truncate(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts.open(path)
}

/// Replaces `path` with `bytes` so that a crash at any point leaves either
/// the old file or the new one, never a mixture: temp file, fsync, rename,
/// fsync of the directory.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StateError> {
    let tmp = sibling(path, &format!(".tmp-{}", std::process::id()));
    let io = |e| StateError::io(path, e);
    let mut f = create_private(&tmp, false).map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    f.sync_all().map_err(io)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(io)?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
    Ok(())
}

impl LocalStore {
    pub fn new(path: impl Into<PathBuf>) -> LocalStore {
        LocalStore { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock_path(&self) -> PathBuf {
        sibling(&self.path, ".lock")
    }

    fn journal_path(&self) -> PathBuf {
        sibling(&self.path, ".journal")
    }

    pub fn backup_path(&self) -> PathBuf {
        sibling(&self.path, ".backup")
    }

    /// Takes the lock, or says who holds it. The lock file is created
    /// exclusively, so two processes can never both succeed.
    pub fn lock(&self, operation: &str) -> Result<Lock, StateError> {
        let info = LockInfo {
            id: uuid::Uuid::new_v4().to_string(),
            operation: operation.to_string(),
            who: who(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            created: now(),
            path: self.path.display().to_string(),
            pid: std::process::id(),
        };
        let path = self.lock_path();
        let io = |e| StateError::io(&path, e);
        let (mut file, previous) = match create_private(&path, true) {
            Ok(f) => (f, None),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                // A lock file: held, or left by a run that died.
                let f = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&path)
                    .map_err(io)?;
                (f, Some(self.held()))
            }
            Err(e) => return Err(io(e)),
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(previous.unwrap_or_else(|| self.held()))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        // We hold the OS lock. If the file was already there, whoever wrote
        // it is gone (their OS lock went with them): take it over.
        let took_over = match previous {
            Some(StateError::Locked {
                id,
                who,
                operation,
                created,
            }) => Some(LockInfo {
                id,
                operation,
                who,
                version: String::new(),
                created,
                path: self.path.display().to_string(),
                pid: 0,
            }),
            _ => None,
        };
        let text = serde_json::to_string_pretty(&info).unwrap_or_default();
        file.set_len(0)
            .and_then(|()| file.write_all(text.as_bytes()))
            .and_then(|()| file.sync_all())
            .map_err(io)?;
        Ok(Lock {
            path,
            info,
            _file: file,
            took_over,
        })
    }

    fn held(&self) -> StateError {
        let path = self.lock_path();
        match std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<LockInfo>(&t).ok())
        {
            Some(i) => StateError::Locked {
                id: i.id,
                who: i.who,
                operation: i.operation,
                created: i.created,
            },
            // A lock file we cannot read is still a lock: name the file.
            None => StateError::Locked {
                id: "unknown".into(),
                who: format!("an unreadable lock file {}", path.display()),
                operation: "unknown".into(),
                created: "unknown".into(),
            },
        }
    }

    /// Releases a stale lock by its ID.
    pub fn force_unlock(&self, id: &str) -> Result<(), StateError> {
        let path = self.lock_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == ErrorKind::NotFound => return Err(StateError::NotLocked),
            Err(e) => return Err(StateError::io(&path, e)),
        };
        let held = serde_json::from_str::<LockInfo>(&text)
            .map(|i| i.id)
            .unwrap_or_else(|_| "unknown".into());
        if held != id && held != "unknown" {
            return Err(StateError::LockMismatch {
                given: id.to_string(),
                held,
            });
        }
        std::fs::remove_file(&path).map_err(|e| StateError::io(&path, e))
    }

    /// Reads the state (a new one when there is no file) and replays a
    /// journal left behind by a run that did not finish.
    pub fn load(&self) -> Result<Loaded, StateError> {
        let (mut state, existed) = match std::fs::read_to_string(&self.path) {
            Ok(text) => (self.parse(&text)?, true),
            Err(e) if e.kind() == ErrorKind::NotFound => (State::new(), false),
            Err(e) => return Err(StateError::io(&self.path, e)),
        };
        let jpath = self.journal_path();
        let replay = match std::fs::read_to_string(&jpath) {
            Ok(text) => journal::replay(&text, &mut state).map_err(|(line, detail)| {
                StateError::Journal {
                    path: jpath.clone(),
                    line,
                    detail,
                }
            })?,
            Err(e) if e.kind() == ErrorKind::NotFound => Replay::default(),
            Err(e) => return Err(StateError::io(&jpath, e)),
        };
        Ok(Loaded {
            state,
            replay,
            existed,
        })
    }

    fn parse(&self, text: &str) -> Result<State, StateError> {
        let corrupt = |e: serde_json::Error| StateError::Corrupt {
            path: self.path.clone(),
            detail: e.to_string(),
        };
        // The version first, so a newer format is named as such rather
        // than as a field this build does not know.
        #[derive(serde::Deserialize)]
        struct Head {
            version: Option<u64>,
        }
        let head: Head = serde_json::from_str(text).map_err(corrupt)?;
        let Some(version) = head.version else {
            return Err(StateError::Corrupt {
                path: self.path.clone(),
                detail: "no \"version\" field".into(),
            });
        };
        if version > FORMAT_VERSION {
            return Err(StateError::TooNew {
                path: self.path.clone(),
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        serde_json::from_str(text).map_err(corrupt)
    }

    /// Writes `state` as the new state file (serial + 1), keeping the
    /// previous file as the backup, and retires the journal it includes.
    pub fn persist(&self, lock: &Lock, state: &mut State) -> Result<(), StateError> {
        self.check_lock(lock)?;
        state.serial += 1;
        state.strata_version = env!("CARGO_PKG_VERSION").to_string();
        let mut text = serde_json::to_string_pretty(state).map_err(|e| StateError::Corrupt {
            path: self.path.clone(),
            detail: e.to_string(),
        })?;
        text.push('\n');
        match std::fs::read(&self.path) {
            Ok(previous) => write_atomic(&self.backup_path(), &previous)?,
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(StateError::io(&self.path, e)),
        }
        write_atomic(&self.path, text.as_bytes())?;
        // The state now holds everything the journal did.
        match std::fs::remove_file(self.journal_path()) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StateError::io(self.journal_path(), e)),
        }
    }

    fn check_lock(&self, lock: &Lock) -> Result<(), StateError> {
        let current = std::fs::read_to_string(self.lock_path())
            .ok()
            .and_then(|t| serde_json::from_str::<LockInfo>(&t).ok());
        match current {
            Some(i) if i.id == lock.info.id => Ok(()),
            Some(i) => Err(StateError::LockMismatch {
                given: lock.info.id.clone(),
                held: i.id,
            }),
            None => Err(StateError::NotLocked),
        }
    }

    /// Opens the journal for appending (under the lock).
    pub fn journal(&self, lock: &Lock) -> Result<Journal, StateError> {
        self.check_lock(lock)?;
        let path = self.journal_path();
        let mut opts = OpenOptions::new();
        opts.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let file = opts.open(&path).map_err(|e| StateError::io(&path, e))?;
        Ok(Journal { file, path, seq: 0 })
    }
}

/// A journal line written from a borrowed entry.
#[derive(Serialize)]
struct RecordRef<'e> {
    seq: u64,
    #[serde(flatten)]
    entry: &'e Entry,
}

/// An open journal. Each `append` is on disk when it returns.
pub struct Journal {
    file: File,
    path: PathBuf,
    seq: u64,
}

impl Journal {
    pub fn append(&mut self, entry: Entry) -> Result<(), StateError> {
        self.append_all(std::slice::from_ref(&entry))
    }

    /// Appends entries with one fsync (a group commit): all of them are on
    /// disk when it returns, at the cost of one flush rather than one each.
    pub fn append_all(&mut self, entries: &[Entry]) -> Result<(), StateError> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        for entry in entries {
            self.seq += 1;
            let line = serde_json::to_string(&RecordRef {
                seq: self.seq,
                entry,
            })
            .map_err(|e| StateError::Journal {
                path: self.path.clone(),
                line: self.seq as usize,
                detail: e.to_string(),
            })?;
            text.push_str(&line);
            text.push('\n');
        }
        let io = |e| StateError::io(&self.path, e);
        self.file.write_all(text.as_bytes()).map_err(io)?;
        self.file.sync_data().map_err(io)
    }
}
