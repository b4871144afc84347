# -target, -replace and -refresh-only against Terraform: what each plans,
# which outputs follow, and what a saved plan applies.
variable "v" {
  default = "1"
}
resource "terraform_data" "a" {
  count = 1
  input = "a${count.index}-${var.v}"
}
resource "terraform_data" "b" {
  input = terraform_data.a[0].output
}
resource "terraform_data" "c" {
  input = "c-${var.v}"
}
module "m" {
  source = "./modules/m"
  count  = 2
  v      = "${var.v}-${count.index}"
}
output "b" { value = terraform_data.b.output }
output "c" { value = terraform_data.c.output }
output "a_and_c" { value = [terraform_data.a[*].output, terraform_data.c.output] }
output "m" { value = module.m[*].out }
resource "terraform_data" "d" {
  input = "d-${var.v}"
}
output "d" { value = terraform_data.d.output }
