# A data source whose configuration is known only after apply: read then.
resource "terraform_data" "path" { input = "remote.json" }
data "terraform_remote_state" "net" {
  backend = "local"
  config  = { path = terraform_data.path.output }
}
resource "terraform_data" "cluster" {
  input = data.terraform_remote_state.net.outputs.vpc_id
}
output "vpc" { value = terraform_data.cluster.output }
