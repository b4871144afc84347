# A module names files relative to the working directory (the root
# module's, under -chdir), and its own through path.module.
module "reader" {
  source = "./modules/reader"
}

output "files" {
  value = module.reader.files
}
