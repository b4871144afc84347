//! timestamp, formatdate, timeadd, timecmp: RFC 3339 times, with
//! Terraform's own `formatdate` specification language and Go's duration
//! syntax for `timeadd`.

use super::{def, p, str_arg, FnError, FuncDef};
use crate::lang::types::Type;
use crate::lang::value::Value;
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

fn parse_ts(s: &str, i: usize) -> Result<OffsetDateTime, FnError> {
    OffsetDateTime::parse(s, &Rfc3339).map_err(|_| {
        FnError::arg(
            i,
            format!("not a valid RFC3339 timestamp: cannot use {s:?} as year"),
        )
    })
}

/// RFC 3339 as Go writes it: seconds only, `Z` for UTC.
fn rfc3339(t: OffsetDateTime) -> String {
    let off = t.offset();
    let zone = if off == UtcOffset::UTC {
        "Z".to_string()
    } else {
        let (h, m, _) = off.as_hms();
        format!(
            "{}{:02}:{:02}",
            if off.is_negative() { '-' } else { '+' },
            h.abs(),
            m.abs()
        )
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{zone}",
        t.year(),
        t.month() as u8,
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

pub fn register(defs: &mut Vec<FuncDef>) {
    let st = || Type::String;
    defs.push(def("timestamp", vec![], st(), |_, _| {
        Ok(Value::String(rfc3339(OffsetDateTime::now_utc())))
    }));
    defs.push(def(
        "formatdate",
        vec![p("format", st()), p("time", st())],
        st(),
        |_, a| {
            let t = parse_ts(str_arg(a, 1), 1)?;
            formatdate(str_arg(a, 0), t).map(Value::String)
        },
    ));
    defs.push(def(
        "timeadd",
        vec![p("timestamp", st()), p("duration", st())],
        st(),
        |_, a| {
            let t = parse_ts(str_arg(a, 0), 0)?;
            let nanos = go_duration(str_arg(a, 1)).ok_or_else(|| {
                FnError::arg(1, format!("time: invalid duration {:?}", str_arg(a, 1)))
            })?;
            let t = t
                .checked_add(time::Duration::nanoseconds_i128(nanos))
                .ok_or_else(|| FnError::call("the resulting time is out of range"))?;
            Ok(Value::String(rfc3339(t)))
        },
    ));
    defs.push(def(
        "timecmp",
        vec![p("timestamp_a", st()), p("timestamp_b", st())],
        Type::Number,
        |_, a| {
            let x = parse_ts(str_arg(a, 0), 0)?;
            let y = parse_ts(str_arg(a, 1), 1)?;
            Ok(Value::int(match x.cmp(&y) {
                std::cmp::Ordering::Less => -1,
                std::cmp::Ordering::Equal => 0,
                std::cmp::Ordering::Greater => 1,
            }))
        },
    ));
}

/// Go's `time.ParseDuration`: a signed sequence of decimal numbers with
/// units (ns, us, µs, ms, s, m, h), e.g. "1h30m", "-2.5s". In nanoseconds.
fn go_duration(s: &str) -> Option<i128> {
    let (neg, mut rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let n: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += n * scale;
    }
    let v = total.round() as i128;
    Some(if neg { -v } else { v })
}

/// Terraform's `formatdate` specification: letter sequences are fields,
/// single-quoted text is literal, anything else is copied through.
fn formatdate(spec: &str, t: OffsetDateTime) -> Result<String, FnError> {
    let chars: Vec<char> = spec.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            i = quoted(&chars, i, &mut out)?;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            out.push(c);
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && chars[j] == c {
            j += 1;
        }
        let run: String = chars[i..j].iter().collect();
        out.push_str(&field(&run, t)?);
        i = j;
    }
    Ok(out)
}

/// A quoted literal starting at `i` (`''` inside it a quote, `''` alone
/// one too) copied to `out`; where the text goes on.
fn quoted(chars: &[char], i: usize, out: &mut String) -> Result<usize, FnError> {
    let mut j = i + 1;
    let mut lit = String::new();
    loop {
        match chars.get(j) {
            None => return Err(FnError::arg(0, "unterminated literal '")),
            Some('\'') if chars.get(j + 1) == Some(&'\'') => {
                lit.push('\'');
                j += 2;
            }
            Some('\'') => break,
            Some(&ch) => {
                lit.push(ch);
                j += 1;
            }
        }
    }
    match j == i + 1 {
        true => out.push('\''),
        false => out.push_str(&lit),
    }
    Ok(j + 1)
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// One field of the time, by its letters (a table of Terraform's verbs).
fn field(run: &str, t: OffsetDateTime) -> Result<String, FnError> {
    let month = t.month() as u8;
    let h12 = match t.hour() % 12 {
        0 => 12,
        h => h,
    };
    let off = t.offset();
    let (oh, om, _) = off.as_hms();
    let sign = if off.is_negative() { '-' } else { '+' };
    let day = DAYS[t.weekday().number_days_from_monday() as usize];
    Ok(match run {
        "YYYY" => format!("{:04}", t.year()),
        "YY" => format!("{:02}", t.year().rem_euclid(100)),
        "MMMM" => MONTHS[month as usize - 1].to_string(),
        "MMM" => MONTHS[month as usize - 1][..3].to_string(),
        "MM" => format!("{month:02}"),
        "M" => month.to_string(),
        "DD" => format!("{:02}", t.day()),
        "D" => t.day().to_string(),
        "EEEE" => day.to_string(),
        "EEE" => day[..3].to_string(),
        "hh" => format!("{:02}", t.hour()),
        "h" => t.hour().to_string(),
        "HH" => format!("{h12:02}"),
        "H" => h12.to_string(),
        "AA" => if t.hour() < 12 { "AM" } else { "PM" }.to_string(),
        "aa" => if t.hour() < 12 { "am" } else { "pm" }.to_string(),
        "mm" => format!("{:02}", t.minute()),
        "m" => t.minute().to_string(),
        "ss" => format!("{:02}", t.second()),
        "s" => t.second().to_string(),
        "ZZZZZ" => format!("{sign}{:02}:{:02}", oh.abs(), om.abs()),
        "ZZZZ" => format!("{sign}{:02}{:02}", oh.abs(), om.abs()),
        "ZZZ" if off == UtcOffset::UTC => "UTC".to_string(),
        "ZZZ" => format!("{sign}{:02}{:02}", oh.abs(), om.abs()),
        "Z" if off == UtcOffset::UTC => "Z".to_string(),
        "Z" => format!("{sign}{:02}:{:02}", oh.abs(), om.abs()),
        other => {
            return Err(FnError::arg(
                0,
                format!("invalid date format verb {other:?}: unrecognized sequence of letters"),
            ))
        }
    })
}
