variable "x" {}
resource "terraform_data" "inner" { input = var.x }
output "y" { value = terraform_data.inner.id }
