provider "azurerm" {
  subscription_id = "00000000-0000-0000-0000-000000000000"
}

resource "azurerm_kubernetes_cluster" "this" {
  name                = "train"
  location            = "eastus2"
  resource_group_name = "train"
  dns_prefix          = "train"
  sku_tier            = "Standard"
  default_node_pool {
    name       = "system"
    vm_size    = "Standard_D4s_v5"
    node_count = 3
  }
  identity {
    type = "SystemAssigned"
  }
}

resource "azurerm_kubernetes_cluster_node_pool" "h100" {
  name                  = "h100"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.this.id
  vm_size               = "Standard_NC40ads_H100_v5"
  auto_scaling_enabled  = true
  min_count             = 0
  max_count             = 6
}

resource "azurerm_kubernetes_cluster_node_pool" "odd" {
  name                  = "odd"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.this.id
  vm_size               = "Standard_Made_Up_v9"
  node_count            = 1
}
