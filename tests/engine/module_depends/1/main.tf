resource "terraform_data" "first" { input = 1 }
module "m" {
  source     = "./modules/m"
  depends_on = [terraform_data.first]
}
resource "terraform_data" "after" {
  input      = 2
  depends_on = [module.m]
}
