//! Pricing a plan's objects: ask each object's driver what it bills,
//! resolve what it names in other objects, price nodes.

use super::{Cost, FeeCost, PoolCost, PriorPool, Unpriced};
use crate::builtin::Drivers;
use crate::lang::value::Value;
use strata_provider::billing::{Billed, Count, Fee, Known, Lookup, NodePool, Nodes};
use strata_provider::catalog::{quote, Catalog, PriceList, Quote};
use strata_state::model::{Address, ResourceAddr};

/// One managed object of the plan: as it was and as planned.
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    pub addr: &'a Address,
    /// Its provider configuration's address, as state records it.
    pub provider: &'a str,
    pub before: Option<&'a Value>,
    pub after: Option<&'a Value>,
    /// The resources it depends on (configuration addresses).
    pub dependencies: &'a [ResourceAddr],
}

/// Which side of the plan a fact is read from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Before,
    After,
}

impl<'a> Item<'a> {
    fn side(&self, side: Side) -> Option<&'a Value> {
        match side {
            Side::Before => self.before,
            Side::After => self.after,
        }
    }
}

/// What the plan's `items` cost, priced by `prices` first, then by each
/// driver's catalog; `today` (`YYYY-MM-DD`) is the plan's date.
pub fn estimate(items: &[Item<'_>], drivers: &Drivers, prices: &PriceList, today: &str) -> Cost {
    let mut cost = Cost::default();
    for item in items {
        let Some((driver, _)) = drivers.configured(
            &item.addr.id.type_name,
            item.provider,
            strata_state::model::Mode::Managed,
        ) else {
            continue;
        };
        let bills = |side: Side| match item.side(side) {
            Some(v) => driver.billing(&item.addr.id.type_name, v, today),
            None => Vec::new(),
        };
        let (before, after) = (bills(Side::Before), bills(Side::After));
        if before.is_empty() && after.is_empty() {
            continue;
        }
        let catalog = driver.gpu_catalog();
        let ctx = Ctx {
            items,
            item,
            catalog,
            prices,
        };
        // The two sides' parts pair up by position: a driver describes an
        // object's parts in a fixed order.
        let parts = before.len().max(after.len());
        for i in 0..parts {
            match (before.get(i), after.get(i)) {
                (b, Some(Billed::Nodes(a))) => {
                    let b = match b {
                        Some(Billed::Nodes(b)) => Some(b),
                        _ => None,
                    };
                    ctx.pool(Some(a), b, &mut cost);
                }
                (Some(Billed::Nodes(b)), None) => ctx.pool(None, Some(b), &mut cost),
                (b, Some(Billed::Fee(a))) => ctx.fee(Some(a), fee_of(b), &mut cost),
                (Some(Billed::Fee(b)), None) => ctx.fee(None, Some(b), &mut cost),
                (_, None) => {}
            }
        }
    }
    cost
}

fn fee_of(b: Option<&Billed>) -> Option<&Fee> {
    match b {
        Some(Billed::Fee(f)) => Some(f),
        _ => None,
    }
}

struct Ctx<'c, 'a> {
    items: &'c [Item<'a>],
    item: &'c Item<'a>,
    catalog: Option<&'c Catalog>,
    prices: &'c PriceList,
}

impl Ctx<'_, '_> {
    fn pool(&self, after: Option<&NodePool>, before: Option<&NodePool>, cost: &mut Cost) {
        let Some(shown) = after.or(before) else {
            return;
        };
        let unpriced = |why: String| Unpriced {
            addr: self.item.addr.clone(),
            part: shown.part.map(str::to_string),
            why,
        };
        let side = if after.is_some() {
            Side::After
        } else {
            Side::Before
        };
        let (region, instance_type, quoted) = match self.price(shown, side) {
            Ok(found) => found,
            Err(why) => return cost.unpriced.push(unpriced(why)),
        };
        let prior = before.and_then(|b| {
            let (_, t, q) = self.price(b, Side::Before).ok()?;
            Some(PriorPool {
                instance_type: t,
                node_hour: q.node_hour,
                nodes: b.nodes.clone(),
            })
        });
        let nodes = match after {
            Some(a) => a.nodes.clone(),
            None => Nodes::fixed(Count::Known(0)),
        };
        let node_hour = match shown.max_price {
            Some(cap) => quoted.node_hour.min(cap),
            None => quoted.node_hour,
        };
        cost.pools.push(PoolCost {
            addr: self.item.addr.clone(),
            part: shown.part.map(str::to_string),
            cloud: shown.cloud.to_string(),
            region,
            instance_type,
            gpu: quoted.gpu,
            capacity: shown.capacity,
            node_hour,
            nodes,
            zones: shown.zones,
            prior,
            price_source: quoted.source,
            committed: None,
        });
    }

    /// A pool's region, instance type and price per node-hour.
    fn price(&self, pool: &NodePool, side: Side) -> Result<(String, String, Quote), String> {
        let region = self.resolve(&pool.region, side, "region")?;
        let instance_type = self.resolve(&pool.instance_type, side, "instance type")?;
        let q = quote(
            self.catalog,
            self.prices,
            &instance_type,
            &region,
            pool.capacity,
        )?;
        Ok((region, instance_type, q))
    }

    fn fee(&self, after: Option<&Fee>, before: Option<&Fee>, cost: &mut Cost) {
        let Some(shown) = after.or(before) else {
            return;
        };
        let side = if after.is_some() {
            Side::After
        } else {
            Side::Before
        };
        let region = self
            .resolve(&shown.region, side, "region")
            .unwrap_or_else(|_| "unknown".into());
        cost.fees.push(FeeCost {
            addr: self.item.addr.clone(),
            cloud: shown.cloud.to_string(),
            region,
            what: shown.what.clone(),
            hourly: after.map(|f| f.hourly),
            prior: before.map(|f| f.hourly),
            source: shown.source.to_string(),
        });
    }

    /// A fact, found in another object of the plan when the driver says
    /// where.
    fn resolve(&self, fact: &Known<String>, side: Side, what: &str) -> Result<String, String> {
        match fact {
            Known::Is(v) => Ok(v.clone()),
            Known::Unknown(why) => Err(format!("its {what} is not known: {why}")),
            Known::Elsewhere(l) => self.look_up(l, side).ok_or_else(|| {
                format!(
                    "its {what} is the {} of the {} it names, which this plan does not hold{}",
                    l.attribute,
                    l.type_name,
                    if side == Side::After { " as known" } else { "" }
                )
            }),
        }
    }

    fn look_up(&self, l: &Lookup, side: Side) -> Option<String> {
        let attr = |i: &Item<'_>, name: &str| -> Option<String> {
            let v = i.side(side)?.unmarked().entries()?.get(name)?;
            v.as_str().map(str::to_string)
        };
        let of_type = || {
            self.items
                .iter()
                .filter(move |i| i.addr.id.type_name == l.type_name)
        };
        let found = match &l.value {
            Some(key) => of_type().find(|i| attr(i, l.key).as_deref() == Some(key.as_str())),
            // Not known yet: the one object of that type it depends on
            // (or, of several, the one with its own instance key).
            None => {
                let deps: Vec<&Item<'_>> = of_type()
                    .filter(|i| self.item.dependencies.contains(&i.addr.id.config()))
                    .collect();
                match deps[..] {
                    [one] => Some(one),
                    _ => deps.into_iter().find(|i| i.addr.key == self.item.addr.key),
                }
            }
        }?;
        attr(found, l.attribute)
    }
}
