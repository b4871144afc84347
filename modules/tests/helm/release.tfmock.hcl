# What Helm reports of the GPU Operator's release, for the modules' tests
# (`mock_provider "helm" { source = "../tests/helm" }`): the operator
# module's `revision` output reads it.
mock_resource "helm_release" {
  defaults = {
    metadata = [{
      name        = "gpu-operator"
      revision    = 1
      namespace   = "gpu-operator"
      chart       = "gpu-operator"
      version     = "v25.3.1"
      app_version = "v25.3.1"
      values      = "{}"
    }]
  }
}
