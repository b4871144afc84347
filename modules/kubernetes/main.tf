# A cluster strata does not create (a neocloud's, or on premises): its GPU
# nodes are labelled as their pool says, and the GPU Operator installs the
# same driver as on every other cloud. Nothing else is touched.

locals {
  # Where a MultiKueue manager reaches this cluster: the cloud block's
  # host, else the server of the kubeconfig context the provider uses.
  kubeconfig   = var.kubeconfig_path == null ? null : yamldecode(file(pathexpand(var.kubeconfig_path)))
  context_name = try(coalesce(var.kubeconfig_context, local.kubeconfig["current-context"]), null)
  context      = try(one([for c in local.kubeconfig.contexts : c.context if c.name == local.context_name]), null)
  endpoint = var.endpoint != null ? var.endpoint : try(one([
    for c in local.kubeconfig.clusters : c.cluster.server if c.name == local.context.cluster
  ]), null)
  # One entry per (pool, node).
  node_labels = merge([
    for pool, names in var.nodes : {
      for n in names : n => { pool = pool, labels = var.node_pools[pool].labels }
    }
  ]...)
}

resource "kubernetes_labels" "node" {
  for_each    = local.node_labels
  api_version = "v1"
  kind        = "Node"
  metadata {
    name = each.key
  }
  labels = each.value.labels
}

# Where the operator was before it was counted: a state from then keeps
# its release (and a manager's, now without one, plans its removal).
moved {
  from = module.gpu_operator
  to   = module.gpu_operator[0]
}

# No GPU pools (a MultiKueue manager), no GPU Operator.
module "gpu_operator" {
  count                     = length(var.node_pools) == 0 ? 0 : 1
  source                    = "../gpu-operator"
  cloud                     = "kubernetes"
  kubernetes_version        = var.kubernetes_version
  gpu_operator              = var.gpu_operator
  service_monitor           = try(var.runtime.metrics.service_monitor, false)
  driver_installed_by_cloud = false
  tolerations               = distinct(flatten([for p in var.node_pools : p.taints]))
}

# Kueue, KubeRay and metrics, when the spec has a runtime block.
module "runtime" {
  source  = "../runtime"
  count   = var.runtime == null ? 0 : 1
  runtime = var.runtime
  # The nodes a pool has here are the ones listed for it.
  # A MultiKueue manager has no GPU pools of its own: its flavours are the
  # workers' pools.
  pools       = merge({ for n, p in var.node_pools : n => merge(p, { max_nodes = length(lookup(var.nodes, n, [])) }) }, try(var.multikueue.pools, {}))
  multikueue  = var.multikueue == null ? null : merge(var.multikueue, { endpoint = local.endpoint })
  kubeconfigs = var.multikueue_kubeconfigs
  depends_on  = [module.gpu_operator]
}

output "cluster_endpoint" {
  value = null
}

output "node_identity" {
  value = null
}

# The nodes each GPU pool has here: the existing ones it labels.
output "nodes" {
  value = { for name, p in var.node_pools : name => length(lookup(var.nodes, name, [])) }
}

# What the portability check compares between clouds (see modules/aws).
# Labels come from the resources that set them; taints on existing nodes
# are the cluster owner's (strata does not set them), so the pool's are
# reported as given.
output "portable" {
  value = {
    for name, p in var.node_pools : name => {
      gpu            = p.gpu
      gpus_per_node  = p.gpus_per_node
      labels         = try(kubernetes_labels.node[var.nodes[name][0]].labels, p.labels)
      taints         = p.taints
      driver_version = module.gpu_operator[0].driver_version
      cuda_version   = var.gpu_operator.cuda_version
      gpu_operator   = module.gpu_operator[0].version
    }
  }
}

# The job runtime as this cluster runs it, for the same check (null
# without a runtime block).
output "runtime" {
  value = try(module.runtime[0].portable, null)
}

# What a MultiKueue manager needs of this cluster as a worker: its queues'
# GPU quotas per pool, and (sensitive) the kubeconfig of the service
# account it dispatches as. Null when the cluster is no worker.
output "dispatch_quotas" {
  value = try(module.runtime[0].quotas, null)
}

output "dispatch_kubeconfig" {
  sensitive = true
  value     = try(module.runtime[0].dispatch_kubeconfig, null)
}
