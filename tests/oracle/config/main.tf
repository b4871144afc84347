# Configuration the oracle evaluates with `terraform console` in this
# directory: heredocs, template directives and file functions need a file.

variable "name" {
  type    = string
  default = "train"
}

variable "pools" {
  type = list(object({
    gpu   = string
    count = optional(number, 1)
  }))
  default = [{ gpu = "H100", count = 2 }, { gpu = "A100" }]
}

locals {
  plain = <<EOT
line one
  line two
EOT

  flush = <<-EOT
    indented
      more
    back
  EOT

  flush_blank = <<-EOT
    a

    b
  EOT

  flush_directives = <<-EOT
    %{ for p in var.pools ~}
    - ${p.gpu} x${p.count}
    %{ endfor ~}
    done
  EOT

  flush_if = <<-EOT
    %{ if var.name == "train" }
      training
    %{ else }
      other
    %{ endif }
  EOT

  strip_both = <<-EOT
    start
    %{~ for x in ["a", "b"] ~}
    ${x}
    %{~ endfor ~}
    end
  EOT

  mixed_indent = <<-EOT
      deep
    shallow
  EOT

  interp_first = <<-EOT
    ${var.name}
      after
  EOT

  empty = <<EOT
EOT

  tabs = <<-EOT
	tab indented
	  more
  EOT

  strip_for_no_marker = <<-EOT
    %{ for x in [1] }
    - ${x}
    %{ endfor }
    done
  EOT

  strip_for_right = <<-EOT
    %{ for x in [1] ~}
    - ${x}
    %{ endfor }
    done
  EOT

  strip_if_left = <<-EOT
    start
    %{~ if true }
    yes
    %{ endif }
  EOT

  plain_strip = <<EOT
  a
  %{~ if true ~}
  b
  %{~ endif ~}
  c
EOT

  directive_shallow = <<-EOT
    x
  %{ if true }
    y
  %{ endif }
  EOT

  quoted_strip = "a \n %{~ if true ~} \n b \n %{~ endif ~} c"

  escapes_nested = "q $${x} %{ if true }n $${x} %%{y} \u0041 \\ \" %{ endif }"

  escapes_heredoc = <<EOT
top $${x} %%{y} \n
%{ if true }nested $${x} %%{y} \n%{ endif }
EOT

  tpl     = templatefile("${path.module}/greeting.tftpl", { name = var.name, pools = var.pools })
  file    = file("${path.module}/greeting.tftpl")
  exists  = fileexists("${path.module}/greeting.tftpl")
  missing = fileexists("${path.module}/nope.txt")
  files   = fileset(path.module, "*.tftpl")
  base    = basename("${path.module}/greeting.tftpl")
  dir     = dirname("a/b/c.txt")
  md5     = filemd5("${path.module}/greeting.tftpl")
  b64     = filebase64("${path.module}/greeting.tftpl")
  names   = [for p in var.pools : lower(p.gpu)]
  overridden_local = "from main.tf"
  counts  = { for p in var.pools : p.gpu => p.count }
}

# The built-in provider's functions (provider::terraform::…) need it named.
terraform {
  required_providers {
    terraform = { source = "terraform.io/builtin/terraform" }
  }
}
