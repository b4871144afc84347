terraform {
required_version = ">= 1.5"
  backend "s3" {
  bucket = "b"
    key = "k"
  }
}

resource "aws_security_group" "sg" {
  name = "sg"
  dynamic "ingress" {
  for_each = var.ports
  content {
  from_port = ingress.value
  to_port = ingress.value
  protocol = "tcp"
  }
  }
  lifecycle {
  create_before_destroy = true
  ignore_changes = [tags]
  }
}
module "net" {
  source = "./net"
  count = 2
  cidr = cidrsubnet("10.0.0.0/8", 8, count.index)
}
output "x" { value = 1 }
data "aws_ami" "gpu" {
  most_recent = true
  filter {
    name = "name"
    values = ["*nvidia*"]
  }
}
