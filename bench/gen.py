#!/usr/bin/env python3
"""Generates a configuration of N terraform_data resources, the workload
of issue 8, in one of two shapes. The same files run under Terraform and
strata.

- tree (default): a 10-ary tree, each resource's input referencing its
  parent's output, with a few locals, a cidrsubnet and a merge per
  resource. The root's name is `var.root`, so `-var root=…` changes the
  root and, through the references, everything below it.
- wide: 50 resource blocks with for_each over N/50 keys each, flat, every
  instance reading only variables and locals.

Usage: python3 bench/gen.py N OUT_DIR [--files K] [--shape tree|wide]
"""
import os
import sys


def main():
    n = int(sys.argv[1])
    out = sys.argv[2]
    files = 10
    if "--files" in sys.argv:
        files = int(sys.argv[sys.argv.index("--files") + 1])
    shape = "tree"
    if "--shape" in sys.argv:
        shape = sys.argv[sys.argv.index("--shape") + 1]
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

variable "root" {
  type    = string
  default = "root"
}

locals {
  prefix = "bench"
  width  = 10
}
''')
    if shape == "wide":
        wide(n, out, files)
        return
    per_file = (n + files - 1) // files
    for k in range(files):
        lo, hi = k * per_file, min(n, (k + 1) * per_file)
        if lo >= hi:
            break
        with open(os.path.join(out, "r%03d.tf" % k), "w") as fh:
            for i in range(lo, hi):
                parent = (i - 1) // 10
                if i == 0:
                    src = "var.root"
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


def wide(n, out, files):
    types = 50
    per_type = max(1, n // types)
    per_file = (types + files - 1) // files
    for k in range(files):
        lo, hi = k * per_file, min(types, (k + 1) * per_file)
        if lo >= hi:
            break
        with open(os.path.join(out, "w%03d.tf" % k), "w") as fh:
            for t in range(lo, hi):
                fh.write('''resource "terraform_data" "t%d" {
  for_each = toset(%s)
  input = {
    name   = "${local.prefix}-%d-${each.key}"
    subnet = cidrsubnet(var.base_cidr, 16, %d)
    tags   = merge(var.tags, { key = each.key, type = "%d" })
  }
}

''' % (t, keys(per_type), t, t, t))


def keys(n):
    """The expression of n keys: Terraform's range() makes at most 1024
    values at a call, so past 1000 they are made in chunks."""
    if n <= 1000:
        return '[for i in range(%d) : format("k%%04d", i)]' % n
    return ('flatten([for c in range(%d) : [for i in range(c * 1000, min(%d, c * 1000 + 1000)) : format("k%%04d", i)]])'
            % ((n + 999) // 1000, n))


if __name__ == "__main__":
    main()
