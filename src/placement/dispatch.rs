//! Where jobs go: a MultiKueue manager's workers in the order it tries
//! them (the cluster stage orders them by placement or price), and the
//! workers it leaves out, with why. The plan carries it; the renderings
//! show it beside the placements.

use strata_provider::money::Usd;

/// One worker cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Worker {
    /// Its MultiKueueCluster's name: `train-aws-us-east-1`.
    pub name: String,
    /// Its module call: `train_aws`.
    pub call: String,
    /// Its cheapest pool by the GPU-hour, when priced.
    pub gpu_hour: Option<Usd>,
}

/// A cluster's MultiKueue manager and its workers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dispatch {
    /// `train`.
    pub cluster: String,
    /// The manager's module call: `train_manager`.
    pub manager: String,
    /// The workers in the order jobs try them.
    pub workers: Vec<Worker>,
    /// Workers left out of the order, and why.
    pub left_out: Vec<LeftOut>,
}

/// A worker jobs are not sent to.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftOut {
    pub worker: Worker,
    pub why: String,
}

impl Dispatch {
    /// As the plan JSON's `dispatch` entries.
    pub fn to_json(&self) -> serde_json::Value {
        let worker = |w: &Worker| {
            serde_json::json!({
                "name": w.name,
                "module": w.call,
                "gpu_hour": w.gpu_hour.map(|p| p.decimal()),
            })
        };
        serde_json::json!({
            "cluster": self.cluster,
            "manager": self.manager,
            "workers": self.workers.iter().map(worker).collect::<Vec<_>>(),
            "left_out": self.left_out.iter().map(|l| {
                let mut w = worker(&l.worker);
                w["why"] = serde_json::json!(l.why);
                w
            }).collect::<Vec<_>>(),
        })
    }
}
