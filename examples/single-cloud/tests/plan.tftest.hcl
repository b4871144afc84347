# The example plans with every provider mocked (nothing is asked of a
# cloud): its pool is placed from the clouds' published GPU catalogs, on
# AWS alone and with GCP added by a variable, as its README says.

mock_provider "aws" {}
mock_provider "google" {}
mock_provider "kubernetes" {}
mock_provider "helm" {}

run "plans_on_aws" {
  command = plan
}

run "plans_on_aws_and_gcp" {
  command = plan

  variables {
    clouds = ["aws", "gcp"]
  }
}
