variable "vpc" {}

resource "terraform_data" "subnet" {
  input = var.vpc
}

output "subnet" {
  value = terraform_data.subnet.id
}
