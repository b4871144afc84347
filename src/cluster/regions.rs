//! The regions a cloud block asks for: its `regions` (Azure's
//! `locations`) in order, each a cluster of its own past the first, or
//! its one `region`.

use super::cloud::Region;
use super::clouds::CloudKind;
use super::rules::known;
use super::{diag, string_list, valid_cluster_name};
use crate::config::ConfigScope;
use crate::diag::{Diags, Span};
use crate::syntax::Block;

/// The regions a cloud block asks for: its `regions` (or Azure's
/// `locations`) in order, else its one `region`.
pub(super) fn regions(
    kind: &CloudKind,
    block: &Block,
    cluster: &str,
    scope: &ConfigScope,
    diags: &mut Diags,
) -> Vec<Region> {
    let call = format!("{cluster}_{}", kind.name);
    let one = kind.region.and_then(|r| block.body.attr(r));
    let Some(list) = kind.regions.and_then(|r| block.body.attr(r)) else {
        let at = one
            .and_then(|a| Some((known(scope, a, diags)?, a.expr.span)))
            .and_then(|(v, span)| Some(((kind.region_form)(v.as_str()?), span)));
        return vec![Region {
            call,
            name: cluster.to_string(),
            at,
            listed: false,
            primary: true,
        }];
    };
    let (one_name, many) = (kind.region.unwrap_or_default(), &list.name);
    if let Some(a) = one {
        diags.push(diag(
            &format!("Both {one_name} and {many}"),
            format!("cloud {:?} says {one_name} and {many}: {many} lists every region this cloud may run the cluster in, the first its primary, so {one_name} goes.", kind.name),
            a.span,
        ));
    }
    let names = known(scope, list, diags)
        .and_then(|v| string_list(&v))
        .map(|n| n.iter().map(|r| (kind.region_form)(r)).collect::<Vec<_>>());
    let span = list.expr.span;
    let Some(names) = names.filter(|n| !n.is_empty()) else {
        diags.push(diag(
            &format!("Invalid {many}"),
            format!("{many} is a list of at least one region, such as [\"us-east-1\", \"us-west-2\"]: the first is the primary, the rest are tried in order when it has no capacity."),
            span,
        ));
        return Vec::new();
    };
    listed(names, (cluster, &call), (many, span), diags)
}

/// The regions `regions` lists, each a cluster of its own: named after
/// the cluster past the first, each a well-formed region named once.
fn listed(
    names: Vec<String>,
    (cluster, call): (&str, &str),
    (many, span): (&str, Span),
    diags: &mut Diags,
) -> Vec<Region> {
    let mut out: Vec<Region> = Vec::new();
    for (i, region) in names.into_iter().enumerate() {
        let name = match i {
            0 => cluster.to_string(),
            _ => format!("{cluster}-{region}"),
        };
        let slug = region.replace('-', "_");
        let well_formed = !region.is_empty()
            && region
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !well_formed
            || out
                .iter()
                .any(|r| r.at.as_ref().is_some_and(|(x, _)| *x == region))
        {
            diags.push(diag(
                &format!("Invalid {many}"),
                format!("{region:?} is not a region to add: regions are lowercase letters, digits and hyphens, each listed once."),
                span,
            ));
            continue;
        }
        if !valid_cluster_name(&name) {
            diags.push(diag(
                "Cluster name too long for a second region",
                format!("The cluster in {region} is named {name:?} (the cluster's name, then its region, since some of what the module makes is named across regions), which is not a cluster name on every cloud: at most 40 lowercase letters, digits and hyphens. Shorten the cluster's name."),
                span,
            ));
            continue;
        }
        out.push(Region {
            call: match i {
                0 => call.to_string(),
                _ => format!("{call}_{slug}"),
            },
            name,
            at: Some((region, span)),
            listed: true,
            primary: i == 0,
        });
    }
    out
}
