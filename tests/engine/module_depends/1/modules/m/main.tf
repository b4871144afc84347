resource "terraform_data" "inner" { input = 3 }
resource "terraform_data" "inner2" { input = terraform_data.inner.output }
