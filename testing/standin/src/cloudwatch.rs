//! CloudWatch's `GetMetricData` for what NAT gateways sent out
//! (`BytesOutToDestination` in namespace `AWS/NATGateway`, by
//! `NatGatewayId`), which moto 5.2.5 cannot answer: the AWS SDKs speak
//! Smithy's RPC v2 CBOR protocol to CloudWatch (`POST
//! /service/GraniteServiceVersion20100801/operation/GetMetricData`, a CBOR
//! body, timestamps as CBOR tag 1), and moto reads only the query and
//! JSON protocols. The proxy notes the gateways moto makes (from
//! `CreateNatGateway`'s answers) and the bytes the sandbox's control
//! endpoint meters through them (`POST /egress`), and answers the sums
//! per period as CloudWatch does.

use crate::{Body, Req};
use bytes::Bytes;
use ciborium::Value;
use http_body_util::Full;
use hyper::{Method, Response};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use time::OffsetDateTime;

const PATH: &str = "/service/GraniteServiceVersion20100801/operation/";
const NAMESPACE: &str = "AWS/NATGateway";
const SENT: &str = "BytesOutToDestination";

/// Bytes one gateway sent out at a time.
struct Sent {
    gateway: String,
    at: i64,
    bytes: u64,
}

#[derive(Default)]
struct Meters {
    /// The NAT gateways that exist now.
    gateways: BTreeSet<String>,
    /// What they sent (kept after a gateway is deleted, as CloudWatch
    /// keeps a metric's points).
    sent: Vec<Sent>,
}

/// A handle on the metered gateways (cloned handles share them).
#[derive(Clone, Default)]
pub struct NatMetrics(Arc<Mutex<Meters>>);

impl NatMetrics {
    fn with<T>(&self, f: impl FnOnce(&mut Meters) -> T) -> T {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut m)
    }

    /// Notes a gateway moto made (`CreateNatGateway`'s answer) or one a
    /// request deletes, from a request moto answered with success.
    pub(crate) fn note(&self, request: &[u8], answer: &[u8]) {
        let request = String::from_utf8_lossy(request);
        if request.starts_with("Action=CreateNatGateway") {
            let answer = String::from_utf8_lossy(answer);
            if let Some(id) = between(&answer, "<natGatewayId>", "</natGatewayId>") {
                self.with(|m| m.gateways.insert(id.to_string()));
            }
        } else if request.starts_with("Action=DeleteNatGateway") {
            let id = request
                .split('&')
                .find_map(|kv| kv.strip_prefix("NatGatewayId="));
            if let Some(id) = id {
                self.with(|m| m.gateways.remove(id));
            }
        }
    }

    /// Every gateway sent `bytes` out at `at`: how many gateways there are.
    pub fn meter(&self, bytes: u64, at: OffsetDateTime) -> usize {
        self.with(|m| {
            let at = at.unix_timestamp();
            let sent = m.gateways.iter().map(|gateway| Sent {
                gateway: gateway.clone(),
                at,
                bytes,
            });
            let sent: Vec<Sent> = sent.collect();
            m.sent.extend(sent);
            m.gateways.len()
        })
    }

    /// What meters egress for the control endpoint.
    pub fn egresser(&self) -> crate::capacity::Egresser {
        let me = self.clone();
        Arc::new(move |bytes, at| me.meter(bytes, at))
    }

    /// CloudWatch's answer, when `req` is a call to it.
    pub(crate) fn answer(&self, req: &Req) -> Option<Response<Body>> {
        let operation = req.path.strip_prefix(PATH)?;
        let cbor = req
            .headers
            .get("smithy-protocol")
            .is_some_and(|p| p == "rpc-v2-cbor");
        Some(match (operation, &req.method) {
            _ if !cbor => error(
                "InvalidParameterValue",
                "this endpoint speaks the rpc-v2-cbor protocol (header smithy-protocol)",
            ),
            ("GetMetricData", &Method::POST) => match ciborium::from_reader(&req.body[..]) {
                Ok(asked) => self.metric_data(&asked).unwrap_or_else(|e| e),
                Err(e) => error("SerializationException", &format!("not CBOR: {e}")),
            },
            _ => error(
                "UnknownOperationException",
                &format!("the stand-in answers GetMetricData only, not {operation}"),
            ),
        })
    }

    fn metric_data(&self, asked: &Value) -> Result<Response<Body>, Response<Body>> {
        let time = |k: &str| {
            field(asked, k)
                .and_then(seconds)
                .ok_or_else(|| invalid(&format!("The parameter {k} is required.")))
        };
        let (start, end) = (time("StartTime")?, time("EndTime")?);
        if start >= end {
            return Err(invalid(
                "The parameter StartTime must be less than the parameter EndTime.",
            ));
        }
        let queries = match field(asked, "MetricDataQueries") {
            Some(Value::Array(q)) if !q.is_empty() => q,
            _ => return Err(invalid("The parameter MetricDataQueries is required.")),
        };
        let mut results = Vec::new();
        for q in queries {
            let query = Query::of(q)?;
            results.push(self.with(|m| query.result(m, start, end)));
        }
        let answer = map(vec![
            ("MetricDataResults", Value::Array(results)),
            ("Messages", Value::Array(vec![])),
        ]);
        Ok(cbor(200, &answer))
    }
}

/// One query of a `GetMetricData` request.
struct Query {
    id: String,
    gateway: Option<String>,
    period: i64,
    /// Whether it asks for the sum of NAT gateways' bytes sent out.
    sent: bool,
}

impl Query {
    fn of(q: &Value) -> Result<Query, Response<Body>> {
        let text = |v: Option<&Value>| v.and_then(Value::as_text).map(str::to_string);
        let id = text(field(q, "Id")).unwrap_or_default();
        let well_formed = id.starts_with(|c: char| c.is_ascii_lowercase())
            && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !well_formed {
            return Err(invalid(&format!(
                "The value {id:?} for parameter MetricDataQueries.member.Id is invalid: it must start with a lowercase letter and hold only letters, digits and underscores."
            )));
        }
        let stat = field(q, "MetricStat").ok_or_else(|| {
            invalid("The stand-in answers queries with a MetricStat only, not expressions.")
        })?;
        let period = field(stat, "Period")
            .and_then(|p| p.as_integer())
            .and_then(|p| i64::try_from(p).ok())
            .filter(|p| *p > 0 && p % 60 == 0)
            .ok_or_else(|| invalid("The parameter Period must be a multiple of 60."))?;
        let metric = field(stat, "Metric");
        let dimension = |name: &str| {
            let dims = metric.and_then(|m| field(m, "Dimensions"))?.as_array()?;
            dims.iter()
                .find(|d| text(field(d, "Name")).as_deref() == Some(name))
                .and_then(|d| text(field(d, "Value")))
        };
        let named = |k: &str| text(metric.and_then(|m| field(m, k)));
        Ok(Query {
            id,
            gateway: dimension("NatGatewayId"),
            period,
            sent: named("Namespace").as_deref() == Some(NAMESPACE)
                && named("MetricName").as_deref() == Some(SENT)
                && text(field(stat, "Stat")).as_deref() == Some("Sum"),
        })
    }

    /// The query's points: the bytes of each period from `start` that
    /// had any, newest first (CloudWatch's default `TimestampDescending`).
    fn result(&self, m: &Meters, start: i64, end: i64) -> Value {
        let mut sums = std::collections::BTreeMap::<i64, u64>::new();
        let wanted = m.sent.iter().filter(|s| {
            self.sent && Some(&s.gateway) == self.gateway.as_ref() && start <= s.at && s.at < end
        });
        for s in wanted {
            let period = start + (s.at - start) / self.period * self.period;
            *sums.entry(period).or_default() += s.bytes;
        }
        let stamps = sums
            .keys()
            .rev()
            .map(|t| Value::Tag(1, Box::new((*t).into())));
        let values = sums.values().rev().map(|b| Value::Float(*b as f64));
        map(vec![
            ("Id", Value::Text(self.id.clone())),
            ("Label", Value::Text(SENT.into())),
            ("Timestamps", Value::Array(stamps.collect())),
            ("Values", Value::Array(values.collect())),
            ("StatusCode", Value::Text("Complete".into())),
        ])
    }
}

fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.as_map()?
        .iter()
        .find(|(k, _)| k.as_text() == Some(key))
        .map(|(_, v)| v)
}

/// Seconds since the epoch of a CBOR timestamp (tag 1 on an integer or a
/// float, as Smithy's RPC v2 CBOR protocol sends them).
fn seconds(v: &Value) -> Option<i64> {
    match v {
        Value::Tag(1, inner) => match inner.as_ref() {
            Value::Integer(i) => i64::try_from(*i).ok(),
            Value::Float(f) => Some(f.floor() as i64),
            _ => None,
        },
        _ => None,
    }
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(
        entries
            .into_iter()
            .map(|(k, v)| (Value::Text(k.into()), v))
            .collect(),
    )
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let from = text.find(open)? + open.len();
    let to = from + text[from..].find(close)?;
    Some(&text[from..to])
}

fn cbor(status: u16, v: &Value) -> Response<Body> {
    let mut bytes = Vec::new();
    if ciborium::into_writer(v, &mut bytes).is_err() {
        bytes.clear();
    }
    Response::builder()
        .status(status)
        .header("content-type", "application/cbor")
        .header("smithy-protocol", "rpc-v2-cbor")
        .body(Full::new(Bytes::from(bytes)))
        .unwrap_or_default()
}

/// An error as the protocol gives one: a 400 whose CBOR body names it in
/// `__type`.
fn error(code: &str, message: &str) -> Response<Body> {
    let body = map(vec![
        (
            "__type",
            Value::Text(format!("com.amazonaws.cloudwatch#{code}")),
        ),
        ("message", Value::Text(message.into())),
    ]);
    cbor(400, &body)
}

fn invalid(message: &str) -> Response<Body> {
    error("InvalidParameterValue", message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(start: i64, end: i64, gateway: &str) -> Value {
        let stamp = |t: i64| Value::Tag(1, Box::new(t.into()));
        let dim = map(vec![
            ("Name", Value::Text("NatGatewayId".into())),
            ("Value", Value::Text(gateway.into())),
        ]);
        let metric = map(vec![
            ("Namespace", Value::Text(NAMESPACE.into())),
            ("MetricName", Value::Text(SENT.into())),
            ("Dimensions", Value::Array(vec![dim])),
        ]);
        let stat = map(vec![
            ("Metric", metric),
            ("Period", 3600.into()),
            ("Stat", Value::Text("Sum".into())),
        ]);
        let query = map(vec![
            ("Id", Value::Text("sent0".into())),
            ("MetricStat", stat),
        ]);
        map(vec![
            ("MetricDataQueries", Value::Array(vec![query])),
            ("StartTime", stamp(start)),
            ("EndTime", stamp(end)),
        ])
    }

    fn values(answer: Response<Body>) -> Vec<f64> {
        let bytes = crate::ready_bytes(answer.into_body());
        let v: Value = ciborium::from_reader(&bytes[..]).expect("CBOR");
        let results = field(&v, "MetricDataResults").and_then(Value::as_array);
        let first = results.and_then(|r| r.first()).expect("a result");
        let values = field(first, "Values").and_then(Value::as_array);
        let floats = values.into_iter().flatten().filter_map(Value::as_float);
        floats.collect()
    }

    #[test]
    fn bytes_are_summed_per_period_of_the_gateway_asked() {
        let m = NatMetrics::default();
        m.note(
            b"Action=CreateNatGateway&SubnetId=subnet-1",
            b"<natGateway><natGatewayId>nat-1</natGatewayId></natGateway>",
        );
        let at = |t: i64| OffsetDateTime::from_unix_timestamp(t).expect("time");
        assert_eq!(m.meter(10, at(100)), 1);
        m.meter(5, at(200));
        m.meter(7, at(4000));
        m.meter(1, at(9000));
        let answer = m.metric_data(&ask(0, 7200, "nat-1")).expect("answered");
        assert_eq!(values(answer), vec![7.0, 15.0]);
        let other = m.metric_data(&ask(0, 7200, "nat-2")).expect("answered");
        assert!(values(other).is_empty());
        m.note(b"Action=DeleteNatGateway&NatGatewayId=nat-1", b"");
        assert_eq!(m.meter(3, at(300)), 0, "a deleted gateway sends nothing");
        let kept = m.metric_data(&ask(0, 7200, "nat-1")).expect("answered");
        assert_eq!(values(kept), vec![7.0, 15.0], "its points are kept");
    }

    #[test]
    fn a_malformed_ask_is_refused() {
        let m = NatMetrics::default();
        assert!(m.metric_data(&ask(7200, 0, "nat-1")).is_err());
        let mut no_id = ask(0, 7200, "nat-1");
        if let Value::Map(entries) = &mut no_id {
            entries.retain(|(k, _)| k.as_text() != Some("MetricDataQueries"));
        }
        assert!(m.metric_data(&no_id).is_err());
    }
}
