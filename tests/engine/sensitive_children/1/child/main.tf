variable "items" {
  type    = map(string)
  default = {}
}

resource "terraform_data" "r" {
  for_each = var.items
  input    = each.value
}

resource "terraform_data" "one" {
  input = "v"
}

# `sensitive = true` on a child's output hides it where it would be shown;
# the calling module gets the value as it is (Terraform plans all three).
output "ids" {
  value     = { for k, r in terraform_data.r : k => r.id }
  sensitive = true
}

output "plain" {
  value     = { a = 1 }
  sensitive = true
}

output "made" {
  value     = terraform_data.one.output
  sensitive = true
}
