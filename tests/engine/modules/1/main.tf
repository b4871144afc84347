variable "pools" {
  type    = map(number)
  default = { h100 = 2, a100 = 1 }
}
module "pool" {
  source   = "./modules/pool"
  for_each = var.pools
  name     = each.key
  size     = each.value
}
module "single" {
  source = "./modules/pool"
  name   = "one"
}
resource "terraform_data" "watch" {
  input = module.single.nodes
  lifecycle {
    ignore_changes = [input]
  }
}
resource "terraform_data" "t" {
  input = "t"
  lifecycle { replace_triggered_by = [terraform_data.watch2] }
}
resource "terraform_data" "watch2" { input = "w1" }
output "pools" { value = { for k, m in module.pool : k => m.nodes } }
output "secret" {
  value     = "s3cr3t"
  sensitive = true
}
