//! String functions. Lengths and offsets count grapheme clusters, as
//! Terraform does, so "é" written with a combining accent is one character.

use super::{def, def_var, int_arg, p, str_arg, FnError, FuncDef};
use crate::lang::types::Type;
use crate::lang::value::Value;
use unicode_segmentation::UnicodeSegmentation;

fn s(v: impl Into<String>) -> Result<Value, FnError> {
    Ok(Value::String(v.into()))
}

pub fn register(defs: &mut Vec<FuncDef>) {
    let st = || Type::String;
    defs.push(def("chomp", vec![p("str", st())], st(), |_, a| {
        s(str_arg(a, 0).trim_end_matches(['\n', '\r']))
    }));
    defs.push(def("lower", vec![p("str", st())], st(), |_, a| {
        s(simple_case(str_arg(a, 0), false))
    }));
    defs.push(def("upper", vec![p("str", st())], st(), |_, a| {
        s(simple_case(str_arg(a, 0), true))
    }));
    defs.push(def("title", vec![p("str", st())], st(), |_, a| {
        s(title(str_arg(a, 0)))
    }));
    defs.push(def("strrev", vec![p("str", st())], st(), |_, a| {
        s(str_arg(a, 0).graphemes(true).rev().collect::<String>())
    }));
    defs.push(def("trimspace", vec![p("str", st())], st(), |_, a| {
        s(str_arg(a, 0).trim())
    }));
    defs.push(def(
        "trim",
        vec![p("str", st()), p("cutset", st())],
        st(),
        |_, a| {
            let cut: Vec<char> = str_arg(a, 1).chars().collect();
            s(str_arg(a, 0).trim_matches(|c| cut.contains(&c)))
        },
    ));
    defs.push(def(
        "trimprefix",
        vec![p("str", st()), p("prefix", st())],
        st(),
        |_, a| {
            let (x, pre) = (str_arg(a, 0), str_arg(a, 1));
            s(x.strip_prefix(pre).unwrap_or(x))
        },
    ));
    defs.push(def(
        "trimsuffix",
        vec![p("str", st()), p("suffix", st())],
        st(),
        |_, a| {
            let (x, suf) = (str_arg(a, 0), str_arg(a, 1));
            s(x.strip_suffix(suf).unwrap_or(x))
        },
    ));
    defs.push(def(
        "startswith",
        vec![p("str", st()), p("prefix", st())],
        Type::Bool,
        |_, a| Ok(Value::Bool(str_arg(a, 0).starts_with(str_arg(a, 1)))),
    ));
    defs.push(def(
        "endswith",
        vec![p("str", st()), p("suffix", st())],
        Type::Bool,
        |_, a| Ok(Value::Bool(str_arg(a, 0).ends_with(str_arg(a, 1)))),
    ));
    defs.push(def(
        "strcontains",
        vec![p("str", st()), p("substr", st())],
        Type::Bool,
        |_, a| Ok(Value::Bool(str_arg(a, 0).contains(str_arg(a, 1)))),
    ));
    defs.push(def(
        "indent",
        vec![p("spaces", Type::Number), p("str", st())],
        st(),
        |_, a| {
            let n = int_arg(a, 0)?.max(0) as usize;
            let text = str_arg(a, 1);
            let lines = text.matches('\n').count();
            let grown = text.len().saturating_add(lines.saturating_mul(n));
            if let Some(why) = crate::limits::over(grown, crate::limits::MAX_STRING_BYTES, "bytes")
            {
                return Err(FnError::call(why));
            }
            s(text.replace('\n', &format!("\n{}", " ".repeat(n))))
        },
    ));
    defs.push(def(
        "split",
        vec![p("separator", st()), p("str", st())],
        Type::list(st()),
        |_, a| {
            let (sep, x) = (str_arg(a, 0), str_arg(a, 1));
            let parts: Vec<Value> = if sep.is_empty() {
                x.chars().map(|c| Value::String(c.to_string())).collect()
            } else {
                x.split(sep).map(|p| Value::String(p.to_string())).collect()
            };
            Ok(Value::List(Type::String, parts))
        },
    ));
    defs.push(def_var(
        "join",
        vec![p("separator", st())],
        p("lists", Type::list(st())),
        st(),
        |_, a| {
            if a.len() < 2 {
                return Err(FnError::call("at least one list is required"));
            }
            let sep = str_arg(a, 0).len();
            let grown = a[1..]
                .iter()
                .flat_map(|l| l.elements().unwrap_or(&[]))
                .map(|e| e.as_str().map_or(0, str::len).saturating_add(sep))
                .fold(0usize, usize::saturating_add);
            if let Some(why) = crate::limits::over(grown, crate::limits::MAX_STRING_BYTES, "bytes")
            {
                return Err(FnError::call(why));
            }
            let mut parts = Vec::new();
            for (li, l) in a[1..].iter().enumerate() {
                for (ei, e) in l.elements().unwrap_or(&[]).iter().enumerate() {
                    match e.as_str() {
                        Some(x) => parts.push(x.to_string()),
                        None => {
                            return Err(FnError::arg(
                                li + 1,
                                format!("element {ei} is null; cannot concatenate null values"),
                            ))
                        }
                    }
                }
            }
            s(parts.join(str_arg(a, 0)))
        },
    ));
    defs.push(def(
        "substr",
        vec![
            p("str", st()),
            p("offset", Type::Number),
            p("length", Type::Number),
        ],
        st(),
        |_, a| {
            let g: Vec<&str> = str_arg(a, 0).graphemes(true).collect();
            let mut offset = int_arg(a, 1)?;
            let length = int_arg(a, 2)?;
            if offset < 0 {
                offset += g.len() as i64;
            }
            let start = (offset.max(0) as usize).min(g.len());
            let rest = &g[start..];
            let take = if length < 0 {
                rest.len()
            } else {
                (length as usize).min(rest.len())
            };
            s(rest[..take].concat())
        },
    ));
    defs.push(def(
        "regex",
        vec![p("pattern", st()), p("string", st())],
        Type::Dynamic,
        |_, a| {
            let re = compile(str_arg(a, 0))?;
            let text = str_arg(a, 1);
            let caps = re.captures(text).ok_or_else(|| {
                FnError::call("pattern did not match any part of the given string")
            })?;
            captures_value(&re, &caps)
        },
    ));
    defs.push(def(
        "regexall",
        vec![p("pattern", st()), p("string", st())],
        Type::Dynamic,
        |_, a| {
            let re = compile(str_arg(a, 0))?;
            let mut out = Vec::new();
            for caps in re.captures_iter(str_arg(a, 1)) {
                out.push(captures_value(&re, &caps)?);
            }
            let et = out
                .first()
                .map(Value::ty)
                .unwrap_or_else(|| result_type(&re));
            Ok(Value::List(et, out))
        },
    ));
    defs.push(def(
        "replace",
        vec![p("str", st()), p("substr", st()), p("replace", st())],
        st(),
        |_, a| {
            let (x, sub, rep) = (str_arg(a, 0), str_arg(a, 1), str_arg(a, 2));
            if sub.len() > 1 && sub.starts_with('/') && sub.ends_with('/') {
                let re = compile(&sub[1..sub.len() - 1])?;
                return s(re.replace_all(x, rep).into_owned());
            }
            if rep.len() > sub.len() {
                // An empty substring matches at every character boundary.
                let found = if sub.is_empty() {
                    x.chars().count() + 1
                } else {
                    x.matches(sub).count()
                };
                let grown = found
                    .saturating_mul(rep.len() - sub.len())
                    .saturating_add(x.len());
                if let Some(why) =
                    crate::limits::over(grown, crate::limits::MAX_STRING_BYTES, "bytes")
                {
                    return Err(FnError::call(why));
                }
            }
            s(x.replace(sub, rep))
        },
    ));
}

/// Go's `strings.ToUpper`/`ToLower` map each character to one character
/// (simple case mapping): "ß" stays "ß" instead of becoming "SS".
fn simple_case(x: &str, upper: bool) -> String {
    x.chars()
        .map(|c| {
            let mut m: Vec<char> = if upper {
                c.to_uppercase().collect()
            } else {
                c.to_lowercase().collect()
            };
            if m.len() == 1 {
                m.pop().unwrap_or(c)
            } else {
                c
            }
        })
        .collect()
}

/// Unicode title case of one character: upper case, except the Latin
/// digraphs that have a distinct title-case form (Dž, Lj, Nj, Dz).
fn titlecase(c: char) -> char {
    match c {
        '\u{1C4}'..='\u{1C6}' => '\u{1C5}',
        '\u{1C7}'..='\u{1C9}' => '\u{1C8}',
        '\u{1CA}'..='\u{1CC}' => '\u{1CB}',
        '\u{1F1}'..='\u{1F3}' => '\u{1F2}',
        c => {
            let mut m = c.to_uppercase();
            match (m.next(), m.next()) {
                (Some(u), None) => u,
                _ => c,
            }
        }
    }
}

/// Go's `strings.Title`: upper-case the first letter of each word.
fn title(x: &str) -> String {
    let mut out = String::with_capacity(x.len());
    let mut prev_sep = true;
    for c in x.chars() {
        if prev_sep {
            out.push(titlecase(c));
        } else {
            out.push(c);
        }
        // Go's isSeparator: ASCII other than letters, digits and '_'
        // separates; beyond ASCII only white space does.
        prev_sep = if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else {
            c.is_whitespace()
        };
    }
    out
}

fn compile(pattern: &str) -> Result<regex::Regex, FnError> {
    regex::Regex::new(pattern)
        .map_err(|e| FnError::arg(0, format!("invalid regular expression pattern: {e}")))
}

fn result_type(re: &regex::Regex) -> Type {
    let names: Vec<Option<&str>> = re.capture_names().skip(1).collect();
    if names.is_empty() {
        Type::String
    } else if names.iter().all(Option::is_some) {
        Type::object(
            names
                .iter()
                .flatten()
                .map(|n| (n.to_string(), Type::String))
                .collect(),
        )
    } else {
        Type::Tuple(names.iter().map(|_| Type::String).collect())
    }
}

/// No groups: the match; named groups: an object; unnamed: a tuple.
fn captures_value(re: &regex::Regex, caps: &regex::Captures) -> Result<Value, FnError> {
    let names: Vec<Option<&str>> = re.capture_names().skip(1).collect();
    let get = |i: usize| match caps.get(i) {
        Some(m) => Value::String(m.as_str().to_string()),
        None => Value::Null(Type::String),
    };
    if names.is_empty() {
        return Ok(get(0));
    }
    let named = names.iter().filter(|n| n.is_some()).count();
    if named == names.len() {
        Ok(Value::Object(
            names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.unwrap_or_default().to_string(), get(i + 1)))
                .collect(),
        ))
    } else if named == 0 {
        Ok(Value::Tuple((1..=names.len()).map(get).collect()))
    } else {
        Err(FnError::arg(
            0,
            "invalid regular expression pattern: cannot mix both named and unnamed capture groups",
        ))
    }
}
