//! Decoding file bodies into the typed [`Module`](super::Module).

pub(super) use super::blocks::{
    err, keyless_provider_ref, labels, provider_ref, unsupported_attr, unsupported_block,
};
use super::typeexpr::Constraint;
use super::*;
use crate::eval::{did_you_mean, EmptyScope, Evaluator};
use crate::lang::value::Value;
use crate::syntax::ast::ObjectKey;
use crate::syntax::{Attribute, Block, ExprKind};
use std::collections::BTreeMap;

const TOP_LEVEL: &[&str] = &[
    "terraform",
    "strata",
    "variable",
    "locals",
    "resource",
    "data",
    "ephemeral",
    "output",
    "module",
    "provider",
    "moved",
    "import",
    "check",
    "removed",
    "cluster",
    "action",
];

/// Evaluates an expression that must be constant (no references).
/// Whether `e` refers to anything (a module's `source` or `version` then
/// waits for what it refers to, Terraform 1.15).
fn refers(e: &Expr) -> bool {
    let mut found = false;
    e.visit_references(&mut |_, _, _| found = true);
    found
}

fn constant(e: &Expr) -> Result<Value, Diag> {
    Evaluator::new(&EmptyScope, PathBuf::new()).eval(e)
}

pub(super) fn const_string(a: &Attribute, diags: &mut Diags) -> Option<String> {
    match constant(&a.expr) {
        Ok(v) => match v.as_str() {
            Some(s) => Some(s.to_string()),
            None => {
                diags.push(err(
                    "strata::config::type",
                    "Incorrect attribute value type",
                    format!(
                        "Inappropriate value for attribute {:?}: string required.",
                        a.name
                    ),
                    a.expr.span,
                ));
                None
            }
        },
        Err(d) => {
            diags.push(d);
            None
        }
    }
}

pub(super) fn const_bool(a: &Attribute, diags: &mut Diags) -> bool {
    match constant(&a.expr)
        .map(|v| crate::lang::convert::convert(&v, &crate::lang::types::Type::Bool))
    {
        Ok(Ok(Value::Bool(b))) => b,
        Ok(_) => {
            diags.push(err(
                "strata::config::type",
                "Incorrect attribute value type",
                format!(
                    "Inappropriate value for attribute {:?}: bool required.",
                    a.name
                ),
                a.expr.span,
            ));
            false
        }
        Err(d) => {
            diags.push(d);
            false
        }
    }
}

pub(super) fn expr_list(a: &Attribute, diags: &mut Diags) -> Vec<Expr> {
    match &a.expr.kind {
        ExprKind::Tuple(items) => items.clone(),
        _ => {
            diags.push(err(
                "strata::config::type",
                "Invalid expression",
                format!("The {:?} argument must be a list of references.", a.name),
                a.expr.span,
            ));
            Vec::new()
        }
    }
}

/// Decodes a file body into `m`. Takes the body by value: resource bodies,
/// the bulk of a large configuration, move into the model without copying.
pub(super) fn module_body(body: Body, m: &mut Module, diags: &mut Diags) {
    for a in &body.attrs {
        diags.push(err(
            "strata::config::unexpected_attribute",
            "Unsupported argument",
            format!(
                "An argument named {:?} is not expected here; top-level arguments go inside a block such as locals.",
                a.name
            ),
            a.name_span,
        ));
    }
    for b in body.blocks {
        let kind = b.kind.clone();
        let mode = match kind.as_str() {
            "resource" => Some(Mode::Managed),
            "data" => Some(Mode::Data),
            "ephemeral" => Some(Mode::Ephemeral),
            _ => None,
        };
        if let Some(mode) = mode {
            if let Some(l) = labels(&b, &["type", "name"], diags) {
                m.resources.push(resource(b, mode, &l[0], &l[1], diags));
            }
            continue;
        }
        let b = &b;
        match kind.as_str() {
            "terraform" | "strata" => settings(b, m, diags),
            "variable" => {
                if let Some(l) = labels(b, &["name"], diags) {
                    if let Some(v) = variable(b, l[0].clone(), diags) {
                        m.variables.push(v);
                    }
                }
            }
            "locals" => locals(b, m, diags),
            "output" => {
                if let Some(l) = labels(b, &["name"], diags) {
                    if let Some(o) = output(b, l[0].clone(), diags) {
                        m.outputs.push(o);
                    }
                }
            }
            "module" => {
                if let Some(l) = labels(b, &["name"], diags) {
                    if let Some(c) = module_call(b, l[0].clone(), diags) {
                        m.module_calls.push(c);
                    }
                }
            }
            "provider" => {
                if let Some(l) = labels(b, &["name"], diags) {
                    m.providers.push(provider(b, l[0].clone(), diags));
                }
            }
            "action" => {
                if let Some(l) = labels(b, &["type", "name"], diags) {
                    m.actions
                        .push(super::action::action(b, &l[0], &l[1], diags));
                }
            }
            "moved" => m.moved.extend(moved(b, diags)),
            "import" => m.imports.extend(import(b, diags)),
            "removed" => m.removed.extend(removed(b, diags)),
            "cluster" => m.clusters.push(b.clone()),
            "check" => {
                if let Some(c) = check_block(b.clone(), m, diags) {
                    m.checks.push(c);
                }
            }
            _ => diags.push(unsupported_block(b, "a configuration file", TOP_LEVEL)),
        }
    }
}

/// A `locals` block's values.
fn locals(b: &Block, m: &mut Module, diags: &mut Diags) {
    let _ = labels(b, &[], diags);
    for a in &b.body.attrs {
        m.locals.push(Local {
            name: a.name.clone(),
            expr: a.expr.clone(),
            span: a.span,
        });
    }
    for nb in &b.body.blocks {
        diags.push(unsupported_block(nb, "locals", &[]));
    }
}

/// A `provider` block: its `alias` apart, the rest its configuration.
pub(super) fn provider(b: &Block, name: String, diags: &mut Diags) -> Provider {
    let alias = b.body.attr("alias").and_then(|a| const_string(a, diags));
    let for_each = b.body.attr("for_each").map(|a| a.expr.clone());
    if let (None, Some(e)) = (&alias, &for_each) {
        diags.push(err(
            "strata::config::provider",
            "Alias required when using \"for_each\"",
            "The for_each argument is allowed only for provider configurations with an alias.",
            e.span,
        ));
    }
    let mut body = b.body.clone();
    body.attrs
        .retain(|a| a.name != "alias" && a.name != "for_each");
    Provider {
        name,
        alias,
        for_each,
        span: b.span,
        body,
    }
}

fn moved(b: &Block, diags: &mut Diags) -> Option<Moved> {
    let _ = labels(b, &[], diags);
    match (b.body.attr("from"), b.body.attr("to")) {
        (Some(f), Some(t)) => Some(Moved {
            from: f.expr.clone(),
            to: t.expr.clone(),
            span: b.span,
        }),
        _ => {
            diags.push(err(
                "strata::config::moved",
                "Missing required argument",
                "A moved block needs both \"from\" and \"to\".",
                b.kind_span,
            ));
            None
        }
    }
}

fn import(b: &Block, diags: &mut Diags) -> Option<Import> {
    let _ = labels(b, &[], diags);
    let mut provider = None;
    for a in &b.body.attrs {
        match a.name.as_str() {
            "to" | "id" | "identity" | "for_each" => {}
            "provider" => provider = keyless_provider_ref(&a.expr, "an import block", diags),
            _ => diags.push(unsupported_attr(
                a,
                "import",
                &["to", "id", "identity", "for_each", "provider"],
            )),
        }
    }
    for nb in &b.body.blocks {
        diags.push(unsupported_block(nb, "an import block", &[]));
    }
    let Some(to) = b.body.attr("to") else {
        diags.push(err(
            "strata::config::import",
            "Missing required argument",
            "The argument \"to\" is required, but no definition was found.",
            b.kind_span,
        ));
        return None;
    };
    // Terraform's words for a block with neither or both.
    let by = match (b.body.attr("id"), b.body.attr("identity")) {
        (Some(i), None) => ImportExpr::Id(i.expr.clone()),
        (None, Some(i)) => ImportExpr::Identity(i.expr.clone()),
        (id, _) => {
            let detail = match id {
                None => "At least one of 'id' or 'identity' must be specified.",
                Some(_) => "Only one of 'id' or 'identity' can be specified.",
            };
            diags.push(err(
                "strata::config::import",
                "Invalid import block",
                detail,
                b.kind_span,
            ));
            return None;
        }
    };
    Some(Import {
        to: to.expr.clone(),
        by,
        for_each: b.body.attr("for_each").map(|a| a.expr.clone()),
        provider,
        span: b.span,
    })
}

/// A `removed` block: forgets (or, `lifecycle { destroy = true }`, the
/// default, destroys) a whole resource or module.
fn removed(b: &Block, diags: &mut Diags) -> Option<Removed> {
    let _ = labels(b, &[], diags);
    let destroy = b
        .body
        .blocks
        .iter()
        .filter(|l| l.kind == "lifecycle")
        .filter_map(|l| l.body.attr("destroy"))
        .map(|a| const_bool(a, diags))
        .next_back()
        .unwrap_or(true);
    let Some(f) = b.body.attr("from") else {
        diags.push(err(
            "strata::config::removed",
            "Missing required argument",
            "A removed block needs \"from\".",
            b.kind_span,
        ));
        return None;
    };
    // Terraform forgets a whole resource or module, never one of its
    // instances.
    let (summary, detail) = match instance_key(&f.expr) {
        None => {
            return Some(Removed {
                from: f.expr.clone(),
                destroy,
                span: b.span,
            })
        }
        Some(KeyOf::Module) => ("Module instance keys not allowed", "Module address must be a module (e.g. \"module.foo\"), not a module instance (e.g. \"module.foo[1]\")."),
        _ => ("Resource instance keys not allowed", "Resource address must be a resource (e.g. \"test_instance.foo\"), not a resource instance (e.g. \"test_instance.foo[1]\")."),
    };
    diags.push(err("strata::config::removed", summary, detail, f.expr.span));
    None
}

/// A `check` block: its data sources join the module's, scoped to it.
fn check_block(b: Block, m: &mut Module, diags: &mut Diags) -> Option<Check> {
    let name = labels(&b, &["name"], diags)?.into_iter().next()?;
    let mut check = Check {
        name: name.clone(),
        span: b.span,
        asserts: Vec::new(),
    };
    if let Some(a) = b.body.attrs.first() {
        diags.push(unsupported_attr(a, "check", &[]));
    }
    for nb in b.body.blocks {
        match nb.kind.as_str() {
            "data" => {
                let Some(l) = labels(&nb, &["type", "name"], diags) else {
                    continue;
                };
                let mut r = resource(nb, Mode::Data, &l[0], &l[1], diags);
                r.check = Some(name.clone());
                m.resources.push(r);
            }
            "assert" => {
                let _ = labels(&nb, &[], diags);
                match (nb.body.attr("condition"), nb.body.attr("error_message")) {
                    (Some(c), Some(e)) => {
                        checks_something(&c.expr, "assert", diags);
                        check.asserts.push(Assert {
                            condition: c.expr.clone(),
                            error_message: e.expr.clone(),
                        })
                    }
                    _ => diags.push(err(
                        "strata::config::check",
                        "Missing required argument",
                        "An assert block needs both \"condition\" and \"error_message\".",
                        nb.kind_span,
                    )),
                }
            }
            _ => diags.push(unsupported_block(&nb, "a check block", &["data", "assert"])),
        }
    }
    if check.asserts.is_empty() {
        diags.push(err(
            "strata::config::check",
            "Missing assert block",
            "A check block needs at least one assert block.",
            b.kind_span,
        ));
    }
    Some(check)
}

fn backend(kind: &str, b: &Block, diags: &mut Diags) -> Backend {
    let mut settings = BTreeMap::new();
    for a in &b.body.attrs {
        match constant(&a.expr) {
            Ok(v) => {
                settings.insert(a.name.clone(), (v, a.expr.span));
            }
            Err(_) => diags.push(err(
                "strata::config::backend",
                "Variables not allowed",
                format!("The backend setting {:?} must be a constant: a backend is opened before variables are read. Put secrets in the environment (AWS_* for s3, PG_CONN_STR for pg) instead.", a.name),
                a.expr.span,
            )),
        }
    }
    for nb in &b.body.blocks {
        diags.push(unsupported_block(nb, "a backend block", &[]));
    }
    Backend {
        kind: kind.to_string(),
        span: b.span,
        settings,
    }
}

fn settings(b: &Block, m: &mut Module, diags: &mut Diags) {
    let _ = labels(b, &[], diags);
    m.settings.blocks.push(b.span);
    for a in &b.body.attrs {
        match a.name.as_str() {
            "required_version" => {
                if let Some(c) = const_string(a, diags) {
                    m.settings.required_versions.push((c, a.expr.span));
                }
            }
            "experiments" => {}
            _ => diags.push(unsupported_attr(a, "terraform", &["required_version"])),
        }
    }
    for nb in &b.body.blocks {
        match nb.kind.as_str() {
            "backend" => {
                if let Some(l) = labels(nb, &["type"], diags) {
                    m.settings.backend = Some(backend(&l[0], nb, diags));
                }
            }
            "required_providers" => {
                for a in &nb.body.attrs {
                    m.settings.required_providers.push(a.name.clone());
                    // Made of const variables (Terraform 1.15): evaluated
                    // once they are known, as module sources are.
                    if provider_items(&a.expr).iter().any(|(_, e)| refers(e)) {
                        m.settings.pending_providers.push(a.clone());
                        continue;
                    }
                    let value = constant(&a.expr).ok();
                    let entry =
                        value.and_then(|v| provider_source(&a.name, &v, a.expr.span, diags));
                    m.settings.provider_sources.extend(entry);
                }
            }
            "encryption" if m.settings.encryption.is_none() => {
                m.settings.encryption = Some(super::encryption::block(nb, diags));
            }
            "encryption" => diags.push(err(
                "strata::config::encryption",
                "Duplicate encryption block",
                "Only one encryption block may be given, in one terraform block.",
                nb.kind_span,
            )),
            "cloud" | "provider_meta" => {}
            _ => diags.push(unsupported_block(
                nb,
                "a terraform block",
                &["backend", "required_providers", "encryption"],
            )),
        }
    }
}

/// The items of a `required_providers` entry that name its provider
/// (`source`, `version`, `strata`; `configuration_aliases` refers to
/// provider configurations, not values).
pub(super) fn provider_items(e: &Expr) -> Vec<(&'static str, &Expr)> {
    let ExprKind::Object(items) = &e.kind else {
        return Vec::new();
    };
    let key = |k: &ObjectKey| match k {
        ObjectKey::Name(n) => Some(n.clone()),
        ObjectKey::Expr(e) => constant(e).ok()?.as_str().map(str::to_string),
    };
    items
        .iter()
        .filter_map(|(k, v)| {
            let name = ["source", "version", "strata"]
                .into_iter()
                .find(|n| key(k).as_deref() == Some(*n))?;
            Some((name, v))
        })
        .collect()
}

/// A `required_providers` entry's value as its source: `{ source =
/// "hashicorp/aws", version = "…" }`; a version string alone (the old
/// form) names no source.
pub(super) fn provider_source(
    name: &str,
    value: &Value,
    span: Span,
    diags: &mut Diags,
) -> Option<ProviderSource> {
    let field = |k: &str| {
        let v = value.entries()?.get(k)?;
        v.as_str().map(str::to_string)
    };
    let serve = match field("strata").as_deref() {
        None => None,
        Some("plugin") => Some(Serve::Plugin),
        Some("native") => Some(Serve::Native),
        Some(other) => {
            diags.push(
                Diag::new(
                    "strata::config::serve",
                    "Invalid strata setting",
                    format!("strata = {other:?} in required_providers.{name}: it must be \"plugin\" (the provider's Terraform plugin serves every type) or \"native\" (strata's own driver does)."),
                )
                .at(span),
            );
            None
        }
    };
    // `strata` alone implies the source, as Terraform does.
    let source = field("source").or_else(|| serve.map(|_| format!("hashicorp/{name}")))?;
    Some(ProviderSource {
        name: name.to_string(),
        source,
        version: field("version"),
        serve,
        span,
    })
}

fn variable(b: &Block, name: String, diags: &mut Diags) -> Option<Variable> {
    if !crate::syntax::is_identifier(&name) {
        diags.push(err(
            "strata::config::name",
            "Invalid variable name",
            "A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.",
            b.labels[0].1,
        ));
        return None;
    }
    let mut v = Variable {
        name,
        span: b.span,
        constraint: Constraint::any(),
        typed: false,
        default: None,
        description: None,
        sensitive: false,
        ephemeral: false,
        nullable: true,
        validations: Vec::new(),
        deprecated: None,
        constant: false,
    };
    const ALLOWED: &[&str] = &[
        "type",
        "default",
        "description",
        "sensitive",
        "nullable",
        "ephemeral",
        "deprecated",
        "const",
    ];
    for a in &b.body.attrs {
        match a.name.as_str() {
            "type" => match Constraint::parse(&a.expr) {
                Ok(c) => {
                    v.constraint = c;
                    v.typed = true;
                }
                Err(d) => diags.push(d),
            },
            "default" => v.default = Some(a.expr.clone()),
            "description" => v.description = const_string(a, diags),
            "sensitive" => v.sensitive = const_bool(a, diags),
            "nullable" => v.nullable = const_bool(a, diags),
            "ephemeral" => v.ephemeral = const_bool(a, diags),
            "deprecated" => v.deprecated = const_string(a, diags),
            "const" => v.constant = const_bool(a, diags),
            _ => diags.push(unsupported_attr(a, "variable", ALLOWED)),
        }
    }
    for nb in &b.body.blocks {
        if nb.kind != "validation" {
            diags.push(unsupported_block(nb, "a variable block", &["validation"]));
            continue;
        }
        if let Some(c) = condition(nb, diags) {
            let mut tests_value = false;
            c.condition.visit_references(&mut |root, attrs, _| {
                tests_value |= root == "var" && attrs.first() == Some(&v.name.as_str());
            });
            if !tests_value {
                diags.push(err(
                    "strata::config::validation",
                    "Invalid variable validation condition",
                    format!(
                        "The condition for variable {:?} must refer to var.{} in order to test incoming values.",
                        v.name, v.name
                    ),
                    c.condition.span,
                ));
            }
            v.validations.push(c);
        }
    }
    Some(v)
}

/// As Terraform requires, a condition refers to something (else its
/// result never depends on anything it could check).
fn checks_something(condition: &crate::syntax::Expr, kind: &str, diags: &mut Diags) {
    let mut refers = false;
    condition.visit_references(&mut |_, _, _| refers = true);
    if !refers {
        diags.push(err(
            "strata::config::condition",
            &format!("Invalid {kind} expression"),
            "The condition expression must refer to at least one object from elsewhere in the configuration, or else its result would not be checking anything.",
            condition.span,
        ));
    }
}

/// A `validation`, `precondition` or `postcondition` block.
pub(super) fn condition(b: &Block, diags: &mut Diags) -> Option<Condition> {
    let _ = labels(b, &[], diags);
    for a in &b.body.attrs {
        if a.name != "condition" && a.name != "error_message" {
            diags.push(unsupported_attr(
                a,
                &b.kind,
                &["condition", "error_message"],
            ));
        }
    }
    for nb in &b.body.blocks {
        diags.push(unsupported_block(nb, &format!("a {} block", b.kind), &[]));
    }
    match (b.body.attr("condition"), b.body.attr("error_message")) {
        (Some(c), Some(m)) => {
            checks_something(&c.expr, &b.kind, diags);
            Some(Condition {
                condition: c.expr.clone(),
                error_message: m.expr.clone(),
                span: b.span,
            })
        }
        _ => {
            diags.push(err(
                "strata::config::condition",
                "Missing required argument",
                format!(
                    "A {} block needs both \"condition\" and \"error_message\".",
                    b.kind
                ),
                b.kind_span,
            ));
            None
        }
    }
}

fn resource(b: Block, mode: Mode, type_name: &str, name: &str, diags: &mut Diags) -> Resource {
    let mut r = Resource {
        mode,
        type_name: type_name.to_string(),
        name: name.to_string(),
        span: b.span,
        count: None,
        for_each: None,
        depends_on: Vec::new(),
        provider: None,
        lifecycle: Lifecycle::default(),
        check: None,
        body: Body {
            attrs: Vec::new(),
            blocks: Vec::new(),
            span: b.body.span,
            json: b.body.json,
        },
        provisioners: Vec::new(),
        connection: None,
    };
    for a in b.body.attrs {
        match a.name.as_str() {
            "count" => r.count = Some(a.expr),
            "for_each" => r.for_each = Some(a.expr),
            "depends_on" => r.depends_on = expr_list(&a, diags),
            "provider" => r.provider = provider_ref(&a.expr, diags),
            _ => r.body.attrs.push(a),
        }
    }
    if let (Some(c), Some(_)) = (&r.count, &r.for_each) {
        diags.push(err(
            "strata::config::count_and_for_each",
            "Invalid combination of \"count\" and \"for_each\"",
            "The \"count\" and \"for_each\" meta-arguments are mutually-exclusive, only one should be used to be explicit about the number of resources to be created.",
            c.span,
        ));
    }
    for nb in b.body.blocks {
        match (nb.kind.as_str(), mode) {
            ("lifecycle", _) => lifecycle(&nb, mode, &mut r.lifecycle, diags),
            ("provisioner", Mode::Managed) => {
                r.provisioners.extend(super::provisioner::decode(nb, diags));
            }
            ("connection", Mode::Managed) if r.connection.is_none() => {
                r.connection = Some(nb.body);
            }
            _ => r.body.blocks.push(nb),
        }
    }
    let repeated = r.count.as_ref().or(r.for_each.as_ref());
    enabled_alone(r.lifecycle.enabled.as_ref(), repeated, diags);
    // The resource's connection, when a destroy-time provisioner uses it,
    // is held to that provisioner's rule.
    let destroy_uses = r
        .provisioners
        .iter()
        .any(|p| p.when == super::When::Destroy && p.connection.is_none());
    if let (true, Some(c)) = (destroy_uses, &r.connection) {
        super::provisioner::only_self(c, diags);
    }
    r
}

/// A module call's `providers` map: keys and values are provider
/// references (`kubernetes` or `kubernetes.east`), never evaluated.
pub(super) fn providers_map(e: &Expr, diags: &mut Diags) -> Vec<(ProviderRef, ProviderRef)> {
    let ExprKind::Object(items) = &e.kind else {
        diags.push(err(
            "strata::config::providers",
            "Invalid providers argument",
            "The providers argument is a map from the module's provider names to this module's provider configurations: { kubernetes = kubernetes.east }.",
            e.span,
        ));
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|(k, v)| {
            let key = match k {
                ObjectKey::Name(n) => ProviderRef {
                    name: n.clone(),
                    alias: None,
                    key: None,
                    span: v.span,
                },
                ObjectKey::Expr(k) => provider_ref(k, diags)?,
            };
            Some((key, provider_ref(v, diags)?))
        })
        .collect()
}

fn lifecycle(b: &Block, mode: Mode, l: &mut Lifecycle, diags: &mut Diags) {
    const ALLOWED: &[&str] = &[
        "enabled",
        "create_before_destroy",
        "prevent_destroy",
        "destroy",
        "ignore_changes",
        "replace_triggered_by",
    ];
    for a in &b.body.attrs {
        if a.name == "enabled" {
            l.enabled = Some(a.expr.clone());
            continue;
        }
        // A data source's or an ephemeral resource's lifecycle holds only
        // its conditions.
        if let Some(what) = match mode {
            Mode::Data => Some("data source's lifecycle"),
            Mode::Ephemeral => Some("ephemeral resource's lifecycle"),
            Mode::Managed => None,
        } {
            diags.push(unsupported_attr(a, what, &[]));
            continue;
        }
        match a.name.as_str() {
            "create_before_destroy" => l.create_before_destroy = const_bool(a, diags),
            "prevent_destroy" => l.prevent_destroy = const_bool(a, diags),
            "destroy" => l.skip_destroy = !const_bool(a, diags),
            "ignore_changes" => match &a.expr.kind {
                ExprKind::Variable(n) if n == "all" => l.ignore_all_changes = true,
                _ => l.ignore_changes = expr_list(a, diags),
            },
            "replace_triggered_by" => l.replace_triggered_by = expr_list(a, diags),
            _ => diags.push(unsupported_attr(a, "lifecycle", ALLOWED)),
        }
    }
    for nb in &b.body.blocks {
        let into = match nb.kind.as_str() {
            "precondition" => &mut l.preconditions,
            "postcondition" => &mut l.postconditions,
            "action_trigger" if mode == Mode::Managed => {
                l.action_triggers.extend(super::action::trigger(nb, diags));
                continue;
            }
            _ => {
                diags.push(unsupported_block(
                    nb,
                    "a lifecycle block",
                    &["precondition", "postcondition", "action_trigger"],
                ));
                continue;
            }
        };
        if let Some(c) = condition(nb, diags) {
            into.push(c);
        }
    }
}

fn output(b: &Block, name: String, diags: &mut Diags) -> Option<Output> {
    let mut value = None;
    let mut o_desc = None;
    let mut sensitive = false;
    let mut ephemeral = false;
    let mut depends_on = Vec::new();
    let mut deprecated = None;
    const ALLOWED: &[&str] = &[
        "value",
        "description",
        "sensitive",
        "depends_on",
        "ephemeral",
        "deprecated",
    ];
    for a in &b.body.attrs {
        match a.name.as_str() {
            "value" => value = Some(a.expr.clone()),
            "description" => o_desc = const_string(a, diags),
            "sensitive" => sensitive = const_bool(a, diags),
            "depends_on" => depends_on = expr_list(a, diags),
            "ephemeral" => ephemeral = const_bool(a, diags),
            "deprecated" => deprecated = const_string(a, diags),
            _ => diags.push(unsupported_attr(a, "output", ALLOWED)),
        }
    }
    let mut preconditions = Vec::new();
    for nb in &b.body.blocks {
        if nb.kind != "precondition" {
            diags.push(unsupported_block(nb, "an output block", &["precondition"]));
        } else if let Some(c) = condition(nb, diags) {
            preconditions.push(c);
        }
    }
    let Some(expr) = value else {
        diags.push(err(
            "strata::config::output",
            "Missing required argument",
            "The argument \"value\" is required, but no definition was found.",
            b.kind_span,
        ));
        return None;
    };
    Some(Output {
        name,
        expr,
        span: b.span,
        decl: Span {
            end: b.labels.last().map_or(b.kind_span.end, |(_, at)| at.end),
            ..b.kind_span
        },
        description: o_desc,
        sensitive,
        ephemeral,
        depends_on,
        preconditions,
        deprecated,
    })
}

fn module_call(b: &Block, name: String, diags: &mut Diags) -> Option<ModuleCall> {
    let mut call = ModuleCall {
        name,
        span: b.span,
        source: String::new(),
        source_span: b.kind_span,
        source_expr: None,
        version: None,
        version_expr: None,
        count: None,
        for_each: None,
        depends_on: Vec::new(),
        inputs: Vec::new(),
        providers: Vec::new(),
        module: Box::default(),
        ignore_nested_deprecations: false,
        enabled: None,
    };
    let mut has_source = false;
    for a in &b.body.attrs {
        match a.name.as_str() {
            "source" => {
                has_source = true;
                call.source_span = a.expr.span;
                match refers(&a.expr) {
                    true => call.source_expr = Some(a.expr.clone()),
                    false => call.source = const_string(a, diags).unwrap_or_default(),
                }
            }
            "version" if refers(&a.expr) => call.version_expr = Some(a.expr.clone()),
            "version" => {
                call.version = const_string(a, diags).map(|constraint| super::ModuleVersion {
                    constraint,
                    span: a.expr.span,
                })
            }
            "providers" => call.providers = providers_map(&a.expr, diags),
            "count" => call.count = Some(a.expr.clone()),
            "for_each" => call.for_each = Some(a.expr.clone()),
            "depends_on" => call.depends_on = expr_list(a, diags),
            "ignore_nested_deprecations" => call.ignore_nested_deprecations = const_bool(a, diags),
            _ => call.inputs.push(a.clone()),
        }
    }
    for nb in b.body.blocks.iter().filter(|nb| nb.kind == "lifecycle") {
        call.enabled = module_lifecycle(nb, diags);
    }
    if !has_source {
        diags.push(err(
            "strata::config::module",
            "Missing required argument",
            "The argument \"source\" is required, but no definition was found.",
            b.kind_span,
        ));
        return None;
    }
    let repeated = call.count.as_ref().or(call.for_each.as_ref());
    enabled_alone(call.enabled.as_ref(), repeated, diags);
    Some(call)
}

/// A module call's `lifecycle` block: only `enabled` (OpenTofu 1.11).
fn module_lifecycle(b: &Block, diags: &mut Diags) -> Option<Expr> {
    let mut enabled = None;
    for a in &b.body.attrs {
        match a.name.as_str() {
            "enabled" => enabled = Some(a.expr.clone()),
            _ => diags.push(unsupported_attr(a, "module's lifecycle", &["enabled"])),
        }
    }
    for nb in &b.body.blocks {
        diags.push(unsupported_block(nb, "a module's lifecycle block", &[]));
    }
    enabled
}

/// `enabled` decides one instance's existence: with `count` or
/// `for_each` there are several, so it is refused beside them.
fn enabled_alone(enabled: Option<&Expr>, repeated: Option<&Expr>, diags: &mut Diags) {
    if let (Some(e), Some(_)) = (enabled, repeated) {
        diags.push(err(
            "strata::config::enabled",
            "Invalid combination of \"enabled\" and \"count\" or \"for_each\"",
            "The \"enabled\" meta-argument decides whether a single instance exists; it cannot be used together with \"count\" or \"for_each\", which make several.",
            e.span,
        ));
    }
}

/// Every input must name a variable of the child; required ones must be set.
pub(super) fn check_module_inputs(call: &ModuleCall, child: &Module, diags: &mut Diags) {
    let names: Vec<&str> = child.variables.iter().map(|v| v.name.as_str()).collect();
    for a in &call.inputs {
        if child.variable(&a.name).is_none() {
            diags.push(err(
                "strata::config::unsupported_argument",
                "Unsupported argument",
                format!(
                    "An argument named {:?} is not expected here: module {:?} has no variable of that name.{}",
                    a.name,
                    call.name,
                    did_you_mean(&a.name, &names)
                ),
                a.name_span,
            ));
        }
    }
    for v in &child.variables {
        if v.default.is_none() && !call.inputs.iter().any(|a| a.name == v.name) {
            diags.push(err(
                "strata::config::missing_argument",
                "Missing required argument",
                format!(
                    "The argument {:?} is required by module {:?}, but no definition was found.",
                    v.name, call.name
                ),
                call.source_span,
            ));
        }
    }
}

/// What Terraform refuses of a module's import blocks as it reads them:
/// two blocks for one object, and `provider` on a block whose target the
/// module configures (it is for the configuration a plan writes) unless
/// the target names the same provider configuration — as the blocks
/// `query -generate-config-out` writes do.
fn check_imports(m: &Module, diags: &mut Diags) {
    let mut seen: std::collections::HashMap<String, Span> = Default::default();
    for im in &m.imports {
        if let Some(p) = &im.provider {
            let same = |t: &Option<ProviderRef>| {
                t.as_ref()
                    .is_some_and(|t| (&t.name, &t.alias) == (&p.name, &p.alias))
            };
            if m.resources
                .iter()
                .any(|r| im.names(r) && !same(&r.provider))
            {
                diags.push(err(
                    "strata::config::import",
                    "Invalid import provider argument",
                    "The provider argument can only be specified in import blocks that will generate configuration.\n\nUse the provider argument in the target resource block to configure the provider for a resource with explicit provider configuration.",
                    p.span,
                ));
            }
        }
        let Some(to) = im
            .for_each
            .is_none()
            .then(|| im.to.address_text())
            .flatten()
        else {
            continue;
        };
        match seen.get(&to) {
            Some(first) => diags.push(
                err(
                    "strata::config::import",
                    &format!("Duplicate import configuration for {to:?}"),
                    format!("An import block for the resource {to:?} was already declared. A resource can have only one import block."),
                    im.span,
                )
                .also("the first import block for it", *first),
            ),
            None => {
                seen.insert(to, im.span);
            }
        }
    }
}

pub(super) fn check_duplicates(m: &Module, diags: &mut Diags) {
    check_imports(m, diags);
    fn dup(items: impl Iterator<Item = (String, Span)>, what: &str, diags: &mut Diags) {
        let mut seen: std::collections::HashSet<String> = Default::default();
        for (name, span) in items {
            if seen.contains(&name) {
                diags.push(err(
                    "strata::config::duplicate",
                    &format!("Duplicate {what}"),
                    format!("A {what} named {name:?} was already declared. Names must be unique within a module."),
                    span,
                ));
            } else {
                seen.insert(name);
            }
        }
    }
    dup(
        m.variables.iter().map(|v| (v.name.clone(), v.span)),
        "variable declaration",
        diags,
    );
    dup(
        m.locals.iter().map(|l| (l.name.clone(), l.span)),
        "local value definition",
        diags,
    );
    dup(
        m.outputs.iter().map(|o| (o.name.clone(), o.span)),
        "output definition",
        diags,
    );
    dup(
        m.module_calls.iter().map(|c| (c.name.clone(), c.span)),
        "module call",
        diags,
    );
    dup(
        m.resources.iter().map(|r| (r.address(), r.span)),
        "resource",
        diags,
    );
}

/// What an instance key in an address is on.
enum KeyOf {
    Module,
    Resource,
}

/// The first instance key an address written as a reference holds
/// (`module.m[0]`, `t.n[1]`), if any.
fn instance_key(e: &crate::syntax::ast::Expr) -> Option<KeyOf> {
    match &e.kind {
        ExprKind::Index(inner, _) => Some(instance_key(inner).unwrap_or(
            match &inner.kind {
                ExprKind::GetAttr(root, _)
                    if matches!(&root.kind, ExprKind::Variable(v) if v == "module") =>
                {
                    KeyOf::Module
                }
                _ => KeyOf::Resource,
            },
        )),
        ExprKind::GetAttr(inner, _) => instance_key(inner),
        _ => None,
    }
}
