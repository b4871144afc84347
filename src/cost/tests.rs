//! The cost of a plan on its own: totals per cloud and over every cloud,
//! the change at the fewest and the most nodes, what an unknown count
//! leaves unknown, and the JSON a saved plan keeps it as.

use super::{Cost, FeeCost, PoolCost, PriorPool, PurchaseCost, Unpriced};
use strata_provider::billing::{Capacity, Count, Nodes};
use strata_provider::money::Usd;
use strata_state::model::Address;

fn usd(text: &str) -> Usd {
    Usd::parse(text).expect("an amount")
}

fn addr(text: &str) -> Address {
    Address::parse(text).expect("an address")
}

fn nodes(min: u64, max: Count) -> Nodes {
    Nodes {
        min: Count::Known(min),
        desired: Count::Known(min),
        max,
    }
}

fn pool(at: &str, cloud: &str, node_hour: &str, nodes: Nodes) -> PoolCost {
    PoolCost {
        addr: addr(at),
        part: None,
        cloud: cloud.into(),
        region: "r1".into(),
        instance_type: "gpu.8x".into(),
        gpu: Some(("H100".into(), 8)),
        capacity: Capacity::OnDemand,
        node_hour: usd(node_hour),
        nodes,
        zones: None,
        prior: None,
        price_source: "catalog".into(),
        committed: None,
    }
}

/// An AWS pool growing from one node at $8 to 2–4 at $10, an AWS control
/// plane made at $0.10, and a GCP pool at $5 whose most nodes are not
/// known yet; one object that cannot be priced.
fn plan_cost() -> Cost {
    let mut aws = pool(
        "aws_eks_node_group.a",
        "aws",
        "10",
        nodes(2, Count::Known(4)),
    );
    aws.prior = Some(PriorPool {
        instance_type: "gpu.4x".into(),
        node_hour: usd("8"),
        nodes: Nodes::fixed(Count::Known(1)),
    });
    let unknown = Count::Unknown("max_size is known after apply".into());
    let gcp = pool(
        "google_container_node_pool.g",
        "gcp",
        "5",
        nodes(1, unknown),
    );
    Cost {
        pools: vec![aws, gcp],
        fees: vec![FeeCost {
            addr: addr("aws_eks_cluster.c"),
            cloud: "aws".into(),
            region: "r1".into(),
            what: "control plane".into(),
            hourly: Some(usd("0.10")),
            prior: None,
            source: "EKS".into(),
        }],
        unpriced: vec![Unpriced {
            addr: addr("azurerm_kubernetes_cluster_node_pool.z"),
            part: None,
            why: "no price for Standard_X".into(),
        }],
        purchases: vec![PurchaseCost {
            call: "train_aws".into(),
            what: "Capacity Block cb-1: 2 × p5.48xlarge".into(),
            amount: usd("1180.00"),
        }],
    }
}

#[test]
fn totals_per_cloud_and_over_all() {
    let c = plan_cost();
    assert_eq!(c.clouds(), ["aws", "gcp"]);
    let aws = c.total(Some("aws"));
    assert_eq!(
        (aws.hourly.min, aws.hourly.max),
        (Some(usd("20.10")), Some(usd("40.10")))
    );
    assert_eq!(
        (aws.prior_hourly.min, aws.prior_hourly.max),
        (Some(usd("8")), Some(usd("8")))
    );
    assert_eq!(aws.change_at_min(), Some(usd("12.10")));
    assert_eq!(aws.change_at_max(), Some(usd("32.10")));
    // An unknown count leaves the most unknown, never counted as zero.
    let gcp = c.total(Some("gcp"));
    assert_eq!((gcp.hourly.min, gcp.hourly.max), (Some(usd("5")), None));
    assert_eq!(gcp.change_at_max(), None);
    let all = c.total(None);
    assert_eq!((all.hourly.min, all.hourly.max), (Some(usd("25.10")), None));
}

#[test]
fn a_pool_says_its_gpu_hour_and_why_a_count_is_unknown() {
    let c = plan_cost();
    assert_eq!(c.pools[0].gpu_hour(), Some(usd("1.25")));
    let unknown = c.unknown_counts();
    let want = (
        "google_container_node_pool.g".to_string(),
        "max_size is known after apply".to_string(),
    );
    assert_eq!(unknown, [want]);
    assert!(!c.is_empty() && Cost::default().is_empty());
}

#[test]
fn a_saved_plan_keeps_the_cost_as_it_was() {
    let c = plan_cost();
    let back = Cost::from_json(&c.to_json()).expect("the cost read back");
    assert_eq!(back, c);
}
