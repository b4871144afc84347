//! `format` and `formatlist`: Go's fmt verbs as Terraform's stdlib uses them.

use super::{def_var, p, str_arg, FnError, FuncDef};
use crate::lang::convert::convert;
use crate::lang::types::Type;
use crate::lang::value::Value;

pub fn register(defs: &mut Vec<FuncDef>) {
    defs.push(def_var(
        "format",
        vec![p("format", Type::String)],
        p("args", Type::Dynamic).nullable(),
        Type::String,
        |_, a| {
            // Terraform's format returns an unknown value when an argument is null.
            if a[1..].iter().any(Value::is_null) {
                return Ok(Value::unknown());
            }
            format(str_arg(a, 0), &a[1..]).map(Value::String)
        },
    ));
    defs.push(def_var(
        "formatlist",
        vec![p("format", Type::String)],
        p("args", Type::Dynamic).nullable().unknown_elements_ok(),
        Type::list(Type::String),
        |_, a| {
            let mut len: Option<usize> = None;
            for (i, v) in a[1..].iter().enumerate() {
                if let (Some(n), Type::List(_) | Type::Set(_) | Type::Tuple(_)) = (v.len(), v.ty())
                {
                    if len.is_some_and(|l| l != n) {
                        return Err(FnError::arg(
                            i + 1,
                            "argument has a different length from previous list arguments",
                        ));
                    }
                    len = Some(n);
                }
            }
            let n = len.unwrap_or(1);
            let mut out = Vec::with_capacity(n);
            for row in 0..n {
                let args: Vec<Value> = a[1..]
                    .iter()
                    .map(|v| match (v.ty(), v.elements()) {
                        (Type::List(_) | Type::Set(_) | Type::Tuple(_), Some(es)) => {
                            es[row].clone()
                        }
                        _ => v.clone(),
                    })
                    .collect();
                // A row with an unknown argument is unknown; the others, and
                // the list's length, stay known (as Terraform has it).
                out.push(if args.iter().all(Value::is_wholly_known) {
                    Value::String(format(str_arg(a, 0), &args)?)
                } else {
                    Value::Unknown(Type::String)
                });
            }
            Ok(Value::List(Type::String, out))
        },
    ));
}

#[derive(Default)]
struct Spec {
    minus: bool,
    plus: bool,
    space: bool,
    zero: bool,
    sharp: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

fn format(f: &str, args: &[Value]) -> Result<String, FnError> {
    let mut out = String::new();
    let chars: Vec<char> = f.chars().collect();
    let mut i = 0;
    let mut next_arg = 0usize;
    // Go skips the "too many arguments" check once an explicit index is used.
    let mut reordered = false;
    while i < chars.len() {
        let c = chars[i];
        if c != '%' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        if chars.get(i) == Some(&'%') {
            out.push('%');
            i += 1;
            continue;
        }
        let (spec, index) = spec(&chars, &mut i)?;
        if let Some(n) = index {
            next_arg = n;
            reordered = true;
        }
        let verb = *chars
            .get(i)
            .ok_or_else(|| FnError::call("missing verb at end of format string"))?;
        i += 1;
        let arg = args.get(next_arg).ok_or_else(|| {
            FnError::call(format!(
                "not enough arguments for \"%{verb}\" at {}: need index {} but have {} total",
                i - 1,
                next_arg + 1,
                args.len()
            ))
        })?;
        next_arg += 1;
        let body = verb_body(verb, &spec, arg)?;
        // Terraform formats %t without its width.
        if verb == 't' {
            out.push_str(&body);
        } else {
            out.push_str(&pad(body, &spec, verb));
        }
    }
    if !reordered && next_arg < args.len() {
        return Err(FnError::call(format!(
            "too many arguments; no verbs left to use for argument {}",
            next_arg + 1
        )));
    }
    Ok(out)
}

/// A verb's flags, explicit argument index (`%[2]d`, from 0), width and
/// precision, read from `chars` at `i` up to the verb.
fn spec(chars: &[char], i: &mut usize) -> Result<(Spec, Option<usize>), FnError> {
    let mut spec = Spec::default();
    while let Some(&fl) = chars.get(*i) {
        match fl {
            '-' => spec.minus = true,
            '+' => spec.plus = true,
            ' ' => spec.space = true,
            '0' => spec.zero = true,
            '#' => spec.sharp = true,
            _ => break,
        }
        *i += 1;
    }
    let mut index = None;
    if chars.get(*i) == Some(&'[') {
        let close = chars[*i..]
            .iter()
            .position(|&c| c == ']')
            .map(|p| p + *i)
            .ok_or_else(|| FnError::call("unterminated argument index"))?;
        let n: usize = chars[*i + 1..close]
            .iter()
            .collect::<String>()
            .parse()
            .map_err(|_| FnError::call("invalid argument index"))?;
        if n == 0 {
            return Err(FnError::call("invalid argument index 0"));
        }
        index = Some(n - 1);
        *i = close + 1;
    }
    let width = digits(chars, i);
    // A width too large to read is too large to make.
    spec.width = (!width.is_empty()).then(|| width.parse().unwrap_or(usize::MAX));
    if let Some(why) = spec.width.and_then(too_large) {
        return Err(FnError::call(format!("the width of %{width}: {why}")));
    }
    if chars.get(*i) == Some(&'.') {
        *i += 1;
        let d = digits(chars, i);
        spec.prec = Some(if d.is_empty() {
            0
        } else {
            d.parse().unwrap_or(usize::MAX)
        });
        if let Some(why) = spec.prec.and_then(too_large) {
            return Err(FnError::call(format!("the precision .{d}: {why}")));
        }
    }
    Ok((spec, index))
}

/// The decimal digits at `i`, consumed.
fn digits(chars: &[char], i: &mut usize) -> String {
    let mut d = String::new();
    while let Some(x) = chars.get(*i).filter(|c| c.is_ascii_digit()) {
        d.push(*x);
        *i += 1;
    }
    d
}

/// Why a width or precision is too large to make, if it is.
fn too_large(n: usize) -> Option<String> {
    crate::limits::over(n, crate::limits::MAX_STRING_BYTES, "bytes")
}

fn pad(body: String, spec: &Spec, verb: char) -> String {
    let Some(w) = spec.width else { return body };
    let n = body.chars().count();
    if n >= w {
        return body;
    }
    let fill = w - n;
    if spec.minus {
        return body + &" ".repeat(fill);
    }
    if spec.zero && "dfeEgGxXob".contains(verb) {
        let (sign, rest) = match body.chars().next() {
            Some(c @ ('-' | '+' | ' ')) => (c.to_string(), body[1..].to_string()),
            _ => (String::new(), body.clone()),
        };
        return sign + &"0".repeat(fill) + &rest;
    }
    " ".repeat(fill) + &body
}

fn as_num(v: &Value, verb: char) -> Result<crate::lang::number::Number, FnError> {
    match convert(v, &Type::Number) {
        Ok(Value::Number(n)) => Ok(n),
        _ => Err(FnError::call(format!(
            "unsupported value for \"%{verb}\": number required"
        ))),
    }
}

fn sign(neg: bool, spec: &Spec) -> &'static str {
    if neg {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    }
}

fn verb_body(verb: char, spec: &Spec, v: &Value) -> Result<String, FnError> {
    if !v.is_known() {
        return Err(FnError::call("value is not known"));
    }
    Ok(match verb {
        'v' if spec.sharp => v.to_json().map_err(FnError::call)?,
        'v' => match v.unmarked() {
            Value::Null(_) => "null".into(),
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_text(),
            Value::Bool(b) => b.to_string(),
            other => other.to_json().map_err(FnError::call)?,
        },
        's' => match convert(v, &Type::String) {
            Ok(Value::String(s)) => match spec.prec {
                Some(p) => s.chars().take(p).collect(),
                None => s,
            },
            _ if v.is_null() => {
                return Err(FnError::call(
                    "unsupported value for \"%s\": null value cannot be formatted",
                ))
            }
            _ => {
                return Err(FnError::call(
                    "unsupported value for \"%s\": string required",
                ))
            }
        },
        'q' => match convert(v, &Type::String) {
            Ok(Value::String(s)) => {
                let mut o = String::new();
                crate::lang::value::json_string(&s, &mut o);
                o
            }
            _ => {
                return Err(FnError::call(
                    "unsupported value for \"%q\": string required",
                ))
            }
        },
        't' => match convert(v, &Type::Bool) {
            Ok(Value::Bool(b)) => b.to_string(),
            _ => return Err(FnError::call("unsupported value for \"%t\": bool required")),
        },
        'd' | 'b' | 'o' | 'x' | 'X' => {
            let n = as_num(v, verb)?;
            if !n.is_integer() {
                if matches!(verb, 'x' | 'X') {
                    return Err(FnError::call(format!(
                        "unsupported value for \"%{verb}\": number must be a whole number"
                    )));
                }
                return Err(FnError::call(format!(
                    "unsupported value for \"%{verb}\": number must be a whole number"
                )));
            }
            let i = n.trunc_bigint().unwrap_or_default();
            let mag = i.magnitude();
            let digits = match verb {
                'd' => mag.to_str_radix(10),
                'b' => mag.to_str_radix(2),
                'o' => mag.to_str_radix(8),
                'x' => mag.to_str_radix(16),
                _ => mag.to_str_radix(16).to_uppercase(),
            };
            let prefix = match (spec.sharp, verb) {
                (true, 'x') => "0x",
                (true, 'X') => "0X",
                (true, 'o') => "0",
                _ => "",
            };
            format!("{}{prefix}{digits}", sign(n.is_negative(), spec))
        }
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
            let n = as_num(v, verb)?;
            let verb = if verb == 'F' { 'f' } else { verb };
            let text = n.format_go(verb, spec.prec);
            match text.strip_prefix('-') {
                Some(rest) => format!("-{rest}"),
                None => format!("{}{text}", sign(false, spec)),
            }
        }
        other => return Err(FnError::call(format!("unsupported format verb {other:?}"))),
    })
}
