# The failover cluster plans and applies with every provider mocked:
# each place in the pool's order (AWS in two regions, GCP, Azure) keeps
# the same pool, so wherever the nodes land a job finds what it needs.

# The clouds' and the clusters' answers a plan and an apply read are in
# ../mocks (a mock's computed blocks are otherwise empty).
mock_provider "aws" {
  source = "../mocks/aws"
}

mock_provider "google" {
  source = "../mocks/google"
}

mock_provider "azurerm" {
  source = "../mocks/azurerm"
}

mock_provider "kubernetes" {
  source = "../mocks/kubernetes"

  # Every place's nodes come up offering their GPUs (a mock answers the
  # same each time it is asked: a place whose nodes offer none is left at
  # once, not after wait_for_gpus).
  mock_data "kubernetes_nodes" {
    defaults = {
      nodes = [for n in ["gpu-1", "gpu-2"] : {
        metadata = [{ name = n }]
        status   = [{ allocatable = { "nvidia.com/gpu" = "8" } }]
      }]
    }
  }
}

mock_provider "helm" {
  source = "../mocks/helm"
}

mock_provider "time" {}

run "every_place_keeps_the_same_pool" {
  command = plan

  assert {
    condition = alltrue([
      for other in [module.train_aws_us_west_2, module.train_gcp, module.train_azure] :
      jsonencode(other.portable) == jsonencode(module.train_aws.portable)
    ])
    error_message = "Every place in the order should keep the pool the first has."
  }

  assert {
    condition     = module.train_aws.portable["h100"].gpus_per_node == 8
    error_message = "The pool should have 8 H100s per node."
  }

  assert {
    condition     = module.train_aws.nodes["h100"] == 2
    error_message = "The nodes should go to the first place, AWS us-east-1 spot."
  }

  assert {
    condition = alltrue([
      for other in [module.train_aws_us_west_2, module.train_gcp, module.train_azure] :
      other.nodes["h100"] == 0
    ])
    error_message = "The places after the first should keep the pool empty, ready to take it."
  }
}

run "applies_every_place" {
  command = apply

  assert {
    condition     = keys(output.train_endpoints) == ["aws", "aws_us_west_2", "azure", "gcp"]
    error_message = "Every place should have a cluster to move to."
  }

  assert {
    condition     = module.train_aws.nodes["h100"] == 2 && module.train_gcp.nodes["h100"] == 0
    error_message = "Once its GPUs showed, the pool should have stayed at the first place."
  }
}
