//! The time now, as strata decides by it: the system clock, or
//! `STRATA_NOW` (RFC 3339) when set, so a test can move time on — a
//! rotation falling due, a Capacity Block nearing its end — without
//! waiting. Durations (a time to first GPU) are measured on the real clock.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

pub fn now() -> OffsetDateTime {
    std::env::var("STRATA_NOW")
        .ok()
        .and_then(|t| OffsetDateTime::parse(&t, &Rfc3339).ok())
        .unwrap_or_else(OffsetDateTime::now_utc)
}
