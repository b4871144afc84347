# A data source read while planning (its configuration is known).
data "terraform_remote_state" "net" {
  backend = "local"
  config  = { path = "remote.json" }
  defaults = { region = "us-east-1" }
}
resource "terraform_data" "cluster" {
  for_each = toset(data.terraform_remote_state.net.outputs.subnets)
  input    = "${data.terraform_remote_state.net.outputs.vpc_id}/${each.key}"
}
output "region" { value = data.terraform_remote_state.net.outputs.region }
