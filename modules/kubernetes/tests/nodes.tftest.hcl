# An existing cluster: its nodes labelled as their pools say, the GPU
# Operator only where there are GPU pools, the runtime's quotas from the
# nodes listed — planned with the Kubernetes, Helm and time providers
# mocked (`strata test` in this folder; tests/module_tests.rs runs it).

mock_provider "kubernetes" {}

mock_provider "helm" {
  source = "../tests/helm"
}

mock_provider "time" {}

variables {
  name = "onprem"
  gpu_operator = {
    version        = "v25.3.1"
    driver_version = "570.124.06"
  }
  node_pools = {
    h100 = {
      gpu    = "h100"
      labels = { "strata.dev/pool" = "h100" }
      taints = [{ key = "nvidia.com/gpu", effect = "NoSchedule" }]
    }
  }
  nodes = {
    h100 = ["gpu-1", "gpu-2"]
  }
}

run "each_listed_node_gets_its_pools_labels" {
  command = plan
  assert {
    condition     = length(kubernetes_labels.node) == 2 && kubernetes_labels.node["gpu-2"].labels["strata.dev/pool"] == "h100"
    error_message = "Every node listed for a pool is labelled as the pool says."
  }
  assert {
    condition     = output.portable.h100.labels["strata.dev/pool"] == "h100" && output.portable.h100.gpu == "h100"
    error_message = "The portable view reports the labels set on the nodes."
  }
  assert {
    condition     = length(module.gpu_operator) == 1
    error_message = "A cluster with GPU pools gets the GPU Operator."
  }
}

run "the_runtime_counts_the_nodes_listed" {
  command = plan
  variables {
    runtime = {
      queues = {
        training = { namespaces = ["ml"] }
      }
    }
  }
  assert {
    condition     = output.dispatch_quotas.training.h100 == 16
    error_message = "A pool's quota here is its listed nodes × its GPUs per node."
  }
}

run "a_manager_without_gpu_pools_has_no_operator" {
  command = plan
  variables {
    node_pools = {}
    nodes      = {}
  }
  assert {
    condition     = length(module.gpu_operator) == 0 && output.portable == {}
    error_message = "No GPU pools, no GPU Operator."
  }
}
