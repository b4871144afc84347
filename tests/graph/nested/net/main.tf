variable "seed" {}

resource "terraform_data" "vpc" {
  input = var.seed
}

module "inner" {
  source = "./inner"
  vpc    = terraform_data.vpc.id
}

output "subnet" {
  value = module.inner.subnet
}
