locals {
  greet = "Hello, ${var.name}!"
  multi = "${var.a}${var.b}"
  nested = "${lookup(var.m, "${var.k}-x", "d")}"
  dir = "%{ if var.on }on%{ else }off%{ endif }"
  strip = "${~ var.x ~}"
  doc = <<-EOT
    Name: ${var.name}
    %{ for s in var.list ~}
    - ${s}
    %{ endfor ~}
  EOT
  esc = "$${not} %%{this}"
  obj_interp = "${ {a=1}.a }"
}
