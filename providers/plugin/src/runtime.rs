//! The runtime each provider driver runs its process, channel and calls
//! on: the engine calls some driver methods from plain threads and others
//! from its own runtime, and a call from either is handed to this one.

use std::future::Future;

/// The driver's runtime; shut down without waiting, since the engine may
/// drop the driver on one of its own runtime's threads.
pub(crate) struct Runtime(Option<tokio::runtime::Runtime>);

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

impl Runtime {
    pub(crate) fn new() -> std::io::Result<Runtime> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("plugin")
            .on_thread_start(crate::launch::survive_closed_sockets)
            .enable_all()
            .build()?;
        Ok(Runtime(Some(rt)))
    }

    fn handle(&self) -> Option<&tokio::runtime::Handle> {
        self.0.as_ref().map(|rt| rt.handle())
    }

    /// Runs `f` on this runtime and waits for it, from any thread.
    pub(crate) fn block<T: Send + 'static>(
        &self,
        f: impl Future<Output = T> + Send + 'static,
    ) -> Option<T> {
        let (send, receive) = std::sync::mpsc::channel();
        self.handle()?.spawn(async move {
            let _ = send.send(f.await);
        });
        receive.recv().ok()
    }

    /// Starts `f` on this runtime, not waiting for it.
    pub(crate) fn spawn<T: Send + 'static>(
        &self,
        f: impl Future<Output = T> + Send + 'static,
    ) -> Option<tokio::task::JoinHandle<T>> {
        Some(self.handle()?.spawn(f))
    }

    /// Runs `f` on this runtime, awaited from another.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        f: impl Future<Output = T> + Send + 'static,
    ) -> Option<T> {
        self.handle()?.spawn(f).await.ok()
    }
}
