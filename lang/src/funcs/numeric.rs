//! abs, ceil, floor, log, max, min, parseint, pow, signum, sum.

use super::{def, def_var, int_arg, num_arg, p, str_arg, FnError, FuncDef};
use crate::lang::convert::convert;
use crate::lang::number::Number;
use crate::lang::types::Type;
use crate::lang::value::Value;
use num_bigint::BigInt;

fn float(v: f64) -> Result<Value, FnError> {
    Number::from_f64(v)
        .map(Value::Number)
        .ok_or_else(|| FnError::call("the result is not a number"))
}

pub fn register(defs: &mut Vec<FuncDef>) {
    let n = || Type::Number;
    defs.push(def("abs", vec![p("num", n())], n(), |_, a| {
        Ok(Value::Number(num_arg(a, 0).abs()))
    }));
    defs.push(def("ceil", vec![p("num", n())], n(), |_, a| {
        Ok(Value::Number(num_arg(a, 0).ceil()))
    }));
    defs.push(def("floor", vec![p("num", n())], n(), |_, a| {
        Ok(Value::Number(num_arg(a, 0).floor()))
    }));
    defs.push(def(
        "log",
        vec![p("num", n()), p("base", n())],
        n(),
        |_, a| float(num_arg(a, 0).to_f64().ln() / num_arg(a, 1).to_f64().ln()),
    ));
    defs.push(def(
        "pow",
        vec![p("num", n()), p("power", n())],
        n(),
        |_, a| float(num_arg(a, 0).to_f64().powf(num_arg(a, 1).to_f64())),
    ));
    defs.push(def("signum", vec![p("num", n())], n(), |_, a| {
        let x = num_arg(a, 0);
        int_arg(a, 0)?;
        Ok(Value::int(if x.is_zero() {
            0
        } else if x.is_negative() {
            -1
        } else {
            1
        }))
    }));
    defs.push(def_var("max", vec![], p("numbers", n()), n(), |_, a| {
        extreme(a, true)
    }));
    defs.push(def_var("min", vec![], p("numbers", n()), n(), |_, a| {
        extreme(a, false)
    }));
    defs.push(def(
        "parseint",
        // Taken as it is, and only a string: Terraform converts nothing.
        vec![p("number", Type::Dynamic), p("base", n())],
        n(),
        |_, a| {
            if !matches!(a[0].ty(), Type::String) {
                let given = a[0].ty().friendly_name();
                return Err(FnError::arg(
                    0,
                    format!("first argument must be a string, not {given}"),
                ));
            }
            let base = int_arg(a, 1)?;
            if !(2..=62).contains(&base) {
                return Err(FnError::arg(
                    1,
                    "base must be a whole number between 2 and 62 inclusive",
                ));
            }
            let s = str_arg(a, 0);
            parse_int(s, base as u32)
                .map(|i| Value::Number(Number::from_bigint(&i)))
                .ok_or_else(|| {
                    FnError::arg(0, format!("cannot parse {s:?} as a base {base} integer"))
                })
        },
    ));
    defs.push(def("sum", vec![p("list", Type::Dynamic)], n(), |_, a| {
        let list = &a[0];
        let Some(items) = list
            .elements()
            .filter(|_| !matches!(list.ty(), Type::Map(_) | Type::Object(_)))
        else {
            return Err(FnError::arg(
                0,
                format!(
                    "argument must be list, set, or tuple. Received {}",
                    list.ty().friendly_name()
                ),
            ));
        };
        if items.is_empty() {
            return Err(FnError::arg(0, "cannot sum an empty list"));
        }
        let mut total: Option<Number> = None;
        for it in items {
            if it.is_null() {
                return Err(FnError::arg(
                    0,
                    "argument must be list, set, or tuple of number values",
                ));
            }
            let v = convert(it, &Type::Number).map_err(|e| FnError::arg(0, e.message))?;
            let x = v.as_number().cloned().unwrap_or_else(Number::zero);
            total = Some(match total {
                None => x,
                Some(t) => t.add(&x).map_err(|e| FnError::call(e.to_string()))?,
            });
        }
        Ok(Value::Number(total.unwrap_or_else(Number::zero)))
    }));
}

fn extreme(a: &[Value], max: bool) -> Result<Value, FnError> {
    if a.is_empty() {
        return Err(FnError::call("must pass at least one number"));
    }
    let mut best = num_arg(a, 0);
    for i in 1..a.len() {
        let x = num_arg(a, i);
        let better = if max {
            x.compare(&best).is_gt()
        } else {
            x.compare(&best).is_lt()
        };
        if better {
            best = x;
        }
    }
    Ok(Value::Number(best))
}

/// Go's `big.Int.SetString` for an explicit base: optional sign, digits
/// 0-9a-z (case-insensitive up to base 36; for larger bases A-Z follow a-z).
fn parse_int(s: &str, base: u32) -> Option<BigInt> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let mut acc = BigInt::from(0);
    for c in digits.chars() {
        let d = match c {
            '0'..='9' => c as u32 - '0' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 10,
            'A'..='Z' if base <= 36 => c as u32 - 'A' as u32 + 10,
            'A'..='Z' => c as u32 - 'A' as u32 + 36,
            _ => return None,
        };
        if d >= base {
            return None;
        }
        acc = acc * base + d;
    }
    Some(if neg { -acc } else { acc })
}
