//! The one trait every place that keeps state implements: a local file,
//! an S3-compatible bucket, a PostgreSQL database. A backend stores opaque
//! text — the state document and the journal's lines — and a lock; what the
//! text means, serials, lineages and replay live once, in [`crate::Store`].

use crate::error::StateError;
use serde::{Deserialize, Serialize};

/// Who holds the lock, as Terraform's lock info records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LockInfo {
    #[serde(rename = "ID")]
    pub id: String,
    pub operation: String,
    /// Terraform's free-form note; empty from strata.
    #[serde(default)]
    pub info: String,
    pub who: String,
    pub version: String,
    pub created: String,
    pub path: String,
    /// strata's own addition; Terraform's info has none (0).
    #[serde(rename = "PID", default)]
    pub pid: u32,
}

impl LockInfo {
    /// A new lock's info: a fresh ID, who and when, for `operation` on
    /// the state at `path`.
    pub fn new(operation: &str, path: String) -> LockInfo {
        LockInfo {
            id: uuid::Uuid::new_v4().to_string(),
            operation: operation.to_string(),
            info: String::new(),
            who: who(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            created: now(),
            path,
            pid: std::process::id(),
        }
    }

    /// The lock info as it is stored: Terraform's JSON.
    pub fn encode(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Lock info as stored, or `None` for text that is not.
    pub fn decode(text: &str) -> Option<LockInfo> {
        serde_json::from_str(text).ok()
    }

    /// Whether `holder`, the lock info found in the store, is lock `id`.
    pub fn check(holder: Option<LockInfo>, id: &str) -> Result<(), StateError> {
        match holder {
            Some(i) if i.id == id => Ok(()),
            Some(i) => Err(StateError::LockMismatch {
                given: id.to_string(),
                held: i.id,
            }),
            None => Err(StateError::NotLocked),
        }
    }

    /// The error a run gets when this lock is in its way.
    pub fn held(&self) -> StateError {
        StateError::Locked {
            id: self.id.clone(),
            who: self.who.clone(),
            operation: self.operation.clone(),
            created: self.created.clone(),
        }
    }
}

/// A version of the stored state, as the backend tells versions apart (an
/// ETag, a serial, a file's size and time): a write names the version it
/// read and fails if another has taken its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version(pub String);

/// What a backend holds.
#[derive(Debug, Default)]
pub struct Stored {
    /// The state document, if one was ever written.
    pub state: Option<String>,
    /// The version of `state`, for the next write's comparison.
    pub version: Option<Version>,
    /// The journal's lines in the order they were appended.
    pub journal: String,
}

/// What [`Backend::read_unless_seen`] found.
#[derive(Debug)]
pub enum Reread {
    /// The state as stored now.
    Read(Stored),
    /// The state file is, byte for byte, the one the caller read: only its
    /// version and the journal are given.
    Seen {
        version: Option<Version>,
        journal: String,
    },
}

/// A file as a reader found it: which file (device and inode), its size
/// and times, and when the reader looked. Two stamps of one file agree
/// only if nothing wrote it in between, provided it had not been written
/// in the second before the first was taken: a file's times have the
/// kernel's tick for their grain, so a write just before could share its
/// time with a later one (as git's index treats "racily clean" files).
#[derive(Debug, Clone)]
pub struct FileStamp {
    file: FileMeta,
    taken_ns: i128,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct FileMeta {
    dev: u64,
    ino: u64,
    len: u64,
    modified_ns: i128,
    changed_ns: i128,
}

/// How long before a stamp a file must have last changed for the stamp to
/// vouch for it: far more than any clock tick.
const SETTLED_NS: i128 = 1_000_000_000;

impl FileStamp {
    /// `meta` of a file a reader is about to read, taken at `now`; none
    /// where the system does not give a file's identity and change time.
    pub fn new(meta: &std::fs::Metadata, now: std::time::SystemTime) -> Option<FileStamp> {
        let taken_ns = now
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .and_then(|d| i128::try_from(d.as_nanos()).ok())?;
        Some(FileStamp {
            file: FileMeta::of(meta)?,
            taken_ns,
        })
    }

    /// Whether `meta` is the same file, unwritten since this stamp: the
    /// same identity, size and times, last changed well before the stamp.
    pub fn vouches_for(&self, meta: &std::fs::Metadata) -> bool {
        let settled = self.file.changed_ns + SETTLED_NS <= self.taken_ns
            && self.file.modified_ns + SETTLED_NS <= self.taken_ns;
        settled && FileMeta::of(meta).as_ref() == Some(&self.file)
    }

    /// Whether `meta` is the file as this stamp found it (a read between
    /// two such looks read one version of it).
    pub fn same_as(&self, meta: &std::fs::Metadata) -> bool {
        FileMeta::of(meta).as_ref() == Some(&self.file)
    }
}

impl FileMeta {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Option<FileMeta> {
        use std::os::unix::fs::MetadataExt;
        let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
        Some(FileMeta {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified_ns: ns(meta.mtime(), meta.mtime_nsec()),
            changed_ns: ns(meta.ctime(), meta.ctime_nsec()),
        })
    }

    #[cfg(not(unix))]
    fn of(_: &std::fs::Metadata) -> Option<FileMeta> {
        None
    }
}

/// A lock taken.
pub struct Acquired {
    /// Whatever must live as long as the lock (an open file with an OS
    /// lock on it); dropped when the lock is released.
    pub guard: Box<dyn std::any::Any + Send>,
    /// The lock of a run that died, which this one replaced. Only backends
    /// that can tell a dead holder from a live one take a lock over; the
    /// others refuse and name the holder for `force-unlock`.
    pub took_over: Option<LockInfo>,
}

/// What a backend's lock is, which decides what `force-unlock` can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// A record in the store (an object, a row) that anyone may remove:
    /// force-unlock takes it from its holder, whose next write then fails.
    Record,
    /// The OS's lock on a file, which ends with the process holding it:
    /// nobody can take it from a live holder, and a dead holder's is
    /// taken over by the next run.
    Process,
}

/// What a state write does with the journal beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalAfter {
    /// Dropped: the new state holds everything it did (the end of a run).
    Dropped,
    /// Kept: its lines extend the old serial and are skipped from now on,
    /// while the lines written for the new serial just before (the creates
    /// still in flight) become live with the write — one step, so a crash
    /// on either side of it loses no intent (a checkpoint mid-apply).
    Kept,
}

pub trait Backend: Send + Sync {
    /// Where the state is, for messages: a path, `s3://bucket/key`, …
    fn location(&self) -> String;

    /// What this backend's lock is.
    fn lock_kind(&self) -> LockKind {
        LockKind::Record
    }

    /// Takes the lock, recording `info` for others to read, or returns
    /// [`StateError::Locked`] naming the holder. Two callers can never both
    /// succeed.
    fn lock(&self, info: &LockInfo) -> Result<Acquired, StateError>;

    /// Whether the lock `id` is still the one held.
    fn check_lock(&self, id: &str) -> Result<(), StateError>;

    /// Releases the lock `id`, if it is still held (never another's). An
    /// error says the lock may still be held: the user is told, as
    /// Terraform tells them, to force-unlock it.
    fn unlock(&self, id: &str) -> Result<(), StateError>;

    /// Releases whatever lock has this `id`, for a run that died holding it.
    fn force_unlock(&self, id: &str) -> Result<(), StateError>;

    fn read(&self) -> Result<Stored, StateError>;

    /// [`Backend::read`], for a caller that already holds the text of the
    /// file `seen` stamped before the lock was taken ([`crate::Early`]):
    /// a backend that can tell that nothing has written it since says so
    /// rather than reading it again. Only a local file can.
    fn read_unless_seen(&self, seen: &FileStamp) -> Result<Reread, StateError> {
        let _ = seen;
        self.read().map(Reread::Read)
    }

    /// Replaces the state with `text`, whole or not at all, provided the
    /// stored version is still `expected` (`None`: no state yet) — else
    /// [`StateError::Conflict`] and nothing written. Keeps the previous
    /// version as a backup; the journal is dropped or kept as `journal`
    /// says.
    fn write(
        &self,
        text: &str,
        expected: Option<&Version>,
        journal: JournalAfter,
    ) -> Result<Version, StateError>;

    /// [`Backend::write`], once `ready` says the text may be stored (the
    /// check that it reads back, running meanwhile on another thread).
    /// A backend may first do what leaves the stored state as it is (the
    /// local one writes its whole copy beside the state, waiting on the
    /// disk while the check runs); an `Err` from `ready` ends the write
    /// with that error and the state untouched.
    fn write_when(
        &self,
        text: &str,
        expected: Option<&Version>,
        journal: JournalAfter,
        ready: Ready<'_>,
    ) -> Result<Version, StateError> {
        ready()?;
        self.write(text, expected, journal)
    }

    /// Appends journal lines; they are durable when it returns.
    fn append(&self, lines: &str) -> Result<(), StateError>;

    /// Appends journal lines that need not be durable yet (they record
    /// objects a crash loses nothing by forgetting), in order with the
    /// others, which a later `append` makes durable too. A backend without
    /// a cheaper way appends them as any others.
    fn append_unsynced(&self, lines: &str) -> Result<(), StateError> {
        self.append(lines)
    }

    /// The workspaces this backend's place holds a state for, "default"
    /// always among them, as Terraform lists them (`workspace list`).
    fn workspaces(&self) -> Result<Vec<String>, StateError>;

    /// Removes this workspace's state, with its backup, journal and
    /// history (`workspace delete`); the caller holds the lock.
    fn delete_workspace(&self) -> Result<(), StateError>;

    /// The history kept beside the state (what drift runs observed, one
    /// JSON line each; see [`crate::history`]): empty when there is none.
    fn read_history(&self) -> Result<String, StateError>;

    /// Replaces the history with `text`, whole or not at all, so a run
    /// killed while writing it leaves the history it found.
    fn write_history(&self, text: &str) -> Result<(), StateError>;
}

/// What a [`Backend::write_when`] waits for before it changes the state.
pub type Ready<'a> = &'a mut dyn FnMut() -> Result<(), StateError>;

/// Runs `f` on a thread of its own. Backends with a client that drives its
/// own async runtime call through this, because the engine calls them
/// from inside its runtime and runtimes do not nest.
pub fn on_own_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(v) => v,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

pub(crate) fn who() -> String {
    let user = ["USER", "LOGNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
        .or_else(login_name)
        .unwrap_or_else(|| "unknown".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    format!("{user}@{host}")
}

pub(crate) fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The login name of this process's user from the password file, for a
/// lock's "who" where the environment names nobody (CI containers, cron).
fn login_name() -> Option<String> {
    #[cfg(unix)]
    {
        // SAFETY: getuid cannot fail and reads no memory of ours.
        let uid = unsafe { libc::getuid() }.to_string();
        let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
        passwd.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.get(2) == Some(&uid.as_str())).then(|| fields[0].to_string())
        })
    }
    #[cfg(not(unix))]
    None
}
