//! US dollars as whole millionths, so prices read from text add up
//! exactly: a plan's total is the sum a reader would get by hand, never
//! `393.28000000000003`.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An amount in US dollars, kept in millionths of a dollar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Usd(i64);

/// Hours in a month as cloud bills and Infracost count them (365 × 24 / 12).
pub const HOURS_PER_MONTH: u64 = 730;

const SCALE: i64 = 1_000_000;

impl Usd {
    pub const ZERO: Usd = Usd(0);

    /// Whole millionths of a dollar.
    pub const fn micros(m: i64) -> Usd {
        Usd(m)
    }

    /// Whole cents.
    pub const fn cents(c: i64) -> Usd {
        Usd(c * 10_000)
    }

    /// A decimal amount as written in a price list (`98.32`, `-1`,
    /// `0.0035`): up to six decimals, no exponent. `None` for anything
    /// else, including amounts beyond a trillion dollars.
    pub fn parse(text: &str) -> Option<Usd> {
        let (neg, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() && frac.is_empty()
            || !all_digits(whole)
            || !all_digits(frac)
            || frac.len() > 6
            || whole.len() > 12
        {
            return None;
        }
        let whole: i64 = if whole.is_empty() {
            0
        } else {
            whole.parse().ok()?
        };
        let frac: i64 = format!("{frac:0<6}").parse().ok()?;
        let m = whole * SCALE + frac;
        Some(Usd(if neg { -m } else { m }))
    }

    /// This amount `n` times over (nodes × the node's price), saturating
    /// rather than wrapping on absurd counts.
    pub fn times(self, n: u64) -> Usd {
        Usd(self.0.saturating_mul(i64::try_from(n).unwrap_or(i64::MAX)))
    }

    /// This amount × `num` / `den` (a GPU-hour's price over GPU-seconds
    /// and the seconds of an hour), rounded to the nearest millionth,
    /// halves away from zero; `None` for `den` 0 or beyond the range.
    pub fn ratio(self, num: u64, den: u64) -> Option<Usd> {
        if den == 0 {
            return None;
        }
        let (n, d) = (i128::from(self.0) * i128::from(num), i128::from(den));
        let q = n / d;
        let q = if 2 * (n % d).abs() >= d {
            q + n.signum()
        } else {
            q
        };
        i64::try_from(q).ok().map(Usd)
    }

    /// This amount shared by `n` (a node's price per GPU), rounded to the
    /// nearest millionth, halves away from zero.
    pub fn per(self, n: u32) -> Option<Usd> {
        let n = i64::from(n);
        if n == 0 {
            return None;
        }
        let q = self.0 / n;
        let r = self.0 % n;
        Some(Usd(if 2 * r.abs() >= n {
            q + self.0.signum()
        } else {
            q
        }))
    }

    /// The exact decimal, with at least two decimals: `98.32`, `0.0035`,
    /// `-1180.00`. What JSON carries.
    pub fn decimal(self) -> String {
        let sign = if self.0 < 0 { "-" } else { "" };
        let m = self.0.unsigned_abs();
        let whole = m / SCALE as u64;
        let frac = format!("{:06}", m % SCALE as u64);
        let frac = frac.trim_end_matches('0');
        format!("{sign}{whole}.{frac:0<2}")
    }

    /// For reading: dollars and cents, thousands apart by a space
    /// (`$1 180.00`), rounded half away from zero. Amounts under a cent
    /// keep their own digits (`$0.0035`) rather than showing as nothing.
    pub fn dollars(self) -> String {
        let sign = if self.0 < 0 { "-" } else { "" };
        let m = self.0.unsigned_abs();
        if m != 0 && m < 10_000 {
            return format!("{sign}${}", Usd(m as i64).decimal());
        }
        let cents = (m + 5_000) / 10_000;
        let whole = (cents / 100).to_string();
        let mut grouped = String::new();
        for (i, ch) in whole.chars().enumerate() {
            if i > 0 && (whole.len() - i).is_multiple_of(3) {
                grouped.push(' ');
            }
            grouped.push(ch);
        }
        format!("{sign}${grouped}.{:02}", cents % 100)
    }

    /// Both amounts for reading side by side: in dollars and cents, or
    /// exact where cents would show two different amounts as one ("costs
    /// $2.20, more than $2.20" for $2.2036 against $2.20).
    pub fn apart(self, other: Usd) -> (String, String) {
        let (a, b) = (self.dollars(), other.dollars());
        match a == b && self != other {
            true => (
                format!("${}", self.decimal()),
                format!("${}", other.decimal()),
            ),
            false => (a, b),
        }
    }

    /// `+$1 180.00`, `-$12.50`, `$0.00`: a change, signed.
    pub fn signed_dollars(self) -> String {
        match self.0 {
            0 => self.dollars(),
            m if m > 0 => format!("+{}", self.dollars()),
            _ => self.dollars(),
        }
    }
}

impl Add for Usd {
    type Output = Usd;
    fn add(self, o: Usd) -> Usd {
        Usd(self.0.saturating_add(o.0))
    }
}

impl AddAssign for Usd {
    fn add_assign(&mut self, o: Usd) {
        *self = *self + o;
    }
}

impl Sub for Usd {
    type Output = Usd;
    fn sub(self, o: Usd) -> Usd {
        Usd(self.0.saturating_sub(o.0))
    }
}

impl std::iter::Sum for Usd {
    fn sum<I: Iterator<Item = Usd>>(iter: I) -> Usd {
        iter.fold(Usd::ZERO, |a, b| a + b)
    }
}

impl fmt::Display for Usd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.dollars())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_is_exact_and_rounds_half_away() {
        let p = Usd::parse("12.29").unwrap_or_default();
        assert_eq!(
            p.ratio(8 * 3600, 3600),
            Some(Usd::parse("98.32").unwrap_or_default())
        );
        assert_eq!(Usd::micros(1).ratio(1, 2), Some(Usd::micros(1)));
        assert_eq!(Usd::micros(-3).ratio(1, 2), Some(Usd::micros(-2)));
        assert_eq!(p.ratio(1, 0), None);
    }

    #[test]
    fn reads_and_writes_exact_decimals() {
        for (text, micros, back) in [
            ("98.32", 98_320_000, "98.32"),
            ("43.06615", 43_066_150, "43.06615"),
            ("0.0035", 3_500, "0.0035"),
            ("-1", -1_000_000, "-1.00"),
            ("7", 7_000_000, "7.00"),
            (".5", 500_000, "0.50"),
        ] {
            let u = Usd::parse(text).expect(text);
            assert_eq!(
                (u, u.decimal().as_str()),
                (Usd::micros(micros), back),
                "{text}"
            );
        }
        for bad in ["", "-", ".", "1e3", "1.2345678", "ten", "1.2.3", "1 000"] {
            assert_eq!(Usd::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn sums_are_exact_and_dollars_read_well() {
        let p = Usd::parse("43.06615").expect("price");
        assert_eq!(p.times(3).decimal(), "129.19845");
        assert_eq!(
            Usd::parse("98.32").expect("price").times(12).dollars(),
            "$1 179.84"
        );
        assert_eq!(Usd::cents(118_000).signed_dollars(), "+$1 180.00");
        assert_eq!((Usd::ZERO - Usd::cents(1250)).signed_dollars(), "-$12.50");
        assert_eq!(Usd::ZERO.signed_dollars(), "$0.00");
        assert_eq!(Usd::micros(3_500).dollars(), "$0.0035");
        assert_eq!(Usd::micros(1_234_567_890_000).dollars(), "$1 234 567.89");
    }

    #[test]
    fn amounts_apart_never_read_as_one() {
        let (price, cap) = (
            Usd::parse("2.2036").expect("p"),
            Usd::parse("2.2").expect("c"),
        );
        assert_eq!(
            price.apart(cap),
            ("$2.2036".to_string(), "$2.20".to_string())
        );
        let (a, b) = (Usd::parse("3.5").expect("a"), Usd::parse("2.2").expect("b"));
        assert_eq!(a.apart(b), ("$3.50".to_string(), "$2.20".to_string()));
    }

    #[test]
    fn shares_round_to_the_nearest_millionth() {
        let node = Usd::parse("98.32").expect("price");
        assert_eq!(node.per(8).map(Usd::decimal).as_deref(), Some("12.29"));
        assert_eq!(Usd::micros(10).per(3), Some(Usd::micros(3)));
        assert_eq!(Usd::micros(5).per(2), Some(Usd::micros(3)));
        assert_eq!(Usd::micros(5).per(0), None);
    }
}
