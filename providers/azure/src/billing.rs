//! What AKS objects are billed for: a node pool's VMs (priced by the
//! engine from the catalog), and a cluster's control-plane tier with the
//! nodes of its system pool.

use strata_provider::billing::{
    count, fact, flag, Billed, Capacity, Count, Fee, Known, Lookup, NodePool, Nodes,
};
use strata_provider::money::Usd;
use strata_value::value::Value;

/// The control plane's price per cluster-hour by `sku_tier`. Source:
/// azure.microsoft.com/pricing/details/kubernetes-service and
/// learn.microsoft.com/azure/aks/free-standard-pricing-tiers (Free: no
/// charge; Standard: $0.10; Premium: $0.60, with long-term support),
/// read 2026-12-02.
const TIERS: &[(&str, i64)] = &[("Free", 0), ("Standard", 10), ("Premium", 60)];
const FEE_SOURCE: &str = "AKS pricing, read 2026-12-02";

pub(crate) fn billing(type_name: &str, object: &Value) -> Vec<Billed> {
    match type_name {
        "azurerm_kubernetes_cluster_node_pool" => {
            // A pool has no location of its own: it is its cluster's.
            let region = Known::Elsewhere(Lookup {
                type_name: "azurerm_kubernetes_cluster",
                key: "id",
                value: match fact(object, &["kubernetes_cluster_id"]) {
                    Some(Known::Is(id)) => Some(id),
                    _ => None,
                },
                attribute: "location",
            });
            vec![Billed::Nodes(pool(object, &[], None, region))]
        }
        "azurerm_kubernetes_cluster" => {
            let region = fact(object, &["location"])
                .unwrap_or_else(|| Known::Unknown("location is not set".into()));
            let tier = match fact(object, &["sku_tier"]) {
                Some(Known::Is(t)) => t,
                _ => "Free".to_string(),
            };
            let cents = TIERS
                .iter()
                .find(|(t, _)| t.eq_ignore_ascii_case(&tier))
                .map_or(0, |(_, c)| *c);
            vec![
                Billed::Fee(Fee {
                    cloud: "azure",
                    what: format!("AKS control plane, {tier} tier"),
                    region: region.clone(),
                    hourly: Usd::cents(cents),
                    source: FEE_SOURCE,
                }),
                Billed::Nodes(pool(
                    object,
                    &["default_node_pool"],
                    Some("default_node_pool"),
                    region,
                )),
            ]
        }
        _ => Vec::new(),
    }
}

/// The pool at `path` inside `object` (the object itself when empty).
fn pool(
    object: &Value,
    path: &[&str],
    part: Option<&'static str>,
    region: Known<String>,
) -> NodePool {
    let at = |name: &'static str| [path, &[name]].concat();
    let spot = matches!(fact(object, &at("priority")), Some(Known::Is(p)) if p == "Spot");
    let max_price = match strata_provider::billing::at(object, &at("spot_max_price")) {
        Some(Ok(v)) => v
            .as_number()
            .and_then(|n| Usd::parse(&n.to_string()))
            .filter(|p| *p > Usd::ZERO),
        _ => None,
    };
    let fixed = count(object, &at("node_count"));
    let nodes = match flag(object, &at("auto_scaling_enabled")) {
        true => {
            let bound = |k: &'static str| {
                count(object, &at(k)).unwrap_or_else(|| Count::Unknown(format!("{k} is not set")))
            };
            Nodes {
                min: bound("min_count"),
                desired: fixed.unwrap_or_else(|| Count::Unknown("the autoscaler decides".into())),
                max: bound("max_count"),
            }
        }
        false => Nodes::fixed(fixed.unwrap_or(Count::Known(1))),
    };
    NodePool {
        cloud: "azure",
        part,
        region,
        instance_type: fact(object, &at("vm_size"))
            .unwrap_or_else(|| Known::Unknown("vm_size is not set".into())),
        capacity: if spot {
            Capacity::Spot
        } else {
            Capacity::OnDemand
        },
        max_price: max_price.filter(|_| spot),
        nodes,
        zones: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_provider::values::object;
    use strata_value::types::Type;

    #[test]
    fn a_pool_is_priced_in_its_cluster_s_location() {
        let p = object(vec![
            ("kubernetes_cluster_id", Value::Unknown(Type::String)),
            ("vm_size", Value::string("Standard_ND96isr_H100_v5")),
            ("auto_scaling_enabled", Value::Bool(true)),
            ("min_count", Value::int(0)),
            ("max_count", Value::int(4)),
            ("priority", Value::string("Spot")),
            (
                "spot_max_price",
                Value::Number(strata_value::number::Number::parse("12.5").expect("number")),
            ),
        ]);
        let [Billed::Nodes(n)] = &billing("azurerm_kubernetes_cluster_node_pool", &p)[..] else {
            panic!("one pool")
        };
        assert_eq!(
            n.region,
            Known::Elsewhere(Lookup {
                type_name: "azurerm_kubernetes_cluster",
                key: "id",
                value: None,
                attribute: "location"
            })
        );
        assert_eq!(
            (n.capacity, n.max_price),
            (Capacity::Spot, Usd::parse("12.5"))
        );
        assert_eq!(
            (n.nodes.min.known(), n.nodes.max.known()),
            (Some(0), Some(4))
        );
    }

    #[test]
    fn a_cluster_is_its_tier_and_its_system_pool() {
        let sys = object(vec![
            ("vm_size", Value::string("Standard_D4s_v5")),
            ("node_count", Value::int(2)),
        ]);
        let c = object(vec![
            ("location", Value::string("eastus")),
            ("sku_tier", Value::string("Standard")),
            ("default_node_pool", Value::List(sys.ty(), vec![sys])),
        ]);
        let billed = billing("azurerm_kubernetes_cluster", &c);
        let [Billed::Fee(f), Billed::Nodes(n)] = &billed[..] else {
            panic!("{billed:?}")
        };
        assert_eq!(
            (f.hourly.decimal().as_str(), f.what.as_str()),
            ("0.10", "AKS control plane, Standard tier")
        );
        assert_eq!(
            (n.part, n.nodes.max.known()),
            (Some("default_node_pool"), Some(2))
        );
        assert_eq!(n.region, Known::Is("eastus".into()));
    }
}
