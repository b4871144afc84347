locals {
subnets = [
"10.0.0.0/24",
    "10.0.1.0/24",
      ]
  tags = merge(
  var.tags,
  {
  Name = "x"
  Env="prod"
  },
  )
  pools = {
  for name, p in var.pools : name => {
  gpu = p.gpu
  count   = p.count
  }
  if p.enabled
  }
  cond = (
    var.a
    ? "yes"
    : "no"
  )
  nested = [[1,2],[3,4]]
  splat = aws_instance.x[*].id
  legacy = aws_instance.x.*.id
  calls = concat(var.a, var.b...)
  neg = [-1, - 2, 3 -4, x-1]
  math = (1+2)*3/4%5
  cmp = a>=b&&c!=d||!e
  obj = {"key with space" = 1, other: 2}
}
