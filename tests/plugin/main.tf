terraform {
  required_providers {
    stratatest = {
      source  = "registry.strata.test/strata/stratatest"
      version = "0.1.0"
    }
  }
}

provider "stratatest" {
  store = "./store"
}

variable "team" {
  default = "gpu"
}

variable "size" {
  default = 2
}

resource "stratatest_object" "a" {
  name   = "alpha"
  labels = { team = var.team }
  size   = var.size
  secret = "hush"
  ports  = [{ name = "http", number = 80 }, { name = "dns", number = 53, protocol = "udp" }]
  spec {
    image = "nginx"
  }
}

resource "stratatest_object" "b" {
  count  = 2
  name   = "beta-${count.index}"
  labels = { owner = stratatest_object.a.id }
}

# A second configuration of the provider: a process of its own.
provider "stratatest" {
  alias = "second"
  store = "./store"
}

resource "stratatest_object" "c" {
  provider = stratatest.second
  name     = "gamma"
  labels   = { team = var.team }
}

data "stratatest_object" "a" {
  name       = stratatest_object.a.name
  depends_on = [stratatest_object.a]
}

output "id" {
  value = stratatest_object.a.id
}

output "found" {
  value = data.stratatest_object.a.labels
}

output "revision" {
  value = stratatest_object.a.revision
}
