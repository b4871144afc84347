# Checkpoints on EKS: an S3 bucket in the cluster's region, and a role for
# the queue namespaces' `strata-checkpoints` service accounts through EKS
# Pod Identity, so no key is kept anywhere: the Secret's key pair is empty
# and an S3 client's default chain gets the role's credentials from the
# pod identity agent. (Pod Identity rather than IRSA because IRSA's web
# identity exchange goes to STS, which the Secret's AWS_ENDPOINT_URL, an
# S3 endpoint, would redirect.)

locals {
  # The expansion always gives it, null for none.
  checkpoints = var.runtime == null ? null : var.runtime.checkpoints
  # S3 names are global: the region keeps each cluster's its own.
  checkpoint_bucket = try("${local.checkpoints.bucket}-${var.region}", null)
  checkpoint_namespaces = toset(local.checkpoints == null ? [] : flatten([
    for q in values(var.runtime.queues) : q.namespaces
  ]))
}

resource "aws_s3_bucket" "checkpoints" {
  count  = local.checkpoints == null ? 0 : 1
  bucket = local.checkpoint_bucket
  # Destroying the cluster stops at a bucket that holds checkpoints unless
  # the spec says they may go with it.
  force_destroy = try(local.checkpoints.force_destroy, false)
}

resource "aws_s3_bucket_versioning" "checkpoints" {
  count  = try(local.checkpoints.versioning, false) ? 1 : 0
  bucket = aws_s3_bucket.checkpoints[0].id
  versioning_configuration {
    status = "Enabled"
  }
}

# Old checkpoints go after `expire_after_days` (old versions as long after
# they were replaced), and so do uploads a crashed job left half done.
resource "aws_s3_bucket_lifecycle_configuration" "checkpoints" {
  count  = try(local.checkpoints.expire_after_days, null) == null ? 0 : 1
  bucket = aws_s3_bucket.checkpoints[0].id
  rule {
    id     = "expire-old-checkpoints"
    status = "Enabled"
    filter {}
    expiration {
      days = local.checkpoints.expire_after_days
    }
    dynamic "noncurrent_version_expiration" {
      for_each = try(local.checkpoints.versioning, false) ? [local.checkpoints.expire_after_days] : []
      content {
        noncurrent_days = noncurrent_version_expiration.value
      }
    }
    abort_incomplete_multipart_upload {
      days_after_initiation = min(7, local.checkpoints.expire_after_days)
    }
  }
  depends_on = [aws_s3_bucket_versioning.checkpoints]
}

resource "aws_eks_addon" "pod_identity" {
  count        = local.checkpoints == null ? 0 : 1
  cluster_name = aws_eks_cluster.this.name
  addon_name   = "eks-pod-identity-agent"
}

data "aws_iam_policy_document" "checkpoint_assume" {
  count = local.checkpoints == null ? 0 : 1
  statement {
    actions = ["sts:AssumeRole", "sts:TagSession"]
    principals {
      type        = "Service"
      identifiers = ["pods.eks.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "checkpoints" {
  count              = local.checkpoints == null ? 0 : 1
  name               = "${var.name}-checkpoints"
  assume_role_policy = data.aws_iam_policy_document.checkpoint_assume[0].json
}

# The bucket and nothing else: list it, read, write and delete its objects.
resource "aws_iam_role_policy" "checkpoints" {
  count = local.checkpoints == null ? 0 : 1
  name  = "checkpoints"
  role  = aws_iam_role.checkpoints[0].id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Effect   = "Allow"
        Action   = ["s3:ListBucket", "s3:GetBucketLocation", "s3:ListBucketMultipartUploads"]
        Resource = aws_s3_bucket.checkpoints[0].arn
      },
      {
        Effect   = "Allow"
        Action   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"]
        Resource = "${aws_s3_bucket.checkpoints[0].arn}/*"
      },
    ]
  })
}

resource "aws_eks_pod_identity_association" "checkpoints" {
  for_each        = local.checkpoint_namespaces
  cluster_name    = aws_eks_cluster.this.name
  namespace       = each.key
  service_account = module.runtime[0].checkpoint_account
  role_arn        = aws_iam_role.checkpoints[0].arn
  depends_on      = [aws_eks_addon.pod_identity, aws_iam_role_policy.checkpoints]
}

locals {
  checkpoint_access = local.checkpoints == null ? {} : {
    AWS_ENDPOINT_URL = coalesce(try(local.checkpoints.endpoint, null), "https://s3.${var.region}.amazonaws.com")
    AWS_REGION       = var.region
    BUCKET           = aws_s3_bucket.checkpoints[0].bucket
  }
}

output "checkpoints" {
  description = "Where this cluster's checkpoints go (null without a checkpoints block)."
  value = local.checkpoints == null ? null : {
    bucket = aws_s3_bucket.checkpoints[0].bucket
    role   = aws_iam_role.checkpoints[0].arn
  }
}
