variable "name" {
  type = string
}
variable "size" {
  type = number
  validation {
    condition     = var.size <= var.limit
    error_message = "size is over the limit"
  }
}
variable "limit" {
  type    = number
  default = 4
}
resource "terraform_data" "node" {
  count = var.size
  input = "${var.name}-${count.index}"
}
output "prefix" { value = "pool" }
output "nodes" { value = terraform_data.node[*].output }
