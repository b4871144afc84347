//! Azure Monitor's metrics of the load balancer an AKS cluster sends its
//! traffic out by: AKS makes one named `kubernetes` in the cluster's node
//! resource group (outbound type `loadBalancer`, its default), and Azure
//! Monitor meters it as `ByteCount` (bytes, aggregated as Total) with
//! dimension `Direction` (`In`, `Out`). Bytes sent out are set from the
//! sandbox's control endpoint.
//!
//! `GET {load balancer}/providers/Microsoft.Insights/metrics` (API
//! 2023-10-01) answers `metricnames=ByteCount` over a `timespan` at
//! `interval=PT1H`, one point per hour of the span (0 where nothing was
//! sent), in the Metrics_List response's shape; `$filter=Direction eq
//! 'Out'` keeps the one direction metered here.

use super::*;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

const API: &str = "2023-10-01";

/// Bytes sent out through one load balancer at a time.
pub(super) struct Sent {
    balancer: String,
    at: i64,
    bytes: u64,
}

impl World {
    /// The outbound load balancer of every AKS cluster here (ids in lower
    /// case).
    fn outbound_balancers(&self) -> Vec<String> {
        self.objects
            .iter()
            .filter(|(id, _)| is_cluster(id))
            .filter_map(|(_, c)| c["properties"]["nodeResourceGroup"].as_str())
            .map(|group| {
                format!("/subscriptions/{SUBSCRIPTION}/resourcegroups/{group}/providers/microsoft.network/loadbalancers/kubernetes").to_ascii_lowercase()
            })
            .collect()
    }

    /// Meters `bytes` sent out through every cluster's load balancer at
    /// `at`: how many balancers.
    pub(super) fn egress(&mut self, bytes: u64, at: OffsetDateTime) -> usize {
        let balancers = self.outbound_balancers();
        for balancer in &balancers {
            self.sent.push(Sent {
                balancer: balancer.clone(),
                at: at.unix_timestamp(),
                bytes,
            });
        }
        balancers.len()
    }

    /// `GET RESOURCE/providers/Microsoft.Insights/metrics`; `resource` in
    /// lower case.
    pub(super) fn metrics(&self, req: &Req, resource: &str, version: &str) -> Response<Body> {
        if let Some(refused) = unless_version(version, API) {
            return refused;
        }
        if !self.outbound_balancers().iter().any(|b| b == resource) {
            return error(
                404,
                "ResourceNotFound",
                &format!("The Resource '{resource}' was not found."),
            );
        }
        let names = req.param("metricnames").unwrap_or_default();
        if names != "ByteCount" {
            return error(400, "BadRequest", &format!("Failed to find metric configuration for provider: Microsoft.Network, resource Type: loadBalancers, metric: {names}, Valid metrics: ByteCount"));
        }
        if req.param("interval").as_deref() != Some("PT1H")
            || req.param("aggregation").as_deref() != Some("Total")
        {
            return error(
                400,
                "BadRequest",
                "Only interval PT1H and aggregation Total are metered here.",
            );
        }
        let Some((from, to)) = req.param("timespan").as_deref().and_then(timespan) else {
            return error(
                400,
                "BadRequest",
                "timespan must be START/END, each ISO 8601.",
            );
        };
        let filter = req.param("$filter").unwrap_or_default();
        if !filter.is_empty() && filter.replace(' ', "") != "Directioneq'Out'" {
            return error(
                400,
                "BadRequest",
                &format!("The $filter '{filter}' is not metered here (Direction eq 'Out')."),
            );
        }
        json(200, self.byte_counts(resource, (from, to), &filter))
    }

    /// The Metrics_List answer: an hour's Total per point.
    fn byte_counts(&self, resource: &str, (from, to): (i64, i64), filter: &str) -> Json {
        let start = from - from.rem_euclid(3600);
        let points: Vec<Json> = (start..to)
            .step_by(3600)
            .map(|hour| {
                let total: u64 = self
                    .sent
                    .iter()
                    .filter(|s| s.balancer == resource && hour <= s.at && s.at < hour + 3600)
                    .map(|s| s.bytes)
                    .sum();
                json!({"timeStamp": stamp(hour), "total": total as f64})
            })
            .collect();
        let metadata = if filter.is_empty() {
            json!([])
        } else {
            json!([{"name": {"value": "direction", "localizedValue": "direction"}, "value": "Out"}])
        };
        json!({
            "cost": points.len(),
            "timespan": format!("{}/{}", stamp(from), stamp(to)),
            "interval": "PT1H",
            "value": [{
                "id": format!("{resource}/providers/Microsoft.Insights/metrics/ByteCount"),
                "type": "Microsoft.Insights/metrics",
                "name": {"value": "ByteCount", "localizedValue": "Byte Count"},
                "displayDescription": "Total number of Bytes transmitted within time period",
                "unit": "Bytes",
                "timeseries": [{"metadatavalues": metadata, "data": points}],
                "errorCode": "Success",
            }],
            "namespace": "Microsoft.Network/loadBalancers",
            "resourceregion": "eastus",
        })
    }
}

/// A cluster's own id, not one of its children's.
fn is_cluster(id: &str) -> bool {
    id.rsplit_once('/')
        .and_then(|(parent, _)| parent.rsplit_once('/'))
        .is_some_and(|(_, kind)| kind == "managedclusters")
}

fn timespan(text: &str) -> Option<(i64, i64)> {
    let (a, b) = text.split_once('/')?;
    let at = |t: &str| {
        OffsetDateTime::parse(t, &Rfc3339)
            .ok()
            .map(|t| t.unix_timestamp())
    };
    let (from, to) = (at(a)?, at(b)?);
    (from < to).then_some((from, to))
}

fn stamp(secs: i64) -> String {
    OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clusters_own_id_is_told_from_its_childrens() {
        let cluster = "/subscriptions/s/resourcegroups/rg/providers/microsoft.containerservice/managedclusters/a";
        assert!(is_cluster(cluster));
        assert!(!is_cluster(&format!("{cluster}/agentpools/gpu")));
    }

    #[test]
    fn hours_without_bytes_answer_zero_and_the_span_bounds_the_sum() {
        let lb = "/lb".to_string();
        let w = World {
            sent: vec![
                Sent {
                    balancer: lb.clone(),
                    at: 7200 + 60,
                    bytes: 5,
                },
                Sent {
                    balancer: lb.clone(),
                    at: 3 * 3600,
                    bytes: 7,
                },
            ],
            ..World::default()
        };
        let body = w.byte_counts(&lb, (3600, 3 * 3600), "Direction eq 'Out'");
        let data = &body["value"][0]["timeseries"][0]["data"];
        let totals: Vec<f64> = data
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["total"].as_f64())
            .collect();
        assert_eq!(totals, vec![0.0, 5.0]);
    }
}
