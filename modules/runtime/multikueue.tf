# MultiKueue: one manager cluster takes the jobs and dispatches each to a
# worker cluster, trying the workers in the order the manager lists them.
#
# A worker gives the manager a restricted service account (Kueue's own
# verbs: the job kinds it dispatches and their workloads) and a long-lived
# token for it, rotated once older than `rotate_after_minutes`: the new
# token Secret is made first, the manager's kubeconfig Secret moves to it,
# and only then is the old one deleted (create_before_destroy), so the
# manager always holds a token that works.
#
# The manager keeps one kubeconfig Secret per worker, built from that
# token and the worker's CA data alone: Kueue refuses kubeconfigs with exec
# plugins, token files, CA file paths or TLS checks skipped, so the cloud
# kubeconfigs (aws eks get-token, gke-gcloud-auth-plugin) cannot be used.

variable "multikueue" {
  type = object({
    # "worker" or "manager".
    role = string
    # A worker: where the manager reaches its API server, and how old its
    # token may grow.
    endpoint             = optional(string)
    rotate_after_minutes = optional(number, 43200)
    # The manager: its workers' MultiKueueCluster names in dispatch order
    # and each one's queue quotas (queue → pool → GPUs).
    workers = optional(list(string), [])
    quotas  = optional(map(map(map(number))), {})
  })
  default     = null
  description = "This cluster's part in MultiKueue; null: none."
}

# Apart from the rest: what is derived from a sensitive value is sensitive,
# and the manager's objects are counted from the rest.
variable "kubeconfigs" {
  type        = map(string)
  default     = {}
  sensitive   = true
  description = "The manager's way into each worker, by worker name."
}

locals {
  worker  = try(var.multikueue.role == "worker", false)
  manager = try(var.multikueue.role == "manager", false)
  # The service account the manager acts as on a worker.
  dispatcher = "strata-multikueue"
  # What Kueue's MultiKueue needs on a worker (its documented role): make,
  # watch and delete the jobs it dispatches and their workloads.
  dispatched = [
    ["batch", ["jobs"]],
    ["", ["pods"]],
    ["apps", ["statefulsets"]],
    ["jobset.x-k8s.io", ["jobsets"]],
    ["leaderworkerset.x-k8s.io", ["leaderworkersets"]],
    ["kubeflow.org", ["tfjobs", "paddlejobs", "pytorchjobs", "xgboostjobs", "mpijobs"]],
    ["ray.io", ["rayjobs", "rayservices"]],
    ["workload.codeflare.dev", ["appwrappers"]],
  ]
  verbs = ["create", "delete", "get", "list", "watch"]
  dispatcher_rules = concat(
    flatten([for d in local.dispatched : [
      { apiGroups = [d[0]], resources = d[1], verbs = local.verbs },
      { apiGroups = [d[0]], resources = [for r in d[1] : "${r}/status"], verbs = ["get"] },
    ]]),
    [
      # A RayCluster a RayJob made is updated as the job runs.
      { apiGroups = ["ray.io"], resources = ["rayclusters"], verbs = concat(local.verbs, ["update", "patch"]) },
      { apiGroups = ["ray.io"], resources = ["rayclusters/status"], verbs = ["get"] },
      { apiGroups = ["kueue.x-k8s.io"], resources = ["workloads"], verbs = concat(local.verbs, ["update", "patch"]) },
      { apiGroups = ["kueue.x-k8s.io"], resources = ["workloads/status"], verbs = ["get", "patch", "update"] },
      { apiGroups = ["kueue.x-k8s.io"], resources = ["clusterqueues", "localqueues"], verbs = ["get", "list", "watch"] },
    ],
  )
}

# --- a worker --------------------------------------------------------------

resource "kubernetes_manifest" "dispatcher" {
  count = local.worker ? 1 : 0
  manifest = {
    apiVersion = "v1"
    kind       = "ServiceAccount"
    metadata   = { name = local.dispatcher, namespace = helm_release.kueue.namespace }
  }
  lifecycle {
    precondition {
      condition     = var.multikueue.endpoint != null
      error_message = "The MultiKueue manager cannot reach this cluster: give its API server's URL (host in the cloud block), or a kubeconfig whose context names it."
    }
  }
}

resource "kubernetes_manifest" "dispatcher_role" {
  count = local.worker ? 1 : 0
  manifest = {
    apiVersion = "rbac.authorization.k8s.io/v1"
    kind       = "ClusterRole"
    metadata   = { name = local.dispatcher }
    rules      = local.dispatcher_rules
  }
}

resource "kubernetes_manifest" "dispatcher_binding" {
  count = local.worker ? 1 : 0
  manifest = {
    apiVersion = "rbac.authorization.k8s.io/v1"
    kind       = "ClusterRoleBinding"
    metadata   = { name = local.dispatcher }
    roleRef    = { apiGroup = "rbac.authorization.k8s.io", kind = "ClusterRole", name = kubernetes_manifest.dispatcher_role[0].manifest.metadata.name }
    subjects   = [{ kind = "ServiceAccount", name = kubernetes_manifest.dispatcher[0].manifest.metadata.name, namespace = helm_release.kueue.namespace }]
  }
}

# Made again once `rotate_after_minutes` have passed: a new token.
resource "time_rotating" "dispatcher_token" {
  count            = local.worker ? 1 : 0
  rotation_minutes = var.multikueue.rotate_after_minutes
}

# A long-lived token for the service account, which the cluster's token
# controller fills in; named after when it was made, so a rotation is a
# new Secret beside the old one.
resource "kubernetes_manifest" "dispatcher_token" {
  count = local.worker ? 1 : 0
  manifest = {
    apiVersion = "v1"
    kind       = "Secret"
    type       = "kubernetes.io/service-account-token"
    metadata = {
      name        = "${local.dispatcher}-${time_rotating.dispatcher_token[0].unix}"
      namespace   = helm_release.kueue.namespace
      annotations = { "kubernetes.io/service-account.name" = kubernetes_manifest.dispatcher[0].manifest.metadata.name }
    }
  }
  wait {
    fields = { "data.token" = ".+" }
  }
  lifecycle {
    create_before_destroy = true
  }
  depends_on = [kubernetes_manifest.dispatcher_binding]
}

output "dispatch_kubeconfig" {
  description = "How a MultiKueue manager reaches this worker: its endpoint, CA data and the dispatcher's token, nothing Kueue refuses."
  sensitive   = true
  value = local.worker ? yamlencode({
    apiVersion = "v1"
    kind       = "Config"
    clusters = [{ name = "worker", cluster = {
      server                     = var.multikueue.endpoint
      certificate-authority-data = kubernetes_manifest.dispatcher_token[0].object.data["ca.crt"]
    } }]
    users             = [{ name = local.dispatcher, user = { token = base64decode(kubernetes_manifest.dispatcher_token[0].object.data.token) } }]
    contexts          = [{ name = "worker", context = { cluster = "worker", user = local.dispatcher } }]
    "current-context" = "worker"
  }) : null
}

# --- the manager -----------------------------------------------------------

resource "kubernetes_manifest" "worker_kubeconfig" {
  for_each = toset(local.manager ? var.multikueue.workers : [])
  manifest = {
    apiVersion = "v1"
    kind       = "Secret"
    metadata   = { name = "multikueue-${each.key}", namespace = helm_release.kueue.namespace }
    data       = { kubeconfig = base64encode(var.kubeconfigs[each.key]) }
  }
}

resource "kubernetes_manifest" "worker" {
  for_each = toset(local.manager ? var.multikueue.workers : [])
  manifest = {
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "MultiKueueCluster"
    metadata   = { name = each.key }
    spec = {
      clusterSource = { kubeConfig = { locationType = "Secret", location = kubernetes_manifest.worker_kubeconfig[each.key].manifest.metadata.name } }
    }
  }
}

# The workers in dispatch order: Kueue tries them one after another.
resource "kubernetes_manifest" "dispatch" {
  count = local.manager ? 1 : 0
  manifest = {
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "MultiKueueConfig"
    metadata   = { name = "strata" }
    spec       = { clusters = [for w in var.multikueue.workers : kubernetes_manifest.worker[w].manifest.metadata.name] }
  }
}

resource "kubernetes_manifest" "admission_check" {
  count = local.manager ? 1 : 0
  manifest = {
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "AdmissionCheck"
    metadata   = { name = "multikueue" }
    spec = {
      controllerName = "kueue.x-k8s.io/multikueue"
      parameters     = { apiGroup = "kueue.x-k8s.io", kind = "MultiKueueConfig", name = kubernetes_manifest.dispatch[0].manifest.metadata.name }
    }
  }
}
