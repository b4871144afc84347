//! Parsing: source text to strata's syntax tree, with spans.
//!
//! hcl-edit does the parsing (it keeps byte spans, which hcl-rs's own types do
//! not); [`lower`] turns its tree into the one in [`ast`].

pub mod ast;
mod lower;

use crate::diag::{Diag, FileId, Span};
pub use ast::{Expr, ExprKind};

/// A block or file body: attributes and nested blocks in source order.
#[derive(Debug, Clone)]
pub struct Body {
    pub attrs: Vec<Attribute>,
    pub blocks: Vec<Block>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Attribute {
    pub name: String,
    pub name_span: Span,
    pub expr: Expr,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Block {
    pub kind: String,
    pub kind_span: Span,
    pub labels: Vec<(String, Span)>,
    pub body: Body,
    pub span: Span,
}

impl Body {
    pub fn attr(&self, name: &str) -> Option<&Attribute> {
        self.attrs.iter().find(|a| a.name == name)
    }
}

fn parse_error(file: FileId, src: &str, e: &hcl_edit::parser::Error) -> Diag {
    let offset = e.location().offset().min(src.len());
    let end = src[offset..]
        .char_indices()
        .nth(1)
        .map_or(src.len(), |(i, _)| offset + i);
    Diag::new(
        "strata::syntax::parse",
        "Invalid syntax",
        e.message().to_string(),
    )
    .at(Span::new(file, offset, end))
}

/// Parses a whole configuration file.
pub fn parse_body(file: FileId, src: &str) -> Result<Body, Diag> {
    let body = hcl_edit::parser::parse_body(src).map_err(|e| parse_error(file, src, &e))?;
    lower::Lowerer { file, src, base: 0 }.body(&body)
}

/// Parses one expression, as `console` reads them.
pub fn parse_expr(file: FileId, src: &str) -> Result<Expr, Diag> {
    let expr = hcl_edit::parser::parse_expr(src).map_err(|e| parse_error(file, src, &e))?;
    lower::Lowerer { file, src, base: 0 }.expr(&expr)
}

/// Parses a whole text as a template, as `templatefile` reads files.
pub fn parse_template(file: FileId, src: &str) -> Result<Expr, Diag> {
    let tpl = hcl_edit::parser::parse_template(src).map_err(|e| parse_error(file, src, &e))?;
    lower::Lowerer { file, src, base: 0 }.template(&tpl, Span::new(file, 0, src.len()))
}

/// Whether `s` is a valid HCL identifier (letters, digits, `_` and `-`, not
/// starting with a digit or dash).
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}
