//! The local-file backend: `terraform.tfstate`-style JSON next to the
//! configuration, with a lock file, a backup of the previous version, an
//! apply journal, and writes that are never partial.

use crate::backend::{Acquired, Backend, LockInfo, Stored, Version};
use crate::error::StateError;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug)]
pub struct LocalBackend {
    path: PathBuf,
    /// Where the other workspaces are; `None` for a file given by itself.
    layout: Option<Layout>,
    /// The journal, open for appending once the first line is written.
    journal: Mutex<Option<File>>,
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

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
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
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
    Ok(())
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
        }
    }

    /// Workspace `name` of the backend laid out as `layout` says.
    pub fn workspace(layout: Layout, name: &str) -> LocalBackend {
        LocalBackend {
            path: layout.path(name),
            layout: Some(layout),
            journal: Mutex::new(None),
        }
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

    fn holder(&self) -> Option<LockInfo> {
        std::fs::read_to_string(self.lock_path())
            .ok()
            .and_then(|t| LockInfo::decode(&t))
    }

    /// The error naming the holder. A holder writes its info just after
    /// taking the OS lock, so an empty file is given a moment to fill.
    fn held(&self) -> StateError {
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
            // A lock file we cannot read is still a lock: name the file.
            None => StateError::Locked {
                id: "unknown".into(),
                who: format!("an unreadable lock file {}", self.lock_path().display()),
                operation: "unknown".into(),
                created: "unknown".into(),
            },
        }
    }

    /// Temp files of writes cut short by a crash (`<state>.tmp-<pid>`,
    /// `<state>.backup.tmp-<pid>`). Only the lock holder writes, so under
    /// the lock any such file is a dead writer's; the rename never
    /// happened and the file is nobody's.
    fn remove_litter(&self) {
        let (Some(dir), Some(name)) = (self.path.parent(), self.path.file_name()) else {
            return;
        };
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let name = name.to_string_lossy();
        let prefixes = [format!("{name}.tmp-"), format!("{name}.backup.tmp-")];
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let file = e.file_name();
            let file = file.to_string_lossy();
            if prefixes.iter().any(|p| file.starts_with(p.as_str())) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    fn stat(&self) -> Result<Option<Version>, StateError> {
        match std::fs::metadata(&self.path) {
            Ok(m) => Ok(Some(version_of(&m))),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StateError::io(&self.path, e)),
        }
    }

    fn journal_file(&self) -> std::sync::MutexGuard<'_, Option<File>> {
        self.journal.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Backend for LocalBackend {
    fn location(&self) -> String {
        self.path.display().to_string()
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
        for path in [self.path.clone(), self.backup_path(), self.journal_path()] {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != ErrorKind::NotFound => return Err(StateError::io(&path, e)),
                _ => {}
            }
        }
        Ok(())
    }

    /// The lock file is held with an OS lock for as long as the run lasts:
    /// when the process dies, however it dies, the OS lock goes with it,
    /// which is how the next run tells a lock file left by a dead run from
    /// a held one. The file names the holder.
    fn lock(&self, info: &LockInfo) -> Result<Acquired, StateError> {
        let path = self.lock_path();
        let io = |e| StateError::io(&path, e);
        // A workspace's first use makes its folder (`<file>.d/<name>/`);
        // nothing is written without the lock, so this is the place.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        loop {
            let mut opts = OpenOptions::new();
            opts.read(true).write(true).create(true).truncate(false);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            let mut file = opts.open(&path).map_err(io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => return Err(self.held()),
                Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
            }
            // The holder before us may have removed the file between our
            // open and our lock: then we locked a file nobody else will
            // see. Only the file at the path counts.
            if !same_file(&file, &path) {
                continue;
            }
            // We hold the OS lock. Whoever wrote the file is gone (their OS
            // lock went with them): take it over, saying whose it was.
            let mut previous = String::new();
            std::io::Read::read_to_string(&mut file, &mut previous).map_err(io)?;
            let took_over = LockInfo::decode(&previous);
            self.remove_litter();
            let text = info.encode();
            file.set_len(0)
                .and_then(|()| std::io::Seek::rewind(&mut file))
                .and_then(|()| file.write_all(text.as_bytes()))
                .and_then(|()| file.sync_all())
                .map_err(io)?;
            return Ok(Acquired {
                guard: Box::new(file),
                took_over,
            });
        }
    }

    fn check_lock(&self, id: &str) -> Result<(), StateError> {
        LockInfo::check(self.holder(), id)
    }

    fn unlock(&self, id: &str) {
        // Only if it is still ours (force-unlock may have handed it to
        // another run since).
        if self.holder().is_some_and(|i| i.id == id) {
            let _ = std::fs::remove_file(self.lock_path());
            // A workspace's folder with nothing left in it (deleted, or
            // never written) goes with its lock; the default's never.
            let own_folder = self.layout.as_ref().is_some_and(|l| l.default != self.path);
            if let (true, Some(dir)) = (own_folder, self.path.parent()) {
                let _ = std::fs::remove_dir(dir);
            }
        }
    }

    fn force_unlock(&self, id: &str) -> Result<(), StateError> {
        let path = self.lock_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == ErrorKind::NotFound => return Err(StateError::NotLocked),
            Err(e) => return Err(StateError::io(&path, e)),
        };
        let held = LockInfo::decode(&text).map_or_else(|| "unknown".into(), |i| i.id);
        if held != id && held != "unknown" {
            return Err(StateError::LockMismatch {
                given: id.to_string(),
                held,
            });
        }
        std::fs::remove_file(&path).map_err(|e| StateError::io(&path, e))
    }

    fn read(&self) -> Result<Stored, StateError> {
        let version = self.stat()?;
        let state = read_optional(&self.path)?;
        // Stat before reading: a write in between shows as a conflict
        // later rather than passing unseen.
        let version = if state.is_some() { version } else { None };
        Ok(Stored {
            state,
            version,
            journal: read_optional(&self.journal_path())?.unwrap_or_default(),
        })
    }

    fn write(&self, text: &str, expected: Option<&Version>) -> Result<Version, StateError> {
        if self.stat()?.as_ref() != expected {
            return Err(StateError::Conflict {
                location: self.location(),
            });
        }
        match std::fs::read(&self.path) {
            Ok(previous) => write_atomic(&self.backup_path(), &previous)?,
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(StateError::io(&self.path, e)),
        }
        write_atomic(&self.path, text.as_bytes())?;
        // The state now holds everything the journal did.
        *self.journal_file() = None;
        match std::fs::remove_file(self.journal_path()) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(StateError::io(self.journal_path(), e)),
        }
        self.stat()?.ok_or_else(|| StateError::Conflict {
            location: self.location(),
        })
    }

    fn append(&self, lines: &str) -> Result<(), StateError> {
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
        file.sync_data().map_err(io)
    }
}
