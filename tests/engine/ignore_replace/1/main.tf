# ignore_changes keeps an existing object's input; a replacement is a new
# object, planned from the configuration as written.
resource "terraform_data" "x" {
  input            = "one"
  triggers_replace = "a"
  lifecycle {
    ignore_changes = [input]
  }
}
output "x" { value = terraform_data.x.output }
