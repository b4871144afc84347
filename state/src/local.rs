//! The local-file backend: `terraform.tfstate` next to the configuration,
//! kept as Terraform keeps it so that a directory is one state for both
//! tools: the same file names, the same lock (a record lock on the state
//! file, [`crate::filelock`], its holder in `.terraform.tfstate.lock.info`),
//! a backup of the previous version; and, beyond Terraform, an apply
//! journal and writes that a crash cannot leave half done.
//!
//! Writes go into the locked file in place, as Terraform's do, rather than
//! by renaming a new file over it: a Terraform run waiting for the lock
//! (`-lock-timeout`) holds the file open, and would take the lock on the
//! replaced file and write its state where nobody reads it. A write is
//! made whole by writing the new version to `<state>.next` first; the next
//! lock holder finishes a write a crash cut short ([`LocalBackend::finish_torn_write`]).

use crate::backend::{
    Acquired, Backend, FileStamp, JournalAfter, LockInfo, LockKind, Ready, Reread, Stored, Version,
};
use crate::error::StateError;
use crate::filelock::{self, Attempt};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug)]
pub struct LocalBackend {
    path: PathBuf,
    /// Where the other workspaces are; `None` for a file given by itself.
    layout: Option<Layout>,
    /// The journal, open for appending once the first line is written.
    journal: Mutex<Option<File>>,
    /// The state file, open and locked, while this backend holds the lock.
    held: Mutex<Option<Held>>,
}

/// The lock this backend holds.
#[derive(Debug)]
struct Held {
    id: String,
    /// The state file with the record lock on it; closing it releases the lock.
    file: File,
    /// Whether taking the lock made the file (empty), which goes again
    /// if nothing was written, as Terraform removes it.
    created: bool,
    /// Folders taking the lock made, deepest first: they go too if left
    /// empty (a backend only looked at leaves nothing behind).
    made: Vec<PathBuf>,
    /// Set by `workspace delete`: the workspace's folder goes too. Only
    /// then: a folder is a workspace to Terraform, which makes one empty
    /// (`workspace new`) and lists it.
    deleted: bool,
}

/// Terraform's layout of a local backend's workspaces: the default one in
/// `default`, each other one in `dir/<name>/` under the same file name.
#[derive(Debug, Clone)]
pub struct Layout {
    pub default: PathBuf,
    pub dir: PathBuf,
}

impl Layout {
    /// Where workspace `name` keeps its state.
    pub fn path(&self, name: &str) -> PathBuf {
        if name == "default" {
            return self.default.clone();
        }
        let file = self.default.file_name().unwrap_or_default();
        self.dir.join(name).join(file)
    }
}

pub(crate) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The folder a path is in (`.` for a bare file name).
fn folder(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Makes a rename or removal in `path`'s folder durable.
fn sync_folder(path: &Path) -> Result<(), StateError> {
    let dir = folder(path);
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StateError::io(dir, e))
}

/// Opens `path` for reading and writing, made (private) if absent; says
/// whether it was made.
fn open_or_create(path: &Path) -> std::io::Result<(File, bool)> {
    let open = OpenOptions::new().read(true).write(true).open(path);
    match open {
        Ok(f) => return Ok((f, false)),
        Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
        Err(_) => {}
    }
    let mut opts = OpenOptions::new();
    opts.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    match opts.open(path) {
        Ok(f) => Ok((f, true)),
        // Made by another run between the two opens: theirs, then.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map(|f| (f, false)),
        Err(e) => Err(e),
    }
}

/// Whether `bytes` are a whole JSON document, not a file cut short.
fn whole(bytes: &[u8]) -> bool {
    !bytes.is_empty() && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok()
}

/// Replaces the contents of the open `file` with `bytes`, durably.
fn overwrite(mut file: &File, bytes: &[u8]) -> std::io::Result<()> {
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Opens a new file readable and writable by its owner only.
fn create_private(path: &Path) -> std::io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.write(true).create(true).truncate(true);
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
    let mut f = create_private(&tmp).map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    f.sync_all().map_err(io)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(io)?;
    sync_folder(path)
}

/// Whether the open `file` is the one at `path` now.
fn same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        #[cfg(unix)]
        (Ok(a), Ok(b)) => {
            use std::os::unix::fs::MetadataExt;
            a.dev() == b.dev() && a.ino() == b.ino()
        }
        #[cfg(not(unix))]
        (Ok(_), Ok(_)) => true,
        _ => false,
    }
}

/// A file's identity and contents as the OS sees them without reading it:
/// a rename (every write) gives a new inode, an edit a new time.
fn version_of(meta: &std::fs::Metadata) -> Version {
    let time = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(meta);
    #[cfg(not(unix))]
    let ino = 0;
    Version(format!("{}:{ino}:{time}", meta.len()))
}

fn read_optional(path: &Path) -> Result<Option<String>, StateError> {
    match std::fs::read(path) {
        Ok(b) => StateError::text(&path.display().to_string(), b).map(Some),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StateError::io(path, e)),
    }
}

impl LocalBackend {
    pub fn new(path: impl Into<PathBuf>) -> LocalBackend {
        LocalBackend {
            path: path.into(),
            layout: None,
            journal: Mutex::new(None),
            held: Mutex::new(None),
        }
    }

    /// Workspace `name` of the backend laid out as `layout` says.
    pub fn workspace(layout: Layout, name: &str) -> LocalBackend {
        LocalBackend {
            path: layout.path(name),
            layout: Some(layout),
            journal: Mutex::new(None),
            held: Mutex::new(None),
        }
    }

    /// Where the lock's holder is written: Terraform's
    /// `.<state file>.lock.info`, beside the state, so each tool names
    /// the other when it finds the state locked.
    pub fn lock_info_path(&self) -> PathBuf {
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        folder(&self.path).join(format!(".{name}.lock.info"))
    }

    pub(crate) fn journal_path(&self) -> PathBuf {
        sibling(&self.path, ".journal")
    }

    /// `terraform.tfstate.history`: what drift runs observed.
    pub fn history_path(&self) -> PathBuf {
        sibling(&self.path, ".history")
    }

    pub fn backup_path(&self) -> PathBuf {
        sibling(&self.path, ".backup")
    }

    /// The whole new version of a write in progress.
    fn next_path(&self) -> PathBuf {
        sibling(&self.path, ".next")
    }

    fn holder(&self) -> Option<LockInfo> {
        std::fs::read_to_string(self.lock_info_path())
            .ok()
            .and_then(|t| LockInfo::decode(&t))
    }

    /// The error naming the holder. A holder writes its info just after
    /// taking the OS lock, so a missing one is given a moment to appear.
    fn held_by_other(&self) -> StateError {
        let mut holder = self.holder();
        for _ in 0..100 {
            if holder.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
            holder = self.holder();
        }
        match holder {
            Some(i) => i.held(),
            // A lock without readable info is still a lock: name the file.
            None => StateError::Locked {
                id: "unknown".into(),
                who: format!(
                    "a process with no readable lock info ({})",
                    self.lock_info_path().display()
                ),
                operation: "unknown".into(),
                created: "unknown".into(),
            },
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Option<Held>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Temp files of writes cut short by a crash (`<state>.tmp-<pid>`,
    /// `<state>.backup.tmp-<pid>`, `<state>.next.tmp-<pid>`). Only the
    /// lock holder writes, so under the lock any such file is a dead
    /// writer's; its rename never happened and the file is nobody's.
    fn remove_litter(&self) {
        let Some(name) = self.path.file_name() else {
            return;
        };
        let name = name.to_string_lossy();
        let prefixes = ["", ".backup", ".next"].map(|kind| format!("{name}{kind}.tmp-"));
        for e in std::fs::read_dir(folder(&self.path))
            .into_iter()
            .flatten()
            .flatten()
        {
            let file = e.file_name();
            let file = file.to_string_lossy();
            if prefixes.iter().any(|p| file.starts_with(p.as_str())) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    /// Under the lock: finishes a write that a crash cut short. `.next`
    /// holds the whole version being written; if the state file is not a
    /// whole document, the crash came while it was being overwritten, and
    /// `.next` is what it was becoming. If it is whole, the crash came
    /// before it was touched (the journal still holds what the write was
    /// to fold in) or after it was done: `.next` is stale either way.
    fn finish_torn_write(&self, file: &File) -> Result<(), StateError> {
        let next = self.next_path();
        let Some(text) = read_optional(&next)? else {
            return Ok(());
        };
        let current = std::fs::read(&self.path).map_err(|e| StateError::io(&self.path, e))?;
        if !whole(&current) {
            overwrite(file, text.as_bytes()).map_err(|e| StateError::io(&self.path, e))?;
        }
        std::fs::remove_file(&next).map_err(|e| StateError::io(&next, e))?;
        sync_folder(&next)
    }

    /// The stored version; an empty file (a lock's, nothing written) is
    /// none, as a missing one is.
    fn stat(&self) -> Result<Option<Version>, StateError> {
        match std::fs::metadata(&self.path) {
            Ok(m) if m.len() == 0 => Ok(None),
            Ok(m) => Ok(Some(version_of(&m))),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StateError::io(&self.path, e)),
        }
    }

    fn journal_file(&self) -> std::sync::MutexGuard<'_, Option<File>> {
        self.journal.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes `text` into the state file this backend holds locked: the
    /// whole of it to `.next` first, then (once `ready`) in place, then
    /// `.next` goes. That removal is not synced: a crash that brings
    /// `.next` back finds the state file whole, and
    /// [`Self::finish_torn_write`] removes the stale copy (a millisecond of
    /// every write, a thirtieth of an apply of 500 objects). The backup of
    /// the version it replaces is written between the two.
    fn write_in_place(&self, file: &File, text: &str, ready: Ready<'_>) -> Result<(), StateError> {
        let next = self.next_path();
        write_atomic(&next, text.as_bytes())?;
        if let Err(e) = ready().and_then(|()| self.back_up()) {
            // The state is as it was: the copy beside it is stale.
            let _ = std::fs::remove_file(&next);
            return Err(e);
        }
        overwrite(file, text.as_bytes()).map_err(|e| StateError::io(&self.path, e))?;
        std::fs::remove_file(&next).map_err(|e| StateError::io(&next, e))
    }

    /// Keeps the stored version (if any) as the backup.
    fn back_up(&self) -> Result<(), StateError> {
        match std::fs::read(&self.path) {
            Ok(previous) if previous.is_empty() => Ok(()),
            Ok(previous) => write_atomic(&self.backup_path(), &previous),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StateError::io(&self.path, e)),
        }
    }

    /// Releases `held`: its info and the empty file the lock made go
    /// first, while the OS lock still keeps others out.
    /// Lets go of `held`; the error is the lock info that could not be
    /// removed (the OS's lock goes with the file handle whatever happens).
    fn release(&self, held: Held) -> Result<(), StateError> {
        let mut removed = Ok(());
        if self.holder().is_some_and(|i| i.id == held.id) {
            let path = self.lock_info_path();
            removed = match std::fs::remove_file(&path) {
                Err(e) if e.kind() != ErrorKind::NotFound => Err(StateError::io(&path, e)),
                _ => Ok(()),
            };
        }
        let empty = held.file.metadata().is_ok_and(|m| m.len() == 0);
        if held.created && empty && same_file(&held.file, &self.path) {
            let _ = std::fs::remove_file(&self.path);
        }
        // A deleted workspace's folder goes with its lock; the default's
        // never.
        let own_folder = self.layout.as_ref().is_some_and(|l| l.default != self.path);
        if let (true, true, Some(dir)) = (held.deleted, own_folder, self.path.parent()) {
            let _ = std::fs::remove_dir(dir);
        }
        for dir in &held.made {
            let _ = std::fs::remove_dir(dir);
        }
        drop(held);
        removed
    }
}

impl Backend for LocalBackend {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn lock_kind(&self) -> LockKind {
        LockKind::Process
    }

    fn workspaces(&self) -> Result<Vec<String>, StateError> {
        let mut names = vec!["default".to_string()];
        let Some(layout) = &self.layout else {
            return Ok(names);
        };
        let entries = match std::fs::read_dir(&layout.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(names),
            Err(e) => return Err(StateError::io(&layout.dir, e)),
        };
        let mut found: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        found.sort();
        names.extend(found);
        Ok(names)
    }

    fn delete_workspace(&self) -> Result<(), StateError> {
        let paths = [
            self.path.clone(),
            self.backup_path(),
            self.journal_path(),
            self.history_path(),
        ];
        for path in paths {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != ErrorKind::NotFound => return Err(StateError::io(&path, e)),
                _ => {}
            }
        }
        if let Some(held) = self.held().as_mut() {
            held.deleted = true;
        }
        Ok(())
    }

    /// Takes Terraform's lock: a record lock on the state file itself,
    /// held for as long as the run lasts. When the process dies, however
    /// it dies, the OS lock goes with it, which is how the next run tells
    /// info left by a dead run from a held lock.
    fn lock(&self, info: &LockInfo) -> Result<Acquired, StateError> {
        let io = |e| StateError::io(&self.path, e);
        // A workspace's first use makes its folder (`<file>.d/<name>/`);
        // nothing is written without the lock, so this is the place.
        let made: Vec<PathBuf> = folder(&self.path)
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
            .map(Path::to_path_buf)
            .collect();
        std::fs::create_dir_all(folder(&self.path)).map_err(io)?;
        loop {
            let (file, created) = open_or_create(&self.path).map_err(io)?;
            if filelock::try_lock(&file).map_err(io)? == Attempt::Held {
                return Err(self.held_by_other());
            }
            // The file may have been removed (an empty one its holder
            // made, a deleted workspace) between our open and our lock:
            // then we locked a file nobody else will see.
            if !same_file(&file, &self.path) {
                continue;
            }
            // Ours. Info still there is a dead holder's: say whose.
            let took_over = self.holder();
            self.finish_torn_write(&file)?;
            self.remove_litter();
            let info_path = self.lock_info_path();
            create_private(&info_path)
                .and_then(|mut f| f.write_all(info.encode().as_bytes()))
                .map_err(|e| StateError::io(&info_path, e))?;
            *self.held() = Some(Held {
                id: info.id.clone(),
                file,
                created,
                made,
                deleted: false,
            });
            return Ok(Acquired {
                guard: Box::new(()),
                took_over,
            });
        }
    }

    fn check_lock(&self, id: &str) -> Result<(), StateError> {
        match self.held().as_ref() {
            Some(h) if h.id == id && same_file(&h.file, &self.path) => Ok(()),
            Some(h) if h.id != id => Err(StateError::LockMismatch {
                given: id.to_string(),
                held: h.id.clone(),
            }),
            _ => Err(StateError::NotLocked),
        }
    }

    fn unlock(&self, id: &str) -> Result<(), StateError> {
        let mut slot = self.held();
        match slot.take_if(|h| h.id == id) {
            Some(held) => self.release(held),
            None => Ok(()),
        }
    }

    /// Clears the info a run that died left. A live run's lock cannot be
    /// taken from it: it is the OS's, and ends with the process.
    fn force_unlock(&self, id: &str) -> Result<(), StateError> {
        let path = self.lock_info_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == ErrorKind::NotFound => return Err(StateError::NotLocked),
            Err(e) => return Err(StateError::io(&path, e)),
        };
        let holder = LockInfo::decode(&text);
        let held = holder
            .as_ref()
            .map_or_else(|| "unknown".into(), |i| i.id.clone());
        if held != id && held != "unknown" {
            return Err(StateError::LockMismatch {
                given: id.to_string(),
                held,
            });
        }
        if let Ok(file) = OpenOptions::new().read(true).write(true).open(&self.path) {
            let attempt = filelock::try_lock(&file).map_err(|e| StateError::io(&self.path, e))?;
            if attempt == Attempt::Held {
                return Err(StateError::LockAlive {
                    id: held,
                    who: holder.map_or_else(|| "unknown".into(), |i| i.who),
                });
            }
        }
        std::fs::remove_file(&path).map_err(|e| StateError::io(&path, e))
    }

    /// An empty file is no state, as Terraform reads it (taking the lock
    /// makes one). A file that is not whole while `.next` is there is a
    /// write in progress or cut short: `.next` is what it is becoming,
    /// and what the next lock makes it, so a reader without the lock
    /// sees that rather than a truncated state.
    fn read(&self) -> Result<Stored, StateError> {
        let version = self.stat()?;
        // A write in place leaves `.next` until it has finished: with none
        // after the read, no write of strata's was cut short in the file
        // (a torn file of another tool's is refused by the parse), and a
        // large state is not parsed once more only to be told so.
        let state = read_optional(&self.path)?.filter(|text| !text.is_empty());
        let state = match state {
            Some(text) if !self.next_path().exists() || whole(text.as_bytes()) => Some(text),
            torn => read_optional(&self.next_path())?.or(torn),
        };
        // Stat before reading: a write in between shows as a conflict
        // later rather than passing unseen.
        Ok(Stored {
            state,
            version,
            journal: read_optional(&self.journal_path())?.unwrap_or_default(),
        })
    }

    /// Under this backend's lock, the locked file's own metadata says
    /// whether it is the one `seen` read: taken from the open handle, which
    /// on a network file system is fresh once the lock is held. A write a
    /// crash cut short (`.next` beside the state) is read as [`Self::read`]
    /// reads it.
    fn read_unless_seen(&self, seen: &FileStamp) -> Result<Reread, StateError> {
        let unchanged = match self.held().as_ref() {
            Some(h) if same_file(&h.file, &self.path) => {
                h.file.metadata().is_ok_and(|m| seen.vouches_for(&m))
            }
            _ => false,
        };
        if !unchanged || self.next_path().exists() {
            return self.read().map(Reread::Read);
        }
        Ok(Reread::Seen {
            version: self.stat()?,
            journal: read_optional(&self.journal_path())?.unwrap_or_default(),
        })
    }

    fn write(
        &self,
        text: &str,
        expected: Option<&Version>,
        journal: JournalAfter,
    ) -> Result<Version, StateError> {
        self.write_when(text, expected, journal, &mut || Ok(()))
    }

    fn write_when(
        &self,
        text: &str,
        expected: Option<&Version>,
        journal: JournalAfter,
        ready: Ready<'_>,
    ) -> Result<Version, StateError> {
        if self.stat()?.as_ref() != expected {
            return Err(StateError::Conflict {
                location: self.location(),
            });
        }
        match self.held().as_ref() {
            Some(h) if same_file(&h.file, &self.path) => {
                self.write_in_place(&h.file, text, ready)?
            }
            // Not under this backend's lock (`-lock=false`): nobody can be
            // waiting on a file we hold, so a rename is the whole write.
            _ => {
                ready()?;
                self.back_up()?;
                write_atomic(&self.path, text.as_bytes())?;
            }
        }
        if journal == JournalAfter::Dropped {
            // The state now holds everything the journal did.
            *self.journal_file() = None;
            match std::fs::remove_file(self.journal_path()) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(StateError::io(self.journal_path(), e)),
            }
        }
        self.stat()?.ok_or_else(|| StateError::Conflict {
            location: self.location(),
        })
    }

    fn read_history(&self) -> Result<String, StateError> {
        Ok(read_optional(&self.history_path())?.unwrap_or_default())
    }

    fn write_history(&self, text: &str) -> Result<(), StateError> {
        write_atomic(&self.history_path(), text.as_bytes())
    }

    fn append(&self, lines: &str) -> Result<(), StateError> {
        self.append_lines(lines, Flush::Data)
    }

    /// Written, not synced: the lines survive the process (a kill) in the
    /// page cache, and the next synced append flushes them with its own.
    fn append_unsynced(&self, lines: &str) -> Result<(), StateError> {
        self.append_lines(lines, Flush::None)
    }
}

/// Whether an append waits for the disk.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flush {
    Data,
    None,
}

impl LocalBackend {
    fn append_lines(&self, lines: &str, flush: Flush) -> Result<(), StateError> {
        let path = self.journal_path();
        let io = |e| StateError::io(&path, e);
        let mut slot = self.journal_file();
        if slot.is_none() {
            let mut opts = OpenOptions::new();
            opts.create(true).append(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            *slot = Some(opts.open(&path).map_err(io)?);
        }
        let Some(file) = slot.as_mut() else {
            return Err(StateError::NotLocked);
        };
        file.write_all(lines.as_bytes()).map_err(io)?;
        match flush {
            Flush::Data => file.sync_data().map_err(io),
            Flush::None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("strata-local-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch folder");
        dir.join("terraform.tfstate")
    }

    /// A crash between truncating the state and writing it whole left an
    /// empty file; a reader without the lock read no state at all and
    /// lost what earlier writes held (the crash trials caught it).
    #[test]
    fn a_torn_write_is_read_as_the_version_it_was_becoming() {
        let path = scratch("torn");
        let backend = LocalBackend::new(&path);
        let new = r#"{"version":4,"serial":2}"#;
        std::fs::write(sibling(&path, ".next"), new).expect("next");
        for torn in ["", r#"{"version":4,"ser"#] {
            std::fs::write(&path, torn).expect("torn state");
            let stored = backend.read().expect("read");
            assert_eq!(stored.state.as_deref(), Some(new), "torn as {torn:?}");
        }
        // A whole file is the state; `.next` beside it is a write that
        // had not yet begun to overwrite it, whose changes the journal
        // still holds.
        let old = r#"{"version":4,"serial":1}"#;
        std::fs::write(&path, old).expect("whole state");
        assert_eq!(backend.read().expect("read").state.as_deref(), Some(old));
        let _ = std::fs::remove_dir_all(path.parent().expect("folder"));
    }
}
