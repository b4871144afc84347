resource "terraform_data" "root" {}

module "net" {
  source = "./net"
  seed   = terraform_data.root.id
}

resource "terraform_data" "after" {
  input = module.net.subnet
}
