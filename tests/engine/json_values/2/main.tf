resource "terraform_data" "x" {
  input = { a = "x", n = null, o = null }
}

resource "terraform_data" "y" {
  input = {
    a    = "x"
    n    = null
    o    = { k = 1 }
    m    = "s"
    r    = { s = 2, t = null }
    l    = ["b", 1, null, "d"]
    k    = [1, 2, 3, 5, 6, 7]
    q    = [1]
    rot  = [2, 3, 1]
    w    = ["b", "a"]
    z    = ["d", "c", "b"]
    objs = [{ a = 1, n = null }, { a = 3 }]
    mix  = [{ a = 2 }, { b = 3 }, "x"]
    grow = [{ a = 1 }, { a = 3 }, { a = 4 }]
  }
  triggers_replace = tomap({ "my-key" = "b", b = null })
}

resource "terraform_data" "z" {
}

output "o" {
  value = { a = 2, n = null }
}

output "seq" {
  value = ["b", "c", "a"]
}
