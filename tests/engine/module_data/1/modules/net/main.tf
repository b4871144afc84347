data "terraform_remote_state" "net" {
  backend = "local"
  config  = { path = "remote.json" }
}
locals {
  zone = "us-east-1a"
}
output "vpc_id" { value = data.terraform_remote_state.net.outputs.vpc_id }
output "zone" { value = local.zone }
output "token" {
  sensitive = true
  value     = data.terraform_remote_state.net.outputs.token
}
