#!/usr/bin/env python3
"""Generates a configuration of N terraform_data resources forming a 10-ary
tree: each resource's input references its parent's output, with a few
locals, a cidrsubnet and a merge per resource (the workload of issue 8).
The same files run under Terraform and strata.

Usage: python3 bench/gen.py N OUT_DIR [--files K]
"""
import os
import sys


def main():
    n = int(sys.argv[1])
    out = sys.argv[2]
    files = 10
    if "--files" in sys.argv:
        files = int(sys.argv[sys.argv.index("--files") + 1])
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".tf"):
            os.remove(os.path.join(out, f))
    with open(os.path.join(out, "main.tf"), "w") as fh:
        fh.write('''variable "base_cidr" {
  type    = string
  default = "10.0.0.0/8"
}

variable "tags" {
  type    = map(string)
  default = { team = "ml-platform", env = "bench" }
}

locals {
  prefix = "bench"
  width  = 10
}
''')
    per_file = (n + files - 1) // files
    for k in range(files):
        lo, hi = k * per_file, min(n, (k + 1) * per_file)
        if lo >= hi:
            break
        with open(os.path.join(out, "r%03d.tf" % k), "w") as fh:
            for i in range(lo, hi):
                parent = (i - 1) // 10
                if i == 0:
                    src = '"root"'
                else:
                    src = "terraform_data.r%d.output" % parent
                fh.write('''resource "terraform_data" "r%d" {
  input = {
    parent = %s
    name   = "${local.prefix}-%d"
    subnet = cidrsubnet(var.base_cidr, 16, %d)
    tags   = merge(var.tags, { index = "%d", depth = "%d" })
  }
}

''' % (i, src, i, i % 65536, i, len(str(i))))


if __name__ == "__main__":
    main()
