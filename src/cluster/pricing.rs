//! The spec priced: each pool's instance type from its cloud's catalog,
//! the price cap judged, and the prices the plan's cost table shows.

use super::rules::known;
use super::{diag, Catalogs, CloudKind, CAP};
use crate::config::ConfigScope;
use crate::diag::{Diags, Span};
use crate::lang::value::Value;
use crate::syntax::{Attribute, Block};
use strata_provider::billing::Capacity;
use strata_provider::catalog::{quote, within_cap, PriceList};
use strata_provider::money::Usd;

/// The catalog's instance type for a pool's GPU shape in the cloud's
/// region, or the error naming where the shape is offered.
pub(super) fn instance_type(
    kind: &CloudKind,
    attrs: &[&Attribute],
    region: Option<(&str, Span)>,
    pool: &Block,
    scope: &ConfigScope,
    catalogs: &Catalogs<'_>,
    diags: &mut Diags,
) -> Option<String> {
    let cat = catalogs.of(kind)?;
    let (region, region_span) = region?;
    let field = |n: &str| attrs.iter().find(|a| a.name == n).copied();
    let Some(gpu_attr) = field("gpu") else {
        diags.push(diag(
            "Missing gpu",
            "A node pool names its GPU model: gpu = \"H100\".",
            pool.kind_span,
        ));
        return None;
    };
    let gpu = known(scope, gpu_attr, diags)?;
    let count = match field("gpus_per_node") {
        Some(a) => known(scope, a, diags)?
            .as_number()
            .and_then(|n| n.to_i64())
            .and_then(|n| u32::try_from(n).ok()),
        None => Some(8),
    };
    let (Some(gpu), Some(count)) = (gpu.as_str(), count) else {
        diags.push(diag(
            "Invalid GPU shape",
            "gpu is a model name (\"H100\") and gpus_per_node a whole number.",
            pool.kind_span,
        ));
        return None;
    };
    match cat.pick(gpu, count, region) {
        Ok(offer) => Some(offer.instance_type.clone()),
        Err(e) => {
            // A shape offered elsewhere is the region's fault; one offered
            // nowhere, the pool's.
            let (span, label) = match &e {
                strata_provider::catalog::NotOffered::Region { .. } => {
                    (region_span, format!("{region} has no {gpu} × {count}"))
                }
                _ => (gpu_attr.expr.span, format!("{gpu} × {count} here")),
            };
            diags.push(
                diag(
                    "GPU not offered",
                    format!(
                        "node_pool {:?} on {}: {e} (catalog taken {} from {}).",
                        pool.labels
                            .first()
                            .map(|l| l.0.as_str())
                            .unwrap_or_default(),
                        kind.name,
                        cat.taken,
                        cat.source.split(',').next().unwrap_or_default()
                    ),
                    span,
                )
                .labelled(label),
            );
            None
        }
    }
}

/// A cluster's `prices` file (a path relative to its configuration), read.
pub(super) fn cluster_prices(
    b: &Block,
    scope: &ConfigScope,
    dir: &std::path::Path,
    diags: &mut Diags,
) -> PriceList {
    let Some(a) = b.body.attr("prices") else {
        return PriceList::default();
    };
    let Some(name) = known(scope, a, diags).and_then(|v| v.as_str().map(str::to_string)) else {
        return PriceList::default();
    };
    let path = dir.join(&name);
    let read = std::fs::read_to_string(&path).map_err(|e| e.to_string());
    let parsed = read.and_then(|text| PriceList::parse(&name, &text));
    parsed.unwrap_or_else(|why| {
        diags.push(diag(
            "Invalid prices",
            format!("The prices in {} cannot be used: {why}.", path.display()),
            a.expr.span,
        ));
        PriceList::default()
    })
}

/// A node pool of the spec on one cloud, its cloud block's overrides laid
/// over it.
pub(super) struct Pool<'a> {
    pub(super) name: &'a str,
    pub(super) attrs: &'a [&'a Attribute],
    pub(super) cloud: &'a CloudKind,
}

impl Pool<'_> {
    pub(super) fn attr(&self, name: &str) -> Option<&Attribute> {
        self.attrs.iter().find(|a| a.name == name).copied()
    }

    pub(super) fn capacity(&self, scope: &ConfigScope) -> Capacity {
        let spot = self
            .attr("capacity")
            .and_then(|a| scope.evaluator().eval(&a.expr).ok())
            .is_some_and(|v| v.unmarked().as_str() == Some("spot"));
        match spot {
            true => Capacity::Spot,
            false => Capacity::OnDemand,
        }
    }
}

/// `max_price_per_gpu_hour`: the chosen offer's price per GPU-hour (after
/// the user's prices) must not be more; when it is, the error names the
/// offers of the same GPU shape that are within the cap, cheapest first.
pub(super) fn price_cap(
    pool: &Pool<'_>,
    instance_type: &str,
    region: &str,
    scope: &ConfigScope,
    catalogs: &Catalogs<'_>,
    diags: &mut Diags,
) {
    let Some(cap_attr) = pool.attr(CAP) else {
        return;
    };
    let Some(v) = known(scope, cap_attr, diags) else {
        return;
    };
    let Some(cap) = cap_amount(&v, cap_attr.expr.span, diags) else {
        return;
    };
    let capacity = pool.capacity(scope);
    let catalog = catalogs.of(pool.cloud);
    let offer = match quote(catalog, &catalogs.prices, instance_type, region, capacity) {
        Ok(q) => q,
        Err(why) => {
            diags.push(diag(
                "Price not known",
                format!(
                    "node_pool {:?} on {} has a price cap, but {instance_type} cannot be priced: {why}.",
                    pool.name, pool.cloud.name
                ),
                cap_attr.expr.span,
            ));
            return;
        }
    };
    let Some((gpu, gpus)) = offer.gpu.clone() else {
        return;
    };
    let Some(per_gpu) = offer.node_hour.per(gpus) else {
        return;
    };
    if per_gpu <= cap {
        return;
    }
    let offers = offers_within(catalogs, (&gpu, gpus), capacity, cap);
    let (price, limit) = per_gpu.apart(cap);
    diags.push(
        diag(
            "Price over the cap",
            format!(
                "node_pool {:?} on {}: {instance_type} in {region} costs {price} per GPU-hour {} ({}), more than max_price_per_gpu_hour = {limit}. {offers}",
                pool.name,
                pool.cloud.name,
                capacity.name().replace('_', "-"),
                offer.source,
            ),
            cap_attr.expr.span,
        )
        .labelled(format!("{price} per GPU-hour here")),
    );
}

/// What a pool over its cap could have instead: the first offers within
/// it, cheapest first, in words.
fn offers_within(
    catalogs: &Catalogs<'_>,
    (gpu, gpus): (&str, u32),
    capacity: Capacity,
    cap: Usd,
) -> String {
    let within = within_cap(catalogs.all(), &catalogs.prices, gpu, gpus, capacity, cap);
    let shown: Vec<String> = within
        .iter()
        .take(5)
        .map(|(c, o, p)| {
            format!(
                "{} {} {} at {}",
                c.cloud,
                o.region,
                o.instance_type,
                p.dollars()
            )
        })
        .collect();
    match (shown.is_empty(), within.len().saturating_sub(shown.len())) {
        (true, _) => format!("No catalog offers {gpus} × {gpu} at that price or less."),
        (false, 0) => format!(
            "Offers within the cap, cheapest first: {}.",
            shown.join("; ")
        ),
        (false, more) => format!(
            "Offers within the cap, cheapest first: {}; and {more} more.",
            shown.join("; ")
        ),
    }
}

/// `max_price_per_gpu_hour` as an amount: dollars, not below zero (a
/// negative cap would put every offer over it).
pub(super) fn cap_amount(v: &Value, span: Span, diags: &mut Diags) -> Option<Usd> {
    match v.as_number().and_then(|n| Usd::parse(&n.to_string())) {
        Some(cap) if cap >= Usd::micros(0) => Some(cap),
        Some(_) => {
            diags.push(diag(
                "Invalid max_price_per_gpu_hour",
                "max_price_per_gpu_hour cannot be negative: it is the most to pay in US dollars per GPU-hour, such as 4.5.",
                span,
            ));
            None
        }
        None => {
            diags.push(diag(
                "Invalid max_price_per_gpu_hour",
                "max_price_per_gpu_hour is US dollars per GPU-hour, a number such as 4.5.",
                span,
            ));
            None
        }
    }
}
