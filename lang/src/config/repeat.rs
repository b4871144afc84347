//! `count` and `for_each` values: what Terraform accepts and its messages
//! for what it does not. `validate` checks them when they are known; the
//! graph stage expands instances with them.

use crate::diag::{Diag, Span};
use crate::lang::convert::convert;
use crate::lang::types::Type;
use crate::lang::value::Value;

fn invalid(what: &str, detail: impl Into<String>, span: Span) -> Diag {
    Diag::new(
        match what {
            "count" => "strata::config::count",
            "enabled" => "strata::config::enabled",
            _ => "strata::config::for_each",
        },
        format!("Invalid {what} argument"),
        detail,
    )
    .at(span)
}

/// `lifecycle { enabled }` (OpenTofu 1.11): whether the one instance
/// exists. It must be known while planning, and neither null nor
/// sensitive, as OpenTofu requires.
pub fn enabled(v: &Value, span: Span) -> Result<bool, Diag> {
    if v.is_sensitive() {
        return Err(invalid("enabled", "Sensitive values, or values derived from sensitive values, cannot be used as enabled arguments.", span));
    }
    if v.is_null() {
        return Err(invalid(
            "enabled",
            "The given \"enabled\" argument value is null. A boolean is required.",
            span,
        ));
    }
    if !v.is_known() {
        return Err(invalid("enabled", "The \"enabled\" value depends on resource attributes that cannot be determined until apply, so strata cannot tell whether the instance exists. Use a value known before apply.", span));
    }
    match convert(v, &Type::Bool) {
        Ok(Value::Bool(b)) => Ok(b),
        _ => Err(invalid(
            "enabled",
            format!(
                "The given \"enabled\" argument value is unsuitable: bool required, but have {}.",
                v.ty().friendly_name()
            ),
            span,
        )),
    }
}

/// The number of instances, or `None` while it is unknown.
pub fn count(v: &Value, span: Span) -> Result<Option<i64>, Diag> {
    if v.is_sensitive() {
        return Err(invalid("count", "Sensitive values, or values derived from sensitive values, cannot be used as count arguments.", span));
    }
    if v.is_null() {
        return Err(invalid(
            "count",
            "The given \"count\" argument value is null. An integer is required.",
            span,
        ));
    }
    if !v.is_known() {
        return Ok(None);
    }
    let n = match convert(v, &Type::Number) {
        Ok(Value::Number(n)) => n,
        _ => {
            return Err(invalid(
                "count",
                format!(
                "The given \"count\" argument value is unsuitable: number required, but have {}.",
                v.ty().friendly_name()
            ),
                span,
            ))
        }
    };
    let Some(i) = n.to_i64().filter(|_| n.is_integer()) else {
        return Err(invalid(
            "count",
            "The given \"count\" argument value is unsuitable: value must be a whole number.",
            span,
        ));
    };
    if i < 0 {
        return Err(invalid("count", "The given \"count\" argument value is unsuitable: must be greater than or equal to zero.", span));
    }
    if let Some(why) = crate::limits::over(i as usize, crate::limits::MAX_INSTANCES, "instances") {
        return Err(invalid(
            "count",
            format!("The given \"count\" argument value is unsuitable: {why}."),
            span,
        ));
    }
    Ok(Some(i))
}

/// The instance keys and `each.value`s, in key order, or `None` while unknown.
pub fn for_each(v: &Value, span: Span) -> Result<Option<Vec<(String, Value)>>, Diag> {
    if v.contains_sensitive() {
        return Err(invalid("for_each", "Sensitive values, or values derived from sensitive values, cannot be used as for_each arguments. If used, the sensitive value could be exposed as a resource instance key.", span));
    }
    if v.is_null() {
        return Err(invalid(
            "for_each",
            "The given \"for_each\" argument value is null. A map, or set of strings is allowed.",
            span,
        ));
    }
    match v.ty() {
        Type::Map(_) | Type::Object(_) => {}
        Type::Set(e) if *e == Type::String || *e == Type::Dynamic => {}
        Type::Set(e) => {
            return Err(invalid(
                "for_each",
                format!("The given \"for_each\" argument value is unsuitable: \"for_each\" supports maps and sets of strings, but you have provided a set containing type {}.", e.friendly_name()),
                span,
            ))
        }
        Type::Dynamic if !v.is_known() => return Ok(None),
        other => {
            return Err(invalid(
                "for_each",
                format!("The given \"for_each\" argument value is unsuitable: the \"for_each\" argument must be a map, or set of strings, and you have provided a value of type {}.", other.friendly_name()),
                span,
            ))
        }
    }
    if !v.is_known() {
        return Ok(None);
    }
    if let Some(entries) = v.entries() {
        return Ok(Some(
            entries
                .iter()
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect(),
        ));
    }
    let mut out = Vec::new();
    for e in v.elements().unwrap_or(&[]) {
        match e.as_str() {
            Some(s) => out.push((s.to_string(), e.clone())),
            None if e.is_null() => return Err(invalid("for_each", "The given \"for_each\" argument value is unsuitable: \"for_each\" sets must not contain null values.", span)),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: i64) -> Value {
        Value::int(i)
    }

    #[test]
    fn count_accepts_whole_numbers_and_says_why_not() {
        let ok: [(Value, Option<i64>); 5] = [
            (n(0), Some(0)),
            (n(3), Some(3)),
            (Value::string("2"), Some(2)),
            (Value::Unknown(Type::Number), None),
            (Value::unknown(), None),
        ];
        for (v, want) in ok {
            assert_eq!(count(&v, Span::default()).ok(), Some(want), "{v:?}");
        }
        let refused = [
            (n(-1), "greater than or equal to zero"),
            (Value::Null(Type::Number), "is null"),
            (Value::string("x"), "number required"),
            (
                Value::Number(
                    crate::lang::number::Number::parse("2.5").unwrap_or_else(|_| unreachable!()),
                ),
                "whole number",
            ),
            (n(2).mark(), "Sensitive"),
            (n(2_000_000), "instances"),
        ];
        for (v, says) in refused {
            let e = count(&v, Span::default()).expect_err("refused");
            assert!(e.detail.contains(says), "{v:?}: {}", e.detail);
        }
    }

    #[test]
    fn for_each_keys_maps_and_sets_of_strings() {
        let set = Value::new_set(Type::String, vec![Value::string("b"), Value::string("a")]);
        let keys = |v: &Value| {
            for_each(v, Span::default())
                .ok()
                .flatten()
                .map(|es| es.into_iter().map(|(k, _)| k).collect::<Vec<_>>())
        };
        assert_eq!(keys(&set), Some(vec!["a".to_string(), "b".to_string()]));
        let map = Value::Object(
            [("x", n(1)), ("y", n(2))]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        );
        assert_eq!(keys(&map), Some(vec!["x".to_string(), "y".to_string()]));
        assert!(matches!(
            for_each(&Value::unknown(), Span::default()),
            Ok(None)
        ));
        let refused = [
            (
                Value::Tuple(vec![Value::string("a")]),
                "must be a map, or set of strings",
            ),
            (
                Value::new_set(Type::Number, vec![n(1)]),
                "set containing type number",
            ),
            (Value::Null(Type::Map(Box::new(Type::String))), "is null"),
            (
                Value::new_set(Type::String, vec![Value::string("a").mark()]),
                "Sensitive",
            ),
            (
                Value::new_set(Type::String, vec![Value::Null(Type::String)]),
                "must not contain null",
            ),
        ];
        for (v, says) in refused {
            let e = for_each(&v, Span::default()).expect_err("refused");
            assert!(e.detail.contains(says), "{v:?}: {}", e.detail);
        }
    }
}
