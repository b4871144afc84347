//! The `cluster` spec end to end: `examples/single-cloud` applied on AWS
//! (moto, its EKS endpoint pointed at the Kubernetes stand-in by the test
//! proxy; the stand-in `helm`; an `aws` that hands out the stand-in's
//! token), then planned with a second cloud: only creates, all on the new
//! cloud, with the same pools. Removing the cloud again plans only its
//! deletes.

mod common;

use common::moto::{env_for, Moto};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use strata_standin::kubernetes::{self, Kube};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A copy of an example in a scratch folder, with `edit` applied to its
/// cluster.hcl.
fn example(name: &str, tag: &str, edit: &dyn Fn(String) -> String) -> PathBuf {
    let dir = common::scratch("cluster", tag);
    let text = std::fs::read_to_string(root().join("examples").join(name).join("cluster.hcl"))
        .expect("the example");
    std::fs::write(dir.join("cluster.hcl"), edit(text)).expect("write");
    dir
}

/// `aws eks get-token` as the stand-in cluster accepts it.
fn fake_aws(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let aws = bin.join("aws");
    std::fs::write(
        &aws,
        format!(
            "#!/bin/sh\necho '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{}\"}}}}'\n",
            kubernetes::TOKEN
        ),
    )
    .expect("write aws");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&aws, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    bin
}

fn strata(dir: &Path, m: &Moto, args: &[&str]) -> (i32, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
    let path = format!(
        "{}:{}:{}",
        fake_aws(dir).display(),
        root().join("testing/standin/helm").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    c.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .env("PATH", path)
        .env("STANDIN_HELM_LOG", dir.join("helm.log"))
        .env("STRATA_CHECK_SETTLE", "10")
        .env_remove("KUBE_CONFIG_PATH")
        .env_remove("KUBE_HOST");
    env_for(&mut c, m);
    common::output(c)
}

/// An image where the AWS module looks for Canonical's Ubuntu EKS nodes
/// (moto has none): registered in the test account, which the spec's
/// `node_image_owners = ["self"]` then searches.
fn ubuntu_image(m: &Moto) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let conf = rt.block_on(
        aws_config::defaults(aws_config::BehaviorVersion::latest())
            .endpoint_url(&m.url)
            .region(aws_config::Region::new("us-east-1"))
            .credentials_provider(aws_sdk_ec2::config::Credentials::new(
                "testing", "testing", None, None, "test",
            ))
            .load(),
    );
    let ec2 = aws_sdk_ec2::Client::new(&conf);
    rt.block_on(
        ec2.register_image()
            .name("ubuntu-eks/k8s_1.31/images/hvm-ssd/ubuntu-jammy-22.04-amd64-server-20261101")
            .root_device_name("/dev/sda1")
            .send(),
    )
    .expect("RegisterImage");
}

fn on_moto(text: String) -> String {
    text.replace(
        "cloud \"aws\" {\n    region = \"us-east-1\"\n  }",
        "cloud \"aws\" {\n    region            = \"us-east-1\"\n    node_image_owners = [\"self\"]\n  }",
    )
}

fn plan_json(dir: &Path, m: &Moto, clouds: &str) -> Json {
    let (code, out) = strata(
        dir,
        m,
        &[
            "plan",
            "--format",
            "json",
            "--var",
            &format!("clouds={clouds}"),
        ],
    );
    assert_eq!(code, 0, "plan with clouds = {clouds}:\n{out}");
    let start = out.find('{').expect("JSON in the output");
    serde_json::from_str(&out[start..]).unwrap_or_else(|e| panic!("plan JSON: {e}\n{out}"))
}

/// Resource changes other than no-ops: (address, actions).
fn changes(plan: &Json) -> Vec<(String, Vec<String>)> {
    plan["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let actions = c["change"]["actions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect::<Vec<_>>();
            (c["address"].as_str().unwrap_or("").to_string(), actions)
        })
        .filter(|(_, a)| a != &["no-op"])
        .collect()
}

/// The planned (or kept) object at `address`.
fn after<'a>(plan: &'a Json, address: &str) -> &'a Json {
    plan["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["address"] == address)
        .map(|c| &c["change"]["after"])
        .unwrap_or_else(|| panic!("{address} is not in the plan"))
}

#[test]
fn a_second_cloud_is_only_additions_on_that_cloud() {
    let kube: Kube = kubernetes::start().expect("the Kubernetes stand-in starts");
    let m = common::moto::start(Some(&kube));
    ubuntu_image(&m);
    let dir = example("single-cloud", "second", &on_moto);

    let (code, out) = strata(&dir, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "apply on AWS:\n{out}");
    assert!(out.contains("Apply complete! Resources: 32 added"), "{out}");
    let (code, out) = strata(&dir, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan is empty:\n{out}");

    for (cloud, pool_type, pool_addr) in [
        (
            "gcp",
            "google_container_node_pool",
            "module.train_gcp.google_container_node_pool.pool[\"h100\"]",
        ),
        (
            "azure",
            "azurerm_kubernetes_cluster_node_pool",
            "module.train_azure.azurerm_kubernetes_cluster_node_pool.pool[\"h100\"]",
        ),
    ] {
        let plan = plan_json(&dir, &m, &format!("[\"aws\",\"{cloud}\"]"));
        let changed = changes(&plan);
        assert!(!changed.is_empty(), "adding {cloud} changes something");
        for (addr, actions) in &changed {
            assert!(
                addr.starts_with(&format!("module.train_{cloud}.")),
                "{addr} ({actions:?}) is not on {cloud}"
            );
            assert_eq!(actions, &["create"], "{addr} is not a create");
        }
        let pools = |t: &str| {
            changed
                .iter()
                .filter(|(a, _)| a.contains(&format!(".{t}.")))
                .count()
        };
        assert_eq!(pools(pool_type), 1, "one GPU pool on {cloud}");
        // The same GPU model, driver and operator: the operator's values on
        // both clouds.
        let release = |c: &str| {
            after(
                &plan,
                &format!("module.train_{c}.module.gpu_operator.helm_release.gpu_operator"),
            )
            .clone()
        };
        let (aws_rel, new_rel) = (release("aws"), release(cloud));
        assert_eq!(aws_rel["version"], new_rel["version"]);
        assert_eq!(
            aws_rel["values"]["driver"]["version"], "570.124.06",
            "{aws_rel}"
        );
        assert_eq!(aws_rel["values"]["driver"], new_rel["values"]["driver"]);
        let aws_pool = after(&plan, "module.train_aws.aws_eks_node_group.pool[\"h100\"]");
        let new_pool = after(&plan, pool_addr);
        let (labels, taints) = match cloud {
            "gcp" => (
                &new_pool["node_config"][0]["labels"],
                new_pool["node_config"][0]["taint"].clone(),
            ),
            _ => (&new_pool["node_labels"], new_pool["node_taints"].clone()),
        };
        assert_eq!(&aws_pool["labels"], labels, "labels on {cloud}");
        assert_eq!(aws_pool["labels"]["workload"], "training");
        let aws_taint = &aws_pool["taint"][0];
        match cloud {
            "gcp" => {
                assert_eq!(taints[0]["key"], aws_taint["key"]);
                assert_eq!(taints[0]["value"], aws_taint["value"]);
                assert_eq!(taints[0]["effect"], aws_taint["effect"]);
            }
            _ => assert_eq!(
                taints,
                serde_json::json!(["nvidia.com/gpu=present:NoSchedule"]),
                "AKS spells the same taint its own way"
            ),
        }
    }

    // Removing the cloud: only deletes, all of them on AWS. The GPU
    // Operator's objects live inside the cluster and go with it: forgotten,
    // not deleted one by one through an API server about to disappear.
    let plan = plan_json(&dir, &m, "[]");
    let changed = changes(&plan);
    assert_eq!(changed.len(), 32, "{changed:?}");
    for (addr, actions) in &changed {
        assert!(addr.starts_with("module.train_aws."), "{addr}");
        let inside = addr.starts_with("module.train_aws.module.gpu_operator.");
        let want = if inside { "forget" } else { "delete" };
        assert_eq!(actions, &[want], "{addr}");
    }
    let (code, out) = strata(&dir, &m, &["apply", "--auto-approve", "--var", "clouds=[]"]);
    assert_eq!(code, 0, "removing AWS:\n{out}");
    assert!(out.contains("30 destroyed"), "{out}");
    let (code, out) = strata(&dir, &m, &["state", "list"]);
    assert_eq!((code, out.trim()), (0, ""), "nothing left in state");
}
