//! Ctrl-C and SIGTERM, as Terraform takes them. While a command holds the
//! state ([`Graceful`]), the first signal asks it to stop: no operation
//! starts after it, those in flight finish, the state is written and the
//! lock released (a cancelled CI job must not leave an S3 lock behind for
//! every later one). A second signal ends the process at once. Outside
//! such a stretch a signal ends the process as it would any tool.
//!
//! The handler only counts and writes a fixed line to stderr, both
//! async-signal-safe; the stages read [`requested`] where they would start
//! something.

use std::sync::atomic::{AtomicUsize, Ordering};

static SIGNALS: AtomicUsize = AtomicUsize::new(0);
static GRACEFUL: AtomicUsize = AtomicUsize::new(0);

const FIRST: &[u8] = b"\nInterrupt received.\nPlease wait for strata to exit or data loss may occur.\nGracefully shutting down...\n\n";
const SECOND: &[u8] = b"\nTwo interrupts received. Exiting immediately. Operations that finished are in the state's journal; the next run recovers them.\n";

/// Whether a stop was asked for: nothing new should start.
pub fn requested() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}

/// Takes a stop that was asked for, so that what must still run (a test's
/// teardown after Ctrl-C) can: whether one was. A later signal asks again
/// (and one more ends the process).
pub fn take() -> bool {
    SIGNALS.swap(0, Ordering::SeqCst) > 0
}

/// The error a stage reports for what it did not start.
pub const HALTED: &str = "execution halted";

/// While one lives, a signal asks for a graceful stop.
pub struct Graceful(());

impl Graceful {
    pub fn new() -> Graceful {
        GRACEFUL.fetch_add(1, Ordering::SeqCst);
        Graceful(())
    }
}

impl Default for Graceful {
    fn default() -> Graceful {
        Graceful::new()
    }
}

impl Drop for Graceful {
    fn drop(&mut self) {
        GRACEFUL.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(unix)]
extern "C" fn on_signal(signal: libc::c_int) {
    let count = SIGNALS.fetch_add(1, Ordering::SeqCst) + 1;
    let write = |text: &[u8]| {
        // SAFETY: write(2) is async-signal-safe; the buffer is static.
        unsafe { libc::write(2, text.as_ptr().cast(), text.len()) };
    };
    if GRACEFUL.load(Ordering::SeqCst) == 0 {
        // Nothing to finish: end as the signal's default would.
        // SAFETY: signal and raise are async-signal-safe.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
        return;
    }
    if count == 1 {
        write(FIRST);
    } else {
        write(SECOND);
        // SAFETY: _exit is async-signal-safe and ends the process now.
        unsafe { libc::_exit(1) };
    }
}

/// Takes SIGINT and SIGTERM from here on (once, at the start of a command).
#[cfg(unix)]
pub fn install() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is valid; the handler is an extern "C"
        // fn that only touches atomics and async-signal-safe calls.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = libc::SA_RESTART;
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

#[cfg(not(unix))]
pub fn install() {}

/// Reads one line of the user's answer, giving up (`None`) when a stop is
/// asked for meanwhile: a blocking read would sit through Ctrl-C.
pub fn read_answer() -> Option<String> {
    let mut line = Vec::new();
    loop {
        if requested() {
            return None;
        }
        if !stdin_ready() {
            continue;
        }
        match read_byte() {
            Ok(None) => break,
            Ok(Some(b'\n')) => break,
            Ok(Some(byte)) => line.push(byte),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    Some(String::from_utf8_lossy(&line).into_owned())
}

/// One byte of stdin, unbuffered: a buffer would hold what `poll` no
/// longer sees on the descriptor.
#[cfg(unix)]
fn read_byte() -> std::io::Result<Option<u8>> {
    let mut byte = 0u8;
    // SAFETY: reads at most one byte into a byte we own.
    let n = unsafe { libc::read(0, (&mut byte as *mut u8).cast(), 1) };
    match n {
        0 => Ok(None),
        n if n < 0 => Err(std::io::Error::last_os_error()),
        _ => Ok(Some(byte)),
    }
}

#[cfg(not(unix))]
fn read_byte() -> std::io::Result<Option<u8>> {
    let mut byte = [0u8; 1];
    match std::io::Read::read(&mut std::io::stdin().lock(), &mut byte)? {
        0 => Ok(None),
        _ => Ok(Some(byte[0])),
    }
}

/// Waits up to a tenth of a second for input on stdin.
#[cfg(unix)]
fn stdin_ready() -> bool {
    let mut fd = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, for the length given.
    let n = unsafe { libc::poll(&mut fd, 1, 100) };
    // An error or a hang-up reads as input: the read then says what it is.
    n != 0
}

#[cfg(not(unix))]
fn stdin_ready() -> bool {
    true
}
