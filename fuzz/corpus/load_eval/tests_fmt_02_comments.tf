// leading slash comment
/* block
   comment */
locals {
  a = 1 # one
  bb = 22 // two
  ccc = 333 /* three */
  # standalone

  d    = 4
}

/* before */ resource "x" "y" {}
