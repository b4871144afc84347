# The GCP module's address plan and node pools, with Google, Kubernetes
# and Helm mocked: nothing is asked of a cloud (`strata test` in this
# folder; tests/module_tests.rs runs it).

mock_provider "google" {
  # What GKE reports of a cluster: the kubeconfig reads its certificate
  # authority.
  mock_resource "google_container_cluster" {
    defaults = {
      endpoint = "203.0.113.10"
      master_auth = [{
        cluster_ca_certificate = "Q0E="
      }]
    }
  }
}

mock_provider "kubernetes" {}

mock_provider "helm" {
  source = "../tests/helm"
}

variables {
  name    = "t"
  project = "p"
  region  = "us-central1"
  network = { cidr = "10.0.0.0/16" }
  gpu_operator = {
    version        = "v25.3.1"
    driver_version = "570.124.06"
  }
  node_pools = {
    h100 = {
      gpu           = "H100"
      instance_type = "a3-highgpu-8g"
      capacity      = "spot"
      min_nodes     = 1
      max_nodes     = 4
      taints        = [{ key = "nvidia.com/gpu", effect = "NoSchedule" }]
    }
  }
}

run "nodes_pods_and_services_share_the_address_plan" {
  command = plan
  assert {
    condition     = google_compute_subnetwork.nodes.ip_cidr_range == "10.0.0.0/18"
    error_message = "nodes in the first /18"
  }
  assert {
    condition     = toset([for r in google_compute_subnetwork.nodes.secondary_ip_range : r.ip_cidr_range]) == toset(["10.0.128.0/17", "10.0.64.0/20"])
    error_message = "pods in the second half, services in a /20 of the second quarter"
  }
}

run "a_spot_pool_as_gke_names_it" {
  command = plan
  assert {
    condition     = one(google_container_node_pool.pool["h100"].node_config).spot
    error_message = "spot VMs"
  }
  assert {
    condition     = one(one(google_container_node_pool.pool["h100"].node_config).guest_accelerator).type == "nvidia-h100-80gb"
    error_message = "GKE's name for the H100"
  }
  assert {
    condition     = one(one(one(google_container_node_pool.pool["h100"].node_config).guest_accelerator).gpu_driver_installation_config).gpu_driver_version == "INSTALLATION_DISABLED"
    error_message = "GKE installs no driver: the GPU Operator does, as on every cloud"
  }
  assert {
    condition     = one(one(google_container_node_pool.pool["h100"].node_config).taint).effect == "NO_SCHEDULE"
    error_message = "Kubernetes' NoSchedule is GKE's NO_SCHEDULE"
  }
  assert {
    condition     = google_container_node_pool.pool["h100"].initial_node_count == 1 && one(google_container_node_pool.pool["h100"].autoscaling).total_max_node_count == 4
    error_message = "the pool's floor and ceiling"
  }
}

run "a_queued_pool_is_made_as_gke_requires" {
  command = plan
  variables {
    node_pools = {
      h100 = {
        gpu           = "H100"
        instance_type = "a3-highgpu-8g"
        capacity      = "queued"
        min_nodes     = 2
        max_nodes     = 8
      }
    }
  }
  assert {
    condition     = google_container_node_pool.pool["h100"].initial_node_count == 0 && one(google_container_node_pool.pool["h100"].autoscaling).total_min_node_count == 0
    error_message = "a queued pool starts and stays empty until jobs ask"
  }
  assert {
    condition     = one(google_container_node_pool.pool["h100"].queued_provisioning).enabled && one(google_container_node_pool.pool["h100"].node_config).flex_start
    error_message = "queued provisioning on flex-start VMs"
  }
  assert {
    condition     = one(google_container_node_pool.pool["h100"].management).auto_repair == false
    error_message = "GKE refuses auto-repair on flex-start VMs"
  }
  assert {
    condition     = one(one(google_container_node_pool.pool["h100"].node_config).reservation_affinity).consume_reservation_type == "NO_RESERVATION"
    error_message = "flex-start VMs consume no reservation, said"
  }
  assert {
    condition     = one(one(google_container_node_pool.pool["h100"].node_config).taint).key == "cloud.google.com/gke-queued"
    error_message = "GKE's own taint, said so what GKE reads back is what was written"
  }
}

run "a_shared_reservation_is_named_by_its_project" {
  command = plan
  variables {
    node_pools = {
      h100 = {
        gpu           = "H100"
        instance_type = "a3-highgpu-8g"
        capacity      = "reserved"
        reservation   = { id = "projects/other/reservations/r1", zone = "us-central1-b" }
      }
    }
  }
  assert {
    condition     = one(one(google_container_node_pool.pool["h100"].node_config).reservation_affinity).values == toset(["projects/other/reservations/r1"])
    error_message = "another project's reservation by its full name"
  }
  assert {
    condition     = google_container_node_pool.pool["h100"].node_locations == toset(["us-central1-b"])
    error_message = "the nodes only in the reservation's zone"
  }
}

run "a_zone_without_capacity_is_left_out" {
  command = plan
  variables {
    node_pools = {
      h100 = {
        gpu           = "H100"
        instance_type = "a3-highgpu-8g"
        exclude_zones = ["us-central1-a"]
      }
    }
  }
  assert {
    condition     = google_container_node_pool.pool["h100"].node_locations == toset(["us-central1-b", "us-central1-c"])
    error_message = "us-central1-a left out"
  }
}

run "applied_with_everything_mocked" {
  assert {
    condition     = output.portable["h100"].taints == [{ key = "nvidia.com/gpu", value = "", effect = "NoSchedule" }]
    error_message = "the portable view speaks Kubernetes' effect names"
  }
}
