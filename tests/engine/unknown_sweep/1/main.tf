# What each function and operator keeps known when part of its input is
# unknown while planning: u is unknown until apply ("a" then), k is known.
# `&&` and `||` are left out: strata follows Terraform 1.12 there
# (tests/language.rs), this record is 1.11's.
resource "terraform_data" "x" {
  input = "a"
}
locals {
  u = terraform_data.x.output
  k   = "k"
  tpl = "x-$${v}"
}
output "length_list" { value = length([local.u, local.k]) }
output "length_map" { value = length({ a = local.u }) }
output "length_str" { value = length(local.u) }
output "concat" { value = concat([local.u], [local.k]) }
output "merge" { value = merge({ a = local.u }, { b = local.k }) }
output "keys" { value = keys({ a = local.u, b = local.k }) }
output "values" { value = values({ a = local.u, b = local.k }) }
output "lookup_known" { value = lookup({ a = local.u, b = local.k }, "b", "d") }
output "lookup_unknown" { value = lookup({ a = local.u, b = local.k }, "a", "d") }
output "index_known" { value = [local.u, local.k][1] }
output "attr_known" { value = { a = local.u, b = local.k }.b }
output "element" { value = element([local.u, local.k], 1) }
output "contains_known" { value = contains([local.u, local.k], local.k) }
output "contains_absent" { value = contains([local.u, local.k], "zz") }
output "distinct" { value = distinct([local.u, local.k]) }
output "compact" { value = compact([local.u, local.k]) }
output "reverse" { value = reverse([local.u, local.k]) }
output "slice" { value = slice([local.u, local.k, "c"], 1, 3) }
output "flatten" { value = flatten([[local.u], [local.k]]) }
output "chunklist" { value = chunklist([local.u, local.k, "c"], 2) }
output "coalesce" { value = coalesce(local.k, local.u) }
output "coalescelist" { value = coalescelist([local.u], [local.k]) }
output "zipmap" { value = zipmap(["p", "q"], [local.u, local.k]) }
output "setproduct" { value = length(setproduct([local.u, local.k], ["z"])) }
output "tolist" { value = tolist([local.u, local.k]) }
output "toset_len" { value = length(toset([local.u, local.k])) }
output "tomap" { value = tomap({ a = local.u, b = local.k }) }
output "join" { value = join(",", [local.u, local.k]) }
output "upper" { value = upper(local.u) }
output "format" { value = format("%s-%s", local.u, local.k) }
output "formatlist" { value = formatlist("%s!", [local.u, local.k]) }
output "jsonencode" { value = jsonencode([local.u, local.k]) }
output "one" { value = one([local.u]) }
output "alltrue" { value = alltrue([local.u == "a", false]) }
output "anytrue" { value = anytrue([local.u == "a", true]) }
output "sum" { value = sum([length(local.u), 1]) }
output "sort" { value = sort([local.u, local.k]) }
output "transpose" { value = transpose({ a = [local.u], b = [local.k] }) }
output "matchkeys" { value = matchkeys([local.u, local.k], ["x", "y"], ["y"]) }
output "try_known" { value = try(local.k, local.u) }
output "can" { value = can(local.u) }
output "eq_unknown" { value = local.u == local.k }
output "eq_lists" { value = [local.u] == [local.k, local.k] }
output "not" { value = !(local.u == "a") }
output "cond_unknown" { value = local.u == "a" ? "p" : "q" }
output "cond_known" { value = local.k == "k" ? local.u : "q" }
output "template" { value = "${local.k}-${local.u}" }
output "template_if" { value = "%{if local.u == "a"}y%{endif}" }
output "for_list" { value = [for v in [local.u, local.k] : v] }
output "for_map" { value = { for k, v in { a = local.u, b = local.k } : k => v } }
output "for_if" { value = [for v in [local.u, local.k] : v if v == "k"] }
output "for_keys_unknown" { value = { for v in [local.u] : v => 1 } }
output "splat" { value = [{ a = local.u }, { a = local.k }][*].a }
output "tuple_index_unknown" { value = [local.k, local.k][length(local.u) - 1] }
output "object_unknown_key" { value = { (local.u) = 1, b = 2 } }
output "arith" { value = length(local.u) + 1 }
output "neg" { value = -length(local.u) }
output "string_concat_len" { value = length([for s in [local.u, local.k] : s]) }
output "nested" { value = { a = [local.u, { b = local.k, c = local.u }] } }
output "sensitive_unknown" {
  value     = sensitive(local.u)
  sensitive = true
}
output "nonsensitive" { value = nonsensitive(sensitive([local.u, local.k])) }
output "type_conv" { value = tostring(local.u) }
output "regex" { value = regex("a", local.u) }
output "split" { value = split(",", local.u) }
output "range_len" { value = length(range(length(local.u))) }
output "can_index" { value = can([local.u][0]) }
output "startswith" { value = startswith(local.u, "a") }
output "setunion" { value = setunion([local.u], [local.k]) }
output "list_of_maps" { value = [for m in [{ a = local.u }] : keys(m)] }
output "toset" { value = toset([local.u, local.k]) }
output "setintersection" { value = setintersection([local.u, local.k], [local.k]) }
output "setsubtract" { value = setsubtract([local.u, local.k], [local.k]) }
output "index_fn" { value = index([local.k, local.u], local.k) }
output "element_unknown_index" { value = element([local.k, local.k], length(local.u)) }
output "lookup_unknown_default" { value = lookup({ a = local.k }, "a", local.u) }
output "lookup_absent_unknown_default" { value = lookup({ a = local.k }, "b", local.u) }
output "concat_unknown_list" { value = length(concat([local.k], split(",", local.u))) }
output "merge_unknown_map" { value = merge({ a = 1 }, { for s in split(",", local.u) : s => 1 }) }
output "flatten_unknown" { value = flatten([[local.k], split(",", local.u)]) }
output "coalescelist_unknown_first" { value = coalescelist(split(",", local.u), [local.k]) }
output "range_unknown" { value = range(length(local.u)) }
output "cidrsubnet" { value = cidrsubnet("10.0.0.0/16", 8, length(local.u)) }
output "templatestring" { value = templatestring(local.tpl, { v = local.u }) }
output "startswith_prefix" { value = startswith("${local.k}${local.u}", "k") }
output "tobool" { value = tobool(local.u == "a") }
output "try_unknown_first" { value = try(local.u, "d") }
output "try_error_then_unknown" { value = try(local.k.x, local.u) }
output "can_error" { value = can(local.k.x) }
output "keys_of_unknown_map" { value = keys({ for s in split(",", local.u) : s => 1 }) }
output "length_for_over_unknown" { value = length([for s in split(",", local.u) : s]) }
output "distinct_known" { value = distinct([local.k, local.k]) }
output "zipmap_unknown_keys" { value = zipmap([local.u], [1]) }
output "object_attr_unknown_obj" { value = { a = local.u }.a }
output "list_with_null" { value = compact([local.k, null]) }
output "tuple_eq" { value = [local.k, local.u] == [local.k] }
output "obj_eq" { value = { a = local.u } == { b = 1 } }
output "number_cmp" { value = length(local.u) > 0 }
output "cond_same_branches" { value = local.u == "a" ? "x" : "x" }
output "splat_unknown" { value = split(",", local.u)[*] }
output "sensitive_keys" {
  value     = keys(sensitive({ a = local.u }))
  sensitive = true
}
