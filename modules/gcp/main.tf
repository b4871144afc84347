# A GPU cluster on GCP: a VPC with one regional subnet (pods and services
# in secondary ranges), Cloud NAT, a regional GKE cluster, one node pool
# per GPU pool on Ubuntu nodes (GKE's driver installer off, so the GPU
# Operator installs the same driver as on every other cloud), and the GPU
# Operator.

locals {
  # Nodes in the first /18, pods in the second and third, services in a /20
  # of the fourth: the same address plan as the other clouds' modules.
  nodes_cidr    = cidrsubnet(var.network.cidr, 2, 0)
  pods_cidr     = cidrsubnet(var.network.cidr, 1, 1)
  services_cidr = cidrsubnet(var.network.cidr, 4, 4)
  # The zones a pool may be spread over (strata's placement leaves out
  # those that had no capacity).
  zones = ["${var.region}-a", "${var.region}-b", "${var.region}-c"]
  # GKE's names for the GPU models the catalogs use.
  accelerator = {
    H100        = "nvidia-h100-80gb"
    "H100-MEGA" = "nvidia-h100-mega-80gb"
    H200        = "nvidia-h200-141gb"
    B200        = "nvidia-b200"
    A100        = "nvidia-tesla-a100"
    "A100-80GB" = "nvidia-a100-80gb"
    L4          = "nvidia-l4"
  }
  gke_effect = { NoSchedule = "NO_SCHEDULE", PreferNoSchedule = "PREFER_NO_SCHEDULE", NoExecute = "NO_EXECUTE" }
  k8s_effect = { for k, v in local.gke_effect : v => k }
  # GKE's Dynamic Workload Scheduler: flex-start VMs, and queued
  # provisioning (flex-start VMs that come only for a ProvisioningRequest,
  # which Kueue makes as it admits a job).
  dws = ["flex_start", "queued"]
  # GKE taints a queued pool's nodes with this; said in the pool too, so
  # that what GKE reads back is what was written.
  queued_taint = { key = "cloud.google.com/gke-queued", value = "true", effect = "NoSchedule" }
  # The pools as the runtime's Kueue sees them: a queued pool's flavour
  # tolerates GKE's taint and its jobs wait for a ProvisioningRequest of
  # GKE's class.
  runtime_pools = {
    for k, p in var.node_pools : k => merge(p, {
      cloud_taints       = p.capacity == "queued" ? [local.queued_taint] : []
      provisioning_class = p.capacity == "queued" ? "queued-provisioning.gke.io" : null
    })
  }
}

# --- network ---------------------------------------------------------------

resource "google_compute_network" "this" {
  project                 = var.project
  name                    = var.name
  auto_create_subnetworks = false
}

resource "google_compute_subnetwork" "nodes" {
  project                  = var.project
  name                     = "${var.name}-nodes"
  region                   = var.region
  network                  = google_compute_network.this.id
  ip_cidr_range            = local.nodes_cidr
  private_ip_google_access = true
  secondary_ip_range {
    range_name    = "pods"
    ip_cidr_range = local.pods_cidr
  }
  secondary_ip_range {
    range_name    = "services"
    ip_cidr_range = local.services_cidr
  }
}

resource "google_compute_router" "this" {
  project = var.project
  name    = var.name
  region  = var.region
  network = google_compute_network.this.id
}

resource "google_compute_router_nat" "this" {
  project                            = var.project
  name                               = var.name
  router                             = google_compute_router.this.name
  region                             = var.region
  nat_ip_allocate_option             = "AUTO_ONLY"
  source_subnetwork_ip_ranges_to_nat = "ALL_SUBNETWORKS_ALL_IP_RANGES"
}

# Traffic inside the cluster's network; GKE adds the control plane's own
# rules. Nothing from outside is admitted.
resource "google_compute_firewall" "internal" {
  project       = var.project
  name          = "${var.name}-internal"
  network       = google_compute_network.this.id
  direction     = "INGRESS"
  source_ranges = [var.network.cidr]
  allow {
    protocol = "tcp"
  }
  allow {
    protocol = "udp"
  }
  allow {
    protocol = "icmp"
  }
}

# --- identity --------------------------------------------------------------

resource "google_service_account" "node" {
  project      = var.project
  account_id   = "${var.name}-node"
  display_name = "GPU nodes of ${var.name}"
}

# Nodes may write logs and metrics and pull images: the same permissions
# as the node identity on AWS and Azure.
resource "google_project_iam_member" "node" {
  for_each = toset([
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/artifactregistry.reader",
  ])
  project = var.project
  role    = each.value
  member  = "serviceAccount:${google_service_account.node.email}"
}

# --- cluster ---------------------------------------------------------------

resource "google_container_cluster" "this" {
  project                  = var.project
  name                     = var.name
  location                 = var.region
  network                  = google_compute_network.this.id
  subnetwork               = google_compute_subnetwork.nodes.id
  min_master_version       = var.kubernetes_version
  remove_default_node_pool = true
  initial_node_count       = 1
  deletion_protection      = false
  ip_allocation_policy {
    cluster_secondary_range_name  = "pods"
    services_secondary_range_name = "services"
  }
  workload_identity_config {
    workload_pool = "${var.project}.svc.id.goog"
  }
}

resource "google_container_node_pool" "pool" {
  for_each = var.node_pools
  project  = var.project
  name     = each.key
  cluster  = google_container_cluster.this.name
  location = var.region
  # The region's zones but those that had no capacity for the pool (GKE's
  # own choice when none did); a reservation's zone only, when the nodes
  # consume one (GKE places them nowhere else).
  node_locations = each.value.reservation != null ? [each.value.reservation.zone] : (
    length(each.value.exclude_zones) == 0 ? null : [
      for z in local.zones : z if !contains(each.value.exclude_zones, z)
    ]
  )
  # A pool waiting at its minimum launches nothing; GKE's own default
  # would launch a node per zone. Where the placement puts the nodes the
  # autoscaler's floor brings them (the count a pool starts with cannot
  # change without replacing it, so later moves leave it alone). A queued
  # pool starts and stays empty until jobs ask for nodes: GKE requires it.
  initial_node_count = each.value.capacity == "queued" ? 0 : max(each.value.min_nodes, coalesce(each.value.nodes, 0))
  lifecycle {
    ignore_changes = [initial_node_count]
  }
  autoscaling {
    total_min_node_count = each.value.capacity == "queued" ? 0 : max(each.value.min_nodes, coalesce(each.value.nodes, 0))
    total_max_node_count = each.value.max_nodes
    # Flex-start VMs come where GKE finds the capacity, in any zone.
    location_policy = contains(local.dws, each.value.capacity) ? "ANY" : null
  }
  # GKE refuses auto-repair on a flex-start pool (its VMs end at their run
  # duration, seven days unless set, and are not repaired); a queued
  # pool's nodes are not upgraded under a running job either.
  dynamic "management" {
    for_each = contains(local.dws, each.value.capacity) ? [1] : []
    content {
      auto_repair  = false
      auto_upgrade = each.value.capacity != "queued"
    }
  }
  dynamic "queued_provisioning" {
    for_each = each.value.capacity == "queued" ? [1] : []
    content {
      enabled = true
    }
  }
  node_config {
    machine_type = each.value.instance_type
    image_type   = "UBUNTU_CONTAINERD"
    spot         = each.value.capacity == "spot"
    flex_start   = contains(local.dws, each.value.capacity) ? true : null
    max_run_duration = (
      each.value.capacity == "flex_start" && each.value.max_run_seconds != null
      ? "${each.value.max_run_seconds}s" : null
    )
    # Jobs select a queued pool's nodes by GKE's label too (its taint alone
    # is GKE's).
    labels          = merge(each.value.labels, each.value.capacity == "queued" ? { "cloud.google.com/gke-queued" = "true" } : {})
    service_account = google_service_account.node.email
    oauth_scopes    = ["https://www.googleapis.com/auth/cloud-platform"]
    guest_accelerator {
      type  = local.accelerator[each.value.gpu]
      count = each.value.gpus_per_node
      gpu_driver_installation_config {
        gpu_driver_version = "INSTALLATION_DISABLED"
      }
    }
    dynamic "taint" {
      for_each = concat(each.value.taints, each.value.capacity == "queued" ? [local.queued_taint] : [])
      content {
        key    = taint.value.key
        value  = taint.value.value
        effect = local.gke_effect[taint.value.effect]
      }
    }
    # A reservation is named by its name in the cluster's project, and as
    # projects/P/reservations/NAME when another project shares it.
    dynamic "reservation_affinity" {
      for_each = each.value.reservation == null ? [] : [split("/", each.value.reservation.id)]
      content {
        consume_reservation_type = "SPECIFIC_RESERVATION"
        key                      = "compute.googleapis.com/reservation-name"
        values = [
          reservation_affinity.value[0] == "projects" && reservation_affinity.value[1] != var.project
          ? "projects/${reservation_affinity.value[1]}/reservations/${reservation_affinity.value[length(reservation_affinity.value) - 1]}"
          : reservation_affinity.value[length(reservation_affinity.value) - 1]
        ]
      }
    }
    # Flex-start VMs consume no reservation, which GKE requires said.
    dynamic "reservation_affinity" {
      for_each = contains(local.dws, each.value.capacity) ? [1] : []
      content {
        consume_reservation_type = "NO_RESERVATION"
      }
    }
  }
}

# Untainted CPU nodes for the cluster's own controllers; a regional pool
# has its count in each of the region's zones, so the nodes are spread.
resource "google_container_node_pool" "system" {
  count      = var.system_pool == null ? 0 : 1
  project    = var.project
  name       = "system"
  cluster    = google_container_cluster.this.name
  location   = var.region
  node_count = ceil(var.system_pool.nodes / length(local.zones))
  node_config {
    machine_type    = coalesce(var.system_pool.instance_type, "e2-standard-4")
    image_type      = "UBUNTU_CONTAINERD"
    service_account = google_service_account.node.email
    oauth_scopes    = ["https://www.googleapis.com/auth/cloud-platform"]
  }
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
  cloud                     = "gcp"
  kubernetes_version        = var.kubernetes_version
  gpu_operator              = var.gpu_operator
  service_monitor           = try(var.runtime.metrics.service_monitor, false)
  driver_installed_by_cloud = false
  tolerations               = distinct(flatten([for p in local.runtime_pools : concat(p.taints, p.cloud_taints)]))
  depends_on                = [google_container_node_pool.pool]
}

# Kueue, KubeRay and metrics, when the spec has a runtime block.
module "runtime" {
  source  = "../runtime"
  count   = var.runtime == null ? 0 : 1
  runtime = var.runtime
  # A MultiKueue manager has no GPU pools of its own: its flavours are the
  # workers' pools.
  pools       = merge(local.runtime_pools, try(var.multikueue.pools, {}))
  multikueue  = var.multikueue == null ? null : merge(var.multikueue, { endpoint = "https://${google_container_cluster.this.endpoint}" })
  kubeconfigs = var.multikueue_kubeconfigs
  checkpoints = local.checkpoints == null ? null : {}
  # The Secret's values (checkpoints.tf); the objects the key may use come
  # with it.
  checkpoint_access = local.checkpoint_access
  depends_on        = [module.gpu_operator, google_storage_bucket_iam_member.checkpoints]
}

# --- outputs ---------------------------------------------------------------

output "cluster_endpoint" {
  value = "https://${google_container_cluster.this.endpoint}"
}

output "node_identity" {
  description = "The service account the GPU nodes run as."
  value       = google_service_account.node.email
}

output "kubernetes" {
  description = "How to reach the cluster: what the kubernetes and helm providers are configured with."
  value = {
    host                   = "https://${google_container_cluster.this.endpoint}"
    cluster_ca_certificate = base64decode(google_container_cluster.this.master_auth[0].cluster_ca_certificate)
    exec = {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "gke-gcloud-auth-plugin"
      args        = []
    }
  }
}

output "kubeconfig" {
  sensitive = true
  value = yamlencode({
    apiVersion        = "v1"
    kind              = "Config"
    clusters          = [{ name = var.name, cluster = { server = "https://${google_container_cluster.this.endpoint}", "certificate-authority-data" = google_container_cluster.this.master_auth[0].cluster_ca_certificate } }]
    users             = [{ name = var.name, user = { exec = { apiVersion = "client.authentication.k8s.io/v1beta1", command = "gke-gcloud-auth-plugin", provideClusterInfo = true } } }]
    contexts          = [{ name = var.name, context = { cluster = var.name, user = var.name } }]
    "current-context" = var.name
  })
}

# The nodes each GPU pool keeps here (its floor), read back from its
# resources: where a placement puts a pool, its nodes; 0 at the places it
# can fail over to.
output "nodes" {
  value = { for name, p in google_container_node_pool.pool : name => p.autoscaling[0].total_min_node_count }
}

# What the portability check compares between clouds (see modules/aws).
output "portable" {
  value = {
    for name, p in google_container_node_pool.pool : name => {
      gpu           = var.node_pools[name].gpu
      gpus_per_node = p.node_config[0].guest_accelerator[0].count
      # Less GKE's queued label and taint: Kueue's flavour gets a job onto
      # those nodes, so a job moved here finds them as it would elsewhere.
      labels = { for k, v in p.node_config[0].labels : k => v if k != local.queued_taint.key }
      taints = [
        for t in p.node_config[0].taint : { key = t.key, value = t.value, effect = local.k8s_effect[t.effect] }
        if t.key != local.queued_taint.key
      ]
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
