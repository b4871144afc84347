//! What a drift run asks the clouds for its observation beyond the
//! GPUs: each placed pool's record of preempted and stopped nodes since
//! the previous observation, through the driver configured for the
//! pool's module call.

use super::prepare::call_driver;
use crate::builtin::Drivers;
use crate::placement::{Decision, PoolRecords, RecordsSeen};
use std::collections::BTreeMap;
use strata_provider::records::{NetworkObject, RecordsAsk};
use strata_state::model::InstanceKey;
use strata_state::State;

/// The resource types a cluster module makes a node pool with.
const NODE_POOLS: [&str; 3] = [
    "aws_eks_node_group",
    "google_container_node_pool",
    "azurerm_kubernetes_cluster_node_pool",
];

/// Each placed pool's records up to `until`, from `since` (the previous
/// drift run) or, for the first run, from the pool's placement; asked on
/// `rt`.
pub(super) fn records(
    decisions: &[Decision],
    state: &State,
    (drivers, rt): (&Drivers, &tokio::runtime::Runtime),
    (since, until): (Option<&str>, &str),
) -> BTreeMap<String, PoolRecords> {
    let mut out = BTreeMap::new();
    for d in decisions {
        let Some(placed) = d.recorded.as_ref().and_then(|r| r.chosen.as_ref()) else {
            continue;
        };
        let Some(c) = d.candidates.iter().find(|c| c.at == placed.at) else {
            continue;
        };
        let pool = d.pool.split_once('.').map_or(d.pool.as_str(), |(_, p)| p);
        let since = since.unwrap_or(&placed.since);
        let seen = match pool_object(state, &c.call, pool) {
            Some((type_name, object)) => {
                let ask = RecordsAsk {
                    type_name: type_name.to_string(),
                    pool: object,
                    network: network_objects(state, &c.call),
                    since: since.to_string(),
                    until: until.to_string(),
                };
                ask_cloud(drivers, rt, &c.call, &ask)
            }
            None => Err(format!("no node pool of module.{} in the state", c.call)),
        };
        let since = since.to_string();
        out.insert(d.pool.clone(), PoolRecords { since, seen });
    }
    out
}

fn ask_cloud(
    drivers: &Drivers,
    rt: &tokio::runtime::Runtime,
    call: &str,
    ask: &RecordsAsk,
) -> RecordsSeen {
    let provider = ask.type_name.split('_').next().unwrap_or_default();
    let driver = call_driver(drivers, provider, call)?;
    match rt.block_on(driver.pool_records(ask)) {
        Ok(Some(r)) => Ok(r),
        Ok(None) => Err(format!(
            "strata does not yet read {provider}'s record of preempted nodes"
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// The NAT gateways a cluster module's network sends traffic out by.
const GATEWAYS: [&str; 3] = [
    "aws_nat_gateway",
    "google_compute_router_nat",
    "azurerm_nat_gateway",
];

/// The network objects of module call `call` its egress is metered at.
fn network_objects(state: &State, call: &str) -> Vec<NetworkObject> {
    let in_call = |r: &&strata_state::ResourceState| {
        r.id.module.steps().first().is_some_and(|s| s.call == call)
            && GATEWAYS.contains(&r.id.type_name.as_str())
    };
    state
        .resources
        .iter()
        .filter(in_call)
        .flat_map(|r| {
            let live = r.instances.iter().filter(|i| i.deposed.is_none());
            live.filter_map(|i| {
                Some(NetworkObject {
                    type_name: r.id.type_name.clone(),
                    object: i.attributes.json().ok()?,
                })
            })
        })
        .collect()
}

/// The node pool `pool` of module call `call`, as the state holds it: its
/// type and attributes.
fn pool_object(state: &State, call: &str, pool: &str) -> Option<(String, serde_json::Value)> {
    state.resources.iter().find_map(|r| {
        let in_call = r.id.module.steps().first().is_some_and(|s| s.call == call);
        if !in_call || r.id.name != "pool" || !NODE_POOLS.contains(&r.id.type_name.as_str()) {
            return None;
        }
        let i = r.instances.iter().find(|i| {
            i.deposed.is_none() && matches!(&i.index_key, Some(InstanceKey::Str(k)) if k == pool)
        })?;
        Some((r.id.type_name.clone(), i.attributes.json().ok()?))
    })
}
