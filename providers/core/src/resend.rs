//! Whether a call was sent again. A create whose request went out a second
//! time may have been carried out twice — the cloud acted on the first
//! attempt and its answer was lost — so only then is it worth listing what
//! carries the create's tags to find the duplicate. Each client's retry
//! loop calls [`note`] when it resends (the SDK's attempt count, the REST
//! client's loop); the apply runs each create inside [`watch`] and learns
//! from it whether a resend happened.

use std::cell::Cell;
use std::future::Future;

tokio::task_local! {
    static RESENT: Cell<bool>;
}

/// Records that a request is being sent again. Outside [`watch`] (a read,
/// a test calling a driver directly) it records nothing.
pub fn note() {
    let _ = RESENT.try_with(|r| r.set(true));
}

/// Runs `call`, and says whether any request made during it was resent.
pub async fn watch<F: Future>(call: F) -> (F::Output, bool) {
    RESENT
        .scope(Cell::new(false), async {
            let out = call.await;
            (out, RESENT.with(Cell::get))
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    #[test]
    fn a_resend_inside_the_call_is_seen_and_one_outside_is_not() {
        note(); // outside any watch: nothing to record, no panic
        let ((), resent) = block_on(watch(async {}));
        assert!(!resent);
        let ((), resent) = block_on(watch(async {
            tokio::task::yield_now().await;
            note();
        }));
        assert!(resent);
        // Each watch starts afresh.
        let ((), resent) = block_on(watch(async {}));
        assert!(!resent);
    }
}
