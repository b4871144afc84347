//! strata's own expression tree. hcl-edit's tree is made for editing (it keeps
//! whitespace and decor); this one is made for evaluation: numbers keep
//! their exact literal text, templates are already dedented and stripped the
//! way Terraform does it, and every node has a [`Span`].

use crate::diag::Span;
use crate::lang::value::Value;

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    And,
    Or,
}

#[derive(Debug, Clone)]
pub enum ObjectKey {
    /// A bare identifier: the key is its name, never a variable's value.
    Name(String),
    Expr(Expr),
}

#[derive(Debug, Clone)]
pub struct ForExpr {
    pub key_var: Option<String>,
    pub value_var: String,
    pub collection: Expr,
    /// Present for object results (`{for k, v in x : k => v}`).
    pub key: Option<Expr>,
    pub value: Expr,
    pub cond: Option<Expr>,
    /// `...` after the value: group values with equal keys into tuples.
    pub grouping: bool,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    /// Boxed: a value is large and most nodes are not literals.
    Literal(Box<Value>),
    Template(Vec<TemplatePart>),
    Tuple(Vec<Expr>),
    Object(Vec<(ObjectKey, Expr)>),
    /// A root name: `var`, `local`, `count`, a for-expression variable...
    Variable(String),
    GetAttr(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    /// `source[*].each`: `each` is evaluated once per element with
    /// [`ExprKind::SplatItem`] standing for the element.
    Splat(Box<Expr>, Box<Expr>),
    SplatItem,
    Call {
        name: String,
        args: Vec<Expr>,
        /// `f(xs...)`: the final argument is expanded into several.
        expand_final: bool,
    },
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    Conditional(Box<Expr>, Box<Expr>, Box<Expr>),
    For(Box<ForExpr>),
    Parens(Box<Expr>),
}

#[derive(Debug, Clone)]
pub enum TemplatePart {
    Literal(String),
    Interp(Expr),
    If {
        cond: Expr,
        then: Vec<TemplatePart>,
        otherwise: Vec<TemplatePart>,
    },
    For {
        key_var: Option<String>,
        value_var: String,
        collection: Expr,
        body: Vec<TemplatePart>,
    },
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    /// Every `root.attr...` traversal inside, for dependency analysis and
    /// "did you mean" suggestions. Calls `f(root, first_attr, span)`.
    pub fn visit_references<'a>(&'a self, f: &mut dyn FnMut(&'a str, Option<&'a str>, Span)) {
        match &self.kind {
            ExprKind::Variable(name) => f(name, None, self.span),
            ExprKind::GetAttr(inner, attr) => {
                if let ExprKind::Variable(name) = &inner.kind {
                    f(name, Some(attr), self.span);
                } else {
                    inner.visit_references(f);
                }
            }
            ExprKind::Literal(_) | ExprKind::SplatItem => {}
            ExprKind::Template(parts) => visit_parts(parts, f),
            ExprKind::Tuple(items) => items.iter().for_each(|e| e.visit_references(f)),
            ExprKind::Object(items) => {
                for (k, v) in items {
                    if let ObjectKey::Expr(k) = k {
                        k.visit_references(f);
                    }
                    v.visit_references(f);
                }
            }
            ExprKind::Index(a, b) | ExprKind::Splat(a, b) | ExprKind::Binary(_, a, b) => {
                a.visit_references(f);
                b.visit_references(f);
            }
            ExprKind::Call { args, .. } => args.iter().for_each(|e| e.visit_references(f)),
            ExprKind::Unary(_, e) | ExprKind::Parens(e) => e.visit_references(f),
            ExprKind::Conditional(a, b, c) => {
                a.visit_references(f);
                b.visit_references(f);
                c.visit_references(f);
            }
            ExprKind::For(fe) => {
                fe.collection.visit_references(f);
                // References to the loop's own variables are not outside references.
                let mut inner = |root: &'a str, attr: Option<&'a str>, span: Span| {
                    if root != fe.value_var && Some(root) != fe.key_var.as_deref() {
                        f(root, attr, span)
                    }
                };
                for e in [fe.key.as_ref(), Some(&fe.value), fe.cond.as_ref()]
                    .into_iter()
                    .flatten()
                {
                    e.visit_references(&mut inner);
                }
            }
        }
    }
}

fn visit_parts<'a>(parts: &'a [TemplatePart], f: &mut dyn FnMut(&'a str, Option<&'a str>, Span)) {
    for p in parts {
        match p {
            TemplatePart::Literal(_) => {}
            TemplatePart::Interp(e) => e.visit_references(f),
            TemplatePart::If {
                cond,
                then,
                otherwise,
            } => {
                cond.visit_references(f);
                visit_parts(then, f);
                visit_parts(otherwise, f);
            }
            TemplatePart::For {
                key_var,
                value_var,
                collection,
                body,
            } => {
                collection.visit_references(f);
                let mut inner = |root: &'a str, attr: Option<&'a str>, span: Span| {
                    if root != value_var && Some(root) != key_var.as_deref() {
                        f(root, attr, span)
                    }
                };
                visit_parts(body, &mut inner);
            }
        }
    }
}
