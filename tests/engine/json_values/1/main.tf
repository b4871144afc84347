# Values of any type (terraform_data's input, outputs) are shown as their
# JSON: a null inside an object is a key that is there, and sequences
# pair as Terraform's renderer pairs them.
resource "terraform_data" "x" {
}

resource "terraform_data" "y" {
  input = {
    a    = "x"
    n    = null
    o    = null
    m    = null
    gone = "g"
    r    = { s = 1, t = null }
    l    = ["a", 1, "c", null]
    k    = [1, 2, 3, 4, 5, 6]
    q    = [null, null, 1]
    rot  = [1, 2, 3]
    w    = ["a", "b"]
    z    = ["a", "b", "c", "d"]
    objs = [{ a = 1, n = null }, { a = 2 }]
    mix  = [{ a = 1 }, "x", { b = 2 }]
    grow = [{ a = 1 }, { a = 2 }]
  }
  triggers_replace = tomap({ "my-key" = "a", b = null })
}

resource "terraform_data" "z" {
  input = { a = "x", n = null }
}

output "o" {
  value = { a = 1, n = null, g = 1 }
}

output "p" {
  value = { a = 1, n = null }
}

output "seq" {
  value = ["a", "b", "c"]
}
