terraform {
  required_version = ">= 1.5"
}

variable "region" {
  type        = string
  default     = "us-east-1"
  description = "Where the cluster runs"
}

variable "pools" {
  type = map(object({
    gpu       = string
    count     = optional(number, 1)
    spot      = optional(bool, false)
    labels    = optional(map(string), {})
  }))
  default = {
    h100 = { gpu = "H100", count = 2 }
  }
}

variable "token" {
  type      = string
  default   = "s3cr3t"
  sensitive = true
}

locals {
  cidr    = "10.40.0.0/16"
  subnets = [for i in range(3) : cidrsubnet(local.cidr, 4, i)]
  names   = { for k, p in var.pools : k => "${k}-${lower(p.gpu)}" }
  total   = sum([for p in values(var.pools) : p.count])
}

resource "terraform_data" "pool" {
  for_each = var.pools
  input    = "${each.key}:${each.value.gpu}:${local.names[each.key]}"
}

resource "terraform_data" "subnet" {
  count = length(local.subnets)
  input = local.subnets[count.index]

  lifecycle {
    create_before_destroy = true
    ignore_changes        = [input]
  }
}

module "child" {
  source = "../modules/child"
  name   = "train"
}

output "subnets" {
  value = local.subnets
}

output "token" {
  value     = var.token
  sensitive = true
}
