resource "terraform_data" "kept" { input = "keep me" }
resource "terraform_data" "dropped" { input = "drop me" }
resource "terraform_data" "stays" { input = "in config" }
