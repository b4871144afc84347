# The job runtime's queues, flavours and quotas, planned with the
# Kubernetes, Helm and time providers mocked: no cluster is asked
# anything (`strata test` in this folder; tests/module_tests.rs runs it).

mock_provider "kubernetes" {}

mock_provider "helm" {}

mock_provider "time" {}

variables {
  runtime = {
    queues = {
      training = { namespaces = ["ml", "research"] }
    }
  }
  pools = {
    h100 = {
      gpus_per_node = 8
      max_nodes     = 2
      labels        = { "strata.dev/pool" = "h100" }
      taints        = [{ key = "nvidia.com/gpu", effect = "NoSchedule" }]
    }
  }
}

run "a_queue_takes_every_pool_at_its_size" {
  command = plan
  assert {
    condition     = output.quotas.training.h100 == 16
    error_message = "A queue's quota of a pool is max_nodes × gpus_per_node by default."
  }
  assert {
    condition     = length(kubernetes_manifest.local_queue) == 2 && kubernetes_manifest.local_queue["research/training"].manifest.spec.clusterQueue == "training"
    error_message = "Each namespace of a queue gets a LocalQueue pointing at it."
  }
  assert {
    condition     = kubernetes_manifest.flavor["h100"].manifest.spec.tolerations == [{ key = "nvidia.com/gpu", operator = "Equal", value = "", effect = "NoSchedule" }]
    error_message = "A pool's flavour tolerates its taints."
  }
  assert {
    condition     = kubernetes_manifest.cluster_queue["training"].manifest.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota == 16
    error_message = "The ClusterQueue's quota is the pool's."
  }
}

run "a_queue_says_its_own_quota" {
  command = plan
  variables {
    runtime = {
      queues = {
        training = { namespaces = ["ml"], gpus = { h100 = 4 } }
      }
    }
  }
  assert {
    condition     = output.quotas.training.h100 == 4
    error_message = "A queue's own gpus win over the pool's size."
  }
}

run "queued_provisioning_waits_for_its_request" {
  command = plan
  variables {
    pools = {
      h100 = {
        max_nodes          = 4
        labels             = { "strata.dev/pool" = "h100" }
        taints             = []
        provisioning_class = "queued-provisioning.gke.io"
        cloud_taints       = [{ key = "cloud.google.com/gke-queued", value = "true", effect = "NoSchedule" }]
      }
    }
  }
  assert {
    condition     = kubernetes_manifest.provisioning_config["queued-provisioning.gke.io"].manifest.metadata.name == "queued-provisioning-gke-io"
    error_message = "Each ProvisioningRequest class gets a config named after it."
  }
  assert {
    condition     = kubernetes_manifest.cluster_queue["training"].manifest.spec.admissionChecksStrategy.admissionChecks[0].onFlavors == tolist(["h100"])
    error_message = "The queue checks the queued pool's flavour with the class's admission check."
  }
  assert {
    condition     = length(kubernetes_manifest.flavor["h100"].manifest.spec.tolerations) == 1 && output.portable.flavors.h100.tolerations == []
    error_message = "The flavour tolerates the cloud's taint, which the portable view leaves out."
  }
}

run "a_manager_sums_its_workers" {
  command = plan
  variables {
    multikueue = {
      role    = "manager"
      workers = ["east", "west"]
      quotas = {
        east = { training = { h100 = 8 } }
        west = { training = { h100 = 16 } }
      }
    }
    kubeconfigs = {
      east = "apiVersion: v1"
      west = "apiVersion: v1"
    }
  }
  assert {
    condition     = output.quotas.training.h100 == 24
    error_message = "A MultiKueue manager's quota is its workers' sum."
  }
}

run "checkpoints_in_every_queue_namespace" {
  command = plan
  variables {
    checkpoints = {}
    checkpoint_access = {
      AWS_REGION = "us-east-1"
      BUCKET     = "ckpt"
    }
  }
  assert {
    condition     = length(kubernetes_manifest.checkpoint_secret) == 2 && length(kubernetes_manifest.checkpoint_account) == 2
    error_message = "Each queue namespace gets the checkpoint Secret and service account."
  }
}
