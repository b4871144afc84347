//! The async runtime a command's driver and API calls run on.

/// The async runtime that driver and API calls run on, with at most four
/// worker threads: the calls wait on the network, not on the cores.
pub fn start(parallelism: usize) -> Result<tokio::runtime::Runtime, crate::diag::Diags> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(parallelism.clamp(1, 4))
        // Timers for progress and waiters; I/O for the drivers' HTTP.
        .enable_all()
        .build()
        .map_err(|e| {
            crate::diag::Diags::from(crate::diag::Diag::new(
                "strata::runtime",
                "Cannot start the async runtime",
                e.to_string(),
            ))
        })
}
