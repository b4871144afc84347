# Two H100 nodes wherever there is capacity first: AWS in us-east-1, then
# us-west-2, then GCP, then Azure, spot before on-demand, never above
# $6 per GPU-hour. Every cloud keeps the same pool; only the place the
# nodes land on runs them. `strata plan` lists the places in order with
# their prices; `strata apply` moves along them when one runs short.

cluster "train" {
  kubernetes_version = "1.31"

  network {
    cidr = "10.40.0.0/16"
  }

  gpu_operator {
    version        = "v25.3.1"
    driver_version = "570.124.06"
    cuda_version   = "12.8"
    mig_strategy   = "single"
  }

  node_pool "h100" {
    gpu           = "H100"
    gpus_per_node = 8
    min_nodes     = 0
    max_nodes     = 4
    nodes         = 2
    labels        = { workload = "training" }
    taints        = [{ key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" }]

    placement {
      order                  = ["aws", "gcp", "azure"]
      capacity               = ["spot", "on_demand"]
      max_price_per_gpu_hour = 6.0
      wait_for_gpus          = "20m"
      cool_down              = "1h"
    }
  }

  cloud "aws" {
    regions = ["us-east-1", "us-west-2"]
  }

  cloud "gcp" {
    project = "acme-ml"
    region  = "us-central1"
  }

  cloud "azure" {
    subscription_id = "00000000-0000-0000-0000-000000000000"
    location        = "eastus"
  }
}
