//! `action` blocks and a managed resource's `lifecycle { action_trigger }`
//! (Terraform 1.14): something a provider does that leaves no object,
//! invoked from the command line (`-invoke`) or around a resource's change,
//! with Terraform's errors for what it refuses as it reads them.

use super::blocks::{
    config_body, err, keyless_provider_ref, unsupported_attr, unsupported_block, Configured,
};
use super::ProviderRef;
use crate::diag::{Diags, Span};
use crate::syntax::ast::{Expr, ExprKind};
use crate::syntax::{Block, Body};

/// `action "TYPE" "NAME" { provider = …  config { … } }`.
#[derive(Debug, Clone)]
pub struct Action {
    pub type_name: String,
    pub name: String,
    pub provider: Option<ProviderRef>,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    pub config: Option<Body>,
    pub span: Span,
}

/// When around its resource's change an action trigger fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionEvent {
    BeforeCreate,
    AfterCreate,
    BeforeUpdate,
    AfterUpdate,
    BeforeDestroy,
    AfterDestroy,
}

/// What a failed triggered action does to the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnFailure {
    #[default]
    Halt,
    Taint,
    Continue,
}

/// `lifecycle { action_trigger { events, condition, actions, on_failure } }`.
#[derive(Debug, Clone)]
pub struct ActionTrigger {
    pub events: Vec<ActionEvent>,
    pub condition: Option<Expr>,
    /// References to `action.TYPE.NAME` (with a key where repeated).
    pub actions: Vec<Expr>,
    pub on_failure: OnFailure,
    pub span: Span,
}

pub(super) fn action(b: &Block, type_name: &str, name: &str, diags: &mut Diags) -> Action {
    const ALLOWED: [&str; 3] = ["count", "for_each", "provider"];
    let words = Configured {
        code: "strata::config::action",
        kind: "action",
        noun: "An action",
        inside: "an action block",
        both: "The \"count\" and \"for_each\" meta-arguments are mutually-exclusive, only one should be used.",
    };
    let config = config_body(b, &ALLOWED, &words, diags);
    let attr = |n: &str| b.body.attr(n).map(|a| a.expr.clone());
    Action {
        type_name: type_name.to_string(),
        name: name.to_string(),
        provider: b
            .body
            .attr("provider")
            .and_then(|a| keyless_provider_ref(&a.expr, "an action block", diags)),
        count: attr("count"),
        for_each: attr("for_each"),
        config,
        span: b.span,
    }
}

pub(super) fn trigger(b: &Block, diags: &mut Diags) -> Option<ActionTrigger> {
    const ALLOWED: [&str; 4] = ["events", "condition", "actions", "on_failure"];
    for a in &b.body.attrs {
        if !ALLOWED.contains(&a.name.as_str()) {
            diags.push(unsupported_attr(a, "action_trigger", &ALLOWED));
        }
    }
    for nb in &b.body.blocks {
        diags.push(unsupported_block(nb, "an action_trigger block", &[]));
    }
    let events = b
        .body
        .attr("events")
        .map(|a| events(&a.expr, diags))
        .unwrap_or_default();
    let actions = match b.body.attr("actions").map(|a| &a.expr.kind) {
        Some(ExprKind::Tuple(items)) => items.clone(),
        Some(_) => {
            diags.push(err(
                "strata::config::action",
                "Invalid expression",
                "A static list expression is required.",
                b.body.attr("actions").map_or(b.kind_span, |a| a.expr.span),
            ));
            Vec::new()
        }
        None => Vec::new(),
    };
    let on_failure = match b
        .body
        .attr("on_failure")
        .map(|a| (keyword(&a.expr), a.expr.span))
    {
        None => OnFailure::Halt,
        Some((Some("halt"), _)) => OnFailure::Halt,
        Some((Some("taint"), _)) => OnFailure::Taint,
        Some((Some("continue"), _)) => OnFailure::Continue,
        Some((_, span)) => {
            diags.push(err("strata::config::action", "Invalid \"on_failure\" keyword", "The \"on_failure\" argument requires one of the following keywords: halt, taint or continue.", span));
            OnFailure::Halt
        }
    };
    if actions.is_empty() {
        diags.push(err(
            "strata::config::action",
            "No actions specified",
            "At least one action must be specified for an action_trigger.",
            b.kind_span,
        ));
    }
    if events.is_empty() {
        diags.push(err(
            "strata::config::action",
            "No events specified",
            "At least one event must be specified for an action_trigger.",
            b.kind_span,
        ));
    }
    Some(ActionTrigger {
        events,
        condition: b.body.attr("condition").map(|a| a.expr.clone()),
        actions,
        on_failure,
        span: b.span,
    })
}

/// A bare word, as `events` and `on_failure` take them.
fn keyword(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Variable(n) => Some(n),
        _ => None,
    }
}

fn events(e: &Expr, diags: &mut Diags) -> Vec<ActionEvent> {
    let ExprKind::Tuple(items) = &e.kind else {
        diags.push(err(
            "strata::config::action",
            "Invalid expression",
            "A static list expression is required.",
            e.span,
        ));
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items {
        let word = keyword(item).unwrap_or_default();
        let event = match word {
            "before_create" => ActionEvent::BeforeCreate,
            "after_create" => ActionEvent::AfterCreate,
            "before_update" => ActionEvent::BeforeUpdate,
            "after_update" => ActionEvent::AfterUpdate,
            "before_destroy" => ActionEvent::BeforeDestroy,
            "after_destroy" => ActionEvent::AfterDestroy,
            _ => {
                diags.push(err("strata::config::action", &format!("Invalid \"event\" value {word}"), "The \"event\" argument supports the following values: before_create, after_create, before_update, after_update, before_destroy, after_destroy.", item.span));
                continue;
            }
        };
        if out.contains(&event) {
            diags.push(err(
                "strata::config::action",
                &format!("Duplicate {word:?} event"),
                "The event is already defined in this action_trigger block.",
                item.span,
            ));
            continue;
        }
        out.push(event);
    }
    out
}

/// `action.TYPE.NAME` as an `action_trigger`'s `actions` names it, with
/// its key expression where one is given (`action.x.y[each.key]`).
pub fn reference(e: &Expr) -> Option<(&str, &str, Option<&Expr>)> {
    let (base, key) = match &e.kind {
        ExprKind::Index(base, key) => (&**base, Some(&**key)),
        _ => (e, None),
    };
    let ExprKind::GetAttr(inner, name) = &base.kind else {
        return None;
    };
    let ExprKind::GetAttr(root, type_name) = &inner.kind else {
        return None;
    };
    match &root.kind {
        ExprKind::Variable(v) if v == "action" => Some((type_name, name, key)),
        _ => None,
    }
}

/// Every action a resource's `action_trigger` names must be an `action`
/// block of its module, as Terraform's graph requires.
pub(super) fn check_triggers(module: &super::Module, diags: &mut Diags) {
    let triggers = module
        .resources
        .iter()
        .flat_map(|r| &r.lifecycle.action_triggers);
    for e in triggers.flat_map(|t| &t.actions) {
        let Some((type_name, name, _)) = reference(e) else {
            diags.push(err(
                "strata::config::action",
                "Invalid action argument",
                "The actions list may only contain references to actions declared in this module: action.TYPE.NAME.",
                e.span,
            ));
            continue;
        };
        let declared = module
            .actions
            .iter()
            .any(|a| a.type_name == type_name && a.name == name);
        if !declared {
            let detail = format!("The lifecycle action_trigger actions list contains a reference to the action \"action.{type_name}.{name}\" that does not exist in the configuration of this module.");
            diags.push(err(
                "strata::config::action",
                "action_trigger actions references non-existent action",
                &detail,
                e.span,
            ));
        }
    }
}
