variable "v" { default = "x" }
locals { l = terraform_data.a.output }
resource "terraform_data" "a" { input = var.v }
resource "terraform_data" "b" { input = local.l }
resource "terraform_data" "c" {
  count = 2
  input = terraform_data.b.id
}
data "terraform_remote_state" "s" {
  backend = "local"
  config = { path = "x" }
}
module "m" {
  source = "./m"
  x = terraform_data.c[0].id
}
output "o" { value = module.m.y }
