//! The lock Terraform takes on a local state: a POSIX write lock on the
//! whole state file (`fcntl`). strata takes the same lock, so that
//! Terraform and strata working in one directory exclude each other, and
//! the OS drops it when the process ends, however it ends.
//!
//! strata takes it as an open-file-description lock where the OS has them
//! (Linux): those conflict with Terraform's classic record locks, but
//! belong to the open file rather than the process, so reading the state
//! through another descriptor cannot release them (closing any descriptor
//! of a file drops a process's classic locks on it).

use std::fs::File;

/// What trying the lock found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attempt {
    Taken,
    /// Another open file holds it: another process, or another store of
    /// this one.
    Held,
}

#[cfg(unix)]
pub(crate) fn try_lock(file: &File) -> std::io::Result<Attempt> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: a zeroed `flock` is a valid value of a plain C struct; the
    // fields that matter are set below.
    let mut request: libc::flock = unsafe { std::mem::zeroed() };
    request.l_type = libc::F_WRLCK as libc::c_short;
    request.l_whence = libc::SEEK_SET as libc::c_short;
    // l_start 0 and l_len 0: the whole file, however long it grows.
    #[cfg(target_os = "linux")]
    let command = libc::F_OFD_SETLK;
    #[cfg(not(target_os = "linux"))]
    let command = libc::F_SETLK;
    // SAFETY: the descriptor is open for as long as `file` lives and
    // `request` is a valid `flock` for the call to read.
    let answer = unsafe { libc::fcntl(file.as_raw_fd(), command, &request) };
    if answer == 0 {
        return Ok(Attempt::Taken);
    }
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EACCES) => Ok(Attempt::Held),
        _ => Err(error),
    }
}

/// Without POSIX record locks, the file's own lock (`flock`-style) is
/// the nearest: strata runs still exclude each other.
#[cfg(not(unix))]
pub(crate) fn try_lock(file: &File) -> std::io::Result<Attempt> {
    match file.try_lock() {
        Ok(()) => Ok(Attempt::Taken),
        Err(std::fs::TryLockError::WouldBlock) => Ok(Attempt::Held),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}
