//! `strata-sandbox`, as README says to try strata with it: started with
//! `--dir`, its `DIR/env` read as a shell would, `examples/multi-cloud`
//! applied unchanged on all three clouds (Canonical's Ubuntu EKS images
//! registered in moto; each cloud's cluster answering as a Kubernetes
//! stand-in of its own, reached through the cloud's credential plugin; the
//! GPU Operator installed by the helm stand-in), a second plan empty, the
//! cost of what was made, and a destroy that leaves the state empty.

mod common;

use common::sandbox::start;
use std::path::Path;

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
    let strata = |args: &[&str]| sb.strata(&work, args);
    let (code, out) = strata(&["apply", "--auto-approve"]);
    assert_eq!(code, 0, "apply in the sandbox:\n{out}");
    assert!(out.contains("Apply complete! Resources: 75 added"), "{out}");
    let helm = std::fs::read_to_string(&sb.env["STANDIN_HELM_LOG"]).expect("the helm log");
    // The operator, Kueue and KubeRay on each cloud's cluster.
    for release in ["\"gpu-operator\"", "\"kueue\"", "\"kuberay-operator\""] {
        let installs = helm
            .lines()
            .filter(|l| l.contains("\"upgrade\"") && l.contains(release))
            .count();
        assert_eq!(installs, 3, "{release} on each cluster:\n{helm}");
    }
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
