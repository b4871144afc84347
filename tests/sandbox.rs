//! `strata-sandbox`, as README says to try strata with it: started with
//! `--dir`, its `DIR/env` read as a shell would, `examples/multi-cloud`
//! applied unchanged on all three clouds (Canonical's Ubuntu EKS images
//! registered in moto; each cloud's cluster answering as a Kubernetes
//! stand-in of its own, reached through the cloud's credential plugin; the
//! GPU Operator installed by the helm stand-in), a second plan empty, the
//! cost of what was made, and a destroy that leaves the state empty.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The sandbox binary, built beside strata's by `cargo test --workspace`.
fn sandbox_binary() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_strata")).with_file_name("strata-sandbox");
    assert!(
        bin.exists(),
        "{} is not built: run the suite as .ci/run does (cargo test --workspace), or cargo build -p strata-sandbox",
        bin.display()
    );
    bin
}

struct Sandbox {
    child: Child,
    env: BTreeMap<String, String>,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `export K='V'` lines as a shell reads them; `PATH` with `"$PATH"` put
/// back at its end.
fn read_env(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((k, v)) = line.strip_prefix("export ").and_then(|l| l.split_once('=')) else {
            continue;
        };
        let value = v
            .replace(
                ":\"$PATH\"",
                &format!(":{}", std::env::var("PATH").unwrap_or_default()),
            )
            .replace('\'', "");
        out.insert(k.to_string(), value);
    }
    out
}

fn start(dir: &Path) -> Sandbox {
    if std::env::var("STRATA_MOTO_SERVER").is_err() {
        panic!("the sandbox test needs moto: run ./.ci/run, or set STRATA_MOTO_SERVER");
    }
    let child = Command::new(sandbox_binary())
        .args(["--dir", &dir.display().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the sandbox starts");
    let started = Instant::now();
    let env_file = dir.join("env");
    while !env_file.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "no {} within 90 s",
            env_file.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(200));
    let env = read_env(&std::fs::read_to_string(&env_file).expect("env"));
    Sandbox { child, env }
}

#[test]
fn the_multi_cloud_example_applies_in_the_sandbox() {
    let dir = common::scratch("sandbox", "multi");
    let sb = start(&dir.join("sandbox"));
    for k in [
        "AWS_ENDPOINT_URL",
        "GOOGLE_CONTAINER_CUSTOM_ENDPOINT",
        "ARM_RESOURCE_MANAGER_ENDPOINT",
        "SSL_CERT_FILE",
        "PATH",
    ] {
        assert!(sb.env.contains_key(k), "env sets {k}: {:?}", sb.env);
    }
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/multi-cloud/cluster.hcl");
    std::fs::copy(example, work.join("cluster.hcl")).expect("the example");
    let strata = |args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
        c.args(args)
            .current_dir(&work)
            .stdin(Stdio::null())
            .env("NO_COLOR", "1")
            .env("STRATA_CHECK_SETTLE", "10")
            .env_remove("AWS_PROFILE")
            .env_remove("KUBE_CONFIG_PATH")
            .envs(&sb.env);
        common::output(c)
    };
    let (code, out) = strata(&["apply", "--auto-approve"]);
    assert_eq!(code, 0, "apply in the sandbox:\n{out}");
    assert!(out.contains("Apply complete! Resources: 57 added"), "{out}");
    let helm = std::fs::read_to_string(&sb.env["STANDIN_HELM_LOG"]).expect("the helm log");
    assert_eq!(
        helm.lines().filter(|l| l.contains("\"upgrade\"")).count(),
        3,
        "the operator installed on each cloud's cluster:\n{helm}"
    );
    let (code, out) = strata(&["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan is empty:\n{out}");
    let (code, out) = strata(&["cost"]);
    assert_eq!(code, 0, "{out}");
    for pool in ["p5.48xlarge", "a3-highgpu-8g", "Standard_ND96isr_H100_v5"] {
        assert!(out.contains(pool), "{out}");
    }
    let (code, out) = strata(&["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "destroy:\n{out}");
    let (code, out) = strata(&["state", "list"]);
    assert_eq!((code, out.trim()), (0, ""), "nothing left in state");
}
