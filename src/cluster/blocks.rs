//! A pool's `capacity_block "aws"` block: a Capacity Block for ML to find
//! among the cloud's offerings — the pool's nodes of its instance type for
//! `hours`, within a window and under a price — and to buy only when it
//! says `purchase = true`, for a purchase is final (EC2 can neither
//! modify nor cancel a block). The plan names the offering and its price
//! before anything is bought. Once bought (state holds it), the block is
//! the pool's first place while its window lasts, judged by the rules a
//! `reserved` block is, and a later plan never buys another in its place.

use super::reserved::{place_of, Place, Reserved};
use super::rules::{allowed, known_string};
use super::{diag, known};
use crate::config::ConfigScope;
use crate::diag::{Diags, Span};
use crate::placement::{Buying, Candidate, Purchase, Skipped};
use crate::syntax::Body;
use std::collections::BTreeMap;
use strata_provider::money::Usd;
use strata_provider::reservation::{Offer, OfferAsk};
use strata_state::Location;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Asks a cloud for the Capacity Blocks it offers, through the provider
/// configuration of a region's module call (as [`super::reserved::HeldLookup`]).
pub type OfferLookup<'a> = dyn Fn(&str, &str, &OfferAsk) -> Result<Vec<Offer>, String> + 'a;

/// A block bought for a pool, as state holds it: its id, and the offering
/// it was bought from (what keeps the module's purchase as it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bought {
    pub id: String,
    pub offering: String,
}

/// Blocks state holds, by `call/pool`.
pub type BoughtBlocks = BTreeMap<String, Bought>;

/// The clouds that sell Capacity Blocks.
const CLOUDS: &[&str] = &["aws"];

/// One `capacity_block "<cloud>"` block.
pub(super) struct BlockWanted {
    cloud: String,
    region: Option<String>,
    hours: u64,
    starts: Option<String>,
    ends: Option<String>,
    max_price: Option<Usd>,
    purchase: bool,
    span: Span,
}

const FIELDS: &[&str] = &["region", "hours", "starts", "ends", "max_price", "purchase"];

/// The placement's `capacity_block` block, if it has one (a pool buys at
/// most one at a time).
pub(super) fn read(
    placement: &Body,
    scope: &ConfigScope,
    diags: &mut Diags,
) -> Option<BlockWanted> {
    let mut blocks = placement
        .blocks
        .iter()
        .filter(|b| b.kind == "capacity_block");
    let b = blocks.next()?;
    if let Some(again) = blocks.next() {
        diags.push(diag(
            "Duplicate capacity_block",
            "A pool's placement finds at most one Capacity Block at a time; name others held already in reserved blocks.",
            again.kind_span,
        ));
    }
    allowed(&b.body, "a capacity_block block", FIELDS, &[], diags);
    let Some(cloud) = b.labels.first().map(|(l, _)| l.clone()) else {
        diags.push(diag(
            "Missing name for capacity_block",
            "A capacity_block block is labelled with the cloud to buy from, such as capacity_block \"aws\".",
            b.kind_span,
        ));
        return None;
    };
    if !CLOUDS.contains(&cloud.as_str()) {
        diags.push(diag(
            "Unsupported capacity_block",
            format!(
                "strata buys Capacity Blocks on {}; {cloud:?} sells none.",
                CLOUDS.join(", ")
            ),
            b.kind_span,
        ));
        return None;
    }
    let field = Fields {
        body: &b.body,
        scope,
        block: b.kind_span,
    };
    let hours = field.hours(diags)?;
    let wanted = BlockWanted {
        cloud,
        region: field.text("region", diags),
        hours,
        starts: field.time("starts", diags),
        ends: field.time("ends", diags),
        max_price: field.price(diags),
        purchase: field.flag("purchase", diags).unwrap_or(false),
        span: b.kind_span,
    };
    if wanted.purchase && wanted.max_price.is_none() {
        diags.push(diag(
            "Missing max_price",
            "A purchase is final: a capacity_block that buys (purchase = true) says the most it pays, in USD for the whole block (max_price).",
            b.kind_span,
        ));
        return None;
    }
    Some(wanted)
}

/// A `capacity_block` block's attributes, each checked at its place.
struct Fields<'a> {
    body: &'a Body,
    scope: &'a ConfigScope<'a>,
    /// Where the block is: what a missing argument is reported at.
    block: Span,
}

impl Fields<'_> {
    fn value(&self, name: &str, diags: &mut Diags) -> Option<(crate::lang::value::Value, Span)> {
        let a = self.body.attr(name)?;
        Some((known(self.scope, a, diags)?, a.expr.span))
    }

    fn text(&self, name: &str, diags: &mut Diags) -> Option<String> {
        known_string(self.body, name, self.scope, diags)
    }

    fn time(&self, name: &str, diags: &mut Diags) -> Option<String> {
        let text = self.text(name, diags)?;
        if OffsetDateTime::parse(&text, &Rfc3339).is_err() {
            let span = self.body.attr(name).map_or(self.block, |a| a.expr.span);
            diags.push(diag(
                &format!("Invalid {name}"),
                format!("{name} is an RFC 3339 time, such as \"2026-12-10T00:00:00Z\"."),
                span,
            ));
            return None;
        }
        Some(text)
    }

    fn flag(&self, name: &str, diags: &mut Diags) -> Option<bool> {
        let (v, span) = self.value(name, diags)?;
        let b = v.as_bool();
        if b.is_none() {
            diags.push(diag(
                &format!("Invalid {name}"),
                format!("{name} is true or false."),
                span,
            ));
        }
        b
    }

    /// EC2 sells blocks of 1 to 14 days in whole days, then up to 182
    /// days in whole weeks (PurchaseCapacityBlock, "Capacity Blocks for ML").
    fn hours(&self, diags: &mut Diags) -> Option<u64> {
        let Some((v, span)) = self.value("hours", diags) else {
            if self.body.attr("hours").is_none() {
                diags.push(diag(
                    "Missing hours",
                    "A capacity_block says how long the block lasts, in hours (hours = 24).",
                    self.block,
                ));
            }
            return None;
        };
        let hours = v
            .as_number()
            .filter(|n| n.is_integer())
            .and_then(|n| n.to_i64())
            .and_then(|n| u64::try_from(n).ok())
            .filter(|h| *h > 0 && (*h <= 336 && h % 24 == 0 || *h <= 4368 && h % 168 == 0));
        if hours.is_none() {
            diags.push(diag(
                "Invalid hours",
                "EC2 sells Capacity Blocks of whole days up to 14 days (24, 48, … 336 hours), then whole weeks up to 182 days (504, 672, … 4368).",
                span,
            ));
        }
        hours
    }

    fn price(&self, diags: &mut Diags) -> Option<Usd> {
        let (v, span) = self.value("max_price", diags)?;
        // Read as written, to the micro-dollar, as the price cap is.
        let price = v
            .as_number()
            .and_then(|n| Usd::parse(&n.to_string()))
            .filter(|p| *p >= Usd::ZERO);
        if price.is_none() {
            diags.push(diag(
                "Invalid max_price",
                "max_price is the most paid for the whole block, in USD (a number of at least 0).",
                span,
            ));
        }
        price
    }
}

/// What a pool's `capacity_block` makes of the plan.
#[derive(Default)]
pub(super) struct BlockOutcome {
    /// The block bought already, judged as a `reserved` block.
    pub held: Option<Reserved>,
    /// What the cloud's module buys (or keeps, once bought).
    pub purchase: Option<Purchase>,
    /// The offering found (or why none), shown with the candidates.
    pub shown: Vec<Skipped>,
}

/// The pool a block is for and what the engine read of the clouds.
pub(super) struct ForPool<'a> {
    pub pool: &'a str,
    pub nodes: u64,
    pub bought: &'a BoughtBlocks,
    pub offers: Option<&'a OfferLookup<'a>>,
}

pub(super) fn consider(
    b: &BlockWanted,
    places: &[Place<'_>],
    for_pool: &ForPool<'_>,
    diags: &mut Diags,
) -> BlockOutcome {
    let what = "the capacity_block";
    let Some(place) = place_of(&b.cloud, b.region.as_deref(), what, b.span, places, diags) else {
        return BlockOutcome::default();
    };
    if let Some(bought) = for_pool
        .bought
        .get(&format!("{}/{}", place.call, for_pool.pool))
    {
        return BlockOutcome {
            held: Some(Reserved::bought(&b.cloud, place.region, &bought.id, b.span)),
            purchase: Some(Purchase {
                call: place.call.to_string(),
                offering: bought.offering.clone(),
                buys: None,
            }),
            shown: Vec::new(),
        };
    }
    let Some(lookup) = for_pool.offers else {
        return BlockOutcome::default();
    };
    let ask = OfferAsk {
        region: place.region.to_string(),
        instance_type: place.instance_type.to_string(),
        instances: for_pool.nodes,
        hours: b.hours,
        starts: b.starts.clone(),
        ends: b.ends.clone(),
    };
    match lookup(place.provider, place.call, &ask) {
        Ok(offers) => offered_outcome(b, place, &ask, &offers),
        Err(why) => BlockOutcome {
            shown: vec![Skipped {
                candidate: offered(place, None),
                why: format!("Capacity Block offerings could not be read: {why}"),
            }],
            ..BlockOutcome::default()
        },
    }
}

/// What the offerings read make of the plan: the one bought or shown, or
/// why none.
fn offered_outcome(
    b: &BlockWanted,
    place: &Place<'_>,
    ask: &OfferAsk,
    offers: &[Offer],
) -> BlockOutcome {
    let shown = |why: String, zone: Option<&str>| Skipped {
        candidate: offered(place, zone),
        why,
    };
    match cheapest(offers, b.max_price) {
        None => BlockOutcome {
            shown: vec![shown(none_offered(b, ask, offers.len()), None)],
            ..BlockOutcome::default()
        },
        Some(o) => {
            let bought = format!(
                "{} × {} from {} to {} in {}",
                ask.instances, ask.instance_type, o.starts, o.ends, o.zone
            );
            let terms = format!("{} {bought} for {}", o.id, o.upfront.dollars());
            let (why, purchase) = match b.purchase {
                true => (
                    format!("Capacity Block {terms} is bought by this apply (a purchase is final); the nodes move onto it once it begins"),
                    Some(Purchase {
                        call: place.call.to_string(),
                        offering: o.id.clone(),
                        buys: Some(Buying {
                            upfront: o.upfront,
                            terms: bought,
                        }),
                    }),
                ),
                false => (
                    format!("Capacity Block {terms} is offered, not bought: purchase = true buys it (a purchase is final)"),
                    None,
                ),
            };
            BlockOutcome {
                held: None,
                purchase,
                shown: vec![shown(why, Some(&o.zone))],
            }
        }
    }
}

/// The cheapest offering within the price (the earliest of equal ones:
/// `offers` come earliest first).
fn cheapest(offers: &[Offer], max: Option<Usd>) -> Option<&Offer> {
    offers
        .iter()
        .filter(|o| max.is_none_or(|m| o.upfront <= m))
        .min_by_key(|o| o.upfront)
}

fn none_offered(b: &BlockWanted, ask: &OfferAsk, found: usize) -> String {
    let window = match (&b.starts, &b.ends) {
        (Some(s), Some(e)) => format!(" between {s} and {e}"),
        (Some(s), None) => format!(" from {s}"),
        (None, Some(e)) => format!(" ending by {e}"),
        (None, None) => String::new(),
    };
    let price = match (b.max_price, found) {
        (Some(m), n) if n > 0 => format!(" within {} ({n} offered, all dearer)", m.dollars()),
        _ => String::new(),
    };
    format!(
        "no Capacity Block of {} × {} for {} hours{window}{price}",
        ask.instances, ask.instance_type, ask.hours
    )
}

/// The place an offering is in, as the candidate list shows it.
fn offered(place: &Place<'_>, zone: Option<&str>) -> Candidate {
    Candidate {
        at: Location {
            cloud: place.cloud.to_string(),
            region: place.region.to_string(),
            capacity: "capacity_block".into(),
            reservation: None,
        },
        call: place.call.to_string(),
        instance_type: place.instance_type.to_string(),
        gpu_hour: None,
        zones: zone.map(str::to_string).into_iter().collect(),
        node_label: place.node_label.to_string(),
        score: None,
        held: None,
    }
}
