variable x {
type = "string"
  default="a"
}
variable "y" {
  type = list
}
variable "z" {
  type = "map"
  default = {}
}
resource aws_vpc main {
    cidr_block="${var.cidr}"
  tags = {
      Name="x"
    LongerName = "y"
  }
  # comment
  enable_dns = true # trailing
  a = "${var.a}-x"
  b = -1
  c = 1 - 2
  d = [ 1,2 , 3 ]
  e = foo( 1 , "b" )
  f = {a=1, b=2}
  g = x ? y : z
  h = {for k,v in m: k=>v}
  i = "${ var.x }"
  heredoc = <<EOT
  keep   this
EOT
  j = <<-EOT
    indented
    EOT
  k = var.list[0].attr
  l = !true
  m = a&&b||c
  n = {}
  o = []
}
