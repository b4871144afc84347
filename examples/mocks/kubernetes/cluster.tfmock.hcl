# What a cluster's API server reports, for the examples' tests: a
# worker's dispatcher token Secret as it fills it in, and the GPU
# Operator's ClusterPolicy ready (its check reads it once the operator is
# installed, as a plan after an apply finds it).
mock_resource "kubernetes_manifest" {
  defaults = {
    object = { data = { "ca.crt" = "Q0E=", token = "dG9rZW4=" } }
  }
}

mock_data "kubernetes_resource" {
  defaults = {
    object = { status = { state = "ready" } }
  }
}
