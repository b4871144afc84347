//! What EC2 recorded of an EKS node group's instances, as its guide
//! "Find interrupted Spot Instances" reads it: the group's instances
//! (tagged `eks:cluster-name` and `eks:nodegroup-name` by EKS) that
//! stopped or terminated, each with the time in its state transition
//! reason (`Service initiated (2026-11-19 12:00:00 GMT)`); those whose
//! state reason is `Server.SpotInstanceTermination` or
//! `Server.SpotInstanceShutdown` were interrupted. EC2 shows a terminated
//! instance for about an hour, so a drift cron must run at least hourly
//! for nothing to be missed.
//!
//! Egress is what the cluster network's NAT gateways sent out, as
//! CloudWatch meters it: `BytesOutToDestination` in namespace
//! `AWS/NATGateway` by `NatGatewayId`, summed hour by hour.

use crate::error::api;
use crate::Clients;
use aws_sdk_cloudwatch::types::{Dimension, Metric, MetricDataQuery, MetricStat};
use aws_sdk_ec2::types::{Filter, Instance};
use aws_smithy_types::date_time::Format;
use aws_smithy_types::DateTime;
use strata_provider::records::{Records, RecordsAsk};
use strata_provider::DriverError;

const NODE_GROUP: &str = "aws_eks_node_group";

/// About how long EC2 shows a terminated instance, in seconds.
const SHOWN_FOR: i64 = 3600;

/// The state reasons of an interrupted Spot Instance.
const INTERRUPTED: [&str; 2] = [
    "Server.SpotInstanceTermination",
    "Server.SpotInstanceShutdown",
];

pub async fn pool_records(c: &Clients, ask: &RecordsAsk) -> Result<Option<Records>, DriverError> {
    if ask.type_name != NODE_GROUP {
        return Ok(None);
    }
    let text = |k: &str| ask.pool[k].as_str().unwrap_or_default().to_string();
    let (cluster, group) = (text("cluster_name"), text("node_group_name"));
    let since = moment(&ask.since)?;
    let until = moment(&ask.until)?;
    let filter = |name: &str, values: &[&str]| {
        Filter::builder()
            .name(name)
            .set_values(Some(values.iter().map(|v| v.to_string()).collect()))
            .build()
    };
    let mut pages = c
        .ec2
        .describe_instances()
        .filters(filter("tag:eks:cluster-name", &[&cluster]))
        .filters(filter("tag:eks:nodegroup-name", &[&group]))
        .filters(filter(
            "instance-state-name",
            &["shutting-down", "terminated", "stopping", "stopped"],
        ))
        .into_paginator()
        .send();
    let mut records = Records {
        short: (until - since > SHOWN_FOR).then(|| {
            let hours = (until - since) as f64 / 3600.0;
            format!("EC2 shows a terminated instance for about an hour and this span was {hours:.1} h: instances that stopped before its last hour may be missing (run the drift cron hourly)")
        }),
        // Metrics read or not, the record of interruptions stands.
        egress: egress(&c.cloudwatch, ask, since, until)
            .await
            .unwrap_or_else(|e| Err(e.to_string())),
        ..Records::default()
    };
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| api("DescribeInstances", e))?;
        for i in page.reservations().iter().flat_map(|r| r.instances()) {
            if stopped_at(i).is_some_and(|t| since <= t && t < until) {
                records.stopped += 1;
                records.preempted += u64::from(interrupted(i));
            }
        }
    }
    Ok(Some(records))
}

const NAT: &str = "aws_nat_gateway";

/// Bytes the cluster network's NAT gateways sent out over the span, one
/// GetMetricData for them all (an hour's sum per point); why not, where
/// the network has no gateway in the state.
async fn egress(
    cw: &aws_sdk_cloudwatch::Client,
    ask: &RecordsAsk,
    since: i64,
    until: i64,
) -> Result<Result<u64, String>, DriverError> {
    let gateways: Vec<&str> = ask
        .network
        .iter()
        .filter(|n| n.type_name == NAT)
        .filter_map(|n| n.object["id"].as_str())
        .collect();
    if gateways.is_empty() {
        return Ok(Err(
            "no NAT gateway of the pool's cluster network in the state".into(),
        ));
    }
    let queries = gateways.iter().enumerate().map(|(n, id)| {
        let metric = Metric::builder()
            .namespace("AWS/NATGateway")
            .metric_name("BytesOutToDestination")
            .dimensions(Dimension::builder().name("NatGatewayId").value(*id).build())
            .build();
        let stat = MetricStat::builder()
            .metric(metric)
            .period(3600)
            .stat("Sum")
            .build();
        MetricDataQuery::builder()
            .id(format!("sent{n}"))
            .metric_stat(stat)
            .return_data(true)
            .build()
    });
    let mut pages = cw
        .get_metric_data()
        .set_metric_data_queries(Some(queries.collect()))
        .start_time(DateTime::from_secs(since))
        .end_time(DateTime::from_secs(until))
        .into_paginator()
        .send();
    let mut total = 0.0;
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| api("GetMetricData", e))?;
        for result in page.metric_data_results() {
            total += result.values().iter().sum::<f64>();
        }
    }
    Ok(Ok(total.round() as u64))
}

/// Seconds since the epoch of an RFC 3339 time.
fn moment(t: &str) -> Result<i64, DriverError> {
    let parsed = DateTime::from_str(t, Format::DateTime).map(|d| d.secs());
    parsed.map_err(|e| DriverError::InvalidConfig {
        type_name: NODE_GROUP.into(),
        detail: format!("{t:?} is not an RFC 3339 time: {e}"),
    })
}

fn interrupted(i: &Instance) -> bool {
    let code = i.state_reason().and_then(|r| r.code()).unwrap_or_default();
    INTERRUPTED.contains(&code)
}

/// When the instance stopped (seconds since the epoch), from its state
/// transition reason: the time in parentheses, `(2026-11-19 12:00:00 GMT)`.
fn stopped_at(i: &Instance) -> Option<i64> {
    when(i.state_transition_reason()?)
}

fn when(reason: &str) -> Option<i64> {
    let inside = reason.rsplit_once('(')?.1.strip_suffix(')')?;
    let (day, clock) = inside.strip_suffix(" GMT")?.split_once(' ')?;
    let stamp = format!("{day}T{clock}Z");
    DateTime::from_str(&stamp, Format::DateTime)
        .ok()
        .map(|d| d.secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_is_read_from_the_transition_reason() {
        let t = when("Service initiated (2026-11-19 12:00:05 GMT)");
        assert_eq!(t, Some(1_795_089_605));
        assert_eq!(when("User initiated"), None);
        assert_eq!(when("Service initiated (yesterday)"), None);
    }
}
