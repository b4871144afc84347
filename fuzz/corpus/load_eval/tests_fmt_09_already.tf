resource "terraform_data" "x" {
  input = {
    a   = 1
    bcd = "x"
  }
}
