module "c" {
  source = "./child"
}

output "ids" {
  value = module.c.ids
}

output "plain" {
  value = module.c.plain
}

output "made" {
  value = module.c.made
}
