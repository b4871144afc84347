//! Lowering hcl-edit's tree into strata's: exact number literals from the
//! source text, Terraform's heredoc dedent and strip markers, spans on
//! every node.

use super::ast::*;
use super::{Attribute, Block, Body};
use crate::diag::{Diag, FileId, Span};
use crate::lang::number::Number;
use crate::lang::value::Value;
use hcl_edit::expr as he;
use hcl_edit::template as ht;
use hcl_edit::Span as _;
use unicode_normalization::UnicodeNormalization;

pub(super) struct Lowerer<'s> {
    pub file: FileId,
    pub src: &'s str,
    /// Added to hcl-edit's offsets when a piece of the file was parsed alone.
    pub base: usize,
    /// Current expression depth; long operator chains nest without brackets.
    depth: std::cell::Cell<usize>,
}

impl<'s> Lowerer<'s> {
    pub fn new(file: FileId, src: &'s str, base: usize) -> Lowerer<'s> {
        Lowerer {
            file,
            src,
            base,
            depth: std::cell::Cell::new(0),
        }
    }
}

impl Lowerer<'_> {
    fn span(&self, r: Option<std::ops::Range<usize>>) -> Span {
        match r {
            Some(r) => Span::new(self.file, r.start + self.base, r.end + self.base),
            None => Span::new(self.file, self.base, self.base),
        }
    }

    pub fn body(&self, body: &hcl_edit::structure::Body) -> Result<Body, Diag> {
        let attrs = body.iter().filter(|s| s.is_attribute()).count();
        let mut out = Body {
            attrs: Vec::with_capacity(attrs),
            blocks: Vec::with_capacity(body.len() - attrs),
            span: self.span(body.span()),
            json: false,
        };
        for st in body.iter() {
            match st {
                hcl_edit::structure::Structure::Attribute(a) => out.attrs.push(Attribute {
                    name: a.key.as_str().to_string(),
                    name_span: self.span(a.key.span()),
                    expr: self.expr(&a.value)?,
                    span: self.span(a.span()),
                }),
                hcl_edit::structure::Structure::Block(b) => out.blocks.push(Block {
                    kind: b.ident.as_str().to_string(),
                    kind_span: self.span(b.ident.span()),
                    labels: b
                        .labels
                        .iter()
                        .map(|l| (l.as_str().to_string(), self.span(l.span())))
                        .collect(),
                    body: self.body(&b.body)?,
                    span: self.span(b.span()),
                }),
            }
        }
        Ok(out)
    }

    pub fn expr(&self, e: &he::Expression) -> Result<Expr, Diag> {
        let span = self.span(e.span());
        if self.depth.get() >= super::MAX_NESTING {
            return Err(super::too_deep().at(span));
        }
        self.depth.set(self.depth.get() + 1);
        let r = self.expr_inner(e, span);
        self.depth.set(self.depth.get() - 1);
        r
    }

    fn expr_inner(&self, e: &he::Expression, span: Span) -> Result<Expr, Diag> {
        let kind = match e {
            he::Expression::Null(_) => ExprKind::Literal(Box::new(Value::null())),
            he::Expression::Bool(b) => ExprKind::Literal(Box::new(Value::Bool(*b.value()))),
            he::Expression::Number(_) => {
                // hcl-edit folds a leading minus into the literal ("- 2").
                let raw = self.text(span);
                let text = match raw.strip_prefix('-') {
                    Some(rest) => format!("-{}", rest.trim_start()),
                    None => raw.to_string(),
                };
                let text = text.as_str();
                let n = Number::parse(text).map_err(|e| {
                    let detail = match e {
                        crate::lang::number::ParseNumberError::OutOfRange => format!(
                            "{text:?} is out of range: the exponent may be at most {}.",
                            crate::lang::number::MAX_DECIMAL_EXPONENT
                        ),
                        crate::lang::number::ParseNumberError::Syntax => {
                            format!("{text:?} is not a number.")
                        }
                    };
                    Diag::new("strata::syntax::number", "Invalid number literal", detail).at(span)
                })?;
                ExprKind::Literal(Box::new(Value::Number(n)))
            }
            he::Expression::String(s) => ExprKind::Literal(Box::new(Value::String(nfc(s.value())))),
            he::Expression::Array(items) => ExprKind::Tuple(
                items
                    .iter()
                    .map(|i| self.expr(i))
                    .collect::<Result<_, _>>()?,
            ),
            he::Expression::Object(obj) => {
                let mut items = Vec::with_capacity(obj.len());
                for (k, v) in obj.iter() {
                    let key = match k {
                        // Read from the original text: the parser's copy may
                        // have renamed a repeated key (see `parse_lenient`).
                        he::ObjectKey::Ident(id) => ObjectKey::Name(match id.span() {
                            Some(r) => self.text(self.span(Some(r))).to_string(),
                            None => id.as_str().to_string(),
                        }),
                        he::ObjectKey::Expression(ke) => match ke {
                            // A bare keyword as a key names itself, as in HCL.
                            he::Expression::Null(_) => ObjectKey::Name("null".into()),
                            he::Expression::Bool(b) => ObjectKey::Name(b.value().to_string()),
                            he::Expression::Variable(v) => ObjectKey::Name(v.as_str().to_string()),
                            other => ObjectKey::Expr(self.expr(other)?),
                        },
                    };
                    items.push((key, self.expr(v.expr())?));
                }
                ExprKind::Object(items)
            }
            he::Expression::StringTemplate(t) => {
                let mut toks = Vec::new();
                for el in t.iter() {
                    self.tokens(el, &mut toks, Escapes::Quoted)?;
                }
                ExprKind::Template(build_template(toks, span)?)
            }
            he::Expression::HeredocTemplate(_) => self.heredoc(span)?,
            he::Expression::Parenthesis(p) => ExprKind::Parens(Box::new(self.expr(p.inner())?)),
            he::Expression::Variable(v) => ExprKind::Variable(v.as_str().to_string()),
            he::Expression::Conditional(c) => ExprKind::Conditional(
                Box::new(self.expr(&c.cond_expr)?),
                Box::new(self.expr(&c.true_expr)?),
                Box::new(self.expr(&c.false_expr)?),
            ),
            he::Expression::FuncCall(c) => {
                let mut name = String::new();
                for ns in c.name.namespace.iter() {
                    name.push_str(ns.as_str());
                    name.push_str("::");
                }
                name.push_str(c.name.name.as_str());
                ExprKind::Call {
                    name,
                    args: c
                        .args
                        .iter()
                        .map(|a| self.expr(a))
                        .collect::<Result<_, _>>()?,
                    expand_final: c.args.expand_final(),
                }
            }
            he::Expression::Traversal(t) => return self.traversal(t, span),
            he::Expression::UnaryOp(u) => ExprKind::Unary(
                match u.operator.value() {
                    he::UnaryOperator::Neg => UnaryOp::Neg,
                    he::UnaryOperator::Not => UnaryOp::Not,
                },
                Box::new(self.expr(&u.expr)?),
            ),
            he::Expression::BinaryOp(b) => {
                use he::BinaryOperator as B;
                let op = match b.operator.value() {
                    B::Plus => BinaryOp::Add,
                    B::Minus => BinaryOp::Sub,
                    B::Mul => BinaryOp::Mul,
                    B::Div => BinaryOp::Div,
                    B::Mod => BinaryOp::Mod,
                    B::Eq => BinaryOp::Eq,
                    B::NotEq => BinaryOp::NotEq,
                    B::Less => BinaryOp::Lt,
                    B::LessEq => BinaryOp::LtEq,
                    B::Greater => BinaryOp::Gt,
                    B::GreaterEq => BinaryOp::GtEq,
                    B::And => BinaryOp::And,
                    B::Or => BinaryOp::Or,
                };
                ExprKind::Binary(
                    op,
                    Box::new(self.expr(&b.lhs_expr)?),
                    Box::new(self.expr(&b.rhs_expr)?),
                )
            }
            he::Expression::ForExpr(f) => ExprKind::For(Box::new(ForExpr {
                key_var: f.intro.key_var.as_ref().map(|k| k.as_str().to_string()),
                value_var: f.intro.value_var.as_str().to_string(),
                collection: self.expr(&f.intro.collection_expr)?,
                key: f.key_expr.as_ref().map(|k| self.expr(k)).transpose()?,
                value: self.expr(&f.value_expr)?,
                cond: f.cond.as_ref().map(|c| self.expr(&c.expr)).transpose()?,
                grouping: f.grouping,
            })),
        };
        Ok(Expr::new(kind, span))
    }

    fn text(&self, span: Span) -> &str {
        self.src
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
            .trim()
    }

    /// Splats take every operator after them (attribute-only splats, only
    /// the attribute accesses right after them) as the per-element part.
    fn traversal(&self, t: &he::Traversal, span: Span) -> Result<Expr, Diag> {
        let base = self.expr(&t.expr)?;
        let ops: Vec<(&he::TraversalOperator, Span)> = t
            .operators
            .iter()
            .map(|o| (o.value(), self.span(o.span())))
            .collect();
        let mut out = self.chain(base, &ops)?;
        out.span = span;
        Ok(out)
    }

    fn chain(&self, mut cur: Expr, ops: &[(&he::TraversalOperator, Span)]) -> Result<Expr, Diag> {
        let mut i = 0;
        while i < ops.len() {
            let (op, op_span) = ops[i];
            match op {
                he::TraversalOperator::FullSplat(_) => {
                    let each =
                        self.chain(Expr::new(ExprKind::SplatItem, op_span), &ops[i + 1..])?;
                    let sp = cur.span.to(ops[ops.len() - 1].1);
                    return Ok(Expr::new(
                        ExprKind::Splat(Box::new(cur), Box::new(each)),
                        sp,
                    ));
                }
                he::TraversalOperator::AttrSplat(_) => {
                    let mut each = Expr::new(ExprKind::SplatItem, op_span);
                    let mut j = i + 1;
                    while j < ops.len() && matches!(ops[j].0, he::TraversalOperator::GetAttr(_)) {
                        each = self.apply_op(each, ops[j].0, ops[j].1)?;
                        j += 1;
                    }
                    let sp = cur.span.to(ops[j - 1].1);
                    cur = Expr::new(ExprKind::Splat(Box::new(cur), Box::new(each)), sp);
                    i = j;
                }
                op => {
                    cur = self.apply_op(cur, op, op_span)?;
                    i += 1;
                }
            }
        }
        Ok(cur)
    }

    fn apply_op(
        &self,
        base: Expr,
        op: &he::TraversalOperator,
        op_span: Span,
    ) -> Result<Expr, Diag> {
        let span = base.span.to(op_span);
        Ok(match op {
            he::TraversalOperator::GetAttr(name) => Expr::new(
                ExprKind::GetAttr(Box::new(base), name.as_str().to_string()),
                span,
            ),
            he::TraversalOperator::Index(ix) => Expr::new(
                ExprKind::Index(Box::new(base), Box::new(self.expr(ix)?)),
                span,
            ),
            he::TraversalOperator::LegacyIndex(n) => {
                // HCL's scanner reads `.0.1` as the number 0.1, so Terraform
                // refuses chained legacy indexes; so do we.
                let after = self.src.get(op_span.end as usize..).unwrap_or("");
                if after.starts_with('.') && after[1..].starts_with(|c: char| c.is_ascii_digit()) {
                    return Err(Diag::new(
                        "strata::syntax::legacy_index",
                        "Invalid legacy index syntax",
                        "When using the legacy index syntax, chaining two indexes together is not permitted. Use the proper index syntax instead, like [1][2].",
                    )
                    .at(span));
                }
                let ix = Expr::new(
                    ExprKind::Literal(Box::new(Value::Number(Number::from_i64(*n.value() as i64)))),
                    op_span,
                );
                Expr::new(ExprKind::Index(Box::new(base), Box::new(ix)), span)
            }
            he::TraversalOperator::FullSplat(_) | he::TraversalOperator::AttrSplat(_) => Expr::new(
                ExprKind::Splat(
                    Box::new(base),
                    Box::new(Expr::new(ExprKind::SplatItem, op_span)),
                ),
                span,
            ),
        })
    }

    pub fn template(&self, t: &ht::Template, span: Span) -> Result<Expr, Diag> {
        let mut toks = Vec::new();
        for el in t.iter() {
            self.tokens(el, &mut toks, Escapes::Raw)?;
        }
        Ok(Expr::new(
            ExprKind::Template(build_template(toks, span)?),
            span,
        ))
    }

    fn heredoc(&self, span: Span) -> Result<ExprKind, Diag> {
        let raw = self
            .src
            .get(span.start as usize..span.end as usize)
            .unwrap_or("");
        let flush = raw.starts_with("<<-");
        // hcl-edit's own dedent treats directive bodies differently from
        // Terraform, so the raw body is read again and tokenised the way
        // HCL's scanner does it: one literal per line.
        let body_start = raw.find('\n').map(|i| i + 1).unwrap_or(raw.len());
        let body_end = raw
            .trim_end_matches([' ', '\t'])
            .rfind('\n')
            .map(|i| i + 1)
            .unwrap_or(body_start);
        let body_end = body_end.max(body_start);
        let body = &raw[body_start..body_end];
        let tpl = hcl_edit::parser::parse_template(body).map_err(|e| {
            Diag::new(
                "strata::syntax::parse",
                "Invalid heredoc",
                e.message().to_string(),
            )
            .at(span)
        })?;
        let inner = Lowerer::new(self.file, self.src, span.start as usize + body_start);
        let mut toks = Vec::new();
        for el in tpl.iter() {
            inner.tokens(el, &mut toks, Escapes::Raw)?;
        }
        Ok(ExprKind::Template(build_heredoc(toks, span, flush)?))
    }

    /// Flattens a template element into HCL's token stream, which is where
    /// Terraform applies heredoc dedent and strip markers.
    fn tokens(&self, el: &ht::Element, out: &mut Vec<Tok>, esc: Escapes) -> Result<(), Diag> {
        match el {
            ht::Element::Literal(s) => out.push(Tok::Lit(nfc(&match esc {
                Escapes::QuotedNested => unescape(s.value()),
                _ => s.value().to_string(),
            }))),
            ht::Element::Interpolation(i) => out.push(Tok::Interp {
                expr: self.expr(&i.expr)?,
                strip: (i.strip.strip_start(), i.strip.strip_end()),
            }),
            ht::Element::Directive(d) => match &**d {
                ht::Directive::If(d) => {
                    out.push(Tok::If {
                        cond: self.expr(&d.if_expr.cond_expr)?,
                        strip: (d.if_expr.strip.strip_start(), d.if_expr.strip.strip_end()),
                    });
                    for e in d.if_expr.template.iter() {
                        self.tokens(e, out, esc.nested())?;
                    }
                    if let Some(els) = &d.else_expr {
                        out.push(Tok::Else {
                            strip: (els.strip.strip_start(), els.strip.strip_end()),
                        });
                        for e in els.template.iter() {
                            self.tokens(e, out, esc.nested())?;
                        }
                    }
                    out.push(Tok::EndIf {
                        strip: (
                            d.endif_expr.strip.strip_start(),
                            d.endif_expr.strip.strip_end(),
                        ),
                    });
                }
                ht::Directive::For(d) => {
                    let f = &d.for_expr;
                    out.push(Tok::For {
                        key_var: f.key_var.as_ref().map(|k| k.as_str().to_string()),
                        value_var: f.value_var.as_str().to_string(),
                        collection: self.expr(&f.collection_expr)?,
                        strip: (f.strip.strip_start(), f.strip.strip_end()),
                    });
                    for e in f.template.iter() {
                        self.tokens(e, out, esc.nested())?;
                    }
                    out.push(Tok::EndFor {
                        strip: (
                            d.endfor_expr.strip.strip_start(),
                            d.endfor_expr.strip.strip_end(),
                        ),
                    });
                }
            },
        }
        Ok(())
    }
}

/// How a template's literal text reaches us from hcl-edit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Escapes {
    /// Heredocs and template files: no backslash escapes exist.
    Raw,
    /// A quoted string's top level: hcl-edit has decoded the escapes.
    Quoted,
    /// Inside a directive of a quoted string: hcl-edit leaves the escapes
    /// undecoded there, so we decode them.
    QuotedNested,
}

impl Escapes {
    fn nested(self) -> Escapes {
        match self {
            Escapes::Raw => Escapes::Raw,
            _ => Escapes::QuotedNested,
        }
    }
}

/// HCL's backslash escapes in quoted strings.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some(u @ ('u' | 'U')) => {
                let n = if u == 'u' { 4 } else { 8 };
                let hex: String = (0..n).filter_map(|_| chars.next()).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push('\\');
                        out.push(u);
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn nfc(s: &str) -> String {
    if s.is_ascii() {
        s.to_string()
    } else {
        s.nfc().collect()
    }
}

/// One token of a template; `strip` is (strip before, strip after).
#[derive(Debug)]
pub(super) enum Tok {
    Lit(String),
    Interp {
        expr: Expr,
        strip: (bool, bool),
    },
    If {
        cond: Expr,
        strip: (bool, bool),
    },
    Else {
        strip: (bool, bool),
    },
    EndIf {
        strip: (bool, bool),
    },
    For {
        key_var: Option<String>,
        value_var: String,
        collection: Expr,
        strip: (bool, bool),
    },
    EndFor {
        strip: (bool, bool),
    },
}

impl Tok {
    fn strip(&self) -> (bool, bool) {
        match self {
            Tok::Lit(_) => (false, false),
            Tok::Interp { strip, .. }
            | Tok::If { strip, .. }
            | Tok::Else { strip }
            | Tok::EndIf { strip }
            | Tok::For { strip, .. }
            | Tok::EndFor { strip } => *strip,
        }
    }
}

/// HCL's `flushHeredocTemplateParts`: remove the smallest indentation of the
/// lines that start with text; blank lines do not count and keep their spaces.
fn flush_heredoc(toks: &mut [Tok]) {
    let mut min = usize::MAX;
    let mut newline = true;
    let mut adjust = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if newline {
            newline = false;
            let spaces = match t {
                Tok::Lit(s) => {
                    let trimmed = s.trim_start();
                    if trimmed.is_empty() && s.ends_with('\n') {
                        usize::MAX
                    } else {
                        adjust.push(i);
                        s[..s.len() - trimmed.len()].chars().count()
                    }
                }
                _ => 0,
            };
            min = min.min(spaces);
        }
        if let Tok::Lit(s) = t {
            if s.ends_with('\n') {
                newline = true;
            }
        }
    }
    if min == usize::MAX {
        return;
    }
    for i in adjust {
        if let Tok::Lit(s) = &mut toks[i] {
            let cut: usize = s.chars().take(min).map(char::len_utf8).sum();
            s.drain(..cut);
        }
    }
}

/// Heredocs: HCL scans one literal per line, applies the `~` strip markers to
/// those per-line tokens and only then dedents a `<<-` heredoc. The order
/// matters: a stripped line start counts as a line with no indentation.
fn build_heredoc(toks: Vec<Tok>, span: Span, flush: bool) -> Result<Vec<TemplatePart>, Diag> {
    let mut split = Vec::with_capacity(toks.len());
    for t in toks {
        match t {
            Tok::Lit(s) => {
                for line in s.split_inclusive('\n') {
                    split.push(Tok::Lit(line.to_string()));
                }
            }
            other => split.push(other),
        }
    }
    apply_strip(&mut split);
    if flush {
        flush_heredoc(&mut split);
    }
    nest_all(split, span)
}

/// Applies strip markers and nests directive bodies.
fn build_template(mut toks: Vec<Tok>, span: Span) -> Result<Vec<TemplatePart>, Diag> {
    apply_strip(&mut toks);
    nest_all(toks, span)
}

fn apply_strip(toks: &mut [Tok]) {
    for i in 0..toks.len() {
        let (before, after) = toks[i].strip();
        if before && i > 0 {
            if let Tok::Lit(s) = &mut toks[i - 1] {
                let keep = s.trim_end().len();
                s.truncate(keep);
            }
        }
        if after && i + 1 < toks.len() {
            if let Tok::Lit(s) = &mut toks[i + 1] {
                let cut = s.len() - s.trim_start().len();
                s.drain(..cut);
            }
        }
    }
}

fn nest_all(toks: Vec<Tok>, span: Span) -> Result<Vec<TemplatePart>, Diag> {
    let mut iter = toks.into_iter();
    let (parts, end) = nest(&mut iter);
    match end {
        None => Ok(parts),
        Some(_) => Err(Diag::new(
            "strata::syntax::template",
            "Unexpected template directive",
            "An else, endif or endfor appears without its opening directive.",
        )
        .at(span)),
    }
}

enum End {
    Else,
    If,
    For,
}

fn nest(iter: &mut std::vec::IntoIter<Tok>) -> (Vec<TemplatePart>, Option<End>) {
    let mut parts: Vec<TemplatePart> = Vec::new();
    while let Some(t) = iter.next() {
        match t {
            Tok::Lit(s) => {
                if s.is_empty() {
                    continue;
                }
                if let Some(TemplatePart::Literal(prev)) = parts.last_mut() {
                    prev.push_str(&s);
                } else {
                    parts.push(TemplatePart::Literal(s));
                }
            }
            Tok::Interp { expr, .. } => parts.push(TemplatePart::Interp(expr)),
            Tok::If { cond, .. } => {
                let (then, end) = nest(iter);
                let otherwise = match end {
                    Some(End::Else) => nest(iter).0,
                    _ => Vec::new(),
                };
                parts.push(TemplatePart::If {
                    cond,
                    then,
                    otherwise,
                });
            }
            Tok::For {
                key_var,
                value_var,
                collection,
                ..
            } => {
                let (body, _) = nest(iter);
                parts.push(TemplatePart::For {
                    key_var,
                    value_var,
                    collection,
                    body,
                });
            }
            Tok::Else { .. } => return (parts, Some(End::Else)),
            Tok::EndIf { .. } => return (parts, Some(End::If)),
            Tok::EndFor { .. } => return (parts, Some(End::For)),
        }
    }
    parts.shrink_to_fit();
    (parts, None)
}
