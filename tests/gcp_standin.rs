//! The GCP driver against the GCP stand-in (`testing/standin`, the
//! documented REST wire format of Compute, Kubernetes Engine, IAM,
//! Resource Manager and Storage, in memory): no GCP endpoint can be
//! reached from here and no emulator of these APIs exists.
//!
//! A whole GPU cluster stack is applied, planned again (empty), changed in
//! place (a node label, the node count) and by replacement (the machine
//! type), through throttling and a capacity failure, and destroyed: the
//! stand-in holds nothing afterwards. Credentials come through Google's
//! `google-cloud-auth` (Application Default Credentials from a
//! `GOOGLE_APPLICATION_CREDENTIALS` file whose token endpoint is the
//! stand-in's) or `GOOGLE_OAUTH_ACCESS_TOKEN`.

mod common;

use std::path::{Path, PathBuf};
use strata_standin::gcp::{self, Gcp};

const PROJECT: &str = "acme-ml";

/// How strata finds its credentials in a test.
enum Creds {
    /// ADC: an authorized-user file whose token endpoint is the stand-in's.
    Adc(PathBuf),
    /// `GOOGLE_OAUTH_ACCESS_TOKEN`.
    Token(&'static str),
}

fn adc_file(dir: &Path, g: &Gcp, refresh_token: &str) -> PathBuf {
    let p = dir.join("adc.json");
    let body = serde_json::json!({
        "type": "authorized_user",
        "client_id": "standin-client.apps.googleusercontent.com",
        "client_secret": "standin-secret",
        "refresh_token": refresh_token,
        "token_uri": g.token_uri(),
    });
    std::fs::write(&p, body.to_string()).expect("adc file");
    p
}

fn strata(dir: &Path, g: &Gcp, creds: &Creds, args: &[&str]) -> (i32, String) {
    common::output(command(dir, g, creds, args))
}

fn command(dir: &Path, g: &Gcp, creds: &Creds, args: &[&str]) -> std::process::Command {
    let mut c = common::run::strata(dir);
    c.args(args)
        .env("GOOGLE_PROJECT", PROJECT)
        .env("GOOGLE_REGION", "us-central1")
        .env("GOOGLE_COMPUTE_CUSTOM_ENDPOINT", g.endpoint("compute"))
        .env("GOOGLE_CONTAINER_CUSTOM_ENDPOINT", g.endpoint("container"))
        .env("GOOGLE_IAM_CUSTOM_ENDPOINT", g.endpoint("iam"))
        .env("GOOGLE_RESOURCE_MANAGER_CUSTOM_ENDPOINT", g.endpoint("crm"))
        .env("GOOGLE_STORAGE_CUSTOM_ENDPOINT", g.endpoint("storage"))
        // Nothing of the machine's own gcloud set-up is looked at.
        .env("HOME", dir)
        .env("CLOUDSDK_CONFIG", dir.join("gcloud"))
        .env_remove("GOOGLE_CLOUD_QUOTA_PROJECT");
    match creds {
        Creds::Adc(p) => {
            c.env("GOOGLE_APPLICATION_CREDENTIALS", p)
                .env_remove("GOOGLE_OAUTH_ACCESS_TOKEN");
        }
        Creds::Token(t) => {
            c.env("GOOGLE_OAUTH_ACCESS_TOKEN", t)
                .env_remove("GOOGLE_APPLICATION_CREDENTIALS");
        }
    }
    c
}

const STACK: &str = r#"
variable "machine" {
  default = "a3-highgpu-8g"
}
variable "nodes" {
  default = 1
}
variable "workload" {
  default = "training"
}
variable "autoscale" {
  default = false
}

resource "google_compute_network" "vpc" {
  name                    = "gpu-vpc"
  auto_create_subnetworks = false
  routing_mode            = "REGIONAL"
}

resource "google_compute_subnetwork" "nodes" {
  name                     = "gpu-nodes"
  network                  = google_compute_network.vpc.id
  ip_cidr_range            = "10.40.0.0/20"
  private_ip_google_access = true
  secondary_ip_range {
    range_name    = "pods"
    ip_cidr_range = "10.44.0.0/14"
  }
  secondary_ip_range {
    range_name    = "services"
    ip_cidr_range = "10.48.0.0/20"
  }
}

resource "google_compute_router" "router" {
  name    = "gpu-router"
  network = google_compute_network.vpc.name
}

resource "google_compute_router_nat" "nat" {
  name                               = "gpu-nat"
  router                             = google_compute_router.router.name
  nat_ip_allocate_option             = "AUTO_ONLY"
  source_subnetwork_ip_ranges_to_nat = "ALL_SUBNETWORKS_ALL_IP_RANGES"
  log_config {
    enable = true
    filter = "ERRORS_ONLY"
  }
}

resource "google_compute_firewall" "internal" {
  name          = "gpu-internal"
  network       = google_compute_network.vpc.name
  source_ranges = ["10.40.0.0/16", "10.44.0.0/14"]
  allow {
    protocol = "tcp"
  }
  allow {
    protocol = "udp"
  }
  allow {
    protocol = "icmp"
  }
}

resource "google_service_account" "nodes" {
  account_id   = "gpu-nodes"
  display_name = "GPU nodes"
}

resource "google_project_iam_member" "nodes" {
  for_each = toset(["roles/logging.logWriter", "roles/monitoring.metricWriter", "roles/artifactregistry.reader"])
  project  = "acme-ml"
  role     = each.value
  member   = google_service_account.nodes.member
}

resource "google_container_cluster" "gke" {
  name                     = "train"
  location                 = "us-central1"
  network                  = google_compute_network.vpc.name
  subnetwork               = google_compute_subnetwork.nodes.name
  remove_default_node_pool = true
  initial_node_count       = 1
  deletion_protection      = false
  resource_labels          = { team = "ml" }

  ip_allocation_policy {
    cluster_secondary_range_name  = "pods"
    services_secondary_range_name = "services"
  }
  private_cluster_config {
    enable_private_nodes    = true
    enable_private_endpoint = false
    master_ipv4_cidr_block  = "172.16.0.0/28"
  }
  workload_identity_config {
    workload_pool = "acme-ml.svc.id.goog"
  }
  release_channel {
    channel = "REGULAR"
  }
}

resource "google_container_node_pool" "h100" {
  name       = "h100"
  cluster    = google_container_cluster.gke.id
  node_count = var.autoscale ? null : var.nodes

  dynamic "autoscaling" {
    for_each = var.autoscale ? [1] : []
    content {
      min_node_count = 0
      max_node_count = 4
    }
  }

  node_config {
    machine_type    = var.machine
    spot            = true
    service_account = google_service_account.nodes.email
    oauth_scopes    = ["https://www.googleapis.com/auth/cloud-platform"]
    labels          = { workload = var.workload }
    taint {
      key    = "nvidia.com/gpu"
      value  = "present"
      effect = "NO_SCHEDULE"
    }
    guest_accelerator {
      type  = "nvidia-h100-80gb"
      count = 8
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }
  }

  management {
    auto_repair  = true
    auto_upgrade = true
  }
}

resource "google_storage_bucket" "checkpoints" {
  name                        = "acme-ml-checkpoints"
  location                    = "us-central1"
  force_destroy               = true
  uniform_bucket_level_access = true
  labels                      = { team = "ml" }
  versioning {
    enabled = true
  }
}

output "endpoint" {
  value = google_container_cluster.gke.endpoint
}
"#;

const POOL: &str = "projects/acme-ml/locations/us-central1/clusters/train/nodePools/h100";

/// The stand-in's objects that are strata's (the project's first owner
/// binding was there before).
fn ours(g: &Gcp) -> Vec<String> {
    g.objects()
        .into_iter()
        .filter(|o| !o.ends_with("roles/owner/user:owner@example.com"))
        .collect()
}

#[test]
fn a_gpu_cluster_stack_applies_changes_survives_faults_and_destroys() {
    let g = gcp::start().expect("stand-in");
    let d = common::scratch("gcp", "stack");
    std::fs::write(d.join("main.tf"), STACK).expect("write");
    let creds = Creds::Adc(adc_file(&d, &g, gcp::REFRESH_TOKEN));

    let (code, out) = strata(&d, &g, &creds, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Apply complete! Resources: 12 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    assert!(out.contains("endpoint = \"34."), "{out}");
    let (code, out) = strata(&d, &g, &creds, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan must be empty:\n{out}");

    // What strata made is in GCP as configured.
    let pool = g.object(POOL).expect("the node pool");
    assert_eq!(pool["config"]["machineType"], "a3-highgpu-8g");
    assert_eq!(pool["config"]["accelerators"][0]["acceleratorCount"], "8");
    assert_eq!(
        pool["config"]["accelerators"][0]["gpuDriverInstallationConfig"]["gpuDriverVersion"],
        "LATEST"
    );
    assert_eq!(pool["config"]["taints"][0]["effect"], "NO_SCHEDULE");
    assert_eq!(
        pool["config"]["resourceLabels"]["strata-lineage"]
            .as_str()
            .map(str::len),
        Some(36)
    );
    let cluster = g
        .object("projects/acme-ml/locations/us-central1/clusters/train")
        .expect("the cluster");
    assert_eq!(cluster["ipAllocationPolicy"]["useIpAliases"], true);
    assert_eq!(cluster["resourceLabels"]["team"], "ml");
    assert!(
        g.object("projects/acme-ml/locations/us-central1/clusters/train/nodePools/default-pool")
            .is_none(),
        "remove_default_node_pool removed it"
    );
    let net = g
        .object("projects/acme-ml/global/networks/gpu-vpc")
        .expect("network");
    assert!(
        net["description"]
            .as_str()
            .is_some_and(|d| d.contains("google_compute_network.vpc")),
        "a network has no labels: its description carries the mark {net}"
    );
    let router = g
        .object("projects/acme-ml/regions/us-central1/routers/gpu-router")
        .expect("router");
    assert_eq!(router["nats"][0]["name"], "gpu-nat");
    assert!(g.objects().iter().any(|o| o.ends_with(
        "roles/monitoring.metricWriter/serviceAccount:gpu-nodes@acme-ml.iam.gserviceaccount.com"
    )));
    // Refresh lists each collection once rather than reading each object.
    let before = g.calls().len();
    let (code, out) = strata(&d, &g, &creds, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
    let calls = g.calls()[before..].to_vec();
    let policy_reads = calls
        .iter()
        .filter(|c| c.ends_with(":getIamPolicy"))
        .count();
    assert_eq!(
        policy_reads, 1,
        "one policy read for three members: {calls:#?}"
    );
    assert!(
        calls.len() <= 14,
        "{} calls to refresh 12 resources: {calls:#?}",
        calls.len()
    );

    // In place: a node label and the node count.
    let vars = ["--var", "workload=inference", "--var", "nodes=3"];
    let (code, out) = strata(
        &d,
        &g,
        &creds,
        &[&["apply", "--auto-approve"][..], &vars].concat(),
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 added, 1 changed, 0 destroyed"), "{out}");
    let pool = g.object(POOL).expect("pool");
    assert_eq!(pool["config"]["labels"]["workload"], "inference");
    let igm = g
        .objects()
        .into_iter()
        .find(|o| o.contains("instanceGroupManagers/gke-train-h100"))
        .and_then(|k| g.object(&k))
        .expect("the pool's instance group");
    assert_eq!(igm["targetSize"], 3);
    let (code, out) = strata(
        &d,
        &g,
        &creds,
        &[&["plan", "--detailed-exitcode"][..], &vars].concat(),
    );
    assert_eq!(code, 0, "{out}");

    // Throttled and failing calls are retried: 429 with Retry-After on the
    // network list, 503 on a node pool read.
    g.server.inject(common::fault(
        &["GET /compute/v1/projects/acme-ml/global/networks"],
        2,
        429,
        Some("1"),
        r#"{"error":{"code":429,"message":"Quota exceeded for quota metric 'Read requests'","status":"RESOURCE_EXHAUSTED","errors":[{"reason":"rateLimitExceeded","domain":"usageLimits","message":"Rate Limit Exceeded"}]}}"#,
    ));
    g.server.inject(common::fault(
        &["GET /container/v1/", "nodePools"],
        1,
        503,
        None,
        r#"{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE"}}"#,
    ));
    let (code, out) = strata(
        &d,
        &g,
        &creds,
        &[&["plan", "--detailed-exitcode"][..], &vars].concat(),
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(g.server.pending(), 0, "every injected fault was met");

    // Autoscaling switched on in place.
    let vars = [
        "--var",
        "workload=inference",
        "--var",
        "nodes=3",
        "--var",
        "autoscale=true",
    ];
    let run = |args: &[&str]| strata(&d, &g, &creds, &[args, &vars[..]].concat());
    let (code, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 added, 1 changed, 0 destroyed"), "{out}");
    let pool = g.object(POOL).expect("pool");
    assert_eq!(pool["autoscaling"]["enabled"], true, "{pool}");
    assert_eq!(pool["autoscaling"]["maxNodeCount"], 4, "{pool}");
    let (code, out) = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");

    // Replace: a new machine type; the first try meets a stockout.
    g.fail_next(
        "CREATE_NODE_POOL",
        "ZONE_RESOURCE_POOL_EXHAUSTED",
        "The zone 'projects/acme-ml/zones/us-central1-a' does not have enough resources available to fulfill the request.",
    );
    let vars = [
        "--var",
        "workload=inference",
        "--var",
        "nodes=3",
        "--var",
        "autoscale=true",
        "--var",
        "machine=a3-megagpu-8g",
    ];
    let run = |args: &[&str]| strata(&d, &g, &creds, &[args, &vars[..]].concat());
    common::replace_through_a_stockout(
        &run,
        "ZONE_RESOURCE_POOL_EXHAUSTED",
        "in zone us-central1-a",
    );
    assert_eq!(
        g.object(POOL).expect("pool")["config"]["machineType"],
        "a3-megagpu-8g"
    );
    assert_eq!(g.object(POOL).expect("pool")["status"], "RUNNING");

    // Destroy: the stand-in holds nothing of ours.
    g.put_object("acme-ml-checkpoints", "step-1000/model.safetensors");
    let (code, out) = strata(
        &d,
        &g,
        &creds,
        &[&["destroy", "--auto-approve"][..], &vars].concat(),
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("12 destroyed"), "{out}");
    assert_eq!(ours(&g), Vec::<String>::new());
}

#[test]
fn credentials_come_from_google_auth_and_refusals_name_their_source() {
    let g = gcp::start().expect("stand-in");
    let d = common::scratch("gcp", "creds");
    std::fs::write(
        d.join("main.tf"),
        r#"resource "google_storage_bucket" "b" {
  name     = "acme-creds-test"
  location = "US"
}"#,
    )
    .expect("write");

    // A static token (GOOGLE_OAUTH_ACCESS_TOKEN) works without ADC.
    let (code, out) = strata(
        &d,
        &g,
        &Creds::Token(gcp::STATIC_TOKEN),
        &["apply", "--auto-approve"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(g.object("b/acme-creds-test").is_some());

    // A refresh token the token endpoint refuses: the error names the
    // credential file, never the secret.
    let bad = Creds::Adc(adc_file(&d, &g, "revoked-refresh-token"));
    let (code, out) = strata(&d, &g, &bad, &["plan"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("GOOGLE_APPLICATION_CREDENTIALS"), "{out}");
    assert!(
        !out.contains("revoked-refresh-token"),
        "no secret in errors:\n{out}"
    );
    assert!(
        !out.contains("standin-secret"),
        "no secret in errors:\n{out}"
    );

    // A token the API refuses (401): the source is named.
    let (code, out) = strata(&d, &g, &Creds::Token("expired-token"), &["plan"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("UNAUTHENTICATED") || out.contains("authError"),
        "{out}"
    );
    assert!(out.contains("GOOGLE_OAUTH_ACCESS_TOKEN"), "{out}");

    let good = Creds::Adc(adc_file(&d, &g, gcp::REFRESH_TOKEN));
    let (code, out) = strata(&d, &g, &good, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(g.object("b/acme-creds-test").is_none());
}

/// A run that died after GCP made a subnetwork but before recording it
/// left an intent in the journal; the next run finds the subnetwork by the
/// mark in its description (one aggregated list across regions) and
/// adopts it instead of creating a second.
/// A node pool made by a run killed before it recorded it: the next
/// apply finds it by its labels and keeps it as it is. Its cluster, which
/// GKE gives as a path where the configuration may name it otherwise, is
/// the same cluster: no replacement (a pool replaced loses its nodes).
#[test]
fn an_unrecorded_node_pool_is_adopted_not_replaced() {
    let g = gcp::start().expect("stand-in");
    let d = common::scratch("gcp", "recover-pool");
    // The pool names its cluster as the cloud modules do: by name.
    let by_name = STACK.replace(
        "cluster    = google_container_cluster.gke.id",
        "cluster    = google_container_cluster.gke.name\n  location   = \"us-central1\"",
    );
    assert_ne!(by_name, STACK);
    std::fs::write(d.join("main.tf"), by_name).expect("write");
    let creds = Creds::Token(gcp::STATIC_TOKEN);
    let (code, out) = strata(&d, &g, &creds, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    // The run that made the pool died before recording it: the state
    // lacks it, the journal has its intent.
    let (code, out) = strata(
        &d,
        &g,
        &creds,
        &["state", "rm", "google_container_node_pool.h100"],
    );
    assert_eq!(code, 0, "{out}");
    std::fs::write(
        d.join("terraform.tfstate.journal"),
        "{\"seq\":1,\"kind\":\"intent\",\"address\":\"google_container_node_pool.h100\",\"action\":\"create\"}\n",
    )
    .expect("journal");
    let (code, out) = strata(&d, &g, &creds, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("1 objects created but not recorded were adopted"),
        "{out}"
    );
    assert!(!out.contains("must be replaced"), "{out}");
    assert!(out.contains("0 destroyed"), "{out}");
    assert!(g.object(POOL).is_some(), "the pool is still there");
    let (code, out) = strata(&d, &g, &creds, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "adopted as it is:\n{out}");
}

/// An apply killed after Cloud Storage made an HMAC key and before the
/// state recorded it. The key carries no labels and its secret was given
/// once, to the run that died, so it can be neither found by tags nor
/// adopted: the next apply finds it by the service account and time its
/// create journalled, deletes it, and makes one it records. Left alone,
/// every such kill would leave an active key that signs requests (and a
/// service account holds ten at most).
#[test]
fn an_hmac_key_made_by_a_killed_apply_is_deleted_not_left_active() {
    let g = gcp::start().expect("stand-in");
    let d = common::scratch("gcp", "recover-hmac");
    let creds = Creds::Token(gcp::STATIC_TOKEN);
    let config = r#"
resource "google_service_account" "gateway" {
  account_id = "ckpt-gateway"
}

resource "google_storage_hmac_key" "gateway" {
  service_account_email = google_service_account.gateway.email
}
"#;
    std::fs::write(d.join("main.tf"), config).expect("write");
    let keys = || -> Vec<String> {
        let all = g.objects();
        all.into_iter().filter(|o| o.starts_with("hmac/")).collect()
    };
    g.hold_answers("POST /storage/v1/projects/acme-ml/hmacKeys");
    let mut apply = command(&d, &g, &creds, &["apply", "--auto-approve"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("strata starts");
    let started = std::time::Instant::now();
    while keys().is_empty() && started.elapsed() < std::time::Duration::from_secs(120) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    apply.kill().expect("SIGKILL");
    let _ = apply.wait();
    g.release_answers();
    let orphan = keys();
    assert_eq!(orphan.len(), 1, "the create reached the stand-in");
    let journal = std::fs::read_to_string(d.join("terraform.tfstate.journal")).expect("journal");
    assert!(
        journal.contains("\"trace\"") && journal.contains("ckpt-gateway@acme-ml"),
        "the intent carries the key's trace:\n{journal}"
    );

    let (code, out) = strata(&d, &g, &creds, &["plan"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("will be checked by the next apply"), "{out}");
    assert_eq!(keys(), orphan, "a plan deletes nothing");

    let (code, out) = strata(&d, &g, &creds, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let access = orphan[0].rsplit('/').next().expect("access id");
    assert!(
        out.contains(&format!(
            "Deleted google_storage_hmac_key.gateway projects/acme-ml/hmacKeys/{access}"
        )),
        "{out}"
    );
    let now = keys();
    assert_eq!(now.len(), 1, "one key, the recorded one: {now:?}");
    assert_ne!(now, orphan);
    let state = std::fs::read_to_string(d.join("terraform.tfstate")).expect("state");
    let recorded = now[0].rsplit('/').next().expect("access id");
    assert!(state.contains(recorded), "{state}");
    let (code, out) = strata(&d, &g, &creds, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn an_unrecorded_subnetwork_is_adopted_after_a_crash() {
    let g = gcp::start().expect("stand-in");
    let d = common::scratch("gcp", "recover");
    let creds = Creds::Token(gcp::STATIC_TOKEN);
    let network = r#"
resource "google_compute_network" "vpc" {
  name                    = "gpu-vpc"
  auto_create_subnetworks = false
}
"#;
    std::fs::write(d.join("main.tf"), network).expect("write");
    let (code, out) = strata(&d, &g, &creds, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("terraform.tfstate")).expect("state"))
            .expect("state json");
    let lineage = state["lineage"].as_str().expect("lineage").to_string();

    // What GCP holds after the dead run, and what its journal says.
    let path = "projects/acme-ml/regions/europe-west4/subnetworks/gpu-nodes";
    g.put(
        path,
        serde_json::json!({
            "kind": "compute#subnetwork",
            "id": "4242",
            "name": "gpu-nodes",
            "description": format!("Managed by strata: google_compute_subnetwork.nodes (lineage {lineage})"),
            "network": "https://www.googleapis.com/compute/v1/projects/acme-ml/global/networks/gpu-vpc",
            "ipCidrRange": "10.40.0.0/20",
            "region": "https://www.googleapis.com/compute/v1/projects/acme-ml/regions/europe-west4",
            "privateIpGoogleAccess": false,
            "gatewayAddress": "10.40.0.1",
            "fingerprint": "abc",
            "selfLink": format!("https://www.googleapis.com/compute/v1/{path}"),
        }),
    );
    std::fs::write(
        d.join("terraform.tfstate.journal"),
        "{\"seq\":1,\"kind\":\"intent\",\"address\":\"google_compute_subnetwork.nodes\",\"action\":\"create\"}\n",
    )
    .expect("journal");
    std::fs::write(
        d.join("main.tf"),
        format!(
            "{network}
resource \"google_compute_subnetwork\" \"nodes\" {{
  name          = \"gpu-nodes\"
  region        = \"europe-west4\"
  network       = google_compute_network.vpc.self_link
  ip_cidr_range = \"10.40.0.0/20\"
}}
"
        ),
    )
    .expect("write");
    let (code, out) = strata(&d, &g, &creds, &["plan"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("will be checked by the next apply"), "{out}");
    let (code, out) = strata(&d, &g, &creds, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("1 objects created but not recorded were adopted"),
        "{out}"
    );
    assert!(
        out.contains("No changes."),
        "nothing left to create:\n{out}"
    );
    let subnets: Vec<String> = g
        .objects()
        .into_iter()
        .filter(|o| o.contains("/subnetworks/"))
        .collect();
    assert_eq!(subnets, vec![path.to_string()], "no second subnetwork");
    let (code, out) = strata(&d, &g, &creds, &["plan", "--detailed-exitcode"]);
    assert_eq!(
        code, 0,
        "the adopted subnetwork is the configured one:\n{out}"
    );
    let (code, out) = strata(&d, &g, &creds, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(g.objects(), Vec::<String>::new());
}

/// The whole stack through throttling, 5xx, resets and slow answers at the
/// rates of `tests/faults.rs`: it applies, plans nothing more, and is
/// destroyed with nothing of strata's left.
#[test]
fn the_stack_converges_through_faults() {
    let g = gcp::start().expect("stand-in");
    let d = common::scratch("gcp", "faults");
    std::fs::write(d.join("main.tf"), STACK).expect("write");
    let creds = Creds::Adc(adc_file(&d, &g, gcp::REFRESH_TOKEN));
    g.server.faults(Some(common::faults()));
    let (code, out) = strata(&d, &g, &creds, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("12 added"), "{out}");
    let (code, out) = strata(&d, &g, &creds, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = strata(&d, &g, &creds, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(ours(&g), Vec::<String>::new());
    common::assert_faults_struck(&g.server.counts);
}

/// GKE runs one operation at a time on a cluster ("Cluster is running
/// incompatible operation"). Three pools on each of two clusters: the
/// apply starts a cluster's pool operations one after another, never
/// meeting the refusal, while the two clusters proceed side by side; the
/// destroy likewise.
#[test]
fn a_clusters_pool_operations_take_turns_while_clusters_run_together() {
    let g = gcp::start().expect("stand-in");
    let d = common::scratch("gcp", "pool-turns");
    std::fs::write(
        d.join("main.tf"),
        r#"
resource "google_compute_network" "vpc" {
  name                    = "vpc"
  auto_create_subnetworks = false
}

resource "google_compute_subnetwork" "nodes" {
  name          = "nodes"
  network       = google_compute_network.vpc.id
  ip_cidr_range = "10.40.0.0/20"
}

resource "google_container_cluster" "c" {
  for_each                 = toset(["one", "two"])
  name                     = each.key
  location                 = "us-central1"
  network                  = google_compute_network.vpc.name
  subnetwork               = google_compute_subnetwork.nodes.name
  remove_default_node_pool = true
  initial_node_count       = 1
  deletion_protection      = false
}

resource "google_container_node_pool" "p" {
  for_each   = { for x in setproduct(["one", "two"], ["a", "b", "c"]) : "${x[0]}-${x[1]}" => x }
  name       = each.value[1]
  cluster    = google_container_cluster.c[each.value[0]].id
  node_count = 1
  node_config {
    machine_type = "e2-standard-4"
  }
}
"#,
    )
    .expect("write");
    let creds = Creds::Token(gcp::STATIC_TOKEN);
    let (code, out) = strata(&d, &g, &creds, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert_turns(&g.cluster_operations(), "CREATE_NODE_POOL", 6);
    // The apply itself waits: a cluster's next pool is not even begun
    // until the one before is done (the driver's own lock per cluster
    // would keep GKE from refusing, but the pool would hold a place of
    // -parallelism and show as in progress meanwhile).
    for cluster in ["one", "two"] {
        let prefix = format!("google_container_node_pool.p[\"{cluster}-");
        common::one_at_a_time(&out, &prefix, ("Creating...", "Creation complete"), 3);
    }
    let (code, out) = strata(&d, &g, &creds, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    // Six pools, and the default pool each cluster's create removed.
    assert_turns(&g.cluster_operations(), "DELETE_NODE_POOL", 8);
    assert_eq!(g.refused_while_busy(), 0, "GKE refused an operation");
}

/// `count` operations of `kind`, one cluster's never overlapping, and
/// some of the two clusters' overlapping.
fn assert_turns(ops: &[gcp::ClusterOperation], kind: &str, count: usize) {
    let ops: Vec<_> = ops.iter().filter(|o| o.kind == kind).collect();
    assert_eq!(ops.len(), count, "{ops:?}");
    let overlap = |a: &gcp::ClusterOperation, b: &gcp::ClusterOperation| {
        let (Some(ae), Some(be)) = (a.ended, b.ended) else {
            return true;
        };
        a.began < be && b.began < ae
    };
    let mut across = false;
    for (i, a) in ops.iter().enumerate() {
        for b in &ops[i + 1..] {
            match a.cluster == b.cluster {
                true => assert!(
                    !overlap(a, b),
                    "{kind} overlapped on {}: {a:?} {b:?}",
                    a.cluster
                ),
                false => across |= overlap(a, b),
            }
        }
    }
    assert!(
        across,
        "the two clusters' {kind} operations never ran together: {ops:?}"
    );
}
