# A GPU cluster on AWS: a VPC across three zones, EKS, one managed node
# group per GPU pool on Ubuntu nodes (so the GPU Operator installs the same
# driver as on every other cloud), and the GPU Operator.

locals {
  zones = coalesce(var.zones, ["${var.region}a", "${var.region}b", "${var.region}c"])
  # Public /20s for the NAT gateway and load balancers, private /18s for nodes.
  public_cidrs  = [for i, z in local.zones : cidrsubnet(var.network.cidr, 4, i)]
  private_cidrs = [for i, z in local.zones : cidrsubnet(var.network.cidr, 2, i + 1)]
  # Kubernetes spells taint effects NoSchedule; EKS's API NO_SCHEDULE.
  eks_effect = { NoSchedule = "NO_SCHEDULE", PreferNoSchedule = "PREFER_NO_SCHEDULE", NoExecute = "NO_EXECUTE" }
  k8s_effect = { for k, v in local.eks_effect : v => k }
  # The spec's capacity types as EKS names them: an On-Demand Capacity
  # Reservation is on-demand capacity, a Capacity Block its own type.
  capacity_types = { spot = "SPOT", on_demand = "ON_DEMAND", reserved = "ON_DEMAND", capacity_block = "CAPACITY_BLOCK" }
  image_name     = coalesce(var.node_image_name, "ubuntu-eks/k8s_${var.kubernetes_version}/images/hvm-ssd/ubuntu-jammy-22.04-amd64-server-*")
}

# --- network ---------------------------------------------------------------

resource "aws_vpc" "this" {
  cidr_block           = var.network.cidr
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags                 = { Name = var.name }
}

resource "aws_subnet" "public" {
  count                   = length(local.zones)
  vpc_id                  = aws_vpc.this.id
  cidr_block              = local.public_cidrs[count.index]
  availability_zone       = local.zones[count.index]
  map_public_ip_on_launch = true
  tags                    = { Name = "${var.name}-public-${local.zones[count.index]}", "kubernetes.io/role/elb" = "1" }
}

resource "aws_subnet" "private" {
  count             = length(local.zones)
  vpc_id            = aws_vpc.this.id
  cidr_block        = local.private_cidrs[count.index]
  availability_zone = local.zones[count.index]
  tags              = { Name = "${var.name}-private-${local.zones[count.index]}", "kubernetes.io/role/internal-elb" = "1" }
}

resource "aws_internet_gateway" "this" {
  vpc_id = aws_vpc.this.id
  tags   = { Name = var.name }
}

resource "aws_eip" "nat" {
  domain = "vpc"
  tags   = { Name = "${var.name}-nat" }
}

resource "aws_nat_gateway" "this" {
  allocation_id = aws_eip.nat.id
  subnet_id     = aws_subnet.public[0].id
  tags          = { Name = var.name }
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.this.id
  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.this.id
  }
  tags = { Name = "${var.name}-public" }
}

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.this.id
  route {
    cidr_block     = "0.0.0.0/0"
    nat_gateway_id = aws_nat_gateway.this.id
  }
  tags = { Name = "${var.name}-private" }
}

resource "aws_route_table_association" "public" {
  count          = length(local.zones)
  subnet_id      = aws_subnet.public[count.index].id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table_association" "private" {
  count          = length(local.zones)
  subnet_id      = aws_subnet.private[count.index].id
  route_table_id = aws_route_table.private.id
}

# The control plane's endpoint accepts HTTPS from inside the network only;
# node-to-node and node-to-control-plane traffic is EKS's cluster security
# group, which admits its own members and nothing else.
resource "aws_security_group" "control_plane" {
  name        = "${var.name}-control-plane"
  description = "HTTPS to the ${var.name} API server from inside its network"
  vpc_id      = aws_vpc.this.id
}

resource "aws_vpc_security_group_ingress_rule" "api_from_vpc" {
  security_group_id = aws_security_group.control_plane.id
  cidr_ipv4         = var.network.cidr
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
}

resource "aws_vpc_security_group_egress_rule" "control_plane_out" {
  security_group_id = aws_security_group.control_plane.id
  cidr_ipv4         = var.network.cidr
  ip_protocol       = "-1"
}

# --- identity --------------------------------------------------------------

data "aws_iam_policy_document" "eks_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["eks.amazonaws.com"]
    }
  }
}

data "aws_iam_policy_document" "node_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ec2.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "cluster" {
  name               = "${var.name}-cluster"
  assume_role_policy = data.aws_iam_policy_document.eks_assume.json
}

resource "aws_iam_role_policy_attachment" "cluster" {
  role       = aws_iam_role.cluster.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
}

# Nodes may join the cluster, run the VPC CNI and pull images: the same
# three permissions the node identity has on GCP and Azure.
resource "aws_iam_role" "node" {
  name               = "${var.name}-node"
  assume_role_policy = data.aws_iam_policy_document.node_assume.json
}

resource "aws_iam_role_policy_attachment" "node" {
  for_each = toset([
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
  ])
  role       = aws_iam_role.node.name
  policy_arn = each.value
}

# --- cluster ---------------------------------------------------------------

resource "aws_eks_cluster" "this" {
  name     = var.name
  version  = var.kubernetes_version
  role_arn = aws_iam_role.cluster.arn
  vpc_config {
    subnet_ids              = aws_subnet.private[*].id
    security_group_ids      = [aws_security_group.control_plane.id]
    endpoint_private_access = true
    endpoint_public_access  = true
  }
  access_config {
    authentication_mode                         = "API_AND_CONFIG_MAP"
    bootstrap_cluster_creator_admin_permissions = true
  }
  depends_on = [aws_iam_role_policy_attachment.cluster]
}

# Read once the cluster exists, so a plan on empty state needs no AWS call.
data "aws_ami" "node" {
  owners      = var.node_image_owners
  most_recent = true
  filter {
    name   = "name"
    values = [local.image_name]
  }
  depends_on = [aws_eks_cluster.this]
}

resource "aws_launch_template" "pool" {
  for_each = var.node_pools
  name     = "${var.name}-${each.key}"
  image_id = data.aws_ami.node.id
  # Canonical's EKS images join the cluster through the same bootstrap
  # script as Amazon's. With a custom image EKS passes nothing to the
  # kubelet itself, so the pool's labels and taints are given here too:
  # a node carries them from its first moment, before anything schedules.
  # EKS's own pool label is one of them (EKS sets it only on its images):
  # strata finds a pool's nodes by it.
  user_data = base64encode(join("\n", [
    "#!/bin/bash",
    join(" ", [
      "/etc/eks/bootstrap.sh ${aws_eks_cluster.this.name}",
      "--b64-cluster-ca ${aws_eks_cluster.this.certificate_authority[0].data}",
      "--apiserver-endpoint ${aws_eks_cluster.this.endpoint}",
      "--kubelet-extra-args '${join(" ", compact([
        "--node-labels=${join(",", [for k, v in merge(each.value.labels, { "eks.amazonaws.com/nodegroup" = each.key }) : "${k}=${v}"])}",
        length(each.value.taints) > 0 ? "--register-with-taints=${join(",", [for t in each.value.taints : "${t.key}=${t.value}:${t.effect}"])}" : "",
      ]))}'",
    ]),
  ]))
  metadata_options {
    http_tokens                 = "required"
    http_put_response_hop_limit = 2
  }
  # A Capacity Block's nodes name their type here, not in the node group
  # (EKS: "Create a managed node group with Capacity Blocks for ML").
  instance_type = each.value.capacity == "capacity_block" ? each.value.instance_type : null
  # A reservation by its cr- id, or a Capacity Reservation group by its
  # ARN (its instances go into any of the group's reservations with room).
  dynamic "capacity_reservation_specification" {
    for_each = each.value.reservation == null ? [] : [each.value.reservation]
    content {
      capacity_reservation_target {
        capacity_reservation_id                 = startswith(capacity_reservation_specification.value.id, "arn:") ? null : capacity_reservation_specification.value.id
        capacity_reservation_resource_group_arn = startswith(capacity_reservation_specification.value.id, "arn:") ? capacity_reservation_specification.value.id : null
      }
    }
  }
  dynamic "instance_market_options" {
    for_each = each.value.capacity == "capacity_block" ? [1] : []
    content {
      market_type = "capacity-block"
    }
  }
}

resource "aws_eks_node_group" "pool" {
  for_each        = var.node_pools
  cluster_name    = aws_eks_cluster.this.name
  node_group_name = each.key
  node_role_arn   = aws_iam_role.node.arn
  # A zone that had no capacity for the pool is left out; a node group's
  # subnets cannot change in place, so that makes a new node group.
  # Reserved capacity is in one zone: the nodes launch there only.
  subnet_ids = [
    for i, s in aws_subnet.private : s.id
    if !contains(each.value.exclude_zones, local.zones[i])
    && coalesce(try(each.value.reservation.zone, null), local.zones[i]) == local.zones[i]
  ]
  instance_types = each.value.capacity == "capacity_block" ? null : [each.value.instance_type]
  capacity_type  = local.capacity_types[each.value.capacity]
  ami_type       = "CUSTOM"
  labels         = each.value.labels
  # Where the pool's placement puts its nodes they are its floor, so the
  # autoscaler keeps them; elsewhere the pool waits at its minimum.
  scaling_config {
    min_size     = max(each.value.min_nodes, coalesce(each.value.nodes, 0))
    max_size     = each.value.max_nodes
    desired_size = max(each.value.min_nodes, coalesce(each.value.nodes, 0))
  }
  launch_template {
    id      = aws_launch_template.pool[each.key].id
    version = aws_launch_template.pool[each.key].latest_version
  }
  dynamic "taint" {
    for_each = each.value.taints
    content {
      key    = taint.value.key
      value  = taint.value.value
      effect = local.eks_effect[taint.value.effect]
    }
  }
  depends_on = [aws_iam_role_policy_attachment.node]
}

# A Capacity Block a pool's placement bought. EC2 can neither modify nor
# cancel one: when it leaves the configuration strata forgets it (and says
# so) rather than destroying it, and it runs to its end.
resource "aws_ec2_capacity_block_reservation" "pool" {
  for_each                   = var.capacity_blocks
  capacity_block_offering_id = each.value.offering_id
  instance_platform          = "Linux/UNIX"
  tags = {
    Name = "${var.name}-${each.key}"
  }
}

# Untainted CPU nodes for the cluster's own controllers, on EKS's own
# image: nothing there needs the GPU driver.
resource "aws_eks_node_group" "system" {
  count           = var.system_pool == null ? 0 : 1
  cluster_name    = aws_eks_cluster.this.name
  node_group_name = "system"
  node_role_arn   = aws_iam_role.node.arn
  subnet_ids      = aws_subnet.private[*].id
  instance_types  = [coalesce(var.system_pool.instance_type, "m6i.large")]
  ami_type        = "AL2023_x86_64_STANDARD"
  scaling_config {
    min_size     = var.system_pool.nodes
    max_size     = var.system_pool.nodes
    desired_size = var.system_pool.nodes
  }
  depends_on = [aws_iam_role_policy_attachment.node]
}

# Where the operator was before it was counted: a state from then keeps
# its release (and a manager's, now without one, plans its removal).
moved {
  from = module.gpu_operator
  to   = module.gpu_operator[0]
}

# No GPU pools (a MultiKueue manager), no GPU Operator.
module "gpu_operator" {
  count                     = length(var.node_pools) == 0 ? 0 : 1
  source                    = "../gpu-operator"
  cloud                     = "aws"
  kubernetes_version        = var.kubernetes_version
  gpu_operator              = var.gpu_operator
  service_monitor           = try(var.runtime.metrics.service_monitor, false)
  driver_installed_by_cloud = false
  tolerations               = distinct(flatten([for p in var.node_pools : p.taints]))
  depends_on                = [aws_eks_node_group.pool]
}

# Kueue, KubeRay and metrics, when the spec has a runtime block.
module "runtime" {
  source  = "../runtime"
  count   = var.runtime == null ? 0 : 1
  runtime = var.runtime
  # A MultiKueue manager has no GPU pools of its own: its flavours are the
  # workers' pools.
  pools       = merge(var.node_pools, try(var.multikueue.pools, {}))
  multikueue  = var.multikueue == null ? null : merge(var.multikueue, { endpoint = aws_eks_cluster.this.endpoint })
  kubeconfigs = var.multikueue_kubeconfigs
  checkpoints = local.checkpoints == null ? null : {}
  # The Secret's values (modules/aws/checkpoints.tf).
  checkpoint_access = local.checkpoint_access
  depends_on        = [module.gpu_operator]
}

# --- outputs ---------------------------------------------------------------

output "cluster_endpoint" {
  value = aws_eks_cluster.this.endpoint
}

output "node_identity" {
  description = "The role the GPU nodes run as."
  value       = aws_iam_role.node.arn
}

output "kubernetes" {
  description = "How to reach the cluster: what the kubernetes and helm providers are configured with."
  value = {
    host                   = aws_eks_cluster.this.endpoint
    cluster_ca_certificate = base64decode(aws_eks_cluster.this.certificate_authority[0].data)
    exec = {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", aws_eks_cluster.this.name, "--region", var.region]
    }
  }
}

output "kubeconfig" {
  sensitive = true
  value = yamlencode({
    apiVersion        = "v1"
    kind              = "Config"
    clusters          = [{ name = var.name, cluster = { server = aws_eks_cluster.this.endpoint, "certificate-authority-data" = aws_eks_cluster.this.certificate_authority[0].data } }]
    users             = [{ name = var.name, user = { exec = { apiVersion = "client.authentication.k8s.io/v1beta1", command = "aws", args = ["eks", "get-token", "--cluster-name", var.name, "--region", var.region] } } }]
    contexts          = [{ name = var.name, context = { cluster = var.name, user = var.name } }]
    "current-context" = var.name
  })
}

# The nodes each GPU pool keeps here (its floor), read back from its
# resources: where a placement puts a pool, its nodes; 0 at the places it
# can fail over to.
output "nodes" {
  value = { for name, g in aws_eks_node_group.pool : name => g.scaling_config[0].min_size }
}

# What the portability check compares between clouds: each pool as the
# cluster will run it, read back from the resources (so an edit to this
# module that changes a pool shows), in Kubernetes' terms.
output "portable" {
  value = {
    for name, g in aws_eks_node_group.pool : name => {
      gpu            = var.node_pools[name].gpu
      gpus_per_node  = var.node_pools[name].gpus_per_node
      labels         = g.labels
      taints         = [for t in g.taint : { key = t.key, value = t.value, effect = local.k8s_effect[t.effect] }]
      driver_version = module.gpu_operator[0].driver_version
      cuda_version   = var.gpu_operator.cuda_version
      gpu_operator   = module.gpu_operator[0].version
    }
  }
}

# The job runtime as this cluster runs it, for the same check (null
# without a runtime block).
output "runtime" {
  value = try(module.runtime[0].portable, null)
}

# What a MultiKueue manager needs of this cluster as a worker: its queues'
# GPU quotas per pool, and (sensitive) the kubeconfig of the service
# account it dispatches as. Null when the cluster is no worker.
output "dispatch_quotas" {
  value = try(module.runtime[0].quotas, null)
}

output "dispatch_kubeconfig" {
  sensitive = true
  value     = try(module.runtime[0].dispatch_kubeconfig, null)
}
