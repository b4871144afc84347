//! Type constraints written in configuration: `list(string)`,
//! `map(object({ name = string, size = optional(number, 1) }))`, `any`.

use crate::diag::{Diag, Span};
use crate::eval::{EmptyScope, Evaluator};
use crate::lang::convert::{convert, ConvertError};
use crate::lang::types::{ObjectType, Type};
use crate::lang::value::Value;
use crate::syntax::ast::{ExprKind, ObjectKey};
use crate::syntax::Expr;
use std::collections::BTreeMap;

/// Defaults for `optional(T, default)` attributes, by position in the type.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Defaults {
    pub attrs: BTreeMap<String, DefaultValue>,
    pub children: BTreeMap<String, Defaults>,
    pub elem: Option<Box<Defaults>>,
}

/// Wraps a value so `Defaults` can derive PartialEq for tests.
#[derive(Debug, Clone)]
pub struct DefaultValue(pub Value);

impl PartialEq for DefaultValue {
    fn eq(&self, other: &Self) -> bool {
        self.0.raw_equal(&other.0)
    }
}

impl Defaults {
    fn is_empty(&self) -> bool {
        self.attrs.is_empty() && self.children.is_empty() && self.elem.is_none()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    pub ty: Type,
    pub defaults: Option<Defaults>,
}

fn invalid(detail: impl Into<String>, span: Span) -> Diag {
    Diag::new(
        "strata::config::type_constraint",
        "Invalid type specification",
        detail,
    )
    .at(span)
}

impl Constraint {
    pub fn any() -> Constraint {
        Constraint {
            ty: Type::Dynamic,
            defaults: None,
        }
    }

    pub fn parse(e: &Expr) -> Result<Constraint, Diag> {
        let (ty, defaults) = parse_type(e, false)?;
        Ok(Constraint {
            ty,
            defaults: if defaults.is_empty() {
                None
            } else {
                Some(defaults)
            },
        })
    }

    /// Applies defaults, then converts: how Terraform admits a variable value.
    pub fn admit(&self, v: &Value) -> Result<Value, ConvertError> {
        let v = match &self.defaults {
            Some(d) => apply_defaults(v, &self.ty, d),
            None => v.clone(),
        };
        convert(&v, &self.ty)
    }
}

fn parse_type(e: &Expr, in_object: bool) -> Result<(Type, Defaults), Diag> {
    let none = Defaults::default();
    match &e.kind {
        ExprKind::Parens(inner) => parse_type(inner, in_object),
        ExprKind::Variable(n) => match n.as_str() {
            "string" => Ok((Type::String, none)),
            "number" => Ok((Type::Number, none)),
            "bool" => Ok((Type::Bool, none)),
            "any" => Ok((Type::Dynamic, none)),
            "list" | "set" | "map" | "tuple" | "object" => Err(invalid(
                format!("The {n} type constructor requires one argument specifying the element type."),
                e.span,
            )),
            other => Err(invalid(format!("The keyword {other:?} is not a valid type specification."), e.span)),
        },
        ExprKind::Call { name, args, .. } => {
            let one = || -> Result<&Expr, Diag> {
                match args.as_slice() {
                    [a] => Ok(a),
                    _ => Err(invalid(format!("The {name} type constructor requires one argument specifying the element type."), e.span)),
                }
            };
            match name.as_str() {
                "list" | "set" | "map" => {
                    let (et, d) = parse_type(one()?, false)?;
                    let defaults = Defaults {
                        elem: if d.is_empty() { None } else { Some(Box::new(d)) },
                        ..Defaults::default()
                    };
                    let ty = match name.as_str() {
                        "list" => Type::list(et),
                        "set" => Type::set(et),
                        _ => Type::map(et),
                    };
                    Ok((ty, defaults))
                }
                "tuple" => {
                    let ExprKind::Tuple(items) = &one()?.kind else {
                        return Err(invalid("The tuple type constructor requires a list of element types.", e.span));
                    };
                    let mut tys = Vec::new();
                    for it in items {
                        tys.push(parse_type(it, false)?.0);
                    }
                    Ok((Type::Tuple(tys), none))
                }
                "object" => {
                    let ExprKind::Object(items) = &one()?.kind else {
                        return Err(invalid("The object type constructor requires an object of attribute names and types.", e.span));
                    };
                    let mut ot = ObjectType::default();
                    let mut defaults = Defaults::default();
                    for (k, v) in items {
                        let key = match k {
                            ObjectKey::Name(n) => n.clone(),
                            ObjectKey::Expr(ke) => match &ke.kind {
                                ExprKind::Literal(v) if v.as_str().is_some() => v.as_str().unwrap_or_default().to_string(),
                                _ => return Err(invalid("Object constructor map keys must be attribute names.", ke.span)),
                            },
                        };
                        let (aty, d) = parse_type(v, true)?;
                        if let ExprKind::Call { name, args, .. } = &v.kind {
                            if name == "optional" {
                                ot.optional.insert(key.clone());
                                if let Some(def) = args.get(1) {
                                    let dv = Evaluator::new(&EmptyScope, Default::default()).eval(def)?;
                                    let dv = convert(&dv, &aty).map_err(|err| {
                                        invalid(format!("Invalid default value for optional attribute {key:?}: {err}."), def.span)
                                    })?;
                                    defaults.attrs.insert(key.clone(), DefaultValue(dv));
                                }
                            }
                        }
                        if !d.is_empty() {
                            defaults.children.insert(key.clone(), d);
                        }
                        ot.attrs.insert(key, aty);
                    }
                    Ok((Type::Object(std::sync::Arc::new(ot)), defaults))
                }
                "optional" => {
                    if !in_object {
                        return Err(invalid("Keyword \"optional\" is valid only as a modifier for object type attributes.", e.span));
                    }
                    match args.as_slice() {
                        [t] | [t, _] => parse_type(t, false),
                        _ => Err(invalid("The optional modifier takes one or two arguments: a type and a default value.", e.span)),
                    }
                }
                other => Err(invalid(format!("Keyword {other:?} is not a valid type constructor."), e.span)),
            }
        }
        _ => Err(invalid("A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).", e.span)),
    }
}

/// Fills absent or null optional attributes with their defaults, all the way down.
pub fn apply_defaults(v: &Value, ty: &Type, d: &Defaults) -> Value {
    if let Value::Sensitive(inner) = v {
        return apply_defaults(inner, ty, d).mark();
    }
    if v.is_null() || !v.is_known() {
        return v.clone();
    }
    match (v, ty) {
        (Value::Object(m) | Value::Map(_, m), Type::Object(ot)) => {
            let mut out = m.clone();
            for (k, dv) in &d.attrs {
                if out.get(k).is_none_or(Value::is_null) {
                    out.insert(k.clone(), dv.0.clone());
                }
            }
            for (k, child) in &d.children {
                if let (Some(cv), Some(cty)) = (out.get(k).cloned(), ot.attrs.get(k)) {
                    out.insert(k.clone(), apply_defaults(&cv, cty, child));
                }
            }
            Value::Object(out)
        }
        (
            Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs),
            Type::List(et) | Type::Set(et),
        ) => match &d.elem {
            Some(ed) => Value::Tuple(vs.iter().map(|x| apply_defaults(x, et, ed)).collect()),
            None => v.clone(),
        },
        (Value::Map(_, m) | Value::Object(m), Type::Map(et)) => match &d.elem {
            Some(ed) => Value::Object(
                m.iter()
                    .map(|(k, x)| (k.clone(), apply_defaults(x, et, ed)))
                    .collect(),
            ),
            None => v.clone(),
        },
        _ => v.clone(),
    }
}
