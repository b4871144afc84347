//! The stand-ins' clock: the system's, or a moment the control endpoint
//! set (`POST /clock`), so a test can have a Capacity Block begin or near
//! its end without waiting a day. Cloned handles share it.

use std::sync::{Arc, Mutex};
use time::OffsetDateTime;

#[derive(Debug, Clone, Default)]
pub struct Clock(Arc<Mutex<Option<OffsetDateTime>>>);

impl Clock {
    pub fn now(&self) -> OffsetDateTime {
        self.0
            .lock()
            .ok()
            .and_then(|t| *t)
            .unwrap_or_else(OffsetDateTime::now_utc)
    }

    /// Sets the time; `None` goes back to the system's.
    pub fn set(&self, at: Option<OffsetDateTime>) {
        if let Ok(mut t) = self.0.lock() {
            *t = at;
        }
    }
}
