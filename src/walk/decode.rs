//! A resource block's body as the object its schema describes: arguments
//! converted to their attribute types, nested blocks (including `dynamic`
//! ones) as objects, lists or sets, everything unset null. The errors are
//! Terraform's.

use crate::diag::{Diag, Diags, Span};
use crate::eval::{iteration_pairs, Evaluator};
use crate::lang::convert::convert;
use crate::lang::types::Type;
use crate::lang::value::{Attrs, Value};
use crate::syntax::{Block, Body};
use std::collections::BTreeMap;
use strata_provider::{BlockNesting, BlockSchema, ResourceSchema};

fn err(code: &'static str, summary: &str, detail: impl Into<String>, span: Span) -> Diag {
    Diag::new(code, summary, detail).at(span)
}

/// Decodes `body` against `schema`; `span` (the block's) locates errors
/// about what is missing.
pub fn decode(
    body: &Body,
    schema: &ResourceSchema,
    ev: &mut Evaluator,
    span: Span,
    diags: &mut Diags,
) -> Value {
    let reinterpreted;
    let body = if body.json {
        // A block nested as a map takes its key as a label: in JSON, an
        // object whose property names are the keys.
        let labels = |name: &str| {
            let b = schema.blocks.get(name)?;
            Some(usize::from(b.nesting == BlockNesting::Map))
        };
        reinterpreted = crate::syntax::json::blocks_by_schema(body, &labels, diags);
        &reinterpreted
    } else {
        body
    };
    let mut out = arguments(body, schema, ev, span, diags);
    // Blocks of each type, in source order, `dynamic` ones expanded.
    let mut found: BTreeMap<&str, Found> = BTreeMap::new();
    let mut as_attrs: BTreeMap<&str, (Found, Span)> = BTreeMap::new();
    for b in &body.blocks {
        let (kind, kind_span) = match (b.kind.as_str(), b.labels.first()) {
            ("dynamic", Some((label, span))) => (label.as_str(), *span),
            _ => (b.kind.as_str(), b.kind_span),
        };
        if let Some(element) = attribute_as_blocks(schema, body, kind) {
            let (items, _) = as_attrs.entry(kind).or_insert((Found::default(), b.span));
            expand(b, kind, &element, Labels::None, ev, items, diags);
            continue;
        }
        let Some(bs) = schema.blocks.get(kind) else {
            diags.push(err(
                "strata::config::unsupported_block",
                "Unsupported block type",
                format!(
                    "Blocks of type {kind:?} are not expected here.{}",
                    crate::eval::did_you_mean(
                        kind,
                        &schema.blocks.keys().map(String::as_str).collect::<Vec<_>>()
                    )
                ),
                kind_span,
            ));
            continue;
        };
        let labels = match bs.nesting {
            BlockNesting::Map => Labels::Key,
            _ => Labels::None,
        };
        let items = found.entry(kind).or_default();
        expand(b, kind, &bs.schema, labels, ev, items, diags);
    }
    for (name, bs) in &schema.blocks {
        let items = found.remove(name.as_str()).unwrap_or_default();
        out.insert(name.clone(), blocks_value(name, bs, items, span, diags));
    }
    for (name, (found, block_span)) in as_attrs {
        let Some(a) = schema.attributes.get(name) else {
            continue;
        };
        if let Some(v) = blocks_as_attribute(name, &a.ty, found, block_span, diags) {
            out.insert(name.to_string(), v);
        }
    }
    Value::Object(out)
}

/// The arguments of `body` converted to their attributes' types, and
/// every attribute it leaves unset null (a required one an error at
/// `span`).
fn arguments(
    body: &Body,
    schema: &ResourceSchema,
    ev: &mut Evaluator,
    span: Span,
    diags: &mut Diags,
) -> Attrs {
    let mut out = Attrs::new();
    for a in &body.attrs {
        let Some(s) = schema.attributes.get(&a.name) else {
            let what = if schema.blocks.contains_key(&a.name) {
                format!("An argument named {:?} is not expected here. Did you mean to define a block of type {:?}?", a.name, a.name)
            } else {
                let names: Vec<&str> = schema.attributes.keys().map(String::as_str).collect();
                format!(
                    "An argument named {:?} is not expected here.{}",
                    a.name,
                    crate::eval::did_you_mean(&a.name, &names)
                )
            };
            diags.push(err(
                "strata::config::unsupported_argument",
                "Unsupported argument",
                what,
                a.name_span,
            ));
            continue;
        };
        let read_only = s.computed && !s.optional && !s.required;
        match ev.eval(&a.expr) {
            // Null is leaving it unset, as providers take it (a module
            // passing on a variable that defaults to null).
            Ok(v) if read_only && v.is_null() => {}
            Ok(_) if read_only => diags.push(err(
                "strata::config::read_only",
                "Invalid Configuration for Read-Only Attribute",
                format!("Cannot set value for this attribute as the provider has marked it as read-only. Remove the configuration line setting the value ({:?}).", a.name),
                a.span,
            )),
            Ok(v) => match convert(&v, &s.ty) {
                Ok(v) => {
                    out.insert(a.name.clone(), v);
                }
                Err(e) => diags.push(err(
                    "strata::config::attribute_type",
                    "Incorrect attribute value type",
                    format!("Inappropriate value for attribute {:?}: {e}.", a.name),
                    a.expr.span,
                )),
            },
            Err(d) => diags.push(d),
        }
    }
    for (name, s) in &schema.attributes {
        if out.contains_key(name) {
            continue;
        }
        if s.required && body.attr(name).is_none() {
            diags.push(err(
                "strata::config::missing_argument",
                "Missing required argument",
                format!("The argument {name:?} is required, but no definition was found."),
                span,
            ));
        }
        out.insert(name.clone(), Value::Null(s.ty.clone()));
    }
    out
}

/// The blocks of type `name` as one value by their nesting, their count
/// checked (errors at `span`, the enclosing block).
fn blocks_value(
    name: &str,
    bs: &BlockSchema,
    items: Found,
    span: Span,
    diags: &mut Diags,
) -> Value {
    let n = items.len();
    // While a `dynamic` block's `for_each` is unknown, so is how many
    // blocks there will be: the count is judged once it is known.
    if n < bs.min_items && !items.unknown {
        diags.push(err(
            "strata::config::block_count",
            &format!("Insufficient {name} blocks"),
            format!("At least {} \"{name}\" blocks are required.", bs.min_items),
            span,
        ));
    }
    if let Some(max) = bs.max_items.filter(|&m| n > m) {
        diags.push(err(
            "strata::config::block_count",
            &format!("Too many {name} blocks"),
            format!("No more than {max} \"{name}\" blocks are allowed."),
            span,
        ));
    }
    let ty = bs.schema.object_type();
    match bs.nesting {
        // Which blocks there will be is only known after apply.
        _ if items.unknown => Value::Unknown(bs.value_type()),
        // Each block keeps the types of its own values.
        BlockNesting::List if bs.loose() => Value::Tuple(items.items),
        BlockNesting::Map if bs.loose() => Value::Object(items.keyed),
        BlockNesting::Single => items.items.into_iter().next().unwrap_or(Value::Null(ty)),
        BlockNesting::List => Value::List(ty, items.items),
        BlockNesting::Set => Value::new_set(ty, items.items),
        BlockNesting::Map => Value::Map(ty, items.keyed),
    }
}

/// Blocks written for an attribute of type `ty` (attributes as blocks),
/// as its value; `None` leaves it unset, as Terraform leaves it when only
/// `dynamic` blocks with nothing to iterate were written.
fn blocks_as_attribute(
    name: &str,
    ty: &Type,
    found: Found,
    at: Span,
    diags: &mut Diags,
) -> Option<Value> {
    if found.unknown {
        return Some(Value::Unknown(ty.clone()));
    }
    let items = found.items;
    if items.is_empty() {
        return None;
    }
    let list = match ty {
        Type::Set(t) => Value::new_set((**t).clone(), items),
        _ => Value::List(ty.element().cloned().unwrap_or(Type::Dynamic), items),
    };
    match convert(&list, ty) {
        Ok(v) => Some(v),
        Err(e) => {
            diags.push(err(
                "strata::config::attribute_type",
                "Incorrect attribute value type",
                format!("Inappropriate value for attribute {name:?}: {e}."),
                at,
            ));
            None
        }
    }
}

/// Terraform's "attributes as blocks": an attribute whose type is a list
/// or set of objects (as providers built on the older SDK declare
/// `ingress` or `route`) may be written as blocks of its name, unless the
/// body sets it as an argument. The blocks' schema: the object's
/// attributes, each optional.
fn attribute_as_blocks(schema: &ResourceSchema, body: &Body, name: &str) -> Option<ResourceSchema> {
    use crate::lang::types::Type;
    if schema.blocks.contains_key(name) || body.attr(name).is_some() {
        return None;
    }
    let a = schema.attributes.get(name)?;
    if a.nested || (a.computed && !a.optional && !a.required) {
        return None;
    }
    let (Type::List(element) | Type::Set(element)) = &a.ty else {
        return None;
    };
    let Type::Object(object) = element.as_ref() else {
        return None;
    };
    let attributes = object
        .attrs
        .iter()
        .map(|(k, t)| {
            (
                k.as_str(),
                strata_provider::AttributeSchema::optional(t.clone(), ""),
            )
        })
        .collect();
    Some(ResourceSchema::of_attributes(attributes))
}

/// The labels blocks of a type take: none, or (nested as a map) one, the
/// key.
#[derive(Clone, Copy, PartialEq)]
enum Labels {
    None,
    Key,
}

/// The blocks of one type decoded so far.
#[derive(Default)]
struct Found {
    /// In source order, for single, list and set nesting.
    items: Vec<Value>,
    /// By key, for blocks nested as a map.
    keyed: Attrs,
    /// A `dynamic` block iterates over a value not yet known, so which
    /// blocks there will be is not known either.
    unknown: bool,
}

impl Found {
    fn len(&self) -> usize {
        self.items.len() + self.keyed.len()
    }

    /// Adds one block; a key already taken is Terraform's error at `at`.
    fn push(&mut self, key: Option<String>, v: Value, kind: &str, at: Span, diags: &mut Diags) {
        let Some(key) = key else {
            return self.items.push(v);
        };
        if self.keyed.contains_key(&key) {
            return diags.push(err(
                "strata::config::duplicate_block",
                &format!("Duplicate {kind} block"),
                format!(
                    "A block for {kind} {key:?} was already defined. The {kind} labels must be unique."
                ),
                at,
            ));
        }
        self.keyed.insert(key, v);
    }
}

/// One block as written, or the blocks a `dynamic` one stands for, into
/// `found`.
fn expand(
    b: &Block,
    kind: &str,
    schema: &ResourceSchema,
    labels: Labels,
    ev: &mut Evaluator,
    found: &mut Found,
    diags: &mut Diags,
) {
    if b.kind == "dynamic" {
        return dynamic(b, kind, schema, labels, ev, found, diags);
    }
    if let Some(key) = static_key(b, labels, diags) {
        let v = decode(&b.body, schema, ev, b.span, diags);
        found.push(key, v, kind, header(b), diags);
    }
}

/// Where a block's errors about its labels point: its type and labels,
/// as Terraform points at a block's header rather than its whole body.
fn header(b: &Block) -> Span {
    b.labels
        .last()
        .map_or(b.kind_span, |(_, l)| b.kind_span.to(*l))
}

/// A written block's key (`None` inside when its type takes no labels);
/// `None` when its labels are wrong, with Terraform's error.
fn static_key(b: &Block, labels: Labels, diags: &mut Diags) -> Option<Option<String>> {
    let wanted = usize::from(labels == Labels::Key);
    if let Some((_, extra)) = b.labels.get(wanted) {
        let detail = match labels {
            Labels::None => format!("No labels are expected for {} blocks.", b.kind),
            Labels::Key => format!("Only 1 labels (key) are expected for {} blocks.", b.kind),
        };
        let summary = format!("Extraneous label for {}", b.kind);
        diags.push(err(
            "strata::config::block_labels",
            &summary,
            detail,
            *extra,
        ));
        return None;
    }
    match (labels, b.labels.first()) {
        (Labels::None, _) => Some(None),
        (Labels::Key, Some((key, _))) => Some(Some(key.clone())),
        (Labels::Key, None) => {
            diags.push(err(
                "strata::config::block_labels",
                &format!("Missing key for {}", b.kind),
                format!("All {} blocks must have 1 labels (key).", b.kind),
                header(b),
            ));
            None
        }
    }
}

/// `dynamic "kind" { for_each = …; iterator = it; labels = […]; content
/// { … } }`: one block per element, with `it.key` and `it.value` in scope.
fn dynamic(
    b: &Block,
    kind: &str,
    schema: &ResourceSchema,
    labels: Labels,
    ev: &mut Evaluator,
    found: &mut Found,
    diags: &mut Diags,
) {
    let Some(for_each) = b.body.attr("for_each") else {
        diags.push(missing_argument("for_each", b.span));
        return;
    };
    let iterator = match b.body.attr("iterator") {
        Some(a) => match &a.expr.kind {
            crate::syntax::ast::ExprKind::Variable(n) => n.clone(),
            _ => {
                diags.push(err(
                    "strata::config::dynamic",
                    "Invalid dynamic iterator name",
                    "The iterator must be a single name, like iterator = rule.",
                    a.expr.span,
                ));
                return;
            }
        },
        None => kind.to_string(),
    };
    let Some(key_expr) = dynamic_labels(b, kind, labels, diags) else {
        return;
    };
    let Some(content) = b.body.blocks.iter().find(|c| c.kind == "content") else {
        diags.push(err(
            "strata::config::dynamic",
            "Missing content block",
            "A dynamic block must have a nested block of type \"content\" to describe the body of each generated block.",
            b.span,
        ));
        return;
    };
    let coll = match ev.eval(&for_each.expr) {
        Ok(v) => v,
        Err(d) => return diags.push(d),
    };
    if !coll.is_known() {
        // How many blocks there will be (and so every block of the type,
        // as Terraform has it) is only known after apply.
        found.unknown = true;
        return;
    }
    let Some(pairs) = iteration_pairs(&coll) else {
        diags.push(err(
            "strata::config::dynamic",
            "Invalid dynamic for_each value",
            format!(
                "Cannot use a {} value in for_each. An iterable collection is required.",
                coll.ty().friendly_name()
            ),
            for_each.expr.span,
        ));
        return;
    };
    for (k, v) in pairs {
        let it = Value::Object(Attrs::from([
            ("key".to_string(), k),
            ("value".to_string(), v),
        ]));
        ev.bind(&iterator, it);
        let key = match key_expr {
            Some(e) => dynamic_key(e, ev, diags).map(Some),
            None => Some(None),
        };
        if let Some(key) = key {
            let v = decode(&content.body, schema, ev, content.span, diags);
            found.push(key, v, kind, header(b), diags);
        }
        ev.unbind();
    }
}

fn missing_argument(name: &str, span: Span) -> Diag {
    err(
        "strata::config::dynamic",
        "Missing required argument",
        format!("The argument {name:?} is required, but no definition was found."),
        span,
    )
}

/// The expression of a dynamic block's key (`labels = [each.key]`), or
/// `Some(None)` for a type that takes no labels; `None` when `labels` is
/// wrong for the type, with Terraform's error.
fn dynamic_labels<'b>(
    b: &'b Block,
    kind: &str,
    labels: Labels,
    diags: &mut Diags,
) -> Option<Option<&'b crate::syntax::ast::Expr>> {
    use crate::syntax::ast::ExprKind;
    let wanted = usize::from(labels == Labels::Key);
    let Some(attr) = b.body.attr("labels") else {
        if wanted == 0 {
            return Some(None);
        }
        diags.push(missing_argument("labels", header(b)));
        return None;
    };
    let ExprKind::Tuple(exprs) = &attr.expr.kind else {
        diags.push(err(
            "strata::config::dynamic",
            "Invalid expression",
            "A static list expression is required.",
            attr.expr.span,
        ));
        return None;
    };
    let count = |summary: &str, at: Span| {
        let detail = format!("Blocks of type {kind:?} require {wanted} label(s).");
        err("strata::config::dynamic", summary, detail, at)
    };
    match exprs.get(wanted) {
        Some(extra) => diags.push(count("Extraneous dynamic block label", extra.span)),
        None if exprs.len() < wanted => {
            diags.push(count("Insufficient dynamic block labels", attr.expr.span))
        }
        None => return Some(exprs.first()),
    }
    None
}

/// One generated block's key: its label expression's value, a known,
/// non-null string.
fn dynamic_key(
    e: &crate::syntax::ast::Expr,
    ev: &mut Evaluator,
    diags: &mut Diags,
) -> Option<String> {
    let invalid = |detail: String| {
        err(
            "strata::config::dynamic",
            "Invalid dynamic block label",
            detail,
            e.span,
        )
    };
    let v = match ev.eval(e) {
        Ok(v) => v,
        Err(d) => {
            diags.push(d);
            return None;
        }
    };
    let problem = match convert(&v, &Type::String) {
        Err(why) => format!("Cannot use this value as a dynamic block label: {why}."),
        Ok(v) if v.is_null() => "Cannot use a null value as a dynamic block label.".into(),
        Ok(v) if !v.is_known() => {
            "This value is not yet known. Dynamic block labels must be immediately-known values."
                .into()
        }
        Ok(v) => return v.unmarked().as_str().map(str::to_string),
    };
    diags.push(invalid(problem));
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::types::Type;
    use strata_provider::AttributeSchema;

    fn rule_type() -> Type {
        Type::object(BTreeMap::from([
            ("port".to_string(), Type::Number),
            ("cidr".to_string(), Type::String),
        ]))
    }

    /// `rules`, a list of objects as the older SDK declares them, and
    /// `ports`, the same type as a protocol 6 nested attribute.
    fn schema() -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            (
                "rules",
                AttributeSchema::optional(Type::list(rule_type()), ""),
            ),
            (
                "ports",
                AttributeSchema {
                    nested: true,
                    ..AttributeSchema::optional(Type::list(rule_type()), "")
                },
            ),
            ("arn", AttributeSchema::computed(Type::String, "")),
        ])
    }

    fn decoded(text: &str) -> (Value, Diags) {
        let body = crate::config::resource_body(text);
        let mut ev = Evaluator::new(&crate::eval::EmptyScope, std::path::PathBuf::new());
        let mut diags = Diags::default();
        let v = decode(&body, &schema(), &mut ev, Span::default(), &mut diags);
        (v, diags)
    }

    #[test]
    fn list_of_object_attributes_may_be_written_as_blocks() {
        let (v, diags) = decoded(
            "rules {\n  port = 443\n}\ndynamic \"rules\" {\n  for_each = [80]\n  content {\n    port = rules.value\n    cidr = \"10.0.0.0/8\"\n  }\n}",
        );
        assert!(diags.is_empty(), "{diags:?}");
        let rules = v.entries().expect("object")["rules"].clone();
        let ports: Vec<Option<i64>> = rules
            .elements()
            .expect("a list")
            .iter()
            .map(|r| {
                r.entries()
                    .and_then(|e| e["port"].as_number().and_then(|n| n.to_i64()))
            })
            .collect();
        assert_eq!(ports, vec![Some(443), Some(80)]);
        let first = &rules.elements().expect("list")[0];
        assert!(
            first.entries().expect("object")["cidr"].is_null(),
            "left out: null"
        );
    }

    #[test]
    fn a_read_only_attribute_may_only_be_set_to_null() {
        let (v, diags) = decoded("arn = null");
        assert!(diags.is_empty(), "{diags:?}");
        assert!(v.entries().expect("object")["arn"].is_null());
        let (_, diags) = decoded("arn = \"arn:aws:x\"");
        assert_eq!(diags.0.len(), 1, "{diags:?}");
        assert!(format!("{diags:?}").contains("Read-Only"), "{diags:?}");
    }

    #[test]
    fn nested_attributes_are_arguments_only() {
        let (_, diags) = decoded("ports {\n  port = 1\n}");
        assert_eq!(diags.0.len(), 1, "{diags:?}");
        let (_, diags) = decoded("rules = [{ port = 1, cidr = \"x\" }]\nrules {\n  port = 2\n}");
        assert_eq!(
            diags.0.len(),
            1,
            "an argument and blocks of one name: {diags:?}"
        );
    }
}

/// A `config` block (a `list`'s, an `action`'s) decoded by `schema`,
/// every attribute null where there is no block.
pub fn decode_config(
    body: Option<&Body>,
    schema: &ResourceSchema,
    ev: &mut Evaluator,
    span: Span,
) -> Result<Value, Diags> {
    let empty = Body {
        attrs: Vec::new(),
        blocks: Vec::new(),
        span,
        json: false,
    };
    let mut diags = Diags::default();
    let config = decode(body.unwrap_or(&empty), schema, ev, span, &mut diags);
    diags.into_result(config)
}

/// As [`decode_config`]; the configuration must be wholly known,
/// or it is the error `unknown` says, at `span`.
pub fn decode_known(
    body: Option<&Body>,
    schema: &ResourceSchema,
    ev: &mut Evaluator,
    span: Span,
    unknown: (&'static str, &str),
) -> Result<Value, Diags> {
    let config = decode_config(body, schema, ev, span)?;
    if !config.is_wholly_known() {
        let (code, summary) = unknown;
        let detail = "This configuration must be known before it is used; it uses values known only after an apply.";
        return Err(Diag::new(code, summary, detail).at(span).into());
    }
    Ok(config)
}
