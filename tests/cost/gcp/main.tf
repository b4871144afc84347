provider "google" {
  project = "acme-ml"
  region  = "us-central1"
}

resource "google_container_node_pool" "h100" {
  name           = "h100"
  cluster        = "train"
  location       = "us-central1"
  node_locations = ["us-central1-a", "us-central1-b"]
  autoscaling {
    min_node_count = 1
    max_node_count = 3
  }
  node_config {
    machine_type = "a3-highgpu-8g"
    spot         = true
    guest_accelerator {
      type  = "nvidia-h100-80gb"
      count = 8
    }
  }
}

resource "google_container_node_pool" "cpu" {
  name       = "cpu"
  cluster    = "train"
  location   = "us-central1-a"
  node_count = 2
  node_config {
    machine_type = "n2-standard-8"
    preemptible  = true
  }
}
