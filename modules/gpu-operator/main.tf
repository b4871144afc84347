# The NVIDIA GPU Operator, the same on every cluster: one namespace, the
# chart pinned to one version, and values that differ between clouds only
# where the cloud itself already does the operator's job.

variable "cloud" {
  type        = string
  description = "Where the cluster runs: aws, gcp, azure or kubernetes (an existing cluster)."
  validation {
    condition     = contains(["aws", "gcp", "azure", "kubernetes"], var.cloud)
    error_message = "The cloud must be one of aws, gcp, azure or kubernetes."
  }
}

variable "kubernetes_version" {
  type        = string
  default     = ""
  description = "The cluster's Kubernetes version (1.33); GKE 1.33 and later need the toolkit to read containerd's config from a file."
}

variable "gpu_operator" {
  type = object({
    version        = string
    driver_version = string
    cuda_version   = optional(string)
    mig_strategy   = optional(string, "single")
    dcgm_exporter  = optional(bool, true)
  })
}

variable "driver_installed_by_cloud" {
  type        = bool
  default     = null
  description = "Whether the node image or the cloud installs the NVIDIA driver (then the operator's driver is off). By default: EKS's AL2023 NVIDIA AMIs and GKE's driver installer do, AKS pools made by strata leave it to the operator (gpu_driver = None)."
}

variable "tolerations" {
  type = list(object({
    key      = string
    operator = optional(string, "Equal")
    value    = optional(string)
    effect   = string
  }))
  default     = []
  description = "The GPU pools' taints, tolerated by the operator's daemonsets."
}

variable "service_monitor" {
  type        = bool
  default     = false
  description = "Whether Prometheus scrapes the DCGM exporter's GPU metrics through a ServiceMonitor (the Prometheus Operator's CRD must be on the cluster)."
}

variable "namespace" {
  type    = string
  default = "gpu-operator"
}

locals {
  cloud_driver = coalesce(var.driver_installed_by_cloud, contains(["aws", "gcp"], var.cloud))
  # EKS's NVIDIA AMIs ship the container toolkit with the driver.
  cloud_toolkit = local.cloud_driver && var.cloud == "aws"
  # GKE's driver installer puts the driver under /home/kubernetes/bin/nvidia,
  # where the operator's validator and toolkit must look, and GKE wants
  # devices injected through CDI.
  gke_driver      = local.cloud_driver && var.cloud == "gcp"
  gke_dir         = "/home/kubernetes/bin/nvidia"
  minor           = try(tonumber(split(".", var.kubernetes_version)[1]), 0)
  gke_file_config = var.cloud == "gcp" && local.minor >= 33

  values = merge(
    {
      # The version is the operator's to install only when enabled.
      driver = {
        enabled = !local.cloud_driver
        version = var.gpu_operator.driver_version
      }
      toolkit = merge(
        { enabled = !local.cloud_toolkit },
        local.gke_driver ? { installDir = local.gke_dir } : {},
        # GKE 1.33 and later: containerd's config is read from its file.
        local.gke_file_config ? { env = [{ name = "RUNTIME_CONFIG_SOURCE", value = "file" }] } : {},
      )
      devicePlugin = { enabled = true }
      dcgmExporter = { enabled = var.gpu_operator.dcgm_exporter }
      mig          = { strategy = var.gpu_operator.mig_strategy }
      daemonsets   = { tolerations = var.tolerations }
      node-feature-discovery = {
        worker = { tolerations = var.tolerations }
      }
    },
    # One key per conditional: `c ? {…} : {}` is a map, and a map of
    # objects of different shapes would turn their booleans into strings
    # (which a chart's `if` takes for true).
    local.gke_driver ? { hostPaths = { driverInstallDir = local.gke_dir } } : {},
    local.gke_driver ? { cdi = { enabled = true, default = true } } : {},
    # The operator's own exporter, scraped: not a second exporter.
    var.service_monitor ? { dcgmExporter = { enabled = true, serviceMonitor = { enabled = true } } } : {},
  )
}

resource "kubernetes_namespace" "gpu_operator" {
  metadata {
    name = var.namespace
    # The driver and toolkit daemonsets run privileged.
    labels = { "pod-security.kubernetes.io/enforce" = "privileged" }
  }
}

resource "helm_release" "gpu_operator" {
  name       = "gpu-operator"
  repository = "https://helm.ngc.nvidia.com/nvidia"
  chart      = "gpu-operator"
  version    = var.gpu_operator.version
  namespace  = kubernetes_namespace.gpu_operator.metadata[0].name
  wait       = true
  atomic     = true
  timeout    = 900
  values     = local.values
}

output "values" {
  description = "The values the release was given (what the portability check compares)."
  value       = local.values
}

output "driver_version" {
  description = "The driver version the nodes run: the operator's, or the one the cloud installs."
  value       = local.cloud_driver ? null : var.gpu_operator.driver_version
}

output "version" {
  description = "The operator release installed."
  value       = helm_release.gpu_operator.version
}

output "revision" {
  value = helm_release.gpu_operator.metadata[0].revision
}

# The operator reconciles after the release is installed: its
# ClusterPolicy reports "ready" once the driver, toolkit and device plugin
# run on the GPU nodes. strata looks again for a few minutes after an apply.
check "gpu_operator_ready" {
  data "kubernetes_resource" "cluster_policy" {
    api_version = "nvidia.com/v1"
    kind        = "ClusterPolicy"
    metadata {
      name = "cluster-policy"
    }
    depends_on = [helm_release.gpu_operator]
  }

  assert {
    condition     = try(data.kubernetes_resource.cluster_policy.object.status.state, "") == "ready"
    error_message = "The GPU Operator's ClusterPolicy is not ready (its state is ${try(data.kubernetes_resource.cluster_policy.object.status.state, "not reported")}): see `kubectl get clusterpolicy cluster-policy -o yaml` and the pods in namespace ${var.namespace}."
  }
}
