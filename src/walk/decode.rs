//! A resource block's body as the object its schema describes: arguments
//! converted to their attribute types, nested blocks (including `dynamic`
//! ones) as objects, lists or sets, everything unset null. The errors are
//! Terraform's.

use crate::diag::{Diag, Diags, Span};
use crate::eval::{iteration_pairs, Evaluator};
use crate::lang::convert::convert;
use crate::lang::value::{Attrs, Value};
use crate::syntax::{Block, Body};
use std::collections::BTreeMap;
use strata_provider::{BlockNesting, ResourceSchema};

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
        let is_block = |name: &str| schema.blocks.contains_key(name);
        reinterpreted = crate::syntax::json::blocks_by_schema(body, &is_block, diags);
        &reinterpreted
    } else {
        body
    };
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
        if s.computed && !s.optional && !s.required {
            diags.push(err(
                "strata::config::read_only",
                "Invalid Configuration for Read-Only Attribute",
                format!("Cannot set value for this attribute as the provider has marked it as read-only. Remove the configuration line setting the value ({:?}).", a.name),
                a.span,
            ));
            continue;
        }
        match ev.eval(&a.expr) {
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
    // Blocks of each type, in source order, `dynamic` ones expanded.
    let mut found: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for b in &body.blocks {
        let (kind, kind_span) = match (b.kind.as_str(), b.labels.first()) {
            ("dynamic", Some((label, span))) => (label.as_str(), *span),
            _ => (b.kind.as_str(), b.kind_span),
        };
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
        let items = found.entry(kind).or_default();
        if b.kind == "dynamic" {
            dynamic(b, kind, &bs.schema, ev, items, diags);
        } else {
            items.push(decode(&b.body, &bs.schema, ev, b.span, diags));
        }
    }
    for (name, bs) in &schema.blocks {
        let items = found.remove(name.as_str()).unwrap_or_default();
        let n = items.len();
        if n < bs.min_items {
            diags.push(err(
                "strata::config::block_count",
                &format!("Insufficient {name} blocks"),
                format!("At least {} \"{name}\" blocks are required.", bs.min_items),
                span,
            ));
        }
        if bs.max_items.is_some_and(|m| n > m) {
            diags.push(err(
                "strata::config::block_count",
                &format!("Too many {name} blocks"),
                format!(
                    "No more than {} \"{name}\" blocks are allowed.",
                    bs.max_items.unwrap_or(0)
                ),
                span,
            ));
        }
        let ty = bs.schema.object_type();
        let v = match bs.nesting {
            BlockNesting::Single => items.into_iter().next().unwrap_or(Value::Null(ty)),
            BlockNesting::List => Value::List(ty, items),
            BlockNesting::Set => Value::new_set(ty, items),
        };
        out.insert(name.clone(), v);
    }
    Value::Object(out)
}

/// `dynamic "kind" { for_each = …; iterator = it; content { … } }`: one
/// block per element, with `it.key` and `it.value` in scope.
fn dynamic(
    b: &Block,
    kind: &str,
    schema: &ResourceSchema,
    ev: &mut Evaluator,
    items: &mut Vec<Value>,
    diags: &mut Diags,
) {
    let Some(for_each) = b.body.attr("for_each") else {
        diags.push(err(
            "strata::config::dynamic",
            "Missing required argument",
            "The argument \"for_each\" is required, but no definition was found.",
            b.span,
        ));
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
        // How many blocks there will be is only known after apply.
        items.push(Value::Unknown(schema.object_type()));
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
        items.push(decode(&content.body, schema, ev, content.span, diags));
        ev.unbind();
    }
}
