# Checkpoints on AKS. Azure Blob storage has no S3 API, so the cluster
# runs an S3 gateway in front of a storage account: s3proxy (Apache-2.0,
# maintained, its `azureblob-sdk` backend written on Microsoft's own SDK).
# The gateway reaches the account through workload identity (a managed
# identity federated with the gateway's service account, holding Storage
# Blob Data Contributor on the account), so no storage key exists
# anywhere; jobs sign their S3 requests with the gateway's own key pair,
# which is in the Secret. The bucket jobs name is a blob container.
#
# The account lives in a resource group of its own. Unless the spec says
# `force_destroy = true`, a CanNotDelete lock on that group keeps the
# checkpoints when the cluster goes: Resource Manager deletes an account
# with everything in it, so the lock is what refuses it (and its notes say
# how to let it go).

locals {
  # The expansion always gives it, null for none.
  checkpoints = var.runtime == null ? null : var.runtime.checkpoints
  # The region in Azure's short form (`East US` → `eastus`), as a
  # container name and an S3 region take it.
  checkpoint_region = lower(replace(var.location, " ", ""))
  # The container jobs see as their bucket: the same name as on every
  # cloud.
  checkpoint_bucket = try("${local.checkpoints.bucket}-${local.checkpoint_region}", null)
  # Account names are global, 3 to 24 lowercase letters and digits: the
  # bucket's own letters, then a hash of bucket and region that keeps each
  # cluster's apart.
  checkpoint_account = try("${substr(replace(local.checkpoints.bucket, "-", ""), 0, 16)}${substr(sha1(local.checkpoint_bucket), 0, 8)}", null)
  checkpoint_days    = try(local.checkpoints.expire_after_days, null)
  checkpoint_kept    = !try(local.checkpoints.force_destroy, false)
  gateway            = "strata-checkpoints-gateway"
  gateway_namespace  = "strata-checkpoints"
  gateway_image      = "andrewgaul/s3proxy:4.1.1"
}

resource "azurerm_resource_group" "checkpoints" {
  count    = local.checkpoints == null ? 0 : 1
  name     = "${local.resource_group}-checkpoints"
  location = var.location
}

resource "azurerm_management_lock" "checkpoints" {
  count      = local.checkpoints != null && local.checkpoint_kept ? 1 : 0
  name       = "strata-keep-checkpoints"
  scope      = azurerm_resource_group.checkpoints[0].id
  lock_level = "CanNotDelete"
  notes      = "strata keeps the checkpoints when the cluster goes: set force_destroy = true in the runtime's checkpoints block and apply before destroying, to let them go with it."
}

resource "azurerm_storage_account" "checkpoints" {
  count                           = local.checkpoints == null ? 0 : 1
  name                            = local.checkpoint_account
  resource_group_name             = azurerm_resource_group.checkpoints[0].name
  location                        = var.location
  account_tier                    = "Standard"
  account_replication_type        = "LRS"
  min_tls_version                 = "TLS1_2"
  https_traffic_only_enabled      = true
  allow_nested_items_to_be_public = false
  blob_properties {
    versioning_enabled = try(local.checkpoints.versioning, false)
  }
  # Made under the lock, so that a destroy meets it before the lock goes.
  depends_on = [azurerm_management_lock.checkpoints]
}

resource "azurerm_storage_container" "checkpoints" {
  count                 = local.checkpoints == null ? 0 : 1
  name                  = local.checkpoint_bucket
  storage_account_id    = azurerm_storage_account.checkpoints[0].id
  container_access_type = "private"
}

# Old checkpoints go after `expire_after_days`, and old versions as long
# after they were made. (Blocks of uploads a crashed job left half done
# are not blobs: Azure discards uncommitted blocks after seven days.)
resource "azurerm_storage_management_policy" "checkpoints" {
  count              = local.checkpoint_days == null ? 0 : 1
  storage_account_id = azurerm_storage_account.checkpoints[0].id
  rule {
    name    = "expire-old-checkpoints"
    enabled = true
    filters {
      blob_types   = ["blockBlob"]
      prefix_match = ["${azurerm_storage_container.checkpoints[0].name}/"]
    }
    actions {
      base_blob {
        delete_after_days_since_modification_greater_than = local.checkpoint_days
      }
      dynamic "version" {
        for_each = try(local.checkpoints.versioning, false) ? [local.checkpoint_days] : []
        content {
          delete_after_days_since_creation = version.value
        }
      }
    }
  }
}

# --- the gateway's identity --------------------------------------------------

resource "azurerm_user_assigned_identity" "checkpoints" {
  count               = local.checkpoints == null ? 0 : 1
  name                = "${var.name}-checkpoints"
  location            = var.location
  resource_group_name = azurerm_resource_group.this.name
}

resource "azurerm_federated_identity_credential" "checkpoints" {
  count               = local.checkpoints == null ? 0 : 1
  name                = local.gateway
  resource_group_name = azurerm_resource_group.this.name
  parent_id           = azurerm_user_assigned_identity.checkpoints[0].id
  audience            = ["api://AzureADTokenExchange"]
  issuer              = azurerm_kubernetes_cluster.this.oidc_issuer_url
  subject             = "system:serviceaccount:${local.gateway_namespace}:${local.gateway}"
}

# The account and nothing else (it holds the one container).
resource "azurerm_role_assignment" "checkpoints" {
  count                = local.checkpoints == null ? 0 : 1
  scope                = azurerm_storage_account.checkpoints[0].id
  role_definition_name = "Storage Blob Data Contributor"
  principal_id         = azurerm_user_assigned_identity.checkpoints[0].principal_id
}

# --- the gateway ---------------------------------------------------------------

# The key pair jobs sign with: the gateway's own, good for nothing else.
resource "random_password" "gateway_key" {
  count   = local.checkpoints == null ? 0 : 1
  length  = 20
  lower   = false
  special = false
}

resource "random_password" "gateway_secret" {
  count   = local.checkpoints == null ? 0 : 1
  length  = 40
  special = false
}

resource "kubernetes_namespace" "gateway" {
  count = local.checkpoints == null ? 0 : 1
  metadata {
    name = local.gateway_namespace
  }
  depends_on = [azurerm_kubernetes_cluster_node_pool.pool]
}

resource "kubernetes_manifest" "gateway_keys" {
  count = local.checkpoints == null ? 0 : 1
  manifest = {
    apiVersion = "v1"
    kind       = "Secret"
    type       = "Opaque"
    metadata   = { name = local.gateway, namespace = kubernetes_namespace.gateway[0].metadata[0].name }
    data = {
      S3PROXY_IDENTITY   = base64encode(random_password.gateway_key[0].result)
      S3PROXY_CREDENTIAL = base64encode(random_password.gateway_secret[0].result)
    }
  }
}

resource "kubernetes_manifest" "gateway_account" {
  count = local.checkpoints == null ? 0 : 1
  manifest = {
    apiVersion = "v1"
    kind       = "ServiceAccount"
    metadata = {
      name        = local.gateway
      namespace   = kubernetes_namespace.gateway[0].metadata[0].name
      annotations = { "azure.workload.identity/client-id" = azurerm_user_assigned_identity.checkpoints[0].client_id }
    }
  }
}

locals {
  gateway_labels = { "app.kubernetes.io/name" = "s3proxy", "app.kubernetes.io/instance" = local.gateway }
  # s3proxy's settings, as its image takes them from the environment: S3
  # with SigV4 and the gateway's key pair in front; Azure Blob behind, its
  # identity and credential empty so that the Azure SDK's default chain
  # finds the workload identity.
  gateway_env = [
    { name = "S3PROXY_ENDPOINT", value = "http://0.0.0.0:8080" },
    { name = "S3PROXY_AUTHORIZATION", value = "aws-v2-or-v4" },
    { name = "S3PROXY_IDENTITY", valueFrom = { secretKeyRef = { name = local.gateway, key = "S3PROXY_IDENTITY" } } },
    { name = "S3PROXY_CREDENTIAL", valueFrom = { secretKeyRef = { name = local.gateway, key = "S3PROXY_CREDENTIAL" } } },
    { name = "JCLOUDS_PROVIDER", value = "azureblob-sdk" },
    { name = "JCLOUDS_ENDPOINT", value = trimsuffix(try(azurerm_storage_account.checkpoints[0].primary_blob_endpoint, ""), "/") },
    { name = "JCLOUDS_IDENTITY", value = "" },
    { name = "JCLOUDS_CREDENTIAL", value = "" },
  ]
}

resource "kubernetes_manifest" "gateway" {
  count = local.checkpoints == null ? 0 : 1
  manifest = {
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = { name = local.gateway, namespace = kubernetes_namespace.gateway[0].metadata[0].name, labels = local.gateway_labels }
    spec = {
      replicas = 2
      selector = { matchLabels = local.gateway_labels }
      template = {
        metadata = { labels = merge(local.gateway_labels, { "azure.workload.identity/use" = "true" }) }
        spec = {
          serviceAccountName = local.gateway
          containers = [{
            name  = "s3proxy"
            image = local.gateway_image
            env   = local.gateway_env
            ports = [{ name = "s3", containerPort = 8080 }]
            readinessProbe = {
              tcpSocket = { port = "s3" }
            }
            resources = {
              requests = { cpu = "250m", memory = "512Mi" }
              limits   = { memory = "1Gi" }
            }
          }]
        }
      }
    }
  }
  depends_on = [kubernetes_manifest.gateway_keys, kubernetes_manifest.gateway_account, azurerm_federated_identity_credential.checkpoints, azurerm_role_assignment.checkpoints]
}

resource "kubernetes_manifest" "gateway_service" {
  count = local.checkpoints == null ? 0 : 1
  manifest = {
    apiVersion = "v1"
    kind       = "Service"
    metadata   = { name = local.gateway, namespace = kubernetes_namespace.gateway[0].metadata[0].name }
    spec = {
      selector = local.gateway_labels
      ports    = [{ name = "s3", port = 80, targetPort = "s3" }]
    }
  }
}

locals {
  checkpoint_access = local.checkpoints == null ? {} : {
    # Inside the cluster, the gateway's Service; the cloud block's
    # endpoint when jobs reach it another way.
    AWS_ENDPOINT_URL      = coalesce(try(local.checkpoints.endpoint, null), "http://${local.gateway}.${local.gateway_namespace}.svc.cluster.local")
    AWS_REGION            = local.checkpoint_region
    BUCKET                = azurerm_storage_container.checkpoints[0].name
    AWS_ACCESS_KEY_ID     = random_password.gateway_key[0].result
    AWS_SECRET_ACCESS_KEY = random_password.gateway_secret[0].result
    # Plain bodies with their SHA-256, what every S3 store takes, rather
    # than the SDKs' newer chunked uploads with a checksum trailer.
    AWS_REQUEST_CHECKSUM_CALCULATION = "WHEN_REQUIRED"
    AWS_RESPONSE_CHECKSUM_VALIDATION = "WHEN_REQUIRED"
  }
}
