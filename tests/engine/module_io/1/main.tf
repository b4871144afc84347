# A module's inputs and outputs are apart in the graph: terraform_data.tag
# uses the module's `prefix` output, and the module's `name` input uses
# terraform_data.tag, which is no cycle (Terraform graphs it so too).
module "pool" {
  source = "./modules/pool"
  name   = terraform_data.tag.output
  size   = 2
}
resource "terraform_data" "tag" {
  input = "${module.pool.prefix}-tag"
}
output "nodes" { value = module.pool.nodes }
