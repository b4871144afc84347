# What EKS reports of a cluster, for the examples' tests
# (`mock_provider "aws" { source = "../mocks/aws" }`): the kubeconfigs
# read its endpoint and certificate authority (a mock's computed blocks
# are otherwise empty).
mock_resource "aws_eks_cluster" {
  defaults = {
    endpoint              = "https://eks.example"
    certificate_authority = [{ data = "Q0E=" }]
  }
}

mock_data "aws_iam_policy_document" {
  defaults = { json = "{}" }
}
