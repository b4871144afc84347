//! Terraform's number: a binary floating-point value of arbitrary precision.
//!
//! Terraform (through cty) keeps numbers as Go `big.Float` values: literals are
//! parsed at 512 bits of mantissa, rounded to nearest-even, and every
//! arithmetic result takes the larger precision of its operands. That is why
//! `0.1 + 0.2` prints `0.3` while `1/3` prints 155 digits, and why `pow(2,100)`
//! (computed in float64, so 53 bits) prints `1267650600228229400000000000000`.
//! To print exactly what Terraform prints we model the same thing: a sign, an
//! integer mantissa, a binary exponent and the precision the value carries.

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};
use std::cmp::Ordering;
use std::fmt;

/// Precision (mantissa bits) of parsed literals, as in cty's `ParseNumberVal`.
pub const LITERAL_PREC: u32 = 512;
/// Precision Go gives a `big.Float` set from an int64.
pub const INT_PREC: u32 = 64;
/// Precision of a float64.
pub const FLOAT_PREC: u32 = 53;

#[derive(Clone, Debug)]
pub struct Number {
    neg: bool,
    kind: Kind,
    prec: u32,
}

#[derive(Clone, Debug)]
enum Kind {
    /// `mant * 2^exp`; a zero mantissa is zero.
    Finite {
        mant: BigUint,
        exp: i64,
    },
    Inf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseNumberError {
    Syntax,
    OutOfRange,
}

/// The largest decimal exponent a number literal may have (`1e100000`).
pub const MAX_DECIMAL_EXPONENT: i64 = 100_000;

impl Number {
    pub fn zero() -> Number {
        Number::from_i64(0)
    }

    pub fn from_i64(v: i64) -> Number {
        Number {
            neg: v < 0,
            kind: Kind::Finite {
                mant: BigUint::from(v.unsigned_abs()),
                exp: 0,
            },
            prec: INT_PREC,
        }
        .normalized()
    }

    pub fn from_bigint(v: &BigInt) -> Number {
        let prec = (v.bits() as u32).max(INT_PREC);
        Number {
            neg: v.sign() == Sign::Minus,
            kind: Kind::Finite {
                mant: v.magnitude().clone(),
                exp: 0,
            },
            prec,
        }
        .normalized()
    }

    pub fn infinity(neg: bool) -> Number {
        Number {
            neg,
            kind: Kind::Inf,
            prec: LITERAL_PREC,
        }
    }

    /// A float64 result, as `cty.NumberFloatVal` makes it (precision 53).
    pub fn from_f64(v: f64) -> Option<Number> {
        if v.is_nan() {
            return None;
        }
        if v.is_infinite() {
            return Some(Number {
                prec: FLOAT_PREC,
                ..Number::infinity(v < 0.0)
            });
        }
        let bits = v.to_bits();
        let neg = bits >> 63 == 1;
        let exp_bits = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1u64 << 52) - 1);
        let (mant, exp) = if exp_bits == 0 {
            (frac, -1074)
        } else {
            (frac | (1u64 << 52), exp_bits - 1075)
        };
        Some(
            Number {
                neg,
                kind: Kind::Finite {
                    mant: BigUint::from(mant),
                    exp,
                },
                prec: FLOAT_PREC,
            }
            .normalized(),
        )
    }

    /// Parses a decimal literal (`12`, `1.5`, `2e-3`) at literal precision.
    pub fn parse(s: &str) -> Result<Number, ParseNumberError> {
        Number::parse_prec(s, LITERAL_PREC)
    }

    pub fn parse_prec(s: &str, prec: u32) -> Result<Number, ParseNumberError> {
        let (neg, body) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (mantissa, exponent) = match body.find(['e', 'E']) {
            Some(i) => (&body[..i], Some(&body[i + 1..])),
            None => (body, None),
        };
        let (int_part, frac_part) = match mantissa.find('.') {
            Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
            None => (mantissa, ""),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(ParseNumberError::Syntax);
        }
        if !int_part.bytes().all(|b| b.is_ascii_digit())
            || !frac_part.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(ParseNumberError::Syntax);
        }
        let mut exp10: i64 = match exponent {
            None => 0,
            Some(e) => {
                let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(ParseNumberError::Syntax);
                }
                // Exact arithmetic on 10^exp costs time and memory in
                // proportion to exp; beyond this bound a literal is refused
                // rather than letting one token take minutes.
                let v: i64 = digits.parse::<i64>().unwrap_or(i64::MAX);
                if v > MAX_DECIMAL_EXPONENT {
                    return Err(ParseNumberError::OutOfRange);
                }
                if e.starts_with('-') {
                    -v
                } else {
                    v
                }
            }
        };
        exp10 -= frac_part.len() as i64;
        let digits = format!("{int_part}{frac_part}");
        let d = BigUint::parse_bytes(digits.as_bytes(), 10).unwrap_or_default();
        let mut n = if exp10 >= 0 {
            let mant = d * pow10(exp10 as u64);
            Number {
                neg,
                kind: Kind::Finite { mant, exp: 0 },
                prec,
            }
            .rounded()
        } else {
            // d * 10^-k = (d * 2^-k) / 5^k: divide by the power of five, exactly rounded.
            let k = (-exp10) as u64;
            let (mant, exp) = quotient(&d, &pow5(k), prec);
            Number {
                neg,
                kind: Kind::Finite {
                    mant,
                    exp: exp - k as i64,
                },
                prec,
            }
            .rounded()
        };
        n.prec = prec;
        Ok(n)
    }

    pub fn is_zero(&self) -> bool {
        matches!(&self.kind, Kind::Finite { mant, .. } if mant.is_zero())
    }

    pub fn is_inf(&self) -> bool {
        matches!(self.kind, Kind::Inf)
    }

    pub fn is_negative(&self) -> bool {
        self.neg && !self.is_zero()
    }

    pub fn prec(&self) -> u32 {
        self.prec
    }

    pub fn is_integer(&self) -> bool {
        match &self.kind {
            Kind::Inf => false,
            Kind::Finite { mant, exp } => {
                *exp >= 0 || mant.is_zero() || {
                    let tz = mant.trailing_zeros().unwrap_or(0);
                    tz as i64 >= -exp
                }
            }
        }
    }

    /// The integer part (truncated toward zero); `None` for infinity.
    pub fn trunc_bigint(&self) -> Option<BigInt> {
        match &self.kind {
            Kind::Inf => None,
            Kind::Finite { mant, exp } => {
                let mag = if *exp >= 0 {
                    mant << (*exp as u64)
                } else {
                    mant >> ((-exp) as u64)
                };
                Some(BigInt::from_biguint(
                    if self.neg { Sign::Minus } else { Sign::Plus },
                    mag,
                ))
            }
        }
    }

    /// Exact integer value when this number is whole and fits in an i64.
    pub fn to_i64(&self) -> Option<i64> {
        if !self.is_integer() {
            return None;
        }
        self.trunc_bigint()?.to_i64()
    }

    pub fn to_f64(&self) -> f64 {
        match &self.kind {
            Kind::Inf => {
                if self.neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            Kind::Finite { .. } => {
                // Round to 53 bits first so the conversion is exact.
                let r = self.with_prec(FLOAT_PREC);
                let Kind::Finite { mant, exp } = &r.kind else {
                    unreachable!("rounding keeps finiteness")
                };
                let m = mant.to_f64().unwrap_or(f64::INFINITY);
                let v = if *exp > 2000 {
                    f64::INFINITY
                } else if *exp < -2200 {
                    0.0
                } else {
                    // Split the scaling so intermediate powers stay in range.
                    let half = (*exp / 2) as i32;
                    m * 2f64.powi(half) * 2f64.powi(*exp as i32 - half)
                };
                if self.neg {
                    -v
                } else {
                    v
                }
            }
        }
    }

    /// This value rounded to another precision.
    pub fn with_prec(&self, prec: u32) -> Number {
        let mut n = self.clone();
        n.prec = prec;
        n.rounded()
    }

    pub fn neg(&self) -> Number {
        let mut n = self.clone();
        n.neg = !n.neg;
        n
    }

    pub fn abs(&self) -> Number {
        let mut n = self.clone();
        n.neg = false;
        n
    }

    fn signed_parts(&self) -> Option<(BigInt, i64)> {
        match &self.kind {
            Kind::Inf => None,
            Kind::Finite { mant, exp } => Some((
                BigInt::from_biguint(
                    if self.neg { Sign::Minus } else { Sign::Plus },
                    mant.clone(),
                ),
                *exp,
            )),
        }
    }

    pub fn add(&self, other: &Number) -> Result<Number, ArithError> {
        let prec = self.prec.max(other.prec);
        match (self.signed_parts(), other.signed_parts()) {
            (Some((a, ea)), Some((b, eb))) => {
                let e = ea.min(eb);
                let sum = (a << (ea - e) as u64) + (b << (eb - e) as u64);
                if sum.is_zero() {
                    // Go: x + (-x) is +0 unless both operands are -0.
                    let neg = self.neg && other.neg;
                    return Ok(Number {
                        neg,
                        kind: Kind::Finite {
                            mant: BigUint::zero(),
                            exp: 0,
                        },
                        prec,
                    });
                }
                Ok(Number {
                    neg: sum.sign() == Sign::Minus,
                    kind: Kind::Finite {
                        mant: sum.magnitude().clone(),
                        exp: e,
                    },
                    prec,
                }
                .rounded())
            }
            (None, None) if self.neg != other.neg => Err(ArithError::InfMinusInf),
            (None, _) => Ok(Number {
                prec,
                ..self.clone()
            }),
            (_, None) => Ok(Number {
                prec,
                ..other.clone()
            }),
        }
    }

    pub fn sub(&self, other: &Number) -> Result<Number, ArithError> {
        self.add(&other.neg())
    }

    pub fn mul(&self, other: &Number) -> Result<Number, ArithError> {
        let prec = self.prec.max(other.prec);
        let neg = self.neg != other.neg;
        match (&self.kind, &other.kind) {
            (Kind::Finite { mant: a, exp: ea }, Kind::Finite { mant: b, exp: eb }) => Ok(Number {
                neg,
                kind: Kind::Finite {
                    mant: a * b,
                    exp: ea + eb,
                },
                prec,
            }
            .rounded()),
            _ if self.is_zero() || other.is_zero() => Err(ArithError::ZeroTimesInf),
            _ => Ok(Number {
                neg,
                kind: Kind::Inf,
                prec,
            }),
        }
    }

    pub fn div(&self, other: &Number) -> Result<Number, ArithError> {
        let prec = self.prec.max(other.prec);
        let neg = self.neg != other.neg;
        match (&self.kind, &other.kind) {
            (Kind::Inf, Kind::Inf) => Err(ArithError::InfDivInf),
            (Kind::Inf, _) => Ok(Number {
                neg,
                kind: Kind::Inf,
                prec,
            }),
            (_, Kind::Inf) => Ok(Number {
                neg,
                kind: Kind::Finite {
                    mant: BigUint::zero(),
                    exp: 0,
                },
                prec,
            }),
            (Kind::Finite { mant: a, exp: ea }, Kind::Finite { mant: b, exp: eb }) => {
                if b.is_zero() {
                    if a.is_zero() {
                        return Err(ArithError::ZeroDivZero);
                    }
                    return Ok(Number {
                        neg,
                        kind: Kind::Inf,
                        prec,
                    });
                }
                let (mant, exp) = quotient(a, b, prec);
                Ok(Number {
                    neg,
                    kind: Kind::Finite {
                        mant,
                        exp: exp + ea - eb,
                    },
                    prec,
                }
                .rounded())
            }
        }
    }

    /// cty's modulo: `a - b * trunc(a / b)`, with its special cases for infinity.
    pub fn rem(&self, other: &Number) -> Result<Number, ArithError> {
        // cty returns the dividend unchanged for a zero or infinite divisor
        // and for an infinite dividend.
        if other.is_zero() || self.is_inf() || other.is_inf() {
            return Ok(self.clone());
        }
        let q = self.div(other)?;
        let t = q.trunc_bigint().unwrap_or_default();
        let tn = Number {
            prec: self.prec,
            ..Number::from_bigint(&t)
        };
        let p = other.mul(&tn)?;
        self.sub(&p)
    }

    pub fn floor(&self) -> Number {
        self.round_integer(true)
    }

    pub fn ceil(&self) -> Number {
        self.round_integer(false)
    }

    fn round_integer(&self, down: bool) -> Number {
        if self.is_inf() || self.is_integer() {
            return self.clone();
        }
        let mut t = self.trunc_bigint().unwrap_or_default();
        // Truncation moved toward zero; adjust when that is the wrong direction.
        if down && self.neg {
            t -= 1;
        } else if !down && !self.neg {
            t += 1;
        }
        let mut n = Number::from_bigint(&t);
        if t.is_zero() && self.neg {
            n.neg = true;
        }
        n.prec = self.prec;
        n
    }

    /// Numeric order (Go's `big.Float.Cmp`); infinities at the ends.
    pub fn compare(&self, other: &Number) -> Ordering {
        let sign = |n: &Number| -> i8 {
            if n.is_zero() {
                0
            } else if n.neg {
                -1
            } else {
                1
            }
        };
        let (sa, sb) = (sign(self), sign(other));
        if sa != sb {
            return sa.cmp(&sb);
        }
        let mag = match (&self.kind, &other.kind) {
            (Kind::Inf, Kind::Inf) => Ordering::Equal,
            (Kind::Inf, _) => Ordering::Greater,
            (_, Kind::Inf) => Ordering::Less,
            (Kind::Finite { mant: a, exp: ea }, Kind::Finite { mant: b, exp: eb }) => {
                let e = (*ea).min(*eb);
                (a << (ea - e) as u64).cmp(&(b << (eb - e) as u64))
            }
        };
        if sa < 0 {
            mag.reverse()
        } else {
            mag
        }
    }

    /// Removes trailing zero bits so equal values have equal parts.
    fn normalized(mut self) -> Number {
        if let Kind::Finite { mant, exp } = &mut self.kind {
            if mant.is_zero() {
                *exp = 0;
            } else {
                let tz = mant.trailing_zeros().unwrap_or(0);
                if tz > 0 {
                    *mant >>= tz;
                    *exp += tz as i64;
                }
            }
        }
        self
    }

    /// Rounds the mantissa to `prec` bits, nearest-even, as Go does.
    fn rounded(mut self) -> Number {
        let prec = self.prec as u64;
        if let Kind::Finite { mant, exp } = &mut self.kind {
            let bits = mant.bits();
            if bits > prec {
                let drop = bits - prec;
                let rem = &*mant & ((BigUint::one() << drop) - 1u32);
                let half = BigUint::one() << (drop - 1);
                *mant >>= drop;
                *exp += drop as i64;
                let round_up = match rem.cmp(&half) {
                    Ordering::Greater => true,
                    Ordering::Equal => mant.is_odd(),
                    Ordering::Less => false,
                };
                if round_up {
                    *mant += 1u32;
                }
            }
        }
        self.normalized()
    }

    /// Go's `Text('f', -1)`: the shortest decimal that rounds back to this
    /// value at its own precision.
    pub fn to_text(&self) -> String {
        let (mant, exp) = match &self.kind {
            Kind::Inf => return if self.neg { "-Inf" } else { "+Inf" }.to_string(),
            Kind::Finite { mant, exp } => (mant, *exp),
        };
        let sign = if self.neg { "-" } else { "" };
        if mant.is_zero() {
            return format!("{sign}0");
        }
        let mut d = Decimal::from_binary(mant, exp);
        round_shortest(&mut d, mant, exp, self.prec);
        format!("{sign}{}", d.to_fixed())
    }
}

impl Number {
    /// Go's `big.Float` formatting for the verbs `e`, `E`, `f` and `g`/`G`
    /// (`prec` `None` means Go's default: 6 for e/f, shortest for g), which
    /// Terraform's `format` uses for numbers. The sign is included.
    pub fn format_go(&self, verb: char, prec: Option<usize>) -> String {
        let sign = if self.neg { "-" } else { "" };
        let (mant, exp) = match &self.kind {
            Kind::Inf => return format!("{}Inf", if self.neg { "-" } else { "+" }),
            Kind::Finite { mant, exp } => (mant, *exp),
        };
        let mut d = if mant.is_zero() {
            Decimal {
                digits: Vec::new(),
                exp: 0,
            }
        } else {
            Decimal::from_binary(mant, exp)
        };
        let lower = verb.to_ascii_lowercase();
        let shortest = lower == 'g' && prec.is_none();
        let mut prec = prec.map(|p| p as i64).unwrap_or(6);
        if shortest {
            if !mant.is_zero() {
                round_shortest(&mut d, mant, exp, self.prec);
            }
            prec = d.digits.len() as i64;
        } else {
            match lower {
                'e' => d.round_at(1 + prec),
                'f' => d.round_at(d.exp + prec),
                _ => {
                    if prec == 0 {
                        prec = 1;
                    }
                    d.round_at(prec)
                }
            }
        }
        let body = match lower {
            'e' => d.fmt_e(verb, prec),
            'f' => d.fmt_f(prec),
            _ => {
                let n = d.digits.len() as i64;
                let mut eprec = prec;
                if eprec > n && n >= d.exp {
                    eprec = n;
                }
                if shortest {
                    eprec = 6;
                }
                let x = d.exp - 1;
                if x < -4 || x >= eprec {
                    if prec > n {
                        prec = n;
                    }
                    d.fmt_e(if verb == 'G' { 'E' } else { 'e' }, prec - 1)
                } else {
                    if prec > d.exp {
                        prec = n;
                    }
                    d.fmt_f((prec - d.exp).max(0))
                }
            }
        };
        format!("{sign}{body}")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithError {
    InfMinusInf,
    ZeroTimesInf,
    InfDivInf,
    ZeroDivZero,
}

impl fmt::Display for ArithError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ArithError::InfMinusInf => "can't subtract infinity from itself",
            ArithError::ZeroTimesInf => "can't multiply zero by infinity",
            // Go's big.Float says the same of both.
            ArithError::InfDivInf | ArithError::ZeroDivZero => {
                "can't divide zero by zero or infinity by infinity"
            }
        })
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.compare(other) == Ordering::Equal
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

fn pow10(n: u64) -> BigUint {
    num_traits::pow(BigUint::from(10u32), n as usize)
}

fn pow5(n: u64) -> BigUint {
    num_traits::pow(BigUint::from(5u32), n as usize)
}

/// `a / b` as `(q, e)` with `q * 2^e` carrying at least `prec + 2` bits and a
/// sticky low bit for an inexact remainder, ready for nearest-even rounding.
fn quotient(a: &BigUint, b: &BigUint, prec: u32) -> (BigUint, i64) {
    if a.is_zero() {
        return (BigUint::zero(), 0);
    }
    let want = prec as i64 + 3;
    let shift = (want + b.bits() as i64 - a.bits() as i64).max(0);
    let (q, r) = (a << shift as u64).div_rem(b);
    // A sticky bit below the rounding position keeps ties honest.
    let q = (q << 1u32)
        | if r.is_zero() {
            BigUint::zero()
        } else {
            BigUint::one()
        };
    (q, -shift - 1)
}

/// Decimal digits with the point at `exp`: value = 0.d1d2d3... × 10^exp.
struct Decimal {
    digits: Vec<u8>,
    exp: i64,
}

impl Decimal {
    fn from_binary(mant: &BigUint, exp: i64) -> Decimal {
        let (int, point_shift) = if exp >= 0 {
            (mant << exp as u64, 0i64)
        } else {
            // m * 2^-k = m * 5^k / 10^k
            let k = (-exp) as u64;
            (mant * pow5(k), k as i64)
        };
        let s = int.to_str_radix(10);
        let mut digits: Vec<u8> = s.into_bytes();
        let exp10 = digits.len() as i64 - point_shift;
        while digits.last() == Some(&b'0') {
            digits.pop();
        }
        Decimal { digits, exp: exp10 }
    }

    fn at(&self, i: usize) -> u8 {
        self.digits.get(i).copied().unwrap_or(b'0')
    }

    fn round(&mut self, n: usize) {
        if n >= self.digits.len() {
            return;
        }
        let up = if self.digits[n] == b'5' && n + 1 == self.digits.len() {
            n > 0 && (self.digits[n - 1] - b'0') % 2 == 1
        } else {
            self.digits[n] >= b'5'
        };
        if up {
            self.round_up(n)
        } else {
            self.round_down(n)
        }
    }

    fn round_down(&mut self, n: usize) {
        if n >= self.digits.len() {
            return;
        }
        self.digits.truncate(n);
        while self.digits.last() == Some(&b'0') {
            self.digits.pop();
        }
        if self.digits.is_empty() {
            self.exp = 0;
        }
    }

    fn round_up(&mut self, n: usize) {
        if n >= self.digits.len() {
            return;
        }
        let mut n = n;
        while n > 0 && self.digits[n - 1] == b'9' {
            n -= 1;
        }
        if n == 0 {
            self.digits = vec![b'1'];
            self.exp += 1;
            return;
        }
        self.digits[n - 1] += 1;
        self.digits.truncate(n);
    }

    /// Rounds to `n` significant digits (Go's `decimal.round`), tolerating
    /// out-of-range positions.
    fn round_at(&mut self, n: i64) {
        if n < 0 {
            self.digits.clear();
            return;
        }
        self.round(n as usize);
    }

    fn fmt_e(&self, verb: char, prec: i64) -> String {
        let mut out = String::new();
        out.push(self.digits.first().map_or('0', |&c| c as char));
        if prec > 0 {
            out.push('.');
            for i in 1..=prec as usize {
                out.push(self.at(i) as char);
            }
        }
        out.push(verb);
        let e = if self.digits.is_empty() {
            0
        } else {
            self.exp - 1
        };
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", e.abs()));
        out
    }

    fn fmt_f(&self, prec: i64) -> String {
        let mut out = String::new();
        if self.exp > 0 {
            for i in 0..self.exp as usize {
                out.push(self.at(i) as char);
            }
        } else {
            out.push('0');
        }
        if prec > 0 {
            out.push('.');
            for i in 0..prec {
                let idx = self.exp + i;
                out.push(if idx < 0 {
                    '0'
                } else {
                    self.at(idx as usize) as char
                });
            }
        }
        out
    }

    fn to_fixed(&self) -> String {
        let mut out = String::new();
        let exp = self.exp;
        if exp > 0 {
            let m = (self.digits.len() as i64).min(exp) as usize;
            out.push_str(std::str::from_utf8(&self.digits[..m]).unwrap_or("0"));
            for _ in m as i64..exp {
                out.push('0');
            }
        } else {
            out.push('0');
        }
        let frac_len = self.digits.len() as i64 - exp;
        if frac_len > 0 {
            out.push('.');
            for i in 0..frac_len {
                let idx = exp + i;
                out.push(if idx < 0 {
                    '0'
                } else {
                    self.digits[idx as usize] as char
                });
            }
        }
        out
    }
}

/// Port of the shortest-decimal search in Go's math/big (`roundShortest`).
fn round_shortest(d: &mut Decimal, mant: &BigUint, exp: i64, prec: u32) {
    if d.digits.is_empty() {
        return;
    }
    let bits = mant.bits() as i64;
    let s = bits - (prec as i64 + 1);
    let (m, e) = if s < 0 {
        (mant << (-s) as u64, exp + s)
    } else {
        (mant >> s as u64, exp + s)
    };
    let lower = Decimal::from_binary(&(&m - 1u32), e);
    let upper = Decimal::from_binary(&(&m + 1u32), e);
    let inclusive = !m.bit(1);
    // Like Go, digits are compared position by position without aligning the
    // decimal exponents; matching Go matters more here than elegance.
    for i in 0..d.digits.len() {
        let l = lower.at(i);
        let mm = d.digits[i];
        let u = upper.at(i);
        let okdown = l != mm || inclusive && i + 1 == lower.digits.len();
        let okup = mm != u && (inclusive || mm + 1 < u || i + 1 < upper.digits.len());
        match (okdown, okup) {
            (true, true) => return d.round(i + 1),
            (true, false) => return d.round_down(i + 1),
            (false, true) => return d.round_up(i + 1),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Number {
        Number::parse(s).expect("literal")
    }

    #[test]
    fn prints_like_terraform() {
        assert_eq!(p("0.1").add(&p("0.2")).unwrap().to_text(), "0.3");
        assert_eq!(
            p("1").div(&p("3")).unwrap().to_text(),
            "0.33333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333335"
        );
        assert_eq!(p("10").div(&p("4")).unwrap().to_text(), "2.5");
        assert_eq!(p("1e-7").to_text(), "0.0000001");
        assert_eq!(
            Number::from_f64(2f64.powi(100)).unwrap().to_text(),
            "1267650600228229400000000000000"
        );
        assert_eq!(
            Number::from_f64(2f64.ln() / 10f64.ln()).unwrap().to_text(),
            format!("{}", 2f64.ln() / 10f64.ln())
        );
        assert_eq!(
            p("1").div(&p("3")).unwrap().mul(&p("3")).unwrap().to_text(),
            "1"
        );
        assert_eq!(p("-7").rem(&p("3")).unwrap().to_text(), "-1");
        assert_eq!(p("7.5").rem(&p("2")).unwrap().to_text(), "1.5");
        assert_eq!(p("0").neg().to_text(), "-0");
        assert_eq!(
            p("123456789012345678901234567890")
                .add(&p("1"))
                .unwrap()
                .to_text(),
            "123456789012345678901234567891"
        );
    }

    #[test]
    fn floor_and_ceil() {
        assert_eq!(p("-1.5").floor().to_text(), "-2");
        assert_eq!(p("1.5").ceil().to_text(), "2");
        assert_eq!(p("-0.5").ceil().to_text(), "-0");
    }
}
