# What AKS reports of a cluster, for the examples' tests: the kubeconfig
# and the node identity read them.
mock_resource "azurerm_kubernetes_cluster" {
  defaults = {
    kube_config      = [{ host = "https://aks.example", cluster_ca_certificate = "Q0E=" }]
    kubelet_identity = [{ object_id = "00000000-0000-0000-0000-000000000001" }]
  }
}
