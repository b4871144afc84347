# The job runtime, the same on every cluster: Kueue (queues and quotas
# over the GPU pools), KubeRay's operator (Ray jobs that Kueue admits) and,
# when asked, the GPU Operator's DCGM exporter scraped through a
# ServiceMonitor. Every cloud's module calls it with the cluster's pools;
# nothing here differs between clouds. With MultiKueue (multikueue.tf) a
# cluster is either a worker, which a manager dispatches jobs to, or the
# manager, whose queues admit jobs and send them to the first worker in
# its order that has room.

variable "runtime" {
  type = object({
    kueue_version   = optional(string, "0.19.2")
    kuberay_version = optional(string, "1.7.0")
    # Queue name → the namespaces it takes jobs from (a LocalQueue of the
    # same name in each) and, per pool, its GPU quota (by default the
    # pool's max_nodes × gpus_per_node).
    queues = optional(map(object({
      namespaces = list(string)
      gpus       = optional(map(number), {})
    })), {})
  })
}

variable "pools" {
  type = map(object({
    gpus_per_node = optional(number, 8)
    # A MultiKueue manager's pools have no size of their own: its quotas
    # are the workers'.
    max_nodes = optional(number, 1)
    # What selects the pool's nodes, on every cloud: the spec's labels and
    # `strata.dev/pool`.
    labels = map(string)
    taints = list(object({
      key    = string
      value  = optional(string, "")
      effect = string
    }))
    # The cluster autoscaler's ProvisioningRequest class the pool's nodes
    # come through, when they come only as jobs are admitted (GKE's
    # queued provisioning: queued-provisioning.gke.io), and the taints the
    # cloud puts on such nodes itself: how the cloud gets a job its nodes,
    # not what the job sees, so not part of what is compared between
    # clouds.
    provisioning_class = optional(string)
    cloud_taints = optional(list(object({
      key    = string
      value  = optional(string, "")
      effect = string
    })), [])
  }))
  description = "The cluster's node pools, each a Kueue ResourceFlavor."
}

locals {
  kueue_namespace = "kueue-system"
  # Kueue's configuration, as its chart ships it, with the frameworks
  # strata's clusters run and quota checked for what the queues declare
  # (GPUs) only: a job's CPU and memory are the scheduler's to place.
  kueue_config = {
    apiVersion = "config.kueue.x-k8s.io/v1beta2"
    kind       = "Configuration"
    health     = { healthProbeBindAddress = ":8081" }
    metrics    = { bindAddress = ":8443" }
    webhook    = { port = 9443 }
    leaderElection = {
      leaderElect  = true
      resourceName = "c1f6bfd2.kueue.x-k8s.io"
    }
    integrations = {
      frameworks = ["batch/job", "ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice"]
    }
    resources = { quotaCheckStrategy = "IgnoreUndeclared" }
  }
  namespaces = toset(flatten([for q in var.runtime.queues : q.namespaces]))
  # Each queue's GPUs per pool: what the spec says, else the pool's
  # max_nodes × gpus_per_node; on a MultiKueue manager, the workers' sum.
  own_quota = {
    for q, queue in var.runtime.queues : q => {
      for pool, p in var.pools : pool => lookup(queue.gpus, pool, p.max_nodes * p.gpus_per_node)
    }
  }
  quota = local.manager ? {
    for q, per_pool in local.own_quota : q => {
      for pool, _ in per_pool : pool => sum(concat([0], [
        for w in var.multikueue.workers : try(var.multikueue.quotas[w][q][pool], 0)
      ]))
    }
  } : local.own_quota
  # Pools whose nodes come through ProvisioningRequests, by class: Kueue
  # asks for a job's nodes (one ProvisioningRequestConfig and
  # AdmissionCheck per class) and admits it once they are there.
  provisioned          = { for pool, p in var.pools : pool => p.provisioning_class if p.provisioning_class != null }
  provisioning_classes = toset(values(local.provisioned))
  toleration = { for pool, p in var.pools : pool => [
    for t in p.taints : { key = t.key, operator = "Equal", value = t.value, effect = t.effect }
  ] }
  local_queues = merge([
    for name, q in var.runtime.queues : {
      for ns in q.namespaces : "${ns}/${name}" => { namespace = ns, queue = name }
    }
  ]...)
}

resource "helm_release" "kueue" {
  name             = "kueue"
  repository       = "oci://registry.k8s.io/kueue/charts"
  chart            = "kueue"
  version          = var.runtime.kueue_version
  namespace        = local.kueue_namespace
  create_namespace = true
  wait             = true
  atomic           = true
  timeout          = 600
  values = {
    managerConfig = { controllerManagerConfigYaml = yamlencode(local.kueue_config) }
  }
}

resource "helm_release" "kuberay" {
  name             = "kuberay-operator"
  repository       = "https://ray-project.github.io/kuberay-helm/"
  chart            = "kuberay-operator"
  version          = var.runtime.kuberay_version
  namespace        = "kuberay-system"
  create_namespace = true
  wait             = true
  atomic           = true
  timeout          = 600
}

# One flavour per pool: its nodes by their labels, its taints tolerated.
resource "kubernetes_manifest" "flavor" {
  for_each = var.pools
  manifest = {
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "ResourceFlavor"
    metadata   = { name = each.key }
    spec = {
      nodeLabels = each.value.labels
      tolerations = concat(local.toleration[each.key], [
        for t in each.value.cloud_taints : { key = t.key, operator = "Equal", value = t.value, effect = t.effect }
      ])
    }
  }
  depends_on = [helm_release.kueue]
}

resource "kubernetes_manifest" "provisioning_config" {
  for_each = local.provisioning_classes
  manifest = {
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "ProvisioningRequestConfig"
    metadata   = { name = replace(each.key, ".", "-") }
    spec = {
      provisioningClassName = each.key
      managedResources      = ["nvidia.com/gpu"]
    }
  }
  depends_on = [helm_release.kueue]
}

resource "kubernetes_manifest" "provisioning_check" {
  for_each = local.provisioning_classes
  manifest = {
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "AdmissionCheck"
    metadata   = { name = replace(each.key, ".", "-") }
    spec = {
      controllerName = "kueue.x-k8s.io/provisioning-request"
      parameters = {
        apiGroup = "kueue.x-k8s.io"
        kind     = "ProvisioningRequestConfig"
        name     = kubernetes_manifest.provisioning_config[each.key].manifest.metadata.name
      }
    }
  }
}

resource "kubernetes_manifest" "cluster_queue" {
  for_each = var.runtime.queues
  manifest = {
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "ClusterQueue"
    metadata   = { name = each.key }
    spec = merge(local.queue_spec[each.key], length(local.admission_checks) == 0 ? {} : {
      admissionChecksStrategy = { admissionChecks = local.admission_checks }
    })
  }
}

locals {
  # A queue as every cloud has it: its flavours and quotas.
  queue_spec = { for q, _ in var.runtime.queues : q => {
    namespaceSelector = {}
    resourceGroups = [{
      coveredResources = ["nvidia.com/gpu"]
      flavors = [for pool, p in var.pools : {
        name      = kubernetes_manifest.flavor[pool].manifest.metadata.name
        resources = [{ name = "nvidia.com/gpu", nominalQuota = local.quota[q][pool] }]
      }]
    }]
  } }
  # The manager's MultiKueue check (the manager admits a job against the
  # workers' summed quota, then MultiKueue sends it to a worker that
  # admits it too).
  multikueue_checks = [for check in kubernetes_manifest.admission_check : { name = check.manifest.metadata.name }]
  admission_checks = concat(
    local.multikueue_checks,
    # A job on a pool of a class waits for its ProvisioningRequest.
    [for class, check in kubernetes_manifest.provisioning_check : {
      name      = check.manifest.metadata.name
      onFlavors = sort([for pool, c in local.provisioned : pool if c == class])
    }],
  )
}

resource "kubernetes_namespace" "queue" {
  for_each = local.namespaces
  metadata {
    name = each.key
  }
}

resource "kubernetes_manifest" "local_queue" {
  for_each = local.local_queues
  manifest = {
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "LocalQueue"
    metadata   = { name = each.value.queue, namespace = kubernetes_namespace.queue[each.value.namespace].metadata[0].name }
    spec       = { clusterQueue = kubernetes_manifest.cluster_queue[each.value.queue].manifest.metadata.name }
  }
}

output "quotas" {
  description = "Each queue's GPU quota per pool here: what a MultiKueue manager adds up."
  value       = local.quota
}

output "portable" {
  description = "What the portability check compares between clouds: versions, flavours, queues and quotas, and the checkpoint Secret's shape."
  value = {
    kueue_version   = helm_release.kueue.version
    kuberay_version = helm_release.kuberay.version
    # Less what a cloud adds to get a job its nodes (GKE's queued
    # provisioning: a taint tolerated, an admission check).
    flavors = { for name, p in var.pools : name => {
      nodeLabels  = p.labels
      tolerations = local.toleration[name]
    } }
    queues = { for q, spec in local.queue_spec : q => merge(spec, length(local.multikueue_checks) == 0 ? {} : {
      admissionChecksStrategy = { admissionChecks = local.multikueue_checks }
    }) }
    checkpoints = local.checkpoint_shape
  }
}
