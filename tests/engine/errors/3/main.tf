# A count that depends on a value known only after apply.
resource "terraform_data" "keep" {
  input = "v1"
  lifecycle { prevent_destroy = true }
}
resource "terraform_data" "src" { input = 3 }
resource "terraform_data" "n" {
  count = terraform_data.src.output
  input = count.index
}
