# Checkpoints, one shape on every cloud: in each queue namespace a Secret
# `strata-checkpoints` with the same keys (AWS_ENDPOINT_URL,
# AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, BUCKET, and the
# SDKs' two checksum settings) and a service account `strata-checkpoints`. A job that takes the Secret as its
# environment and runs as that service account reads and writes its
# checkpoints with any S3 client, unchanged on whichever cluster runs it.
#
# The cloud's module makes the bucket and says what goes in the Secret:
# on EKS the key pair is empty and the service account's pods get a role
# through EKS Pod Identity instead (an S3 client's default chain finds
# it); on GKE an HMAC key of the node service account for GCS's
# S3-compatible XML API; on AKS the key of the S3 gateway in front of the
# storage account.

variable "checkpoints" {
  type = object({
    # What the cloud binds to the service account, if anything.
    service_account_annotations = optional(map(string), {})
  })
  default     = null
  description = "Checkpoints on this cluster; null: none."
}

# Apart from the rest, as the kubeconfigs are: what is derived from a
# sensitive value is sensitive.
variable "checkpoint_access" {
  type        = map(string)
  default     = {}
  sensitive   = true
  description = "The Secret's values by key (AWS_ENDPOINT_URL, AWS_REGION, BUCKET, the key pair and the checksum settings where the cloud gives them)."
}

locals {
  checkpoints = "strata-checkpoints"
  # The Secret's keys, on every cloud: what the portability check compares.
  checkpoint_keys = [
    "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "BUCKET",
    "AWS_REQUEST_CHECKSUM_CALCULATION", "AWS_RESPONSE_CHECKSUM_VALIDATION",
  ]
  # The AWS SDKs' own defaults (since January 2025) for the checksum
  # settings: a CRC on every upload, sent as a trailer of a chunked body.
  # S3 takes it; stores that speak S3 but not that part of it (GCS's XML
  # API refuses such uploads) get WHEN_REQUIRED from their cloud's module.
  checkpoint_defaults = {
    AWS_REQUEST_CHECKSUM_CALCULATION = "WHEN_SUPPORTED"
    AWS_RESPONSE_CHECKSUM_VALIDATION = "WHEN_SUPPORTED"
  }
  checkpoint_namespaces = var.checkpoints == null ? toset([]) : local.namespaces
}

resource "kubernetes_manifest" "checkpoint_account" {
  for_each = local.checkpoint_namespaces
  manifest = {
    apiVersion = "v1"
    kind       = "ServiceAccount"
    metadata = {
      name        = local.checkpoints
      namespace   = kubernetes_namespace.queue[each.key].metadata[0].name
      annotations = var.checkpoints.service_account_annotations
    }
  }
}

resource "kubernetes_manifest" "checkpoint_secret" {
  for_each = local.checkpoint_namespaces
  manifest = {
    apiVersion = "v1"
    kind       = "Secret"
    type       = "Opaque"
    metadata   = { name = local.checkpoints, namespace = kubernetes_namespace.queue[each.key].metadata[0].name }
    # Every key, empty where the cloud gives no value (EKS's key pair):
    # an S3 client treats an empty key as none and looks further.
    data = { for k in local.checkpoint_keys : k => base64encode(lookup(var.checkpoint_access, k, lookup(local.checkpoint_defaults, k, ""))) }
  }
}

locals {
  # What the portability check compares: names and keys, read back from
  # the objects, never a value.
  checkpoint_shape = var.checkpoints == null ? null : {
    secret          = local.checkpoints
    keys            = try(sort(keys(values(kubernetes_manifest.checkpoint_secret)[0].manifest.data)), [])
    service_account = local.checkpoints
    namespaces      = sort(keys(kubernetes_manifest.checkpoint_secret))
  }
}

output "checkpoint_account" {
  description = "The service account checkpointing jobs run as, in each queue namespace: what a cloud binds an identity to."
  value       = local.checkpoints
}
