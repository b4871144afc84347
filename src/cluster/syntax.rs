//! Small builders of configuration syntax: the module call and provider
//! blocks the expansion writes are made of these.

use crate::diag::Span;
use crate::lang::value::Value;
use crate::syntax::ast::ObjectKey;
use crate::syntax::{Attribute, Body, Expr, ExprKind};

pub(super) fn name_expr(name: &str, span: Span) -> Expr {
    Expr::new(ExprKind::Variable(name.to_string()), span)
}

pub(super) fn get_attr(e: Expr, attr: &str) -> Expr {
    let span = e.span;
    Expr::new(ExprKind::GetAttr(Box::new(e), attr.to_string()), span)
}

pub(super) fn literal(v: Value, span: Span) -> Expr {
    Expr::new(ExprKind::Literal(Box::new(v)), span)
}

pub(super) fn object(items: Vec<(String, Expr)>, span: Span) -> Expr {
    Expr::new(
        ExprKind::Object(
            items
                .into_iter()
                .map(|(k, v)| (ObjectKey::Name(k), v))
                .collect(),
        ),
        span,
    )
}

pub(super) fn attribute(name: &str, expr: Expr) -> Attribute {
    Attribute {
        name: name.to_string(),
        name_span: expr.span,
        span: expr.span,
        expr,
    }
}

/// A block's attributes with a later block's laid over them.
pub(super) fn merged<'a>(base: Option<&'a Body>, over: Option<&'a Body>) -> Vec<&'a Attribute> {
    let mut out: Vec<&Attribute> = base.map(|b| b.attrs.iter().collect()).unwrap_or_default();
    for a in over.map(|b| b.attrs.as_slice()).unwrap_or_default() {
        out.retain(|x| x.name != a.name);
        out.push(a);
    }
    out
}
