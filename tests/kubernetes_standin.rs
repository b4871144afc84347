//! The kubernetes and helm drivers against the Kubernetes stand-in
//! (`testing/standin`: an API server in memory over HTTPS, with discovery,
//! server-side apply, managed fields and conflicts, CRDs) and the
//! stand-in `helm` (`testing/standin/helm/helm`, which keeps release
//! records as Helm 3 does). No real API server or helm can run here.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use strata_standin::kubernetes::{self, Kube};

fn standin_helm_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testing/standin/helm")
}

/// Runs strata in `dir`, the stand-in helm first on PATH (or no helm at
/// all when `helm` is false).
fn strata(dir: &Path, helm: bool, args: &[&str]) -> (i32, String) {
    common::output(command(dir, helm, args))
}

fn command(dir: &Path, helm: bool, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
    let path = if helm {
        format!(
            "{}:{}",
            standin_helm_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        )
    } else {
        dir.join("no-helm-here").display().to_string()
    };
    c.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .env("PATH", path)
        .env("STANDIN_HELM_LOG", dir.join("helm.log"))
        .env_remove("KUBE_CONFIG_PATH")
        .env_remove("KUBE_HOST")
        .env_remove("KUBE_TOKEN")
        .env_remove("KUBE_CTX");
    c
}

const STACK: &str = r#"
variable "operator_version" {
  default = "v25.3.1"
}

variable "driver_version" {
  default = "570.124.06"
}

provider "kubernetes" {
  config_path    = "kubeconfig.json"
  config_context = "gpu"
}

provider "helm" {
  kubernetes {
    config_path    = "kubeconfig.json"
    config_context = "gpu"
  }
}

resource "kubernetes_namespace" "gpu" {
  metadata {
    name   = "gpu-operator"
    labels = { "pod-security.kubernetes.io/enforce" = "privileged" }
  }
}

resource "kubernetes_labels" "node" {
  api_version = "v1"
  kind        = "Node"
  metadata {
    name = "gpu-node-0"
  }
  labels = { "strata.dev/pool" = "h100" }
}

resource "kubernetes_manifest" "settings" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {
      name      = "gpu-settings"
      namespace = kubernetes_namespace.gpu.metadata[0].name
    }
    data = { mig = "single" }
  }
}

resource "helm_release" "gpu_operator" {
  name       = "gpu-operator"
  chart      = "gpu-operator"
  repository = "https://helm.ngc.nvidia.com/nvidia"
  version    = var.operator_version
  namespace  = kubernetes_namespace.gpu.metadata[0].name
  values = {
    driver  = { enabled = true, version = var.driver_version }
    toolkit = { enabled = true }
    mig     = { strategy = "single" }
  }
}

output "revision" {
  value = helm_release.gpu_operator.metadata[0].revision
}
"#;

/// A value changed by hand, as an operator would with helm.
fn helm_by_hand(kubeconfig: &Path, set: &str) {
    let st = Command::new(standin_helm_dir().join("helm"))
        .args(["upgrade", "gpu-operator", "nvidia/gpu-operator"])
        .args(["-n", "gpu-operator", "--reuse-values", "--set", set])
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .stdout(Stdio::null())
        .status()
        .expect("stand-in helm");
    assert!(st.success());
}

fn setup(tag: &str) -> (Kube, PathBuf) {
    let k = kubernetes::start().expect("stand-in cluster");
    let dir = common::scratch("kubernetes", tag);
    std::fs::write(dir.join("main.tf"), STACK).expect("config");
    std::fs::write(dir.join("kubeconfig.json"), k.kubeconfig("gpu").to_string()).expect("kc");
    (k, dir)
}

#[test]
fn a_gpu_operator_stack_applies_reads_back_and_shows_drift() {
    let (k, dir) = setup("stack");
    let run = |args: &[&str]| strata(&dir, true, args);

    let (status, out) = run(&["plan"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("4 to add, 0 to change, 0 to destroy"), "{out}");

    let (status, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("revision = 1"), "{out}");

    // Everything is on the cluster, applied by field manager strata.
    let ns = k.get("/api/v1/namespaces/gpu-operator").expect("namespace");
    assert_eq!(ns["metadata"]["managedFields"][0]["manager"], "strata");
    let node = k.get("/api/v1/nodes/gpu-node-0").expect("node");
    assert_eq!(node["metadata"]["labels"]["strata.dev/pool"], "h100");
    assert_eq!(node["metadata"]["labels"]["kubernetes.io/os"], "linux");
    let cm = k
        .get("/api/v1/namespaces/gpu-operator/configmaps/gpu-settings")
        .expect("configmap");
    assert_eq!(cm["data"]["mig"], "single");
    let policy = k
        .get("/apis/nvidia.com/v1/clusterpolicies/cluster-policy")
        .expect("the chart's ClusterPolicy");
    assert_eq!(policy["spec"]["driver"]["version"], "570.124.06");
    let log = std::fs::read_to_string(dir.join("helm.log")).expect("helm ran");
    assert!(
        log.contains("\"--install\"") && log.contains("\"--version\", \"v25.3.1\""),
        "{log}"
    );

    // Nothing changed: a plan is empty, and reading needs no helm.
    let (status, out) = strata(&dir, false, &["plan", "--detailed-exitcode"]);
    assert_eq!(status, 0, "{out}");

    // Another manager changes strata's fields: drift on each.
    k.edit(
        "/api/v1/namespaces/gpu-operator/configmaps/gpu-settings",
        "kubectl-edit",
        serde_json::json!({"data": {"mig": "mixed", "extra": "kept"}}),
    )
    .expect("edit");
    k.edit(
        "/api/v1/nodes/gpu-node-0",
        "kubectl-label",
        serde_json::json!({"metadata": {"labels": {"strata.dev/pool": "a100", "other": "x"}}}),
    )
    .expect("label");
    let (status, out) = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(status, 2, "{out}");
    assert!(out.contains("2 to change"), "{out}");
    assert!(out.contains("\"mixed\" -> \"single\""), "{out}");
    assert!(out.contains("\"a100\" -> \"h100\""), "{out}");
    // Fields strata does not set are not its business.
    let manifest_diff = out
        .split("~ manifest")
        .nth(1)
        .and_then(|rest| rest.split("~ object").next())
        .expect("a manifest diff");
    assert!(!manifest_diff.contains("extra"), "{out}");
    assert!(!out.contains("\"other\""), "{out}");

    // Taking them back collides with the other managers, clearly.
    let (status, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("conflict with \"kubectl-edit\": .data.mig"),
        "{out}"
    );
    assert!(out.contains("force_conflicts = true"), "{out}");

    // With force, strata takes its fields back and leaves the rest.
    let forced = STACK
        .replace(
            "    data = { mig = \"single\" }\n  }\n",
            "    data = { mig = \"single\" }\n  }\n  field_manager {\n    force_conflicts = true\n  }\n",
        )
        .replace(
            "  labels = { \"strata.dev/pool\" = \"h100\" }\n",
            "  labels = { \"strata.dev/pool\" = \"h100\" }\n  force  = true\n",
        );
    std::fs::write(dir.join("main.tf"), forced).expect("config");
    let (status, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    let cm = k
        .get("/api/v1/namespaces/gpu-operator/configmaps/gpu-settings")
        .expect("configmap");
    assert_eq!(cm["data"]["mig"], "single");
    assert_eq!(cm["data"]["extra"], "kept");
    let (status, out) = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(status, 0, "{out}");

    // A value changed by hand with helm is drift too.
    helm_by_hand(&dir.join("kubeconfig.json"), "driver.version=550.90.07");
    let (status, out) = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(status, 2, "{out}");
    assert!(out.contains("\"550.90.07\" -> \"570.124.06\""), "{out}");

    // Installing needs helm: without it, a clear error naming it.
    let (status, out) = strata(&dir, false, &["apply", "--auto-approve"]);
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("needs the `helm` binary"), "{out}");

    let (status, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("revision = 3"), "{out}");

    // A version bump is an update of the release, nothing else.
    let (status, out) = run(&["plan", "--var", "operator_version=v25.3.2"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("0 to add, 1 to change, 0 to destroy"), "{out}");
    assert!(out.contains("\"v25.3.1\" -> \"v25.3.2\""), "{out}");

    let (status, out) = run(&["destroy", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    assert!(k.get("/api/v1/namespaces/gpu-operator").is_none());
    let node = k.get("/api/v1/nodes/gpu-node-0").expect("node");
    assert!(
        node["metadata"]["labels"].get("strata.dev/pool").is_none(),
        "{node}"
    );
    assert_eq!(node["metadata"]["labels"]["other"], "x");
    assert!(k.all("secrets").is_empty(), "{:?}", k.all("secrets"));
}

/// `values` as the official helm provider takes them, a list of documents
/// (here JSON, which the stand-in helm reads): each a values file, later
/// ones winning; the release read back plans no changes; a value changed
/// with helm by hand is drift. The chart comes from a private OCI
/// registry: given to helm by its full reference (helm's `--repo` takes no
/// OCI URL), after a `helm registry login` that reads the password on its
/// standard input, never on a command line.
#[test]
fn helm_values_as_a_list_of_documents_and_an_oci_chart() {
    let (k, dir) = setup("values-list");
    let config = r#"
provider "helm" {
  kubernetes {
    config_path    = "kubeconfig.json"
    config_context = "gpu"
  }
}

resource "helm_release" "gpu_operator" {
  name             = "gpu-operator"
  chart            = "gpu-operator"
  repository       = "oci://registry.strata.test/nvidia"
  namespace        = "gpu-operator"
  create_namespace = true

  repository_username = "robot"
  repository_password = var.registry_password
  values = [
    jsonencode({ driver = { enabled = true, version = "570.124.06" }, mig = { strategy = "single" } }),
    jsonencode({ driver = { version = "575.51.03" } }),
  ]
}
"#;
    let with_password = |password: &str| {
        let variable =
            format!("variable \"registry_password\" {{\n  default = \"{password}\"\n}}\n");
        std::fs::write(dir.join("main.tf"), format!("{variable}{config}")).expect("config");
        let mut c = command(&dir, true, &["apply", "--auto-approve"]);
        c.env("STANDIN_HELM_REGISTRY", "registry.strata.test=robot:s3cret");
        common::output(c)
    };
    let (status, out) = with_password("wrong");
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("401 Unauthorized"), "{out}");
    let (status, out) = with_password("s3cret");
    assert_eq!(status, 0, "{out}");
    let policy = k
        .get("/apis/nvidia.com/v1/clusterpolicies/cluster-policy")
        .expect("the chart's ClusterPolicy");
    assert_eq!(policy["spec"]["driver"]["version"], "575.51.03");
    assert_eq!(policy["spec"]["driver"]["enabled"], true);
    assert_eq!(policy["spec"]["mig"]["strategy"], "single");
    let log = std::fs::read_to_string(dir.join("helm.log")).expect("helm ran");
    assert!(
        log.contains("\"oci://registry.strata.test/nvidia/gpu-operator\"")
            && !log.contains("--repo"),
        "{log}"
    );
    assert!(
        log.contains("\"login\"") && !log.contains("s3cret"),
        "{log}"
    );
    let (status, out) = strata(&dir, false, &["plan", "--detailed-exitcode"]);
    assert_eq!(status, 0, "{out}");
    helm_by_hand(&dir.join("kubeconfig.json"), "mig.strategy=mixed");
    let (status, out) = strata(&dir, false, &["plan", "--detailed-exitcode"]);
    assert_eq!(status, 2, "{out}");
    assert!(out.contains("1 to change"), "{out}");
}

#[test]
fn an_unreachable_cluster_and_bad_credentials_are_clear_errors() {
    let (k, dir) = setup("unreachable");
    let mut kc = k.kubeconfig("gpu");
    kc["clusters"][0]["cluster"]["server"] = serde_json::json!("https://127.0.0.1:9");
    std::fs::write(dir.join("kubeconfig.json"), kc.to_string()).expect("kc");
    let (status, out) = strata(&dir, true, &["apply", "--auto-approve"]);
    assert_eq!(status, 1, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("cannot reach the Kubernetes API at https://127.0.0.1:9")
            && flat.contains("Connection refused")
            && flat.contains("kubeconfig kubeconfig.json, context gpu"),
        "{out}"
    );

    let mut kc = k.kubeconfig("gpu");
    kc["users"][0]["user"]["token"] = serde_json::json!("wrong");
    std::fs::write(dir.join("kubeconfig.json"), kc.to_string()).expect("kc");
    let (status, out) = strata(&dir, true, &["apply", "--auto-approve"]);
    assert_eq!(status, 1, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("Unauthorized") && flat.contains("HTTP 401; credentials from kubeconfig"),
        "{out}"
    );

    let (status, out) = strata(&dir, true, &["plan"]);
    assert_eq!(status, 0, "a plan on empty state needs no cluster: {out}");
}

#[test]
fn exec_credential_plugins_give_the_token() {
    let k = kubernetes::start().expect("stand-in cluster");
    let dir = common::scratch("kubernetes", "exec");
    let plugin = dir.join("get-token");
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\necho \"$@\" >> {}\necho '{{\"apiVersion\": \"client.authentication.k8s.io/v1beta1\", \"kind\": \"ExecCredential\", \"status\": {{\"token\": \"{}\"}}}}'\n",
            dir.join("exec.log").display(),
            kubernetes::TOKEN
        ),
    )
    .expect("plugin");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    std::fs::write(dir.join("ca.pem"), &k.ca_pem).expect("ca");
    let config = format!(
        r#"
provider "kubernetes" {{
  host                   = "{}"
  cluster_ca_certificate = file("ca.pem")
  exec {{
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "{}"
    args        = ["eks", "get-token", "--cluster-name", "train"]
  }}
}}

resource "kubernetes_namespace" "a" {{
  metadata {{
    name = "team-a"
  }}
}}
"#,
        k.server.url,
        plugin.display()
    );
    std::fs::write(dir.join("main.tf"), config).expect("config");
    let (status, out) = strata(&dir, false, &["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    assert!(k.get("/api/v1/namespaces/team-a").is_some());
    let log = std::fs::read_to_string(dir.join("exec.log")).expect("plugin ran");
    assert!(log.contains("eks get-token --cluster-name train"), "{log}");
}

/// The GPU Operator module on two clusters from one configuration, each
/// reached through its own aliased provider configurations.
const TWO_CLUSTERS: &str = r#"
variable "operator_version" {
  default = "v25.3.1"
}

locals {
  gpu_operator = {
    version        = var.operator_version
    driver_version = "570.124.06"
    mig_strategy   = "single"
  }
  tolerations = [{ key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" }]
}

provider "kubernetes" {
  alias          = "a"
  config_path    = "a.json"
}

provider "helm" {
  alias = "a"
  kubernetes {
    config_path = "a.json"
  }
}

provider "kubernetes" {
  alias       = "b"
  config_path = "b.json"
}

provider "helm" {
  alias = "b"
  kubernetes {
    config_path = "b.json"
  }
}

module "gpu_a" {
  source             = "./modules/gpu-operator"
  cloud              = "azure"
  kubernetes_version = "1.31"
  gpu_operator       = local.gpu_operator
  tolerations        = local.tolerations
  providers = {
    kubernetes = kubernetes.a
    helm       = helm.a
  }
}

module "gpu_b" {
  source             = "./modules/gpu-operator"
  cloud              = "kubernetes"
  kubernetes_version = "1.33"
  gpu_operator       = local.gpu_operator
  tolerations        = local.tolerations
  providers = {
    kubernetes = kubernetes.b
    helm       = helm.b
  }
}
"#;

fn copy_module(dir: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("modules/gpu-operator");
    let to = dir.join("modules/gpu-operator");
    std::fs::create_dir_all(&to).expect("module dir");
    for f in std::fs::read_dir(&from).expect("module") {
        let f = f.expect("entry").path();
        // The module's own tests (`tests/`) are not what is applied.
        if !f.is_file() {
            continue;
        }
        std::fs::copy(&f, to.join(f.file_name().expect("name"))).expect("copy");
    }
}

#[test]
fn the_gpu_operator_module_is_the_same_on_two_clusters() {
    let a = kubernetes::start().expect("cluster a");
    let b = kubernetes::start().expect("cluster b");
    let dir = common::scratch("kubernetes", "two");
    copy_module(&dir);
    std::fs::write(dir.join("main.tf"), TWO_CLUSTERS).expect("config");
    std::fs::write(dir.join("a.json"), a.kubeconfig("a").to_string()).expect("kc");
    std::fs::write(dir.join("b.json"), b.kubeconfig("b").to_string()).expect("kc");
    let run = |args: &[&str]| strata(&dir, true, args);

    // Each cluster's operator reports ready a few reads after the install:
    // the check after apply waits for it, quietly.
    a.ready_after(3);
    let (status, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("4 added"), "{out}");
    assert!(!out.contains("Check block assertion failed"), "{out}");
    for k in [&a, &b] {
        let policy = k
            .get("/apis/nvidia.com/v1/clusterpolicies/cluster-policy")
            .expect("ClusterPolicy");
        assert_eq!(policy["status"]["state"], "ready", "{policy}");
    }

    // Both clusters got the release, with identical values.
    let values = |k: &Kube| {
        let records = k.all("secrets");
        let deployed: Vec<_> = records
            .iter()
            .filter(|r| r["metadata"]["labels"]["status"] == "deployed")
            .collect();
        assert_eq!(deployed.len(), 1, "{records:?}");
        strata_kubernetes::decode_release(deployed[0]).expect("release")["config"].clone()
    };
    let (va, vb) = (values(&a), values(&b));
    assert_eq!(va, vb);
    assert_eq!(va["driver"]["version"], "570.124.06");
    assert_eq!(va["mig"]["strategy"], "single");
    assert_eq!(va["daemonsets"]["tolerations"][0]["key"], "nvidia.com/gpu");
    for k in [&a, &b] {
        let policy = k
            .get("/apis/nvidia.com/v1/clusterpolicies/cluster-policy")
            .expect("ClusterPolicy");
        assert_eq!(policy["spec"]["driver"]["version"], "570.124.06");
    }
    let (status, out) = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(status, 0, "{out}");

    // One change of the version: both clusters plan an update.
    let (status, out) = run(&["plan", "--var", "operator_version=v25.3.2"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("0 to add, 2 to change, 0 to destroy"), "{out}");
    assert!(
        out.contains("module.gpu_a.helm_release.gpu_operator will be updated"),
        "{out}"
    );
    assert!(
        out.contains("module.gpu_b.helm_release.gpu_operator will be updated"),
        "{out}"
    );

    // A value edited by hand on one cluster is drift there only.
    helm_by_hand(&dir.join("b.json"), "mig.strategy=mixed");
    let (status, out) = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(status, 2, "{out}");
    assert!(out.contains("0 to add, 1 to change, 0 to destroy"), "{out}");
    assert!(
        out.contains("module.gpu_b.helm_release.gpu_operator will be updated"),
        "{out}"
    );
    assert!(out.contains("\"mixed\" -> \"single\""), "{out}");

    // An operator that does not become ready is a warning naming the
    // cluster's module, not a failure.
    b.ready_after(1000);
    let (status, out) = strata_with_settle(&dir, &["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    assert_eq!(values(&a), values(&b));
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("Check block assertion failed"), "{out}");
    assert!(
        flat.contains("check \"gpu_operator_ready\" of module.gpu_b: The GPU Operator's ClusterPolicy is not ready (its state is notReady)"),
        "{out}"
    );
    assert!(!flat.contains("of module.gpu_a:"), "{out}");
}

/// strata with a short settling time for checks after apply.
fn strata_with_settle(dir: &Path, args: &[&str]) -> (i32, String) {
    let mut c = command(dir, true, args);
    c.env("STRATA_CHECK_SETTLE", "2");
    common::output(c)
}

/// A provider configured from a resource's attributes (as from a new
/// cluster's endpoint and CA): planned before the cluster exists,
/// configured during the apply once it does, and refreshed in later plans.
#[test]
fn a_provider_configured_from_a_clusters_outputs() {
    let k = kubernetes::start().expect("cluster");
    let dir = common::scratch("kubernetes", "outputs");
    std::fs::write(dir.join("ca.pem"), &k.ca_pem).expect("ca");
    let config = format!(
        r#"
resource "terraform_data" "cluster" {{
  input = {{
    endpoint = "{}"
    ca       = file("ca.pem")
  }}
}}

provider "kubernetes" {{
  host                   = terraform_data.cluster.output.endpoint
  cluster_ca_certificate = terraform_data.cluster.output.ca
  token                  = "{}"
}}

resource "kubernetes_namespace" "team" {{
  metadata {{
    name   = "team"
    labels = {{ owner = "ml" }}
  }}
}}
"#,
        k.server.url,
        kubernetes::TOKEN
    );
    std::fs::write(dir.join("main.tf"), config).expect("config");
    let run = |args: &[&str]| strata(&dir, false, args);

    let (status, out) = run(&["plan"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("2 to add"), "{out}");
    assert!(
        k.calls().is_empty(),
        "nothing to ask the cluster yet: {:?}",
        k.calls()
    );

    let (status, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    assert!(k.get("/api/v1/namespaces/team").is_some());

    let (status, out) = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(status, 0, "{out}");
    k.edit(
        "/api/v1/namespaces/team",
        "kubectl-label",
        serde_json::json!({"metadata": {"labels": {"owner": "infra"}}}),
    )
    .expect("edit");
    let (status, out) = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(status, 2, "the late refresh sees the change: {out}");
    assert!(out.contains("\"infra\" -> \"ml\""), "{out}");
}

/// An object made by hand on the second cluster is refused by a create
/// and adopted by an `import` block, through the aliased provider.
#[test]
fn imports_go_through_the_resources_provider_configuration() {
    let a = kubernetes::start().expect("cluster a");
    let b = kubernetes::start().expect("cluster b");
    let dir = common::scratch("kubernetes", "import");
    std::fs::write(dir.join("a.json"), a.kubeconfig("a").to_string()).expect("kc");
    std::fs::write(dir.join("b.json"), b.kubeconfig("b").to_string()).expect("kc");
    b.add(
        "/api/v1/namespaces/legacy",
        "kubectl-create",
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "legacy"}}),
    )
    .expect("namespace by hand");
    let config = r#"
provider "kubernetes" {
  config_path = "a.json"
}

provider "kubernetes" {
  alias       = "b"
  config_path = "b.json"
}

resource "kubernetes_namespace" "legacy" {
  provider = kubernetes.b
  metadata {
    name = "legacy"
  }
}
"#;
    std::fs::write(dir.join("main.tf"), config).expect("config");
    let (status, out) = strata(&dir, false, &["apply", "--auto-approve"]);
    assert_eq!(status, 1, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("strata did not create it"), "{out}");
    assert!(
        a.get("/api/v1/namespaces/legacy").is_none(),
        "not on cluster a"
    );

    let import =
        format!("{config}\nimport {{\n  to = kubernetes_namespace.legacy\n  id = \"legacy\"\n}}\n");
    std::fs::write(dir.join("main.tf"), import).expect("config");
    let (status, out) = strata(&dir, false, &["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("1 imported"), "{out}");
    let state = std::fs::read_to_string(dir.join("terraform.tfstate")).expect("state");
    assert!(state.contains("hashicorp/kubernetes\\\"].b"), "{state}");
    let (status, out) = strata(&dir, false, &["plan", "--detailed-exitcode"]);
    assert_eq!(status, 0, "{out}");
}

/// A namespace and a service account with nothing but their names, made
/// by an apply that died before recording them (the state loses them, as
/// a SIGKILL between the create and the journal would): server-side apply
/// records no fields of theirs, so without strata's ownership marks the
/// next apply's create found them and refused them as made by someone
/// else, which the multi-cloud kill test met on GKE's queue namespace.
/// Now the next apply takes them, and the marks never show as drift.
#[test]
fn name_only_objects_a_killed_apply_made_are_taken_back() {
    let (k, dir) = setup("name-only");
    let config = r#"
provider "kubernetes" {
  config_path    = "kubeconfig.json"
  config_context = "gpu"
}

resource "kubernetes_namespace" "queue" {
  metadata {
    name = "ml"
  }
}

resource "kubernetes_manifest" "dispatcher" {
  manifest = {
    apiVersion = "v1"
    kind       = "ServiceAccount"
    metadata   = { name = "dispatcher", namespace = kubernetes_namespace.queue.metadata[0].name }
  }
}
"#;
    std::fs::write(dir.join("main.tf"), config).expect("config");
    let (status, out) = strata(&dir, false, &["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    let live = k.get("/api/v1/namespaces/ml").expect("the namespace");
    assert!(
        live["metadata"]["annotations"]["strata-lineage"].is_string(),
        "marked: {live}"
    );
    let (status, out) = strata(
        &dir,
        false,
        &[
            "state",
            "rm",
            "kubernetes_namespace.queue",
            "kubernetes_manifest.dispatcher",
        ],
    );
    assert_eq!(status, 0, "{out}");
    let (status, out) = strata(&dir, false, &["apply", "--auto-approve"]);
    assert_eq!(status, 0, "taken back, not refused:\n{out}");
    assert!(out.contains("2 added"), "{out}");
    let (status, out) = strata(&dir, false, &["plan", "--detailed-exitcode"]);
    assert_eq!(status, 0, "the marks are no drift:\n{out}");
}

/// Lists are read in chunks, each `continue` followed: the stand-in
/// returns at most three items a chunk, and the nodes data source sees
/// every node, the cluster's own and seven more, four of them labelled for
/// GPUs.
#[test]
fn lists_are_read_chunk_by_chunk() {
    let (k, dir) = setup("chunks");
    let before = k.all("nodes").len();
    for i in 0..7 {
        let gpu = if i % 2 == 0 { "h100" } else { "none" };
        let node = serde_json::json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": format!("node-{i}"), "labels": {"gpu": gpu}}});
        k.add(&format!("/api/v1/nodes/node-{i}"), "kubelet", node)
            .expect("a node");
    }
    let config = r#"
provider "kubernetes" {
  config_path    = "kubeconfig.json"
  config_context = "gpu"
}

data "kubernetes_nodes" "all" {}

data "kubernetes_nodes" "gpu" {
  metadata {
    labels = { gpu = "h100" }
  }
}

output "all" {
  value = length(data.kubernetes_nodes.all.nodes)
}

output "gpu" {
  value = [for n in data.kubernetes_nodes.gpu.nodes : n.metadata[0].name]
}
"#;
    std::fs::write(dir.join("main.tf"), config).expect("config");
    let (status, out) = strata(&dir, false, &["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains(&format!("all = {}", before + 7)), "{out}");
    for i in [0, 2, 4, 6] {
        assert!(out.contains(&format!("\"node-{i}\"")), "{out}");
    }
}

/// A CRD and an object of its kind in one apply (discovery is asked again
/// for the new kind), the object waited for until its status says ready.
#[test]
fn custom_resources_are_applied_and_waited_for() {
    let (k, dir) = setup("crd");
    k.ready_after(3);
    let config = r#"
provider "kubernetes" {
  config_path    = "kubeconfig.json"
  config_context = "gpu"
}

resource "kubernetes_manifest" "crd" {
  manifest = {
    apiVersion = "apiextensions.k8s.io/v1"
    kind       = "CustomResourceDefinition"
    metadata   = { name = "clusterpolicies.nvidia.com" }
    spec = {
      group = "nvidia.com"
      scope = "Cluster"
      names = { plural = "clusterpolicies", singular = "clusterpolicy", kind = "ClusterPolicy" }
      versions = [{ name = "v1", served = true, storage = true }]
    }
  }
}

resource "kubernetes_manifest" "policy" {
  manifest = {
    apiVersion = "nvidia.com/v1"
    kind       = "ClusterPolicy"
    metadata   = { name = "cluster-policy" }
    spec       = { mig = { strategy = "single" } }
  }
  wait {
    fields = { "status.state" = "ready" }
    condition {
      type   = "Ready"
      status = "True"
    }
  }
  depends_on = [kubernetes_manifest.crd]
}

output "state" {
  value = kubernetes_manifest.policy.object.status.state
}
"#;
    std::fs::write(dir.join("main.tf"), config).expect("config");
    let (status, out) = strata(&dir, false, &["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("state = \"ready\""), "{out}");
    let polls = k
        .calls()
        .iter()
        .filter(|c| c.starts_with("GET /apis/nvidia.com/v1/clusterpolicies/cluster-policy"))
        .count();
    assert!(polls >= 3, "waited by polling: {polls}");
    let (status, out) = strata(&dir, false, &["plan", "--detailed-exitcode"]);
    assert_eq!(status, 0, "{out}");
}

/// What the module gives the chart on each cloud, from a plan alone (no
/// cluster is asked anything): the operator's driver off where the cloud
/// installs it, GKE's paths and CDI, the file-based runtime config on GKE
/// 1.33+, and booleans that stay booleans.
#[test]
fn the_gpu_operator_module_knows_each_clouds_facts() {
    let dir = common::scratch("kubernetes", "facts");
    copy_module(&dir);
    let mut config = String::new();
    for (name, cloud, version) in [
        ("eks", "aws", "1.31"),
        ("gke", "gcp", "1.33"),
        ("gke_old", "gcp", "1.32"),
        ("aks", "azure", "1.31"),
        ("onprem", "kubernetes", "1.30"),
    ] {
        config.push_str(&format!(
            "module \"{name}\" {{\n  source = \"./modules/gpu-operator\"\n  cloud = \"{cloud}\"\n  kubernetes_version = \"{version}\"\n  gpu_operator = {{ version = \"v25.3.1\", driver_version = \"570.124.06\" }}\n}}\noutput \"{name}\" {{\n  value = module.{name}.values\n}}\n"
        ));
    }
    std::fs::write(dir.join("main.tf"), config).expect("config");
    let (status, out) = strata(&dir, false, &["plan", "--format", "json"]);
    assert_eq!(status, 0, "{out}");
    let plan: serde_json::Value = serde_json::from_str(&out).expect("plan JSON");
    let values = |m: &str| plan["output_changes"][m]["after"].clone();
    let (eks, gke, gke_old, aks, onprem) = (
        values("eks"),
        values("gke"),
        values("gke_old"),
        values("aks"),
        values("onprem"),
    );
    assert_eq!(eks["driver"]["enabled"], false, "{eks}");
    assert_eq!(eks["toolkit"]["enabled"], false, "{eks}");
    assert_eq!(gke["driver"]["enabled"], false, "{gke}");
    assert_eq!(gke["toolkit"]["enabled"], true, "{gke}");
    assert_eq!(gke["toolkit"]["installDir"], "/home/kubernetes/bin/nvidia");
    assert_eq!(
        gke["hostPaths"]["driverInstallDir"],
        "/home/kubernetes/bin/nvidia"
    );
    assert_eq!(gke["cdi"]["enabled"], true, "{gke}");
    assert_eq!(
        gke["toolkit"]["env"],
        serde_json::json!([{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}])
    );
    assert!(gke_old["toolkit"].get("env").is_none(), "{gke_old}");
    for v in [&aks, &onprem] {
        assert_eq!(v["driver"]["enabled"], true, "{v}");
        assert_eq!(v["driver"]["version"], "570.124.06", "{v}");
        assert_eq!(v["toolkit"]["enabled"], true, "{v}");
        assert!(v.get("cdi").is_none(), "{v}");
    }
    // Everything else is the same everywhere.
    for v in [&eks, &gke, &gke_old, &aks, &onprem] {
        assert_eq!(v["mig"]["strategy"], "single");
        assert_eq!(v["dcgmExporter"]["enabled"], true);
        assert_eq!(v["devicePlugin"]["enabled"], true);
    }
}

/// The stack's Kubernetes objects (the release aside: the stand-in helm
/// script does not retry as helm does) through throttling, 5xx, resets and
/// slow answers at the rates of `tests/faults.rs`: applied, a plan with
/// nothing to do, destroyed with nothing of strata's left.
#[test]
fn the_objects_converge_through_faults() {
    let (k, dir) = setup("faults");
    let text = STACK;
    let without_helm = &text[..text.find("provider \"helm\"").unwrap_or(text.len())];
    let objects = &text[text.find("resource \"kubernetes_namespace\"").unwrap_or(0)
        ..text.find("resource \"helm_release\"").unwrap_or(text.len())];
    std::fs::write(dir.join("main.tf"), format!("{without_helm}\n{objects}")).expect("config");
    k.server.faults(Some(common::faults()));
    let (status, out) = strata(&dir, false, &["apply", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("3 added"), "{out}");
    let (status, out) = strata(&dir, false, &["plan", "--detailed-exitcode"]);
    assert_eq!(status, 0, "{out}");
    let (status, out) = strata(&dir, false, &["destroy", "--auto-approve"]);
    assert_eq!(status, 0, "{out}");
    k.server.faults(None);
    assert!(k.get("/api/v1/namespaces/gpu-operator").is_none());
    let node = k.get("/api/v1/nodes/gpu-node-0").expect("node");
    assert!(
        node["metadata"]["labels"].get("strata.dev/pool").is_none(),
        "{node}"
    );
    common::assert_faults_struck(&k.server.counts);
}
