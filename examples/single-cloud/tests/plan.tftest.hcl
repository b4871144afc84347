# The example plans with every provider mocked (nothing is asked of a
# cloud): its pool is placed from the clouds' published GPU catalogs, on
# AWS alone and with GCP added by a variable, as its README says. The
# assertions read the module calls the cluster spec expands into
# (`module.<cluster>_<cloud>`).

mock_provider "aws" {}
mock_provider "google" {}
mock_provider "kubernetes" {}
mock_provider "helm" {}

run "plans_on_aws" {
  command = plan

  assert {
    condition     = keys(module.train_aws.portable) == ["h100"]
    error_message = "The cluster's one pool should be planned on AWS."
  }

  assert {
    condition     = module.train_aws.portable["h100"].gpus_per_node == 8
    error_message = "The H100 pool should have 8 GPUs per node."
  }

  assert {
    condition     = module.train_aws.portable["h100"].labels["workload"] == "training"
    error_message = "The pool's labels should reach its nodes."
  }

  assert {
    condition     = module.train_aws.portable["h100"].taints == [{ key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" }]
    error_message = "The pool's taint should reach its nodes in Kubernetes' terms."
  }
}

run "plans_on_aws_and_gcp" {
  command = plan

  variables {
    clouds = ["aws", "gcp"]
  }

  assert {
    condition     = keys(module.train_gcp.portable) == ["h100"]
    error_message = "Adding GCP should plan the same pool there."
  }

  assert {
    condition     = module.train_gcp.portable["h100"].gpus_per_node == module.train_aws.portable["h100"].gpus_per_node
    error_message = "The pool should have as many GPUs per node on GCP as on AWS."
  }

  assert {
    condition     = module.train_gcp.portable["h100"].taints == module.train_aws.portable["h100"].taints
    error_message = "A job tolerating the AWS pool's taint should land on GCP's."
  }
}
