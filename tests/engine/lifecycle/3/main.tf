variable "n" { default = 2 }
locals { names = toset(["a", "c"]) }
resource "terraform_data" "base2" { input = "base-2" }
moved {
  from = terraform_data.base
  to   = terraform_data.base2
}
resource "terraform_data" "c" {
  count = var.n
  input = "${terraform_data.base2.output}-${count.index}"
}
resource "terraform_data" "e" {
  for_each = local.names
  input    = each.key
  triggers_replace = terraform_data.base2.output
  lifecycle { create_before_destroy = true }
}
output "c" { value = terraform_data.c[*].output }
