//! The SHA-256 digests of installed packages' files, kept in the user's
//! cache (`$XDG_CACHE_HOME/strata/digests.json`, else
//! `~/.cache/strata/digests.json`; without a home, beside the working
//! directory's init data) by each file's identity: its size, modification
//! and change times, inode and device. One file for every working
//! directory: a package linked from a filesystem mirror or the plugin
//! cache is the same file in all of them, so a new checkout's `init`
//! does not read it again either. Every command that starts a provider checks its package
//! against the lock file's `h1:` checksums, as Terraform does, and the AWS
//! provider's 700 MB took half a second to hash each time; a file whose
//! identity is unchanged since it was hashed has the same bytes, so its
//! digest is read from here instead.
//!
//! Why the identity is enough: any write to a file moves its change time,
//! which no tool can set back (it follows the clock), and a file replaced
//! has another inode. A file changed within the clock's tick after it was
//! hashed could keep all of them (the times are coarse), so a digest is
//! kept only for a file unchanged for a while when it was hashed, as git
//! treats "racily clean" index entries.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Where the digests are kept: the user's cache, else the working
/// directory's data directory `data`.
pub fn location(data: &Path) -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let cache = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| Path::new(&home).join(".cache")));
    match cache {
        Some(cache) => cache.join("strata").join("digests.json"),
        None => data.join("strata-digests.json"),
    }
}

/// How long a file must have been left alone before its digest is kept.
const SETTLED: Duration = Duration::from_secs(2);

/// The kept digests, read at the start of a check and written back when
/// it hashed something new.
#[derive(Default)]
pub struct Digests {
    at: Option<PathBuf>,
    kept: BTreeMap<String, Kept>,
    grown: bool,
}

#[derive(serde::Serialize, serde::Deserialize, Clone, PartialEq, Eq)]
struct Kept {
    identity: String,
    sha256: String,
}

impl Digests {
    /// The digests kept at `file`; none when it is missing or unreadable
    /// (then every file is hashed, as without it).
    pub fn at(file: &Path) -> Digests {
        let kept = std::fs::read(file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        Digests {
            at: Some(file.to_path_buf()),
            kept,
            grown: false,
        }
    }

    /// No digests kept: every file hashed.
    pub fn none() -> Digests {
        Digests::default()
    }

    /// The hex SHA-256 of the file at `path`: kept, or read and kept.
    pub fn of(&mut self, path: &Path) -> std::io::Result<String> {
        self.of_at(path, SystemTime::now())
    }

    fn of_at(&mut self, path: &Path, now: SystemTime) -> std::io::Result<String> {
        let meta = std::fs::metadata(path)?;
        let identity = identity(&meta);
        let key = path
            .canonicalize()
            .unwrap_or_else(|_| path.to_path_buf())
            .to_string_lossy()
            .into_owned();
        if let (Some((id, _)), Some(kept)) = (&identity, self.kept.get(&key)) {
            if &kept.identity == id {
                return Ok(kept.sha256.clone());
            }
        }
        let sha256 = hashed(path)?;
        let settled = |(_, changed): &(String, SystemTime)| {
            now.duration_since(*changed).is_ok_and(|age| age >= SETTLED)
        };
        if let (Some((identity, _)), true) = (identity.filter(settled), self.at.is_some()) {
            let kept = Kept {
                identity,
                sha256: sha256.clone(),
            };
            if self.kept.insert(key, kept.clone()) != Some(kept) {
                self.grown = true;
            }
        }
        Ok(sha256)
    }

    /// Writes the digests back when a check hashed something new: the
    /// kept entries of files that no longer exist dropped. Not written is
    /// only slower next time, so a failure is not an error.
    pub fn keep(mut self) {
        let Some(at) = self.at.take().filter(|_| self.grown) else {
            return;
        };
        self.kept.retain(|path, _| Path::new(path).exists());
        let Ok(text) = serde_json::to_vec_pretty(&self.kept) else {
            return;
        };
        if let Some(dir) = at.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = at.with_extension(format!("tmp-{}", std::process::id()));
        let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &at));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// The file's bytes read through SHA-256, never held whole: a provider
/// binary is hundreds of megabytes.
fn hashed(path: &Path) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let mut file = std::fs::File::open(path)?;
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hex(&hasher.finalize()))
}

/// What identifies the file's bytes, and when it last changed (its
/// modification or, later, its change time: a modification time set back
/// by hand still moves the change time).
/// Bytes as lowercase hex, as checksums are written.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> Option<(String, SystemTime)> {
    use std::os::unix::fs::MetadataExt;
    let ctime = u64::try_from(meta.ctime()).ok()?;
    let changed = SystemTime::UNIX_EPOCH + Duration::new(ctime, 0);
    let changed = meta.modified().ok()?.max(changed);
    let identity = format!(
        "{} {}.{} {}.{} {} {}",
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.ino(),
        meta.dev()
    );
    Some((identity, changed))
}

/// Elsewhere no change time is read: every file hashed.
#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> Option<(String, SystemTime)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("strata-digests-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    /// A kept digest is used while its file is untouched, and a file
    /// rewritten in place with as many bytes is hashed again.
    #[test]
    fn a_file_changed_in_place_is_hashed_again() {
        let dir = scratch("changed");
        let (file, memo) = (dir.join("bin"), dir.join("digests.json"));
        std::fs::write(&file, "first").expect("write");
        let later = SystemTime::now() + Duration::from_secs(60);
        let mut digests = Digests::at(&memo);
        let first = digests.of_at(&file, later).expect("hash");
        digests.keep();
        assert!(memo.exists(), "a settled file's digest is kept");
        // Kept: a different answer here would mean the bytes were read.
        let text = std::fs::read_to_string(&memo).expect("memo");
        std::fs::write(&memo, text.replace(&first, &"0".repeat(64))).expect("write");
        let mut digests = Digests::at(&memo);
        assert_eq!(digests.of_at(&file, later).expect("hash"), "0".repeat(64));
        // The change time's tick is coarse: let it move before the write.
        std::thread::sleep(Duration::from_millis(50));
        std::fs::write(&file, "other").expect("write");
        let again = digests.of_at(&file, later).expect("hash");
        assert_eq!(again, hashed(&file).expect("hash"));
        assert_ne!(again, first);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A file hashed right after it was written is not kept: a change
    /// within the same tick of its times would go unseen.
    #[test]
    fn a_file_just_written_is_not_kept() {
        let dir = scratch("fresh");
        let (file, memo) = (dir.join("bin"), dir.join("digests.json"));
        std::fs::write(&file, "fresh").expect("write");
        let mut digests = Digests::at(&memo);
        digests.of(&file).expect("hash");
        digests.keep();
        assert!(!memo.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
