# (Step 2 is step 1 again: nothing to do, the sensitive output included.)
# A module whose data source and local use nothing from the call: they are
# still evaluated inside the module's instance, so their values are known
# while planning (they once came out unknown, visited before the call).
module "net" {
  source = "./modules/net"
}
resource "terraform_data" "vpc" {
  input = module.net.vpc_id
}
output "vpc" { value = module.net.vpc_id }
output "zone" { value = module.net.zone }
output "secret" {
  sensitive = true
  value     = { net = module.net.token }
}
