# The AWS module's network and node pools, with AWS, Kubernetes and Helm
# mocked: nothing is asked of a cloud (`strata test` in this folder;
# tests/module_tests.rs runs it).

mock_provider "aws" {
  # What EKS reports of a cluster: the launch templates' bootstrap reads
  # its endpoint and certificate authority.
  mock_resource "aws_eks_cluster" {
    defaults = {
      endpoint = "https://eks.example"
      certificate_authority = [{
        data = "Q0E="
      }]
    }
  }
  mock_data "aws_iam_policy_document" {
    defaults = {
      json = "{}"
    }
  }
}

mock_provider "kubernetes" {}

mock_provider "helm" {
  source = "../tests/helm"
}

variables {
  name    = "t"
  region  = "us-east-1"
  network = { cidr = "10.0.0.0/16" }
  gpu_operator = {
    version        = "v25.3.1"
    driver_version = "570.124.06"
  }
  node_pools = {
    h100 = {
      gpu           = "H100"
      instance_type = "p5.48xlarge"
      capacity      = "spot"
      min_nodes     = 1
      max_nodes     = 4
      labels        = { team = "ml" }
      taints        = [{ key = "nvidia.com/gpu", effect = "NoSchedule" }]
    }
  }
}

run "three_zones_public_and_private" {
  command = plan
  assert {
    condition     = [for s in aws_subnet.public : s.cidr_block] == ["10.0.0.0/20", "10.0.16.0/20", "10.0.32.0/20"]
    error_message = "public subnets: /20s from the start of the network"
  }
  assert {
    condition     = [for s in aws_subnet.private : s.cidr_block] == ["10.0.64.0/18", "10.0.128.0/18", "10.0.192.0/18"]
    error_message = "private subnets: the /18s after the public ones"
  }
  assert {
    condition     = [for s in aws_subnet.private : s.availability_zone] == ["us-east-1a", "us-east-1b", "us-east-1c"]
    error_message = "the region's a, b and c by default"
  }
}

run "a_spot_pool_as_eks_names_it" {
  command = plan
  assert {
    condition     = aws_eks_node_group.pool["h100"].capacity_type == "SPOT"
    error_message = "spot is EKS's SPOT"
  }
  assert {
    condition     = one(aws_eks_node_group.pool["h100"].taint).effect == "NO_SCHEDULE"
    error_message = "Kubernetes' NoSchedule is EKS's NO_SCHEDULE"
  }
  assert {
    condition     = one(aws_eks_node_group.pool["h100"].scaling_config).min_size == 1 && one(aws_eks_node_group.pool["h100"].scaling_config).max_size == 4
    error_message = "the pool's floor and ceiling"
  }
  assert {
    condition     = aws_eks_node_group.pool["h100"].instance_types == tolist(["p5.48xlarge"])
    error_message = "the pool's instance type on the node group"
  }
}

run "nodes_join_with_their_labels_and_taints" {
  assert {
    condition     = strcontains(base64decode(aws_launch_template.pool["h100"].user_data), "--register-with-taints=nvidia.com/gpu=:NoSchedule")
    error_message = "the bootstrap registers the pool's taints"
  }
  assert {
    condition     = strcontains(base64decode(aws_launch_template.pool["h100"].user_data), "eks.amazonaws.com/nodegroup=h100")
    error_message = "the bootstrap labels the node with its pool, as strata finds it"
  }
  assert {
    condition     = output.portable["h100"].taints == [{ key = "nvidia.com/gpu", value = "", effect = "NoSchedule" }]
    error_message = "the portable view speaks Kubernetes' effect names"
  }
}

run "a_capacity_block_names_its_type_on_the_template" {
  command = plan
  variables {
    node_pools = {
      h100 = {
        gpu           = "H100"
        instance_type = "p5.48xlarge"
        capacity      = "capacity_block"
        reservation   = { id = "cr-0123456789abcdef0", zone = "us-east-1b" }
      }
    }
  }
  assert {
    condition     = aws_launch_template.pool["h100"].instance_type == "p5.48xlarge"
    error_message = "a Capacity Block's type goes on the launch template"
  }
  assert {
    condition     = one(aws_launch_template.pool["h100"].instance_market_options).market_type == "capacity-block"
    error_message = "a Capacity Block's market type"
  }
  assert {
    condition     = aws_eks_node_group.pool["h100"].capacity_type == "CAPACITY_BLOCK"
    error_message = "EKS's CAPACITY_BLOCK"
  }
}

run "reserved_capacity_launches_in_its_zone_only" {
  variables {
    node_pools = {
      h100 = {
        gpu           = "H100"
        instance_type = "p5.48xlarge"
        capacity      = "reserved"
        reservation   = { id = "cr-0123456789abcdef0", zone = "us-east-1b" }
      }
    }
  }
  assert {
    condition     = length(aws_eks_node_group.pool["h100"].subnet_ids) == 1 && contains(aws_eks_node_group.pool["h100"].subnet_ids, aws_subnet.private[1].id)
    error_message = "the nodes launch in the reservation's zone"
  }
  assert {
    condition     = aws_eks_node_group.pool["h100"].capacity_type == "ON_DEMAND"
    error_message = "a reservation is on-demand capacity"
  }
}

run "a_zone_without_capacity_is_left_out" {
  variables {
    node_pools = {
      h100 = {
        gpu           = "H100"
        instance_type = "p5.48xlarge"
        exclude_zones = ["us-east-1a"]
      }
    }
  }
  assert {
    condition     = toset(aws_eks_node_group.pool["h100"].subnet_ids) == toset([aws_subnet.private[1].id, aws_subnet.private[2].id])
    error_message = "us-east-1a left out"
  }
}

run "a_manager_has_only_a_system_pool" {
  command = plan
  variables {
    node_pools  = {}
    system_pool = { nodes = 2 }
  }
  assert {
    condition     = length(aws_eks_node_group.pool) == 0 && length(aws_launch_template.pool) == 0
    error_message = "no GPU pools: no node groups, no launch templates"
  }
  assert {
    condition     = length(aws_eks_node_group.system) == 1
    error_message = "a system pool"
  }
}
