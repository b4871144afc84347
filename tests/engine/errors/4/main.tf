# Resources that reference each other.
resource "terraform_data" "keep" {
  input = terraform_data.other.output
  lifecycle { prevent_destroy = true }
}
resource "terraform_data" "other" { input = terraform_data.keep.output }
