//! The nodes a cloud stand-in's node pools make join and leave a cluster,
//! each offering its GPUs a moment after it joins.

use super::*;

/// How long a new node takes to offer its GPUs (the device plugin
/// registering them after the kubelet joins): short, yet long enough that
/// time to first GPU is a measured figure.
pub(super) const GPUS_AFTER: std::time::Duration = std::time::Duration::from_millis(1500);

/// A cloud stand-in's hand on a cluster's nodes: a node pool's nodes join
/// and leave as its size changes, each offering its GPUs as allocatable
/// `nvidia.com/gpu` a moment after it joins.
#[derive(Clone)]
pub struct Nodes(pub(super) Arc<Tenants>);

impl std::fmt::Debug for Nodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Nodes")
    }
}

/// A node pool as the cluster's nodes carry it (nodes named by cluster
/// and pool, as the clouds name them).
pub struct PoolNodes<'a> {
    pub cluster: &'a str,
    /// The label the cloud puts on its pools' nodes
    /// (`cloud.google.com/gke-nodepool`) and the pool's name.
    pub key: &'a str,
    pub pool: &'a str,
    /// The pool's own labels.
    pub labels: &'a Json,
    pub gpus_per_node: u64,
    /// Whether its nodes' GPUs never become allocatable (a `no_gpus`
    /// shortage).
    pub gpus_withheld: bool,
}

impl Nodes {
    fn with<T>(&self, cluster: &str, f: impl FnOnce(&mut Store) -> T) -> T {
        let store = self.0.of(cluster);
        let mut s = store.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut s)
    }

    /// Makes the pool's nodes number `count`: new ones join (their GPUs
    /// allocatable after [`GPUS_AFTER`]), the last ones leave.
    pub fn scale(&self, p: &PoolNodes<'_>, count: u64) {
        let prefix = format!("{}-{}-", p.cluster, p.pool);
        let name = |i: u64| format!("{prefix}{i}");
        let mut labels = p.labels.as_object().cloned().unwrap_or_default();
        labels.insert(p.key.into(), json!(p.pool));
        let joined: Vec<String> = self.with(p.cluster, |s| {
            let gone: Vec<Key> = s
                .objects
                .keys()
                .filter(|k| k.1 == "nodes")
                .filter(|k| {
                    k.3.strip_prefix(&prefix)
                        .and_then(|i| i.parse::<u64>().ok())
                        .is_some_and(|i| i >= count)
                })
                .cloned()
                .collect();
            for k in gone {
                s.objects.remove(&k);
            }
            let mut joined = Vec::new();
            for i in 0..count {
                let t = Target::of("", "nodes", "", &name(i));
                if s.objects.contains_key(&t.key()) {
                    continue;
                }
                let mut node_labels = labels.clone();
                node_labels.insert("kubernetes.io/hostname".into(), json!(name(i)));
                let body = json!({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name(i), "labels": node_labels},
                    "status": {"allocatable": {"cpu": "96", "nvidia.com/gpu": "0"},
                               "capacity": {"cpu": "96", "nvidia.com/gpu": p.gpus_per_node.to_string()}}});
                let _ = s.write(&t, body, "kubelet");
                joined.push(name(i));
            }
            joined
        });
        if joined.is_empty() || p.gpus_per_node == 0 || p.gpus_withheld {
            return;
        }
        let (nodes, cluster) = (self.clone(), p.cluster.to_string());
        let gpus = p.gpus_per_node.to_string();
        std::thread::spawn(move || {
            std::thread::sleep(GPUS_AFTER);
            nodes.with(&cluster, |s| {
                for n in joined {
                    let t = Target::of("", "nodes", "", &n);
                    if let Some(o) = s.objects.get_mut(&t.key()) {
                        o["status"]["allocatable"]["nvidia.com/gpu"] = json!(gpus);
                    }
                }
            });
        });
    }
}
