//! The cost as JSON: the plan JSON's top-level `"cost"` object, which a
//! saved plan keeps too and reads back. Amounts are exact decimals.

use super::{Committed, Cost, FeeCost, Hourly, PoolCost, PriorPool, PurchaseCost, Total, Unpriced};
use serde_json::{json, Map, Value as Json};
use strata_provider::billing::{Capacity, Count, Nodes};
use strata_provider::money::Usd;
use strata_state::model::Address;

fn usd(u: Usd) -> Json {
    serde_json::from_str(&u.decimal()).unwrap_or(Json::Null)
}

fn opt_usd(u: Option<Usd>) -> Json {
    u.map_or(Json::Null, usd)
}

fn hourly(h: Hourly) -> Json {
    json!({"min": opt_usd(h.min), "max": opt_usd(h.max)})
}

fn nodes(n: &Nodes) -> Json {
    let mut out = Map::new();
    let mut unknown = Map::new();
    for (k, c) in [("min", &n.min), ("desired", &n.desired), ("max", &n.max)] {
        match c {
            Count::Known(v) => out.insert(k.into(), json!(v)),
            Count::Unknown(why) => {
                unknown.insert(k.into(), json!(why));
                out.insert(k.into(), Json::Null)
            }
        };
    }
    if !unknown.is_empty() {
        out.insert("unknown".into(), Json::Object(unknown));
    }
    Json::Object(out)
}

fn total(t: Total) -> Json {
    json!({"hourly": hourly(t.hourly), "prior_hourly": hourly(t.prior_hourly)})
}

fn pool(p: &PoolCost) -> Json {
    let (gpu, gpus) = match &p.gpu {
        Some((g, n)) => (json!(g), json!(n)),
        None => (Json::Null, json!(0)),
    };
    json!({
        "address": p.addr.to_string(),
        "part": p.part,
        "cloud": p.cloud,
        "region": p.region,
        "instance_type": p.instance_type,
        "gpu": gpu,
        "gpus_per_node": gpus,
        "capacity": p.capacity.name(),
        "node_hour": usd(p.node_hour),
        "gpu_hour": opt_usd(p.gpu_hour()),
        "zones": p.zones,
        "nodes": nodes(&p.nodes),
        "hourly": hourly(p.hourly()),
        "prior": p.prior.as_ref().map_or(Json::Null, |prior| json!({
            "instance_type": prior.instance_type,
            "node_hour": usd(prior.node_hour),
            "nodes": nodes(&prior.nodes),
            "hourly": hourly(p.prior_hourly()),
        })),
        "price_source": p.price_source,
        "committed": p.committed.as_ref().map(|c| json!({
            "kind": c.kind,
            "id": c.id,
            "instances": c.instances,
            "used": c.used,
            "unused": c.unused(),
            "ends": c.ends,
            "list_node_hour": usd(c.list_node_hour),
            "unused_hourly": opt_usd(c.unused_hour()),
        })),
    })
}

fn committed_from(j: &Json) -> Result<Option<Committed>, String> {
    let Some(c) = j.get("committed").filter(|c| c.is_object()) else {
        return Ok(None);
    };
    Ok(Some(Committed {
        kind: text(c, "kind")?,
        id: text(c, "id")?,
        instances: c.get("instances").and_then(Json::as_u64),
        used: c.get("used").and_then(Json::as_u64).unwrap_or(0),
        ends: c.get("ends").and_then(Json::as_str).map(str::to_string),
        list_node_hour: money(c, "list_node_hour")?.unwrap_or_default(),
    }))
}

fn fee(f: &FeeCost) -> Json {
    json!({
        "address": f.addr.to_string(),
        "cloud": f.cloud,
        "region": f.region,
        "what": f.what,
        "hourly": opt_usd(f.hourly),
        "prior_hourly": opt_usd(f.prior),
        "price_source": f.source,
    })
}

impl Cost {
    /// The `"cost"` object of the plan JSON.
    pub fn to_json(&self) -> Json {
        let by_cloud: Map<String, Json> = self
            .clouds()
            .into_iter()
            .map(|c| {
                let t = total(self.total(Some(&c)));
                (c, t)
            })
            .collect();
        let all = self.total(None);
        let mut out = json!({
            "currency": "USD",
            "hours_per_month": strata_provider::money::HOURS_PER_MONTH,
            "resources": self.pools.iter().map(pool).collect::<Vec<_>>(),
            "fees": self.fees.iter().map(fee).collect::<Vec<_>>(),
            "unpriced": self.unpriced.iter().map(Unpriced::label).collect::<Vec<_>>(),
            "unpriced_why": self.unpriced.iter().map(|u| (u.label(), json!(u.why))).collect::<Map<_, _>>(),
            "hourly": hourly(all.hourly),
            "prior_hourly": hourly(all.prior_hourly),
            "by_cloud": by_cloud,
        });
        // Only where the apply buys something, so a cost without one reads
        // as it always has.
        if let (Some(o), false) = (out.as_object_mut(), self.purchases.is_empty()) {
            let bought = self
                .purchases
                .iter()
                .map(|p| json!({"module": p.call, "what": p.what, "amount": usd(p.amount)}));
            o.insert("purchases".into(), Json::Array(bought.collect()));
        }
        out
    }

    /// A cost read back from [`Cost::to_json`] (a saved plan).
    pub fn from_json(j: &Json) -> Result<Cost, String> {
        let list = |k: &str| {
            j.get(k)
                .and_then(Json::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let why = j.get("unpriced_why").and_then(Json::as_object);
        Ok(Cost {
            pools: list("resources")
                .iter()
                .map(pool_from)
                .collect::<Result<_, _>>()?,
            fees: list("fees")
                .iter()
                .map(fee_from)
                .collect::<Result<_, _>>()?,
            purchases: list("purchases")
                .iter()
                .map(purchase_from)
                .collect::<Result<_, _>>()?,
            unpriced: list("unpriced")
                .iter()
                .map(|u| {
                    let label = u.as_str().ok_or("an unpriced entry is not text")?;
                    let (addr, part) = match label.split_once(" (") {
                        Some((a, p)) => (a, Some(p.trim_end_matches(')').to_string())),
                        None => (label, None),
                    };
                    Ok(Unpriced {
                        addr: address(addr)?,
                        part,
                        why: why
                            .and_then(|w| w.get(label))
                            .and_then(Json::as_str)
                            .unwrap_or_default()
                            .to_string(),
                    })
                })
                .collect::<Result<_, String>>()?,
        })
    }
}

fn address(s: &str) -> Result<Address, String> {
    Address::parse(s).ok_or_else(|| format!("{s:?} is not a resource address"))
}

fn text(j: &Json, k: &str) -> Result<String, String> {
    j.get(k)
        .and_then(Json::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("the cost entry has no {k:?}"))
}

fn money(j: &Json, k: &str) -> Result<Option<Usd>, String> {
    match j.get(k) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => Usd::parse(&v.to_string())
            .map(Some)
            .ok_or_else(|| format!("{k:?} is not an amount")),
    }
}

fn nodes_from(j: &Json) -> Nodes {
    let count = |k: &str| match j.get(k).and_then(Json::as_u64) {
        Some(n) => Count::Known(n),
        None => Count::Unknown(
            j.pointer(&format!("/unknown/{k}"))
                .and_then(Json::as_str)
                .unwrap_or("not known")
                .to_string(),
        ),
    };
    Nodes {
        min: count("min"),
        desired: count("desired"),
        max: count("max"),
    }
}

fn pool_from(j: &Json) -> Result<PoolCost, String> {
    let gpus = j
        .get("gpus_per_node")
        .and_then(Json::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0);
    let gpu = j
        .get("gpu")
        .and_then(Json::as_str)
        .map(|g| (g.to_string(), gpus));
    let prior = match j.get("prior") {
        Some(p) if p.is_object() => Some(PriorPool {
            instance_type: text(p, "instance_type")?,
            node_hour: money(p, "node_hour")?.unwrap_or_default(),
            nodes: nodes_from(&p["nodes"]),
        }),
        _ => None,
    };
    Ok(PoolCost {
        addr: address(&text(j, "address")?)?,
        part: j.get("part").and_then(Json::as_str).map(str::to_string),
        cloud: text(j, "cloud")?,
        region: text(j, "region")?,
        instance_type: text(j, "instance_type")?,
        gpu,
        capacity: Capacity::named(&text(j, "capacity")?).unwrap_or(Capacity::OnDemand),
        node_hour: money(j, "node_hour")?.unwrap_or_default(),
        nodes: nodes_from(&j["nodes"]),
        zones: j
            .get("zones")
            .and_then(Json::as_u64)
            .and_then(|z| u32::try_from(z).ok()),
        prior,
        price_source: text(j, "price_source")?,
        committed: committed_from(j)?,
    })
}

fn purchase_from(j: &Json) -> Result<PurchaseCost, String> {
    Ok(PurchaseCost {
        call: text(j, "module")?,
        what: text(j, "what")?,
        amount: money(j, "amount")?.ok_or("a purchase has no amount")?,
    })
}

fn fee_from(j: &Json) -> Result<FeeCost, String> {
    Ok(FeeCost {
        addr: address(&text(j, "address")?)?,
        cloud: text(j, "cloud")?,
        region: text(j, "region")?,
        what: text(j, "what")?,
        hourly: money(j, "hourly")?,
        prior: money(j, "prior_hourly")?,
        source: text(j, "price_source")?,
    })
}
