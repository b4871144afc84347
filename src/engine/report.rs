//! `strata report`: the history drift runs kept beside the state, summed
//! over a period (see [`crate::report`]).

use crate::diag::{Diag, Diags};
use crate::report::{Period, Report};
use crate::statecmd::state_err;
use strata_state::Store;
use time::format_description::well_known::Rfc3339;
use time::{Date, Duration, OffsetDateTime, Time};

/// The report over `[since, until)`: until now and the thirty days before
/// unless given (RFC 3339, or a date meaning its midnight UTC).
pub fn report(store: &Store, since: Option<&str>, until: Option<&str>) -> Result<Report, Diags> {
    let to = match until {
        Some(text) => moment("--until", text)?,
        None => strata_provider::clock::now(),
    };
    let from = match since {
        Some(text) => moment("--since", text)?,
        None => to - Duration::days(30),
    };
    if from >= to {
        let at = |t: OffsetDateTime| t.format(&Rfc3339).unwrap_or_default();
        return Err(Diags::from(Diag::new(
            "strata::report::period",
            "Empty report period",
            format!(
                "The period must start before it ends: --since {} is not before --until {}.",
                at(from),
                at(to)
            ),
        )));
    }
    let history = store.history().map_err(state_err)?;
    let period = Period { from, to };
    Ok(crate::report::report(
        &history.observations,
        history.unreadable,
        period,
    ))
}

fn moment(flag: &str, text: &str) -> Result<OffsetDateTime, Diags> {
    let date = time::macros::format_description!("[year]-[month]-[day]");
    OffsetDateTime::parse(text, &Rfc3339)
        .ok()
        .or_else(|| {
            let day = Date::parse(text, &date).ok()?;
            Some(day.with_time(Time::MIDNIGHT).assume_utc())
        })
        .ok_or_else(|| {
            Diags::from(Diag::new(
                "strata::report::period",
                format!("Invalid {flag} value"),
                format!("{text:?} is neither a date (2026-11-01) nor an RFC 3339 time (2026-11-01T00:00:00Z)."),
            ))
        })
}
