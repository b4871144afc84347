//! Operators, attribute access and indexing.

use crate::diag::{Diag, Span};
use crate::lang::convert::convert;
use crate::lang::number::Number;
use crate::lang::types::Type;
use crate::lang::value::Value;
use crate::syntax::ast::{BinaryOp, UnaryOp};

fn diag(code: &'static str, summary: &str, detail: impl Into<String>, span: Span) -> Diag {
    Diag::new(code, summary, detail).at(span)
}

pub fn get_attr(v: Value, attr: &str, span: Span) -> Result<Value, Diag> {
    let (v, marked) = v.unmark();
    let out = match &v {
        Value::Null(_) => {
            return Err(diag(
                "strata::eval::attribute",
                "Attempt to get attribute from null value",
                "This value is null, so it does not have any attributes.",
                span,
            ))
        }
        Value::Unknown(t) => Value::Unknown(match t {
            Type::Object(o) => match o.attrs.get(attr) {
                Some(t) => t.clone(),
                None => return Err(no_attr(attr, span)),
            },
            Type::Map(e) => (**e).clone(),
            _ => Type::Dynamic,
        }),
        Value::Object(m) => m.get(attr).cloned().ok_or_else(|| no_attr(attr, span))?,
        Value::Map(_, m) => m.get(attr).cloned().ok_or_else(|| {
            diag(
                "strata::eval::attribute",
                "Missing map element",
                format!("This map does not have an element with the key {attr:?}."),
                span,
            )
        })?,
        other => {
            return Err(diag(
                "strata::eval::attribute",
                "Unsupported attribute",
                format!(
                    "Can't access attributes on a {}.{}",
                    other.ty().friendly_name(),
                    if matches!(other, Value::List(..) | Value::Tuple(_) | Value::Set(..)) {
                        " Did you mean to access an attribute for each element of the collection? If so, use the splat syntax [*]."
                    } else {
                        ""
                    }
                ),
                span,
            ))
        }
    };
    Ok(out.mark_if(marked))
}

fn no_attr(attr: &str, span: Span) -> Diag {
    diag(
        "strata::eval::attribute",
        "Unsupported attribute",
        format!("This object does not have an attribute named {attr:?}."),
        span,
    )
}

fn invalid_index(detail: &str, span: Span) -> Diag {
    diag("strata::eval::index", "Invalid index", detail, span)
}

pub fn index(coll: Value, key: Value, span: Span) -> Result<Value, Diag> {
    let (coll, m1) = coll.unmark();
    let (key, m2) = key.unmark();
    let marked = m1 || m2;
    if coll.is_null() {
        return Err(invalid_index(
            "Can't use a null value as an indexed collection.",
            span,
        ));
    }
    if key.is_null() {
        return Err(invalid_index("Can't use a null value as a key.", span));
    }
    let elem_ty = |t: &Type| match t {
        Type::List(e) | Type::Map(e) => (**e).clone(),
        _ => Type::Dynamic,
    };
    if !coll.is_known() || !key.is_known() {
        return Ok(Value::Unknown(elem_ty(&coll.ty())).mark_if(marked));
    }
    let out = match &coll {
        Value::List(_, vs) | Value::Tuple(vs) => {
            let n = match convert(&key, &Type::Number) {
                Ok(Value::Number(n)) => n,
                _ => {
                    return Err(invalid_index(
                        "The given key does not identify an element in this collection value: a number is required.",
                        span,
                    ))
                }
            };
            if !n.is_integer() {
                return Err(invalid_index(
                    "The given key does not identify an element in this collection value: indexing a sequence requires a whole number, but the given index has a fractional part.",
                    span,
                ));
            }
            if n.is_negative() {
                return Err(invalid_index(
                    "The given key does not identify an element in this collection value: a negative number is not a valid index for a sequence.",
                    span,
                ));
            }
            match n.to_i64().and_then(|i| vs.get(i as usize)) {
                Some(v) => v.clone(),
                None => {
                    return Err(invalid_index(
                        "The given key does not identify an element in this collection value: the collection has no element for the given index.",
                        span,
                    ))
                }
            }
        }
        Value::Map(_, m) | Value::Object(m) => {
            let k = match convert(&key, &Type::String) {
                Ok(Value::String(s)) => s,
                _ => {
                    return Err(invalid_index(
                        "The given key does not identify an element in this collection value: string required.",
                        span,
                    ))
                }
            };
            match m.get(&k) {
                Some(v) => v.clone(),
                None => {
                    return Err(invalid_index(
                        "The given key does not identify an element in this collection value.",
                        span,
                    ))
                }
            }
        }
        Value::Set(..) => {
            return Err(invalid_index(
                "Elements of a set are identified only by their value and don't have any separate index or key to select with, so it's only possible to perform operations across all elements of the set.",
                span,
            ))
        }
        _ => {
            return Err(invalid_index("This value does not have any indices.", span));
        }
    };
    Ok(out.mark_if(marked))
}

fn operand_error(which: &str, detail: &str, span: Span) -> Diag {
    diag(
        "strata::eval::operand",
        "Invalid operand",
        format!("Unsuitable value for {which} operand: {detail}."),
        span,
    )
}

fn to_number(v: &Value, which: &str, span: Span) -> Result<Option<Number>, Diag> {
    if v.is_null() {
        return Err(operand_error(which, "argument must not be null", span));
    }
    if !v.is_known() {
        return match convert(v, &Type::Number) {
            Ok(_) => Ok(None),
            Err(_) => Err(operand_error(which, "number required", span)),
        };
    }
    match convert(v, &Type::Number) {
        Ok(Value::Number(n)) => Ok(Some(n)),
        Ok(_) => Ok(None),
        Err(e) => Err(operand_error(which, &e.message, span)),
    }
}

fn to_bool(v: &Value, which: &str, span: Span) -> Result<Option<bool>, Diag> {
    if v.is_null() {
        return Err(operand_error(which, "argument must not be null", span));
    }
    match convert(v, &Type::Bool) {
        Ok(Value::Bool(b)) => Ok(Some(b)),
        Ok(_) => Ok(None),
        Err(e) => Err(operand_error(which, &e.message, span)),
    }
}

pub fn check_logical_operand(v: &Value, span: Span, left: bool) -> Result<(), Diag> {
    to_bool(v.unmarked(), if left { "left" } else { "right" }, span).map(|_| ())
}

pub fn unary(op: UnaryOp, v: Value, span: Span) -> Result<Value, Diag> {
    let (v, marked) = v.unmark();
    let out = match op {
        UnaryOp::Neg => match to_number(&v, "unary", span)? {
            Some(n) => Value::Number(n.neg()),
            None => Value::Unknown(Type::Number),
        },
        UnaryOp::Not => match to_bool(&v, "unary", span)? {
            Some(b) => Value::Bool(!b),
            None => Value::Unknown(Type::Bool),
        },
    };
    Ok(out.mark_if(marked))
}

pub fn binary(op: BinaryOp, l: Value, r: Value, ls: Span, rs: Span) -> Result<Value, Diag> {
    let (l, m1) = l.unmark_deep();
    let (r, m2) = r.unmark_deep();
    let marked = m1 || m2;
    let span = ls.to(rs);
    let out = match op {
        BinaryOp::Eq | BinaryOp::NotEq => match l.equals(&r) {
            Some(eq) => Value::Bool(eq == (op == BinaryOp::Eq)),
            None => Value::Unknown(Type::Bool),
        },
        BinaryOp::And | BinaryOp::Or => {
            let a = to_bool(&l, "left", ls)?;
            let b = to_bool(&r, "right", rs)?;
            match (a, b) {
                (Some(a), Some(b)) => {
                    Value::Bool(if op == BinaryOp::And { a && b } else { a || b })
                }
                // A known deciding side settles the answer even when the other is unknown.
                (Some(x), None) | (None, Some(x)) if x == (op == BinaryOp::Or) => Value::Bool(x),
                _ => Value::Unknown(Type::Bool),
            }
        }
        _ => {
            let a = to_number(&l, "left", ls)?;
            let b = to_number(&r, "right", rs)?;
            let (Some(a), Some(b)) = (a, b) else {
                let ty = if matches!(
                    op,
                    BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq
                ) {
                    Type::Bool
                } else {
                    Type::Number
                };
                return Ok(Value::Unknown(ty).mark_if(marked));
            };
            use std::cmp::Ordering::*;
            let arith = |res: Result<Number, crate::lang::number::ArithError>| {
                res.map(Value::Number).map_err(|e| {
                    diag(
                        "strata::eval::arithmetic",
                        "Error in arithmetic",
                        format!("{}.", capitalize(&e.to_string())),
                        span,
                    )
                })
            };
            match op {
                BinaryOp::Add => arith(a.add(&b))?,
                BinaryOp::Sub => arith(a.sub(&b))?,
                BinaryOp::Mul => arith(a.mul(&b))?,
                // As in Terraform: x / 0 is ±Inf, 0 / 0 an error.
                BinaryOp::Div => match a.div(&b) {
                    Err(
                        e @ (crate::lang::number::ArithError::ZeroDivZero
                        | crate::lang::number::ArithError::InfDivInf),
                    ) => {
                        return Err(diag(
                            "strata::eval::arithmetic",
                            "Operation failed",
                            format!("Error during operation: {e}."),
                            span,
                        ))
                    }
                    r => arith(r)?,
                },
                BinaryOp::Mod => arith(a.rem(&b))?,
                BinaryOp::Lt => Value::Bool(a.compare(&b) == Less),
                BinaryOp::LtEq => Value::Bool(a.compare(&b) != Greater),
                BinaryOp::Gt => Value::Bool(a.compare(&b) == Greater),
                BinaryOp::GtEq => Value::Bool(a.compare(&b) != Less),
                _ => unreachable!("handled above"),
            }
        }
    };
    Ok(out.mark_if(marked))
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
