//! What GKE objects are billed for: a node pool's VMs (priced by the
//! engine from the catalog) and a cluster's management fee, with the
//! nodes of its default pool while it keeps one.

use strata_provider::billing::{
    at, count, fact, flag, Billed, Capacity, Count, Fee, Known, NodePool, Nodes,
};
use strata_value::value::Value;

/// Source: cloud.google.com/kubernetes-engine/pricing ("a flat cluster
/// management fee of $0.10 per cluster per hour ... irrespective of the
/// mode of operation"), read 2026-12-02. The free tier's monthly credit
/// (one zonal or Autopilot cluster per billing account) is a credit on
/// the bill, not a price, and is not taken off.
const CLUSTER_FEE_CENTS: i64 = 10;
const FEE_SOURCE: &str = "GKE pricing, read 2026-12-02";

/// How many zones GKE spreads a regional pool over when `node_locations`
/// does not say (its documented default for regional clusters).
const REGIONAL_DEFAULT_ZONES: u32 = 3;

pub(crate) fn billing(type_name: &str, object: &Value, region: Option<String>) -> Vec<Billed> {
    let location = match fact(object, &["location"]) {
        Some(l) => l,
        None => match region {
            Some(r) => Known::Is(r),
            None => {
                Known::Unknown("neither the object nor the google provider names a location".into())
            }
        },
    };
    match type_name {
        "google_container_node_pool" => vec![Billed::Nodes(node_pool(object, &location))],
        "google_container_cluster" => {
            let mut out = vec![Billed::Fee(Fee {
                cloud: "gcp",
                what: "GKE cluster management fee".into(),
                region: region_of(&location),
                hourly: strata_provider::money::Usd::cents(CLUSTER_FEE_CENTS),
                source: FEE_SOURCE,
            })];
            if !flag(object, &["remove_default_node_pool"]) {
                out.push(Billed::Nodes(default_pool(object, &location)));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// A location's region: a zone (`us-central1-a`) is in the region its name
/// starts with.
fn region_of(location: &Known<String>) -> Known<String> {
    match location {
        Known::Is(l) if is_zone(l) => Known::Is(
            l.rsplit_once('-')
                .map_or(l.as_str(), |(r, _)| r)
                .to_string(),
        ),
        other => other.clone(),
    }
}

fn is_zone(location: &str) -> bool {
    location.matches('-').count() >= 2
}

/// How many zones a pool's per-zone counts are multiplied by.
fn zones(object: &Value, location: &Known<String>) -> Result<u32, String> {
    match at(object, &["node_locations"]) {
        Some(Ok(v)) if v.elements().is_some_and(|z| !z.is_empty()) => Ok(v
            .elements()
            .map_or(1, |z| u32::try_from(z.len()).unwrap_or(u32::MAX))),
        _ => match location {
            Known::Is(l) if is_zone(l) => Ok(1),
            Known::Is(_) => Ok(REGIONAL_DEFAULT_ZONES),
            _ => Err("the pool's zones are known only after apply".into()),
        },
    }
}

fn machine_type(object: &Value) -> Known<String> {
    fact(object, &["node_config", "machine_type"]).unwrap_or_else(|| Known::Is("e2-medium".into()))
}

fn capacity(object: &Value) -> Capacity {
    let set = |k: &str| flag(object, &["node_config", k]);
    // Preemptible VMs are billed at Spot VMs' prices.
    if set("spot") || set("preemptible") {
        Capacity::Spot
    } else if set("flex_start") {
        Capacity::FlexStart
    } else {
        Capacity::OnDemand
    }
}

/// A per-zone count as the pool's total.
fn per_zone(c: Count, zones: &Result<u32, String>) -> Count {
    match (c, zones) {
        (Count::Known(n), Ok(z)) => Count::Known(n).times(*z),
        (Count::Known(_), Err(why)) => Count::Unknown(why.clone()),
        (unknown, _) => unknown,
    }
}

fn node_pool(object: &Value, location: &Known<String>) -> NodePool {
    let zones = zones(object, location);
    let per_zone = |c: Option<Count>| c.map(|c| per_zone(c, &zones));
    let fixed = per_zone(count(object, &["node_count"]))
        .or_else(|| per_zone(count(object, &["initial_node_count"])));
    // A block the configuration leaves out may be planned unknown (the
    // API's to fill): with a node count given, the pool is that size.
    let autoscaling = object
        .unmarked()
        .entries()
        .and_then(|m| m.get("autoscaling"));
    let autoscaled = match autoscaling.map(Value::unmarked) {
        Some(v) if !v.is_known() => fixed.is_none(),
        Some(v) => v.elements().is_some_and(|e| !e.is_empty()),
        None => false,
    };
    let bound = |total: &str, each: &str| {
        count(object, &["autoscaling", total])
            .or_else(|| per_zone(count(object, &["autoscaling", each])))
            .unwrap_or_else(|| {
                Count::Unknown(format!("autoscaling sets neither {total} nor {each}"))
            })
    };
    // Whether the bounds are per zone: only then do the zones matter.
    let multiplied = match autoscaled {
        true => ["total_min_node_count", "total_max_node_count"]
            .iter()
            .any(|k| count(object, &["autoscaling", k]).is_none()),
        false => fixed.is_some(),
    };
    let nodes = match autoscaled {
        true => Nodes {
            min: bound("total_min_node_count", "min_node_count"),
            desired: fixed.unwrap_or_else(|| Count::Unknown("the autoscaler decides".into())),
            max: bound("total_max_node_count", "max_node_count"),
        },
        false => Nodes::fixed(fixed.unwrap_or(Count::Known(0))),
    };
    NodePool {
        cloud: "gcp",
        part: None,
        region: region_of(location),
        instance_type: machine_type(object),
        capacity: capacity(object),
        max_price: None,
        nodes,
        zones: zones.ok().filter(|_| multiplied),
    }
}

/// The pool a cluster is created with (`initial_node_count` per zone).
fn default_pool(object: &Value, location: &Known<String>) -> NodePool {
    let zones = zones(object, location);
    let n = count(object, &["initial_node_count"]).map_or(Count::Known(0), |c| per_zone(c, &zones));
    NodePool {
        cloud: "gcp",
        part: Some("default node pool"),
        region: region_of(location),
        instance_type: machine_type(object),
        capacity: capacity(object),
        max_price: None,
        nodes: Nodes::fixed(n),
        zones: zones.ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_provider::values::object;
    use strata_value::types::Type;

    fn block(pairs: Vec<(&str, Value)>) -> Value {
        let o = object(pairs);
        Value::List(o.ty(), vec![o])
    }

    fn pool(
        location: &str,
        autoscaling: Vec<(&str, Value)>,
        extra: Vec<(&str, Value)>,
    ) -> NodePool {
        let mut pairs = vec![
            ("location", Value::string(location)),
            (
                "node_config",
                block(vec![
                    ("machine_type", Value::string("a3-highgpu-8g")),
                    ("spot", Value::Bool(true)),
                ]),
            ),
            ("autoscaling", block(autoscaling)),
        ];
        pairs.extend(extra);
        match &billing("google_container_node_pool", &object(pairs), None)[..] {
            [Billed::Nodes(p)] => p.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn per_zone_counts_are_multiplied_by_the_zones() {
        let p = pool(
            "us-central1",
            vec![
                ("min_node_count", Value::int(1)),
                ("max_node_count", Value::int(2)),
            ],
            vec![(
                "node_locations",
                Value::new_set(
                    Type::String,
                    vec![
                        Value::string("us-central1-a"),
                        Value::string("us-central1-b"),
                    ],
                ),
            )],
        );
        assert_eq!(
            (p.nodes.min.known(), p.nodes.max.known(), p.zones),
            (Some(2), Some(4), Some(2))
        );
        assert_eq!(
            (p.region, p.capacity),
            (Known::Is("us-central1".into()), Capacity::Spot)
        );
        let zonal = pool(
            "us-central1-a",
            vec![("max_node_count", Value::int(5))],
            vec![],
        );
        assert_eq!(
            (zonal.nodes.max.known(), zonal.region),
            (Some(5), Known::Is("us-central1".into()))
        );
        let regional = pool(
            "us-central1",
            vec![("max_node_count", Value::int(5))],
            vec![],
        );
        assert_eq!(regional.nodes.max.known(), Some(15), "GKE's three zones");
    }

    #[test]
    fn the_provisioning_model_is_read_from_the_node_config() {
        let with = |flags: Vec<(&str, Value)>| {
            let mut config = vec![("machine_type", Value::string("a3-highgpu-8g"))];
            config.extend(flags);
            let o = object(vec![
                ("location", Value::string("us-central1")),
                ("node_config", block(config)),
            ]);
            match &billing("google_container_node_pool", &o, None)[..] {
                [Billed::Nodes(p)] => p.capacity,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(with(vec![]), Capacity::OnDemand);
        assert_eq!(
            with(vec![("preemptible", Value::Bool(true))]),
            Capacity::Spot
        );
        assert_eq!(
            with(vec![("flex_start", Value::Bool(true))]),
            Capacity::FlexStart
        );
    }

    #[test]
    fn a_fixed_size_pool_is_its_node_count() {
        // No autoscaling block in the configuration: planned unknown.
        let fixed = object(vec![
            ("location", Value::string("us-central1-a")),
            (
                "node_config",
                block(vec![("machine_type", Value::string("a3-highgpu-8g"))]),
            ),
            ("autoscaling", Value::Unknown(Type::list(Type::Dynamic))),
            ("node_count", Value::int(2)),
        ]);
        let [Billed::Nodes(p)] = &billing("google_container_node_pool", &fixed, None)[..] else {
            panic!("one pool");
        };
        assert_eq!(
            (
                p.nodes.min.known(),
                p.nodes.desired.known(),
                p.nodes.max.known()
            ),
            (Some(2), Some(2), Some(2))
        );
    }

    #[test]
    fn total_counts_are_the_pool_s_own() {
        let p = pool(
            "us-central1",
            vec![
                ("total_min_node_count", Value::int(0)),
                ("total_max_node_count", Value::int(4)),
            ],
            vec![("node_count", Value::Unknown(Type::Number))],
        );
        assert_eq!(
            (p.nodes.min.known(), p.nodes.max.known(), p.zones),
            (Some(0), Some(4), None)
        );
        assert_eq!(
            p.nodes.desired,
            Count::Unknown("node_count is known only after apply".into())
        );
    }

    #[test]
    fn a_cluster_is_a_fee_and_its_default_pool_until_removed() {
        let c = object(vec![
            ("location", Value::string("europe-west4")),
            ("initial_node_count", Value::int(1)),
            ("remove_default_node_pool", Value::Bool(false)),
        ]);
        let billed = billing("google_container_cluster", &c, None);
        let [Billed::Fee(f), Billed::Nodes(p)] = &billed[..] else {
            panic!("{billed:?}")
        };
        assert_eq!(
            (f.hourly.decimal().as_str(), f.region.clone()),
            ("0.10", Known::Is("europe-west4".into()))
        );
        assert_eq!(
            (p.nodes.max.known(), p.instance_type.clone()),
            (Some(3), Known::Is("e2-medium".into()))
        );
        let removed = object(vec![
            ("location", Value::string("europe-west4")),
            ("remove_default_node_pool", Value::Bool(true)),
        ]);
        assert_eq!(billing("google_container_cluster", &removed, None).len(), 1);
    }
}
