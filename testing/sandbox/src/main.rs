//! `strata-sandbox --dir DIR`: every stand-in on 127.0.0.1 — moto (the AWS
//! emulator) behind the test proxy, whose EKS clusters answer as the
//! Kubernetes stand-in; the GCP and Azure stand-ins; the helm stand-in —
//! and `DIR/env`, shell `export` lines that point strata's drivers at
//! them. Runs until killed, then stops what it started.
//!
//! moto is `STRATA_MOTO_SERVER`, else the virtual environment `.ci/run`
//! makes (`~/.cache/strata-venv`), made here when absent. It starts with
//! Canonical's Ubuntu EKS node images registered (what `modules/aws`
//! looks for), so the examples apply unchanged.

mod moto;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use strata_standin::{azure, gcp, kubernetes};

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
    let kube = kubernetes::start().map_err(io("the Kubernetes stand-in"))?;
    let moto = moto::start(&dir, &kube)?;
    let gcp = gcp::start().map_err(io("the GCP stand-in"))?;
    let azure = azure::start().map_err(io("the Azure stand-in"))?;
    // The stand-ins' own CAs, for `SSL_CERT_FILE`: Azure's clients trust
    // only what it names, and the helm stand-in reaches the cluster under it.
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, format!("{}\n{}", azure.ca_pem, kube.ca_pem))
        .map_err(io("cannot write ca.pem"))?;
    write_aws_cli(&dir.join("bin/aws")).map_err(io("cannot write bin/aws"))?;
    let env = Env {
        dir: &dir,
        moto: &moto.url,
        gcp: &gcp,
        azure: &azure.server.url,
        ca: &ca,
    };
    std::fs::write(dir.join("env"), env.text()).map_err(io("cannot write env"))?;
    println!(
        "strata-sandbox: AWS (moto {}) {}, GCP {}, Azure {}, Kubernetes {}\nRun `. {}/env` in a shell, then strata as usual. Stop with Ctrl-C.",
        moto.version,
        moto.url,
        gcp.server.url,
        azure.server.url,
        kube.server.url,
        dir.display()
    );
    let _ = std::io::stdout().flush();
    loop {
        std::thread::park();
    }
}

/// `aws eks get-token`, as the kubernetes and helm providers of an EKS
/// cluster call it: the token the Kubernetes stand-in accepts.
fn write_aws_cli(path: &Path) -> std::io::Result<()> {
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
    ca: &'a Path,
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
            (
                "STANDIN_HELM_LOG",
                self.dir.join("helm.log").display().to_string(),
            ),
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
