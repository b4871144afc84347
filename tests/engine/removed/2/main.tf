# One object forgotten (left alone, gone from state), one destroyed.
resource "terraform_data" "stays" { input = "in config" }
removed {
  from = terraform_data.kept
  lifecycle {
    destroy = false
  }
}
removed {
  from = terraform_data.dropped
}
