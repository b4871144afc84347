//! What the store writes and reads, through the configured encryption
//! when there is one: the state whole, the journal line by line (each
//! line must be durable on its own), the history whole. Without
//! encryption the text passes as it is, except that an encrypted state is
//! named as such rather than as damage.

use crate::error::StateError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use strata_encryption::Sealing;

/// The configured encryption of one store's documents, if any, and
/// whether the last document it opened needed a fallback method.
#[derive(Debug, Clone, Default)]
pub struct Sealed {
    sealing: Option<Arc<Sealing>>,
    by_fallback: Arc<AtomicBool>,
}

impl Sealed {
    pub fn new(sealing: Sealing) -> Sealed {
        Sealed {
            sealing: Some(Arc::new(sealing)),
            by_fallback: Arc::default(),
        }
    }

    /// Whether a document this store opened was sealed otherwise than the
    /// first method seals (an old key, or plain text): writing the state
    /// again moves it to the configured encryption.
    pub fn opened_by_fallback(&self) -> bool {
        self.by_fallback.load(Ordering::Relaxed)
    }

    /// `text` as it is to be stored.
    pub fn seal(&self, location: &str, text: &str) -> Result<String, StateError> {
        match &self.sealing {
            Some(s) => s.seal(text).map_err(|e| failed(location, e)),
            None => Ok(text.to_string()),
        }
    }

    /// A stored document as text to parse.
    pub fn open(&self, location: &str, text: String) -> Result<String, StateError> {
        match &self.sealing {
            Some(s) => {
                let (text, status) = s.open(&text).map_err(|e| failed(location, e))?;
                if status == strata_encryption::Status::Migrating {
                    self.by_fallback.store(true, Ordering::Relaxed);
                }
                Ok(text)
            }
            None if strata_encryption::is_sealed(&text) => Err(StateError::Encrypted {
                location: location.to_string(),
            }),
            None => Ok(text),
        }
    }

    /// Journal lines, each sealed alone, newline-terminated.
    pub fn seal_lines(&self, location: &str, text: String) -> Result<String, StateError> {
        if self.sealing.is_none() {
            return Ok(text);
        }
        let mut out = String::with_capacity(text.len() * 2);
        for line in text.lines() {
            out.push_str(&self.seal(location, line)?);
            out.push('\n');
        }
        Ok(out)
    }

    /// A journal's lines opened. A line that is not JSON (a write cut
    /// short, or damage) is left for the replay to judge.
    pub fn open_lines(&self, location: &str, text: String) -> Result<String, StateError> {
        let Some(s) = &self.sealing else {
            return Ok(text);
        };
        let mut out = String::with_capacity(text.len());
        for piece in text.split_inclusive('\n') {
            let line = piece.trim_end_matches('\n');
            let json = serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok();
            if !piece.ends_with('\n') || !json {
                out.push_str(piece);
                continue;
            }
            let (opened, _) = s.open(line).map_err(|e| failed(location, e))?;
            out.push_str(&opened);
            out.push('\n');
        }
        Ok(out)
    }
}

fn failed(location: &str, e: strata_encryption::EncryptionError) -> StateError {
    StateError::Encryption {
        location: location.to_string(),
        detail: e.to_string(),
    }
}
