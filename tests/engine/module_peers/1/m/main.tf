variable "peer" {
  type = string
}

resource "terraform_data" "r" {
  input = "self"
}

resource "terraform_data" "link" {
  input = var.peer
}

# `arn` does not depend on `peer`: two calls may be given each other's.
output "arn" {
  value = terraform_data.r.id
}

output "seen" {
  value = var.peer
}
