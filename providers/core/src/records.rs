//! What a cloud recorded of a node pool's nodes over a span of time: how
//! many of its spot nodes it preempted, and how many stopped for any
//! reason (preempted, or deleted by a scale-down or a repair) — GCP's
//! preemption rate is the first over the second. Read from each cloud's
//! own record (GCP's `compute.instances.preempted` operations, …) for a
//! drift run's observation, so `strata report` can give the rate.

use serde_json::Value as Json;

/// The pool and the span asked about.
#[derive(Debug, Clone)]
pub struct RecordsAsk {
    /// The node pool's resource type (`google_container_node_pool`).
    pub type_name: String,
    /// The node pool as the state holds it (its attributes, as JSON).
    pub pool: Json,
    /// The objects of the pool's cluster network its traffic leaves by
    /// (a NAT gateway), as the state holds them.
    pub network: Vec<NetworkObject>,
    /// The span, RFC 3339: from `since` up to `until`.
    pub since: String,
    pub until: String,
}

/// An object of a cluster's network, as the state holds it.
#[derive(Debug, Clone)]
pub struct NetworkObject {
    /// `google_compute_router_nat`, `aws_nat_gateway`, …
    pub type_name: String,
    pub object: Json,
}

/// What the cloud recorded over the span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Records {
    pub preempted: u64,
    /// Nodes that stopped, the preempted among them.
    pub stopped: u64,
    /// What the record may leave out of the span, when the cloud keeps
    /// it for less time than the span lasted.
    pub short: Option<String>,
    /// Bytes the pool's cluster network sent out over the span (through
    /// its NAT gateways), or why they could not be read.
    pub egress: Result<u64, String>,
}

impl Default for Records {
    fn default() -> Records {
        Records {
            preempted: 0,
            stopped: 0,
            short: None,
            egress: Err("strata does not yet read this cloud's network egress metrics".into()),
        }
    }
}
