//! `stratatest_token`, the provider's ephemeral resource: a token for an
//! audience, opened, renewed and closed. Each call is written to
//! `tokens.log` in the store's directory (`open AUDIENCE`, `renew
//! AUDIENCE`, `close AUDIENCE`), so a test can hold two clients to the
//! same calls; with `STRATATEST_TOKEN_RENEW_MS` set, each open and renewal
//! asks to be renewed that long after.

use crate::object::{Problem, Step};
use crate::store::Store;
use std::io::Write;
use std::time::{Duration, SystemTime};
use strata_value::value::Value;

/// What an open gives back.
pub struct Opened {
    pub result: Value,
    pub private: Vec<u8>,
    pub renew_at: Option<SystemTime>,
}

fn audience(config: &Value) -> Option<String> {
    let attrs = config.unmarked().entries()?;
    attrs
        .get("audience")?
        .unmarked()
        .as_str()
        .map(str::to_string)
}

/// An empty audience is refused at the attribute, as providers check
/// what they can before opening.
pub fn validate(config: &Value) -> Vec<Problem> {
    match audience(config).as_deref() {
        Some("") => vec![Problem {
            summary: "Invalid audience".into(),
            detail: "A token needs an audience.".into(),
            path: vec![Step::Attr("audience")],
        }],
        _ => Vec::new(),
    }
}

fn renew_at() -> Option<SystemTime> {
    let ms: u64 = std::env::var("STRATATEST_TOKEN_RENEW_MS")
        .ok()?
        .parse()
        .ok()?;
    Some(SystemTime::now() + Duration::from_millis(ms))
}

fn log(store: &Store, line: &str) -> Result<(), String> {
    let path = store.dir().join("tokens.log");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // One write per line: a client opens tokens at once, and appends of
    // one buffer each do not interleave.
    f.write_all(format!("{line}\n").as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Opens a token; the audience `refused` is refused, as a secret store
/// refuses a name it does not hold.
pub fn open(store: &Store, config: &Value) -> Result<Opened, String> {
    let audience = audience(config).unwrap_or_default();
    if audience == "refused" {
        return Err("The token service refused the audience \"refused\".".into());
    }
    log(store, &format!("open {audience}"))?;
    Ok(Opened {
        result: Value::Object(
            [
                ("audience".to_string(), Value::string(audience.as_str())),
                (
                    "value".to_string(),
                    Value::String(format!("tok-{audience}")),
                ),
            ]
            .into_iter()
            .collect(),
        ),
        private: audience.into_bytes(),
        renew_at: renew_at(),
    })
}

pub fn renew(store: &Store, private: &[u8]) -> Result<Option<SystemTime>, String> {
    log(
        store,
        &format!("renew {}", String::from_utf8_lossy(private)),
    )?;
    Ok(renew_at())
}

pub fn close(store: &Store, private: &[u8]) -> Result<(), String> {
    log(
        store,
        &format!("close {}", String::from_utf8_lossy(private)),
    )
}
