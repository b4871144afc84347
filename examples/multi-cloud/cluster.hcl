# One GPU training cluster on AWS, GCP and Azure: the same network plan,
# node pools, labels, taints, driver and GPU Operator on each, and the
# same job runtime (Kueue's queue "training" for namespace "ml", KubeRay).
# A small CPU-only cluster in us-east-1 is MultiKueue's manager: a job
# submitted there runs on the cheapest cloud whose queue has room. Every
# cloud keeps checkpoints in its own bucket behind the same Secret, so a
# job resumes wherever it lands.

variable "clouds" {
  type    = list(string)
  default = ["aws", "gcp", "azure"]
}

cluster "train" {
  clouds             = var.clouds
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

  runtime {
    queue "training" {
      namespaces = ["ml"]
    }
    multikueue {
      manager {
        cloud  = "aws"
        region = "us-east-1"
      }
    }
    checkpoints {
      bucket            = "acme-train-ckpt"
      versioning        = true
      expire_after_days = 30
    }
  }

  node_pool "h100" {
    gpu           = "H100"
    gpus_per_node = 8
    min_nodes     = 0
    max_nodes     = 4
    capacity      = "on_demand"
    labels        = { workload = "training" }
    taints        = [{ key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" }]
  }

  cloud "aws" {
    region = "us-east-1"
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
