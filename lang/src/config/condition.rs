//! What a condition's result means, once for `validation`, `precondition`
//! and `postcondition` blocks: true holds, false fails with the block's
//! error message, unknown waits for the apply, anything else is an error.

use super::Condition;
use crate::diag::Diag;
use crate::eval::Evaluator;
use crate::lang::convert::convert;
use crate::lang::types::Type;
use crate::lang::value::Value;

pub enum Verdict {
    Holds,
    /// Not known until the apply: checked again then.
    Unknown,
    /// False, with the error message.
    Fails(String),
}

/// Where a condition stands, for the error a failure makes.
#[derive(Clone, Copy)]
pub enum Kind {
    Precondition,
    Postcondition,
    OutputPrecondition,
}

impl Kind {
    pub fn summary(self) -> &'static str {
        match self {
            Kind::Precondition => "Resource precondition failed",
            Kind::Postcondition => "Resource postcondition failed",
            Kind::OutputPrecondition => "Module output value precondition failed",
        }
    }
}

/// Evaluates `c`; an error when its condition is not a boolean or its
/// message not a string.
pub fn judge(ev: &mut Evaluator, c: &Condition) -> Result<Verdict, Diag> {
    let result = ev.eval(&c.condition)?;
    if !result.is_known() {
        return Ok(Verdict::Unknown);
    }
    let invalid = |why: &str| {
        Diag::new(
            "strata::config::condition_result",
            "Invalid condition result",
            format!("The condition must be true or false, {why}."),
        )
        .at(c.condition.span)
    };
    let holds = match convert(result.unmarked(), &Type::Bool) {
        Ok(Value::Bool(b)) => b,
        Ok(_) => return Err(invalid("not null")),
        Err(e) => return Err(invalid(&format!("but {e}"))),
    };
    if holds {
        return Ok(Verdict::Holds);
    }
    let message = ev.eval(&c.error_message)?;
    let text = if message.contains_sensitive() {
        // The message would show a secret: say so rather than show it.
        "The error message included a sensitive value, so it is not shown.".to_string()
    } else if !message.is_known() {
        "The error message is not known yet: it uses values only the apply will know.".to_string()
    } else {
        match convert(&message, &Type::String) {
            Ok(Value::String(s)) => s,
            _ => {
                return Err(Diag::new(
                    "strata::config::condition_message",
                    "Invalid error message",
                    "The error message must be a string.",
                )
                .at(c.error_message.span))
            }
        }
    };
    Ok(Verdict::Fails(text))
}

/// The error for a condition that does not hold.
pub fn failure(kind: Kind, c: &Condition, message: &str) -> Diag {
    Diag::new("strata::config::condition_failed", kind.summary(), message).at(c.condition.span)
}

/// Every condition in `conds` judged in turn: the errors of those that fail
/// or cannot be judged, and whether any was still unknown.
pub fn judge_all(ev: &mut Evaluator, conds: &[Condition], kind: Kind) -> (Vec<Diag>, bool) {
    let mut errors = Vec::new();
    let mut unknown = false;
    for c in conds {
        match judge(ev, c) {
            Ok(Verdict::Holds) => {}
            Ok(Verdict::Unknown) => unknown = true,
            Ok(Verdict::Fails(m)) => errors.push(failure(kind, c, &m)),
            Err(d) => errors.push(d),
        }
    }
    (errors, unknown)
}
