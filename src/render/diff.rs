//! One value's change written as Terraform writes it in a plan: `+` lines
//! for what is created, `-` for what goes, `~` for what changes,
//! `before -> after` for primitives, line-by-line diffs (with `similar`)
//! for multi-line strings and lists, `jsonencode(…)` for JSON documents,
//! and unchanged attributes hidden behind a count.

use crate::lang::value::{Attrs, Value};
use similar::{capture_diff_slices, Algorithm, ChangeTag, TextDiff};
use strata_provider::{BlockNesting, ResourceSchema};

/// `+`, `-`, `~` or ` ` (no change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sym {
    Create,
    Delete,
    Update,
    Same,
}

impl Sym {
    pub fn char(self) -> char {
        match self {
            Sym::Create => '+',
            Sym::Delete => '-',
            Sym::Update => '~',
            Sym::Same => ' ',
        }
    }
}

fn is_null(v: Option<&Value>) -> bool {
    v.is_none_or(|v| v.unmarked().is_null())
}

/// How the parts of a value are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// By its type: a null attribute of an object is one not set, shown
    /// nowhere (a resource's attributes, typed attribute values).
    Typed,
    /// As its JSON: a key there with null is there, shown `+ k = null`,
    /// `~ k = null -> "x"`, counted among the unchanged (an output, an
    /// attribute of any type), as Terraform's renderer reads JSON.
    Json,
}

/// How one value's change is written.
#[derive(Debug, Clone, Copy)]
struct Style {
    /// What is removed says no `-> null` of its own: inside a value made
    /// or removed whole, or an output's change.
    quiet: bool,
    reading: Reading,
}

impl Style {
    const PLAIN: Style = Style {
        quiet: false,
        reading: Reading::Typed,
    };

    /// Whether `v` is there: set (typed), or a key at all (JSON).
    fn present(self, v: Option<&Value>) -> bool {
        match self.reading {
            Reading::Typed => !is_null(v),
            Reading::Json => v.is_some(),
        }
    }

    /// The symbol of a change from `b` to `a`, as this reading sees it.
    fn sym(self, b: Option<&Value>, a: Option<&Value>) -> Sym {
        match self.reading {
            Reading::Typed => sym(b, a),
            Reading::Json => match (b, a) {
                (None, None) => Sym::Same,
                (None, Some(_)) => Sym::Create,
                (Some(_), None) => Sym::Delete,
                (Some(b), Some(a)) if a.is_wholly_known() && equal(b, a) => Sym::Same,
                _ => Sym::Update,
            },
        }
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    crate::plan::same(a, b) && a.is_sensitive() == b.is_sensitive()
}

/// The symbol of a change from `b` to `a` (`None`: absent).
pub fn sym(b: Option<&Value>, a: Option<&Value>) -> Sym {
    match (is_null(b), is_null(a)) {
        (true, true) => Sym::Same,
        (true, false) => Sym::Create,
        (false, true) => Sym::Delete,
        (false, false) => match (b, a) {
            (Some(b), Some(a)) if a.is_wholly_known() && equal(b, a) => Sym::Same,
            _ => Sym::Update,
        },
    }
}

/// Attributes shown even when unchanged, because they say which object
/// this is (Terraform's choice).
const IDENTIFYING: [&str; 3] = ["id", "name", "tags"];

fn pad(n: usize) -> String {
    " ".repeat(n)
}

fn primitive(v: &Value) -> String {
    match v {
        Value::Sensitive(_) => "(sensitive value)".into(),
        Value::Unknown(_) => "(known after apply)".into(),
        Value::Null(_) => "null".into(),
        _ => crate::lang::display::show(v),
    }
}

/// An object key as written: bare when it is an identifier.
fn key_text(k: &str, map: bool) -> String {
    if !map && crate::syntax::is_identifier(k) {
        k.to_string()
    } else {
        serde_json::Value::String(k.to_string()).to_string()
    }
}

fn entries(v: &Value) -> Option<(&Attrs, bool)> {
    match v.unmarked() {
        Value::Object(m) => Some((m, false)),
        Value::Map(_, m) => Some((m, true)),
        _ => None,
    }
}

fn elements(v: &Value) -> Option<&[Value]> {
    match v.unmarked() {
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => Some(vs),
        _ => None,
    }
}

fn json_doc(v: &Value) -> Option<Value> {
    crate::lang::display::json_document(v.unmarked().as_str()?)
}

/// An output's change (or an attribute of any type's), as Terraform
/// renders one: read as its JSON ([`Reading::Json`]), so a map reads as
/// an object (keys bare), a list or set as a tuple (paired as
/// [`json_rows`] pairs them), and inside a changed value what is removed
/// has no `-> null` of its own.
pub fn output_value(b: Option<&Value>, a: Option<&Value>, indent: usize, out: &mut String) {
    // The value itself null is no value; inside it, a null is a key.
    let json = |v: Option<&Value>| v.filter(|v| !is_null(Some(v))).map(as_object);
    let (b, a) = (json(b), json(a));
    let style = Style {
        quiet: a.is_some() || b.is_none(),
        reading: Reading::Json,
    };
    value_in(b.as_ref(), a.as_ref(), indent, style, out)
}

/// Whether `schema` types attribute `name` as any type (`dynamic`): its
/// values are rendered as their JSON, as Terraform renders them.
pub(super) fn of_any_type(schema: Option<&ResourceSchema>, name: &str) -> bool {
    schema
        .and_then(|s| s.attributes.get(name))
        .is_some_and(|a| a.ty == crate::lang::types::Type::Dynamic)
}

/// `v` as its JSON implies: every map an object, every sequence a tuple.
pub(super) fn as_object(v: &Value) -> Value {
    match v {
        Value::Map(_, m) | Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), as_object(x))).collect())
        }
        Value::List(_, xs) | Value::Set(_, xs) | Value::Tuple(xs) => {
            Value::Tuple(xs.iter().map(as_object).collect())
        }
        Value::Sensitive(x) => Value::Sensitive(Box::new(as_object(x))),
        other => other.clone(),
    }
}

fn value_in(b: Option<&Value>, a: Option<&Value>, indent: usize, style: Style, out: &mut String) {
    let (bn, an) = (!style.present(b), !style.present(a));
    let sensitive = b.is_some_and(Value::is_sensitive) || a.is_some_and(Value::is_sensitive);
    if sensitive {
        out.push_str("(sensitive value)");
        if an && !bn && !style.quiet {
            out.push_str(" -> null");
        }
        return;
    }
    match (b, a) {
        (_, Some(av)) if !av.is_known() => {
            if !bn {
                if let Some(bv) = b {
                    whole(bv, Sym::Delete, indent, style.reading, out);
                    out.push_str(" -> ");
                }
            }
            out.push_str("(known after apply)");
        }
        (_, Some(av)) if bn => whole(av, Sym::Create, indent, style.reading, out),
        (Some(bv), _) if an => {
            whole(bv, Sym::Delete, indent, style.reading, out);
            if !style.quiet {
                out.push_str(" -> null");
            }
        }
        (Some(bv), Some(av)) => changed(bv, av, indent, style, out),
        _ => out.push_str("null"),
    }
}

fn changed(b: &Value, a: &Value, indent: usize, style: Style, out: &mut String) {
    if let (Some((bm, map)), Some((am, _))) = (entries(b), entries(a)) {
        return object(bm, am, map, indent, style, out);
    }
    if let (Some(bs), Some(as_)) = (elements(b), elements(a)) {
        let same_tuple = matches!(
            (b.unmarked(), a.unmarked()),
            (Value::Tuple(_), Value::Tuple(_))
        ) && b.ty() == a.ty();
        return list(bs, as_, same_tuple, indent, style.reading, out);
    }
    // A value of any type changing its kind (a string becoming a list):
    // the old shown whole as removed, the new whole as added, as
    // Terraform's renderer shows a change of type.
    let structured = |v: &Value| entries(v).is_some() || elements(v).is_some();
    if structured(b) || structured(a) {
        whole(b, Sym::Delete, indent, style.reading, out);
        out.push_str(" -> ");
        whole(a, Sym::Create, indent, style.reading, out);
        return;
    }
    if let (Some(bj), Some(aj)) = (json_doc(b), json_doc(a)) {
        out.push_str("jsonencode(\n");
        out.push_str(&pad(indent + 4));
        out.push_str("~ ");
        changed(&bj, &aj, indent + 4, style, out);
        out.push('\n');
        out.push_str(&pad(indent + 2));
        out.push(')');
        return;
    }
    if let (Some(bs), Some(as_)) = (b.unmarked().as_str(), a.unmarked().as_str()) {
        if bs.contains('\n') || as_.contains('\n') {
            return heredoc_diff(bs, as_, indent, out);
        }
    }
    if equal(b, a) {
        out.push_str(&primitive(a));
    } else {
        out.push_str(&primitive(b));
        out.push_str(" -> ");
        out.push_str(&primitive(a));
    }
}

/// A value created or deleted whole: every nested line carries `s`.
fn whole(v: &Value, s: Sym, indent: usize, reading: Reading, out: &mut String) {
    if v.is_sensitive() || !v.is_known() {
        out.push_str(&primitive(v));
        return;
    }
    if let Some((m, map)) = entries(v) {
        let empty = Attrs::new();
        let (bm, am) = if s == Sym::Delete {
            (m, &empty)
        } else {
            (&empty, m)
        };
        let style = Style {
            quiet: true,
            reading,
        };
        return object(bm, am, map, indent, style, out);
    }
    if let Some(vs) = elements(v) {
        let (bs, as_): (&[Value], &[Value]) = if s == Sym::Delete {
            (vs, &[])
        } else {
            (&[], vs)
        };
        return list(bs, as_, false, indent, reading, out);
    }
    if let Some(j) = json_doc(v) {
        out.push_str("jsonencode(\n");
        out.push_str(&pad(indent + 6));
        whole(&j, s, indent + 4, reading, out);
        out.push('\n');
        out.push_str(&pad(indent + 2));
        out.push(')');
        return;
    }
    if let Some(text) = v.unmarked().as_str().filter(|t| t.contains('\n')) {
        // Whole heredocs show their lines without markers, as Terraform does.
        out.push_str("<<-EOT\n");
        for line in text.trim_end_matches('\n').split('\n') {
            out.push_str(&pad(indent + 6));
            crate::lang::display::shown_heredoc_line(line, out);
            out.push('\n');
        }
        out.push_str(&pad(indent + 2));
        out.push_str("EOT");
        return;
    }
    out.push_str(&primitive(v));
}

/// A value with no change, every part shown without a symbol.
fn unchanged(v: &Value, indent: usize, reading: Reading, out: &mut String) {
    if v.is_sensitive() || !v.is_known() {
        out.push_str(&primitive(v));
        return;
    }
    if let Some(j) = json_doc(v) {
        out.push_str("jsonencode(\n");
        out.push_str(&pad(indent + 6));
        unchanged(&j, indent + 4, Reading::Json, out);
        out.push('\n');
        out.push_str(&pad(indent + 2));
        out.push(')');
        return;
    }
    match (entries(v), elements(v)) {
        (Some((m, _)), _) if m.is_empty() => return out.push_str("{}"),
        (_, Some([])) => return out.push_str("[]"),
        _ => {}
    }
    if let Some((m, map)) = entries(v) {
        let style = Style {
            quiet: false,
            reading,
        };
        let shown: Vec<(&String, &Value)> =
            m.iter().filter(|(_, x)| style.present(Some(x))).collect();
        let width = shown
            .iter()
            .map(|(k, _)| key_text(k, map).chars().count())
            .max()
            .unwrap_or(0);
        out.push_str("{\n");
        for (k, x) in shown {
            let key = key_text(k, map);
            out.push_str(&pad(indent + 4));
            out.push_str("  ");
            out.push_str(&key);
            out.push_str(&pad(width.saturating_sub(key.chars().count())));
            out.push_str(" = ");
            unchanged(x, indent + 4, reading, out);
            out.push('\n');
        }
        out.push_str(&pad(indent + 2));
        out.push('}');
        return;
    }
    if let Some(vs) = elements(v) {
        out.push_str("[\n");
        for x in vs {
            out.push_str(&pad(indent + 4));
            out.push_str("  ");
            unchanged(x, indent + 4, reading, out);
            out.push_str(",\n");
        }
        out.push_str(&pad(indent + 2));
        out.push(']');
        return;
    }
    out.push_str(&primitive(v));
}

fn heredoc_diff(b: &str, a: &str, indent: usize, out: &mut String) {
    out.push_str("<<-EOT\n");
    let (b, a) = (b.trim_end_matches('\n'), a.trim_end_matches('\n'));
    let d = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .diff_lines(b, a);
    for c in d.iter_all_changes() {
        let (sym, line) = (c.tag(), c.value().trim_end_matches('\n'));
        match sym {
            ChangeTag::Equal => {
                out.push_str(&pad(indent + 6));
            }
            ChangeTag::Delete => {
                out.push_str(&pad(indent + 4));
                out.push_str("- ");
            }
            ChangeTag::Insert => {
                out.push_str(&pad(indent + 4));
                out.push_str("+ ");
            }
        }
        crate::lang::display::shown_heredoc_line(line, out);
        out.push('\n');
    }
    out.push_str(&pad(indent + 2));
    out.push_str("EOT");
}

/// `# (N unchanged … hidden)` among lines whose symbols sit at `inner`.
fn hidden(n: usize, what: &str, inner: usize, out: &mut String) {
    if n > 0 {
        let plural = if n == 1 { "" } else { "s" };
        out.push_str(&format!(
            "{}# ({n} unchanged {what}{plural} hidden)\n",
            pad(inner + 2)
        ));
    }
}

fn object(b: &Attrs, a: &Attrs, map: bool, indent: usize, style: Style, out: &mut String) {
    // Empty on both sides: one token, as Terraform writes it.
    if b.is_empty() && a.is_empty() {
        return out.push_str("{}");
    }
    let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    let inner = indent + 4;
    let width = keys
        .iter()
        .filter(|k| style.present(b.get(**k)) || style.present(a.get(**k)))
        .map(|k| key_text(k, map).chars().count())
        .max()
        .unwrap_or(0);
    out.push_str("{\n");
    let updating = !b.is_empty() && !a.is_empty();
    let mut skipped = 0;
    for k in keys {
        let (bv, av) = (b.get(k), a.get(k));
        let s = style.sym(bv, av);
        if s == Sym::Same && (!style.present(bv) || updating) {
            if !style.present(bv) {
                continue;
            }
            // `id`, `name` and `tags` say which object this is: kept.
            if map || !IDENTIFYING.contains(&k.as_str()) {
                skipped += 1;
                continue;
            }
        }
        line(s, (&key_text(k, map), width), bv, av, inner, style, out);
    }
    hidden(
        skipped,
        if map { "element" } else { "attribute" },
        inner,
        out,
    );
    out.push_str(&pad(indent + 2));
    out.push('}');
}

/// `sym key = ` at `indent`, the key padded to `width`.
fn key_start(s: Sym, (key, width): (&str, usize), indent: usize, out: &mut String) {
    out.push_str(&pad(indent));
    out.push(s.char());
    out.push(' ');
    out.push_str(key);
    out.push_str(&pad(width.saturating_sub(key.chars().count())));
    out.push_str(" = ");
}

/// A write-only attribute's line: its value is never known to strata.
fn write_only_line(s: Sym, key: (&str, usize), indent: usize, out: &mut String) {
    key_start(s, key, indent, out);
    out.push_str("(write-only attribute)");
    if s == Sym::Delete {
        out.push_str(" -> null");
    }
    out.push('\n');
}

/// `sym key = value` on its own line.
fn line(
    s: Sym,
    key: (&str, usize),
    b: Option<&Value>,
    a: Option<&Value>,
    indent: usize,
    style: Style,
    out: &mut String,
) {
    key_start(s, key, indent, out);
    value_in(b, a, indent, style, out);
    out.push('\n');
}

/// One element's line of a sequence's change.
type Row<'v> = (Sym, Option<&'v Value>, Option<&'v Value>);

/// The elements of a sequence before and after, paired. Typed, tuples of
/// one type pair by position (`by_index`), as Terraform pairs them;
/// otherwise a sequence diff pairs the elements that stayed. Read as JSON
/// (an output, a value of any type) see [`json_rows`].
fn rows<'v>(b: &'v [Value], a: &'v [Value], by_index: bool, style: Style) -> Vec<Row<'v>> {
    let pair = |x: &'v Value, y: &'v Value| (style.sym(Some(x), Some(y)), Some(x), Some(y));
    if style.reading == Reading::Json {
        return json_rows(b, a, pair);
    }
    if by_index {
        return b.iter().zip(a).map(|(x, y)| pair(x, y)).collect();
    }
    let (bk, ak) = (key_list(b), key_list(a));
    let mut rows = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, &bk, &ak) {
        let (tag, br, ar) = op.as_tag_tuple();
        match tag {
            similar::DiffTag::Equal => {
                rows.extend(
                    br.zip(ar)
                        .map(|(i, j)| (Sym::Same, Some(&b[i]), Some(&a[j]))),
                );
            }
            similar::DiffTag::Delete => rows.extend(br.map(|i| (Sym::Delete, Some(&b[i]), None))),
            similar::DiffTag::Insert => rows.extend(ar.map(|j| (Sym::Create, None, Some(&a[j])))),
            similar::DiffTag::Replace => {
                rows.extend(br.map(|i| (Sym::Delete, Some(&b[i]), None)));
                rows.extend(ar.map(|j| (Sym::Create, None, Some(&a[j]))));
            }
        }
    }
    rows
}

/// The most cells [`common_subsequence`]'s table may take (32 MiB).
const LCS_CELLS: usize = 1 << 22;

/// Sequences read as JSON, paired as Terraform's renderer pairs them
/// (types unknown): of one length, by position unless one is the other
/// reordered; otherwise around a longest common subsequence (chosen as
/// Terraform chooses among equally long ones), where an object pairs with
/// the object across from it and the rest are removed, then added.
fn json_rows<'v>(
    b: &'v [Value],
    a: &'v [Value],
    pair: impl Fn(&'v Value, &'v Value) -> Row<'v>,
) -> Vec<Row<'v>> {
    let (bk, ak) = (key_list(b), key_list(a));
    let after: std::collections::HashSet<&String> = ak.iter().collect();
    let reordered = bk.iter().all(|k| after.contains(k));
    if b.len() == a.len() && !reordered {
        return b.iter().zip(a).map(|(x, y)| pair(x, y)).collect();
    }
    let common = common_subsequence(&bk, &ak);
    let object = |v: &Value| matches!(v.unmarked(), Value::Object(_));
    let (mut i, mut j) = (0, 0);
    let mut rows = Vec::new();
    for next in common.into_iter().map(Some).chain(std::iter::once(None)) {
        let stays = |k: &String| next == Some(k);
        while i < b.len() && !stays(&bk[i]) {
            if j < a.len() && object(&b[i]) && object(&a[j]) && !stays(&ak[j]) {
                rows.push(pair(&b[i], &a[j]));
                j += 1;
            } else {
                rows.push((Sym::Delete, Some(&b[i]), None));
            }
            i += 1;
        }
        while j < a.len() && !stays(&ak[j]) {
            rows.push((Sym::Create, None, Some(&a[j])));
            j += 1;
        }
        if next.is_some() && i < b.len() && j < a.len() {
            rows.push((Sym::Same, Some(&b[i]), Some(&a[j])));
            (i, j) = (i + 1, j + 1);
        }
    }
    rows
}

/// A longest common subsequence of `xs` and `ys`; among equally long
/// ones, the one found walking back from both ends preferring to drop
/// from `ys` (Terraform's choice, which decides what a plan shows as
/// removed and added).
///
/// Its table takes `xs.len() × ys.len()` cells, as Terraform's does; past
/// [`LCS_CELLS`] (long lists whose length changed) a Myers diff finds a
/// longest one instead, in linear memory.
fn common_subsequence<'k>(xs: &'k [String], ys: &[String]) -> Vec<&'k String> {
    if xs.len().saturating_mul(ys.len()) > LCS_CELLS {
        return capture_diff_slices(Algorithm::Myers, xs, ys)
            .iter()
            .filter(|op| op.tag() == similar::DiffTag::Equal)
            .flat_map(|op| &xs[op.old_range()])
            .collect();
    }
    let w = xs.len() + 1;
    // lengths[y * w + x]: the longest of xs[..x] and ys[..y].
    let mut lengths = vec![0usize; w * (ys.len() + 1)];
    for y in 1..=ys.len() {
        for x in 1..=xs.len() {
            lengths[y * w + x] = if xs[x - 1] == ys[y - 1] {
                lengths[(y - 1) * w + x - 1] + 1
            } else {
                lengths[y * w + x - 1].max(lengths[(y - 1) * w + x])
            };
        }
    }
    let (mut x, mut y) = (xs.len(), ys.len());
    let mut out = Vec::new();
    while x > 0 && y > 0 {
        if xs[x - 1] == ys[y - 1] {
            out.push(&xs[x - 1]);
            (x, y) = (x - 1, y - 1);
        } else if lengths[y * w + x - 1] > lengths[(y - 1) * w + x] {
            x -= 1;
        } else {
            y -= 1;
        }
    }
    out.reverse();
    out
}

fn list(
    b: &[Value],
    a: &[Value],
    by_index: bool,
    indent: usize,
    reading: Reading,
    out: &mut String,
) {
    let style = Style {
        quiet: false,
        reading,
    };
    if b.is_empty() && a.is_empty() {
        return out.push_str("[]");
    }
    out.push_str("[\n");
    let inner = indent + 4;
    let updating = !b.is_empty() && !a.is_empty();
    let rows = rows(b, a, by_index, style);
    let mut skipped = 0;
    for (i, &(s, bv, av)) in rows.iter().enumerate() {
        // Unchanged elements show only next to a change, as context.
        let near = |j: Option<usize>| {
            j.and_then(|j| rows.get(j))
                .is_some_and(|r| r.0 != Sym::Same)
        };
        if s == Sym::Same && updating && !near(i.checked_sub(1)) && !near(Some(i + 1)) {
            skipped += 1;
            continue;
        }
        // A run of hidden elements is noted where it is, as Terraform
        // notes it.
        hidden(skipped, "element", inner, out);
        skipped = 0;
        out.push_str(&pad(inner));
        out.push(s.char());
        out.push(' ');
        match (s, bv, av) {
            (Sym::Delete, Some(v), _) => whole(v, Sym::Delete, inner, reading, out),
            (Sym::Create, _, _) => value_in(None, av, inner, style, out),
            // Context read as JSON is shown whole, as Terraform shows it.
            (Sym::Same, _, Some(v)) if reading == Reading::Json => {
                unchanged(v, inner, reading, out)
            }
            _ => value_in(bv, av, inner, style, out),
        }
        out.push_str(",\n");
    }
    hidden(skipped, "element", inner, out);
    out.push_str(&pad(indent + 2));
    out.push(']');
}

/// Elements as comparable text, so the diff pairs equal ones.
fn key_list(vs: &[Value]) -> Vec<String> {
    vs.iter()
        .map(|v| {
            if v.is_wholly_known() {
                v.clone().unmark_deep().0.to_json().unwrap_or_default()
            } else {
                format!("{:p}", v)
            }
        })
        .collect()
}

/// Which block of a type: by position, or (nested as a map) by label.
enum BlockKey {
    Index(usize),
    Label(String),
}

/// The blocks of one type before and after, paired: by label when nested
/// as a map, in order otherwise.
fn block_pairs<'v>(
    b: Option<&'v Value>,
    a: Option<&'v Value>,
    nesting: BlockNesting,
) -> Vec<(BlockKey, Option<&'v Value>, Option<&'v Value>)> {
    if nesting == BlockNesting::Map {
        let empty = |v: Option<&'v Value>| v.and_then(|v| v.unmarked().entries());
        let (bm, am) = (empty(b), empty(a));
        let mut keys: Vec<&String> = bm.iter().chain(am.iter()).flat_map(|m| m.keys()).collect();
        keys.sort();
        keys.dedup();
        let get = |m: Option<&'v Attrs>, k: &str| m.and_then(|m| m.get(k));
        return keys
            .into_iter()
            .map(|k| (BlockKey::Label(k.clone()), get(bm, k), get(am, k)))
            .collect();
    }
    let items = |v: Option<&'v Value>| -> Vec<&'v Value> {
        match v.map(Value::unmarked) {
            // A tuple: blocks whose attributes may be of any type.
            Some(Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs)) => vs.iter().collect(),
            Some(v) if !v.is_null() && nesting == BlockNesting::Single => vec![v],
            _ => Vec::new(),
        }
    };
    let (bi, ai) = (items(b), items(a));
    (0..bi.len().max(ai.len()))
        .map(|i| (BlockKey::Index(i), bi.get(i).copied(), ai.get(i).copied()))
        .collect()
}

/// A resource's attributes and blocks, `{` to `}` at `indent`: unchanged
/// attributes hidden when updating (except `id`, `name` and `tags`, which
/// say which object this is).
pub fn resource_body(
    b: Option<&Value>,
    a: Option<&Value>,
    schema: Option<&ResourceSchema>,
    (forces, unchanged): (&[Vec<String>], Unchanged),
    indent: usize,
    out: &mut String,
) {
    let frame = Frame {
        schema,
        legacy: schema.is_some_and(sdk_v2_shaped),
        unchanged,
    };
    block_body(b, a, frame, forces, indent, out)
}

/// Whether what an update leaves as it was is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unchanged {
    /// Counted in "N unchanged attributes hidden", as for a change.
    Hidden,
    /// Shown, nulls included: an import, whose object the user sees for
    /// the first time (Terraform's ShowUnchangedChildren).
    Shown,
}

/// What rendering one block needs beside its values: its schema, whether
/// it is shaped by the older SDK (`sdk_v2_shaped`), and what is shown.
#[derive(Clone, Copy)]
struct Frame<'s> {
    schema: Option<&'s ResourceSchema>,
    legacy: bool,
    unchanged: Unchanged,
}

/// Whether a block's schema has only what Terraform's older plugin SDK
/// could declare (no nested attributes, blocks nested as a map, or
/// attributes of any, object or tuple type, or of collections of
/// non-primitive collections). That SDK cannot tell an empty string from
/// null, so Terraform's renderer takes one for the other in such blocks
/// and theirs.
fn sdk_v2_shaped(s: &ResourceSchema) -> bool {
    use crate::lang::types::Type;
    let modern_type = |t: &Type| {
        t.has_dynamic()
            || matches!(t, Type::Object(_) | Type::Tuple(_))
            || t.element()
                .and_then(Type::element)
                .is_some_and(|e| !e.is_primitive())
    };
    !s.blocks.values().any(|b| b.nesting == BlockNesting::Map)
        && !s
            .attributes
            .values()
            .any(|a| a.nested || modern_type(&a.ty))
}

/// An empty string, which a block shaped by the older SDK means as null.
fn blank(v: Option<&Value>) -> bool {
    v.and_then(|v| v.unmarked().as_str())
        .is_some_and(str::is_empty)
}

/// `resource_body` for one block.
fn block_body(
    b: Option<&Value>,
    a: Option<&Value>,
    frame: Frame<'_>,
    forces: &[Vec<String>],
    indent: usize,
    out: &mut String,
) {
    let empty = Attrs::new();
    let sides = Sides {
        b,
        a,
        bm: b.and_then(|v| v.unmarked().entries()).unwrap_or(&empty),
        am: a.and_then(|v| v.unmarked().entries()).unwrap_or(&empty),
    };
    let is_block = |k: &str| frame.schema.is_some_and(|s| s.blocks.contains_key(k));
    let mut keys: Vec<&String> = sides
        .bm
        .keys()
        .chain(sides.am.keys())
        .filter(|k| !is_block(k))
        .collect();
    keys.sort();
    keys.dedup();
    let show_all = frame.unchanged == Unchanged::Shown;
    let width = keys
        .iter()
        .filter(|k| {
            write_only(frame.schema, k)
                || !(is_null(sides.bm.get(**k)) && is_null(sides.am.get(**k)))
        })
        .map(|k| k.chars().count())
        .max()
        .unwrap_or(0);
    let layout = Layout {
        frame,
        forces,
        inner: indent + 4,
        width,
        // What an update hides: all it leaves as it was, or, shown
        // whole, nothing.
        hiding: b.is_some() && a.is_some() && !show_all,
        show_all,
    };
    out.push_str("{\n");
    let skipped = keys
        .into_iter()
        .filter(|k| attribute(k, &sides, &layout, out) == Attr::Hidden)
        .count();
    hidden(skipped, "attribute", layout.inner, out);
    let skipped_blocks = match frame.schema {
        Some(schema) => nested_blocks(schema, &sides, &layout, out),
        None => 0,
    };
    if skipped_blocks > 0 {
        out.push('\n');
        hidden(skipped_blocks, "block", layout.inner, out);
    }
    out.push_str(&pad(indent + 2));
    out.push('}');
}

/// A block's two sides: before and after, and their entries.
struct Sides<'v> {
    b: Option<&'v Value>,
    a: Option<&'v Value>,
    bm: &'v Attrs,
    am: &'v Attrs,
}

impl Sides<'_> {
    fn updating(&self) -> bool {
        self.b.is_some() && self.a.is_some()
    }
}

/// How a block's lines are laid out.
struct Layout<'f> {
    frame: Frame<'f>,
    /// Paths inside the block that force replacement.
    forces: &'f [Vec<String>],
    inner: usize,
    /// The attribute names' column.
    width: usize,
    hiding: bool,
    show_all: bool,
}

/// What became of one attribute's line.
#[derive(PartialEq)]
enum Attr {
    Shown,
    /// Unchanged and left out, counted in the "hidden" line.
    Hidden,
    /// Null on both sides: not there at all.
    Absent,
}

fn write_only(schema: Option<&ResourceSchema>, k: &str) -> bool {
    schema
        .and_then(|s| s.attributes.get(k))
        .is_some_and(|a| a.write_only)
}

/// One attribute's line in a block.
fn attribute(k: &str, sides: &Sides<'_>, layout: &Layout<'_>, out: &mut String) -> Attr {
    let (inner, width) = (layout.inner, layout.width);
    let (mut bv, mut av) = (sides.bm.get(k), sides.am.get(k));
    // The older SDK's "" is read as null; shown whole, such a value is
    // said to be null, where a true null is not there at all.
    let blanked = layout.frame.legacy && (blank(bv) || blank(av));
    if blanked {
        (bv, av) = (
            bv.filter(|v| !blank(Some(v))),
            av.filter(|v| !blank(Some(v))),
        );
        // Empty on both sides: unchanged, and counted so.
        if is_null(bv) && is_null(av) && !layout.show_all {
            return Attr::Hidden;
        }
    }
    // Always null, so said to be there: made or removed with the object,
    // and unchanged (hidden) when it is updated, as Terraform says it.
    if write_only(layout.frame.schema, k) {
        match (sides.b, sides.a) {
            (Some(_), Some(_)) => return Attr::Hidden,
            (_, Some(_)) => write_only_line(Sym::Create, (k, width), inner, out),
            _ => write_only_line(Sym::Delete, (k, width), inner, out),
        }
        return Attr::Shown;
    }
    let mut s = sym(bv, av);
    if s == Sym::Same {
        if is_null(bv) && !(layout.show_all && blanked) {
            return Attr::Absent;
        }
        if layout.hiding && !IDENTIFYING.contains(&k) {
            return Attr::Hidden;
        }
        if !sides.updating() {
            s = match sides.a {
                Some(_) => Sym::Create,
                None => Sym::Delete,
            };
        }
    }
    // An attribute of any type is read as its JSON, as Terraform's
    // renderer reads it (a null inside it is shown); and Terraform marks
    // typed attributes only: a dynamic one (like terraform_data's
    // triggers_replace) has no mark unless it becomes unknown.
    let dynamic = of_any_type(layout.frame.schema, k);
    let mut l = String::new();
    match (s, av) {
        // An identifying attribute shown unchanged is shown whole.
        (Sym::Same, v) => {
            let null = Value::null();
            l.push_str(&pad(inner));
            l.push_str("  ");
            l.push_str(k);
            l.push_str(&pad(width.saturating_sub(k.chars().count())));
            l.push_str(" = ");
            unchanged(v.unwrap_or(&null), inner, Reading::Typed, &mut l);
            l.push('\n');
        }
        _ if dynamic => {
            key_start(s, (k, width), inner, &mut l);
            output_value(bv, av, inner, &mut l);
            l.push('\n');
        }
        _ => line(s, (k, width), bv, av, inner, Style::PLAIN, &mut l),
    }
    let marked = !dynamic || av.is_some_and(|v| !v.is_known());
    if marked && layout.forces.iter().any(|p| p.len() == 1 && p[0] == k) {
        l.pop();
        l.push_str(" # forces replacement\n");
    }
    out.push_str(&l);
    Attr::Shown
}

/// The block's nested blocks, each type's set apart from the attributes
/// by a blank line, as Terraform sets them; how many unchanged ones were
/// hidden.
fn nested_blocks(
    schema: &ResourceSchema,
    sides: &Sides<'_>,
    layout: &Layout<'_>,
    out: &mut String,
) -> usize {
    let mut skipped = 0;
    for (name, bs) in &schema.blocks {
        let mut first = layout.width > 0;
        // Blocks not known until applied are one line, except a map's,
        // which Terraform 1.11 leaves out.
        if sides.am.get(name).is_some_and(|y| !y.is_known()) {
            if bs.nesting == BlockNesting::Map {
                continue;
            }
            let s = match sides.bm.get(name) {
                Some(x) if !x.is_null() => Sym::Update,
                _ => Sym::Create,
            };
            let gap = if first { "\n" } else { "" };
            let inner = pad(layout.inner);
            out.push_str(&format!(
                "{gap}{inner}{} {name} (known after apply)\n",
                s.char()
            ));
            continue;
        }
        for (key, x, y) in block_pairs(sides.bm.get(name), sides.am.get(name), bs.nesting) {
            let s = match (x, y) {
                (Some(x), Some(y)) if equal(x, y) => Sym::Same,
                (Some(_), Some(_)) => Sym::Update,
                (Some(_), None) => Sym::Delete,
                _ => Sym::Create,
            };
            if s == Sym::Same && layout.hiding {
                skipped += 1;
                continue;
            }
            if std::mem::take(&mut first) {
                out.push('\n');
            }
            nested_block((name, bs), (s, &key), (x, y), layout, out);
        }
    }
    skipped
}

/// One nested block: its header and its body.
fn nested_block(
    (name, bs): (&str, &strata_provider::BlockSchema),
    (s, key): (Sym, &BlockKey),
    (x, y): (Option<&Value>, Option<&Value>),
    layout: &Layout<'_>,
    out: &mut String,
) {
    out.push_str(&pad(layout.inner));
    out.push(s.char());
    out.push(' ');
    out.push_str(name);
    out.push(' ');
    if let BlockKey::Label(label) = key {
        out.push_str(&format!("{label:?} "));
    }
    // A path through this block (`node_config.0.x`, or `rule.http.x` for
    // a labelled one) marks `x` inside it.
    let step = match key {
        BlockKey::Index(i) => i.to_string(),
        BlockKey::Label(label) => label.clone(),
    };
    let within: Vec<Vec<String>> = layout
        .forces
        .iter()
        .filter(|p| p.len() > 2 && p[0] == name && p[1] == step)
        .map(|p| p[2..].to_vec())
        .collect();
    let inside = Frame {
        schema: Some(&bs.schema),
        legacy: layout.frame.legacy && sdk_v2_shaped(&bs.schema),
        unchanged: layout.frame.unchanged,
    };
    block_body(x, y, inside, &within, layout.inner, out);
    out.push('\n');
}

#[cfg(test)]
mod common_subsequence_tests {
    use super::*;

    fn keys(xs: &[u32]) -> Vec<String> {
        xs.iter().map(u32::to_string).collect()
    }

    #[test]
    fn the_table_and_the_long_list_fallback_both_find_a_longest_one() {
        // Terraform's choice among equally long ones: "b" stays, "a" moves.
        let (b, a) = (keys(&[1, 2]), keys(&[2, 1]));
        assert_eq!(common_subsequence(&b, &a), vec!["2"]);
        // 3 000 × 3 000 cells is past the table's bound: every second
        // element removed, the rest stay.
        let long: Vec<u32> = (0..3000).collect();
        let halved: Vec<u32> = long.iter().copied().filter(|n| n % 2 == 0).collect();
        let (b, a) = (keys(&long), keys(&halved));
        assert!(b.len() * b.len() > LCS_CELLS);
        let common = common_subsequence(&b, &a);
        assert_eq!(common.len(), halved.len());
        assert!(common.iter().zip(&a).all(|(x, y)| *x == y));
    }
}
