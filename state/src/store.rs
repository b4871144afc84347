//! The state as the engine sees it, whatever backend keeps it: lock, load
//! (with the journal of a run that died replayed), persist, journal. The
//! rules that make state safe are kept here, once, for every backend:
//! - a write needs the lock and finds in place the version it read, so a
//!   lost race is an error rather than a silent overwrite;
//! - the serial only grows and a state of another lineage never replaces
//!   the stored one (`state push --force` excepted);
//! - journal lines name the serial they extend, so lines already folded
//!   into the state are never applied twice.

use crate::backend::{self, Backend, FileStamp, JournalAfter, LockInfo, Reread, Stored, Version};
use crate::error::StateError;
use crate::history::{self, History, Observation};
use crate::journal::{self, Entry, Replay};
use crate::model::{State, FORMAT_VERSION};
use crate::sealed::Sealed;
use serde::Serialize;
use std::sync::{Arc, Mutex};

/// The state as loaded: the last written state plus any journal left by a
/// run that died.
#[derive(Debug)]
pub struct Loaded {
    pub state: State,
    pub replay: Replay,
    /// Whether a state existed (a new state has a fresh lineage).
    pub existed: bool,
}

/// What the last load or write saw, which the next write must still find.
#[derive(Debug, Default)]
struct Seen {
    version: Option<Version>,
    serial: u64,
    lineage: Option<String>,
}

pub struct Store {
    backend: Arc<dyn Backend>,
    seen: Mutex<Seen>,
    sealed: Sealed,
}

/// A held lock; dropping it releases the lock.
pub struct Lock {
    backend: Arc<dyn Backend>,
    pub info: LockInfo,
    /// Set when this lock replaced one left by a process that had died.
    pub took_over: Option<LockInfo>,
    _guard: Box<dyn std::any::Any + Send>,
    released: bool,
}

impl std::fmt::Debug for Lock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lock").field("info", &self.info).finish()
    }
}

impl Lock {
    /// Releases the lock, saying whether the backend let go of it (a lock
    /// dropped unreleased is released with nobody told how it went).
    pub fn release(mut self) -> Result<(), StateError> {
        self.released = true;
        self.backend.unlock(&self.info.id)
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        if !self.released {
            let _ = self.backend.unlock(&self.info.id);
        }
    }
}

impl Store {
    pub fn new(backend: impl Backend + 'static) -> Store {
        Store {
            backend: Arc::new(backend),
            seen: Mutex::new(Seen::default()),
            sealed: Sealed::default(),
        }
    }

    /// This store with its state, journal and history encrypted at rest
    /// by `sealing` (the configuration's `encryption { state { … } }`).
    pub fn sealed(mut self, sealing: strata_encryption::Sealing) -> Store {
        self.sealed = Sealed::new(sealing);
        self
    }

    /// A local state file, the default backend.
    pub fn local(path: impl Into<std::path::PathBuf>) -> Store {
        Store::new(crate::local::LocalBackend::new(path))
    }

    /// Workspace `name` of a local backend laid out as Terraform lays one.
    pub fn local_workspace(layout: crate::local::Layout, name: &str) -> Store {
        Store::new(crate::local::LocalBackend::workspace(layout, name))
    }

    pub fn location(&self) -> String {
        self.backend.location()
    }

    /// Whether what was read needed a fallback of the configured
    /// encryption (a key being rotated out, or plain text): an apply with
    /// nothing to change still writes the state then, as OpenTofu does, so
    /// the move to the new key happens.
    pub fn sealed_by_fallback(&self) -> bool {
        self.sealed.opened_by_fallback()
    }

    /// Whether a state (and so its lineage) is stored: read when loaded,
    /// or written since.
    pub fn holds_state(&self) -> bool {
        self.seen().lineage.is_some()
    }

    /// What the backend's lock is (what `force-unlock` can do to it).
    pub fn lock_kind(&self) -> backend::LockKind {
        self.backend.lock_kind()
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        // A panic elsewhere cannot leave `Seen` half-updated (plain stores).
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the lock, or says who holds it.
    pub fn lock(&self, operation: &str) -> Result<Lock, StateError> {
        let info = LockInfo::new(operation, self.backend.location());
        let acquired = self.backend.lock(&info)?;
        Ok(Lock {
            backend: self.backend.clone(),
            info,
            took_over: acquired.took_over,
            _guard: acquired.guard,
            released: false,
        })
    }

    /// Releases a stale lock by its ID.
    pub fn force_unlock(&self, id: &str) -> Result<(), StateError> {
        self.backend.force_unlock(id)
    }

    /// The workspaces of this store's backend (`workspace list`).
    pub fn workspaces(&self) -> Result<Vec<String>, StateError> {
        self.backend.workspaces()
    }

    /// Removes this workspace's state under `lock`, which goes with it.
    pub fn delete_workspace(&self, lock: Lock) -> Result<(), StateError> {
        self.backend.check_lock(&lock.info.id)?;
        self.backend.delete_workspace()?;
        drop(lock);
        Ok(())
    }

    /// Reads the state (a new one when there is none) and replays a journal
    /// left behind by a run that did not finish.
    pub fn load(&self) -> Result<Loaded, StateError> {
        self.load_with(Early::none())
    }

    /// [`Self::load`], taking `early`'s parse when it read what this reads.
    pub fn load_with(&self, early: Early) -> Result<Loaded, StateError> {
        let (stored, parsed) = self.read_with(early.join())?;
        let location = self.backend.location();
        let existed = parsed.is_some();
        let mut state = parsed.unwrap_or_default();
        let journal = self.sealed.open_lines(&location, stored.journal)?;
        *self.seen() = Seen {
            version: stored.version,
            serial: state.serial,
            lineage: existed.then(|| state.lineage.clone()),
        };
        let replay = journal::replay(&journal, &mut state).map_err(|(line, detail)| {
            StateError::Journal {
                location,
                line,
                detail,
            }
        })?;
        Ok(Loaded {
            state,
            replay,
            existed,
        })
    }

    /// The stored state and its parse (none when there is no state): the
    /// early read's parse when the backend vouches that the file has not
    /// been written since, or when what it reads now is the same text.
    fn read_with(&self, early: Option<EarlyRead>) -> Result<(Stored, Option<State>), StateError> {
        let location = self.backend.location();
        let (mut stored, early) = match early {
            Some(EarlyRead {
                text,
                state,
                stamp: Some(stamp),
            }) => match self.backend.read_unless_seen(&stamp)? {
                Reread::Seen { version, journal } => {
                    // Opened all the same, for what opening checks (a plain
                    // state where encryption is configured is refused or
                    // migrated as when read now).
                    self.sealed.open(&location, text)?;
                    let stored = Stored {
                        state: None,
                        version,
                        journal,
                    };
                    return Ok((stored, Some(state)));
                }
                Reread::Read(stored) => (stored, Some((text, state))),
            },
            Some(e) => (self.backend.read()?, Some((e.text, e.state))),
            None => (self.backend.read()?, None),
        };
        let Some(text) = stored.state.take() else {
            return Ok((stored, None));
        };
        let text = self.sealed.open(&location, text)?;
        let state = match early {
            Some((early_text, state)) if early_text == text => state,
            _ => parse(&location, &text)?,
        };
        Ok((stored, Some(state)))
    }

    /// Writes `state` as the new state (serial + 1), keeping the previous
    /// version as the backup, and retires the journal it includes.
    pub fn persist(&self, lock: &Lock, state: &mut State) -> Result<(), StateError> {
        let mut seen = self.seen();
        let next = self.next_of(&seen, lock, state)?;
        state.serial = next;
        self.write(&mut seen, state, JournalAfter::Dropped)
    }

    /// Writes `state` mid-run, as Terraform persists its state every
    /// twenty seconds of an apply, so a tool that reads only the state
    /// (Terraform) sees what is done. `open` (the intents of creates not
    /// yet finished) is journaled for the new serial first and becomes live
    /// with the write, so the next run still looks for those objects
    /// whichever side of the write a crash falls; `journal` extends the new
    /// state from then on.
    pub fn checkpoint(
        &self,
        lock: &Lock,
        journal: &mut Journal,
        state: &mut State,
        open: &[Entry],
    ) -> Result<(), StateError> {
        let mut seen = self.seen();
        let next = self.next_of(&seen, lock, state)?;
        journal.append_at(next, open)?;
        state.serial = next;
        self.write(&mut seen, state, JournalAfter::Kept)?;
        journal.base = next;
        Ok(())
    }

    /// The serial `state` is written with: checked against the lock and
    /// against what the last load or write saw.
    fn next_of(&self, seen: &Seen, lock: &Lock, state: &State) -> Result<u64, StateError> {
        self.backend.check_lock(&lock.info.id)?;
        if let Some(stored) = &seen.lineage {
            if *stored != state.lineage {
                return Err(StateError::LineageMismatch {
                    location: self.backend.location(),
                    stored: stored.clone(),
                    given: state.lineage.clone(),
                });
            }
        }
        if state.serial < seen.serial {
            return Err(StateError::SerialBehind {
                location: self.backend.location(),
                stored: seen.serial,
                given: state.serial,
            });
        }
        next_serial(&self.backend.location(), state.serial)
    }

    fn write(
        &self,
        seen: &mut Seen,
        state: &mut State,
        journal: JournalAfter,
    ) -> Result<(), StateError> {
        state.strata_version = env!("CARGO_PKG_VERSION").to_string();
        let location = self.backend.location();
        let text = encode(&location, state)?;
        let sealed = self.sealed.seal(&location, &text)?;
        // Nothing is written that the next run would refuse to read: a
        // state command's bad edit stops here, the stored state untouched.
        // The check reads the text back on a thread of its own while the
        // backend does what leaves the state as it is (the local one's
        // copy beside it, two waits on the disk).
        let unreadable = |detail: String| StateError::Unreadable {
            location: location.clone(),
            detail,
        };
        let read_back = || parse(&location, &text).map(drop);
        let version = std::thread::scope(|s| {
            let mut check = Some(std::thread::Builder::new().spawn_scoped(s, read_back));
            let mut ready = || match check.take() {
                None => Ok(()),
                Some(Ok(thread)) => match thread.join() {
                    Ok(read) => read.map_err(|e| unreadable(e.to_string())),
                    Err(_) => Err(unreadable("reading it back failed".into())),
                },
                // No thread to be had: read back here, before writing.
                Some(Err(_)) => read_back().map_err(|e| unreadable(e.to_string())),
            };
            self.backend
                .write_when(&sealed, seen.version.as_ref(), journal, &mut ready)
        })?;
        *seen = Seen {
            version: Some(version),
            serial: state.serial,
            lineage: Some(state.lineage.clone()),
        };
        Ok(())
    }

    /// Replaces the stored state with `state` as given, for `state push`
    /// and migrations: refused if it belongs to another lineage or is older
    /// than the stored one, unless `force`. Its serial is kept when it is
    /// newer, else it becomes the stored serial + 1.
    pub fn push(&self, lock: &Lock, mut state: State, force: bool) -> Result<State, StateError> {
        self.backend.check_lock(&lock.info.id)?;
        let loaded = match self.load() {
            Ok(loaded) => loaded,
            // What force is for: a stored state that cannot be read is
            // replaced (kept as the backup), not a reason to keep it.
            Err(StateError::Corrupt { .. } | StateError::Journal { .. }) if force => {
                let stored = self.backend.read()?;
                *self.seen() = Seen {
                    version: stored.version,
                    serial: 0,
                    lineage: None,
                };
                Loaded {
                    state: State::new(),
                    replay: Replay::default(),
                    existed: false,
                }
            }
            Err(e) => return Err(e),
        };
        let mut seen = self.seen();
        if loaded.existed && !force {
            if loaded.state.lineage != state.lineage {
                return Err(StateError::LineageMismatch {
                    location: self.backend.location(),
                    stored: loaded.state.lineage,
                    given: state.lineage,
                });
            }
            if state.serial < loaded.state.serial {
                return Err(StateError::SerialBehind {
                    location: self.backend.location(),
                    stored: loaded.state.serial,
                    given: state.serial,
                });
            }
        }
        if loaded.existed && state.serial <= loaded.state.serial {
            state.serial = next_serial(&self.backend.location(), loaded.state.serial)?;
        }
        self.write(&mut seen, &mut state, JournalAfter::Dropped)?;
        Ok(state)
    }

    /// What drift runs observed, oldest first.
    pub fn history(&self) -> Result<History, StateError> {
        Ok(history::parse(&self.history_text()?))
    }

    /// The history's text, opened.
    fn history_text(&self) -> Result<String, StateError> {
        let text = self.backend.read_history()?;
        if text.is_empty() {
            return Ok(text);
        }
        self.sealed.open(&self.backend.location(), text)
    }

    /// Replaces the history with `text`, sealed.
    fn write_history_text(&self, text: &str) -> Result<(), StateError> {
        let sealed = self.sealed.seal(&self.backend.location(), text)?;
        self.backend.write_history(&sealed)
    }

    /// When the newest observation in the history was made, without
    /// reading the others (a drift run's records start there).
    pub fn last_observed(&self) -> Result<Option<String>, StateError> {
        Ok(history::last_at(&self.history_text()?))
    }

    /// Adds a drift run's observation to the history (under the lock),
    /// dropping the oldest to keep it within [`history::BOUND`].
    pub fn observe(&self, lock: &Lock, seen: &Observation) -> Result<(), StateError> {
        self.backend.check_lock(&lock.info.id)?;
        let line = serde_json::to_string(seen).map_err(|e| StateError::Unreadable {
            location: self.backend.location(),
            detail: e.to_string(),
        })?;
        let text = self.history_text()?;
        let next = history::appended(&text, &line, history::BOUND);
        self.write_history_text(&next)
    }

    /// Carries the history over to `to` (a backend migration), replacing
    /// what `to` had.
    pub fn copy_history(&self, to: &Store) -> Result<(), StateError> {
        let text = self.history_text()?;
        if text.is_empty() {
            return Ok(());
        }
        to.write_history_text(&text)
    }

    /// Opens the journal for appending (under the lock). Its lines extend
    /// the state as last loaded or written.
    pub fn journal(&self, lock: &Lock) -> Result<Journal, StateError> {
        self.backend.check_lock(&lock.info.id)?;
        Ok(Journal {
            backend: self.backend.clone(),
            sealed: self.sealed.clone(),
            base: self.seen().serial,
            seq: 0,
        })
    }
}

/// The serial after `serial`; there is none after `u64::MAX`.
fn next_serial(location: &str, serial: u64) -> Result<u64, StateError> {
    serial
        .checked_add(1)
        .ok_or_else(|| StateError::SerialExhausted {
            location: location.to_string(),
            serial,
        })
}

fn encode(location: &str, state: &State) -> Result<String, StateError> {
    let mut text = serde_json::to_string_pretty(state).map_err(|e| StateError::Corrupt {
        location: location.to_string(),
        detail: e.to_string(),
    })?;
    text.push('\n');
    Ok(text)
}

/// A state document read and parsed on a thread of its own before the
/// state's lock is taken, while the command loads its configuration: a
/// 10 000-resource state takes about as long to parse as its
/// configuration to load, and the two overlap. [`Store::load_with`] takes
/// the parse only when, under the lock, the backend vouches that the file
/// is unwritten since ([`Backend::read_unless_seen`]: the same file, size
/// and times, settled before the early read) or the text it reads then is
/// the same, byte for byte, so a run works on what the lock guards
/// whatever happened between the two.
pub struct Early(Option<std::thread::JoinHandle<Option<EarlyRead>>>);

/// What the early read found.
struct EarlyRead {
    text: String,
    state: State,
    /// The file as it was throughout the read; none if it changed meanwhile
    /// or the system cannot say.
    stamp: Option<FileStamp>,
}

/// A smaller document parses before a thread would have paid for itself.
const EARLY_FROM: u64 = 1 << 20;

impl Early {
    pub fn none() -> Early {
        Early(None)
    }

    /// `path` read and parsed in the background, when it is a file large
    /// enough to be worth it.
    pub fn read(path: std::path::PathBuf) -> Early {
        let large = std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() >= EARLY_FROM);
        if !large {
            return Early(None);
        }
        let spawned = std::thread::Builder::new()
            .name("state-early".into())
            .spawn(move || {
                let now = std::time::SystemTime::now();
                let stamp = std::fs::metadata(&path)
                    .ok()
                    .and_then(|m| FileStamp::new(&m, now));
                let text = std::fs::read_to_string(&path).ok()?;
                let unchanged =
                    |s: &FileStamp| std::fs::metadata(&path).is_ok_and(|m| s.same_as(&m));
                let stamp = stamp.filter(unchanged);
                let state = parse("", &text).ok()?;
                Some(EarlyRead { text, state, stamp })
            });
        Early(spawned.ok())
    }

    /// What the early read found, once it is done.
    fn join(self) -> Option<EarlyRead> {
        self.0?.join().ok()?
    }
}

/// Parses a state document, naming a newer format as such rather than as
/// a field this build does not know.
pub fn parse(location: &str, text: &str) -> Result<State, StateError> {
    let corrupt = |e: serde_json::Error| StateError::Corrupt {
        location: location.to_string(),
        detail: e.to_string(),
    };
    #[derive(serde::Deserialize)]
    struct Head {
        version: Option<u64>,
    }
    let too_new = |found: u64| StateError::TooNew {
        location: location.to_string(),
        found,
        supported: FORMAT_VERSION,
    };
    // One pass over the text when it reads (a large one's resources split
    // over the cores); its head is looked at alone only to say why it did
    // not (a newer format, or no format at all).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parsed = match crate::split::parse(text, threads) {
        Some(state) => Ok(state),
        None => serde_json::from_str(text),
    };
    let mut state: State = match parsed {
        Ok(s) => s,
        Err(e) => {
            let head: Head = serde_json::from_str(text).map_err(corrupt)?;
            return Err(match head.version {
                None => StateError::Corrupt {
                    location: location.to_string(),
                    detail: "no \"version\" field".into(),
                },
                Some(v) if v > FORMAT_VERSION => too_new(v),
                Some(_) => corrupt(e),
            });
        }
    };
    if state.version > FORMAT_VERSION {
        return Err(too_new(state.version));
    }
    let twice = state.join_resources();
    if !twice.is_empty() {
        return Err(StateError::Corrupt {
            location: location.to_string(),
            detail: format!(
                "{} recorded more than once, so which record is the real object cannot be told",
                twice.join(", ")
            ),
        });
    }
    // serde grows each list by doubling, not knowing its length: a
    // resource's one instance sits in room for four. The slack, a quarter
    // of a 10 000-resource state's records, is given back.
    for r in &mut state.resources {
        r.instances.shrink_to_fit();
    }
    state.resources.shrink_to_fit();
    Ok(state)
}

/// A journal line written from a borrowed entry.
#[derive(Serialize)]
struct RecordRef<'e> {
    seq: u64,
    base: u64,
    #[serde(flatten)]
    entry: &'e Entry,
}

/// An open journal. Each `append` is durable when it returns.
pub struct Journal {
    backend: Arc<dyn Backend>,
    sealed: Sealed,
    /// The serial of the state these lines extend.
    base: u64,
    seq: u64,
}

impl Journal {
    pub fn append(&mut self, entry: Entry) -> Result<(), StateError> {
        self.append_all(std::slice::from_ref(&entry))
    }

    /// Appends entries in one write (a group commit): all of them are
    /// durable when it returns, at the cost of one flush rather than one
    /// each.
    pub fn append_all(&mut self, entries: &[Entry]) -> Result<(), StateError> {
        self.append_at(self.base, entries)
    }

    /// Appends entries extending the state of serial `base`, durably.
    fn append_at(&mut self, base: u64, entries: &[Entry]) -> Result<(), StateError> {
        let lines = self.lines(base, entries)?;
        if lines.is_empty() {
            return Ok(());
        }
        self.backend.append(&lines)
    }

    /// Appends entries that need not be durable when it returns: each
    /// records an object that exists in the state alone, which a crash
    /// loses nothing by forgetting. The next `append_all` makes them
    /// durable with its own.
    pub fn append_unsynced(&mut self, entries: &[Entry]) -> Result<(), StateError> {
        let lines = self.lines(self.base, entries)?;
        if lines.is_empty() {
            return Ok(());
        }
        self.backend.append_unsynced(&lines)
    }

    /// Entries extending the state of serial `base`, as journal lines
    /// (sealed when the state is).
    fn lines(&mut self, base: u64, entries: &[Entry]) -> Result<String, StateError> {
        if entries.is_empty() {
            return Ok(String::new());
        }
        let mut text = Vec::new();
        for entry in entries {
            self.seq += 1;
            let record = RecordRef {
                seq: self.seq,
                base,
                entry,
            };
            serde_json::to_writer(&mut text, &record).map_err(|e| StateError::Journal {
                location: self.backend.location(),
                line: self.seq as usize,
                detail: e.to_string(),
            })?;
            text.push(b'\n');
        }
        // serde_json writes UTF-8 only: this never fails.
        let text = String::from_utf8(text).map_err(|e| StateError::Journal {
            location: self.backend.location(),
            line: self.seq as usize,
            detail: e.to_string(),
        })?;
        self.sealed.seal_lines(&self.backend.location(), text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    /// An early read of the state file whose parse is told apart from the
    /// file's own (serial 999), and whose text too (a space more), so that
    /// only a backend vouching for the file makes the load take it: the
    /// loaded serial says which was taken.
    fn early_of(path: &std::path::Path, stamped_at: SystemTime) -> EarlyRead {
        let mut text = std::fs::read_to_string(path).expect("state");
        let mut state = parse("", &text).expect("parses");
        state.serial = 999;
        text.push(' ');
        let meta = std::fs::metadata(path).expect("meta");
        EarlyRead {
            text,
            state,
            stamp: FileStamp::new(&meta, stamped_at),
        }
    }

    fn scratch(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("strata-store-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("scratch dir");
        d.join("terraform.tfstate")
    }

    /// A state written, then locked again as a plan locks it.
    fn locked(tag: &str) -> (std::path::PathBuf, Store, Lock) {
        let path = scratch(tag);
        let store = Store::local(&path);
        let lock = store.lock("apply").expect("lock");
        let mut state = store.load().expect("loads").state;
        store.persist(&lock, &mut state).expect("persist");
        drop(lock);
        let lock = store.lock("plan").expect("lock");
        (path, store, lock)
    }

    #[test]
    fn an_early_read_of_a_file_unwritten_since_is_taken_without_reading_again() {
        let (path, store, _lock) = locked("seen");
        // Stamped two seconds after the file was written: settled.
        let later = SystemTime::now() + Duration::from_secs(2);
        let (_, state) = store
            .read_with(Some(early_of(&path, later)))
            .expect("reads");
        assert_eq!(state.map(|s| s.serial), Some(999), "the early parse");
    }

    #[test]
    fn a_file_written_after_its_early_read_is_read_again() {
        let (path, store, _lock) = locked("rewritten");
        let later = SystemTime::now() + Duration::from_secs(2);
        let early = early_of(&path, later);
        // Rewritten at the same size, its times then put back: only its
        // change time, which no one can set, tells.
        let text = std::fs::read_to_string(&path).expect("state");
        let lineage = parse("", &text).expect("parses").lineage;
        let other = match lineage.starts_with('0') {
            true => format!("1{}", &lineage[1..]),
            false => format!("0{}", &lineage[1..]),
        };
        let changed = text.replacen(&lineage, &other, 1);
        assert_eq!(changed.len(), text.len());
        let modified = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .expect("mtime");
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open");
        std::io::Write::write_all(&mut &file, changed.as_bytes()).expect("write");
        file.set_modified(modified).expect("mtime back");
        drop(file);
        let (_, state) = store.read_with(Some(early)).expect("reads");
        assert_ne!(state.map(|s| s.serial), Some(999), "the file as it is now");
    }

    #[test]
    fn a_file_written_just_before_its_early_read_is_read_again() {
        let (path, store, _lock) = locked("fresh");
        // Stamped as it was written: a later write could share its times.
        let (_, state) = store
            .read_with(Some(early_of(&path, SystemTime::now())))
            .expect("reads");
        assert_ne!(state.map(|s| s.serial), Some(999), "read again");
    }
}
