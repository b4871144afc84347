//! Long-running operations as ARM runs them (`Azure-AsyncOperation` and
//! `Location`, polled to an end, finished after a while when nobody
//! looks), and what an AKS pool's operations do to the cluster's nodes.

use super::*;

impl World {
    /// The cluster's nodes made to match agent pool `id`'s size (none
    /// when it is `gone`), labelled as AKS labels them.
    pub(super) fn nodes_of(&self, id: &str, gone: bool) {
        let Some((cluster, pool)) = id.rsplit_once("/agentpools/") else {
            return;
        };
        let Some(nodes) = self.kube.as_ref().and_then(|k| k.nodes.as_ref()) else {
            return;
        };
        let obj = self.objects.get(id).cloned().unwrap_or_default();
        let props = &obj["properties"];
        let count = match gone {
            true => 0,
            false => [&props["count"], &props["minCount"]]
                .iter()
                .filter_map(|n| n.as_u64())
                .max()
                .unwrap_or(0),
        };
        let vm = props["vmSize"].as_str().unwrap_or("");
        let region = self
            .objects
            .get(&cluster.to_ascii_lowercase())
            .and_then(|c| c["location"].as_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        let p = crate::kubernetes::PoolNodes {
            cluster: cluster.rsplit('/').next().unwrap_or(""),
            key: "agentpool",
            pool,
            labels: &props["nodeLabels"],
            gpus_per_node: crate::capacity::gpus_of("azure", vm),
            gpus_withheld: self.shortages.withholds_gpus(&crate::capacity::Ask {
                region: &region,
                zones: &[],
                instance_type: vm,
                capacity: capacity_of(props),
                nodes: count,
            }),
        };
        nodes.scale(&p, count);
    }

    /// A shortage an agent pool PUT (`props` for `pool`) on `cluster`
    /// meets: refused now (the answer), or (after create) its asynchronous
    /// operation set to fail, in ARM's words.
    pub(super) fn short_of_capacity(
        &mut self,
        cluster: &str,
        pool: &str,
        props: &Json,
    ) -> Option<Response<Body>> {
        let region = self.objects.get(cluster)?["location"]
            .as_str()
            .unwrap_or("")
            .to_ascii_lowercase();
        let zones: Vec<String> = props["availabilityZones"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|z| z.as_str().map(str::to_string))
            .collect();
        let nodes = |p: &Json| {
            [&p["count"], &p["minCount"]]
                .iter()
                .filter_map(|n| n.as_u64())
                .max()
                .unwrap_or(0)
        };
        // A pool that grows needs capacity as a new one does.
        let before = self
            .objects
            .get(&pool.to_ascii_lowercase())
            .map_or(0, |o| nodes(&o["properties"]));
        let grows = nodes(props).saturating_sub(before);
        let vm = props["vmSize"].as_str().unwrap_or("");
        let hit = self.shortages.hit(&crate::capacity::Ask {
            region: &region,
            zones: &zones,
            instance_type: vm,
            capacity: capacity_of(props),
            nodes: grows,
        })?;
        let (code, message) = match &hit.zone {
            Some(z) => ("ZonalAllocationFailed", format!("Allocation failed. We do not have sufficient capacity for the requested VM size {vm} in zone '{z}' of location '{region}'. Read more about improving likelihood of allocation success at http://aka.ms/allocation-guidance")),
            None => ("AllocationFailed", format!("Allocation failed. We do not have sufficient capacity for the requested VM size {vm} in location '{region}'. Read more about improving likelihood of allocation success at http://aka.ms/allocation-guidance")),
        };
        match hit.shortage.form {
            crate::capacity::Form::Refused => Some(error(409, code, &message)),
            crate::capacity::Form::AfterCreate => {
                self.failures
                    .push(("agentpools".into(), code.into(), message));
                None
            }
            crate::capacity::Form::NoGpus => None,
        }
    }

    pub(super) fn start_op(
        &mut self,
        key: &str,
        cluster: Option<String>,
        then: Effect,
        on_fail: Effect,
        result: Option<String>,
        put: bool,
    ) -> String {
        let name = self.uuid();
        let error = self
            .failures
            .iter()
            .position(|(k, _, _)| put && key.contains(k.as_str()))
            .map(|i| self.failures.remove(i))
            .map(|(_, c, m)| (c, m));
        self.ops.insert(
            name.clone(),
            Op {
                looks: 0,
                started: std::time::Instant::now(),
                then: Some(then),
                on_fail: Some(on_fail),
                error,
                result,
                cluster,
            },
        );
        name
    }

    /// Applies a finished operation's effect, once.
    pub(super) fn finish(&mut self, name: &str) {
        let Some(op) = self.ops.get_mut(name) else {
            return;
        };
        op.looks = 2;
        let effect = if op.error.is_some() {
            op.on_fail.take()
        } else {
            op.then.take()
        };
        if let Some(e) = effect {
            e(self);
        }
    }

    /// Ends the operations nobody followed ([`crate::unattended`]).
    pub(super) fn settle(&mut self) {
        let stale = crate::unattended(&self.ops, |o| (o.looks < 2).then_some(o.started));
        for name in stale {
            self.finish(&name);
        }
    }

    /// A poll of an `Azure-AsyncOperation` (`/operations/`) or a `Location`
    /// (`/operationResults/`) URL: one step further each time.
    pub(super) fn poll(&mut self, lower: &str) -> Response<Body> {
        let name = lower.rsplit('/').next().unwrap_or("").to_string();
        let Some(op) = self.ops.get_mut(&name) else {
            return error(404, "OperationNotFound", "The operation was not found.");
        };
        if op.looks < 2 {
            op.looks += 1;
        }
        let done = op.looks >= 2;
        if done {
            self.finish(&name);
        }
        let Some(op) = self.ops.get(&name) else {
            return error(404, "OperationNotFound", "The operation was not found.");
        };
        let location = lower.contains("/operationresults/");
        if !done {
            return if location {
                Response::builder()
                    .status(202)
                    .header("retry-after", "1")
                    .body(Body::default())
                    .unwrap_or_default()
            } else {
                Response::builder()
                    .status(200)
                    .header("retry-after", "1")
                    .header("content-type", "application/json")
                    .body(Body::from(
                        json!({"name": name, "status": "InProgress"}).to_string(),
                    ))
                    .unwrap_or_default()
            };
        }
        match (&op.error, location) {
            (Some((code, message)), false) => json(
                200,
                json!({"name": name, "status": "Failed", "error": {"code": code, "message": message}}),
            ),
            (Some((code, message)), true) => error(400, code, message),
            (None, false) => json(200, json!({"name": name, "status": "Succeeded"})),
            (None, true) => match op.result.as_ref().and_then(|id| self.objects.get(id)) {
                Some(o) => json(200, o.clone()),
                None => Response::builder()
                    .status(204)
                    .body(Body::default())
                    .unwrap_or_default(),
            },
        }
    }
}
