//! strata's expression tree, made for evaluation (an editor's tree would keep
//! whitespace and comments; `fmt` works on the text instead): numbers keep
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

/// `first op rhs op rhs …`: every operator of one precedence level (a
/// tighter one nests inside an operand), left-associative. Flat, so that
/// a long chain costs no depth to parse, evaluate or drop.
#[derive(Debug, Clone)]
pub struct Chain {
    pub first: Expr,
    pub rest: Vec<Operation>,
}

#[derive(Debug, Clone)]
pub struct Operation {
    pub op: BinaryOp,
    pub rhs: Expr,
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
    /// Binary operators of one precedence level, applied left to right.
    Binary(Box<Chain>),
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

/// Dropping a tree recurses as deep as it nests (up to
/// `syntax::MAX_NESTING`): each level takes more stack when it runs short,
/// as parsing and evaluation do.
impl Drop for Expr {
    fn drop(&mut self) {
        let kind = std::mem::replace(&mut self.kind, ExprKind::SplatItem);
        if !matches!(kind, ExprKind::SplatItem | ExprKind::Variable(_)) {
            stacker::maybe_grow(crate::par::RED_ZONE, crate::par::GROW, move || drop(kind));
        }
    }
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    /// A static reference written out as an address (`t.n["k"]`,
    /// `module.a[0]`); `None` for anything else (a call, a computed key).
    pub fn address_text(&self) -> Option<String> {
        self.address_text_by(&mut |key| match &key.kind {
            ExprKind::Literal(v) => Some((**v).clone()),
            _ => None,
        })
    }

    /// As [`Expr::address_text`], each key's value given by `key` (an
    /// import's `to = t.n[each.key]`).
    pub fn address_text_by(&self, key: &mut dyn FnMut(&Expr) -> Option<Value>) -> Option<String> {
        match &self.kind {
            ExprKind::Variable(n) => Some(n.clone()),
            ExprKind::GetAttr(inner, a) => Some(format!("{}.{a}", inner.address_text_by(key)?)),
            ExprKind::Index(inner, k) => {
                let k = match key(k)?.unmarked() {
                    Value::String(s) => serde_json::Value::String(s.clone()).to_string(),
                    Value::Number(n) => n.to_text(),
                    _ => return None,
                };
                Some(format!("{}[{k}]", inner.address_text_by(key)?))
            }
            _ => None,
        }
    }

    /// The key expressions of a reference, outermost last: `t.n[each.key]`
    /// gives `each.key`.
    pub fn address_keys(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::GetAttr(inner, _) => inner.address_keys(),
            ExprKind::Index(inner, k) => {
                let mut keys = inner.address_keys();
                keys.push(k);
                keys
            }
            _ => Vec::new(),
        }
    }

    /// The names of a static reference, keys left out: `module.a[0].t.n`
    /// gives `module`, `a`, `t`, `n`, and whether the last is indexed.
    pub fn address_names(&self) -> Option<(Vec<&str>, bool)> {
        match &self.kind {
            ExprKind::Variable(n) => Some((vec![n.as_str()], false)),
            ExprKind::GetAttr(inner, a) => {
                let (mut names, _) = inner.address_names()?;
                names.push(a);
                Some((names, false))
            }
            ExprKind::Index(inner, _) => {
                let (names, _) = inner.address_names()?;
                Some((names, true))
            }
            _ => None,
        }
    }

    /// Calls `f` on the span of this node and of every node inside it.
    pub fn map_spans(&mut self, f: &mut dyn FnMut(&mut Span)) {
        f(&mut self.span);
        match &mut self.kind {
            ExprKind::Literal(_) | ExprKind::Variable(_) | ExprKind::SplatItem => {}
            ExprKind::Template(parts) => parts_map_spans(parts, f),
            ExprKind::Tuple(items) => items.iter_mut().for_each(|e| e.map_spans(f)),
            ExprKind::Object(items) => {
                for (k, v) in items {
                    if let ObjectKey::Expr(k) = k {
                        k.map_spans(f);
                    }
                    v.map_spans(f);
                }
            }
            ExprKind::GetAttr(e, _) | ExprKind::Unary(_, e) | ExprKind::Parens(e) => e.map_spans(f),
            ExprKind::Index(a, b) | ExprKind::Splat(a, b) => {
                a.map_spans(f);
                b.map_spans(f);
            }
            ExprKind::Binary(chain) => {
                chain.first.map_spans(f);
                chain.rest.iter_mut().for_each(|o| o.rhs.map_spans(f));
            }
            ExprKind::Call { args, .. } => args.iter_mut().for_each(|e| e.map_spans(f)),
            ExprKind::Conditional(a, b, c) => {
                a.map_spans(f);
                b.map_spans(f);
                c.map_spans(f);
            }
            ExprKind::For(fe) => {
                let fe = &mut **fe;
                fe.collection.map_spans(f);
                fe.value.map_spans(f);
                for e in [fe.key.as_mut(), fe.cond.as_mut()].into_iter().flatten() {
                    e.map_spans(f);
                }
            }
        }
    }

    /// Calls `f` for every reference inside: the root name (`var`, `local`,
    /// `aws_vpc`...), the attribute names that follow it up to the first
    /// index (`["main", "id"]` for `aws_vpc.main.id`), and the span. Loop
    /// variables of for-expressions are not references.
    pub fn visit_references<'a>(&'a self, f: &mut dyn FnMut(&'a str, &[&'a str], Span)) {
        self.refs(None, &mut |e, root, attrs| f(root, attrs, e.span))
    }

    /// As [`Expr::visit_references`], leaving out the arguments of calls
    /// to the function `skip` names (`ephemeralasnull` removes what its
    /// argument is derived from).
    pub fn visit_references_outside<'a>(
        &'a self,
        skip: &str,
        f: &mut dyn FnMut(&'a str, &[&'a str], Span),
    ) {
        self.refs(Some(skip), &mut |e, root, attrs| f(root, attrs, e.span))
    }

    /// Calls `f` with every whole traversal inside (`aws_vpc.main.id`,
    /// `aws_subnet.a[0].id`, as far as it goes), for callers that read
    /// its steps themselves; loop variables left out, as above.
    pub fn visit_traversals<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        self.refs(None, &mut |e, _, _| f(e))
    }

    fn refs<'a>(&'a self, skip: Option<&str>, f: &mut RefVisitor<'a, '_>) {
        match &self.kind {
            ExprKind::Variable(_) | ExprKind::GetAttr(..) | ExprKind::Index(..) => {
                let mut attrs = Vec::new();
                let mut keys = Vec::new();
                match traversal(self, &mut attrs, &mut keys) {
                    Some(root) => {
                        f(self, root, &attrs);
                        for k in keys {
                            k.refs(skip, f);
                        }
                    }
                    None => match &self.kind {
                        ExprKind::GetAttr(inner, _) => inner.refs(skip, f),
                        ExprKind::Index(a, b) => {
                            a.refs(skip, f);
                            b.refs(skip, f);
                        }
                        _ => {}
                    },
                }
            }
            ExprKind::Literal(_) | ExprKind::SplatItem => {}
            ExprKind::Template(parts) => visit_parts(parts, skip, f),
            ExprKind::Tuple(items) => items.iter().for_each(|e| e.refs(skip, f)),
            ExprKind::Object(items) => {
                for (k, v) in items {
                    if let ObjectKey::Expr(k) = k {
                        k.refs(skip, f);
                    }
                    v.refs(skip, f);
                }
            }
            ExprKind::Splat(a, b) => {
                a.refs(skip, f);
                b.refs(skip, f);
            }
            ExprKind::Binary(chain) => {
                chain.first.refs(skip, f);
                chain.rest.iter().for_each(|o| o.rhs.refs(skip, f));
            }
            ExprKind::Call { name, .. } if Some(name.as_str()) == skip => {}
            ExprKind::Call { args, .. } => args.iter().for_each(|e| e.refs(skip, f)),
            ExprKind::Unary(_, e) | ExprKind::Parens(e) => e.refs(skip, f),
            ExprKind::Conditional(a, b, c) => {
                a.refs(skip, f);
                b.refs(skip, f);
                c.refs(skip, f);
            }
            ExprKind::For(fe) => {
                fe.collection.refs(skip, f);
                let mut inner = |e: &'a Expr, root: &'a str, attrs: &[&'a str]| {
                    if root != fe.value_var && Some(root) != fe.key_var.as_deref() {
                        f(e, root, attrs)
                    }
                };
                for e in [fe.key.as_ref(), Some(&fe.value), fe.cond.as_ref()]
                    .into_iter()
                    .flatten()
                {
                    e.refs(skip, &mut inner);
                }
            }
        }
    }
}

/// The root name of an attribute/index chain (`local.m[var.k].x`), collecting
/// the attribute names before the first index and the index expressions.
fn traversal<'a>(
    e: &'a Expr,
    attrs: &mut Vec<&'a str>,
    keys: &mut Vec<&'a Expr>,
) -> Option<&'a str> {
    match &e.kind {
        ExprKind::Variable(name) => Some(name),
        ExprKind::GetAttr(inner, attr) => {
            let root = traversal(inner, attrs, keys)?;
            if keys.is_empty() {
                attrs.push(attr);
            }
            Some(root)
        }
        ExprKind::Index(inner, key) => {
            let root = traversal(inner, attrs, keys)?;
            keys.push(key);
            Some(root)
        }
        _ => None,
    }
}

/// What a reference visit calls: the traversal, its root name, and the
/// attribute names after the root up to the first index.
type RefVisitor<'a, 'f> = dyn FnMut(&'a Expr, &'a str, &[&'a str]) + 'f;

fn visit_parts<'a>(parts: &'a [TemplatePart], skip: Option<&str>, f: &mut RefVisitor<'a, '_>) {
    for p in parts {
        match p {
            TemplatePart::Literal(_) => {}
            TemplatePart::Interp(e) => e.refs(skip, f),
            TemplatePart::If {
                cond,
                then,
                otherwise,
            } => {
                cond.refs(skip, f);
                visit_parts(then, skip, f);
                visit_parts(otherwise, skip, f);
            }
            TemplatePart::For {
                key_var,
                value_var,
                collection,
                body,
            } => {
                collection.refs(skip, f);
                let mut inner = |e: &'a Expr, root: &'a str, attrs: &[&'a str]| {
                    if root != value_var && Some(root) != key_var.as_deref() {
                        f(e, root, attrs)
                    }
                };
                visit_parts(body, skip, &mut inner);
            }
        }
    }
}

fn parts_map_spans(parts: &mut [TemplatePart], f: &mut dyn FnMut(&mut Span)) {
    for p in parts {
        match p {
            TemplatePart::Literal(_) => {}
            TemplatePart::Interp(e) => e.map_spans(f),
            TemplatePart::If {
                cond,
                then,
                otherwise,
            } => {
                cond.map_spans(f);
                parts_map_spans(then, f);
                parts_map_spans(otherwise, f);
            }
            TemplatePart::For {
                collection, body, ..
            } => {
                collection.map_spans(f);
                parts_map_spans(body, f);
            }
        }
    }
}
