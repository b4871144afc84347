# Conditions that hold: checked while planning, with count.index and self.
# Later steps set variables (terraform.tfvars) that make one fail.
variable "size" {
  type    = number
  default = 2
}
variable "prefix" {
  type    = string
  default = "node-"
}
variable "extra" {
  type    = number
  default = 0
}
variable "region" {
  type    = string
  default = "us-east-1"
}
resource "terraform_data" "pool" {
  count = var.size
  input = "node-${count.index}"
  lifecycle {
    precondition {
      condition     = var.size <= 4
      error_message = "At most 4 nodes."
    }
    postcondition {
      condition     = self.input == "${var.prefix}${count.index}"
      error_message = "Node ${count.index} is misnamed."
    }
  }
}
data "terraform_remote_state" "net" {
  backend = "local"
  config  = { path = "remote.json" }
  lifecycle {
    precondition {
      condition     = var.size > 0
      error_message = "A pool needs nodes."
    }
    postcondition {
      condition     = self.outputs.region == var.region
      error_message = "The network is in another region."
    }
  }
}
output "nodes" {
  value = terraform_data.pool[*].output
  precondition {
    condition     = length(terraform_data.pool) == var.size + var.extra
    error_message = "Every node is listed."
  }
}
