//! The `strata` binary: the command line with every driver this build has.
//! The cloud drivers are added here, not in the library, so the engine's
//! own tests never link the cloud SDKs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::process::ExitCode;
use std::sync::Arc;

#[global_allocator]
static ALLOCATOR: Split = Split;

/// Small blocks from mimalloc, large ones from the system's malloc. A plan
/// allocates and frees millions of small values (strings, maps, the
/// state's objects), where glibc's free lists spent a fifth of a
/// 500-resource apply; mimalloc serves them faster (with `exit_now`, a
/// 10 000-resource no-change plan 496 → 414 ms, bench/engine.sh's tree).
/// But mimalloc keeps freed memory a second before giving it back, and the large
/// buffers a plan grows and drops (the state file's text, tables, vectors
/// of changes) would stay in its peak; glibc serves them from their own
/// mappings (`large_blocks_returned`), unmapped when freed.
struct Split;

/// Where a block counts as large: glibc's mapping threshold.
const LARGE: usize = 128 * 1024;

// SAFETY: each block is freed or grown by the allocator that made it: a
// layout's size decides, and Rust passes the size a block was made or
// last grown with.
unsafe impl GlobalAlloc for Split {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match layout.size() >= LARGE {
            true => System.alloc(layout),
            false => mimalloc::MiMalloc.alloc(layout),
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match layout.size() >= LARGE {
            true => System.alloc_zeroed(layout),
            false => mimalloc::MiMalloc.alloc_zeroed(layout),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match layout.size() >= LARGE {
            true => System.dealloc(ptr, layout),
            false => mimalloc::MiMalloc.dealloc(ptr, layout),
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (layout.size() >= LARGE, new_size >= LARGE) {
            (true, true) => System.realloc(ptr, layout, new_size),
            (false, false) => mimalloc::MiMalloc.realloc(ptr, layout, new_size),
            // Across the line: moved from one allocator to the other.
            _ => {
                let grown = Layout::from_size_align_unchecked(new_size, layout.align());
                let moved = self.alloc(grown);
                if !moved.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                moved
            }
        }
    }
}

fn main() -> ExitCode {
    // `ssh` runs strata as its askpass program for a connection's password.
    if let Some(answered) = strata::provision::answer_askpass() {
        return answered;
    }
    quiet_on_closed_stdout();
    large_blocks_returned();
    let drivers = strata::builtin::Drivers::builtin()
        .with(Arc::new(strata_aws::Aws::new()))
        .with(Arc::new(strata_gcp::Gcp::new()))
        .with(Arc::new(strata_azure::Azure::new()))
        .with(Arc::new(strata_kubernetes::Kubernetes::new()))
        .with(Arc::new(strata_kubernetes::Helm::new()));
    let code = strata::cli::main_with(drivers, std::env::args_os().collect());
    exit_now(code)
}

/// Ends the process as soon as the command is done, skipping the C
/// library's exit handlers: mimalloc's gives every freed block back to
/// the system page by page, 17–30 ms of a 10 000-resource plan, for a process
/// about to end. Nothing else waits for them: what the command wrote is
/// closed (and synced, the state), its provider processes are stopped
/// when `main_with` drops its drivers, and Rust's buffered output is
/// flushed here.
fn exit_now(code: ExitCode) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // `ExitCode` does not tell its number; it is one of these.
    let number = (0..=u8::MAX).find(|n| ExitCode::from(*n) == code);
    // SAFETY: `_exit` ends the process; no Rust code runs after it.
    unsafe { libc::_exit(number.map_or(1, i32::from)) }
}

/// `strata show | head` ends strata quietly when `head` stops reading, as
/// it ends any Unix tool: Rust ignores SIGPIPE, which would turn the next
/// print into a failure.
#[cfg(unix)]
fn quiet_on_closed_stdout() {
    // SAFETY: run first, before any thread starts; it only restores the
    // default action of one signal.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn quiet_on_closed_stdout() {}

/// glibc serves a block of 128 kB or more from its own mapping, given back
/// whole when freed. By default it raises that threshold to the largest
/// block freed so far, after which the big buffers a plan grows and drops
/// (the state file's text, tables, vectors of changes) are carved from the
/// heap and leave holes the process keeps: 7-10 MB of a 10 000-object
/// no-change plan's peak memory (bench/engine.sh's shapes).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn large_blocks_returned() {
    // SAFETY: run first, before any thread starts or allocates much; it
    // only sets an allocator parameter.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn large_blocks_returned() {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block grown past the line and shrunk back keeps its bytes, and is
    /// freed by the allocator holding it each time (a wrong one aborts).
    #[test]
    fn a_block_keeps_its_bytes_across_the_allocators() {
        let mut bytes: Vec<u8> = (0..LARGE - 1).map(|i| (i % 251) as u8).collect();
        bytes.reserve_exact(LARGE);
        assert!(bytes.capacity() >= LARGE);
        assert!(bytes.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8));
        bytes.truncate(100);
        bytes.shrink_to_fit();
        assert_eq!(bytes.capacity(), 100);
        assert!(bytes.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8));
        let zeroed = vec![0u64; LARGE];
        assert!(zeroed.iter().all(|w| *w == 0));
    }
}
