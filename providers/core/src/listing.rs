//! An account-wide listing that several resource types read from.
//!
//! Some APIs answer for a whole account at once (IAM's
//! GetAccountAuthorizationDetails has every role with its tags and inline
//! policies): a refresh of roles and one of their policies then need the
//! answer once, not once per type. A [`Listing`] keeps the answer while it
//! can stand for "now": for a few seconds, and only until the driver
//! writes anything (a create, update or delete may change what it lists).
//! Callers asking at once wait for the one call in flight.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How long a listing stands for the account as it is: long enough for
/// the types of one refresh to share it, short enough that a process
/// which lives on (a drift loop) reads again on its next round.
pub const FRESH_FOR: Duration = Duration::from_secs(10);

/// The writes a driver has made, counted so that a listing taken before
/// one is not given after it.
#[derive(Debug, Default)]
pub struct Writes(AtomicU64);

impl Writes {
    /// A create, update or delete was sent (whether or not it succeeded:
    /// a failed one may have changed something).
    pub fn note(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    fn seen(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// One listing's last answer.
struct Taken<T> {
    at: Instant,
    writes: u64,
    answer: Arc<T>,
}

/// A listing shared by the types that read from it.
pub struct Listing<T> {
    last: tokio::sync::Mutex<Option<Taken<T>>>,
}

impl<T> Default for Listing<T> {
    fn default() -> Self {
        Listing {
            last: tokio::sync::Mutex::new(None),
        }
    }
}

impl<T> Listing<T> {
    /// The listing's answer: the last one while it is fresh and nothing
    /// was written since, else `ask`'s (kept only when it succeeds).
    pub async fn get<E, F>(&self, writes: &Writes, ask: impl FnOnce() -> F) -> Result<Arc<T>, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        // Held across the call: a second reader waits for this answer
        // rather than asking the same thing beside it.
        let mut last = self.last.lock().await;
        let now = writes.seen();
        if let Some(t) = last.as_ref() {
            if t.writes == now && t.at.elapsed() < FRESH_FOR {
                return Ok(t.answer.clone());
            }
        }
        let answer = Arc::new(ask().await?);
        *last = Some(Taken {
            at: Instant::now(),
            writes: now,
            answer: answer.clone(),
        });
        Ok(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    async fn asked(l: &Listing<usize>, w: &Writes, calls: &AtomicUsize) -> usize {
        let n = l
            .get(w, || async {
                Ok::<_, ()>(calls.fetch_add(1, Ordering::SeqCst))
            })
            .await;
        *n.expect("the ask cannot fail")
    }

    #[tokio::test(start_paused = true)]
    async fn one_answer_serves_until_a_write_or_its_time() {
        let (l, w, calls) = (Listing::default(), Writes::default(), AtomicUsize::new(0));
        assert_eq!(asked(&l, &w, &calls).await, 0);
        assert_eq!(asked(&l, &w, &calls).await, 0, "shared while fresh");
        w.note();
        assert_eq!(asked(&l, &w, &calls).await, 1, "asked again after a write");
        tokio::time::advance(FRESH_FOR).await;
        assert_eq!(asked(&l, &w, &calls).await, 2, "asked again once stale");
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn readers_at_once_share_the_call_in_flight() {
        let (l, w, calls) = (Listing::default(), Writes::default(), AtomicUsize::new(0));
        let slow = || async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok::<_, ()>(calls.fetch_add(1, Ordering::SeqCst))
        };
        let (a, b) = tokio::join!(l.get(&w, slow), l.get(&w, slow));
        assert_eq!((*a.unwrap(), *b.unwrap()), (0, 0));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_failed_ask_is_not_kept() {
        let (l, w) = (Listing::<usize>::default(), Writes::default());
        let failed = l.get(&w, || async { Err::<usize, _>("throttled") }).await;
        assert_eq!(failed.err(), Some("throttled"));
        let n = l.get(&w, || async { Ok::<_, ()>(7) }).await;
        assert_eq!(n.map(|n| *n), Ok(7));
    }
}
