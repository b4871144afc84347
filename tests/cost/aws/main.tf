provider "aws" {
  region = "us-east-1"
}

resource "aws_eks_node_group" "gpu" {
  cluster_name    = "train"
  node_group_name = "gpu"
  node_role_arn   = "arn:aws:iam::123456789012:role/node"
  subnet_ids      = ["subnet-1"]
  instance_types  = ["p5.48xlarge"]
  scaling_config {
    min_size     = 1
    desired_size = 1
    max_size     = 16
  }
}
