# An override file: merged into main.tf's blocks after all other files.
variable "name" {
  default = "overridden"
}

locals {
  overridden_local = "from the override file"
}
