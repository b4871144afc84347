//! Parsing: source text to strata's syntax tree, with spans.
//!
//! [`native`] reads HCL's native syntax and [`json`] Terraform's JSON
//! syntax, both into the tree in [`ast`]; [`template`] reads the templates
//! inside either.

pub mod ast;
pub mod json;
mod native;
mod template;
#[cfg(test)]
mod tests;

use crate::diag::{Diag, FileId, Span};
pub use ast::{Expr, ExprKind};

/// A block or file body: attributes and nested blocks in source order.
#[derive(Debug, Clone)]
pub struct Body {
    pub attrs: Vec<Attribute>,
    pub blocks: Vec<Block>,
    pub span: Span,
    /// Read from JSON where a driver's schema decides which arguments are
    /// nested blocks: [`json::blocks_by_schema`] says, once it is known.
    pub json: bool,
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

    /// Every argument's expression, in nested blocks too.
    pub fn expressions(&self) -> Vec<&Expr> {
        let mut out: Vec<&Expr> = self.attrs.iter().map(|a| &a.expr).collect();
        for b in &self.blocks {
            out.extend(b.body.expressions());
        }
        out
    }
}

/// How deeply brackets and sub-expressions may nest. Parsing and evaluation
/// recurse; this bound (with the large stack `cli` runs on) keeps hostile
/// input from exhausting the stack.
pub const MAX_NESTING: usize = 10_000;

pub(crate) fn too_deep() -> Diag {
    Diag::new(
        "strata::syntax::nesting",
        "Expression nested too deeply",
        format!("Brackets and sub-expressions may nest at most {MAX_NESTING} levels deep."),
    )
}

/// Parses a whole configuration file.
pub fn parse_body(file: FileId, src: &str) -> Result<Body, Diag> {
    native::Parser::new(file, src, 0, src.len()).file_body()
}

/// Parses one expression, as `console` reads them.
pub fn parse_expr(file: FileId, src: &str) -> Result<Expr, Diag> {
    native::Parser::new(file, src, 0, src.len()).whole_expr()
}

/// Parses `src[start..end]` (a JSON string's text) as an expression, or
/// as a template, with spans that are offsets in `src`.
pub(crate) fn parse_at(
    file: FileId,
    src: &str,
    (start, end): (usize, usize),
    template: bool,
) -> Result<Expr, Diag> {
    let mut p = native::Parser::new(file, src, start, end);
    if template {
        p.template_file()
    } else {
        p.whole_expr()
    }
}

/// Parses a whole text as a template, as `templatefile` reads files.
pub fn parse_template(file: FileId, src: &str) -> Result<Expr, Diag> {
    native::Parser::new(file, src, 0, src.len()).template_file()
}

pub use crate::lang::display::is_identifier;

/// Length of the number literal at the start of `b` (digits, an optional
/// fraction, an optional exponent), as HCL's scanner reads one.
pub(crate) fn number_literal_len(b: &[u8]) -> usize {
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = digits(0);
    if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        i += 1 + digits(i + 1);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            i = j + digits(j);
        }
    }
    i
}

/// A heredoc opener `<<EOT` or `<<-EOT` at `i`, ending its line: the
/// delimiter and the opener's length including the newline.
pub(crate) fn heredoc_opener(src: &str, i: usize) -> Option<(String, usize)> {
    let rest = src.get(i..)?.strip_prefix("<<")?;
    let (flush, rest) = match rest.strip_prefix('-') {
        Some(r) => (1, r),
        None => (0, rest),
    };
    let delim: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if delim.is_empty() {
        return None;
    }
    let after = &rest[delim.len()..];
    let nl = if after.starts_with("\r\n") {
        2
    } else if after.starts_with('\n') {
        1
    } else {
        return None;
    };
    Some((delim.clone(), 2 + flush + delim.len() + nl))
}
