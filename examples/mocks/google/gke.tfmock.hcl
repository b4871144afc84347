# What GKE reports of a cluster, for the examples' tests: the kubeconfig
# reads its endpoint and certificate authority.
mock_resource "google_container_cluster" {
  defaults = {
    endpoint    = "203.0.113.10"
    master_auth = [{ cluster_ca_certificate = "Q0E=" }]
  }
}
