resource "terraform_data" "keep" {
  input = "v1"
  lifecycle { prevent_destroy = true }
}
resource "terraform_data" "src" { input = 2 }
