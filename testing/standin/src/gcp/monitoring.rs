//! Cloud Monitoring's `projects.timeSeries.list` for what Cloud NAT
//! gateways sent out (`router.googleapis.com/nat/sent_bytes_count`, a
//! DELTA INT64 series per gateway of the monitored resource `nat_gateway`),
//! the egress `strata report` reads. The bytes come from the sandbox's
//! control endpoint (`POST /egress`), as a cloud would meter the traffic
//! of a training run; points are given as recorded, whatever aggregation
//! is asked (a sum over them is the same).

use super::*;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

const SENT: &str = "router.googleapis.com/nat/sent_bytes_count";

/// Bytes one gateway sent out, as one point.
pub(super) struct Sent {
    labels: Json,
    at: OffsetDateTime,
    bytes: u64,
}

impl World {
    /// Every Cloud NAT gateway here sent `bytes` out at `at`: how many
    /// gateways there are.
    pub(super) fn egress(&mut self, bytes: u64, at: OffsetDateTime) -> usize {
        let mut gateways = Vec::new();
        for (key, router) in &self.objects {
            let parts: Vec<&str> = key.split('/').collect();
            let ["projects", project, "regions", region, "routers", _] = parts.as_slice() else {
                continue;
            };
            for nat in router["nats"].as_array().into_iter().flatten() {
                gateways.push(json!({
                    "project_id": project,
                    "region": region,
                    "router_id": router["id"],
                    "gateway_name": nat["name"],
                }));
            }
        }
        let found = gateways.len();
        for labels in gateways {
            self.nat_sent.push(Sent { labels, at, bytes });
        }
        found
    }

    pub(super) fn monitoring(&mut self, req: &Req, s: &[&str]) -> Response<Body> {
        match (s, &req.method) {
            (["projects", p, "timeSeries"], &Method::GET) => self.time_series(req, p),
            _ => not_found(&s.join("/")),
        }
    }

    fn time_series(&self, req: &Req, project: &str) -> Response<Body> {
        let terms = match terms(&req.param("filter").unwrap_or_default()) {
            Ok(t) => t,
            Err(why) => return bad(&why),
        };
        let at = |name: &str| {
            req.param(name)
                .and_then(|t| OffsetDateTime::parse(&t, &Rfc3339).ok())
        };
        let (Some(start), Some(end)) = (at("interval.startTime"), at("interval.endTime")) else {
            return bad(
                "Field interval.endTime had an invalid value: an RFC 3339 time is required",
            );
        };
        if terms.get("metric.type").map(String::as_str) != Some(SENT) {
            return json(200, json!({}));
        }
        let wanted = |labels: &Json| {
            labels["project_id"] == project
                && terms
                    .iter()
                    .all(|(k, v)| match k.strip_prefix("resource.labels.") {
                        Some(label) => labels[label] == v.as_str(),
                        None => true,
                    })
        };
        let mut series: BTreeMap<String, (Json, Vec<Json>)> = BTreeMap::new();
        for sent in self.nat_sent.iter().filter(|s| start <= s.at && s.at < end) {
            if !wanted(&sent.labels) {
                continue;
            }
            let when = sent.at.format(&Rfc3339).unwrap_or_default();
            let point = json!({
                "interval": {"startTime": when, "endTime": when},
                "value": {"int64Value": sent.bytes.to_string()},
            });
            let entry = series
                .entry(sent.labels.to_string())
                .or_insert_with(|| (sent.labels.clone(), Vec::new()));
            entry.1.push(point);
        }
        let found: Vec<Json> = series
            .into_values()
            .map(|(labels, points)| {
                json!({
                    "metric": {"type": SENT, "labels": {}},
                    "resource": {"type": "nat_gateway", "labels": labels},
                    "metricKind": "DELTA",
                    "valueType": "INT64",
                    "unit": "By",
                    "points": points,
                })
            })
            .collect();
        json(200, json!({"timeSeries": found, "unit": "By"}))
    }
}

/// A filter's terms: `key = "value"` joined by `AND`.
fn terms(filter: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for term in filter
        .split(" AND ")
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        let refused =
            || format!("Field filter had an invalid value of \"{filter}\": cannot read {term:?}");
        let (key, value) = term.split_once('=').ok_or_else(refused)?;
        let value = value.trim();
        let quoted = value.len() >= 2 && value.starts_with('"') && value.ends_with('"');
        if !quoted {
            return Err(refused());
        }
        out.insert(
            key.trim().to_string(),
            value[1..value.len() - 1].to_string(),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::terms;

    #[test]
    fn a_filter_is_terms_joined_by_and() {
        let t =
            terms("metric.type = \"a/b\" AND resource.labels.region=\"r1\"").unwrap_or_default();
        assert_eq!(t.get("metric.type").map(String::as_str), Some("a/b"));
        assert_eq!(
            t.get("resource.labels.region").map(String::as_str),
            Some("r1")
        );
        assert!(terms("metric.type = a").is_err());
    }
}
