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
/// block of its module, as Terraform's graph requires; and a trigger's
/// `condition` is held to Terraform 1.16's rules for it.
pub(super) fn check_triggers(module: &super::Module, diags: &mut Diags) {
    for r in &module.resources {
        for t in &r.lifecycle.action_triggers {
            check_condition(r, t, diags);
        }
    }
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

const CODE: &str = "strata::config::action";

/// Terraform's (1.16) rules for a trigger's `condition`: none on a destroy
/// event (the object is going), no `self` before a create (its computed
/// attributes are not known), and never the resource by its own address.
fn check_condition(r: &super::Resource, t: &ActionTrigger, diags: &mut Diags) {
    let Some(cond) = &t.condition else { return };
    let mut uses_self = false;
    cond.visit_references(&mut |root, _, _| uses_self |= root == "self");
    for event in &t.events {
        if *event == ActionEvent::BeforeCreate && uses_self {
            diags.push(err(
                CODE,
                "Reference to self in before_create condition",
                "Computed attributes from self may not be known before the resource is created.",
                cond.span,
            ));
            break;
        }
        if matches!(
            event,
            ActionEvent::BeforeDestroy | ActionEvent::AfterDestroy
        ) {
            diags.push(err(
                CODE,
                "Condition on destroy action",
                "Condition expression may not be used with a destroy action.",
                cond.span,
            ));
        }
    }
    cond.visit_references(&mut |root, attrs, span| {
        if is_resource(r, root, attrs) {
            diags.push(err(
                CODE,
                "Self-referential block",
                format!("Configuration for {} may not refer to itself.", r.address()),
                span,
            ));
        }
    });
}

/// Whether a reference `root.attrs…` is to managed resource `r`.
fn is_resource(r: &super::Resource, root: &str, attrs: &[&str]) -> bool {
    r.mode == super::Mode::Managed && root == r.type_name && attrs.first() == Some(&r.name.as_str())
}

/// Terraform's warning (1.16) for an action a resource triggers whose
/// configuration refers to that resource's instances by address: `caller`
/// is the triggering object, and the address makes a hidden cycle in the
/// graph. In `root` and every module it calls.
pub fn warnings(root: &super::Module) -> Vec<crate::diag::Diag> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in &root.resources {
        let named = r
            .lifecycle
            .action_triggers
            .iter()
            .flat_map(|t| &t.actions)
            .filter_map(reference);
        for (type_name, name, _) in named {
            let Some(a) = root
                .actions
                .iter()
                .find(|a| a.type_name == type_name && a.name == name)
            else {
                continue;
            };
            for span in references_to_instances(a, r) {
                if seen.insert(span) {
                    out.push(
                        crate::diag::Diag::new(
                            CODE,
                            "Reference to triggering resource",
                            "The triggering resource object can be accessed via the \"caller\" symbol to avoid unexpected graph cycles.",
                        )
                        .at(span)
                        .warning(),
                    );
                }
            }
        }
    }
    for call in &root.module_calls {
        out.extend(warnings(&call.module));
    }
    out
}

/// Where action `a`'s arguments refer to an instance of `r` (an attribute
/// of it or an indexed instance; the resource as a whole is not one).
fn references_to_instances(a: &Action, r: &super::Resource) -> Vec<Span> {
    let mut exprs: Vec<&Expr> = a.count.iter().chain(&a.for_each).collect();
    exprs.extend(a.config.iter().flat_map(|b| b.expressions()));
    let mut out = Vec::new();
    for e in exprs {
        e.visit_traversals(&mut |t| {
            let whole = matches!(&t.kind, ExprKind::GetAttr(inner, _) if matches!(inner.kind, ExprKind::Variable(_)));
            t.visit_references(&mut |root, attrs, span| {
                if !whole && is_resource(r, root, attrs) {
                    out.push(span);
                }
            });
        });
    }
    out
}
