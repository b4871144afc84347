# A GPU cluster on Azure: a resource group and VNet, AKS with Azure CNI
# overlay, one user node pool per GPU pool (AKS's GPU driver off, so the GPU
# Operator installs the same driver as on every other cloud), and the GPU
# Operator.

locals {
  resource_group = coalesce(var.resource_group, var.name)
  nodes_cidr     = cidrsubnet(var.network.cidr, 2, 0)
  pods_cidr      = cidrsubnet(var.network.cidr, 1, 1)
  services_cidr  = cidrsubnet(var.network.cidr, 4, 4)
  # AKS puts this label and taint on every spot node itself; a spot pool
  # declares them (as the azurerm provider asks), or every plan would
  # remove them. They are AKS's, so the portability check leaves them out.
  spot_label = { "kubernetes.azure.com/scalesetpriority" = "spot" }
  spot_taint = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"
}

resource "azurerm_resource_group" "this" {
  name     = local.resource_group
  location = var.location
}

# --- network ---------------------------------------------------------------

resource "azurerm_virtual_network" "this" {
  name                = var.name
  location            = var.location
  resource_group_name = azurerm_resource_group.this.name
  address_space       = [var.network.cidr]
}

resource "azurerm_subnet" "nodes" {
  name                 = "nodes"
  resource_group_name  = azurerm_resource_group.this.name
  virtual_network_name = azurerm_virtual_network.this.name
  address_prefixes     = [local.nodes_cidr]
}

# Traffic inside the cluster's network, and nothing else from outside.
resource "azurerm_network_security_group" "nodes" {
  name                = "${var.name}-nodes"
  location            = var.location
  resource_group_name = azurerm_resource_group.this.name
  security_rule {
    name                       = "internal"
    priority                   = 100
    direction                  = "Inbound"
    access                     = "Allow"
    protocol                   = "*"
    source_port_range          = "*"
    destination_port_range     = "*"
    source_address_prefix      = var.network.cidr
    destination_address_prefix = var.network.cidr
  }
  security_rule {
    name                       = "deny-internet"
    priority                   = 4000
    direction                  = "Inbound"
    access                     = "Deny"
    protocol                   = "*"
    source_port_range          = "*"
    destination_port_range     = "*"
    source_address_prefix      = "Internet"
    destination_address_prefix = "*"
  }
}

resource "azurerm_subnet_network_security_group_association" "nodes" {
  subnet_id                 = azurerm_subnet.nodes.id
  network_security_group_id = azurerm_network_security_group.nodes.id
}

# --- identity --------------------------------------------------------------

resource "azurerm_user_assigned_identity" "cluster" {
  name                = "${var.name}-cluster"
  location            = var.location
  resource_group_name = azurerm_resource_group.this.name
}

# The control plane manages the nodes' subnet (load balancers, routes).
resource "azurerm_role_assignment" "cluster_network" {
  scope                = azurerm_subnet.nodes.id
  role_definition_name = "Network Contributor"
  principal_id         = azurerm_user_assigned_identity.cluster.principal_id
}

# AKS makes a pool in a capacity reservation group only as a user-assigned
# identity with Contributor on the group's resource group ("Assign
# capacity reservation groups to AKS node pools"): the cluster's, once per
# group's resource group.
resource "azurerm_role_assignment" "reservation_groups" {
  for_each = toset([
    for p in var.node_pools : regex("(?i)^/subscriptions/[^/]+/resourcegroups/[^/]+", p.reservation.id)
    if p.reservation != null
  ])
  scope                = each.key
  role_definition_name = "Contributor"
  principal_id         = azurerm_user_assigned_identity.cluster.principal_id
}

# Nodes may pull images: with AKS's built-in log and metric agents, the
# same permissions as the node identity on AWS and GCP.
resource "azurerm_role_assignment" "node_pull" {
  scope                = azurerm_resource_group.this.id
  role_definition_name = "AcrPull"
  principal_id         = azurerm_kubernetes_cluster.this.kubelet_identity[0].object_id
}

# --- cluster ---------------------------------------------------------------

resource "azurerm_kubernetes_cluster" "this" {
  name                      = var.name
  location                  = var.location
  resource_group_name       = azurerm_resource_group.this.name
  dns_prefix                = var.name
  kubernetes_version        = var.kubernetes_version
  oidc_issuer_enabled       = true
  workload_identity_enabled = true
  # AKS's system pool: untainted CPU nodes for the cluster's own
  # controllers (a MultiKueue manager's only pool).
  default_node_pool {
    name           = "system"
    vm_size        = coalesce(try(var.system_pool.instance_type, null), "Standard_D4s_v5")
    node_count     = coalesce(try(var.system_pool.nodes, null), 2)
    vnet_subnet_id = azurerm_subnet.nodes.id
  }
  identity {
    type         = "UserAssigned"
    identity_ids = [azurerm_user_assigned_identity.cluster.id]
  }
  network_profile {
    network_plugin      = "azure"
    network_plugin_mode = "overlay"
    pod_cidr            = local.pods_cidr
    service_cidr        = local.services_cidr
    dns_service_ip      = cidrhost(local.services_cidr, 10)
  }
  depends_on = [azurerm_role_assignment.cluster_network]
}

resource "azurerm_kubernetes_cluster_node_pool" "pool" {
  for_each              = var.node_pools
  name                  = each.key
  kubernetes_cluster_id = azurerm_kubernetes_cluster.this.id
  vm_size               = each.value.instance_type
  vnet_subnet_id        = azurerm_subnet.nodes.id
  auto_scaling_enabled  = true
  min_count             = max(each.value.min_nodes, coalesce(each.value.nodes, 0))
  max_count             = each.value.max_nodes
  node_labels           = merge(each.value.labels, each.value.capacity == "spot" ? local.spot_label : {})
  node_taints = concat(
    [for t in each.value.taints : "${t.key}=${t.value}:${t.effect}"],
    each.value.capacity == "spot" ? [local.spot_taint] : [],
  )
  priority        = each.value.capacity == "spot" ? "Spot" : "Regular"
  eviction_policy = each.value.capacity == "spot" ? "Delete" : null
  spot_max_price  = each.value.capacity == "spot" ? -1 : null
  gpu_driver      = "None"
  # A pool in a capacity reservation group is made in it, in the zone of
  # its reservations when they are zonal.
  capacity_reservation_group_id = try(each.value.reservation.id, null)
  zones                         = try(each.value.reservation.zone, null) == null ? null : [each.value.reservation.zone]
  depends_on                    = [azurerm_role_assignment.reservation_groups]
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
  cloud                     = "azure"
  kubernetes_version        = var.kubernetes_version
  gpu_operator              = var.gpu_operator
  service_monitor           = try(var.runtime.metrics.service_monitor, false)
  driver_installed_by_cloud = false
  # AKS taints spot nodes itself; the operator must run there too.
  tolerations = distinct(concat(
    flatten([for p in var.node_pools : p.taints]),
    [{ key = "kubernetes.azure.com/scalesetpriority", value = "spot", effect = "NoSchedule" }],
  ))
  depends_on = [azurerm_kubernetes_cluster_node_pool.pool]
}

# Kueue, KubeRay and metrics, when the spec has a runtime block.
module "runtime" {
  source  = "../runtime"
  count   = var.runtime == null ? 0 : 1
  runtime = var.runtime
  # A MultiKueue manager has no GPU pools of its own: its flavours are the
  # workers' pools.
  pools       = merge(var.node_pools, try(var.multikueue.pools, {}))
  multikueue  = var.multikueue == null ? null : merge(var.multikueue, { endpoint = azurerm_kubernetes_cluster.this.kube_config[0].host })
  kubeconfigs = var.multikueue_kubeconfigs
  checkpoints = local.checkpoints == null ? null : {}
  # The Secret's values (checkpoints.tf); the gateway they name comes
  # with them.
  checkpoint_access = local.checkpoint_access
  depends_on        = [module.gpu_operator, kubernetes_manifest.gateway, kubernetes_manifest.gateway_service]
}

# --- outputs ---------------------------------------------------------------

output "cluster_endpoint" {
  value = "https://${azurerm_kubernetes_cluster.this.fqdn}:443"
}

output "node_identity" {
  description = "The managed identity the GPU nodes' kubelets run as."
  value       = azurerm_kubernetes_cluster.this.kubelet_identity[0].object_id
}

output "kubernetes" {
  description = "How to reach the cluster: what the kubernetes and helm providers are configured with."
  # AKS's kube_config is sensitive as a whole, its host and CA with it:
  # said, so the module plans as a root module too (its own tests).
  sensitive = true
  value = {
    host                   = azurerm_kubernetes_cluster.this.kube_config[0].host
    cluster_ca_certificate = base64decode(azurerm_kubernetes_cluster.this.kube_config[0].cluster_ca_certificate)
    exec = {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "kubelogin"
      args        = ["get-token", "--login", "azurecli", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"]
    }
  }
}

output "kubeconfig" {
  sensitive = true
  value = yamlencode({
    apiVersion        = "v1"
    kind              = "Config"
    clusters          = [{ name = var.name, cluster = { server = "https://${azurerm_kubernetes_cluster.this.fqdn}:443", "certificate-authority-data" = azurerm_kubernetes_cluster.this.kube_config[0].cluster_ca_certificate } }]
    users             = [{ name = var.name, user = { exec = { apiVersion = "client.authentication.k8s.io/v1beta1", command = "kubelogin", args = ["get-token", "--login", "azurecli", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"] } } }]
    contexts          = [{ name = var.name, context = { cluster = var.name, user = var.name } }]
    "current-context" = var.name
  })
}

# The nodes each GPU pool keeps here (its floor), read back from its
# resources: where a placement puts a pool, its nodes; 0 at the places it
# can fail over to.
output "nodes" {
  value = { for name, p in azurerm_kubernetes_cluster_node_pool.pool : name => p.min_count }
}

# What the portability check compares between clouds (see modules/aws).
output "portable" {
  value = {
    for name, p in azurerm_kubernetes_cluster_node_pool.pool : name => {
      gpu           = var.node_pools[name].gpu
      gpus_per_node = var.node_pools[name].gpus_per_node
      labels        = { for k, v in p.node_labels : k => v if !contains(keys(local.spot_label), k) }
      taints = [for t in p.node_taints : {
        key    = split("=", split(":", t)[0])[0]
        value  = try(split("=", split(":", t)[0])[1], "")
        effect = split(":", t)[1]
      } if t != local.spot_taint]
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
