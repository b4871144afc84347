# A GPU training cluster's shared parameters, in Terraform's language.
# Today strata validates and evaluates this file; the plan of the resources
# it describes arrives with the engine (issue 3) and the cloud drivers.

variable "clouds" {
  type    = list(string)
  default = ["aws"]

  validation {
    condition     = alltrue([for c in var.clouds : contains(["aws", "gcp", "azure", "kubernetes"], c)])
    error_message = "Each cloud must be one of aws, gcp, azure or kubernetes."
  }
}

variable "network_cidr" {
  type    = string
  default = "10.40.0.0/16"
}

variable "node_pools" {
  type = map(object({
    gpu           = string
    gpus_per_node = optional(number, 8)
    min_nodes     = optional(number, 0)
    max_nodes     = optional(number, 4)
    capacity      = optional(string, "on_demand")
    labels        = optional(map(string), {})
  }))
  default = {
    h100 = { gpu = "H100", capacity = "spot", labels = { workload = "training" } }
  }
}

locals {
  # One /20 per cloud, carved from the same network so address plans line up.
  cloud_cidrs = { for i, c in var.clouds : c => cidrsubnet(var.network_cidr, 4, i) }

  pool_labels = {
    for name, p in var.node_pools : name => merge(p.labels, {
      "nvidia.com/gpu.product" = p.gpu
      "strata.dev/pool"        = name
    })
  }
}

resource "terraform_data" "pool" {
  for_each = { for pair in setproduct(var.clouds, keys(var.node_pools)) : "${pair[0]}/${pair[1]}" => pair }

  input = {
    cloud  = each.value[0]
    subnet = local.cloud_cidrs[each.value[0]]
    labels = local.pool_labels[each.value[1]]
  }
}

output "cloud_cidrs" {
  value = local.cloud_cidrs
}
