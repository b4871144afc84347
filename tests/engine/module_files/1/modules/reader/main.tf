output "files" {
  value = {
    root_file   = file("note.txt")
    root_exists = fileexists("note.txt")
    own_exists  = fileexists("own.txt")
    own_file    = file("${path.module}/own.txt")
    template    = templatefile("${path.module}/greeting.tftpl", { name = "strata" })
    listed      = fileset(path.module, "*.txt")
  }
}
