# GPU nodes someone else runs (a neocloud, or on premises): strata labels
# them as their pool says and installs the same GPU Operator and driver as
# on the clouds. Nothing else on the cluster is touched.

variable "kubeconfig" {
  type    = string
  default = "~/.kube/config"
}

variable "context" {
  type    = string
  default = "gpu-lab"
}

cluster "lab" {
  clouds = ["kubernetes"]

  gpu_operator {
    version        = "v25.3.1"
    driver_version = "570.124.06"
    cuda_version   = "12.8"
    mig_strategy   = "single"
  }

  node_pool "h100" {
    gpu           = "H100"
    gpus_per_node = 8
    labels        = { workload = "training" }
    taints        = [{ key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" }]
  }

  cloud "kubernetes" {
    config_path    = var.kubeconfig
    config_context = var.context
    nodes          = { h100 = ["gpu-node-1", "gpu-node-2"] }
  }
}
