# Replacing a prevent_destroy resource is refused.
resource "terraform_data" "keep" {
  input            = "v1"
  triggers_replace = "now"
  lifecycle { prevent_destroy = true }
}
resource "terraform_data" "src" { input = 2 }
