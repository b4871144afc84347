//! Capacity shortages on demand, for the stand-ins that make node pools
//! (the proxy in front of moto for EKS, GCP, Azure): a shortage says where
//! a cloud has no capacity (region, optionally a zone, an instance type, a
//! capacity type) and how the cloud says so, and each stand-in asks
//! [`Shortages::hit`] when a pool that launches nodes is created.
//!
//! The two forms are the clouds' own: the create refused at once, or the
//! pool made and then failing (EKS `CREATE_FAILED` with a health issue,
//! GKE's operation in error, AKS's asynchronous PUT `Failed`). A third is
//! what no API reports: the pool made and its nodes joining, but their
//! GPUs never allocatable (a driver that does not load), which only a
//! watch of the nodes finds ([`Shortages::withholds_gpus`]). The
//! sandbox's control endpoint (`POST /capacity`) sets them.

use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

/// How the cloud reports the shortage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// The create call answered with the error.
    #[default]
    Refused,
    /// The pool made, then failing as it launches nodes.
    AfterCreate,
    /// The pool made and its nodes joining with no allocatable GPU.
    NoGpus,
}

/// Where a cloud has no capacity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shortage {
    /// `aws`, `gcp` or `azure`.
    pub cloud: String,
    pub region: String,
    /// One zone of the region; absent: the whole region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Only this instance type; absent: every one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// Only `spot` or `on_demand`; absent: both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<String>,
    #[serde(default)]
    pub form: Form,
    /// Must be `false`: the place has no capacity (the field says what
    /// the request means, as the control endpoint's callers write it).
    #[serde(default)]
    pub available: bool,
}

impl Shortage {
    /// Checks what a caller sent.
    pub fn check(&self) -> Result<(), String> {
        if self.available {
            return Err("\"available\": true is what DELETE /capacity is for".into());
        }
        if !["aws", "gcp", "azure"].contains(&self.cloud.as_str()) {
            return Err(format!("cloud {:?} is not aws, gcp or azure", self.cloud));
        }
        if let Some(c) = &self.capacity {
            if !["spot", "on_demand", "flex_start"].contains(&c.as_str()) {
                return Err(format!(
                    "capacity {c:?} is not spot, on_demand or flex_start"
                ));
            }
        }
        Ok(())
    }
}

/// What a new node pool asks of its cloud.
#[derive(Debug, Clone)]
pub struct Ask<'a> {
    pub region: &'a str,
    /// The zones it may use; empty: the cloud picks among the region's.
    pub zones: &'a [String],
    pub instance_type: &'a str,
    /// `spot`, `on_demand` or `flex_start`.
    pub capacity: &'a str,
    /// Nodes it launches now; a pool of none needs no capacity.
    pub nodes: u64,
}

/// The shortages one cloud's stand-in has; cloned handles share them.
#[derive(Debug, Clone, Default)]
pub struct Shortages(Arc<Mutex<Vec<Shortage>>>);

/// A shortage that hit, and the zone it names (the shortage's own, when
/// the pool could use it).
#[derive(Debug, Clone)]
pub struct Hit {
    pub shortage: Shortage,
    pub zone: Option<String>,
}

impl Shortages {
    fn list_mut(&self) -> std::sync::MutexGuard<'_, Vec<Shortage>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn add(&self, s: Shortage) {
        self.list_mut().push(s);
    }

    pub fn clear(&self) {
        self.list_mut().clear();
    }

    pub fn list(&self) -> Vec<Shortage> {
        self.list_mut().clone()
    }

    /// The first shortage that keeps `ask` from launching its nodes.
    pub fn hit(&self, ask: &Ask<'_>) -> Option<Hit> {
        if ask.nodes == 0 {
            return None;
        }
        let s = self.find(ask, |f| f != Form::NoGpus)?;
        Some(Hit {
            zone: s.zone.clone(),
            shortage: s,
        })
    }

    /// Whether the nodes `ask` launches join without allocatable GPUs.
    pub fn withholds_gpus(&self, ask: &Ask<'_>) -> bool {
        self.find(ask, |f| f == Form::NoGpus).is_some()
    }

    /// The first shortage of a form `form` allows that applies to `ask`.
    fn find(&self, ask: &Ask<'_>, form: impl Fn(Form) -> bool) -> Option<Shortage> {
        let list = self.list_mut();
        list.iter()
            .find(|s| {
                form(s.form)
                    && s.region == ask.region
                    && s.instance_type
                        .as_deref()
                        .is_none_or(|t| t == ask.instance_type)
                    && s.capacity.as_deref().is_none_or(|c| c == ask.capacity)
                    && s.zone
                        .as_ref()
                        .is_none_or(|z| ask.zones.is_empty() || ask.zones.contains(z))
            })
            .cloned()
    }
}

/// Each cloud's shortages, as the control endpoint sets them.
#[derive(Debug, Clone, Default)]
pub struct ByCloud {
    pub aws: Shortages,
    pub gcp: Shortages,
    pub azure: Shortages,
    /// The time the stand-ins keep (reservation windows).
    pub clock: crate::clock::Clock,
    /// What preempts each cloud's nodes (`POST /preempt`), by cloud.
    pub preempters: Preempters,
    /// What meters each cloud's egress (`POST /egress`), by cloud.
    pub egressers: Egressers,
    /// Calls the AWS proxy acts on and then answers an hour late
    /// (`POST /hold`).
    pub holds: Holds,
}

/// Calls (by [`crate::faults::call_name`]: `PurchaseCapacityBlock`) a
/// stand-in acts on and then holds its answer back for an hour: a client
/// killed meanwhile dies after the cloud acted and before it heard.
#[derive(Debug, Clone, Default)]
pub struct Holds(Arc<Mutex<std::collections::BTreeSet<String>>>);

impl Holds {
    pub fn hold(&self, call: &str) {
        if let Ok(mut h) = self.0.lock() {
            h.insert(call.to_string());
        }
    }

    pub fn release(&self) {
        if let Ok(mut h) = self.0.lock() {
            h.clear();
        }
    }

    pub fn holds(&self, call: &str) -> bool {
        self.0.lock().is_ok_and(|h| h.contains(call))
    }
}

/// A [`Preempter`] that locks a stand-in's `world` and has it preempt.
pub fn preempter_of<W: Send + 'static>(
    world: Arc<Mutex<W>>,
    preempt: fn(&mut W, &str, u64, time::OffsetDateTime) -> usize,
) -> Preempter {
    Arc::new(move |pool: &str, nodes: u64, at: time::OffsetDateTime| {
        let mut w = world.lock().unwrap_or_else(|e| e.into_inner());
        preempt(&mut w, pool, nodes, at)
    })
}

/// An [`Egresser`] that locks a stand-in's `world` and has it meter.
pub fn egresser_of<W: Send + 'static>(
    world: Arc<Mutex<W>>,
    meter: fn(&mut W, u64, time::OffsetDateTime) -> usize,
) -> Egresser {
    Arc::new(move |bytes: u64, at: time::OffsetDateTime| {
        let mut w = world.lock().unwrap_or_else(|e| e.into_inner());
        meter(&mut w, bytes, at)
    })
}

/// Meters `bytes` sent out through each NAT gateway of the cloud at a
/// time: how many gateways there are.
pub type Egresser = Arc<dyn Fn(u64, time::OffsetDateTime) -> usize + Send + Sync>;

/// The clouds whose stand-ins meter egress.
pub type Egressers = ByName<Egresser>;

/// Egress the control endpoint is asked to meter.
#[derive(Deserialize)]
struct Egress {
    cloud: String,
    bytes: u64,
    at: String,
}

/// Preempts `nodes` VMs of each node pool named `pool` at a time, as the
/// cloud records it: how many pools were found.
pub type Preempter = Arc<dyn Fn(&str, u64, time::OffsetDateTime) -> usize + Send + Sync>;

/// What each cloud's stand-in does when the control endpoint asks, by
/// cloud.
#[derive(Clone)]
pub struct ByName<F>(pub std::collections::BTreeMap<String, F>);

impl<F> Default for ByName<F> {
    fn default() -> Self {
        ByName(Default::default())
    }
}

impl<F> std::fmt::Debug for ByName<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

/// The clouds whose stand-ins can preempt nodes.
pub type Preempters = ByName<Preempter>;

/// A preemption the control endpoint is asked for.
#[derive(Deserialize)]
struct Preemption {
    cloud: String,
    pool: String,
    nodes: u64,
    /// When, RFC 3339.
    at: String,
}

impl ByCloud {
    fn of(&self, cloud: &str) -> Option<&Shortages> {
        match cloud {
            "aws" => Some(&self.aws),
            "gcp" => Some(&self.gcp),
            "azure" => Some(&self.azure),
            _ => None,
        }
    }

    fn all(&self) -> Vec<Shortage> {
        [&self.aws, &self.gcp, &self.azure]
            .iter()
            .flat_map(|s| s.list())
            .collect()
    }
}

/// The control endpoint (the sandbox's `STRATA_SANDBOX_CONTROL`):
/// `POST /capacity` with a [`Shortage`] as JSON adds it to its cloud,
/// `DELETE /capacity` clears every cloud's, `GET /capacity` lists them.
pub fn control(clouds: ByCloud) -> std::io::Result<crate::Server> {
    crate::serve(move |req| {
        let clouds = clouds.clone();
        async move { answer(&clouds, &req) }
    })
}

fn answer(clouds: &ByCloud, req: &crate::Req) -> hyper::Response<crate::Body> {
    use hyper::Method;
    let listed = |status| crate::json(status, serde_json::json!({ "shortages": clouds.all() }));
    match (&req.method, req.path.trim_end_matches('/')) {
        (&Method::GET, "/capacity") => listed(200),
        (&Method::DELETE, "/capacity") => {
            for s in [&clouds.aws, &clouds.gcp, &clouds.azure] {
                s.clear();
            }
            listed(200)
        }
        (&Method::POST, "/capacity") => {
            let s: Shortage = match serde_json::from_slice(&req.body) {
                Ok(s) => s,
                Err(e) => return refuse(format!("not a shortage: {e}")),
            };
            if let Err(why) = s.check() {
                return refuse(why);
            }
            match clouds.of(&s.cloud) {
                Some(list) => {
                    list.add(s);
                    listed(201)
                }
                None => refuse(format!("no stand-in for {}", s.cloud)),
            }
        }
        (&Method::POST, "/clock") => {
            let at = serde_json::from_slice::<serde_json::Value>(&req.body)
                .ok()
                .and_then(|v| v["now"].as_str().map(str::to_string))
                .and_then(|t| {
                    time::OffsetDateTime::parse(&t, &time::format_description::well_known::Rfc3339)
                        .ok()
                });
            match at {
                Some(t) => {
                    clouds.clock.set(Some(t));
                    crate::json(200, serde_json::json!({ "now": req_text(&req.body) }))
                }
                None => refuse("POST /clock takes {\"now\": \"<RFC 3339>\"}".into()),
            }
        }
        (&Method::POST, "/preempt") => preempt(clouds, &req.body),
        (&Method::POST, "/egress") => egress(clouds, &req.body),
        (&Method::POST, "/hold") => {
            let asked = serde_json::from_slice::<serde_json::Value>(&req.body).unwrap_or_default();
            match asked["call"].as_str() {
                Some(call) => {
                    clouds.holds.hold(call);
                    crate::json(201, serde_json::json!({ "held": call }))
                }
                None => refuse("POST /hold takes {\"call\": \"<Action>\"}".into()),
            }
        }
        (&Method::DELETE, "/hold") => {
            clouds.holds.release();
            crate::json(200, serde_json::json!({ "held": [] }))
        }
        (&Method::DELETE, "/clock") => {
            clouds.clock.set(None);
            crate::json(200, serde_json::json!({ "now": "system" }))
        }
        _ => crate::json(
            404,
            serde_json::json!({ "error": "POST, GET or DELETE /capacity; POST or DELETE /clock; POST /preempt; POST /egress; POST or DELETE /hold" }),
        ),
    }
}

fn refuse(why: String) -> hyper::Response<crate::Body> {
    crate::json(400, serde_json::json!({ "error": why }))
}

/// The control endpoint's ask in `body`, as `T`, and its time (`at`).
fn asked<T: serde::de::DeserializeOwned>(
    body: &[u8],
    what: &str,
    at: impl Fn(&T) -> &str,
) -> Result<(T, time::OffsetDateTime), hyper::Response<crate::Body>> {
    let asked: T = serde_json::from_slice(body).map_err(|e| refuse(format!("not {what}: {e}")))?;
    let rfc3339 = &time::format_description::well_known::Rfc3339;
    let when = time::OffsetDateTime::parse(at(&asked), rfc3339)
        .map_err(|_| refuse(format!("{:?} is not an RFC 3339 time", at(&asked))))?;
    Ok((asked, when))
}

/// `POST /preempt` (`{"cloud", "pool", "nodes", "at"}`): the cloud's
/// stand-in preempts that many VMs of each pool of that name.
fn preempt(clouds: &ByCloud, body: &[u8]) -> hyper::Response<crate::Body> {
    let (p, at) = match asked(body, "a preemption", |p: &Preemption| &p.at) {
        Ok(x) => x,
        Err(refused) => return refused,
    };
    let Some(preempter) = clouds.preempters.0.get(&p.cloud) else {
        return refuse(format!("the {} stand-in does not preempt", p.cloud));
    };
    match preempter(&p.pool, p.nodes, at) {
        0 => crate::json(
            404,
            serde_json::json!({ "error": format!("no node pool {} on {}", p.pool, p.cloud) }),
        ),
        pools => crate::json(201, serde_json::json!({ "pools": pools, "nodes": p.nodes })),
    }
}

/// `POST /egress` (`{"cloud", "bytes", "at"}`): the cloud's stand-in
/// meters that many bytes sent out through each of its NAT gateways.
fn egress(clouds: &ByCloud, body: &[u8]) -> hyper::Response<crate::Body> {
    let (e, at) = match asked(body, "egress", |e: &Egress| &e.at) {
        Ok(x) => x,
        Err(refused) => return refused,
    };
    let Some(meter) = clouds.egressers.0.get(&e.cloud) else {
        return refuse(format!("the {} stand-in meters no egress", e.cloud));
    };
    match meter(e.bytes, at) {
        0 => crate::json(
            404,
            serde_json::json!({ "error": format!("no NAT gateway on {}", e.cloud) }),
        ),
        gateways => crate::json(201, serde_json::json!({ "gateways": gateways })),
    }
}

fn req_text(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice::<serde_json::Value>(body)
        .map_or(serde_json::Value::Null, |v| v["now"].clone())
}

/// GPUs per node of an instance type, from strata's own catalogs (what
/// the stand-ins' nodes offer); 0 for one they do not list.
pub fn gpus_of(cloud: &str, instance_type: &str) -> u64 {
    let catalog = match cloud {
        "aws" => include_str!("../../../providers/aws/catalog.csv"),
        "azure" => include_str!("../../../providers/azure/catalog.csv"),
        _ => include_str!("../../../providers/gcp/catalog.csv"),
    };
    catalog
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let mut cols = l.split(',');
            let listed = cols.next()? == instance_type;
            let count = cols.nth(1)?.parse().ok()?;
            listed.then_some(count)
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shortage(zone: Option<&str>, capacity: Option<&str>) -> Shortage {
        Shortage {
            cloud: "aws".into(),
            region: "us-east-1".into(),
            zone: zone.map(str::to_string),
            instance_type: None,
            capacity: capacity.map(str::to_string),
            form: Form::Refused,
            available: false,
        }
    }

    #[test]
    fn a_zone_shortage_spares_pools_outside_that_zone() {
        let s = Shortages::default();
        s.add(shortage(Some("us-east-1a"), Some("spot")));
        let zones = ["us-east-1a".to_string(), "us-east-1b".to_string()];
        let ask = |zones: &[String], capacity, nodes| {
            s.hit(&Ask {
                region: "us-east-1",
                zones,
                instance_type: "p5.48xlarge",
                capacity,
                nodes,
            })
            .is_some()
        };
        assert!(ask(&zones, "spot", 2));
        assert!(ask(&[], "spot", 2), "the cloud may pick the zone");
        assert!(!ask(&zones[1..], "spot", 2), "zone left out");
        assert!(!ask(&zones, "on_demand", 2), "other capacity type");
        assert!(!ask(&zones, "spot", 0), "no nodes, no capacity needed");
        s.clear();
        assert!(!ask(&zones, "spot", 2));
    }

    #[test]
    fn nodes_offer_the_gpus_the_catalogs_list() {
        assert_eq!(gpus_of("aws", "p5.48xlarge"), 8);
        assert_eq!(gpus_of("azure", "Standard_ND96isr_H100_v5"), 8);
        assert_eq!(gpus_of("gcp", "a3-highgpu-8g"), 8);
        assert_eq!(gpus_of("aws", "m5.large"), 0);
    }

    #[test]
    fn what_callers_send_is_checked() {
        let mut s = shortage(None, Some("reserved"));
        assert!(s.check().is_err());
        s.capacity = None;
        assert!(s.check().is_ok());
        s.available = true;
        assert!(s.check().is_err());
        let parsed: Result<Shortage, _> = serde_json::from_str(
            r#"{"cloud":"gcp","region":"us-central1","form":"after_create","available":false}"#,
        );
        assert_eq!(parsed.map(|s| s.form).ok(), Some(Form::AfterCreate));
        let typo: Result<Shortage, _> =
            serde_json::from_str(r#"{"cloud":"gcp","region":"x","zones":["a"]}"#);
        assert!(typo.is_err());
    }
}
