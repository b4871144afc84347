//! Type conversion and the sensitive mark: tobool, tolist, tomap, tonumber,
//! toset, tostring, sensitive, nonsensitive, issensitive.

use super::{def, p, FnError, FuncDef};
use crate::lang::convert::convert;
use crate::lang::types::Type;
use crate::lang::value::Value;

fn to(v: &Value, t: &Type) -> Result<Value, FnError> {
    convert(v, t).map_err(|e| {
        let msg = match (v.unmarked(), t) {
            (Value::String(s), Type::Number) => format!("cannot convert {s:?} to number; given string must be a decimal representation of a number"),
            (Value::String(s), Type::Bool) => format!("cannot convert {s:?} to bool; only the strings \"true\" or \"false\" are allowed"),
            (_, Type::String) | (_, Type::Number) | (_, Type::Bool) => format!("cannot convert {} to {}", v.ty().friendly_name(), t.friendly_name()),
            _ => e.message.replace(" required", ""),
        };
        FnError::arg(0, msg)
    })
}

pub fn register(defs: &mut Vec<FuncDef>) {
    let any = || p("v", Type::Dynamic).nullable().unknown_ok().marked_ok();
    // The sensitivity functions name their parameter `value`, as Terraform.
    let value = || {
        p("value", Type::Dynamic)
            .nullable()
            .unknown_ok()
            .marked_ok()
    };
    defs.push(def("tostring", vec![any()], Type::String, |_, a| {
        if !a[0].ty().is_primitive() && a[0].ty() != Type::Dynamic {
            return Err(FnError::arg(
                0,
                format!("cannot convert {} to string", a[0].ty().friendly_name()),
            ));
        }
        to(&a[0], &Type::String)
    }));
    defs.push(def("tonumber", vec![any()], Type::Number, |_, a| {
        to(&a[0], &Type::Number)
    }));
    defs.push(def("tobool", vec![any()], Type::Bool, |_, a| {
        to(&a[0], &Type::Bool)
    }));
    defs.push(def(
        "tolist",
        vec![any()],
        Type::list(Type::Dynamic),
        |_, a| {
            to(&a[0], &Type::list(Type::Dynamic)).map_err(|e| {
                FnError::arg(
                    0,
                    format!(
                        "cannot convert {} to list of any single type",
                        a[0].ty().friendly_name()
                    ),
                )
                .or(e)
            })
        },
    ));
    defs.push(def(
        "toset",
        vec![any()],
        Type::set(Type::Dynamic),
        |_, a| {
            to(&a[0], &Type::set(Type::Dynamic)).map_err(|e| {
                FnError::arg(
                    0,
                    format!(
                        "cannot convert {} to set of any single type",
                        a[0].ty().friendly_name()
                    ),
                )
                .or(e)
            })
        },
    ));
    defs.push(def(
        "tomap",
        vec![any()],
        Type::map(Type::Dynamic),
        |_, a| {
            to(&a[0], &Type::map(Type::Dynamic)).map_err(|e| {
                FnError::arg(
                    0,
                    format!(
                        "cannot convert {} to map of any single type",
                        a[0].ty().friendly_name()
                    ),
                )
                .or(e)
            })
        },
    ));
    defs.push(def("sensitive", vec![value()], Type::Dynamic, |_, a| {
        Ok(a[0].clone().mark())
    }));
    defs.push(def("nonsensitive", vec![value()], Type::Dynamic, |_, a| {
        Ok(a[0].clone().unmark().0)
    }));
    defs.push(def(
        "ephemeralasnull",
        vec![value()],
        Type::Dynamic,
        |_, a| Ok(a[0].clone()),
    ));
    defs.push(def("issensitive", vec![value()], Type::Bool, |_, a| {
        Ok(Value::Bool(a[0].is_sensitive()))
    }));
    defs.push(def("type", vec![any()], Type::String, |_, _| {
        Err(FnError::call("the type function is only available at the top level of a console expression, to show the type of a value"))
    }));
}

trait OrErr {
    fn or(self, e: FnError) -> FnError;
}

impl OrErr for FnError {
    /// Keeps the specific element message when the conversion gave one.
    fn or(self, e: FnError) -> FnError {
        if e.message.contains("element") || e.message.contains("attribute") {
            e
        } else {
            self
        }
    }
}
