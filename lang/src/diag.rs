//! Diagnostics: every error a user can cause carries a summary, a detail and
//! the place in their files, and renders through miette with a snippet.

use miette::{LabeledSpan, NamedSource, SourceCode};
use std::fmt;
use std::sync::Arc;

/// Identifies a loaded source file in a [`Sources`] map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FileId(pub u32);

/// A byte range in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end.max(start) as u32,
        }
    }

    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// Every source text strata has read, so diagnostics can quote them.
#[derive(Default, Debug, Clone)]
pub struct Sources {
    files: Vec<(String, Arc<str>)>,
    /// Places holding a secret (a sensitive variable's value as given):
    /// quoted as asterisks, never as written.
    hidden: Vec<Span>,
}

impl Sources {
    /// Marks `span` as holding a secret: every rendering quotes it masked.
    pub fn hide(&mut self, span: Span) {
        self.hidden.push(span);
    }

    /// The text of `id` as diagnostics quote it: secrets masked with `*`,
    /// control characters (which would drive the terminal) as `?`, every
    /// byte where it was so spans still point right.
    pub fn shown(&self, id: FileId) -> String {
        let text = self.text(id);
        let mut bytes = Vec::with_capacity(text.len());
        for (i, c) in text.char_indices() {
            let len = c.len_utf8();
            let secret = self
                .hidden
                .iter()
                .any(|h| h.file == id && (h.start as usize) <= i && i < h.end as usize);
            let fill = if secret && !c.is_whitespace() {
                Some(b'*')
            } else if c.is_control() && !matches!(c, '\n' | '\t' | '\r') {
                Some(b'?')
            } else {
                None
            };
            match fill {
                Some(b) => bytes.extend(std::iter::repeat_n(b, len)),
                None => bytes.extend_from_slice(&text.as_bytes()[i..i + len]),
            }
        }
        // Only whole characters were replaced, by ASCII: still UTF-8.
        String::from_utf8(bytes).unwrap_or_default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<Arc<str>>) -> FileId {
        self.files.push((name.into(), text.into()));
        FileId(self.files.len() as u32 - 1)
    }

    /// Every source read so far, as (name, text).
    pub fn files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().map(|(n, t)| (n.as_str(), &**t))
    }

    pub fn text(&self, id: FileId) -> &str {
        self.files.get(id.0 as usize).map(|f| &*f.1).unwrap_or("")
    }

    pub fn name(&self, id: FileId) -> &str {
        self.files
            .get(id.0 as usize)
            .map(|f| f.0.as_str())
            .unwrap_or("")
    }

    /// The first line of `s`: enough to point at a block.
    pub fn first_line(&self, s: Span) -> Span {
        let end = self
            .text(s.file)
            .get(s.start as usize..s.end as usize)
            .and_then(|t| t.find('\n'))
            .map_or(s.end, |p| s.start + p as u32);
        Span { end, ..s }
    }

    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, id: FileId, offset: u32) -> (usize, usize) {
        let text = self.text(id);
        let offset = (offset as usize).min(text.len());
        let before = &text[..floor_char_boundary(text, offset)];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }
}

/// The lines `span` is on and where in them it lies, as Terraform's
/// diagnostics JSON quotes them (secrets masked, as every quote is).
fn snippet(sources: &Sources, span: Span) -> serde_json::Value {
    let text = sources.shown(span.file);
    let start = floor_char_boundary(&text, (span.start as usize).min(text.len()));
    let end = floor_char_boundary(&text, (span.end as usize).min(text.len()));
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
    let (start_line, _) = sources.line_col(span.file, span.start);
    serde_json::json!({
        "context": null,
        "code": &text[line_start..line_end],
        "start_line": start_line,
        "highlight_start_offset": start - line_start,
        "highlight_end_offset": end - line_start,
        "values": [],
    })
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A problem found in the user's configuration or input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    /// The kind of problem, stable for tooling ("strata::eval::unknown_reference").
    pub code: &'static str,
    pub summary: String,
    pub detail: String,
    pub span: Option<Span>,
    /// Labels for the places shown; boxed, as most diagnostics have none
    /// and results carrying a `Diag` stay small.
    pub labels: Option<Box<Labels>>,
    /// A warning (a failed `check` assertion), not an error: shown, but it
    /// changes no exit code.
    pub warning: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Labels {
    /// What the primary span's label says ("here" when unset).
    pub primary: Option<String>,
    /// Further places that belong to the problem (the other members of a
    /// cycle), each with a label.
    pub related: Vec<(String, Span)>,
}

impl Diag {
    pub fn new(code: &'static str, summary: impl Into<String>, detail: impl Into<String>) -> Diag {
        Diag {
            code,
            summary: summary.into(),
            detail: detail.into(),
            span: None,
            labels: None,
            warning: false,
        }
    }

    /// The same, as a warning.
    pub fn warning(mut self) -> Diag {
        self.warning = true;
        self
    }

    /// Labels the primary span.
    pub fn labelled(mut self, label: impl Into<String>) -> Diag {
        self.labels.get_or_insert_with(Default::default).primary = Some(label.into());
        self
    }

    /// Adds a related place, labelled.
    pub fn also(mut self, label: impl Into<String>, span: Span) -> Diag {
        self.labels
            .get_or_insert_with(Default::default)
            .related
            .push((label.into(), span));
        self
    }

    pub fn at(mut self, span: Span) -> Diag {
        self.span = Some(span);
        self
    }

    /// Attaches a span unless one is already there.
    pub fn or_at(mut self, span: Span) -> Diag {
        if self.span.is_none() {
            self.span = Some(span);
        }
        self
    }

    /// "Summary: detail", for one-line outputs such as `console --json`.
    pub fn one_line(&self) -> String {
        if self.detail.is_empty() {
            self.summary.clone()
        } else {
            format!("{}: {}", self.summary, self.detail)
        }
    }

    /// The diagnostic as Terraform writes one without colour: its kind and
    /// summary, where it is (`on FILE line N:` and that line), and the
    /// detail wrapped at 78 columns (lines that start indented, such as a
    /// command to run, kept as they are).
    pub fn terraform_text(&self, sources: &Sources) -> String {
        let kind = if self.warning { "Warning" } else { "Error" };
        let mut out = format!("\n{kind}: {}\n\n", self.summary);
        if let Some(span) = self.span {
            let (line, _) = sources.line_col(span.file, span.start);
            let text = sources
                .text(span.file)
                .lines()
                .nth(line.saturating_sub(1))
                .unwrap_or_default();
            let name = sources.name(span.file).trim_start_matches("./");
            out.push_str(&format!("  on {name} line {line}:\n  {line}: {text}\n\n"));
        }
        for l in self.detail.lines() {
            match l.starts_with(' ') || l.is_empty() {
                true => out.push_str(l),
                false => out.push_str(&textwrap::fill(
                    l,
                    textwrap::Options::new(78).break_words(false),
                )),
            }
            out.push('\n');
        }
        out
    }

    /// Binds the diagnostic to the sources so miette can render it.
    pub fn report(&self, sources: &Sources) -> Report {
        let (src, location) = match self.span {
            Some(span) => {
                let (line, col) = sources.line_col(span.file, span.start);
                let name = sources.name(span.file).to_string();
                (
                    Some(NamedSource::new(name.clone(), sources.shown(span.file))),
                    Some(format!("{name}:{line}:{col}")),
                )
            }
            None => (None, None),
        };
        Report {
            diag: self.clone(),
            src,
            location,
        }
    }
}

impl Diag {
    /// One diagnostic in Terraform's JSON layout.
    pub fn to_json(&self, sources: &Sources) -> serde_json::Value {
        let mut d = serde_json::json!({
            "severity": if self.warning { "warning" } else { "error" },
            "summary": self.summary,
            "detail": self.detail,
        });
        if let Some(span) = self.span {
            let place = |offset: u32| {
                let (line, column) = sources.line_col(span.file, offset);
                serde_json::json!({"line": line, "column": column, "byte": offset})
            };
            let name = sources.name(span.file);
            d["range"] = serde_json::json!({
                "filename": name.strip_prefix("./").unwrap_or(name),
                "start": place(span.start),
                "end": place(span.end),
            });
            d["snippet"] = snippet(sources, span);
        }
        d
    }

    /// The rendered diagnostic without colours, as tests and logs want it.
    pub fn render_plain(&self, sources: &Sources) -> String {
        let handler =
            miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
                .with_width(100)
                .with_word_splitter(textwrap::WordSplitter::NoHyphenation);
        let mut out = String::new();
        let report = self.report(sources);
        if handler.render_report(&mut out, &report).is_err() {
            return self.one_line();
        }
        out
    }
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.one_line())
    }
}

/// A diagnostic ready to render: it owns the text it quotes.
#[derive(Debug)]
pub struct Report {
    diag: Diag,
    src: Option<NamedSource<String>>,
    location: Option<String>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(loc) => write!(f, "{} (at {loc})", self.diag.summary),
            None => f.write_str(&self.diag.summary),
        }
    }
}

impl std::error::Error for Report {}

impl miette::Diagnostic for Report {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.diag.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        self.diag.warning.then_some(miette::Severity::Warning)
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        if self.diag.detail.is_empty() {
            None
        } else {
            Some(Box::new(&self.diag.detail))
        }
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.src.as_ref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let span = self.diag.span?;
        self.src.as_ref()?;
        let len = (span.end - span.start) as usize;
        let labels = self.diag.labels.as_deref();
        let label = labels
            .and_then(|l| l.primary.clone())
            .unwrap_or_else(|| "here".to_string());
        let primary = LabeledSpan::new(Some(label), span.start as usize, len);
        // Places in other files are named in the detail; miette quotes one source.
        let related = labels
            .into_iter()
            .flat_map(|l| &l.related)
            .filter(move |(_, s)| s.file == span.file)
            .map(|(label, s)| {
                LabeledSpan::new(
                    Some(label.clone()),
                    s.start as usize,
                    (s.end - s.start) as usize,
                )
            });
        Some(Box::new(std::iter::once(primary).chain(related)))
    }
}

/// Many diagnostics from one stage; loading reports all it finds, not the first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diags(pub Vec<Diag>);

impl Diags {
    /// Terraform's diagnostics JSON, as `validate -json` writes it: the
    /// verdict, the counts, and each problem with its range (1-based lines
    /// and columns, byte offsets) and the lines it is on.
    pub fn to_json(&self, sources: &Sources) -> serde_json::Value {
        let errors = self.0.iter().filter(|d| !d.warning).count();
        serde_json::json!({
            "format_version": "1.0",
            "valid": errors == 0,
            "error_count": errors,
            "warning_count": self.0.len() - errors,
            "diagnostics": self.0.iter().map(|d| d.to_json(sources)).collect::<Vec<_>>(),
        })
    }

    /// Adds a diagnostic unless the same one is already there (a failing
    /// local is reached from every expression that uses it).
    pub fn push(&mut self, d: Diag) {
        if !self.0.contains(&d) {
            self.0.push(d);
        }
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Whether any of them is an error, not a warning.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| !d.warning)
    }
    pub fn into_result<T>(self, ok: T) -> Result<T, Diags> {
        if self.0.is_empty() {
            Ok(ok)
        } else {
            Err(self)
        }
    }
}

impl Extend<Diag> for Diags {
    fn extend<I: IntoIterator<Item = Diag>>(&mut self, iter: I) {
        for d in iter {
            self.push(d);
        }
    }
}

impl IntoIterator for Diags {
    type Item = Diag;
    type IntoIter = std::vec::IntoIter<Diag>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl From<Diag> for Diags {
    fn from(d: Diag) -> Diags {
        Diags(vec![d])
    }
}
