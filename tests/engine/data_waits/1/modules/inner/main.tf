variable "marker" {}

data "terraform_remote_state" "net" {
  backend  = "local"
  config   = { path = "remote.json" }
  defaults = { marker = var.marker }
}

output "vpc_id" { value = data.terraform_remote_state.net.outputs.vpc_id }
