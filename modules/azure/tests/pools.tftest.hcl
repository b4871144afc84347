# The Azure module's address plan and node pools, with Azure, Kubernetes
# and Helm mocked: nothing is asked of a cloud (`strata test` in this
# folder; tests/module_tests.rs runs it).

mock_provider "azurerm" {
  # What AKS reports of a cluster: the kubeconfig and the node identity
  # read them.
  mock_resource "azurerm_kubernetes_cluster" {
    defaults = {
      kube_config = [{
        host                   = "https://aks.example"
        cluster_ca_certificate = "Q0E="
      }]
      kubelet_identity = [{
        object_id = "00000000-0000-0000-0000-000000000001"
      }]
    }
  }
}

mock_provider "kubernetes" {}

mock_provider "helm" {
  source = "../tests/helm"
}

variables {
  name     = "t"
  location = "eastus"
  network  = { cidr = "10.0.0.0/16" }
  gpu_operator = {
    version        = "v25.3.1"
    driver_version = "570.124.06"
  }
  node_pools = {
    h100 = {
      gpu           = "H100"
      instance_type = "Standard_ND96isr_H100_v5"
      capacity      = "spot"
      min_nodes     = 1
      max_nodes     = 4
      taints        = [{ key = "nvidia.com/gpu", effect = "NoSchedule" }]
    }
  }
}

run "nodes_in_the_first_quarter_of_the_network" {
  command = plan
  assert {
    condition     = azurerm_subnet.nodes.address_prefixes == tolist(["10.0.0.0/18"])
    error_message = "nodes in the first /18, as on every cloud"
  }
}

run "a_spot_pool_as_aks_makes_it" {
  command = plan
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.pool["h100"].priority == "Spot" && azurerm_kubernetes_cluster_node_pool.pool["h100"].eviction_policy == "Delete"
    error_message = "spot VMs, deleted when evicted"
  }
  assert {
    condition     = contains(azurerm_kubernetes_cluster_node_pool.pool["h100"].node_taints, "kubernetes.azure.com/scalesetpriority=spot:NoSchedule")
    error_message = "AKS's own spot taint, said so every plan does not remove it"
  }
  assert {
    condition     = contains(azurerm_kubernetes_cluster_node_pool.pool["h100"].node_taints, "nvidia.com/gpu=:NoSchedule")
    error_message = "the pool's taint in AKS's spelling"
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.pool["h100"].gpu_driver == "None"
    error_message = "AKS installs no driver: the GPU Operator does, as on every cloud"
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.pool["h100"].min_count == 1 && azurerm_kubernetes_cluster_node_pool.pool["h100"].max_count == 4
    error_message = "the pool's floor and ceiling"
  }
}

run "a_reservation_group_in_its_zone" {
  command = plan
  variables {
    node_pools = {
      h100 = {
        gpu           = "H100"
        instance_type = "Standard_ND96isr_H100_v5"
        capacity      = "reserved"
        reservation   = { id = "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/capacityReservationGroups/crg", zone = "2" }
      }
    }
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.pool["h100"].priority == "Regular" && azurerm_kubernetes_cluster_node_pool.pool["h100"].zones == tolist(["2"])
    error_message = "reserved capacity is regular priority, in its zone"
  }
  assert {
    condition     = endswith(azurerm_kubernetes_cluster_node_pool.pool["h100"].capacity_reservation_group_id, "/capacityReservationGroups/crg")
    error_message = "the pool is made in the reservation group"
  }
}

run "applied_with_everything_mocked" {
  assert {
    condition     = output.portable["h100"].taints == [{ key = "nvidia.com/gpu", value = "", effect = "NoSchedule" }]
    error_message = "the portable view leaves AKS's own spot taint out"
  }
}
