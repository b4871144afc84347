variable "n" {
  default = 2
}

locals {
  names = [for i in range(var.n) : "node-${i}"]
}

resource "terraform_data" "first" {
  input = local.names
}

resource "terraform_data" "second" {
  depends_on = [terraform_data.first]
}

data "terraform_remote_state" "shared" {
  backend    = "local"
  config     = { path = "shared.tfstate" }
  depends_on = [terraform_data.second]
}

resource "terraform_data" "third" {
  input = data.terraform_remote_state.shared.outputs
}
