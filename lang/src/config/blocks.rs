//! What every block's decoding says alike: its labels checked, an
//! argument or block it does not take, a provider reference read — in
//! the words Terraform uses for them.

use super::ProviderRef;
use crate::diag::{Diag, Diags, Span};
use crate::eval::did_you_mean;
use crate::syntax::ast::{Expr, ExprKind};
use crate::syntax::{Attribute, Block};

pub(super) fn err(
    code: &'static str,
    summary: &str,
    detail: impl Into<String>,
    span: Span,
) -> Diag {
    Diag::new(code, summary, detail).at(span)
}

pub(super) fn labels(b: &Block, want: &[&str], diags: &mut Diags) -> Option<Vec<String>> {
    if b.labels.len() != want.len() {
        let detail = if want.is_empty() {
            format!("A {:?} block takes no labels.", b.kind)
        } else {
            format!(
                "A {:?} block needs {} label{}: {}.",
                b.kind,
                want.len(),
                if want.len() == 1 { "" } else { "s" },
                want.join(", ")
            )
        };
        let summary = if b.labels.len() < want.len() {
            "Missing name for block"
        } else {
            "Extraneous label for block"
        };
        diags.push(err("strata::config::labels", summary, detail, b.kind_span));
        return None;
    }
    Some(b.labels.iter().map(|(l, _)| l.clone()).collect())
}

pub(super) fn unsupported_attr(a: &Attribute, block: &str, allowed: &[&str]) -> Diag {
    unsupported_attr_named(&a.name, a.name_span, block, allowed)
}

/// [`unsupported_attr`] for an argument known by its name and place.
pub(super) fn unsupported_attr_named(
    name: &str,
    span: Span,
    block: &str,
    allowed: &[&str],
) -> Diag {
    err(
        "strata::config::unsupported_argument",
        "Unsupported argument",
        format!(
            "An argument named {name:?} is not expected in a {block} block.{}",
            did_you_mean(name, allowed)
        ),
        span,
    )
}

pub(super) fn unsupported_block(b: &Block, parent: &str, allowed: &[&str]) -> Diag {
    err(
        "strata::config::unsupported_block",
        "Unsupported block type",
        format!(
            "Blocks of type {:?} are not expected in {parent}.{}",
            b.kind,
            did_you_mean(&b.kind, allowed)
        ),
        b.kind_span,
    )
}

/// `aws`, `aws.east` or (OpenTofu's provider `for_each`) `aws.east[KEY]`.
pub(super) fn provider_ref(e: &Expr, diags: &mut Diags) -> Option<ProviderRef> {
    let (named, key) = match &e.kind {
        ExprKind::Index(inner, key) => (inner.as_ref(), Some(key.as_ref().clone())),
        _ => (e, None),
    };
    let (name, alias) = match &named.kind {
        ExprKind::Variable(n) => (n.clone(), None),
        ExprKind::GetAttr(inner, alias) => match &inner.kind {
            ExprKind::Variable(n) => (n.clone(), Some(alias.clone())),
            _ => return invalid_provider_ref(e, diags),
        },
        _ => return invalid_provider_ref(e, diags),
    };
    if key.is_some() && alias.is_none() {
        diags.push(err(
            "strata::config::provider",
            "Invalid provider configuration reference",
            "Provider assignment requires an alias when specifying an instance key, in the form of provider.name[instance_key]",
            e.span,
        ));
        return None;
    }
    Some(ProviderRef {
        name,
        alias,
        key,
        span: e.span,
    })
}

fn invalid_provider_ref(e: &Expr, diags: &mut Diags) -> Option<ProviderRef> {
    diags.push(err(
        "strata::config::provider",
        "Invalid provider reference",
        "A provider reference is a provider name, optionally with an alias and (for a configuration with for_each) an instance key: aws, aws.west or aws.by_region[each.key].",
        e.span,
    ));
    None
}

/// A provider reference where one configuration must be named, not an
/// instance of one chosen per instance (`import`, `list`, `action`).
pub(super) fn keyless_provider_ref(
    e: &Expr,
    block: &str,
    diags: &mut Diags,
) -> Option<ProviderRef> {
    let p = provider_ref(e, diags)?;
    if let Some(k) = &p.key {
        diags.push(err(
            "strata::config::provider",
            "Invalid provider configuration reference",
            format!("An instance key cannot be given in the provider argument of {block}: it names one provider configuration."),
            k.span,
        ));
        return None;
    }
    Some(p)
}

/// How a block with a `config` block of its provider's (`list`, `action`)
/// is named in Terraform's errors about it.
pub(super) struct Configured {
    pub code: &'static str,
    /// Its kind, for an argument it does not take: `list`.
    pub kind: &'static str,
    /// How a sentence starts with it: "A list block".
    pub noun: &'static str,
    /// Where an unexpected block is: "a list block".
    pub inside: &'static str,
    /// `count` beside `for_each`, in its own words.
    pub both: &'static str,
}

/// Such a block's arguments checked against `allowed`, `count` beside
/// `for_each` refused, and its one `config` block.
pub(super) fn config_body(
    b: &Block,
    allowed: &[&str],
    words: &Configured,
    diags: &mut Diags,
) -> Option<crate::syntax::Body> {
    for a in &b.body.attrs {
        if !allowed.contains(&a.name.as_str()) {
            diags.push(unsupported_attr(a, words.kind, allowed));
        }
    }
    let mut config = None;
    for nb in &b.body.blocks {
        match nb.kind.as_str() {
            "config" if config.is_some() => diags.push(err(
                words.code,
                "Duplicate config block",
                format!(
                    "{} must contain only one nested \"config\" block.",
                    words.noun
                ),
                nb.kind_span,
            )),
            "config" => config = Some(nb.body.clone()),
            _ => diags.push(unsupported_block(nb, words.inside, &["config"])),
        }
    }
    if let (Some(_), Some(f)) = (b.body.attr("count"), b.body.attr("for_each")) {
        diags.push(err(
            words.code,
            "Invalid combination of \"count\" and \"for_each\"",
            words.both,
            f.name_span,
        ));
    }
    config
}
