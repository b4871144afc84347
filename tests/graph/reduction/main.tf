resource "terraform_data" "a" {}

resource "terraform_data" "b" {
  input = terraform_data.a.id
}

# c depends on a directly and through b: the graph shows only c -> b.
resource "terraform_data" "c" {
  input = [terraform_data.a.id, terraform_data.b.id]
}

resource "terraform_data" "d" {
  for_each = toset(["x", "y"])
  input    = "${each.key}-${terraform_data.c.id}"
}

output "ids" {
  value = [for d in terraform_data.d : d.id]
}
