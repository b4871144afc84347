module "a" {
  source = "./m"
  peer   = module.b.arn
}

module "b" {
  source = "./m"
  peer   = module.a.arn
}

output "a_sees_b" {
  value = module.a.seen == module.b.arn
}
