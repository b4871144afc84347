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
