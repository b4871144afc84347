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
    # Capacity held ahead that the nodes launch into (capacity "reserved"
    # or "capacity_block"): its cr- id, or a Capacity Reservation group's
    # ARN, and the zone the nodes launch in.
    reservation = optional(object({
      id   = string
      zone = optional(string)
    }))
  }))
}

variable "region" {
  type = string
}

variable "zones" {
  type        = list(string)
  default     = null
  description = "Availability zones for the subnets; the region's a, b and c by default."
}

variable "node_image_owners" {
  type        = list(string)
  default     = ["099720109477"]
  description = "Who publishes the node image: Canonical, whose Ubuntu EKS images the GPU Operator can install its driver on (it cannot on Amazon Linux)."
}

variable "node_image_name" {
  type        = string
  default     = null
  description = "The node image's name pattern; Canonical's Ubuntu 22.04 EKS image for the Kubernetes version by default."
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

variable "capacity_blocks" {
  type = map(object({
    offering_id = string
  }))
  default     = {}
  description = "Capacity Blocks for ML to buy, by node pool: the offering a pool's placement found (capacity_block { purchase = true })."
}
