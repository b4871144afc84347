//! The provider configurations a cloud's call needs, the reach of its
//! cluster's outputs (kubernetes and helm providers), and the outputs the
//! expansion adds to the root module.

use super::syntax::{attribute, get_attr, literal, name_expr, object};
use super::{CloudKind, Expanded};
use crate::config::{self, Provider, ProviderRef};
use crate::diag::Span;
use crate::lang::value::Value;
use crate::syntax::{Attribute, Block, Body, Expr};

/// The provider configurations a cloud's module call uses, aliased by the
/// call's name: the cloud's own from the `cloud` block's arguments, and the
/// kubernetes and helm providers reaching its cluster (through the module's
/// `kubernetes` output when the module creates the cluster, which exists
/// only while the cloud is `active`). Returns them and the call's
/// `providers` map.
pub(super) fn cloud_providers(
    kind: &CloudKind,
    block: &Block,
    call: &str,
    active: bool,
    region: Option<&str>,
) -> (Vec<Provider>, Vec<(ProviderRef, ProviderRef)>) {
    let span = block.kind_span;
    let (ptype, pargs) = kind.provider;
    let mut attrs: Vec<Attribute> = block
        .body
        .attrs
        .iter()
        .filter(|a| pargs.contains(&a.name.as_str()))
        .cloned()
        .collect();
    // One of `regions`: the provider works in that region.
    if let (Some(region), Some(r)) = (region, kind.region.filter(|r| pargs.contains(r))) {
        attrs.retain(|a| a.name != r);
        attrs.push(attribute(r, literal(Value::string(region), span)));
    }
    let own = Body {
        attrs,
        blocks: Vec::new(),
        span,
        json: false,
    };
    let provider = |name: &str, body: Body| Provider {
        name: name.to_string(),
        alias: Some(call.to_string()),
        for_each: None,
        span,
        body,
    };
    let helm = |conn: Body| Body {
        attrs: Vec::new(),
        blocks: vec![Block {
            kind: "kubernetes".into(),
            kind_span: span,
            labels: Vec::new(),
            body: conn,
            span,
        }],
        span,
        json: false,
    };
    let mut providers = vec![provider(ptype, own.clone())];
    let mut mapping = vec![pref(ptype, call, span)];
    let conn = if kind.created {
        active.then(|| reach(call, span))
    } else {
        Some(own)
    };
    if let Some(conn) = conn {
        if kind.created {
            providers.push(provider("kubernetes", conn.clone()));
            mapping.push(pref("kubernetes", call, span));
        }
        providers.push(provider("helm", helm(conn)));
        mapping.push(pref("helm", call, span));
    }
    (providers, mapping)
}

/// `providers = { name = name.alias }` for a module call.
fn pref(name: &str, alias: &str, span: Span) -> (ProviderRef, ProviderRef) {
    (
        ProviderRef {
            name: name.to_string(),
            alias: None,
            key: None,
            span,
        },
        ProviderRef {
            name: name.to_string(),
            alias: Some(alias.to_string()),
            key: None,
            span,
        },
    )
}

/// A kubernetes provider body that reaches a created cluster through the
/// module's `kubernetes` output: host, CA and an exec credential plugin.
fn reach(call: &str, span: Span) -> Body {
    let out = || get_attr(get_attr(name_expr("module", span), call), "kubernetes");
    let exec = || get_attr(out(), "exec");
    Body {
        attrs: vec![
            attribute("host", get_attr(out(), "host")),
            attribute(
                "cluster_ca_certificate",
                get_attr(out(), "cluster_ca_certificate"),
            ),
        ],
        blocks: vec![Block {
            kind: "exec".into(),
            kind_span: span,
            labels: Vec::new(),
            body: Body {
                attrs: vec![
                    attribute("api_version", get_attr(exec(), "api_version")),
                    attribute("command", get_attr(exec(), "command")),
                    attribute("args", get_attr(exec(), "args")),
                ],
                blocks: Vec::new(),
                span,
                json: false,
            },
            span,
        }],
        span,
        json: false,
    }
}

/// The MultiKueue manager's kubeconfig (`train_manager_kubeconfig`,
/// sensitive), where jobs are submitted.
fn manager_output(root: &mut config::Module, c: &Expanded) {
    let Some(d) = &c.dispatch else { return };
    let name = format!("{}_manager_kubeconfig", c.name);
    // An existing cluster's module has no kubeconfig: you have yours.
    let has = root
        .module_calls
        .iter()
        .find(|m| m.name == d.manager)
        .is_some_and(|m| m.module.outputs.iter().any(|o| o.name == "kubeconfig"));
    if !has || root.outputs.iter().any(|o| o.name == name) {
        return;
    }
    root.outputs.push(config::Output {
        name,
        expr: get_attr(
            get_attr(name_expr("module", c.span), &d.manager),
            "kubeconfig",
        ),
        span: c.span,
        decl: c.span,
        description: Some(format!(
            "kubeconfig of cluster {:?}'s MultiKueue manager, where jobs are submitted",
            c.name
        )),
        sensitive: true,
        ephemeral: false,
        depends_on: Vec::new(),
        preconditions: Vec::new(),
        deprecated: None,
    });
}

/// Root outputs gathering each cloud module's `cluster_endpoint`,
/// `node_identity` and `kubeconfig` by cloud (`train_endpoints = { aws =
/// …, aws_us_west_2 = …, gcp = … }`): a configuration cannot name modules that exist only for
/// some values of `clouds`, so the expansion does. An output the user
/// declares under the same name wins.
pub(super) fn outputs(root: &mut config::Module, c: &Expanded) {
    manager_output(root, c);
    for (suffix, from, sensitive) in [
        ("endpoints", "cluster_endpoint", false),
        ("node_identities", "node_identity", false),
        ("kubeconfigs", "kubeconfig", true),
    ] {
        let name = format!("{}_{suffix}", c.name);
        if root.outputs.iter().any(|o| o.name == name) {
            continue;
        }
        let items: Vec<(String, Expr)> = c
            .clouds
            .iter()
            .filter(|cc| {
                root.module_calls
                    .iter()
                    .find(|m| m.name == cc.call)
                    .is_some_and(|m| m.module.outputs.iter().any(|o| o.name == from))
            })
            .map(|cc| {
                let e = get_attr(get_attr(name_expr("module", cc.span), &cc.call), from);
                // `aws`, and `aws_us_west_2` for a cloud's further region.
                let key = cc.call.strip_prefix(&format!("{}_", c.name));
                (key.unwrap_or(&cc.cloud).to_string(), e)
            })
            .collect();
        if items.is_empty() {
            continue;
        }
        root.outputs.push(config::Output {
            name,
            expr: object(items, c.span),
            span: c.span,
            decl: c.span,
            description: Some(format!("{from} of cluster {:?}, by cloud", c.name)),
            sensitive,
            ephemeral: false,
            depends_on: Vec::new(),
            preconditions: Vec::new(),
            deprecated: None,
        });
    }
}
