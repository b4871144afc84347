//! The `strata` binary: the command line with every driver this build has.
//! The cloud drivers are added here, not in the library, so the engine's
//! own tests never link the cloud SDKs.

use std::sync::Arc;

fn main() -> std::process::ExitCode {
    let drivers = strata::builtin::Drivers::builtin()
        .with(Arc::new(strata_aws::Aws::new()))
        .with(Arc::new(strata_gcp::Gcp::new()))
        .with(Arc::new(strata_azure::Azure::new()))
        .with(Arc::new(strata_kubernetes::Kubernetes::new()))
        .with(Arc::new(strata_kubernetes::Helm::new()));
    strata::cli::main_with(drivers, std::env::args_os().collect())
}
