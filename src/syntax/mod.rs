//! Parsing: source text to strata's syntax tree, with spans.
//!
//! hcl-edit does the parsing (it keeps byte spans, which hcl-rs's own types do
//! not); [`lower`] turns its tree into the one in [`ast`].

pub mod ast;
pub mod json;
mod lower;

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
}

fn parse_error(file: FileId, src: &str, e: &hcl_edit::parser::Error) -> Diag {
    // hcl-edit reports a string left open as whatever it expected last
    // ("expected `}`"); name the string instead, where it starts.
    // (It may point at the block or attribute around the string.)
    if let Some(open) = unterminated_string(src) {
        return Diag::new(
            "strata::syntax::unterminated_string",
            "Unterminated template string",
            "No closing quote was found for the string that starts here; a quoted string ends on the line it starts. For text over several lines, use \\n or a heredoc (<<EOT).",
        )
        .at(Span::new(file, open, open + 1));
    }
    // hcl-edit may point inside a multi-byte character (found by fuzzing:
    // `[ҙ`); the span starts at that character.
    let mut offset = e.location().offset().min(src.len());
    while !src.is_char_boundary(offset) {
        offset -= 1;
    }
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

/// Where a quoted string starts that is not closed on its line, if one
/// is: comments, heredocs and interpolations are stepped over as HCL's
/// scanner would.
fn unterminated_string(src: &str) -> Option<usize> {
    let b = src.as_bytes();
    // Open contexts: a string (its opening quote) or an interpolation
    // (the braces open inside it).
    enum Open {
        Str(usize),
        Interp(usize),
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let next = b.get(i + 1).copied();
        match (stack.last_mut(), b[i]) {
            (Some(Open::Str(_)), b'\\') => i += 1,
            (Some(Open::Str(_)), b'"') => {
                stack.pop();
            }
            (Some(Open::Str(open)), b'\n') => return Some(*open),
            // `$${` and `%%{` are literal text.
            (Some(Open::Str(_)), c @ (b'$' | b'%')) if next == Some(c) => i += 1,
            (Some(Open::Str(_)), b'$' | b'%') if next == Some(b'{') => {
                stack.push(Open::Interp(0));
                i += 1;
            }
            (Some(Open::Str(_)), _) => {}
            (_, b'"') => stack.push(Open::Str(i)),
            (_, b'#') => i = line_end(b, i),
            (_, b'/') if next == Some(b'/') => i = line_end(b, i),
            (_, b'/') if next == Some(b'*') => {
                i = src[i + 2..].find("*/").map_or(b.len(), |j| i + 2 + j + 1)
            }
            (_, b'<') if next == Some(b'<') => {
                if let Some((delim, len)) = heredoc_opener(src, i) {
                    let body = i + len;
                    i = src[body..]
                        .lines()
                        .scan(body, |at, l| {
                            let start = *at;
                            *at += l.len() + 1;
                            Some((start, l))
                        })
                        .find(|(_, l)| l.trim() == delim)
                        .map_or(b.len(), |(start, l)| start + l.len());
                }
            }
            (Some(Open::Interp(depth)), b'{') => *depth += 1,
            (Some(Open::Interp(0)), b'}') => {
                stack.pop();
            }
            (Some(Open::Interp(depth)), b'}') => *depth -= 1,
            _ => {}
        }
        i += 1;
    }
    match stack.last() {
        Some(Open::Str(open)) => Some(*open),
        _ => None,
    }
}

fn line_end(b: &[u8], from: usize) -> usize {
    b[from..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |j| from + j)
}

/// How deeply brackets and sub-expressions may nest. Parsing and evaluation
/// recurse; this bound (with the large stack `cli` runs on) keeps hostile
/// input from exhausting the stack.
pub const MAX_NESTING: usize = 2000;

/// Rejects input whose brackets nest deeper than [`MAX_NESTING`] before the
/// recursive parser sees it. Quoted strings are skipped roughly; the bound is
/// far above anything a person writes.
fn check_nesting(file: FileId, src: &str) -> Result<(), Diag> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for (i, c) in src.char_indices() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                '\n' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(too_deep().at(Span::new(file, i, i + 1)));
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

pub(crate) fn too_deep() -> Diag {
    Diag::new(
        "strata::syntax::nesting",
        "Expression nested too deeply",
        format!("Brackets and sub-expressions may nest at most {MAX_NESTING} levels deep."),
    )
}

/// Parses a whole configuration file.
pub fn parse_body(file: FileId, src: &str) -> Result<Body, Diag> {
    let body = parse_lenient(file, src, hcl_edit::parser::parse_body)?;
    lower::Lowerer::new(file, src, 0).body(&body)
}

/// Runs an hcl-edit parser on the masked text. hcl-edit also rejects a
/// repeated identifier key in an object constructor (`{a = 1, a = 2}`),
/// which Terraform accepts (the last wins); each such key is renamed, in
/// hcl-edit's copy only, to a fresh name of the same length, and lowering
/// reads identifier keys back from the original text.
fn parse_lenient<T>(
    file: FileId,
    src: &str,
    parse: fn(&str) -> Result<T, hcl_edit::parser::Error>,
) -> Result<T, Diag> {
    let mut masked = mask_for_hcl_edit(src)
        .map_err(|at| too_deep().at(Span::new(file, at, at + 1)))?
        .into_owned();
    let mut attempt = 0usize;
    loop {
        match parse(&masked) {
            Ok(t) => return Ok(t),
            Err(e) if e.message().contains("redefined object key") && attempt < 256 => {
                let at = e.location().offset();
                match rename_key(&masked, at, attempt) {
                    Some(renamed) => masked = renamed,
                    None => return Err(parse_error(file, src, &e)),
                }
                attempt += 1;
            }
            Err(e) => return Err(parse_error(file, src, &e)),
        }
    }
}

/// The identifier at `at` replaced by the `n`th candidate name of the same length.
fn rename_key(text: &str, at: usize, n: usize) -> Option<String> {
    let rest = text.get(at..)?;
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(rest.len());
    if len == 0 || !rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return None;
    }
    const ALPHABET: &[u8] = b"_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut name = vec![b'_'; len];
    let mut k = n;
    for slot in name.iter_mut().rev() {
        *slot = ALPHABET[k % ALPHABET.len()];
        k /= ALPHABET.len();
    }
    let mut out = text.to_string();
    out.replace_range(at..at + len, std::str::from_utf8(&name).ok()?);
    Some(out)
}

/// Parses one expression, as `console` reads them.
pub fn parse_expr(file: FileId, src: &str) -> Result<Expr, Diag> {
    let expr = parse_lenient(file, src, hcl_edit::parser::parse_expr)?;
    lower::Lowerer::new(file, src, 0).expr(&expr)
}

/// Parses `src[start..end]` (a JSON string's text) as an expression, or
/// as a template, with spans that are offsets in `src`.
pub(crate) fn parse_at(
    file: FileId,
    src: &str,
    (start, end): (usize, usize),
    template: bool,
) -> Result<Expr, Diag> {
    let piece = src.get(start..end).unwrap_or("");
    let lower = lower::Lowerer::new(file, src, start);
    if !template {
        let expr = parse_lenient(file, piece, hcl_edit::parser::parse_expr)
            .map_err(|d| shifted(d, start))?;
        return lower.expr(&expr);
    }
    check_nesting(file, piece).map_err(|d| shifted(d, start))?;
    let tpl = hcl_edit::parser::parse_template(piece)
        .map_err(|e| shifted(parse_error(file, piece, &e), start))?;
    lower.template(&tpl, Span::new(file, start, end))
}

/// A diagnostic about a piece of text moved to where the piece stands.
fn shifted(mut d: Diag, by: usize) -> Diag {
    if let Some(s) = &mut d.span {
        s.start += by as u32;
        s.end += by as u32;
    }
    d
}

/// Parses a whole text as a template, as `templatefile` reads files.
pub fn parse_template(file: FileId, src: &str) -> Result<Expr, Diag> {
    check_nesting(file, src)?;
    let tpl = hcl_edit::parser::parse_template(src).map_err(|e| parse_error(file, src, &e))?;
    lower::Lowerer::new(file, src, 0).template(&tpl, Span::new(file, 0, src.len()))
}

/// Whether `s` is a valid HCL identifier (letters, digits, `_` and `-`, not
/// starting with a digit or dash).
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// Works around two places where hcl-edit rejects what Terraform accepts,
/// on a copy of the text given to hcl-edit only (same length, so spans stay
/// right, and lowering reads the original text back by span):
/// number literals beyond u64/f64 (`123456789012345678901234567890`,
/// `1e400`) become zeros, and an empty heredoc becomes `""`.
/// Strings, comments and heredoc bodies are skipped. The same pass bounds
/// bracket nesting at [`MAX_NESTING`], returning the offending offset.
fn mask_for_hcl_edit(src: &str) -> Result<std::borrow::Cow<'_, str>, usize> {
    let mut nest = 0usize;
    let b = src.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    // Stack of contexts: true = inside a quoted template, false = code
    // (with the brace depth at which an interpolation must close).
    let mut stack: Vec<(bool, usize)> = vec![(false, 0)];
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        let in_string = stack.last().is_some_and(|s| s.0);
        let c = b[i];
        if in_string {
            match c {
                b'\\' => {
                    i += 1 + src
                        .get(i + 1..)
                        .and_then(|r| r.chars().next())
                        .map_or(0, char::len_utf8)
                }
                b'"' => {
                    stack.pop();
                    i += 1;
                }
                b'$' | b'%' if b.get(i + 1) == Some(&b'{') => {
                    if b.get(i.wrapping_sub(1)) == Some(&c) {
                        i += 2;
                        continue;
                    }
                    depth += 1;
                    stack.push((false, depth));
                    i += 2;
                }
                _ => i += 1,
            }
            continue;
        }
        match c {
            b'"' => {
                stack.push((true, 0));
                i += 1;
            }
            b'#' => i = src[i..].find('\n').map_or(b.len(), |p| i + p),
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = src[i..].find('\n').map_or(b.len(), |p| i + p)
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = src[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2)
            }
            b'<' if b.get(i + 1) == Some(&b'<') => {
                // Heredoc: skip to the line holding only the delimiter.
                let Some((delim, opener_len)) = heredoc_opener(src, i) else {
                    i += 2;
                    continue;
                };
                let mut j = i + opener_len;
                // hcl-edit fails on a heredoc with no lines; for it, an empty
                // heredoc becomes "" padded to the same length (lowering reads
                // "" and the spans stay right).
                let first_end = src[j..].find('\n').map_or(b.len(), |p| j + p);
                if j < b.len() && src[j..first_end].trim() == delim {
                    let o = out.get_or_insert_with(|| b.to_vec());
                    o[i..first_end].fill(b' ');
                    o[i] = b'"';
                    o[i + 1] = b'"';
                    i = first_end;
                    continue;
                }
                while j < b.len() {
                    let end = src[j..].find('\n').map_or(b.len(), |p| j + p);
                    if src[j..end].trim() == delim {
                        break;
                    }
                    j = end + 1;
                }
                i = j;
            }
            b'{' | b'(' | b'[' => {
                nest += 1;
                if nest > MAX_NESTING {
                    return Err(i);
                }
                if c == b'{' {
                    depth += 1;
                }
                i += 1;
            }
            b')' | b']' => {
                nest = nest.saturating_sub(1);
                i += 1;
            }
            b'}' => {
                nest = nest.saturating_sub(1);
                if stack.len() > 1 && stack.last().is_some_and(|s| s.1 == depth) {
                    stack.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'0'..=b'9'
                if i == 0
                    || !(b[i - 1].is_ascii_alphanumeric()
                        || b[i - 1] == b'_'
                        || b[i - 1] == b'.') =>
            {
                let start = i;
                i += number_literal_len(&b[i..]);
                let lit = &src[start..i];
                let fits = if lit.bytes().all(|c| c.is_ascii_digit()) {
                    lit.parse::<u64>().is_ok()
                } else {
                    lit.parse::<f64>().is_ok_and(f64::is_finite)
                };
                if !fits {
                    let o = out.get_or_insert_with(|| b.to_vec());
                    for d in o[start..i].iter_mut().filter(|d| d.is_ascii_digit()) {
                        *d = b'0';
                    }
                }
            }
            _ => i += 1,
        }
    }
    Ok(match out {
        // Only ASCII bytes were replaced, so the text stays valid UTF-8.
        Some(o) => {
            std::borrow::Cow::Owned(String::from_utf8(o).unwrap_or_else(|_| src.to_string()))
        }
        None => std::borrow::Cow::Borrowed(src),
    })
}

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
