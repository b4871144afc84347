# Planned against tests/render/changes/prior.tfstate: one of every action.
variable "doc" {
  type    = string
  default = "line one\nline three\n"
}

resource "terraform_data" "updated" {
  input = {
    name   = "gpu-pool"
    doc    = var.doc
    policy = jsonencode({ Version = "2012-10-17", Statement = [{ Effect = "Allow", Action = "s3:GetObject" }] })
    zones  = ["a", "c", "d"]
    labels = { "nvidia.com/gpu" = "H100", team = "ml" }
  }
}

resource "terraform_data" "replaced" {
  input            = "same"
  triggers_replace = "v2"
}

resource "terraform_data" "swapped" {
  input            = "new"
  triggers_replace = "v2"
  lifecycle {
    create_before_destroy = true
  }
}

resource "terraform_data" "renamed" {
  input = "kept"
}

moved {
  from = terraform_data.old_name
  to   = terraform_data.renamed
}

resource "terraform_data" "pool" {
  count = 1
  input = "node-${count.index}"
}

resource "terraform_data" "created" {
  input = terraform_data.updated.output
}

output "pool" {
  value = terraform_data.pool[*].output
}

output "token" {
  value     = "s3cr3t-2"
  sensitive = true
}
