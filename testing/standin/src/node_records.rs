//! EC2's record of the instances of EKS node groups that stopped, which
//! moto keeps none of (its node groups launch no instances): a Spot
//! interruption the sandbox's control endpoint asks for (`POST /preempt`,
//! state reason `Server.SpotInstanceTermination`) and the instances a
//! shrinking group terminates (`Client.UserInitiatedShutdown`), each
//! terminated with the time in its state transition reason, as EC2 shows
//! them. The proxy answers `DescribeInstances` filtered by a node group's
//! `eks:nodegroup-name` tag from here.

use crate::clock::Clock;
use crate::ec2_query::{answer, escape, Form};
use crate::{Body, Req};
use hyper::Response;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use time::OffsetDateTime;

/// A node group as the proxy last sized it.
#[derive(Clone)]
struct Group {
    desired: u64,
    spot: bool,
    instance_type: String,
}

/// An instance that stopped.
struct Stopped {
    cluster: String,
    group: String,
    id: String,
    spot: bool,
    instance_type: String,
    code: &'static str,
    at: OffsetDateTime,
}

#[derive(Default)]
struct Records {
    groups: BTreeMap<(String, String), Group>,
    stopped: Vec<Stopped>,
    next: u64,
}

/// A handle on the records (cloned handles share them).
#[derive(Clone, Default)]
pub struct NodeRecords {
    records: Arc<Mutex<Records>>,
    clock: Clock,
}

const INTERRUPTED: &str = "Server.SpotInstanceTermination";
const SCALED_IN: &str = "Client.UserInitiatedShutdown";

impl NodeRecords {
    /// Records stamped by `clock`'s time.
    pub fn new(clock: Clock) -> NodeRecords {
        NodeRecords {
            records: Default::default(),
            clock,
        }
    }

    /// The clock the records are stamped by.
    pub fn clock(&self) -> Clock {
        self.clock.clone()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Records) -> T) -> T {
        let mut r = self.records.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut r)
    }

    /// Node group `cluster/group` now wants `desired` instances: those
    /// above it are terminated.
    pub(crate) fn sized(
        &self,
        cluster: &str,
        group: &str,
        desired: u64,
        spot: bool,
        instance_type: &str,
    ) {
        let at = self.clock.now();
        self.with(|r| {
            let key = (cluster.to_string(), group.to_string());
            let was = r.groups.get(&key).map_or(0, |g| g.desired);
            let g = Group {
                desired,
                spot,
                instance_type: instance_type.to_string(),
            };
            r.groups.insert(key, g.clone());
            for _ in desired..was {
                r.stop(cluster, group, &g, SCALED_IN, at);
            }
        });
    }

    /// Interrupts `nodes` Spot Instances of each node group named `pool`
    /// at `at` (the group launches others): how many groups had it.
    pub fn preempt(&self, pool: &str, nodes: u64, at: OffsetDateTime) -> usize {
        self.with(|r| {
            let groups: Vec<((String, String), Group)> = r
                .groups
                .iter()
                .filter(|((_, g), _)| g == pool)
                .map(|(k, g)| (k.clone(), g.clone()))
                .collect();
            for ((cluster, group), g) in &groups {
                for _ in 0..nodes {
                    r.stop(cluster, group, g, INTERRUPTED, at);
                }
            }
            groups.len()
        })
    }

    /// What preempts node groups' instances, for the control endpoint.
    pub fn preempter(&self) -> crate::capacity::Preempter {
        let me = self.clone();
        Arc::new(move |pool: &str, nodes: u64, at: OffsetDateTime| me.preempt(pool, nodes, at))
    }

    /// `DescribeInstances` of a node group's instances (filtered by its
    /// `eks:nodegroup-name` tag): the stopped ones recorded here.
    pub(crate) fn answer(&self, req: &Req) -> Option<Response<Body>> {
        let form = Form::of(req)?;
        if form.action() != Some("DescribeInstances") {
            return None;
        }
        let filters = filters(&form);
        let group = filters.get("tag:eks:nodegroup-name")?;
        let cluster = filters.get("tag:eks:cluster-name");
        let items: String = self.with(|r| {
            r.stopped
                .iter()
                .filter(|s| group.contains(&s.group))
                .filter(|s| cluster.is_none_or(|c| c.contains(&s.cluster)))
                .map(item)
                .collect()
        });
        let inner = match items.is_empty() {
            true => "<reservationSet/>".to_string(),
            false => format!("<reservationSet><item><reservationId>r-0standin</reservationId><ownerId>123456789012</ownerId><groupSet/><instancesSet>{items}</instancesSet></item></reservationSet>"),
        };
        Some(answer("DescribeInstances", &inner))
    }
}

impl Records {
    fn stop(
        &mut self,
        cluster: &str,
        group: &str,
        g: &Group,
        code: &'static str,
        at: OffsetDateTime,
    ) {
        self.next += 1;
        self.stopped.push(Stopped {
            cluster: cluster.to_string(),
            group: group.to_string(),
            id: format!("i-{:017x}", 0x5_7a4d_1000_0000_u64 + self.next),
            spot: g.spot,
            instance_type: g.instance_type.clone(),
            code,
            at,
        });
    }
}

/// `Filter.N.Name` → its values.
fn filters(form: &Form) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for n in 1.. {
        let Some(name) = form.get(&format!("Filter.{n}.Name")) else {
            break;
        };
        let values = form.listed(&format!("Filter.{n}.Value."));
        out.insert(
            name.to_string(),
            values.iter().map(|v| v.to_string()).collect(),
        );
    }
    out
}

/// One terminated instance as `DescribeInstances` gives it.
fn item(s: &Stopped) -> String {
    let t = s.at;
    let when = format!(
        "{}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    let (initiated, message) = match s.code {
        INTERRUPTED => (
            "Service",
            "Server.SpotInstanceTermination: Spot instance termination",
        ),
        _ => (
            "User",
            "Client.UserInitiatedShutdown: User initiated shutdown",
        ),
    };
    let lifecycle = match s.spot {
        true => "<instanceLifecycle>spot</instanceLifecycle>",
        false => "",
    };
    let tag = |k: &str, v: &str| format!("<item><key>{k}</key><value>{}</value></item>", escape(v));
    format!(
        "<item><instanceId>{}</instanceId><imageId>ami-0standin</imageId><instanceState><code>48</code><name>terminated</name></instanceState><reason>{initiated} initiated ({when} GMT)</reason><instanceType>{}</instanceType>{lifecycle}<stateReason><code>{}</code><message>{message}</message></stateReason><tagSet>{}{}</tagSet></item>",
        s.id,
        escape(&s.instance_type),
        s.code,
        tag("eks:cluster-name", &s.cluster),
        tag("eks:nodegroup-name", &s.group),
    )
}
