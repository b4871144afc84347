//! What Compute Engine recorded of a GKE node pool's VMs: each preemption
//! is a `compute.instances.preempted` operation in the VM's zone, and a
//! VM its group deletes (a scale-down, a repair) a `delete` operation; a
//! pool's VMs are named after its instance groups (`gke-CLUSTER-POOL-…`,
//! the group's name without `-grp`). Read with one aggregated list across
//! zones per kind, kept to the span by each operation's `insertTime`.

use crate::Ctx;
use serde_json::Value as Json;
use strata_provider::records::{Records, RecordsAsk};
use strata_provider::DriverError;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

const NODE_POOL: &str = "google_container_node_pool";

pub async fn pool_records(c: &Ctx, ask: &RecordsAsk) -> Result<Option<Records>, DriverError> {
    if ask.type_name != NODE_POOL {
        return Ok(None);
    }
    let prefixes = vm_prefixes(&ask.pool);
    let project = c.project(&ask.pool, NODE_POOL)?;
    let span = Span::of(ask)?;
    let mut counts = [0u64; 2];
    for (n, kind) in counts
        .iter_mut()
        .zip(["compute.instances.preempted", "delete"])
    {
        let ops = operations(c, &project, kind).await?;
        *n = ops
            .iter()
            .filter(|op| span.holds(op) && on_pool(op, &prefixes))
            .count() as u64;
    }
    let [preempted, deleted] = counts;
    Ok(Some(Records {
        preempted,
        stopped: preempted + deleted,
        short: None,
        // Metrics read or not, the record of preemptions stands.
        egress: egress(c, &project, ask)
            .await
            .unwrap_or_else(|e| Err(e.to_string())),
    }))
}

const NAT: &str = "google_compute_router_nat";

/// Bytes the cluster network's Cloud NAT gateways sent out over the span
/// (`router.googleapis.com/nat/sent_bytes_count`, summed hour by hour);
/// why not, where the network has no gateway in the state.
async fn egress(
    c: &Ctx,
    project: &str,
    ask: &RecordsAsk,
) -> Result<Result<u64, String>, DriverError> {
    let gateways: Vec<_> = ask.network.iter().filter(|n| n.type_name == NAT).collect();
    if gateways.is_empty() {
        return Ok(Err(
            "no Cloud NAT gateway of the pool's cluster network in the state".into(),
        ));
    }
    let mut total = 0;
    for nat in gateways {
        let text = |k: &str| nat.object[k].as_str().unwrap_or_default().to_string();
        let filter = format!(
            "metric.type = \"router.googleapis.com/nat/sent_bytes_count\" AND resource.type = \"nat_gateway\" AND resource.labels.gateway_name = \"{}\" AND resource.labels.region = \"{}\"",
            text("name"),
            text("region")
        );
        let mut url = format!("{}v3/projects/{project}/timeSeries", c.endpoints.monitoring);
        for (k, v) in [
            ("filter", filter.as_str()),
            ("interval.startTime", ask.since.as_str()),
            ("interval.endTime", ask.until.as_str()),
            ("aggregation.alignmentPeriod", "3600s"),
            ("aggregation.perSeriesAligner", "ALIGN_SUM"),
        ] {
            url = strata_rest::with_query(&url, k, v);
        }
        let series = c.rest.list("list time series", &url, "timeSeries").await?;
        total += series.iter().map(sent).sum::<u64>();
    }
    Ok(Ok(total))
}

/// The bytes of one series' points (`int64Value`, a string in JSON).
fn sent(series: &Json) -> u64 {
    series["points"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let v = &p["value"]["int64Value"];
            v.as_str()
                .and_then(|s| s.parse().ok())
                .or_else(|| v.as_u64())
        })
        .sum()
}

/// The names the pool's VMs start with: each instance group's, without
/// its `-grp`, and a dash.
fn vm_prefixes(pool: &Json) -> Vec<String> {
    pool["instance_group_urls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|u| u.as_str()?.rsplit('/').next())
        .map(|group| format!("{}-", group.strip_suffix("-grp").unwrap_or(group)))
        .collect()
}

fn on_pool(op: &Json, prefixes: &[String]) -> bool {
    let vm = op["targetLink"]
        .as_str()
        .and_then(|l| l.rsplit('/').next())
        .unwrap_or("");
    prefixes.iter().any(|p| vm.starts_with(p.as_str()))
}

/// The span asked about.
struct Span {
    since: OffsetDateTime,
    until: OffsetDateTime,
}

impl Span {
    fn of(ask: &RecordsAsk) -> Result<Span, DriverError> {
        let at = |t: &str| {
            OffsetDateTime::parse(t, &Rfc3339).map_err(|e| DriverError::InvalidConfig {
                type_name: NODE_POOL.into(),
                detail: format!("{t:?} is not an RFC 3339 time: {e}"),
            })
        };
        Ok(Span {
            since: at(&ask.since)?,
            until: at(&ask.until)?,
        })
    }

    fn holds(&self, op: &Json) -> bool {
        op["insertTime"]
            .as_str()
            .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
            .is_some_and(|t| self.since <= t && t < self.until)
    }
}

/// Every zone's operations of `kind` in the project.
async fn operations(c: &Ctx, project: &str, kind: &str) -> Result<Vec<Json>, DriverError> {
    let url = format!(
        "{}projects/{project}/aggregated/operations",
        c.endpoints.compute
    );
    let url = strata_rest::with_query(&url, "filter", &format!("operationType=\"{kind}\""));
    let each_zone = |page: &Json| -> Vec<Json> {
        page["items"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.values())
            .filter_map(|scoped| scoped["operations"].as_array())
            .flatten()
            .cloned()
            .collect()
    };
    let listed = c.rest.list_with("list operations", &url, each_zone).await?;
    Ok(listed.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pools_vms_are_named_after_its_groups() {
        let pool = json!({"instance_group_urls": [
            "https://www.googleapis.com/compute/v1/projects/p/zones/z/instanceGroups/gke-train-h100-1a2b3c4d-grp"
        ]});
        let prefixes = vm_prefixes(&pool);
        assert_eq!(prefixes, vec!["gke-train-h100-1a2b3c4d-".to_string()]);
        let op = |vm: &str| json!({"targetLink": format!("https://x/zones/z/instances/{vm}")});
        assert!(on_pool(&op("gke-train-h100-1a2b3c4d-x9z8"), &prefixes));
        assert!(!on_pool(&op("gke-train-h100-ffff0000-x9z8"), &prefixes));
        assert!(!on_pool(&op("gke-train-h1000-1a2b3c4d-x9z8"), &prefixes));
    }
}
