//! Terraform's JSON configuration syntax (`*.tf.json`), read into the same
//! [`Body`] the native syntax gives.
//!
//! JSON has no blocks, so what is a block is decided by where a property
//! sits, as HCL's JSON decoder decides it from the schema it is asked with.
//! The language's own blocks (`resource "T" "N"`, `lifecycle`, `variable`…)
//! are known here ([`Shape`]); inside a resource or provider body only the
//! driver's schema knows which properties are nested blocks, so such a body
//! keeps every property as an argument and is marked [`Body::json`], and
//! [`blocks_by_schema`] reinterprets it once that schema is at hand.
//!
//! Values follow HCL's JSON rules: strings are templates (`"${var.x}"`),
//! except the arguments that take references or types, which are read as
//! expressions (`"depends_on": ["aws_vpc.main"]`, `"type": "list(string)"`);
//! a property named `//` in a body is a comment.

use super::ast::{Expr, ExprKind, ObjectKey, TemplatePart};
use super::{Attribute, Block, Body};
use crate::diag::{Diag, Diags, FileId, Span};
use crate::lang::number::Number;
use crate::lang::value::Value;

/// A JSON value with the span of its text.
struct Node {
    kind: Kind,
    span: Span,
}

enum Kind {
    Null,
    Bool(bool),
    /// The literal's text, read exactly as HCL reads number literals.
    Number(String),
    Str(Text),
    Array(Vec<Node>),
    Object(Vec<Property>),
}

/// A string's value, and whether it is the same as the bytes between its
/// quotes (no escapes), so a template inside it can be parsed in place
/// with exact spans.
struct Text {
    value: String,
    verbatim: bool,
    /// The span of the text between the quotes.
    inner: Span,
}

struct Property {
    name: Text,
    value: Node,
}

fn invalid(detail: impl Into<String>, span: Span) -> Diag {
    Diag::new("strata::syntax::json", "Invalid JSON", detail).at(span)
}

struct Parser<'s> {
    file: FileId,
    src: &'s str,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn span(&self, start: usize) -> Span {
        Span::new(self.file, start, self.pos)
    }

    fn here(&self) -> Span {
        let end = self.src[self.pos..]
            .chars()
            .next()
            .map_or(self.pos, |c| self.pos + c.len_utf8());
        Span::new(self.file, self.pos, end)
    }

    fn skip_ws(&mut self) {
        let rest = &self.src[self.pos..];
        let trimmed = rest.trim_start_matches([' ', '\t', '\n', '\r']);
        self.pos += rest.len() - trimmed.len();
    }

    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), Diag> {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(invalid(format!("Expected {what}."), self.here()))
        }
    }

    fn value(&mut self) -> Result<Node, Diag> {
        self.skip_ws();
        let start = self.pos;
        let kind = match self.peek() {
            None => {
                return Err(invalid(
                    "The file ends where a value was expected.",
                    self.here(),
                ))
            }
            Some('{') => self.nested(Self::object)?,
            Some('[') => self.nested(Self::array)?,
            Some('"') => Kind::Str(self.string()?),
            Some(c) if c == '-' || c.is_ascii_digit() => Kind::Number(self.number()?),
            Some(c) if c.is_ascii_alphabetic() => {
                let word: String = self.src[self.pos..]
                    .chars()
                    .take_while(char::is_ascii_alphanumeric)
                    .collect();
                self.pos += word.len();
                match word.as_str() {
                    "null" => Kind::Null,
                    "true" => Kind::Bool(true),
                    "false" => Kind::Bool(false),
                    _ => {
                        return Err(Diag::new(
                            "strata::syntax::json",
                            "Invalid JSON keyword",
                            format!("{word:?} is not a JSON keyword: the keywords are true, false and null."),
                        )
                        .at(self.span(start)))
                    }
                }
            }
            Some(c) => return Err(invalid(format!("{c:?} cannot start a value."), self.here())),
        };
        Ok(Node {
            kind,
            span: self.span(start),
        })
    }

    /// An object or array, within [`super::MAX_NESTING`].
    fn nested(&mut self, f: fn(&mut Self) -> Result<Kind, Diag>) -> Result<Kind, Diag> {
        if self.depth >= super::MAX_NESTING {
            return Err(super::too_deep().at(self.here()));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn object(&mut self) -> Result<Kind, Diag> {
        self.pos += 1;
        let mut props = Vec::new();
        self.skip_ws();
        if self.peek() == Some('}') {
            self.pos += 1;
            return Ok(Kind::Object(props));
        }
        loop {
            self.skip_ws();
            if self.peek() == Some('}') && !props.is_empty() {
                return Err(invalid(
                    "A trailing comma is not allowed in a JSON object.",
                    self.here(),
                ));
            }
            if self.peek() != Some('"') {
                return Err(invalid(
                    "Expected a property name in double quotes.",
                    self.here(),
                ));
            }
            let name = self.string()?;
            self.expect(':', "a colon after the property name")?;
            let value = self.value()?;
            props.push(Property { name, value });
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {
                    self.pos += 1;
                    return Ok(Kind::Object(props));
                }
                _ => {
                    return Err(invalid(
                        "Expected a comma or the object's closing brace.",
                        self.here(),
                    ))
                }
            }
        }
    }

    fn array(&mut self) -> Result<Kind, Diag> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(']') {
            self.pos += 1;
            return Ok(Kind::Array(items));
        }
        loop {
            self.skip_ws();
            if self.peek() == Some(']') && !items.is_empty() {
                return Err(invalid(
                    "A trailing comma is not allowed in a JSON array.",
                    self.here(),
                ));
            }
            items.push(self.value()?);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(']') => {
                    self.pos += 1;
                    return Ok(Kind::Array(items));
                }
                _ => {
                    return Err(invalid(
                        "Expected a comma or the array's closing bracket.",
                        self.here(),
                    ))
                }
            }
        }
    }

    fn number(&mut self) -> Result<String, Diag> {
        let start = self.pos;
        let b = self.src.as_bytes();
        if b.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        let len = super::number_literal_len(&b[self.pos..]);
        let int_digits = b[self.pos..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if int_digits == 0 || (int_digits > 1 && b[self.pos] == b'0') {
            self.pos += len.max(1);
            return Err(invalid(
                "A JSON number has digits, without leading zeros.",
                self.span(start),
            ));
        }
        self.pos += len;
        Ok(self.src[start..self.pos].to_string())
    }

    fn string(&mut self) -> Result<Text, Diag> {
        let open = self.pos;
        self.pos += 1;
        let mut value = String::new();
        let mut verbatim = true;
        loop {
            let Some(c) = self.peek() else {
                return Err(invalid(
                    "This string has no closing quote.",
                    Span::new(self.file, open, open + 1),
                ));
            };
            match c {
                '"' => {
                    let inner = Span::new(self.file, open + 1, self.pos);
                    self.pos += 1;
                    return Ok(Text {
                        value,
                        verbatim,
                        inner,
                    });
                }
                '\\' => {
                    verbatim = false;
                    self.escape(&mut value)?;
                }
                c if (c as u32) < 0x20 => {
                    return Err(invalid(
                        "A control character (such as a line break) must be escaped inside a JSON string.",
                        self.here(),
                    ))
                }
                c => {
                    value.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), Diag> {
        let start = self.pos;
        self.pos += 1;
        let Some(c) = self.peek() else {
            return Err(invalid("The file ends inside an escape.", self.span(start)));
        };
        self.pos += c.len_utf8();
        let plain = match c {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let hi = self.hex4(start)?;
                let code =
                    if (0xD800..0xDC00).contains(&hi) && self.src[self.pos..].starts_with("\\u") {
                        self.pos += 2;
                        let lo = self.hex4(start)?;
                        0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF)
                    } else {
                        hi
                    };
                char::from_u32(code).ok_or_else(|| {
                    invalid(
                        "This \\u escape is not a Unicode character.",
                        self.span(start),
                    )
                })?
            }
            _ => {
                return Err(invalid(
                    format!("\\{c} is not a JSON escape."),
                    self.span(start),
                ))
            }
        };
        out.push(plain);
        Ok(())
    }

    fn hex4(&mut self, start: usize) -> Result<u32, Diag> {
        let digits = self.src.get(self.pos..self.pos + 4).unwrap_or("");
        match u32::from_str_radix(digits, 16) {
            Ok(v) if digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_hexdigit()) => {
                self.pos += 4;
                Ok(v)
            }
            _ => Err(invalid(
                "\\u takes four hexadecimal digits.",
                self.span(start),
            )),
        }
    }
}

/// Where a body sits in the language: which of its properties are blocks
/// (with how many labels, and their own shape), which are read as
/// expressions, and whether a driver's schema decides the rest.
struct Shape {
    blocks: &'static [(&'static str, usize, &'static Shape)],
    exprs: &'static [&'static str],
    open: bool,
}

const PLAIN: Shape = Shape {
    blocks: &[],
    exprs: &[],
    open: false,
};
const OPEN: Shape = Shape {
    blocks: &[],
    exprs: &[],
    open: true,
};
const CONDITION: &[(&str, usize, &Shape)] =
    &[("precondition", 0, &PLAIN), ("postcondition", 0, &PLAIN)];
const PROVISIONER: Shape = Shape {
    blocks: &[("connection", 0, &OPEN)],
    exprs: &[],
    open: true,
};
const LIFECYCLE: Shape = Shape {
    blocks: CONDITION,
    exprs: &["ignore_changes", "replace_triggered_by"],
    open: false,
};
const RESOURCE: Shape = Shape {
    blocks: &[
        ("lifecycle", 0, &LIFECYCLE),
        ("provisioner", 1, &PROVISIONER),
        ("connection", 0, &OPEN),
    ],
    exprs: &["depends_on", "provider"],
    open: true,
};
/// A `state` or `plan` target of `encryption`, and its `fallback`s (a
/// chain of any length, so a static that names itself).
static ENCRYPTION_TARGET: Shape = Shape {
    blocks: &[("fallback", 0, &ENCRYPTION_TARGET)],
    exprs: &["method"],
    open: false,
};
const ENCRYPTION_METHOD: Shape = Shape {
    blocks: &[],
    exprs: &["keys"],
    open: false,
};
const ENCRYPTION_KEY_PROVIDER: Shape = Shape {
    blocks: &[],
    exprs: &["chain"],
    open: false,
};
const ENCRYPTION_REMOTE: Shape = Shape {
    blocks: &[
        ("default", 0, &ENCRYPTION_TARGET),
        ("remote_state_data_source", 1, &ENCRYPTION_TARGET),
    ],
    exprs: &[],
    open: false,
};
/// OpenTofu's `terraform { encryption { … } }`, also the whole of
/// `TF_ENCRYPTION` when it is JSON.
const ENCRYPTION: Shape = Shape {
    blocks: &[
        ("key_provider", 2, &ENCRYPTION_KEY_PROVIDER),
        ("method", 2, &ENCRYPTION_METHOD),
        ("state", 0, &ENCRYPTION_TARGET),
        ("plan", 0, &ENCRYPTION_TARGET),
        ("remote_state_data_sources", 0, &ENCRYPTION_REMOTE),
    ],
    exprs: &[],
    open: false,
};
const TERRAFORM: Shape = Shape {
    blocks: &[
        ("backend", 1, &PLAIN),
        ("encryption", 0, &ENCRYPTION),
        ("cloud", 0, &OPEN),
        ("required_providers", 0, &PLAIN),
        ("provider_meta", 1, &OPEN),
    ],
    exprs: &[],
    open: false,
};
const VARIABLE: Shape = Shape {
    blocks: &[("validation", 0, &PLAIN)],
    exprs: &["type"],
    open: false,
};
const OUTPUT: Shape = Shape {
    blocks: &[("precondition", 0, &PLAIN)],
    exprs: &["depends_on"],
    open: false,
};
const MODULE: Shape = Shape {
    blocks: &[],
    exprs: &["depends_on", "providers"],
    open: false,
};
const REMOVED: Shape = Shape {
    blocks: &[("lifecycle", 0, &PLAIN), ("provisioner", 1, &PROVISIONER)],
    exprs: &["from"],
    open: false,
};
const CHECK: Shape = Shape {
    blocks: &[("data", 2, &RESOURCE), ("assert", 0, &PLAIN)],
    exprs: &[],
    open: false,
};
const CLUSTER_PARTS: &[(&str, usize, &Shape)] = &[
    ("network", 0, &PLAIN),
    ("gpu_operator", 0, &PLAIN),
    ("node_pool", 1, &PLAIN),
];
const CLOUD: Shape = Shape {
    blocks: CLUSTER_PARTS,
    exprs: &[],
    open: false,
};
const CLUSTER: Shape = Shape {
    blocks: &[
        ("network", 0, &PLAIN),
        ("gpu_operator", 0, &PLAIN),
        ("node_pool", 1, &PLAIN),
        ("cloud", 1, &CLOUD),
    ],
    exprs: &[],
    open: false,
};
const FILE: Shape = Shape {
    blocks: &[
        ("terraform", 0, &TERRAFORM),
        ("strata", 0, &TERRAFORM),
        ("variable", 1, &VARIABLE),
        ("locals", 0, &PLAIN),
        ("output", 1, &OUTPUT),
        ("module", 1, &MODULE),
        ("provider", 1, &OPEN),
        ("resource", 2, &RESOURCE),
        ("data", 2, &RESOURCE),
        ("ephemeral", 2, &RESOURCE),
        (
            "moved",
            0,
            &Shape {
                blocks: &[],
                exprs: &["from", "to"],
                open: false,
            },
        ),
        (
            "import",
            0,
            &Shape {
                blocks: &[],
                exprs: &["to", "provider"],
                open: false,
            },
        ),
        ("removed", 0, &REMOVED),
        ("check", 1, &CHECK),
        ("cluster", 1, &CLUSTER),
    ],
    exprs: &[],
    open: false,
};

/// The arguments of a `dynamic` block that name things rather than compute them.
const DYNAMIC: Shape = Shape {
    blocks: &[("content", 0, &OPEN)],
    exprs: &["iterator"],
    open: false,
};

/// `override_resource`, `override_data`, `override_module` and
/// `override_ephemeral` in a test file, a run or a mock.
const OVERRIDE: Shape = Shape {
    blocks: &[],
    exprs: &["target", "override_during"],
    open: false,
};
const OVERRIDES: [(&str, usize, &Shape); 4] = [
    ("override_resource", 0, &OVERRIDE),
    ("override_data", 0, &OVERRIDE),
    ("override_module", 0, &OVERRIDE),
    ("override_ephemeral", 0, &OVERRIDE),
];
const MOCK_DEFAULTS: Shape = Shape {
    blocks: &[],
    exprs: &["override_during"],
    open: false,
};
const MOCK_BLOCKS: [(&str, usize, &Shape); 7] = [
    ("mock_resource", 1, &MOCK_DEFAULTS),
    ("mock_data", 1, &MOCK_DEFAULTS),
    ("mock_ephemeral", 1, &MOCK_DEFAULTS),
    OVERRIDES[0],
    OVERRIDES[1],
    OVERRIDES[2],
    OVERRIDES[3],
];
/// A `*.tfmock.json` file, and a `mock_provider` block.
const MOCK_FILE: Shape = Shape {
    blocks: &MOCK_BLOCKS,
    exprs: &["override_during"],
    open: false,
};
const PLAN_OPTIONS: Shape = Shape {
    blocks: &[],
    exprs: &["mode", "target", "replace"],
    open: false,
};
const RUN: Shape = Shape {
    blocks: &[
        ("variables", 0, &OPEN),
        ("assert", 0, &PLAIN),
        ("module", 0, &PLAIN),
        ("plan_options", 0, &PLAN_OPTIONS),
        OVERRIDES[0],
        OVERRIDES[1],
        OVERRIDES[2],
        OVERRIDES[3],
    ],
    exprs: &["command", "expect_failures", "providers"],
    open: false,
};
/// A `*.tftest.json` file (Terraform's test files in JSON).
const TEST_FILE: Shape = Shape {
    blocks: &[
        ("run", 1, &RUN),
        ("variables", 0, &OPEN),
        ("provider", 1, &OPEN),
        ("mock_provider", 1, &MOCK_FILE),
        OVERRIDES[0],
        OVERRIDES[1],
        OVERRIDES[2],
        OVERRIDES[3],
    ],
    exprs: &[],
    open: false,
};

/// What a JSON file is, which decides its shape.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum JsonFile {
    /// A `.tf.json` configuration file.
    Configuration,
    /// A `.tftest.json` test file.
    Test,
    /// A `.tfmock.json` mock data file.
    Mock,
    /// OpenTofu's `TF_ENCRYPTION` in JSON: an `encryption` block's body.
    Encryption,
}

/// Parses a `.tf.json` file into a body, as [`super::parse_body`] does a `.tf` file.
pub fn parse_body(file: FileId, src: &str) -> Result<Body, Diag> {
    parse_json_file(file, src, JsonFile::Configuration)
}

/// Parses a JSON file of `kind` into a body.
pub fn parse_json_file(file: FileId, src: &str, kind: JsonFile) -> Result<Body, Diag> {
    let mut p = Parser {
        file,
        src,
        pos: 0,
        depth: 0,
    };
    let root = p.value()?;
    p.skip_ws();
    if p.pos < src.len() {
        return Err(invalid(
            "Only one JSON value may be in a file; more text follows it.",
            p.here(),
        ));
    }
    let conv = Converter { file, src };
    let Kind::Object(props) = &root.kind else {
        return Err(Diag::new(
            "strata::syntax::json",
            "Invalid JSON configuration",
            "The root of a .tf.json file must be a JSON object whose properties are block types such as \"resource\" and \"variable\".",
        )
        .at(root.span));
    };
    let mut diags = Diags::default();
    let shape = match kind {
        JsonFile::Configuration => &FILE,
        JsonFile::Test => &TEST_FILE,
        JsonFile::Mock => &MOCK_FILE,
        JsonFile::Encryption => &ENCRYPTION,
    };
    let body = conv.body(props, root.span, shape, &mut diags);
    match diags.0.into_iter().next() {
        Some(d) => Err(d),
        None => Ok(body),
    }
}

struct Converter<'s> {
    file: FileId,
    src: &'s str,
}

impl Converter<'_> {
    fn body(&self, props: &[Property], span: Span, shape: &Shape, diags: &mut Diags) -> Body {
        let mut body = Body {
            attrs: Vec::new(),
            blocks: Vec::new(),
            span,
            json: shape.open,
        };
        for p in props {
            let name = p.name.value.as_str();
            if name == "//" {
                continue;
            }
            if let Some((_, labels, inner)) = shape.blocks.iter().find(|(n, ..)| *n == name) {
                let mut out = Vec::new();
                self.blocks(p, *labels, inner, Vec::new(), &p.value, &mut out, diags);
                body.blocks.extend(out);
                continue;
            }
            let name_span = Span::new(
                self.file,
                p.name.inner.start as usize - 1,
                p.name.inner.end as usize + 1,
            );
            if body.attrs.iter().any(|a| a.name == name) {
                diags.push(
                    Diag::new(
                        "strata::syntax::duplicate_argument",
                        "Duplicate argument",
                        format!("The argument {name:?} was already set in this object."),
                    )
                    .at(name_span),
                );
                continue;
            }
            let expr_mode = shape.exprs.contains(&name);
            match self.expr(&p.value, expr_mode) {
                Ok(expr) => body.attrs.push(Attribute {
                    name: name.to_string(),
                    name_span,
                    span: name_span.to(p.value.span),
                    expr,
                }),
                Err(d) => diags.push(d),
            }
        }
        body
    }

    /// The blocks a property holds: `labels` levels of objects whose keys
    /// are the labels, then one body per object (or per array element).
    #[allow(clippy::too_many_arguments)]
    fn blocks(
        &self,
        p: &Property,
        labels: usize,
        shape: &Shape,
        named: Vec<(String, Span)>,
        node: &Node,
        out: &mut Vec<Block>,
        diags: &mut Diags,
    ) {
        let kind_span = Span::new(
            self.file,
            p.name.inner.start as usize,
            p.name.inner.end as usize,
        );
        match &node.kind {
            Kind::Array(items) => {
                for item in items {
                    self.blocks(p, labels, shape, named.clone(), item, out, diags);
                }
            }
            Kind::Object(props) if named.len() < labels => {
                for l in props {
                    if l.name.value == "//" {
                        continue;
                    }
                    let mut named = named.clone();
                    named.push((l.name.value.clone(), l.name.inner));
                    self.blocks(p, labels, shape, named, &l.value, out, diags);
                }
            }
            Kind::Object(props) => {
                let shape = if p.name.value == "dynamic" { &DYNAMIC } else { shape };
                out.push(Block {
                    kind: p.name.value.clone(),
                    kind_span,
                    labels: named,
                    body: self.body(props, node.span, shape, diags),
                    span: kind_span.to(node.span),
                });
            }
            _ => diags.push(
                Diag::new(
                    "strata::syntax::json_block",
                    "Incorrect JSON value type",
                    if named.len() < labels {
                        format!(
                            "A {:?} block needs {labels} label(s): in JSON, an object whose property names are the labels.",
                            p.name.value
                        )
                    } else {
                        format!(
                            "The body of a {:?} block must be a JSON object, or an array of objects for several blocks.",
                            p.name.value
                        )
                    },
                )
                .at(node.span),
            ),
        }
    }

    /// A JSON value as an expression: strings as templates, or, in
    /// expression mode, as the expression their text spells.
    fn expr(&self, node: &Node, expr_mode: bool) -> Result<Expr, Diag> {
        let kind = match &node.kind {
            Kind::Null => ExprKind::Literal(Box::new(Value::null())),
            Kind::Bool(b) => ExprKind::Literal(Box::new(Value::Bool(*b))),
            Kind::Number(text) => {
                let n = Number::parse(text).map_err(|_| {
                    Diag::new(
                        "strata::syntax::number",
                        "Invalid number literal",
                        format!(
                            "{text:?} is out of range: the exponent may be at most {}.",
                            crate::lang::number::MAX_DECIMAL_EXPONENT
                        ),
                    )
                    .at(node.span)
                })?;
                ExprKind::Literal(Box::new(Value::Number(n)))
            }
            Kind::Str(t) => return self.text(t, node.span, expr_mode),
            Kind::Array(items) => ExprKind::Tuple(
                items
                    .iter()
                    .map(|i| self.expr(i, expr_mode))
                    .collect::<Result<_, _>>()?,
            ),
            Kind::Object(props) => {
                let mut items = Vec::with_capacity(props.len());
                for p in props {
                    let key = if expr_mode || !has_template(&p.name.value) {
                        ObjectKey::Name(p.name.value.clone())
                    } else {
                        let span = Span::new(
                            self.file,
                            p.name.inner.start as usize - 1,
                            p.name.inner.end as usize + 1,
                        );
                        ObjectKey::Expr(self.text(&p.name, span, false)?)
                    };
                    items.push((key, self.expr(&p.value, expr_mode)?));
                }
                ExprKind::Object(items)
            }
        };
        Ok(Expr::new(kind, node.span))
    }

    /// A string's text parsed as a template or an expression. Text without
    /// escapes is parsed where it stands, so errors point inside it; text
    /// with escapes is parsed from its value, its spans the whole string.
    fn text(&self, t: &Text, span: Span, expr_mode: bool) -> Result<Expr, Diag> {
        if !expr_mode && !has_template(&t.value) {
            let value =
                unicode_normalization::UnicodeNormalization::nfc(t.value.as_str()).collect();
            return Ok(Expr::new(
                ExprKind::Literal(Box::new(Value::String(value))),
                span,
            ));
        }
        if t.verbatim {
            let inner = (t.inner.start as usize, t.inner.end as usize);
            let mut e = super::parse_at(self.file, self.src, inner, !expr_mode)?;
            if !expr_mode {
                e.span = span;
            }
            return Ok(e);
        }
        let mut e = super::parse_at(self.file, &t.value, (0, t.value.len()), !expr_mode)
            .map_err(|d| d.at(span))?;
        e.map_spans(&mut |s| *s = span);
        Ok(e)
    }
}

/// Whether a string holds template sequences (`${` or `%{` not escaped by
/// doubling), so it needs parsing.
fn has_template(s: &str) -> bool {
    s.contains("${") || s.contains("%{")
}

/// `body` with the arguments `block_labels` names turned into nested blocks
/// with that many labels (and `dynamic` ones into `dynamic` blocks), for a
/// JSON body whose schema is now known. Other bodies come back as they are.
pub fn blocks_by_schema(
    body: &Body,
    block_labels: &dyn Fn(&str) -> Option<usize>,
    diags: &mut Diags,
) -> Body {
    let mut out = Body {
        attrs: Vec::new(),
        blocks: body.blocks.clone(),
        span: body.span,
        json: false,
    };
    for a in &body.attrs {
        if a.name == "dynamic" {
            expr_blocks(a, 1, &DYNAMIC, Vec::new(), &a.expr, &mut out.blocks, diags);
        } else if let Some(labels) = block_labels(&a.name) {
            expr_blocks(
                a,
                labels,
                &OPEN,
                Vec::new(),
                &a.expr,
                &mut out.blocks,
                diags,
            );
        } else {
            out.attrs.push(a.clone());
        }
    }
    out
}

/// As [`Converter::blocks`], over an argument already read as an expression.
fn expr_blocks(
    a: &Attribute,
    labels: usize,
    shape: &Shape,
    named: Vec<(String, Span)>,
    e: &Expr,
    out: &mut Vec<Block>,
    diags: &mut Diags,
) {
    match &e.kind {
        ExprKind::Tuple(items) => {
            for item in items {
                expr_blocks(a, labels, shape, named.clone(), item, out, diags);
            }
        }
        ExprKind::Object(items) if named.len() < labels => {
            for (k, v) in items {
                let ObjectKey::Name(label) = k else {
                    diags.push(not_a_name(v.span));
                    continue;
                };
                let mut named = named.clone();
                named.push((label.clone(), v.span));
                expr_blocks(a, labels, shape, named, v, out, diags);
            }
        }
        ExprKind::Object(items) => {
            let mut body = Body {
                attrs: Vec::new(),
                blocks: Vec::new(),
                span: e.span,
                json: shape.open,
            };
            for (k, v) in items {
                let ObjectKey::Name(name) = k else {
                    diags.push(not_a_name(v.span));
                    continue;
                };
                if name == "//" {
                    continue;
                }
                if let Some((_, n, inner)) = shape.blocks.iter().find(|(b, ..)| b == name) {
                    let nested = Attribute {
                        name: name.clone(),
                        name_span: v.span,
                        expr: v.clone(),
                        span: v.span,
                    };
                    expr_blocks(&nested, *n, inner, Vec::new(), v, &mut body.blocks, diags);
                    continue;
                }
                let expr = if shape.exprs.contains(&name.as_str()) {
                    as_name(v)
                } else {
                    v.clone()
                };
                body.attrs.push(Attribute {
                    name: name.clone(),
                    name_span: v.span,
                    expr,
                    span: v.span,
                });
            }
            out.push(Block {
                kind: a.name.clone(),
                kind_span: a.name_span,
                labels: named,
                body,
                span: a.span,
            });
        }
        _ => diags.push(
            Diag::new(
                "strata::syntax::json_block",
                "Incorrect JSON value type",
                format!(
                    "{:?} is a block here: in JSON, an object, or an array of objects for several blocks.",
                    a.name
                ),
            )
            .at(e.span),
        ),
    }
}

fn not_a_name(span: Span) -> Diag {
    Diag::new(
        "strata::syntax::json_block",
        "Invalid block argument name",
        "A property of a block body names an argument; it cannot be a template.",
    )
    .at(span)
}

/// A plain string read as a name (`"iterator": "rule"`).
fn as_name(e: &Expr) -> Expr {
    match &e.kind {
        ExprKind::Literal(v) => match v.as_str() {
            Some(s) if super::is_identifier(s) => {
                Expr::new(ExprKind::Variable(s.to_string()), e.span)
            }
            _ => e.clone(),
        },
        ExprKind::Template(parts) => match parts.as_slice() {
            [TemplatePart::Literal(s)] if super::is_identifier(s) => {
                Expr::new(ExprKind::Variable(s.clone()), e.span)
            }
            _ => e.clone(),
        },
        _ => e.clone(),
    }
}
