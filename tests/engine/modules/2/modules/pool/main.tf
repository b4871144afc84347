variable "name" { type = string }
variable "size" {
  type    = number
  default = 1
}
resource "terraform_data" "node" {
  count = var.size
  input = "${var.name}-${count.index}"
}
output "nodes" { value = terraform_data.node[*].output }
