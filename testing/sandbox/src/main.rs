//! `strata-sandbox --dir DIR`: every stand-in on 127.0.0.1 — moto (the AWS
//! emulator) behind the test proxy, and the GCP and Azure stand-ins, each
//! cloud's clusters answering as a Kubernetes stand-in of its own; the
//! helm stand-in — and `DIR/env`, shell `export` lines that point strata's
//! drivers at them. Runs until killed, then stops what it started.
//!
//! Its control endpoint (`STRATA_SANDBOX_CONTROL` in `DIR/env`) takes
//! `POST /capacity` to make a cloud short of capacity somewhere, and
//! `DELETE /capacity` to end every shortage: how a failover is shown;
//! `POST /clock` (`{"now": "<RFC 3339>"}`) sets the time the stand-ins
//! keep (a Capacity Block's window), `DELETE /clock` gives back the
//! system's; `POST /preempt` (`{"cloud": "aws" or "gcp", "pool", "nodes", "at"}`)
//! has the cloud preempt that many of a pool's VMs and record it as the
//! cloud does; `POST /egress` (`{"cloud": "aws" or "gcp", "bytes", "at"}`) meters
//! bytes sent out through its NAT gateways; `POST /hold` (`{"call":
//! "PurchaseCapacityBlock"}`) has the AWS proxy act on that call and
//! hold its answer back an hour, `DELETE /hold` answers again.
//! `STRATA_SANDBOX_AZURE_S3_GATEWAY` is where the checkpoint gateway of
//! its AKS clusters answers (see `strata_standin::s3gateway`).
//!
//! moto is `STRATA_MOTO_SERVER`, else the virtual environment `.ci/run`
//! makes (`~/.cache/strata-venv`), made here when absent. It starts with
//! Canonical's Ubuntu EKS node images registered (what `modules/aws`
//! looks for), so the examples apply unchanged.

mod moto;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use strata_standin::capacity::{self, ByCloud};
use strata_standin::{azure, gcp, kubernetes, s3gateway};

/// The GCP project and Azure subscription the stand-ins serve.
const PROJECT: &str = "acme-ml";

fn main() -> ExitCode {
    let dir = match dir_argument(std::env::args().skip(1)) {
        Ok(d) => d,
        Err(why) => {
            eprintln!("strata-sandbox: {why}\nusage: strata-sandbox --dir DIR");
            return ExitCode::from(1);
        }
    };
    match run(&dir) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("strata-sandbox: {why}");
            ExitCode::from(1)
        }
    }
}

fn dir_argument(mut args: impl Iterator<Item = String>) -> Result<PathBuf, String> {
    match (args.next().as_deref(), args.next(), args.next()) {
        (Some("--dir"), Some(d), None) => Ok(PathBuf::from(d)),
        _ => Err("give the folder for its files with --dir DIR".into()),
    }
}

/// An I/O error, said with what was being done.
fn io(what: &'static str) -> impl Fn(std::io::Error) -> String {
    move |e| format!("{what}: {e}")
}

/// Starts everything, writes `DIR/env`, and waits to be killed.
fn run(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir.join("bin")).map_err(io("cannot make the folder"))?;
    let dir = dir.canonicalize().map_err(io("cannot find the folder"))?;
    // A Kubernetes stand-in per cloud: each cloud's clusters are its own,
    // as they would be (the GPU Operator's release on one is not on another).
    let kube = |cloud: &str| {
        kubernetes::start().map_err(|e| format!("the Kubernetes stand-in for {cloud}: {e}"))
    };
    let (eks, gke, aks) = (kube("AWS")?, kube("GCP")?, kube("Azure")?);
    let gcp = gcp::start_with_kube(gke.endpoint()).map_err(io("the GCP stand-in"))?;
    let azure = azure::start_with_kube(aks.endpoint()).map_err(io("the Azure stand-in"))?;
    let clock = strata_standin::clock::Clock::default();
    let aws_nodes = strata_standin::node_records::NodeRecords::new(clock.clone());
    let aws_nat = strata_standin::cloudwatch::NatMetrics::default();
    let preempters = [
        ("aws".to_string(), aws_nodes.preempter()),
        ("gcp".to_string(), gcp.preempter()),
        ("azure".to_string(), azure.preempter()),
    ];
    let shortages = ByCloud {
        aws: Default::default(),
        gcp: gcp.shortages(),
        azure: azure.shortages(),
        clock,
        preempters: capacity::ByName(preempters.into()),
        egressers: capacity::ByName(
            [
                ("aws".to_string(), aws_nat.egresser()),
                ("gcp".to_string(), gcp.egresser()),
                ("azure".to_string(), azure.egresser()),
            ]
            .into(),
        ),
        holds: Default::default(),
    };
    gcp.keep_time(shortages.clock.clone());
    // The S3 gateway strata runs on AKS for checkpoints, reached here
    // from outside the cluster (`runtime { checkpoints { endpoint } }`).
    let gateway =
        s3gateway::start(azure.blobs(), aks.endpoint()).map_err(io("the S3 gateway stand-in"))?;
    let handles = strata_standin::proxy::Handles {
        shortages: shortages.aws.clone(),
        records: aws_nodes,
        holds: shortages.holds.clone(),
        nat: aws_nat,
    };
    let moto = moto::start(&dir, &eks, handles)?;
    let control = capacity::control(shortages).map_err(io("the control endpoint"))?;
    // The Azure stand-in's CA, for `SSL_CERT_FILE`: Azure's clients trust
    // only what it names.
    let ca = dir.join("azure-ca.pem");
    std::fs::write(&ca, &azure.ca_pem).map_err(io("cannot write azure-ca.pem"))?;
    // The credential plugins each cloud's kubeconfig runs, answering with
    // the token the Kubernetes stand-in accepts.
    for plugin in ["aws", "gke-gcloud-auth-plugin", "kubelogin"] {
        write_credential_plugin(&dir.join("bin").join(plugin))
            .map_err(io("cannot write a credential plugin to bin"))?;
    }
    let env = Env {
        dir: &dir,
        moto: &moto.url,
        gcp: &gcp,
        azure: &azure.server.url,
        arm_token: &azure.issue_token(),
        ca: &ca,
        control: &control.url,
        gateway: &gateway.server.url,
    };
    std::fs::write(dir.join("env"), env.text()).map_err(io("cannot write env"))?;
    println!(
        "strata-sandbox: AWS (moto {}) {}, GCP {}, Azure {}; their clusters' Kubernetes {}, {}, {}; control {}\nRun `. {}/env` in a shell, then strata as usual. Stop with Ctrl-C.",
        moto.version,
        moto.url,
        gcp.server.url,
        azure.server.url,
        eks.server.url,
        gke.server.url,
        aks.server.url,
        control.url,
        dir.display()
    );
    let _ = std::io::stdout().flush();
    loop {
        std::thread::park();
    }
}

/// An exec credential plugin (`aws eks get-token`, GKE's and AKS's), as
/// the kubernetes and helm providers call it: the token the Kubernetes
/// stand-in accepts.
fn write_credential_plugin(path: &Path) -> std::io::Result<()> {
    let credential = serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "kind": "ExecCredential",
        "status": {"token": kubernetes::TOKEN},
    });
    std::fs::write(path, format!("#!/bin/sh\necho '{credential}'\n"))?;
    executable(path)
}

#[cfg(unix)]
fn executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn executable(_: &Path) -> std::io::Result<()> {
    Ok(())
}

/// What `DIR/env` says.
struct Env<'a> {
    dir: &'a Path,
    moto: &'a str,
    gcp: &'a gcp::Gcp,
    azure: &'a str,
    /// A token Resource Manager takes, as `az account get-access-token`
    /// prints one: for calling the stand-in by hand.
    arm_token: &'a str,
    ca: &'a Path,
    control: &'a str,
    gateway: &'a str,
}

impl Env<'_> {
    fn text(&self) -> String {
        let helm = Path::new(env!("CARGO_MANIFEST_DIR")).join("../standin/helm");
        let helm = helm.canonicalize().unwrap_or(helm);
        let mut vars: Vec<(String, String)> = [
            ("AWS_ENDPOINT_URL", self.moto.to_string()),
            ("AWS_ACCESS_KEY_ID", "testing".into()),
            ("AWS_SECRET_ACCESS_KEY", "testing".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_EC2_METADATA_DISABLED", "true".into()),
            ("GOOGLE_PROJECT", PROJECT.into()),
            ("GOOGLE_REGION", "us-central1".into()),
            ("GOOGLE_OAUTH_ACCESS_TOKEN", gcp::STATIC_TOKEN.into()),
            ("SSL_CERT_FILE", self.ca.display().to_string()),
            ("AZURE_AUTHORITY_HOST", self.azure.to_string()),
            ("ARM_RESOURCE_MANAGER_ENDPOINT", self.azure.to_string()),
            ("ARM_SUBSCRIPTION_ID", azure::SUBSCRIPTION.into()),
            ("ARM_TENANT_ID", azure::TENANT.into()),
            ("ARM_CLIENT_ID", azure::CLIENT_ID.into()),
            ("ARM_CLIENT_SECRET", azure::CLIENT_SECRET.into()),
            // Bearer tokens the stand-ins take, to call them by hand (curl
            // -H "Authorization: Bearer $…"), as the clouds' own CLIs give
            // them; a request without one is refused, as the clouds refuse it.
            ("STRATA_SANDBOX_ARM_TOKEN", self.arm_token.to_string()),
            ("STRATA_SANDBOX_KUBE_TOKEN", kubernetes::TOKEN.into()),
            (
                "STANDIN_HELM_LOG",
                self.dir.join("helm.log").display().to_string(),
            ),
            ("STRATA_SANDBOX_CONTROL", self.control.to_string()),
            ("STRATA_SANDBOX_AZURE_S3_GATEWAY", self.gateway.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        for (api, short) in [
            ("COMPUTE", "compute"),
            ("CONTAINER", "container"),
            ("IAM", "iam"),
            ("RESOURCE_MANAGER", "crm"),
            ("STORAGE", "storage"),
            ("MONITORING", "monitoring"),
        ] {
            vars.push((
                format!("GOOGLE_{api}_CUSTOM_ENDPOINT"),
                self.gcp.endpoint(short),
            ));
        }
        let mut out =
            String::from("# strata-sandbox: point strata at the stand-ins on 127.0.0.1.\n");
        for (k, v) in vars {
            out.push_str(&format!("export {k}={}\n", quoted(&v)));
        }
        out.push_str(&format!(
            "export PATH={}:{}:\"$PATH\"\nunset AWS_PROFILE KUBE_CONFIG_PATH KUBE_HOST GOOGLE_APPLICATION_CREDENTIALS\n",
            quoted(&self.dir.join("bin").display().to_string()),
            quoted(&helm.display().to_string())
        ));
        out
    }
}

/// A shell word: single-quoted, quotes inside escaped.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_only_a_dir() {
        let args = |a: &[&str]| dir_argument(a.iter().map(|s| s.to_string()));
        assert_eq!(args(&["--dir", "x"]), Ok(PathBuf::from("x")));
        assert!(args(&[]).is_err());
        assert!(args(&["--dir"]).is_err());
        assert!(args(&["--dir", "x", "y"]).is_err());
        assert_eq!(quoted("it's"), "'it'\\''s'");
    }
}
