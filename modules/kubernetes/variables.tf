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
  default     = null
  description = "Unused: an existing cluster's network is what it is."
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
    instance_type = optional(string)
    min_nodes     = optional(number, 0)
    max_nodes     = optional(number, 1)
    capacity      = optional(string, "on_demand")
    labels        = optional(map(string), {})
    taints = optional(list(object({
      key    = string
      value  = optional(string, "")
      effect = string
    })), [])
    # Set by a pool's placement where its nodes go: the nodes wanted
    # running there (null: min_nodes) and zones with no capacity to leave out.
    nodes         = optional(number)
    exclude_zones = optional(list(string), [])
  }))
}

variable "nodes" {
  type        = map(list(string))
  default     = {}
  description = "The existing nodes of each pool, by pool name: they are labelled (and tainted) as the pool says."
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

variable "endpoint" {
  type        = string
  default     = null
  description = "The cluster's API server URL, where a MultiKueue manager reaches it as a worker (the cloud block's `host`); by default the server of the kubeconfig's context."
}

variable "kubeconfig_path" {
  type        = string
  default     = null
  description = "The kubeconfig the cloud block's provider reads (`config_path`): where the worker's endpoint is found."
}

variable "kubeconfig_context" {
  type        = string
  default     = null
  description = "Its context (`config_context`; the kubeconfig's current one by default)."
}

variable "multikueue_kubeconfigs" {
  type        = map(string)
  default     = {}
  sensitive   = true
  description = "A MultiKueue manager's kubeconfig for each worker, by worker name."
}
