//! The `strata` binary: the command line with every driver this build has.
//! The cloud drivers are added here, not in the library, so the engine's
//! own tests never link the cloud SDKs.

use std::sync::Arc;

fn main() -> std::process::ExitCode {
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
    strata::cli::main_with(drivers, std::env::args_os().collect())
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
