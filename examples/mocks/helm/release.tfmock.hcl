# What Helm reports of a release, for the examples' tests: the GPU
# Operator module's outputs read it.
mock_resource "helm_release" {
  defaults = {
    metadata = [{ name = "gpu-operator", revision = 1, namespace = "gpu-operator", chart = "gpu-operator", version = "v25.3.1", app_version = "v25.3.1", values = "{}" }]
  }
}
