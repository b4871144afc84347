# Collection functions keep what is known of keys and lengths when only
# elements are unknown, so count and for_each can use them while planning.
resource "terraform_data" "x" {
  input = "a"
}
resource "terraform_data" "m" {
  for_each = merge({ a = terraform_data.x.id }, { b = "y" })
  input    = each.value
}
resource "terraform_data" "k" {
  for_each = toset(keys(merge({ a = terraform_data.x.id }, { b = "y" })))
}
resource "terraform_data" "c" {
  count = length(concat([terraform_data.x.id], ["z"]))
}
resource "terraform_data" "s" {
  count = length(slice(reverse([terraform_data.x.id, "a", "b"]), 0, 2))
}
resource "terraform_data" "z" {
  for_each = zipmap(["p", "q"], [terraform_data.x.id, "v"])
  input    = each.value
}
resource "terraform_data" "f" {
  count = length(flatten([[terraform_data.x.id], ["b", "c"]]))
}
output "e" { value = element([terraform_data.x.id, "w"], 1) }
output "chunks" { value = length(chunklist([terraform_data.x.id, "a", "b"], 2)) }
output "co" { value = length(coalescelist([], [terraform_data.x.id])) }
output "v" { value = length(values({ a = terraform_data.x.id })) }
