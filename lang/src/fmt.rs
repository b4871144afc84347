//! `strata fmt`: Terraform's canonical layout.
//!
//! Like Terraform's formatter this works on tokens and only ever changes the
//! whitespace between them (plus Terraform's few normalisations: quoted
//! block labels, `"${x}"` unwrapped to `x`, legacy quoted types). Each line
//! is split into three cells, lead / `= value` / trailing comment; lines are
//! indented by bracket depth, spaces between tokens follow fixed rules, and
//! the `=` and comment cells of consecutive lines are aligned.

use std::path::Path;
use unicode_segmentation::UnicodeSegmentation;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    Number,
    OQuote,
    QuotedLit,
    CQuote,
    TemplateInterp,
    TemplateControl,
    TemplateSeqEnd,
    OHeredoc,
    StringLit,
    CHeredoc,
    Comment,
    Newline,
    OBrace,
    CBrace,
    OBrack,
    CBrack,
    OParen,
    CParen,
    Comma,
    Dot,
    Ellipsis,
    Equal,
    Colon,
    Question,
    Arrow,
    Op,
    Minus,
    Bang,
    Other,
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    text: String,
    spaces: usize,
}

impl Token {
    fn new(kind: Kind, text: impl Into<String>) -> Token {
        Token {
            kind,
            text: text.into(),
            spaces: 0,
        }
    }

    fn bracket_change(&self) -> i32 {
        match self.kind {
            Kind::OBrace
            | Kind::OBrack
            | Kind::OParen
            | Kind::TemplateInterp
            | Kind::TemplateControl => 1,
            Kind::CBrace | Kind::CBrack | Kind::CParen | Kind::TemplateSeqEnd => -1,
            _ => 0,
        }
    }

    fn is_line_end(&self) -> bool {
        self.kind == Kind::Newline || (self.kind == Kind::Comment && self.text.ends_with('\n'))
    }
}

enum Mode {
    /// Ordinary expression context; `Some(depth)` inside a template
    /// interpolation that closes at that brace depth.
    Code(Option<usize>),
    Quote,
    Heredoc {
        delim: String,
    },
}

fn lex(src: &str) -> Vec<Token> {
    let mut l = Lexer {
        src,
        toks: Vec::new(),
        modes: vec![Mode::Code(None)],
        depth: 0,
        i: 0,
    };
    while l.i < src.len() {
        match l.modes.last() {
            Some(Mode::Quote) => l.quoted(),
            Some(Mode::Heredoc { delim }) => {
                let delim = delim.clone();
                l.heredoc_line(&delim);
            }
            Some(Mode::Code(closing)) => {
                let closing = *closing;
                l.code(closing);
            }
            None => break,
        }
    }
    l.toks
}

/// The lexer's place in the text, in which mode, at what brace depth.
struct Lexer<'s> {
    src: &'s str,
    toks: Vec<Token>,
    modes: Vec<Mode>,
    depth: usize,
    i: usize,
}

impl Lexer<'_> {
    fn starts(&self, i: usize, s: &str) -> bool {
        let b = self.src.as_bytes();
        b.get(i..)
            .is_some_and(|rest| rest.starts_with(s.as_bytes()))
    }

    /// A template sequence opens at `i` (not an escaped `$${` or `%%{`).
    fn opens(&self, i: usize) -> bool {
        (self.starts(i, "${") || self.starts(i, "%{"))
            && !self.starts(i, "$${")
            && !self.starts(i, "%%{")
    }

    fn push(&mut self, kind: Kind, text: &str) {
        self.toks.push(Token::new(kind, text));
    }

    /// Inside a quoted string: its end, a template sequence, or text.
    fn quoted(&mut self) {
        let (src, b) = (self.src, self.src.as_bytes());
        let mut i = self.i;
        if b[i] == b'"' {
            self.push(Kind::CQuote, "\"");
            self.modes.pop();
            self.i = i + 1;
            return;
        }
        if self.opens(i) {
            self.i = open_template(src, i, &mut self.toks, &mut self.modes, &mut self.depth);
            return;
        }
        let start = i;
        while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
            if b[i] == b'\\' {
                // Skip the escaped character whole: it may be multi-byte.
                i += 1 + src[i + 1..].chars().next().map_or(0, char::len_utf8);
                continue;
            }
            if self.starts(i, "$${") || self.starts(i, "%%{") {
                i += 3;
                continue;
            }
            if self.starts(i, "${") || self.starts(i, "%{") {
                break;
            }
            i += 1;
        }
        let i = i.min(b.len());
        self.push(Kind::QuotedLit, &src[start..i]);
        self.i = i;
        if i < b.len() && b[i] == b'\n' {
            // An unterminated string: let the parser report it.
            self.modes.pop();
        }
    }

    /// A heredoc line, possibly with interpolations in it, or its end.
    fn heredoc_line(&mut self, delim: &str) {
        let src = self.src;
        let i = self.i;
        let line_end = src[i..].find('\n').map_or(src.len(), |p| i + p + 1);
        let line = &src[i..line_end];
        if line.trim() == delim {
            let text = line.trim_end_matches(['\n', '\r']);
            self.push(Kind::CHeredoc, text);
            self.i = i + text.len();
            self.modes.pop();
            return;
        }
        let mut j = i;
        while j < line_end {
            if self.opens(j) {
                if j > i {
                    self.push(Kind::StringLit, &src[i..j]);
                }
                break;
            }
            if self.starts(j, "$${") || self.starts(j, "%%{") {
                j += 3;
                continue;
            }
            j += 1;
        }
        if j < line_end {
            self.i = open_template(src, j, &mut self.toks, &mut self.modes, &mut self.depth);
        } else {
            self.push(Kind::StringLit, &src[i..line_end]);
            self.i = line_end;
        }
    }

    /// One token of ordinary expression text; `closing` as in
    /// [`Mode::Code`].
    fn code(&mut self, closing: Option<usize>) {
        let (src, b, i) = (self.src, self.src.as_bytes(), self.i);
        // A comment to the end of its line, the newline with it.
        let line_end = || src[i..].find('\n').map_or(b.len(), |p| i + p + 1);
        let len = match b[i] {
            b' ' | b'\t' | b'\r' if !self.starts(i, "\r\n") => 1,
            // Line endings are kept as they are, as Terraform does.
            b'\n' | b'\r' => {
                let nl = if b[i] == b'\r' { "\r\n" } else { "\n" };
                self.push(Kind::Newline, nl);
                nl.len()
            }
            b'#' => self.comment(line_end()),
            b'/' if self.starts(i, "//") => self.comment(line_end()),
            b'/' if self.starts(i, "/*") => {
                let end = src[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
                self.comment(end)
            }
            b'"' => {
                self.push(Kind::OQuote, "\"");
                self.modes.push(Mode::Quote);
                1
            }
            b'<' if self.starts(i, "<<") && crate::syntax::heredoc_opener(src, i).is_some() => {
                let (delim, len) = crate::syntax::heredoc_opener(src, i).unwrap_or_default();
                self.push(Kind::OHeredoc, &src[i..i + len]);
                self.modes.push(Mode::Heredoc { delim });
                len
            }
            b'~' if self.starts(i, "~}") && closing == Some(self.depth) => {
                self.push(Kind::TemplateSeqEnd, "~}");
                self.modes.pop();
                2
            }
            b'{' | b'}' => self.brace(b[i], closing),
            b'0'..=b'9' => {
                let len = crate::syntax::number_literal_len(&b[i..]);
                self.push(Kind::Number, &src[i..i + len]);
                len
            }
            _ if is_ident_start(src, i) => {
                let len = src[i..]
                    .char_indices()
                    .find(|(_, ch)| !(ch.is_alphanumeric() || *ch == '_' || *ch == '-'))
                    .map_or(src.len() - i, |(off, _)| off);
                self.push(Kind::Ident, &src[i..i + len]);
                len
            }
            _ => {
                let (kind, len) = punct(&src[i..]);
                self.push(kind, &src[i..i + len]);
                len
            }
        };
        self.i += len;
    }

    /// A comment from here to `end`; its length.
    fn comment(&mut self, end: usize) -> usize {
        let (src, i) = (self.src, self.i);
        self.push(Kind::Comment, &src[i..end]);
        end - i
    }

    /// `{` or `}`: a brace, or the end of the template sequence `closing`.
    fn brace(&mut self, c: u8, closing: Option<usize>) -> usize {
        if c == b'{' {
            self.depth += 1;
            self.push(Kind::OBrace, "{");
        } else if closing == Some(self.depth) {
            self.push(Kind::TemplateSeqEnd, "}");
            self.modes.pop();
        } else {
            self.depth = self.depth.saturating_sub(1);
            self.push(Kind::CBrace, "}");
        }
        1
    }
}

fn is_ident_start(src: &str, i: usize) -> bool {
    src[i..]
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

fn open_template(
    src: &str,
    i: usize,
    toks: &mut Vec<Token>,
    modes: &mut Vec<Mode>,
    depth: &mut usize,
) -> usize {
    let kind = if src[i..].starts_with('$') {
        Kind::TemplateInterp
    } else {
        Kind::TemplateControl
    };
    let len = if src[i + 2..].starts_with('~') { 3 } else { 2 };
    toks.push(Token::new(kind, &src[i..i + len]));
    modes.push(Mode::Code(Some(*depth)));
    i + len
}

fn punct(s: &str) -> (Kind, usize) {
    const TWO: &[(&str, Kind)] = &[
        ("==", Kind::Op),
        ("!=", Kind::Op),
        ("<=", Kind::Op),
        (">=", Kind::Op),
        ("&&", Kind::Op),
        ("||", Kind::Op),
        ("=>", Kind::Arrow),
    ];
    if s.starts_with("...") {
        return (Kind::Ellipsis, 3);
    }
    for (p, k) in TWO {
        if s.starts_with(p) {
            return (*k, 2);
        }
    }
    let c = s.chars().next().unwrap_or(' ');
    let kind = match c {
        '[' => Kind::OBrack,
        ']' => Kind::CBrack,
        '(' => Kind::OParen,
        ')' => Kind::CParen,
        ',' => Kind::Comma,
        '.' => Kind::Dot,
        '=' => Kind::Equal,
        ':' => Kind::Colon,
        '?' => Kind::Question,
        '-' => Kind::Minus,
        '!' => Kind::Bang,
        '+' | '*' | '/' | '%' | '<' | '>' => Kind::Op,
        _ => Kind::Other,
    };
    (kind, c.len_utf8())
}

/// The space rule between two tokens on a line (hclwrite's `spaceAfterToken`).
fn space_after(subject: &Token, before: Option<&Token>, after: &Token) -> bool {
    use Kind::*;
    let bk = before.map(|t| t.kind);
    match () {
        _ if after.kind == Newline => false,
        _ if subject.kind == Ident && after.kind == OParen => false,
        _ if subject.kind == Dot || after.kind == Dot => false,
        _ if after.kind == Comma || after.kind == Ellipsis => false,
        _ if subject.kind == Comma => true,
        _ if matches!(subject.kind, QuotedLit | StringLit | OQuote | OHeredoc)
            || matches!(after.kind, QuotedLit | StringLit | CQuote | CHeredoc) =>
        {
            false
        }
        _ if subject.kind == Ident && subject.text == "in" && bk == Some(Ident) => true,
        _ if after.kind == OBrack
            && (matches!(subject.kind, Ident | Number) || subject.bracket_change() < 0) =>
        {
            false
        }
        _ if subject.kind == Minus => !matches!(
            bk,
            None | Some(
                OParen | OBrace | OBrack | Equal | Colon | Comma | Question | Op | Minus | Bang
            )
        ),
        _ if subject.kind == OBrace || after.kind == CBrace => {
            !(subject.kind == OBrace && after.kind == CBrace)
        }
        _ if matches!(subject.kind, TemplateInterp | TemplateControl) && after.kind == OBrace => {
            true
        }
        _ if subject.kind == CBrace && after.kind == TemplateSeqEnd => true,
        _ if subject.kind == TemplateSeqEnd
            && matches!(after.kind, TemplateInterp | TemplateControl) =>
        {
            false
        }
        _ if subject.bracket_change() > 0 => false,
        _ if after.bracket_change() < 0 => false,
        _ if subject.kind == Bang => false,
        _ => true,
    }
}

struct Line {
    lead: Vec<Token>,
    assign: Vec<Token>,
    comment: Vec<Token>,
}

fn columns(ts: &[Token]) -> usize {
    ts.iter()
        .map(|t| t.spaces + t.text.graphemes(true).count())
        .sum()
}

fn split_lines(toks: Vec<Token>) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut cur = Vec::new();
    for t in toks {
        let end = t.is_line_end();
        cur.push(t);
        if end {
            lines.push(std::mem::take(&mut cur));
        }
    }
    lines.push(cur);
    lines
        .into_iter()
        .map(|mut lead| {
            let mut comment = Vec::new();
            // A trailing comment (the line's last real token) is its own cell.
            let n = lead.len();
            // (A block comment followed by the newline is not trailing.)
            if n > 1 && lead[n - 1].kind == Kind::Comment {
                comment = lead.split_off(n - 1);
            }
            let mut assign = Vec::new();
            if let Some(eq) = lead
                .iter()
                .skip(1)
                .position(|t| t.kind == Kind::Equal)
                .map(|p| p + 1)
            {
                let mut net = 0;
                for t in &lead[eq..] {
                    net += t.bracket_change();
                    if t.kind == Kind::OHeredoc {
                        break;
                    }
                }
                if net == 0 {
                    assign = lead.split_off(eq);
                }
            }
            Line {
                lead,
                assign,
                comment,
            }
        })
        .collect()
}

fn format_tokens(toks: Vec<Token>) -> String {
    let mut lines = split_lines(toks);
    // Indentation by bracket depth, with hclwrite's indent stack.
    let mut indents: Vec<i32> = Vec::new();
    for line in &mut lines {
        let Some(first) = line.lead.first() else {
            continue;
        };
        if first.kind == Kind::Newline {
            line.lead[0].spaces = 0;
            continue;
        }
        let mut net = 0;
        for t in line.lead.iter().chain(&line.assign) {
            net += t.bracket_change();
            if t.kind == Kind::OHeredoc {
                break;
            }
        }
        if net > 0 {
            line.lead[0].spaces = 2 * indents.len();
            indents.push(net);
        } else {
            let mut closed = -net;
            while closed > 0 {
                let Some(top) = indents.last_mut() else { break };
                if closed >= *top {
                    closed -= *top;
                    indents.pop();
                } else {
                    *top -= closed;
                    closed = 0;
                }
            }
            line.lead[0].spaces = 2 * indents.len();
        }
    }
    // Spaces between tokens.
    for line in &mut lines {
        for cell in [&mut line.lead, &mut line.assign, &mut line.comment] {
            for i in 0..cell.len().saturating_sub(1) {
                let s = space_after(
                    &cell[i],
                    if i > 0 { Some(&cell[i - 1]) } else { None },
                    &cell[i + 1],
                );
                cell[i + 1].spaces = usize::from(s);
            }
        }
        if let Some(a) = line.assign.first_mut() {
            a.spaces = 1;
        }
        if let Some(c) = line.comment.first_mut() {
            c.spaces = 1;
        }
    }
    // Align the `=` of consecutive assignment lines, then their comments.
    align(
        &mut lines,
        |l| !l.assign.is_empty(),
        |l| columns(&l.lead),
        |l, n| l.assign[0].spaces = n,
    );
    align(
        &mut lines,
        |l| !l.comment.is_empty(),
        |l| columns(&l.lead) + columns(&l.assign),
        |l, n| l.comment[0].spaces = n,
    );
    let mut out = String::new();
    for line in &lines {
        for t in line.lead.iter().chain(&line.assign).chain(&line.comment) {
            for _ in 0..t.spaces {
                out.push(' ');
            }
            out.push_str(&t.text);
        }
    }
    out
}

fn align(
    lines: &mut [Line],
    member: fn(&Line) -> bool,
    width: fn(&Line) -> usize,
    set: fn(&mut Line, usize),
) {
    let mut i = 0;
    while i < lines.len() {
        if !member(&lines[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && member(&lines[i]) {
            i += 1;
        }
        let max = lines[start..i].iter().map(width).max().unwrap_or(0);
        for l in &mut lines[start..i] {
            let w = width(l);
            set(l, max - w + 1);
        }
    }
}

/// Terraform's normalisations on top of layout: block labels quoted,
/// `"${expr}"` unwrapped, legacy quoted type names in variable blocks.
fn normalize(toks: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(toks.len());
    let mut blocks: Vec<String> = Vec::new();
    let mut depth_at_block: Vec<i32> = Vec::new();
    let mut depth = 0i32;
    let mut i = 0;
    let mut line_start = true;
    while i < toks.len() {
        // A block header: ident (labels...) { at the start of a line.
        if line_start && toks[i].kind == Kind::Ident {
            let mut j = i + 1;
            while j < toks.len()
                && matches!(
                    toks[j].kind,
                    Kind::Ident | Kind::OQuote | Kind::QuotedLit | Kind::CQuote
                )
            {
                j += 1;
            }
            if j < toks.len()
                && toks[j].kind == Kind::OBrace
                && !toks[i + 1..j].iter().any(|t| t.kind == Kind::Equal)
            {
                out.push(toks[i].clone());
                for t in &toks[i + 1..j] {
                    if t.kind == Kind::Ident {
                        out.push(Token::new(Kind::OQuote, "\""));
                        out.push(Token::new(Kind::QuotedLit, t.text.clone()));
                        out.push(Token::new(Kind::CQuote, "\""));
                    } else {
                        out.push(t.clone());
                    }
                }
                blocks.push(toks[i].text.clone());
                depth += 1;
                depth_at_block.push(depth);
                out.push(toks[j].clone());
                i = j + 1;
                line_start = false;
                continue;
            }
            // An attribute: name = value (single-line values only).
            if i + 1 < toks.len() && toks[i + 1].kind == Kind::Equal {
                let end = (i + 2..toks.len())
                    .find(|&k| toks[k].is_line_end())
                    .unwrap_or(toks.len());
                let value = &toks[i + 2..end];
                let in_variable = blocks.len() == 1
                    && blocks[0] == "variable"
                    && depth == depth_at_block.last().copied().unwrap_or(-1);
                let replaced = if in_variable && toks[i].text == "type" {
                    type_expr(value)
                } else {
                    unwrap_interpolation(value)
                };
                if let Some(r) = replaced {
                    out.push(toks[i].clone());
                    out.push(toks[i + 1].clone());
                    out.extend(r);
                    i = end;
                    line_start = false;
                    continue;
                }
            }
        }
        let t = &toks[i];
        match t.kind {
            Kind::OBrace
            | Kind::OBrack
            | Kind::OParen
            | Kind::TemplateInterp
            | Kind::TemplateControl => depth += 1,
            Kind::CBrace | Kind::CBrack | Kind::CParen | Kind::TemplateSeqEnd => {
                if t.kind == Kind::CBrace && depth_at_block.last() == Some(&depth) {
                    depth_at_block.pop();
                    blocks.pop();
                }
                depth -= 1;
            }
            _ => {}
        }
        line_start = t.is_line_end();
        out.push(t.clone());
        i += 1;
    }
    out
}

fn unwrap_interpolation(v: &[Token]) -> Option<Vec<Token>> {
    let n = v.len();
    if n < 5
        || v[0].kind != Kind::OQuote
        || v[1].kind != Kind::TemplateInterp
        || v[n - 2].kind != Kind::TemplateSeqEnd
        || v[n - 1].kind != Kind::CQuote
    {
        return None;
    }
    let inside = &v[2..n - 2];
    let mut quotes = 0;
    for t in inside {
        match t.kind {
            Kind::OQuote => quotes += 1,
            Kind::CQuote => quotes -= 1,
            _ if quotes > 0 => {}
            Kind::TemplateInterp | Kind::TemplateSeqEnd | Kind::QuotedLit => return None,
            _ => {}
        }
    }
    Some(inside.to_vec())
}

fn type_expr(v: &[Token]) -> Option<Vec<Token>> {
    let ident = |s: &str| Token::new(Kind::Ident, s);
    let call = |f: &str, arg: &str| {
        vec![
            ident(f),
            Token::new(Kind::OParen, "("),
            ident(arg),
            Token::new(Kind::CParen, ")"),
        ]
    };
    match v {
        [t] if t.kind == Kind::Ident && matches!(t.text.as_str(), "list" | "map" | "set") => {
            Some(call(&t.text, "any"))
        }
        [o, s, c]
            if o.kind == Kind::OQuote && s.kind == Kind::QuotedLit && c.kind == Kind::CQuote =>
        {
            match s.text.as_str() {
                "string" => Some(vec![ident("string")]),
                "list" => Some(call("list", "string")),
                "map" => Some(call("map", "string")),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Formats one file's text in Terraform's canonical style.
pub fn format_source(src: &str) -> String {
    format_tokens(normalize(lex(src)))
}

/// The files `fmt` formats: `path` itself, or the configuration files in
/// the directory `path` (and, `recursive`, in its subdirectories, hidden
/// ones such as `.terraform` left out, as Terraform's `-recursive` does),
/// in name order, a directory's files where its name sorts.
/// A file's change as `diff -u` shows it, with Terraform's `old/` and
/// `new/` names.
pub fn unified_diff(path: &Path, old: &str, new: &str) -> String {
    let name = path.display().to_string();
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("old/{name}"), &format!("new/{name}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::format_source;

    #[test]
    fn multibyte_escapes_and_odd_input_do_not_panic() {
        // Found by fuzzing: an escaped multi-byte character in a string.
        for src in [
            "x = \"\\é\"",
            "\"\\é",
            "a = \"${\"\\ü\"}\"",
            "<<EOT\né${x}\nEOT",
            "\r",
            "a = \"\r\n",
        ] {
            let once = format_source(src);
            let _ = format_source(&once);
        }
    }
}
