# When a data source whose configuration is known is read: now, unless a
# change is planned to a managed resource it refers to itself, names in
# depends_on, or a containing module's depends_on reaches. Step 2 changes
# terraform_data.marker in place (its id stays known).
resource "terraform_data" "marker" {
  input = "one"
}

locals {
  marker = terraform_data.marker.id
}

# Through a local: read now.
data "terraform_remote_state" "via_local" {
  backend  = "local"
  config   = { path = "remote.json" }
  defaults = { marker = local.marker }
}

# A direct reference: read during apply.
data "terraform_remote_state" "direct" {
  backend  = "local"
  config   = { path = "remote.json" }
  defaults = { marker = terraform_data.marker.id }
}

# depends_on: read during apply.
data "terraform_remote_state" "explicit" {
  backend    = "local"
  config     = { path = "remote.json" }
  depends_on = [terraform_data.marker]
}

# Through a module input: read now.
module "inner" {
  source = "./modules/inner"
  marker = terraform_data.marker.id
}

# The module's depends_on: read during apply.
module "held" {
  source     = "./modules/inner"
  marker     = "fixed"
  depends_on = [terraform_data.marker]
}

output "seen" {
  value = [
    data.terraform_remote_state.via_local.outputs.vpc_id,
    data.terraform_remote_state.direct.outputs.vpc_id,
    data.terraform_remote_state.explicit.outputs.vpc_id,
    module.inner.vpc_id,
    module.held.vpc_id,
  ]
}
