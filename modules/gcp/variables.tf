# The inputs every cloud module takes (a `cluster` block fills them), then
# what only AWS needs. Keep the shared ones identical across modules/aws,
# modules/gcp, modules/azure and modules/kubernetes.

variable "name" {
  type        = string
  description = "The cluster's name, from the `cluster` block's label."
}

variable "kubernetes_version" {
  type    = string
  default = "1.31"
}

variable "network" {
  type = object({
    cidr = string
  })
}

variable "gpu_operator" {
  type = object({
    version        = string
    driver_version = string
    cuda_version   = optional(string)
    mig_strategy   = optional(string, "single")
  })
}

variable "node_pools" {
  type = map(object({
    gpu           = string
    gpus_per_node = optional(number, 8)
    instance_type = string
    min_nodes     = optional(number, 0)
    max_nodes     = optional(number, 1)
    # on_demand, spot, flex_start (the Dynamic Workload Scheduler's VMs,
    # which wait for capacity and run at most seven days), queued (flex-start
    # VMs that come only as Kueue admits jobs) or reserved.
    capacity = optional(string, "on_demand")
    # How long a flex-start node may run, in seconds (null: GKE's seven days).
    max_run_seconds = optional(number)
    labels          = optional(map(string), {})
    taints = optional(list(object({
      key    = string
      value  = optional(string, "")
      effect = string
    })), [])
    # Set by a pool's placement where its nodes go: the nodes wanted
    # running there (null: min_nodes) and zones with no capacity to leave out.
    nodes         = optional(number)
    exclude_zones = optional(list(string), [])
    # A Compute Engine reservation the nodes consume (capacity
    # "reserved"): its path (projects/P/zones/Z/reservations/NAME) and zone.
    reservation = optional(object({
      id   = string
      zone = optional(string)
    }))
  }))
}

variable "project" {
  type = string
}

variable "region" {
  type = string
}

variable "runtime" {
  type        = any
  default     = null
  description = "The cluster spec's runtime block (Kueue's queues, KubeRay, metrics), as modules/runtime takes it; null: no runtime."
}

variable "multikueue" {
  type        = any
  default     = null
  description = "This cluster's part in MultiKueue (worker or manager), as modules/runtime takes it; null: none."
}

variable "system_pool" {
  type = object({
    instance_type = optional(string)
    nodes         = optional(number, 2)
  })
  default     = null
  description = "Untainted CPU nodes for the cluster's own controllers (Kueue, KubeRay, the GPU Operator's operator), which the GPU pools' taints keep off them; a MultiKueue manager's only pool. Null: none."
}

variable "multikueue_kubeconfigs" {
  type        = map(string)
  default     = {}
  sensitive   = true
  description = "A MultiKueue manager's kubeconfig for each worker, by worker name."
}
