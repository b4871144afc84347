//! The `time` provider (hashicorp/time): `time_static` (a timestamp kept
//! in state), `time_offset` (a timestamp moved by an offset),
//! `time_rotating` (one that is made again once its rotation time has
//! passed) and `time_sleep` (a wait on create and destroy), with the
//! provider's RFC 3339 texts and calendar parts.

use crate::common::{
    at_least_one_of, computed_string, failed, get, invalid, number, replacing_map, string, with,
};
use crate::provider::{Planning, Resource};
use async_trait::async_trait;
use std::time::Duration;
use strata_provider::{AttributeSchema, DriverError, Problem, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;
use time::format_description::well_known::Rfc3339;
use time::{Date, OffsetDateTime};

pub(crate) fn provider() -> crate::provider::Provider {
    crate::provider::Provider::new("time", "hashicorp/time")
        .resource("time_static", TimeStatic)
        .resource("time_offset", TimeOffset)
        .resource("time_sleep", TimeSleep)
        .resource("time_rotating", TimeRotating)
}

const PARTS: [&str; 7] = ["year", "month", "day", "hour", "minute", "second", "unix"];

fn parts_schema() -> Vec<(&'static str, AttributeSchema)> {
    PARTS
        .iter()
        .map(|p| {
            (
                *p,
                AttributeSchema::computed(Type::Number, "Part of the timestamp."),
            )
        })
        .collect()
}

/// A timestamp as the provider writes it: whole seconds, `Z` for UTC.
fn rfc3339(t: OffsetDateTime) -> Value {
    let t = t.replace_nanosecond(0).unwrap_or(t);
    Value::string(t.format(&Rfc3339).unwrap_or_default())
}

fn parse(s: &str) -> Result<OffsetDateTime, String> {
    OffsetDateTime::parse(s, &Rfc3339)
        .map_err(|e| format!("{s:?} is not an RFC 3339 timestamp: {e}"))
}

/// The calendar parts of `t` and its text under `name`.
fn parts(t: OffsetDateTime, name: &'static str) -> Vec<(&'static str, Value)> {
    vec![
        ("year", Value::int(i64::from(t.year()))),
        ("month", Value::int(i64::from(u8::from(t.month())))),
        ("day", Value::int(i64::from(t.day()))),
        ("hour", Value::int(i64::from(t.hour()))),
        ("minute", Value::int(i64::from(t.minute()))),
        ("second", Value::int(i64::from(t.second()))),
        ("unix", Value::int(t.unix_timestamp())),
        (name, rfc3339(t)),
    ]
}

use strata_provider::clock::now;

/// A timestamp attribute that, when known and set, must parse.
fn check_timestamp(config: &Value, name: &str) -> Vec<Problem> {
    match string(config, name).map(|s| parse(&s)) {
        Some(Err(e)) => vec![invalid(name, e)],
        _ => Vec::new(),
    }
}

fn timestamp_of(
    v: &Value,
    name: &str,
    type_name: &str,
) -> Result<Option<OffsetDateTime>, DriverError> {
    string(v, name)
        .map(|s| parse(&s).map_err(|e| failed(type_name, "create", e)))
        .transpose()
}

pub(crate) struct TimeStatic;

#[async_trait]
impl Resource for TimeStatic {
    fn schema(&self) -> ResourceSchema {
        let mut attributes = parts_schema();
        attributes.extend([
            (
                "triggers",
                replacing_map("Values that take a new timestamp when they change."),
            ),
            (
                "rfc3339",
                AttributeSchema::optional(Type::String, "The timestamp (default: now).")
                    .and_computed()
                    .force_new(),
            ),
            ("id", computed_string("The timestamp.")),
        ]);
        ResourceSchema::of_attributes(attributes)
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        check_timestamp(config, "rfc3339")
    }

    /// A configured timestamp is known at plan, with its parts.
    fn adjust(&self, plan: Planning<'_>) -> Result<Value, DriverError> {
        let given = timestamp_of(&plan.planned, "rfc3339", "time_static")
            .ok()
            .flatten();
        match (plan.prior, given) {
            (None, Some(t)) => {
                let text = get(&plan.planned, "rfc3339")
                    .cloned()
                    .unwrap_or_else(|| rfc3339(t));
                let mut pairs = parts(t, "id");
                pairs.push(("rfc3339", text.clone()));
                pairs.push(("id", text));
                Ok(with(&plan.planned, pairs))
            }
            _ => Ok(plan.planned),
        }
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let t = timestamp_of(planned, "rfc3339", "time_static")?.unwrap_or_else(now);
        let mut pairs = parts(t, "rfc3339");
        pairs.push(("id", rfc3339(t)));
        if let Some(given) = get(planned, "rfc3339").filter(|v| !v.is_null() && v.is_known()) {
            pairs.push(("rfc3339", given.clone()));
            pairs.push(("id", given.clone()));
        }
        Ok(with(planned, pairs))
    }

    fn import(&self, id: &str) -> Option<Result<Value, DriverError>> {
        let t = match parse(id) {
            Ok(t) => t,
            Err(e) => return Some(Err(crate::common::bad_import("time_static", e))),
        };
        let mut pairs = parts(t, "rfc3339");
        pairs.push(("rfc3339", Value::string(id)));
        pairs.push(("id", Value::string(id)));
        pairs.push(("triggers", Value::Null(Type::map(Type::String))));
        Some(Ok(with(&Value::Object(Default::default()), pairs)))
    }
}

const OFFSETS: [&str; 6] = [
    "offset_years",
    "offset_months",
    "offset_days",
    "offset_hours",
    "offset_minutes",
    "offset_seconds",
];

const OUT_OF_RANGE: &str = "the offset takes the timestamp out of the range of dates";

/// `t` moved by `count` units of `unit` seconds; an error (not a panic)
/// when that leaves the range of dates.
pub(crate) fn shift(t: OffsetDateTime, count: i64, unit: i64) -> Result<OffsetDateTime, String> {
    count
        .checked_mul(unit)
        .and_then(|s| t.checked_add(time::Duration::seconds(s)))
        .ok_or_else(|| OUT_OF_RANGE.to_string())
}

/// Go's `AddDate`: the calendar fields moved, then normalised (January
/// 31st plus a month is March 2nd or 3rd).
fn add_date(
    t: OffsetDateTime,
    years: i64,
    months: i64,
    days: i64,
) -> Result<OffsetDateTime, String> {
    let month0 = (i64::from(u8::from(t.month())) - 1).checked_add(months);
    let year = month0.and_then(|m| {
        i64::from(t.year())
            .checked_add(years)?
            .checked_add(m.div_euclid(12))
    });
    let (Some(month0), Some(year)) = (month0, year) else {
        return Err(OUT_OF_RANGE.to_string());
    };
    let month =
        time::Month::try_from((month0.rem_euclid(12) + 1) as u8).map_err(|e| e.to_string())?;
    let first = i32::try_from(year)
        .ok()
        .and_then(|y| Date::from_calendar_date(y, month, 1).ok())
        .ok_or_else(|| OUT_OF_RANGE.to_string())?;
    let start = t.replace_date(first);
    shift(start, (i64::from(t.day()) - 1).saturating_add(days), 86_400)
}

/// `base` moved by the offsets of `v`, in the provider's order.
fn offset(base: OffsetDateTime, v: &Value) -> Result<OffsetDateTime, String> {
    let n = |name: &str| number(v, name).unwrap_or(0);
    let t = add_date(base, 0, 0, n("offset_days"))?;
    let t = shift(t, n("offset_hours"), 3_600)?;
    let t = shift(t, n("offset_minutes"), 60)?;
    let t = add_date(t, 0, n("offset_months"), 0)?;
    let t = shift(t, n("offset_seconds"), 1)?;
    add_date(t, n("offset_years"), 0, 0)
}

fn offset_object(
    planned: &Value,
    base: OffsetDateTime,
    operation: &str,
) -> Result<Value, DriverError> {
    let at = offset(base, planned).map_err(|e| failed("time_offset", operation, e))?;
    let mut pairs = parts(at, "rfc3339");
    pairs.push(("base_rfc3339", rfc3339(base)));
    pairs.push(("id", rfc3339(base)));
    Ok(with(planned, pairs))
}

pub(crate) struct TimeOffset;

#[async_trait]
impl Resource for TimeOffset {
    fn schema(&self) -> ResourceSchema {
        let mut attributes = parts_schema();
        attributes.extend(OFFSETS.iter().map(|o| {
            (
                *o,
                AttributeSchema::optional(Type::Number, "An offset to add."),
            )
        }));
        attributes.extend([
            (
                "triggers",
                replacing_map("Values that take a new base timestamp when they change."),
            ),
            (
                "base_rfc3339",
                AttributeSchema::optional(Type::String, "The base timestamp (default: now).")
                    .and_computed(),
            ),
            (
                "rfc3339",
                computed_string("The base timestamp with the offsets added."),
            ),
            ("id", computed_string("The base timestamp.")),
        ]);
        ResourceSchema::of_attributes(attributes)
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        let mut out = check_timestamp(config, "base_rfc3339");
        out.extend(at_least_one_of(config, &OFFSETS));
        out
    }

    /// Changed offsets move the stored base at plan time; on create the
    /// values wait for apply (the base may be now).
    fn adjust(&self, plan: Planning<'_>) -> Result<Value, DriverError> {
        let Some(prior) = plan.prior else {
            return Ok(plan.planned);
        };
        let same = OFFSETS.iter().all(|o| {
            let a = get(prior, o).cloned().unwrap_or_else(Value::null);
            get(&plan.planned, o).is_some_and(|b| b.raw_equal(&a))
        });
        if same
            || !OFFSETS
                .iter()
                .all(|o| get(&plan.planned, o).is_none_or(Value::is_known))
        {
            return Ok(plan.planned);
        }
        let base = timestamp_of(&plan.planned, "base_rfc3339", "time_offset")?.or(timestamp_of(
            prior,
            "base_rfc3339",
            "time_offset",
        )?);
        Ok(match base {
            Some(b) => offset_object(&plan.planned, b, "plan")?,
            None => plan.planned,
        })
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let base = timestamp_of(planned, "base_rfc3339", "time_offset")?.unwrap_or_else(now);
        offset_object(planned, base, "create")
    }

    async fn update(&self, _prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        self.create(planned).await
    }
}

const ROTATIONS: [&str; 6] = [
    "rotation_days",
    "rotation_hours",
    "rotation_minutes",
    "rotation_months",
    "rotation_rfc3339",
    "rotation_years",
];

/// When `base` rotates: each rotation the configuration sets, in the
/// provider's order, the last one set deciding.
fn rotation(base: OffsetDateTime, v: &Value) -> Result<OffsetDateTime, String> {
    let n = |name: &str| number(v, name).filter(|n| *n != 0);
    let mut at = base;
    if let Some(d) = n("rotation_days") {
        at = add_date(base, 0, 0, d)?;
    }
    if let Some(h) = n("rotation_hours") {
        at = shift(base, h, 3_600)?;
    }
    if let Some(m) = n("rotation_minutes") {
        at = shift(base, m, 60)?;
    }
    if let Some(m) = n("rotation_months") {
        at = add_date(base, 0, m, 0)?;
    }
    if let Some(t) = string(v, "rotation_rfc3339").filter(|t| !t.is_empty()) {
        at = parse(&t)?;
    }
    if let Some(y) = n("rotation_years") {
        at = add_date(base, y, 0, 0)?;
    }
    Ok(at)
}

fn rotating_object(planned: &Value, base: OffsetDateTime) -> Result<Value, String> {
    let at = rotation(base, planned)?;
    let mut pairs = parts(at, "rotation_rfc3339");
    pairs.push(("rfc3339", rfc3339(base)));
    pairs.push(("id", rfc3339(base)));
    Ok(with(planned, pairs))
}

pub(crate) struct TimeRotating;

#[async_trait]
impl Resource for TimeRotating {
    fn schema(&self) -> ResourceSchema {
        let mut attributes = parts_schema();
        attributes.extend(ROTATIONS.iter().map(|r| {
            let ty = if *r == "rotation_rfc3339" {
                Type::String
            } else {
                Type::Number
            };
            let a = AttributeSchema::optional(ty, "When to rotate.");
            (
                *r,
                if *r == "rotation_rfc3339" {
                    a.and_computed()
                } else {
                    a
                },
            )
        }));
        attributes.extend([
            (
                "triggers",
                replacing_map("Values that take a new base timestamp when they change."),
            ),
            (
                "rfc3339",
                AttributeSchema::optional(Type::String, "The base timestamp (default: now).")
                    .and_computed()
                    .force_new(),
            ),
            ("id", computed_string("The base timestamp.")),
        ]);
        ResourceSchema::of_attributes(attributes)
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        let mut out = check_timestamp(config, "rfc3339");
        out.extend(check_timestamp(config, "rotation_rfc3339"));
        out.extend(at_least_one_of(config, &ROTATIONS));
        out
    }

    /// Changed rotation settings move the rotation time at plan.
    fn adjust(&self, plan: Planning<'_>) -> Result<Value, DriverError> {
        let Some(prior) = plan.prior else {
            return Ok(plan.planned);
        };
        let changed = ROTATIONS.iter().any(|r| {
            let said = get(plan.config, r).filter(|v| !v.is_null());
            let was = get(prior, r).filter(|v| !v.is_null());
            match (*r, said) {
                // Computed when left out: not a setting then.
                ("rotation_rfc3339", None) => false,
                (_, None) => was.is_some(),
                (_, Some(v)) => !was.is_some_and(|w| w.raw_equal(v)),
            }
        });
        let known = ROTATIONS
            .iter()
            .all(|r| get(&plan.planned, r).is_none_or(Value::is_known));
        if !changed || !known {
            return Ok(plan.planned);
        }
        let Some(base) = timestamp_of(prior, "id", "time_rotating")? else {
            return Ok(plan.planned);
        };
        // A rotation time the configuration leaves out follows the others.
        let planned = match get(plan.config, "rotation_rfc3339").is_none_or(Value::is_null) {
            true => with(
                &plan.planned,
                vec![("rotation_rfc3339", Value::Null(Type::String))],
            ),
            false => plan.planned,
        };
        rotating_object(&planned, base).map_err(|e| failed("time_rotating", "plan", e))
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let base = timestamp_of(planned, "rfc3339", "time_rotating")?.unwrap_or_else(now);
        let planned = match get(planned, "rotation_rfc3339").is_some_and(|v| !v.is_known()) {
            true => with(
                planned,
                vec![("rotation_rfc3339", Value::Null(Type::String))],
            ),
            false => planned.clone(),
        };
        rotating_object(&planned, base).map_err(|e| failed("time_rotating", "create", e))
    }

    async fn update(&self, _prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        Ok(planned.clone())
    }

    /// Gone once its rotation time has passed, so the plan makes it again.
    async fn read(&self, stored: &Value) -> Result<Option<Value>, DriverError> {
        let at = string(stored, "rotation_rfc3339").and_then(|t| parse(&t).ok());
        Ok(match at {
            Some(at) if now() > at => None,
            _ => Some(stored.clone()),
        })
    }
}

pub(crate) struct TimeSleep;

/// A duration as the provider takes it: a number and `ms`, `s`, `m` or `h`.
fn duration(s: &str) -> Result<Duration, String> {
    let unit_at = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (n, unit) = s.split_at(unit_at);
    let scale = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => f64::NAN,
    };
    match n.parse::<f64>() {
        // A number too large for a wait is refused, not a panic.
        Ok(n) if scale.is_finite() => match Duration::try_from_secs_f64(n * scale) {
            Ok(d) => Ok(d),
            Err(_) => Err(format!("{s:?} is longer than strata can wait")),
        },
        _ => Err(format!("{s:?} must be a number immediately followed by ms (milliseconds), s (seconds), m (minutes), or h (hours). For example, \"30s\" for 30 seconds.")),
    }
}

async fn sleep_for(v: &Value, name: &str, operation: &str) -> Result<(), DriverError> {
    if let Some(text) = string(v, name).filter(|s| !s.is_empty()) {
        let d = duration(&text).map_err(|e| failed("time_sleep", operation, e))?;
        tokio::time::sleep(d).await;
    }
    Ok(())
}

#[async_trait]
impl Resource for TimeSleep {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            (
                "create_duration",
                AttributeSchema::optional(Type::String, "How long to wait after creating."),
            ),
            (
                "destroy_duration",
                AttributeSchema::optional(Type::String, "How long to wait before destroying."),
            ),
            (
                "triggers",
                replacing_map("Values that wait again when they change."),
            ),
            ("id", computed_string("When the wait ended.")),
        ])
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        let mut out = Vec::new();
        for name in ["create_duration", "destroy_duration"] {
            if let Some(Err(e)) = string(config, name).map(|s| duration(&s)) {
                out.push(invalid(name, e));
            }
        }
        out.extend(at_least_one_of(
            config,
            &["create_duration", "destroy_duration"],
        ));
        out
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        sleep_for(planned, "create_duration", "create").await?;
        Ok(with(planned, vec![("id", rfc3339(now()))]))
    }

    async fn delete(&self, prior: &Value) -> Result<(), DriverError> {
        sleep_for(prior, "destroy_duration", "delete").await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_follow_go_calendar_arithmetic() {
        let base = parse("2024-01-31T10:00:00Z").expect("timestamp");
        let v = with(
            &Value::Object(Default::default()),
            vec![
                ("offset_months", Value::int(1)),
                ("offset_hours", Value::int(15)),
            ],
        );
        // Jan 31 + 15 h = Feb 1 01:00; + 1 month = Mar 1 01:00.
        let t = offset(base, &v).expect("in range");
        assert_eq!(
            string(&with(&v, vec![("t", rfc3339(t))]), "t").as_deref(),
            Some("2024-03-01T01:00:00Z")
        );
        let leap =
            add_date(parse("2024-02-29T00:00:00Z").expect("timestamp"), 1, 0, 0).expect("in range");
        assert_eq!(rfc3339(leap).as_str(), Some("2025-03-01T00:00:00Z"));
    }

    #[test]
    fn the_last_rotation_set_decides() {
        let base = parse("2024-01-31T00:00:00Z").expect("timestamp");
        let v = with(
            &Value::Object(Default::default()),
            vec![
                ("rotation_days", Value::int(1)),
                ("rotation_years", Value::int(1)),
            ],
        );
        assert_eq!(
            rfc3339(rotation(base, &v).expect("rotation")).as_str(),
            Some("2025-01-31T00:00:00Z")
        );
        let v = with(&v, vec![("rotation_years", Value::Null(Type::Number))]);
        assert_eq!(
            rfc3339(rotation(base, &v).expect("rotation")).as_str(),
            Some("2024-02-01T00:00:00Z")
        );
    }

    #[test]
    fn times_past_the_range_of_dates_are_errors_not_panics() {
        let base = parse("2024-01-01T00:00:00Z").expect("timestamp");
        let far = with(
            &Value::Object(Default::default()),
            vec![("offset_hours", Value::int(i64::MAX / 2))],
        );
        assert!(offset(base, &far).is_err());
        let years = with(
            &Value::Object(Default::default()),
            vec![("offset_years", Value::int(i64::MAX))],
        );
        assert!(offset(base, &years).is_err());
        assert!(duration("99999999999999999999h").is_err());
    }

    #[test]
    fn durations_take_the_providers_units_only() {
        assert_eq!(duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert!(duration("1d").is_err());
        assert!(duration("s").is_err());
    }
}
