//! What Azure recorded of an AKS pool's VMs and of its cluster's traffic
//! out.
//!
//! Evictions are Resource Health's: each VM of a scale set carries its
//! latest health annotation, which Azure Resource Graph serves in the
//! `HealthResources` table (type `microsoft.resourcehealth/
//! resourceannotations`; "VM availability information in Azure Resource
//! Graph"). A spot eviction is annotated `VirtualMachinePreempted`; a VM
//! stopped or deallocated for another reason carries one of [`STOPS`].
//! A pool's VMs are those of its scale set in the cluster's node resource
//! group, which AKS names `aks-POOL-NNNNNNNN-vmss`. Resource Health does
//! not annotate a VM its scale set deletes as it shrinks, so stops by a
//! scale-down are not in the count, and the record says so.
//!
//! Egress is what the cluster's outbound load balancer (AKS makes one
//! named `kubernetes` in the node resource group) sent out, as Azure
//! Monitor meters it: `ByteCount` with `Direction eq 'Out'`, each hour's
//! Total summed.

use crate::Ctx;
use serde_json::{json, Value as Json};
use strata_provider::records::{Records, RecordsAsk};
use strata_provider::DriverError;
use strata_rest::Method;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

const NODE_POOL: &str = "azurerm_kubernetes_cluster_node_pool";
const GRAPH_API: &str = "2021-03-01";
const METRICS_API: &str = "2023-10-01";

/// The annotations of a VM that stopped running, besides an eviction.
const STOPS: [&str; 3] = [
    "VirtualMachineDeallocationInitiated",
    "VirtualMachineStopInitiatedByControlPlane",
    "VirtualMachineStoppedInternally",
];
const EVICTED: &str = "VirtualMachinePreempted";

/// How long Resource Graph tracks a VM's availability, in seconds.
const TRACKED_FOR: i64 = 14 * 24 * 3600;

pub async fn pool_records(c: &Ctx, ask: &RecordsAsk) -> Result<Option<Records>, DriverError> {
    if ask.type_name != NODE_POOL {
        return Ok(None);
    }
    let text = |k: &str| ask.pool[k].as_str().unwrap_or_default().to_string();
    let (cluster_id, pool) = (text("kubernetes_cluster_id"), text("name"));
    let cluster = c
        .rest
        .call(
            "read managed cluster",
            Method::GET,
            &c.url(&cluster_id, crate::arm::KUBERNETES_CLUSTER.api_version),
            None,
        )
        .await?
        .body;
    let group = cluster["properties"]["nodeResourceGroup"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let span = Span::of(ask)?;
    let annotations = annotations(c, &group).await?;
    let mut records = tally(&annotations, &pool, &span);
    records.egress = egress(c, &group, ask)
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
    Ok(Some(records))
}

/// The evictions and stops among `rows` on pool `pool`'s VMs in `span`.
fn tally(rows: &[Json], pool: &str, span: &Span) -> Records {
    let scale_set = format!(
        "/virtualmachinescalesets/aks-{}-",
        pool.to_ascii_lowercase()
    );
    let mut records = Records {
        short: Some(if span.until - span.since > TRACKED_FOR {
            format!("Resource Graph keeps VMs' health annotations for 14 days and this span was {:.1} days; and Resource Health annotates no VM a scale-down deletes, so those stops are not counted (the rate is an upper bound)", (span.until - span.since) as f64 / 86_400.0)
        } else {
            "Resource Health annotates no VM a scale-down deletes, so those stops are not counted (the rate is an upper bound)".into()
        }),
        ..Records::default()
    };
    for row in rows {
        let p = &row["properties"];
        let target = p["targetResourceId"].as_str().unwrap_or_default();
        let on_pool = target.to_ascii_lowercase().contains(&scale_set);
        let when = p["occurredTime"]
            .as_str()
            .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
            .map(OffsetDateTime::unix_timestamp);
        if !on_pool || !when.is_some_and(|t| span.since <= t && t < span.until) {
            continue;
        }
        let name = p["annotationName"].as_str().unwrap_or_default();
        if name == EVICTED {
            records.preempted += 1;
            records.stopped += 1;
        } else if STOPS.contains(&name) {
            records.stopped += 1;
        }
    }
    records
}

/// Every health annotation of the VMs in resource group `group`, read
/// page by page.
async fn annotations(c: &Ctx, group: &str) -> Result<Vec<Json>, DriverError> {
    let subscription = c.subscription(NODE_POOL)?;
    let query = format!("HealthResources | where type =~ 'microsoft.resourcehealth/resourceannotations' and resourceGroup =~ '{}'", group.replace('\'', ""));
    let url = c.url("/providers/Microsoft.ResourceGraph/resources", GRAPH_API);
    let mut rows = Vec::new();
    let mut skip: Option<String> = None;
    loop {
        let mut options = json!({ "$top": 1000, "resultFormat": "objectArray" });
        if let Some(token) = &skip {
            options["$skipToken"] = json!(token);
        }
        let body = json!({ "subscriptions": [subscription], "query": query, "options": options });
        let page = c
            .rest
            .call("query Resource Graph", Method::POST, &url, Some(&body))
            .await?
            .body;
        rows.extend(page["data"].as_array().into_iter().flatten().cloned());
        match page["$skipToken"].as_str() {
            Some(t) if !t.is_empty() => skip = Some(t.to_string()),
            _ => return Ok(rows),
        }
    }
}

/// Bytes the cluster's outbound load balancer sent out over the span.
async fn egress(
    c: &Ctx,
    group: &str,
    ask: &RecordsAsk,
) -> Result<Result<u64, String>, DriverError> {
    let subscription = c.subscription(NODE_POOL)?;
    let balancer = format!("/subscriptions/{subscription}/resourceGroups/{group}/providers/Microsoft.Network/loadBalancers/kubernetes");
    let mut url = c.url(
        &format!("{balancer}/providers/Microsoft.Insights/metrics"),
        METRICS_API,
    );
    for (k, v) in [
        ("metricnames", "ByteCount"),
        ("timespan", &format!("{}/{}", ask.since, ask.until)),
        ("interval", "PT1H"),
        ("aggregation", "Total"),
        ("$filter", "Direction eq 'Out'"),
    ] {
        url = strata_rest::with_query(&url, k, v);
    }
    let answer = c
        .rest
        .call("list load balancer metrics", Method::GET, &url, None)
        .await?
        .body;
    Ok(sent(&answer))
}

/// The bytes of a Metrics_List answer, or why there are none.
fn sent(answer: &Json) -> Result<u64, String> {
    let metric = &answer["value"][0];
    match metric["errorCode"].as_str() {
        None | Some("Success") => {}
        Some(code) => {
            let why = metric["errorMessage"].as_str().unwrap_or_default();
            return Err(format!(
                "Azure Monitor answered {code} for ByteCount: {why}"
            ));
        }
    }
    let total: f64 = metric["timeseries"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["data"].as_array().into_iter().flatten())
        .filter_map(|p| p["total"].as_f64())
        .sum();
    Ok(total.round() as u64)
}

/// The span asked about, in seconds since the epoch.
struct Span {
    since: i64,
    until: i64,
}

impl Span {
    fn of(ask: &RecordsAsk) -> Result<Span, DriverError> {
        let at = |t: &str| {
            OffsetDateTime::parse(t, &Rfc3339)
                .map(OffsetDateTime::unix_timestamp)
                .map_err(|e| DriverError::InvalidConfig {
                    type_name: NODE_POOL.into(),
                    detail: format!("{t:?} is not an RFC 3339 time: {e}"),
                })
        };
        Ok(Span {
            since: at(&ask.since)?,
            until: at(&ask.until)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotation(vm: &str, name: &str, at: &str) -> Json {
        json!({"type": "microsoft.resourcehealth/resourceannotations", "properties": {
            "targetResourceId": format!("/subscriptions/s/resourceGroups/MC_rg_a_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/{vm}"),
            "annotationName": name,
            "occurredTime": at,
        }})
    }

    #[test]
    fn evictions_and_stops_are_counted_on_the_pools_scale_set_in_the_span() {
        let rows = [
            annotation(
                "aks-h100-12345678-vmss/virtualMachines/3",
                EVICTED,
                "2026-11-02T10:00:00.5280000Z",
            ),
            annotation(
                "aks-h100-12345678-vmss/virtualMachines/4",
                "VirtualMachineDeallocationInitiated",
                "2026-11-02T11:00:00Z",
            ),
            annotation(
                "aks-h100-12345678-vmss/virtualMachines/5",
                "VirtualMachineRestarted",
                "2026-11-02T11:00:00Z",
            ),
            // Another pool's, and one before the span.
            annotation(
                "aks-h1000-12345678-vmss/virtualMachines/1",
                EVICTED,
                "2026-11-02T10:00:00Z",
            ),
            annotation(
                "aks-h100-12345678-vmss/virtualMachines/6",
                EVICTED,
                "2026-10-31T23:59:59Z",
            ),
        ];
        let span = Span {
            since: 1_793_577_600,
            until: 1_793_577_600 + 2 * 86_400,
        };
        let r = tally(&rows, "h100", &span);
        assert_eq!((r.preempted, r.stopped), (1, 2));
        assert!(r.short.is_some_and(|s| s.contains("scale-down")));
    }

    #[test]
    fn a_metrics_answer_sums_its_hours_or_says_why_not() {
        let ok = json!({"value": [{"errorCode": "Success", "timeseries": [{"data": [{"total": 5.0}, {"total": 12e9}, {}]}]}]});
        assert_eq!(sent(&ok), Ok(12_000_000_005));
        let failed = json!({"value": [{"errorCode": "InvalidSamplingType", "errorMessage": "Sampling type is not found.", "timeseries": []}]});
        assert!(sent(&failed).is_err_and(|e| e.contains("InvalidSamplingType")));
    }
}
