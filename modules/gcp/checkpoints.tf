# Checkpoints on GKE: a Cloud Storage bucket in the cluster's region, read
# and written through Cloud Storage's XML API, which S3 clients speak,
# with an HMAC key of the node service account (GKE's workload identity
# gives OAuth tokens, which S3 clients cannot sign with). The account may
# use the bucket's objects and nothing else of it.

locals {
  # The expansion always gives it, null for none.
  checkpoints = var.runtime == null ? null : var.runtime.checkpoints
  # Bucket names are global: the region keeps each cluster's its own.
  checkpoint_bucket = try("${local.checkpoints.bucket}-${var.region}", null)
  checkpoint_days   = try(local.checkpoints.expire_after_days, null)
  # Old checkpoints, old versions and half-done uploads, as on every cloud.
  checkpoint_rules = local.checkpoint_days == null ? [] : concat(
    [{ action = "Delete", condition = { age = local.checkpoint_days, with_state = "LIVE" } }],
    try(local.checkpoints.versioning, false) ? [{ action = "Delete", condition = { days_since_noncurrent_time = local.checkpoint_days, with_state = "ARCHIVED" } }] : [],
    [{ action = "AbortIncompleteMultipartUpload", condition = { age = min(7, local.checkpoint_days), with_state = "ANY" } }],
  )
}

resource "google_storage_bucket" "checkpoints" {
  count                       = local.checkpoints == null ? 0 : 1
  project                     = var.project
  name                        = local.checkpoint_bucket
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  # Destroying the cluster stops at a bucket that holds checkpoints unless
  # the spec says they may go with it.
  force_destroy = try(local.checkpoints.force_destroy, false)
  versioning {
    enabled = try(local.checkpoints.versioning, false)
  }
  dynamic "lifecycle_rule" {
    for_each = local.checkpoint_rules
    content {
      action {
        type = lifecycle_rule.value.action
      }
      condition {
        age                        = try(lifecycle_rule.value.condition.age, null)
        days_since_noncurrent_time = try(lifecycle_rule.value.condition.days_since_noncurrent_time, null)
        with_state                 = lifecycle_rule.value.condition.with_state
      }
    }
  }
}

resource "google_storage_bucket_iam_member" "checkpoints" {
  count  = local.checkpoints == null ? 0 : 1
  bucket = google_storage_bucket.checkpoints[0].name
  role   = "roles/storage.objectUser"
  member = "serviceAccount:${google_service_account.node.email}"
}

resource "google_storage_hmac_key" "checkpoints" {
  count                 = local.checkpoints == null ? 0 : 1
  project               = var.project
  service_account_email = google_service_account.node.email
}

locals {
  checkpoint_access = local.checkpoints == null ? {} : {
    AWS_ENDPOINT_URL      = coalesce(try(local.checkpoints.endpoint, null), "https://storage.googleapis.com")
    AWS_REGION            = var.region
    BUCKET                = google_storage_bucket.checkpoints[0].name
    AWS_ACCESS_KEY_ID     = google_storage_hmac_key.checkpoints[0].access_id
    AWS_SECRET_ACCESS_KEY = google_storage_hmac_key.checkpoints[0].secret
    # The XML API refuses the SDKs' default integrity protocol (a CRC as
    # the trailer of a chunked upload); checksums only where an operation
    # requires them.
    AWS_REQUEST_CHECKSUM_CALCULATION = "WHEN_REQUIRED"
    AWS_RESPONSE_CHECKSUM_VALIDATION = "WHEN_REQUIRED"
  }
}

output "checkpoints" {
  description = "Where this cluster's checkpoints go (null without a checkpoints block)."
  value = local.checkpoints == null ? null : {
    bucket = google_storage_bucket.checkpoints[0].name
    key    = google_storage_hmac_key.checkpoints[0].access_id
  }
}
