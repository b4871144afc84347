//! Checkpoints through the one Secret shape (`runtime { checkpoints { … } }`),
//! applied in the sandbox and used as a job would use them: the Secret and
//! service account read from the cluster's API server, an S3 client (boto3,
//! the AWS SDK for Python, from moto's venv) configured by the Secret's
//! keys alone, a checkpoint written and read back.

mod common;

use common::multikueue::instance;
use common::sandbox::{https, start, Sandbox};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The keys every cloud's Secret has.
const KEYS: [&str; 7] = [
    "AWS_ACCESS_KEY_ID",
    "AWS_ENDPOINT_URL",
    "AWS_REGION",
    "AWS_REQUEST_CHECKSUM_CALCULATION",
    "AWS_RESPONSE_CHECKSUM_VALIDATION",
    "AWS_SECRET_ACCESS_KEY",
    "BUCKET",
];

/// A cluster on `cloud` with a queue for namespace `ml` and checkpoints
/// versioned and kept 30 days; `cloud_block` is its cloud block's body.
fn spec(cloud: &str, cloud_block: &str) -> String {
    format!(
        r#"
cluster "train" {{
  clouds             = ["{cloud}"]
  kubernetes_version = "1.31"
  network {{
    cidr = "10.40.0.0/16"
  }}
  gpu_operator {{
    version        = "v25.3.1"
    driver_version = "570.124.06"
    cuda_version   = "12.8"
    mig_strategy   = "single"
  }}
  runtime {{
    queue "training" {{
      namespaces = ["ml"]
    }}
    checkpoints {{
      bucket            = "acme-train-ckpt"
      versioning        = true
      expire_after_days = 30
    }}
  }}
  node_pool "h100" {{
    gpu           = "H100"
    gpus_per_node = 8
    min_nodes     = 0
    max_nodes     = 2
    capacity      = "on_demand"
  }}
  cloud "{cloud}" {{
{cloud_block}
  }}
}}
"#
    )
}

/// The cluster's API server as its administrator: its endpoint and CA
/// from the state.
struct Admin {
    server: String,
    ca: Vec<u8>,
    /// The bearer token the sandbox exports for its clusters.
    token: String,
}

impl Admin {
    /// The cluster's server and CA (base64 PEM) as the state holds them,
    /// called with the token the sandbox exports.
    fn new(sb: &Sandbox, server: &str, ca_base64: &str) -> Admin {
        use base64::Engine;
        let ca = base64::engine::general_purpose::STANDARD
            .decode(ca_base64)
            .expect("CA base64");
        Admin {
            server: server.to_string(),
            ca,
            token: sb.env["STRATA_SANDBOX_KUBE_TOKEN"].clone(),
        }
    }

    /// The status and body of a GET of `path` with `auth`.
    fn call(&self, path: &str, auth: &str) -> (u16, String) {
        let url = format!("{}{path}", self.server.trim_end_matches('/'));
        https(&self.ca, ("GET", &url), auth, "application/json", "")
    }

    fn get(&self, path: &str) -> Json {
        let (status, body) = self.call(path, &format!("Bearer {}", self.token));
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body).expect("JSON")
    }

    /// The checkpoint Secret in `namespace`, decoded: what a job's
    /// `envFrom` gives it.
    fn secret(&self, namespace: &str) -> BTreeMap<String, String> {
        use base64::Engine;
        let s = self.get(&format!(
            "/api/v1/namespaces/{namespace}/secrets/strata-checkpoints"
        ));
        s["data"]
            .as_object()
            .expect("data")
            .iter()
            .map(|(k, v)| {
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(v.as_str().unwrap_or_default())
                    .expect("base64");
                (k.clone(), String::from_utf8(raw).expect("UTF-8"))
            })
            .collect()
    }
}

fn state(work: &Path) -> Json {
    let text = std::fs::read_to_string(work.join("terraform.tfstate")).expect("state");
    serde_json::from_str(&text).expect("state JSON")
}

/// The Python beside moto_server in its venv, which has boto3.
fn python() -> PathBuf {
    let server = std::env::var("STRATA_MOTO_SERVER").expect("STRATA_MOTO_SERVER");
    Path::new(&server).with_file_name("python")
}

/// `tests/checkpoints/job.py` with the Secret as its environment and
/// `extra` (the test's own settings, over the Secret's): what it reports,
/// or all it printed when it failed.
fn try_job(secret: &BTreeMap<String, String>, extra: &[(&str, &str)]) -> Result<Json, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/checkpoints/job.py");
    let mut cmd = Command::new(python());
    cmd.arg(script).env_clear();
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd.env("AWS_EC2_METADATA_DISABLED", "true");
    cmd.envs(secret).envs(extra.iter().copied());
    let out = cmd.output().expect("python runs");
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("{text}\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(serde_json::from_str(text.trim()).expect("the job's JSON line"))
}

fn run_job(secret: &BTreeMap<String, String>, extra: &[(&str, &str)]) -> Json {
    try_job(secret, extra).unwrap_or_else(|e| panic!("the job:\n{e}"))
}

fn apply(sb: &Sandbox, work: &Path, text: &str) {
    std::fs::create_dir_all(work).expect("work");
    std::fs::write(work.join("cluster.hcl"), text).expect("spec");
    let (code, out) = sb.strata(work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "apply:\n{out}");
    let (code, out) = sb.strata(work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan is empty:\n{out}");
}

/// What keeps the checkpoints through a destroy on one cloud: what the
/// refusal says, what is left in the state, and what an apply targets to
/// let them go once the spec says `force_destroy = true`.
struct Keeper<'a> {
    refusal: &'a str,
    left: &'a [&'a str],
    target: &'a str,
}

/// A destroy stops where the checkpoints are kept (exit 1, what holds them
/// still in the state, nothing lost) and says how to let them go; with
/// `force_destroy = true` applied to the keeper, the next destroy takes
/// the rest and leaves the state empty.
fn destroy(sb: &Sandbox, work: &Path, keeper: Keeper<'_>) {
    let (code, out) = sb.strata(work, &["destroy", "--auto-approve"]);
    assert_eq!(code, 1, "destroy keeps the checkpoints:\n{out}");
    assert!(
        out.contains(keeper.refusal) && out.contains("force_destroy = true"),
        "{out}"
    );
    let (code, out) = sb.strata(work, &["state", "list"]);
    let left: Vec<&str> = out.lines().collect();
    assert_eq!((code, left), (0, keeper.left.to_vec()), "what is left");
    let text = std::fs::read_to_string(work.join("cluster.hcl")).expect("spec");
    let text = text.replace(
        "expire_after_days = 30",
        "expire_after_days = 30\n      force_destroy     = true",
    );
    std::fs::write(work.join("cluster.hcl"), text).expect("spec");
    let target = format!("-target={}", keeper.target);
    let (code, out) = sb.strata(work, &["apply", "--auto-approve", &target]);
    assert_eq!(code, 0, "force_destroy applied to the keeper:\n{out}");
    let (code, out) = sb.strata(work, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "destroy:\n{out}");
    let (code, out) = sb.strata(work, &["state", "list"]);
    assert_eq!((code, out.trim()), (0, ""), "nothing left in state");
}

/// On EKS: the bucket versioned with its lifecycle rule, an empty key pair
/// in the Secret and the role reached through EKS Pod Identity by the
/// service account `strata-checkpoints`; a job writes and reads a
/// checkpoint with the role's credentials and nothing else.
#[test]
fn on_aws_a_job_checkpoints_through_the_secret_with_pod_identity() {
    let dir = common::scratch("checkpoints", "aws");
    let sb = start(&dir.join("sandbox"));
    let moto = sb.env["AWS_ENDPOINT_URL"].clone();
    // The sandbox's S3 is on loopback, not at S3's public name: the cloud
    // block says where this cloud's jobs reach it, as a FIPS or VPC
    // endpoint would be said.
    let block = format!(
        "    region = \"us-east-1\"\n    runtime {{\n      checkpoints {{\n        endpoint = \"{moto}\"\n      }}\n    }}"
    );
    let work = dir.join("work");
    apply(&sb, &work, &spec("aws", &block));

    let st = state(&work);
    let eks = instance(&st, "module.train_aws", "aws_eks_cluster.this", &Json::Null);
    let attrs = &eks["attributes"];
    let admin = Admin::new(
        &sb,
        attrs["endpoint"].as_str().expect("endpoint"),
        attrs["certificate_authority"][0]["data"]
            .as_str()
            .expect("CA"),
    );
    let secret = admin.secret("ml");
    assert_eq!(secret.keys().collect::<Vec<_>>(), KEYS, "{secret:?}");
    assert_eq!(secret["AWS_ACCESS_KEY_ID"], "", "no key kept on EKS");
    assert_eq!(secret["AWS_SECRET_ACCESS_KEY"], "");
    assert_eq!(secret["AWS_ENDPOINT_URL"], moto);
    assert_eq!(secret["AWS_REGION"], "us-east-1");
    assert_eq!(secret["BUCKET"], "acme-train-ckpt-us-east-1");
    // S3 takes the SDKs' checksums as they send them by default.
    assert_eq!(secret["AWS_REQUEST_CHECKSUM_CALCULATION"], "WHEN_SUPPORTED");
    let account = admin.get("/api/v1/namespaces/ml/serviceaccounts/strata-checkpoints");
    assert_eq!(account["metadata"]["name"], "strata-checkpoints");

    let role = instance(
        &st,
        "module.train_aws",
        "aws_iam_role.checkpoints",
        &Json::from(0),
    );
    let trust: Json = serde_json::from_str(
        role["attributes"]["assume_role_policy"]
            .as_str()
            .expect("trust policy"),
    )
    .expect("policy JSON");
    assert_eq!(
        trust["Statement"][0]["Principal"]["Service"], "pods.eks.amazonaws.com",
        "{trust}"
    );
    let policy = instance(
        &st,
        "module.train_aws",
        "aws_iam_role_policy.checkpoints",
        &Json::from(0),
    );
    let policy = policy["attributes"]["policy"].as_str().expect("policy");
    assert!(
        policy.contains("arn:aws:s3:::acme-train-ckpt-us-east-1/*"),
        "the role reaches the bucket's objects: {policy}"
    );
    let association = instance(
        &st,
        "module.train_aws",
        "aws_eks_pod_identity_association.checkpoints",
        &Json::from("ml"),
    );
    assert_eq!(
        association["attributes"]["role_arn"],
        role["attributes"]["arn"]
    );
    let cluster = attrs["name"].as_str().expect("cluster name");
    let agent = format!("{cluster}/ml/strata-checkpoints");
    let ran = run_job(
        &secret,
        &[
            ("STRATA_TEST_POD_IDENTITY", agent.as_str()),
            ("STRATA_TEST_ADMIN_ENDPOINT", moto.as_str()),
            ("STRATA_TEST_INSPECT_BUCKET", "1"),
        ],
    );
    assert_eq!(ran["same"], true, "{ran}");
    assert_eq!(ran["credentials"], "container-role", "{ran}");
    assert_eq!(ran["role"], role["attributes"]["arn"], "{ran}");
    assert_eq!(ran["versioning"], "Enabled", "{ran}");
    let rule = &ran["rules"][0];
    assert_eq!(rule["Expiration"]["Days"], 30, "{ran}");
    assert_eq!(
        rule["NoncurrentVersionExpiration"]["NoncurrentDays"], 30,
        "{ran}"
    );
    assert_eq!(
        rule["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"], 7,
        "{ran}"
    );
    let bucket = "module.train_aws.aws_s3_bucket.checkpoints[0]";
    let keeper = Keeper {
        refusal: "BucketNotEmpty",
        left: &[bucket],
        target: bucket,
    };
    destroy(&sb, &work, keeper);
}

/// On GKE: the bucket with its lifecycle rules, the node service account
/// an object user of it and nothing more, and its HMAC key in the Secret;
/// a job writes and reads a checkpoint through Cloud Storage's XML API
/// with that key alone. The SDK's default integrity protocol, which the
/// XML API refuses, is what the Secret's checksum settings turn off: the
/// same job without them fails.
#[test]
fn on_gcp_a_job_checkpoints_through_the_secret_with_an_hmac_key() {
    let dir = common::scratch("checkpoints", "gcp");
    let sb = start(&dir.join("sandbox"));
    // The sandbox's Cloud Storage XML API, beside its JSON API.
    let xml = sb.env["GOOGLE_STORAGE_CUSTOM_ENDPOINT"].replace("/storage/v1/", "/xml");
    let block = format!(
        "    project = \"acme-ml\"\n    region  = \"us-central1\"\n    runtime {{\n      checkpoints {{\n        endpoint = \"{xml}\"\n      }}\n    }}"
    );
    let work = dir.join("work");
    apply(&sb, &work, &spec("gcp", &block));

    let st = state(&work);
    let gke = instance(
        &st,
        "module.train_gcp",
        "google_container_cluster.this",
        &Json::Null,
    );
    let attrs = &gke["attributes"];
    let admin = Admin::new(
        &sb,
        &format!("https://{}", attrs["endpoint"].as_str().expect("endpoint")),
        attrs["master_auth"][0]["cluster_ca_certificate"]
            .as_str()
            .expect("CA"),
    );
    let secret = admin.secret("ml");
    assert_eq!(secret.keys().collect::<Vec<_>>(), KEYS, "{secret:?}");
    assert!(
        secret["AWS_ACCESS_KEY_ID"].starts_with("GOOG1E"),
        "{secret:?}"
    );
    assert!(!secret["AWS_SECRET_ACCESS_KEY"].is_empty());
    assert_eq!(secret["AWS_ENDPOINT_URL"], xml);
    assert_eq!(secret["AWS_REGION"], "us-central1");
    assert_eq!(secret["BUCKET"], "acme-train-ckpt-us-central1");
    assert_eq!(secret["AWS_REQUEST_CHECKSUM_CALCULATION"], "WHEN_REQUIRED");
    let account = admin.get("/api/v1/namespaces/ml/serviceaccounts/strata-checkpoints");
    assert_eq!(account["metadata"]["name"], "strata-checkpoints");

    let bucket = instance(
        &st,
        "module.train_gcp",
        "google_storage_bucket.checkpoints",
        &Json::from(0),
    );
    let rules = &bucket["attributes"]["lifecycle_rule"];
    let shown: Vec<String> = rules
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| {
            let c = &r["condition"][0];
            let days = [&c["age"], &c["days_since_noncurrent_time"]]
                .iter()
                .find_map(|d| d.as_u64())
                .unwrap_or_default();
            let action = r["action"][0]["type"].as_str().unwrap_or_default();
            let state = c["with_state"].as_str().unwrap_or_default();
            format!("{action} {state} {days}")
        })
        .collect();
    assert_eq!(
        shown,
        [
            "Delete LIVE 30",
            "Delete ARCHIVED 30",
            "AbortIncompleteMultipartUpload ANY 7"
        ],
        "{rules}"
    );
    assert_eq!(bucket["attributes"]["versioning"][0]["enabled"], true);
    let member = instance(
        &st,
        "module.train_gcp",
        "google_storage_bucket_iam_member.checkpoints",
        &Json::from(0),
    );
    assert_eq!(member["attributes"]["role"], "roles/storage.objectUser");

    let ran = run_job(&secret, &[]);
    assert_eq!(ran["same"], true, "{ran}");
    assert_eq!(ran["credentials"], "env", "{ran}");
    let refused = try_job(
        &secret,
        &[("AWS_REQUEST_CHECKSUM_CALCULATION", "WHEN_SUPPORTED")],
    )
    .expect_err("the XML API refuses the SDK's default integrity protocol");
    assert!(refused.contains("InvalidArgument"), "{refused}");
    // The stand-in checks the signature: another secret is refused.
    let forged = try_job(
        &secret,
        &[("AWS_SECRET_ACCESS_KEY", "not-the-key's-secret")],
    )
    .expect_err("a request signed with another secret");
    assert!(forged.contains("SignatureDoesNotMatch"), "{forged}");
    let bucket = "module.train_gcp.google_storage_bucket.checkpoints[0]";
    let keeper = Keeper {
        refusal: "still holds objects",
        left: &[bucket],
        target: bucket,
    };
    destroy(&sb, &work, keeper);
}

/// On AKS: the storage account (versioned, its lifecycle policy) in a
/// resource group of its own under a CanNotDelete lock, a container as the
/// bucket, and the S3 gateway in front of it, which reaches the account by
/// workload identity (the stand-in gateway answers only when the
/// Deployment, its service account, the federated credential and the role
/// assignment strata made fit together as Azure would require); a job
/// writes and reads a checkpoint through the gateway with the Secret's key
/// pair alone.
#[test]
fn on_azure_a_job_checkpoints_through_the_gateway_with_workload_identity() {
    let dir = common::scratch("checkpoints", "azure");
    let sb = start(&dir.join("sandbox"));
    // The gateway's Service is inside the cluster; the sandbox's stands
    // on loopback, where the cloud block says jobs reach it.
    let gateway = sb.env["STRATA_SANDBOX_AZURE_S3_GATEWAY"].clone();
    let block = format!(
        "    subscription_id = \"{}\"\n    location        = \"eastus\"\n    runtime {{\n      checkpoints {{\n        endpoint = \"{gateway}\"\n      }}\n    }}",
        strata_standin::azure::SUBSCRIPTION
    );
    let work = dir.join("work");
    apply(&sb, &work, &spec("azure", &block));

    let st = state(&work);
    let m = "module.train_azure";
    let aks = instance(&st, m, "azurerm_kubernetes_cluster.this", &Json::Null);
    let config = &aks["attributes"]["kube_config"][0];
    let admin = Admin::new(
        &sb,
        config["host"].as_str().expect("host"),
        config["cluster_ca_certificate"].as_str().expect("CA"),
    );
    let secret = admin.secret("ml");
    // The Secret is the cluster's to give: not without a token.
    let path = "/api/v1/namespaces/ml/secrets/strata-checkpoints";
    assert_eq!(admin.call(path, "Bearer not-a-token").0, 401);
    assert_eq!(secret.keys().collect::<Vec<_>>(), KEYS, "{secret:?}");
    let key = &secret["AWS_ACCESS_KEY_ID"];
    assert!(
        key.len() == 20
            && key
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()),
        "an S3-shaped access key: {key}"
    );
    assert_eq!(secret["AWS_SECRET_ACCESS_KEY"].len(), 40);
    assert_eq!(secret["AWS_ENDPOINT_URL"], gateway);
    assert_eq!(secret["AWS_REGION"], "eastus");
    assert_eq!(secret["BUCKET"], "acme-train-ckpt-eastus");
    assert_eq!(secret["AWS_REQUEST_CHECKSUM_CALCULATION"], "WHEN_REQUIRED");
    let account = admin.get("/api/v1/namespaces/ml/serviceaccounts/strata-checkpoints");
    assert_eq!(account["metadata"]["name"], "strata-checkpoints");

    // The gateway: s3proxy pinned, Azure's SDK behind it with no key, its
    // pods under workload identity, and a Service that selects them.
    let ns = "/apis/apps/v1/namespaces/strata-checkpoints";
    let deployment = admin.get(&format!("{ns}/deployments/strata-checkpoints-gateway"));
    let pod = &deployment["spec"]["template"];
    let container = &pod["spec"]["containers"][0];
    assert!(
        container["image"]
            .as_str()
            .is_some_and(|i| i.starts_with("andrewgaul/s3proxy:")),
        "{container}"
    );
    let env: BTreeMap<&str, &Json> = container["env"]
        .as_array()
        .expect("env")
        .iter()
        .map(|e| (e["name"].as_str().expect("name"), e))
        .collect();
    assert_eq!(env["JCLOUDS_PROVIDER"]["value"], "azureblob-sdk");
    assert_eq!(env["JCLOUDS_CREDENTIAL"]["value"], "", "no storage key");
    assert_eq!(
        pod["metadata"]["labels"]["azure.workload.identity/use"],
        "true"
    );
    let service =
        admin.get("/api/v1/namespaces/strata-checkpoints/services/strata-checkpoints-gateway");
    for (k, v) in service["spec"]["selector"].as_object().expect("selector") {
        assert_eq!(
            &pod["metadata"]["labels"][k], v,
            "the Service selects the gateway"
        );
    }
    let identity = instance(
        &st,
        m,
        "azurerm_user_assigned_identity.checkpoints",
        &Json::from(0),
    );
    let gateway_account = admin
        .get("/api/v1/namespaces/strata-checkpoints/serviceaccounts/strata-checkpoints-gateway");
    assert_eq!(
        gateway_account["metadata"]["annotations"]["azure.workload.identity/client-id"],
        identity["attributes"]["client_id"]
    );

    let credential = instance(
        &st,
        m,
        "azurerm_federated_identity_credential.checkpoints",
        &Json::from(0),
    );
    let c = &credential["attributes"];
    assert_eq!(c["issuer"], aks["attributes"]["oidc_issuer_url"]);
    assert_eq!(
        c["subject"],
        "system:serviceaccount:strata-checkpoints:strata-checkpoints-gateway"
    );
    let storage = instance(
        &st,
        m,
        "azurerm_storage_account.checkpoints",
        &Json::from(0),
    );
    let a = &storage["attributes"];
    assert_eq!(a["blob_properties"][0]["versioning_enabled"], true, "{a}");
    assert_eq!(a["resource_group_name"], "train-checkpoints");
    let role = instance(
        &st,
        m,
        "azurerm_role_assignment.checkpoints",
        &Json::from(0),
    );
    assert_eq!(role["attributes"]["scope"], a["id"], "the account alone");
    let policy = instance(
        &st,
        m,
        "azurerm_storage_management_policy.checkpoints",
        &Json::from(0),
    );
    let actions = &policy["attributes"]["rule"][0]["actions"][0];
    assert_eq!(
        actions["base_blob"][0]["delete_after_days_since_modification_greater_than"],
        30
    );
    assert_eq!(
        actions["version"][0]["delete_after_days_since_creation"],
        30
    );
    let lock = instance(
        &st,
        m,
        "azurerm_management_lock.checkpoints",
        &Json::from(0),
    );
    assert_eq!(lock["attributes"]["lock_level"], "CanNotDelete");

    let ran = run_job(&secret, &[]);
    assert_eq!(ran["same"], true, "{ran}");
    assert_eq!(ran["credentials"], "env", "{ran}");
    let forged = try_job(
        &secret,
        &[("AWS_SECRET_ACCESS_KEY", "not-the-gateway's-secret")],
    )
    .expect_err("a request signed with another secret");
    assert!(forged.contains("SignatureDoesNotMatch"), "{forged}");

    let keeper = Keeper {
        refusal: "ScopeLocked",
        left: &[
            "module.train_azure.azurerm_management_lock.checkpoints[0]",
            "module.train_azure.azurerm_resource_group.checkpoints[0]",
            "module.train_azure.azurerm_resource_group.this",
            "module.train_azure.azurerm_role_assignment.checkpoints[0]",
            "module.train_azure.azurerm_storage_account.checkpoints[0]",
            "module.train_azure.azurerm_storage_container.checkpoints[0]",
            "module.train_azure.azurerm_storage_management_policy.checkpoints[0]",
            "module.train_azure.azurerm_user_assigned_identity.checkpoints[0]",
        ],
        target: "module.train_azure.azurerm_management_lock.checkpoints",
    };
    destroy(&sb, &work, keeper);
}
