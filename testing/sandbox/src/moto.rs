//! moto on a free port of 127.0.0.1 behind the test proxy, its EKS
//! clusters answering as the Kubernetes stand-in.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use strata_standin::kubernetes::Kube;

/// The moto release the tests are written against.
const MOTO: &str = "moto[s3]==5.2.5";

pub struct Moto {
    child: Child,
    /// The proxy's URL: what `AWS_ENDPOINT_URL` names.
    pub url: String,
    pub version: String,
    _proxy: strata_standin::Server,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Kubernetes minor versions whose Ubuntu EKS images are registered.
const VERSIONS: std::ops::RangeInclusive<u32> = 28..=36;

/// Canonical's AWS account, which publishes the Ubuntu EKS images.
const CANONICAL: &str = "099720109477";

pub fn start(
    dir: &Path,
    kube: &Kube,
    handles: strata_standin::proxy::Handles,
) -> Result<Moto, String> {
    let server = server()?;
    let amis = dir.join("amis.json");
    std::fs::write(&amis, images().to_string())
        .map_err(|e| format!("cannot write {}: {e}", amis.display()))?;
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))?;
    let mut cmd = Command::new(&server);
    cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .env("MOTO_AMIS_PATH", &amis)
        .env("MOTO_IAM_LOAD_MANAGED_POLICIES", "true")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    die_with_parent(&mut cmd);
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", server.display()))?;
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if started.elapsed() > Duration::from_secs(60) {
            return Err("moto did not start within a minute".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let upstream = format!("http://127.0.0.1:{port}");
    let proxy = strata_standin::proxy::start_with_kube(&upstream, kube.endpoint(), handles)
        .map_err(|e| format!("the proxy in front of moto: {e}"))?;
    Ok(Moto {
        child,
        url: proxy.url.clone(),
        version: MOTO.trim_start_matches("moto[s3]==").to_string(),
        _proxy: proxy,
    })
}

/// `STRATA_MOTO_SERVER`, else `moto_server` in the virtual environment
/// `.ci/run` keeps, made when absent (pip from the package index, once).
fn server() -> Result<PathBuf, String> {
    if let Ok(s) = std::env::var("STRATA_MOTO_SERVER") {
        return Ok(PathBuf::from(s));
    }
    let home = std::env::var("HOME").map_err(|_| "HOME is not set".to_string())?;
    let venv = std::env::var("STRATA_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(&home).join(".cache/strata-venv"));
    let server = venv.join("bin/moto_server");
    if server.exists() {
        return Ok(server);
    }
    eprintln!(
        "strata-sandbox: making {} with {MOTO} (once)",
        venv.display()
    );
    let run = |program: &Path, args: &[&str]| -> Result<(), String> {
        let status = Command::new(program)
            .args(args)
            .status()
            .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
        match status.success() {
            true => Ok(()),
            false => Err(format!("{} {} failed", program.display(), args.join(" "))),
        }
    };
    let venv_arg = venv.display().to_string();
    run(Path::new("python3"), &["-m", "venv", &venv_arg])?;
    run(
        &venv.join("bin/pip"),
        &[
            "install",
            "--quiet",
            "--disable-pip-version-check",
            MOTO,
            "flask",
            "flask-cors",
        ],
    )?;
    Ok(server)
}

/// Ubuntu EKS node images for each version, owned by Canonical: moto loads
/// them instead of its own set (`MOTO_AMIS_PATH`).
fn images() -> serde_json::Value {
    VERSIONS
        .map(|minor| {
            serde_json::json!({
                "ami_id": format!("ami-0ubuntu{minor:08}"),
                "state": "available",
                "public": true,
                "owner_id": CANONICAL,
                "image_location": format!("{CANONICAL}/ubuntu-eks/k8s_1.{minor}"),
                "sriov": "simple",
                "root_device_type": "ebs",
                "root_device_name": "/dev/sda1",
                "description": format!("Canonical, Ubuntu EKS Node OS (k8s_1.{minor}), 22.04 LTS, amd64"),
                "image_type": "machine",
                "architecture": "x86_64",
                "name": format!("ubuntu-eks/k8s_1.{minor}/images/hvm-ssd/ubuntu-jammy-22.04-amd64-server-20261101"),
                "virtualization_type": "hvm",
                "hypervisor": "xen",
            })
        })
        .collect()
}

/// moto is stopped when the sandbox ends, however it ends.
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe and touches only this child.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_: &mut Command) {}
