# The existing cluster's nodes labelled as the pool says and the GPU
# Operator installed, with Kubernetes and Helm mocked (no cluster is
# asked anything): planned, then applied to the mocks.

mock_provider "kubernetes" {
  source = "../mocks/kubernetes"
}

mock_provider "helm" {
  source = "../mocks/helm"
}

run "labels_the_listed_nodes" {
  command = plan

  assert {
    condition     = module.lab_kubernetes.nodes == { h100 = 2 }
    error_message = "Both listed nodes should be the H100 pool's."
  }

  assert {
    condition     = module.lab_kubernetes.portable["h100"].labels["workload"] == "training"
    error_message = "The pool's label should be set on its nodes."
  }

  assert {
    condition     = module.lab_kubernetes.portable["h100"].driver_version == "570.124.06"
    error_message = "The GPU Operator should install the spec's driver, as on the clouds."
  }
}

run "applies_to_the_cluster" {
  command = apply

  assert {
    condition     = module.lab_kubernetes.portable["h100"].gpu_operator == "v25.3.1"
    error_message = "The spec's GPU Operator version should be installed."
  }
}
