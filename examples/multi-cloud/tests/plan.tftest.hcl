# The three-cloud cluster plans with every provider mocked: the same pool
# on AWS, GCP and Azure (the portability check's view of each, compared
# as JSON: a map on one cloud and an object on another are the same
# pool), and MultiKueue's manager adding up the workers' GPU quotas.

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
}

mock_provider "helm" {
  source = "../mocks/helm"
}

mock_provider "time" {}

run "the_same_pool_on_every_cloud" {
  command = plan

  assert {
    condition     = jsonencode(module.train_aws.portable) == jsonencode(module.train_gcp.portable)
    error_message = "GCP's pool should be AWS's: the same GPUs, labels, taints, driver and operator."
  }

  assert {
    condition     = jsonencode(module.train_aws.portable) == jsonencode(module.train_azure.portable)
    error_message = "Azure's pool should be AWS's: the same GPUs, labels, taints, driver and operator."
  }

  assert {
    condition     = module.train_aws.portable["h100"].labels["strata.dev/pool"] == "h100"
    error_message = "Each node should carry its pool's name, the label a job's flavour selects."
  }
}

# Applied (to the mocks): the manager's pools are known only then.
run "the_manager_adds_up_the_workers" {
  command = apply

  assert {
    condition = alltrue([
      for w in [module.train_aws, module.train_gcp, module.train_azure] :
      w.dispatch_quotas == { training = { h100 = 32 } }
    ])
    error_message = "Each worker's queue should offer its pool's GPUs at most: 4 nodes of 8."
  }

  assert {
    condition     = module.train_manager.dispatch_quotas == { training = { h100 = 96 } }
    error_message = "The manager's queue should offer the three workers' GPUs together."
  }

  assert {
    condition     = module.train_manager.portable == {}
    error_message = "The manager is CPU only: it has no GPU pool."
  }
}

run "two_clouds_by_a_variable" {
  command = plan

  variables {
    clouds = ["aws", "gcp"]
  }

  assert {
    condition     = module.train_manager.dispatch_quotas == { training = { h100 = 64 } }
    error_message = "Without Azure, the manager should offer two workers' GPUs."
  }
}
