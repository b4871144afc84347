//! Templates: quoted strings, heredocs and template files, read into HCL's
//! token stream (literal text, interpolations, directives with their `~`
//! strip markers) and then built into [`TemplatePart`]s the way Terraform
//! builds them: strip markers first, then a `<<-` heredoc's dedent, then
//! directive bodies nested.

use super::ast::*;
use super::native::Parser;
use crate::diag::{Diag, Span};
use unicode_normalization::UnicodeNormalization;

/// How backslashes read in a template's literal text.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Escapes {
    /// A quoted string: `\n`, `\"`, `\u00e9`… are escapes.
    Quoted,
    /// Heredocs, template files and JSON strings: a backslash is itself.
    Raw,
}

/// One token of a template; `strip` is (strip before, strip after).
#[derive(Debug)]
enum Tok {
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
    fn set_strip(&mut self, to: (bool, bool)) {
        match self {
            Tok::Lit(_) => {}
            Tok::Interp { strip, .. }
            | Tok::If { strip, .. }
            | Tok::Else { strip }
            | Tok::EndIf { strip }
            | Tok::For { strip, .. }
            | Tok::EndFor { strip } => *strip = to,
        }
    }

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

/// Where a template's text stops.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    /// The closing quote of a quoted string (a newline is an error).
    Quote,
    /// The parser's end: a heredoc's body, a whole template file.
    End,
}

/// A directive opened and not yet closed: which, and where.
struct Open {
    kind: Opened,
    span: Span,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Opened {
    If,
    Else,
    For,
}

impl Parser<'_> {
    /// A quoted string at `"`: a literal when it holds no template
    /// sequence, a template otherwise.
    pub(super) fn quoted(&mut self) -> Result<Expr, Diag> {
        let start = self.pos;
        self.pos += 1;
        let toks = self.template_tokens(Escapes::Quoted, Until::Quote, start)?;
        let span = self.span_from(start);
        if toks.iter().all(|t| matches!(t, Tok::Lit(_))) {
            let text: String = toks
                .into_iter()
                .map(|t| match t {
                    Tok::Lit(s) => s,
                    _ => String::new(),
                })
                .collect();
            return Ok(Expr::new(
                ExprKind::Literal(Box::new(crate::lang::value::Value::String(text))),
                span,
            ));
        }
        Ok(Expr::new(ExprKind::Template(build_template(toks)), span))
    }

    /// The whole input as a template (a template file, a JSON string).
    pub(super) fn template_file(&mut self) -> Result<Expr, Diag> {
        let start = self.pos;
        let toks = self.template_tokens(Escapes::Raw, Until::End, start)?;
        let span = self.span_from(start);
        Ok(Expr::new(ExprKind::Template(build_template(toks)), span))
    }

    /// A heredoc at `<<`: its body runs to the line holding only its
    /// delimiter.
    pub(super) fn heredoc(&mut self) -> Result<Expr, Diag> {
        let start = self.pos;
        let Some((delim, opener)) = super::heredoc_opener(self.src, start) else {
            return Err(self.error(
                "Invalid heredoc",
                "A heredoc starts with <<, or <<- for an indented one, then a delimiter word such as EOT, then a newline.",
                Span::new(self.file, start, start + 2),
            ));
        };
        let flush = self.src[start..].starts_with("<<-");
        let body_start = start + opener;
        let mut line = body_start;
        let (body_end, close_end) = loop {
            if line >= self.end {
                return Err(self.error(
                    "Unterminated heredoc",
                    format!("No line holding only the delimiter {delim:?} closes the heredoc that starts here."),
                    Span::new(self.file, start, start + opener),
                ));
            }
            let eol = self.src[line..self.end]
                .find('\n')
                .map_or(self.end, |i| line + i);
            let text = &self.src[line..eol];
            if text.trim() == delim {
                break (line, line + text.trim_end().len());
            }
            line = eol + 1;
        };
        let outer_end = self.end;
        self.pos = body_start;
        self.end = body_end;
        let toks = self.template_tokens(Escapes::Raw, Until::End, start);
        self.end = outer_end;
        let toks = toks?;
        self.pos = close_end;
        let span = self.span_from(start);
        Ok(Expr::new(
            ExprKind::Template(build_heredoc(toks, flush)),
            span,
        ))
    }

    /// Reads template text up to its end, checking that directives pair.
    fn template_tokens(
        &mut self,
        esc: Escapes,
        until: Until,
        start: usize,
    ) -> Result<Vec<Tok>, Diag> {
        let mut toks = Vec::new();
        let mut open: Vec<Open> = Vec::new();
        let mut lit = String::new();
        loop {
            let Some(c) = self.peek() else {
                if until == Until::Quote {
                    return Err(unterminated(Span::new(self.file, start, start + 1)));
                }
                break;
            };
            match c {
                b'"' if until == Until::Quote => {
                    self.pos += 1;
                    break;
                }
                b'\n' if until == Until::Quote => {
                    return Err(unterminated(Span::new(self.file, start, start + 1)));
                }
                b'\\' if esc == Escapes::Quoted => lit.push(self.escape()?),
                b'$' | b'%' if self.at_str(&[c, c, b'{']) => {
                    lit.push(c as char);
                    lit.push('{');
                    self.pos += 3;
                }
                b'$' if self.at_str(b"${") => {
                    toks.push(Tok::Lit(nfc(&std::mem::take(&mut lit))));
                    toks.push(self.interpolation()?);
                }
                b'%' if self.at_str(b"%{") => {
                    toks.push(Tok::Lit(nfc(&std::mem::take(&mut lit))));
                    toks.push(self.directive(&mut open)?);
                }
                _ => {
                    let ch = self.src[self.pos..].chars().next().unwrap_or('\u{fffd}');
                    lit.push(ch);
                    self.pos += ch.len_utf8();
                }
            }
        }
        toks.push(Tok::Lit(nfc(&lit)));
        if let Some(o) = open.pop() {
            let (name, end) = match o.kind {
                Opened::If | Opened::Else => ("if", "endif"),
                Opened::For => ("for", "endfor"),
            };
            return Err(self.error(
                "Unterminated template directive",
                format!("There is no %{{ {end} }} for this %{{ {name} }}."),
                o.span,
            ));
        }
        Ok(toks)
    }

    /// A backslash escape of a quoted string.
    fn escape(&mut self) -> Result<char, Diag> {
        let start = self.pos;
        self.pos += 1;
        let Some(c) = self.peek() else {
            return Err(unterminated(Span::new(self.file, start, start + 1)));
        };
        self.pos += 1;
        let simple = match c {
            b'n' => Some('\n'),
            b'r' => Some('\r'),
            b't' => Some('\t'),
            b'"' => Some('"'),
            b'\\' => Some('\\'),
            _ => None,
        };
        if let Some(ch) = simple {
            return Ok(ch);
        }
        let digits = match c {
            b'u' => 4,
            b'U' => 8,
            _ => {
                let ch = self.src[start + 1..].chars().next().unwrap_or('?');
                self.pos = start + 1 + ch.len_utf8();
                return Err(self.error(
                    "Invalid escape sequence",
                    format!(
                        "The symbol {:?} is not a valid escape sequence selector.",
                        ch.to_string()
                    ),
                    self.span_from(start),
                ));
            }
        };
        let hex = self.src.get(self.pos..self.pos + digits).unwrap_or("");
        let ch = (hex.len() == digits && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(hex, 16).ok().and_then(char::from_u32))
            .flatten();
        match ch {
            Some(ch) => {
                self.pos += digits;
                Ok(ch)
            }
            None => Err(self.error(
                "Invalid escape sequence",
                format!("\\{} must be followed by {digits} hexadecimal digits naming a Unicode character.", c as char),
                self.span_from(start),
            )),
        }
    }

    /// `${ expr }`, with `~` strip markers.
    fn interpolation(&mut self) -> Result<Tok, Diag> {
        self.pos += 2;
        let before = self.eat(b'~');
        let expr = self.inside(false, |p| {
            p.skip_space()?;
            let e = p.expr()?;
            p.skip_space()?;
            Ok(e)
        })?;
        let after = self.eat(b'~');
        self.close_template_sequence("interpolation")?;
        Ok(Tok::Interp {
            expr,
            strip: (before, after),
        })
    }

    /// `%{ if … }`, `%{ else }`, `%{ endif }`, `%{ for … in … }`, `%{ endfor }`.
    fn directive(&mut self, open: &mut Vec<Open>) -> Result<Tok, Diag> {
        self.pos += 2;
        let before = self.eat(b'~');
        let mut tok = self.inside(false, |p| {
            p.skip_space()?;
            let word_start = p.pos;
            let word = p.ident().map(|(w, _)| w).unwrap_or_default();
            let at = p.span_from(word_start);
            let tok = p.directive_body(&word, at, open)?;
            p.skip_space()?;
            Ok(tok)
        })?;
        let after = self.eat(b'~');
        tok.set_strip((before, after));
        self.close_template_sequence("directive")?;
        Ok(tok)
    }

    /// What follows a directive's keyword `word` (at `at`), keeping `open`
    /// the stack of directives still to be closed.
    fn directive_body(&mut self, word: &str, at: Span, open: &mut Vec<Open>) -> Result<Tok, Diag> {
        let closes: &[Opened] = match word {
            "if" => {
                self.skip_space()?;
                let cond = self.expr()?;
                open.push(Open { kind: Opened::If, span: at });
                return Ok(Tok::If { cond, strip: (false, false) });
            }
            "for" => {
                let head = self.for_head()?;
                open.push(Open { kind: Opened::For, span: at });
                return Ok(Tok::For {
                    key_var: head.key_var,
                    value_var: head.value_var,
                    collection: head.collection,
                    strip: (false, false),
                });
            }
            "else" => &[Opened::If],
            "endif" => &[Opened::If, Opened::Else],
            "endfor" => &[Opened::For],
            _ => {
                return Err(self.error(
                    "Invalid template directive",
                    "A template directive keyword (\"if\", \"for\", etc) is expected at the beginning of a %{ sequence.",
                    at,
                ))
            }
        };
        if !open.pop().is_some_and(|o| closes.contains(&o.kind)) {
            return Err(self.error(
                "Unexpected template directive",
                format!("This %{{ {word} }} has no matching opening directive before it."),
                at,
            ));
        }
        let strip = (false, false);
        Ok(match word {
            "else" => {
                open.push(Open {
                    kind: Opened::Else,
                    span: at,
                });
                Tok::Else { strip }
            }
            "endif" => Tok::EndIf { strip },
            _ => Tok::EndFor { strip },
        })
    }

    fn close_template_sequence(&mut self, what: &str) -> Result<(), Diag> {
        if self.eat(b'}') {
            return Ok(());
        }
        let here = self.here();
        Err(self.error(
            format!("Extra characters after {what}"),
            format!("Expected a closing brace to end the {what}, but found extra characters."),
            here,
        ))
    }
}

fn unterminated(at: Span) -> Diag {
    Diag::new(
        "strata::syntax::unterminated_string",
        "Unterminated template string",
        "No closing quote was found for the string that starts here; a quoted string ends on the line it starts. For text over several lines, use \\n or a heredoc (<<EOT).",
    )
    .at(at)
}

fn nfc(s: &str) -> String {
    if s.is_ascii() {
        s.to_string()
    } else {
        s.nfc().collect()
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
fn build_heredoc(toks: Vec<Tok>, flush: bool) -> Vec<TemplatePart> {
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
    nest_all(split)
}

/// Applies strip markers and nests directive bodies.
fn build_template(mut toks: Vec<Tok>) -> Vec<TemplatePart> {
    apply_strip(&mut toks);
    nest_all(toks)
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

/// Nests directive bodies; the scan has already checked that they pair.
fn nest_all(toks: Vec<Tok>) -> Vec<TemplatePart> {
    nest(&mut toks.into_iter()).0
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
