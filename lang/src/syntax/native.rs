//! HCL's native syntax, read straight into strata's tree: bodies, blocks,
//! attributes and expressions (templates are in [`super::template`]).
//!
//! Hand-written, recursive descent, so that its limits are strata's: a
//! chain of binary operators is one flat node however long it is (each
//! precedence level a loop, not a recursion), and everything that nests —
//! brackets, interpolations, conditionals, unary operators, traversal
//! steps — counts against [`MAX_NESTING`] before it can deepen the stack.
//! Newlines end an attribute's expression, as in HCL, except inside
//! brackets, parentheses and interpolations.

use super::ast::*;
use super::{too_deep, Attribute, Block, Body, MAX_NESTING};
use crate::diag::{Diag, FileId, Span};
use crate::lang::number::{Number, ParseNumberError};
use crate::lang::value::Value;

pub(super) struct Parser<'s> {
    pub file: FileId,
    pub src: &'s str,
    pub pos: usize,
    /// Where the text being parsed stops (a heredoc's body, a piece of a
    /// JSON file); nothing at or past it is read.
    pub end: usize,
    depth: usize,
    /// Whether a newline ends what is being read (a body's attributes, an
    /// object's items) or is space (inside brackets).
    newlines: bool,
}

/// The head of a `for`: its names and collection.
pub(super) struct ForHead {
    pub key_var: Option<String>,
    pub value_var: String,
    pub collection: Expr,
}

/// One step after a term.
enum Step {
    /// `.name`
    Attr(String),
    /// `[key]`, or the legacy `.0`
    Index(Expr),
    /// `.*`
    AttrSplat,
    /// `[*]`
    FullSplat,
}

/// Binary operators by precedence level, loosest first, as in HCL.
const LEVELS: [&[(&str, BinaryOp)]; 6] = [
    &[("||", BinaryOp::Or)],
    &[("&&", BinaryOp::And)],
    &[("==", BinaryOp::Eq), ("!=", BinaryOp::NotEq)],
    &[
        ("<=", BinaryOp::LtEq),
        (">=", BinaryOp::GtEq),
        ("<", BinaryOp::Lt),
        (">", BinaryOp::Gt),
    ],
    &[("+", BinaryOp::Add), ("-", BinaryOp::Sub)],
    &[
        ("*", BinaryOp::Mul),
        ("/", BinaryOp::Div),
        ("%", BinaryOp::Mod),
    ],
];

impl<'s> Parser<'s> {
    pub fn new(file: FileId, src: &'s str, start: usize, end: usize) -> Parser<'s> {
        Parser {
            file,
            src,
            pos: start,
            end: end.min(src.len()),
            depth: 0,
            newlines: true,
        }
    }

    // ---- reading ----

    pub fn peek(&self) -> Option<u8> {
        self.peek_at(0)
    }

    fn peek_at(&self, n: usize) -> Option<u8> {
        let i = self.pos + n;
        (i < self.end).then(|| self.src.as_bytes()[i])
    }

    pub fn at_str(&self, s: &[u8]) -> bool {
        self.src.as_bytes()[self.pos.min(self.end)..self.end].starts_with(s)
    }

    pub fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.pos += usize::from(hit);
        hit
    }

    fn eat_str(&mut self, s: &str) -> bool {
        let hit = self.at_str(s.as_bytes());
        if hit {
            self.pos += s.len();
        }
        hit
    }

    pub fn span_from(&self, start: usize) -> Span {
        Span::new(self.file, start, self.pos)
    }

    /// The character at the parser's place, or the empty place at the end.
    pub fn here(&self) -> Span {
        let len = self.src[self.pos.min(self.end)..self.end]
            .chars()
            .next()
            .map_or(0, char::len_utf8);
        Span::new(self.file, self.pos, self.pos + len)
    }

    pub fn error(&self, summary: impl Into<String>, detail: impl Into<String>, at: Span) -> Diag {
        Diag::new("strata::syntax::parse", summary, detail).at(at)
    }

    /// Skips space, then eats `c` or fails with `summary` where it is not.
    fn expect(&mut self, c: u8, summary: &str, detail: &str) -> Result<(), Diag> {
        self.skip_space()?;
        if self.eat(c) {
            return Ok(());
        }
        Err(self.error(summary, detail, self.here()))
    }

    /// Skips spaces and comments, and newlines where they are space.
    pub fn skip_space(&mut self) -> Result<(), Diag> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r') => self.pos += 1,
                Some(b'\n') if !self.newlines => self.pos += 1,
                Some(b'#') => self.skip_line(),
                Some(b'/') if self.peek_at(1) == Some(b'/') => self.skip_line(),
                Some(b'/') if self.peek_at(1) == Some(b'*') => {
                    let start = self.pos;
                    match self.src[self.pos + 2..self.end].find("*/") {
                        Some(i) => self.pos += 2 + i + 2,
                        None => {
                            return Err(self.error(
                                "Unterminated comment",
                                "There is no */ closing the comment that starts here.",
                                Span::new(self.file, start, start + 2),
                            ))
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// To the newline ending a line comment (the newline is left).
    fn skip_line(&mut self) {
        self.pos = self.src[self.pos..self.end]
            .find('\n')
            .map_or(self.end, |i| self.pos + i);
    }

    /// Skips spaces, comments and newlines, whatever the mode.
    fn skip_lines(&mut self) -> Result<(), Diag> {
        self.inside(false, Parser::skip_space)
    }

    /// Runs `f` with newlines ending things (`true`) or not.
    pub fn inside<T>(
        &mut self,
        newlines: bool,
        f: impl FnOnce(&mut Self) -> Result<T, Diag>,
    ) -> Result<T, Diag> {
        let saved = std::mem::replace(&mut self.newlines, newlines);
        let r = f(self);
        self.newlines = saved;
        r
    }

    /// Runs `f` one level deeper, refusing to pass [`MAX_NESTING`].
    fn deeper<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, Diag>) -> Result<T, Diag> {
        if self.depth >= MAX_NESTING {
            return Err(too_deep().at(self.here()));
        }
        self.depth += 1;
        let r = stacker::maybe_grow(crate::par::RED_ZONE, crate::par::GROW, || f(self));
        self.depth -= 1;
        r
    }

    /// An identifier at the parser's place: letters, digits, `_` and `-`,
    /// not starting with a digit or a dash.
    pub fn ident(&mut self) -> Option<(String, Span)> {
        let rest = &self.src[self.pos.min(self.end)..self.end];
        let first = rest.chars().next()?;
        if !(first.is_alphabetic() || first == '_') {
            return None;
        }
        let len = rest
            .char_indices()
            .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .map_or(rest.len(), |(i, _)| i);
        let start = self.pos;
        self.pos += len;
        Some((rest[..len].to_string(), self.span_from(start)))
    }

    /// Whether an `=` that assigns (not `==` or `=>`) is at the parser's place.
    fn at_assign(&self) -> bool {
        self.at_str(b"=") && !self.at_str(b"==") && !self.at_str(b"=>")
    }

    /// Whether the identifier at the parser's place is `word`.
    fn at_keyword(&self, word: &str) -> bool {
        self.at_str(word.as_bytes())
            && !self.src[self.pos + word.len()..self.end]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-')
    }

    // ---- bodies ----

    /// A whole file's body.
    pub fn file_body(&mut self) -> Result<Body, Diag> {
        self.body_until(None)
    }

    /// Attributes and blocks, each ending its line, up to the end of the
    /// text or (inside a block opened at `open`) a closing brace.
    fn body_until(&mut self, open: Option<Span>) -> Result<Body, Diag> {
        let start = self.pos;
        let mut body = Body {
            attrs: Vec::new(),
            blocks: Vec::new(),
            span: Span::new(self.file, start, start),
            json: false,
        };
        loop {
            self.skip_lines()?;
            match (self.peek(), open) {
                (None, Some(open)) => {
                    return Err(self.error(
                        "Unclosed configuration block",
                        "There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
                        open,
                    ))
                }
                (None, None) | (Some(b'}'), Some(_)) => break,
                _ => {}
            }
            let what = self.item(&mut body)?;
            self.skip_space()?;
            if !(self.peek().is_none() || self.eat(b'\n')) {
                return Err(self.error(
                    format!("Missing newline after {what}"),
                    format!("An {what} must end with a newline."),
                    self.here(),
                ));
            }
        }
        body.span = self.span_from(start);
        Ok(body)
    }

    /// One attribute or block, added to `body`; says which it was.
    fn item(&mut self, body: &mut Body) -> Result<&'static str, Diag> {
        let Some((name, name_span)) = self.ident() else {
            return Err(self.error(
                "Argument or block definition required",
                "An argument or block definition is required here.",
                self.here(),
            ));
        };
        self.skip_space()?;
        if self.at_assign() {
            let attr = self.attribute(name, name_span)?;
            if let Some(first) = body.attrs.iter().find(|a| a.name == attr.name) {
                return Err(self
                    .error(
                        "Attribute redefined",
                        format!(
                            "The argument {:?} was already set. Each argument may be set only once.",
                            attr.name
                        ),
                        attr.name_span,
                    )
                    .also("first set here", first.name_span));
            }
            body.attrs.push(attr);
            return Ok("argument definition");
        }
        let block = self.block(name, name_span)?;
        body.blocks.push(block);
        Ok("block definition")
    }

    /// `name = expr`, at the `=`.
    fn attribute(&mut self, name: String, name_span: Span) -> Result<Attribute, Diag> {
        self.pos += 1;
        let expr = self.inside(true, Parser::expr)?;
        Ok(Attribute {
            name,
            name_span,
            span: name_span.to(expr.span),
            expr,
        })
    }

    /// `kind label… { body }`, after the kind.
    fn block(&mut self, kind: String, kind_span: Span) -> Result<Block, Diag> {
        let mut labels = Vec::new();
        loop {
            match self.peek() {
                Some(b'{') => break,
                Some(b'"') => {
                    let label = self.quoted()?;
                    match &label.kind {
                        ExprKind::Literal(v) if matches!(**v, Value::String(_)) => {
                            if let Value::String(s) = &**v {
                                labels.push((s.to_string(), label.span));
                            }
                        }
                        _ => {
                            return Err(self.error(
                                "Invalid block label",
                                "A block label is a literal string: template sequences (${ or %{) are not allowed in it. To include a literal \"${\", use \"$${\".",
                                label.span,
                            ))
                        }
                    }
                }
                _ => match self.ident() {
                    Some(label) => labels.push(label),
                    None => {
                        return Err(self.error(
                            "Invalid block definition",
                            "Either a quoted string block label or an opening brace (\"{\") is expected here.",
                            self.here(),
                        ))
                    }
                },
            }
            self.skip_space()?;
        }
        let open = self.here();
        self.pos += 1;
        let body = self.block_body(open)?;
        Ok(Block {
            kind,
            kind_span,
            labels,
            span: self.span_from(kind_span.start as usize),
            body,
        })
    }

    /// A block's body after its `{`, to and with its `}`: several lines, or
    /// a single argument on the block's own line.
    fn block_body(&mut self, open: Span) -> Result<Body, Diag> {
        self.skip_space()?;
        let single = !matches!(self.peek(), Some(b'\n' | b'}') | None);
        let mut body = if single {
            self.single_line_body(open)?
        } else {
            self.body_until(Some(open))?
        };
        if !self.eat(b'}') {
            return Err(self.error(
                "Invalid single-argument block definition",
                "A single-line block definition must end with a closing brace immediately after its single argument definition.",
                self.here(),
            ));
        }
        body.span = Span::new(self.file, open.end as usize, self.pos - 1);
        Ok(body)
    }

    fn single_line_body(&mut self, open: Span) -> Result<Body, Diag> {
        let start = self.pos;
        let ident = self.ident();
        self.skip_space()?;
        let attr = match ident {
            Some((name, name_span)) if self.at_assign() => {
                self.attribute(name, name_span)?
            }
            _ => {
                return Err(self.error(
                    "Invalid single-argument block definition",
                    "A single-line block definition can contain only a single argument definition; put a nested block on lines of its own.",
                    Span::new(self.file, start, self.pos.max(start + 1)).to(open),
                ))
            }
        };
        self.skip_space()?;
        Ok(Body {
            attrs: vec![attr],
            blocks: Vec::new(),
            span: self.span_from(start),
            json: false,
        })
    }

    // ---- expressions ----

    /// An expression standing alone (`console`, a `--var` value, a piece
    /// of a JSON file): newlines are space, and nothing may follow it.
    pub fn whole_expr(&mut self) -> Result<Expr, Diag> {
        let e = self.inside(false, |p| {
            let e = p.expr()?;
            p.skip_space()?;
            Ok(e)
        })?;
        if self.pos < self.end {
            return Err(self.error(
                "Extra characters after expression",
                "An expression was read completely, and more text follows it.",
                self.here(),
            ));
        }
        Ok(e)
    }

    /// A full expression: a conditional, or what it is made of.
    pub fn expr(&mut self) -> Result<Expr, Diag> {
        self.deeper(Parser::conditional)
    }

    fn conditional(&mut self) -> Result<Expr, Diag> {
        let cond = self.binary(0)?;
        self.skip_space()?;
        if !self.eat(b'?') {
            return Ok(cond);
        }
        let then = self.expr()?;
        self.expect(
            b':',
            "Missing false expression in conditional",
            "The conditional operator (...?...:...) requires a false expression, delimited by a colon.",
        )?;
        let otherwise = self.expr()?;
        let span = cond.span.to(otherwise.span);
        Ok(Expr::new(
            ExprKind::Conditional(Box::new(cond), Box::new(then), Box::new(otherwise)),
            span,
        ))
    }

    /// The operators of precedence `level` and tighter: a loop over this
    /// level's operators, so a chain costs no depth.
    fn binary(&mut self, level: usize) -> Result<Expr, Diag> {
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let first = self.binary(level + 1)?;
        let mut rest = Vec::new();
        loop {
            self.skip_space()?;
            let Some(&(text, op)) = ops.iter().find(|(t, _)| self.at_operator(t)) else {
                break;
            };
            self.pos += text.len();
            let rhs = self.binary(level + 1)?;
            rest.push(Operation { op, rhs });
        }
        if rest.is_empty() {
            return Ok(first);
        }
        let span = first.span.to(rest[rest.len() - 1].rhs.span);
        Ok(Expr::new(
            ExprKind::Binary(Box::new(Chain { first, rest })),
            span,
        ))
    }

    /// Whether operator `op` is at the parser's place, not the start of a
    /// longer token (`<<`, `=>`).
    fn at_operator(&self, op: &str) -> bool {
        self.at_str(op.as_bytes()) && !(op == "<" && self.at_str(b"<<"))
    }

    /// `-x` and `!x`, binding tighter than any binary operator; a negated
    /// number literal is a literal.
    fn unary(&mut self) -> Result<Expr, Diag> {
        self.skip_space()?;
        let start = self.pos;
        let op = match self.peek() {
            Some(b'-') => UnaryOp::Neg,
            Some(b'!') if !self.at_str(b"!=") => UnaryOp::Not,
            _ => {
                let term = self.term()?;
                return self.steps(term);
            }
        };
        self.pos += 1;
        let operand = self.deeper(Parser::unary)?;
        let span = self.span_from(start).to(operand.span);
        if let (UnaryOp::Neg, ExprKind::Literal(v)) = (op, &operand.kind) {
            if let Value::Number(n) = &**v {
                return Ok(Expr::new(
                    ExprKind::Literal(Box::new(Value::Number(n.neg()))),
                    span,
                ));
            }
        }
        Ok(Expr::new(ExprKind::Unary(op, Box::new(operand)), span))
    }

    fn term(&mut self) -> Result<Expr, Diag> {
        let start = self.pos;
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                let inner = self.inside(false, |p| {
                    let e = p.expr()?;
                    p.expect(
                        b')',
                        "Unbalanced parentheses",
                        "Expected a closing parenthesis to terminate the expression.",
                    )?;
                    Ok(e)
                })?;
                Ok(Expr::new(
                    ExprKind::Parens(Box::new(inner)),
                    self.span_from(start),
                ))
            }
            Some(b'[') => self.tuple(),
            Some(b'{') => self.object(),
            Some(b'"') => self.quoted(),
            Some(b'<') if self.at_str(b"<<") => self.heredoc(),
            Some(b'0'..=b'9') => self.number(),
            _ => match self.ident() {
                Some((name, span)) => self.name(name, span),
                None => Err(self.expected_expression()),
            },
        }
    }

    fn expected_expression(&self) -> Diag {
        let found = match self.peek() {
            None => "the end of the text",
            Some(b'\n') => "the end of the line (an expression that spans lines goes inside parentheses or brackets)",
            Some(_) => "an invalid expression token",
        };
        self.error(
            "Invalid expression",
            format!("Expected the start of an expression, but found {found}."),
            self.here(),
        )
    }

    fn number(&mut self) -> Result<Expr, Diag> {
        let start = self.pos;
        self.pos += super::number_literal_len(&self.src.as_bytes()[start..self.end]);
        let text = &self.src[start..self.pos];
        let span = self.span_from(start);
        let n = Number::parse(text).map_err(|e| {
            let detail = match e {
                ParseNumberError::OutOfRange => format!(
                    "{text:?} is out of range: the exponent may be at most {}.",
                    crate::lang::number::MAX_DECIMAL_EXPONENT
                ),
                ParseNumberError::Syntax => format!("{text:?} is not a number."),
            };
            Diag::new("strata::syntax::number", "Invalid number literal", detail).at(span)
        })?;
        Ok(Expr::new(
            ExprKind::Literal(Box::new(Value::Number(n))),
            span,
        ))
    }

    /// A keyword, a variable, or a function call (`f(…)`, `ns::f(…)`).
    fn name(&mut self, name: String, span: Span) -> Result<Expr, Diag> {
        let literal = match name.as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            "null" => Some(Value::null()),
            _ => None,
        };
        if let Some(v) = literal {
            return Ok(Expr::new(ExprKind::Literal(Box::new(v)), span));
        }
        let after_name = self.pos;
        self.skip_space()?;
        let mut full = name;
        while self.at_str(b"::") {
            self.pos += 2;
            self.skip_space()?;
            let Some((part, _)) = self.ident() else {
                return Err(self.error(
                    "Missing function name",
                    "A function's namespace (ns::) must be followed by the function's name.",
                    self.here(),
                ));
            };
            full.push_str("::");
            full.push_str(&part);
            self.skip_space()?;
            if !self.at_str(b"::") && self.peek() != Some(b'(') {
                return Err(self.error(
                    "Missing open parenthesis",
                    "A namespaced function name must be followed by its arguments in parentheses.",
                    self.here(),
                ));
            }
        }
        if self.peek() != Some(b'(') {
            self.pos = after_name;
            return Ok(Expr::new(ExprKind::Variable(full), span));
        }
        self.pos += 1;
        self.call(full, span)
    }

    /// A function call's arguments, after its `(`.
    fn call(&mut self, name: String, name_span: Span) -> Result<Expr, Diag> {
        let mut args = Vec::new();
        let mut expand_final = false;
        self.inside(false, |p| loop {
            p.skip_space()?;
            if p.eat(b')') {
                return Ok(());
            }
            if p.peek().is_none() {
                return Err(p.error(
                    "Unterminated function call",
                    "There is no closing parenthesis for this function call before the end of the text.",
                    name_span,
                ));
            }
            args.push(p.expr()?);
            p.skip_space()?;
            if p.eat_str("...") {
                expand_final = true;
                p.skip_space()?;
                if !p.eat(b')') {
                    return Err(p.error(
                        "Missing close parenthesis",
                        "An expanded function argument (with ...) must be immediately followed by closing parentheses.",
                        p.here(),
                    ));
                }
                return Ok(());
            }
            if !p.eat(b',') && p.peek() != Some(b')') {
                return Err(p.error(
                    "Missing argument separator",
                    "A comma is required to separate each function argument from the next.",
                    p.here(),
                ));
            }
        })?;
        Ok(Expr::new(
            ExprKind::Call {
                name,
                args,
                expand_final,
            },
            self.span_from(name_span.start as usize),
        ))
    }

    /// `[a, b]` or `[for …]`.
    fn tuple(&mut self) -> Result<Expr, Diag> {
        let start = self.pos;
        self.pos += 1;
        self.inside(false, |p| {
            p.skip_space()?;
            if p.at_keyword("for") {
                return p.for_expr(start, false);
            }
            let mut items = Vec::new();
            loop {
                p.skip_space()?;
                if p.eat(b']') {
                    break;
                }
                if p.peek().is_none() {
                    return Err(p.unclosed("tuple", "]", start));
                }
                items.push(p.expr()?);
                p.skip_space()?;
                if !p.eat(b',') && p.peek() != Some(b']') {
                    return Err(p.error(
                        "Missing item separator",
                        "Expected a comma to mark the beginning of the next item.",
                        p.here(),
                    ));
                }
            }
            Ok(Expr::new(ExprKind::Tuple(items), p.span_from(start)))
        })
    }

    fn unclosed(&self, what: &str, close: &str, start: usize) -> Diag {
        self.error(
            format!("Unterminated {what}"),
            format!("There is no {close} closing this {what} before the end of the text."),
            Span::new(self.file, start, start + 1),
        )
    }

    /// `{ key = value, … }` (items end at commas or newlines) or `{for …}`.
    fn object(&mut self) -> Result<Expr, Diag> {
        let start = self.pos;
        self.pos += 1;
        self.skip_lines()?;
        if self.at_keyword("for") {
            return self.inside(false, |p| p.for_expr(start, true));
        }
        let mut items = Vec::new();
        self.inside(true, |p| loop {
            p.skip_lines()?;
            if p.eat(b'}') {
                return Ok(());
            }
            if p.peek().is_none() {
                return Err(p.unclosed("object", "}", start));
            }
            let key = p.object_key()?;
            p.skip_space()?;
            if !(p.at_assign() || p.at_str(b":")) {
                return Err(p.error(
                    "Missing key/value separator",
                    "Expected an equals sign (\"=\") to mark the beginning of the attribute value.",
                    p.here(),
                ));
            }
            p.pos += 1;
            let value = p.expr()?;
            items.push((key, value));
            p.skip_space()?;
            if !p.eat(b',') && !matches!(p.peek(), Some(b'\n' | b'}')) {
                return Err(p.error(
                    "Missing attribute separator",
                    "Expected a newline or comma to mark the beginning of the next attribute.",
                    p.here(),
                ));
            }
        })?;
        Ok(Expr::new(ExprKind::Object(items), self.span_from(start)))
    }

    /// A bare name (keywords included) names itself; anything else is an
    /// expression whose value is the key.
    fn object_key(&mut self) -> Result<ObjectKey, Diag> {
        let start = self.pos;
        if let Some((name, _)) = self.ident() {
            self.skip_space()?;
            if self.at_assign() || self.at_str(b":") {
                return Ok(ObjectKey::Name(name));
            }
            self.pos = start;
        }
        Ok(ObjectKey::Expr(self.expr()?))
    }

    /// `[for k, v in coll : value if cond]` or `{for … : key => value… if
    /// cond}`, at `for`; `start` is the opening bracket.
    fn for_expr(&mut self, start: usize, object: bool) -> Result<Expr, Diag> {
        let keyword = Span::new(self.file, self.pos, self.pos + 3);
        self.pos += 3;
        let head = self.for_head()?;
        self.skip_space()?;
        let invalid = |p: &Parser, detail: &str| {
            p.error("Invalid 'for' expression", detail.to_string(), p.here())
        };
        if !self.eat(b':') {
            return Err(invalid(
                self,
                "A 'for' expression requires a colon after the collection expression.",
            ));
        }
        let key = if object {
            let k = self.expr()?;
            self.skip_space()?;
            if !self.eat_str("=>") {
                return Err(invalid(
                    self,
                    "A 'for' expression producing an object requires a '=>' after the key expression.",
                ));
            }
            Some(k)
        } else {
            None
        };
        let value = self.expr()?;
        self.skip_space()?;
        let grouping = object && self.eat_str("...");
        self.skip_space()?;
        let cond = if self.at_keyword("if") {
            self.pos += 2;
            Some(self.expr()?)
        } else {
            None
        };
        self.skip_space()?;
        let close = if object { b'}' } else { b']' };
        if !self.eat(close) {
            if self.peek().is_none() {
                return Err(self.error(
                    "Invalid 'for' expression",
                    format!(
                        "There is no {} closing this 'for' expression before the end of the text.",
                        close as char
                    ),
                    keyword,
                ));
            }
            return Err(invalid(
                self,
                "Extra characters after the end of the 'for' expression.",
            ));
        }
        Ok(Expr::new(
            ExprKind::For(Box::new(ForExpr {
                key_var: head.key_var,
                value_var: head.value_var,
                collection: head.collection,
                key,
                value,
                cond,
                grouping,
            })),
            self.span_from(start),
        ))
    }

    /// `k, v in coll` after a `for` (of an expression or a template).
    pub fn for_head(&mut self) -> Result<ForHead, Diag> {
        let name = |p: &mut Parser, what: &str| -> Result<String, Diag> {
            p.skip_space()?;
            p.ident().map(|(n, _)| n).ok_or_else(|| {
                p.error(
                    "Invalid 'for' expression",
                    format!("A 'for' requires a variable name {what}."),
                    p.here(),
                )
            })
        };
        let first = name(self, "after 'for'")?;
        self.skip_space()?;
        let (key_var, value_var) = if self.eat(b',') {
            (Some(first), name(self, "after the comma")?)
        } else {
            (None, first)
        };
        self.skip_space()?;
        if !self.at_keyword("in") {
            return Err(self.error(
                "Invalid 'for' expression",
                "A 'for' requires the 'in' keyword after its names.",
                self.here(),
            ));
        }
        self.pos += 2;
        Ok(ForHead {
            key_var,
            value_var,
            collection: self.expr()?,
        })
    }

    /// The traversal steps after a term (`.a`, `[k]`, `.0`, `.*`, `[*]`).
    fn steps(&mut self, term: Expr) -> Result<Expr, Diag> {
        let mut steps = Vec::new();
        loop {
            let before = self.pos;
            self.skip_space()?;
            let start = self.pos;
            let step = match (self.peek(), self.peek_at(1)) {
                (Some(b'.'), Some(b'.')) => None,
                (Some(b'.'), Some(b'*')) => {
                    self.pos += 2;
                    Some(Step::AttrSplat)
                }
                (Some(b'.'), Some(b'0'..=b'9')) => Some(self.legacy_index()?),
                (Some(b'.'), _) => {
                    self.pos += 1;
                    self.skip_space()?;
                    match self.ident() {
                        Some((name, _)) => Some(Step::Attr(name)),
                        None => {
                            return Err(self.error(
                                "Invalid attribute name",
                                "An attribute name is required after a dot.",
                                self.here(),
                            ))
                        }
                    }
                }
                (Some(b'['), _) => Some(self.index()?),
                _ => None,
            };
            let Some(step) = step else {
                self.pos = before;
                break;
            };
            if self.depth + steps.len() >= MAX_NESTING {
                return Err(too_deep().at(self.span_from(start)));
            }
            steps.push((step, self.span_from(start)));
        }
        if steps.is_empty() {
            return Ok(term);
        }
        let span = term.span.to(steps[steps.len() - 1].1);
        let mut out = chain(term, &mut steps.into_iter().peekable());
        out.span = span;
        Ok(out)
    }

    /// `.0`: HCL's scanner reads `.0.1` as the number 0.1, so Terraform
    /// refuses chained legacy indexes; so do we.
    fn legacy_index(&mut self) -> Result<Step, Diag> {
        let start = self.pos;
        self.pos += 1;
        let digits = self.src.as_bytes()[self.pos..self.end]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let at = self.pos;
        self.pos += digits;
        if self.peek() == Some(b'.') && self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
            return Err(self.error(
                "Invalid legacy index syntax",
                "When using the legacy index syntax, chaining two indexes together is not permitted. Use the proper index syntax instead, like [1][2].",
                self.span_from(start),
            ));
        }
        let n = Number::parse(&self.src[at..self.pos]).unwrap_or_else(|_| Number::from_i64(0));
        Ok(Step::Index(Expr::new(
            ExprKind::Literal(Box::new(Value::Number(n))),
            self.span_from(start),
        )))
    }

    /// `[key]` or `[*]`, at the `[`.
    fn index(&mut self) -> Result<Step, Diag> {
        self.pos += 1;
        self.inside(false, |p| {
            p.skip_space()?;
            if p.peek() == Some(b'*') {
                let star = p.pos;
                p.pos += 1;
                p.skip_space()?;
                if p.eat(b']') {
                    return Ok(Step::FullSplat);
                }
                p.pos = star;
            }
            let key = p.expr()?;
            p.expect(
                b']',
                "Missing close bracket on index",
                "The index operator must end with a closing bracket (\"]\").",
            )?;
            Ok(Step::Index(key))
        })
    }
}

/// Applies traversal steps to `cur`. A full splat (`[*]`) takes every
/// step after it as the per-element part; an attribute splat (`.*`) only
/// the attribute accesses right after it.
fn chain(mut cur: Expr, steps: &mut std::iter::Peekable<std::vec::IntoIter<(Step, Span)>>) -> Expr {
    while let Some((step, span)) = steps.next() {
        match step {
            Step::FullSplat => {
                let each = chain(Expr::new(ExprKind::SplatItem, span), steps);
                let sp = cur.span.to(each.span);
                return Expr::new(ExprKind::Splat(Box::new(cur), Box::new(each)), sp);
            }
            Step::AttrSplat => {
                let mut each = Expr::new(ExprKind::SplatItem, span);
                while let Some((Step::Attr(_), _)) = steps.peek() {
                    if let Some((Step::Attr(name), s)) = steps.next() {
                        each = apply(each, Step::Attr(name), s);
                    }
                }
                let sp = cur.span.to(each.span);
                cur = Expr::new(ExprKind::Splat(Box::new(cur), Box::new(each)), sp);
            }
            step => cur = apply(cur, step, span),
        }
    }
    cur
}

fn apply(base: Expr, step: Step, step_span: Span) -> Expr {
    let span = base.span.to(step_span);
    let kind = match step {
        Step::Attr(name) => ExprKind::GetAttr(Box::new(base), name),
        Step::Index(key) => ExprKind::Index(Box::new(base), Box::new(key)),
        Step::AttrSplat | Step::FullSplat => ExprKind::Splat(
            Box::new(base),
            Box::new(Expr::new(ExprKind::SplatItem, step_span)),
        ),
    };
    Expr::new(kind, span)
}
