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
/// examples/multi-cloud's checkpoints block, as the edits below replace it.
const EXAMPLE_CHECKPOINTS: &str = "    checkpoints {\n      bucket            = \"acme-train-ckpt\"\n      versioning        = true\n      expire_after_days = 30\n    }";

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
    max_nodes_changes_the_cost(&dir, &m);

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
                &format!("module.train_{c}.module.gpu_operator[0].helm_release.gpu_operator"),
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
        // AKS labels (and taints) spot nodes itself, so a spot pool there
        // declares its label too; the portability check leaves it out.
        let mut labels = labels.clone();
        if let Some(m) = labels.as_object_mut().filter(|_| cloud == "azure") {
            assert_eq!(
                m.remove("kubernetes.azure.com/scalesetpriority"),
                Some(serde_json::json!("spot")),
                "{new_pool}"
            );
        }
        assert_eq!(aws_pool["labels"], labels, "labels on {cloud}");
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
                serde_json::json!([
                    "nvidia.com/gpu=present:NoSchedule",
                    "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"
                ]),
                "AKS spells the same taint its own way, and adds its spot taint"
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
        let inside = addr.starts_with("module.train_aws.module.gpu_operator[0].");
        let want = if inside { "forget" } else { "delete" };
        assert_eq!(actions, &[want], "{addr}");
    }
    let (code, out) = strata(&dir, &m, &["apply", "--auto-approve", "--var", "clouds=[]"]);
    assert_eq!(code, 0, "removing AWS:\n{out}");
    assert!(out.contains("30 destroyed"), "{out}");
    let (code, out) = strata(&dir, &m, &["state", "list"]);
    assert_eq!((code, out.trim()), (0, ""), "nothing left in state");
}

/// On the applied spot pool: `strata cost` prices what the state holds,
/// and raising `max_nodes` from 4 to 16 shows 12 more nodes' worth in
/// the plan's JSON, markdown and human forms.
fn max_nodes_changes_the_cost(dir: &Path, m: &Moto) {
    const POOL: &str = "module.train_aws.aws_eks_node_group.pool[\"h100\"]";
    let pool_of = |cost: &Json| {
        cost["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["address"] == POOL)
            .cloned()
            .unwrap_or_else(|| panic!("{POOL} is not priced: {cost:#}"))
    };
    let amount = |j: &Json| {
        strata_provider::money::Usd::parse(&j.to_string()).unwrap_or_else(|| panic!("{j}"))
    };
    let (code, out) = strata(dir, m, &["cost", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let now: Json = serde_json::from_str(&out).expect("cost JSON");
    let p = pool_of(&now);
    assert_eq!(
        (p["capacity"].as_str(), p["instance_type"].as_str()),
        (Some("spot"), Some("p5.48xlarge"))
    );
    assert_eq!(p["prior"]["nodes"], p["nodes"], "the state's pool as it is");
    let node = amount(&p["node_hour"]);
    let file = dir.join("cluster.hcl");
    let spec = std::fs::read_to_string(&file).expect("spec");
    std::fs::write(
        &file,
        spec.replace("max_nodes     = 4", "max_nodes     = 16"),
    )
    .expect("edit");
    let delta = node.times(12);
    let plan = plan_json(dir, m, "[\"aws\"]");
    let p = pool_of(&plan["cost"]);
    assert_eq!(
        amount(&p["hourly"]["max"]) - amount(&p["prior"]["hourly"]["max"]),
        delta
    );
    let (code, md) = strata(dir, m, &["plan", "--format", "markdown"]);
    assert_eq!(code, 0, "{md}");
    assert!(
        md.contains(&format!("**Cost: {}/h at max**", delta.signed_dollars())),
        "{md}"
    );
    let (code, human) = strata(dir, m, &["plan"]);
    assert_eq!(code, 0, "{human}");
    assert!(human.contains("0–16 (was 0–4)"), "{human}");
    std::fs::write(&file, spec).expect("restore");
}

/// Runs strata offline (no cloud is called: validate, or a plan on empty
/// state) and gives its exit code and output with lines joined.
fn offline(dir: &Path, args: &[&str]) -> (i32, String) {
    let mut c = common::run::strata(dir);
    c.args(args).env("AWS_EC2_METADATA_DISABLED", "true");
    let (code, out) = common::output(c);
    (code, out.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// `cloud "NAME" {` of the multi-cloud example with `extra` inside.
fn in_cloud(text: String, cloud: &str, extra: &str) -> String {
    let head = format!("cloud \"{cloud}\" {{");
    text.replacen(&head, &format!("{head}\n{extra}"), 1)
}

#[test]
fn every_portability_rule_names_the_cloud_the_pool_and_the_field() {
    let cases: [(&str, &str, &str, &str); 7] = [
        (
            "gpu",
            "gcp",
            "node_pool \"h100\" { gpu = \"A100\" }",
            "On gcp node pool \"h100\" has gpu = \"A100\", on aws \"H100\"",
        ),
        (
            "gpus_per_node",
            "gcp",
            "node_pool \"h100\" {\n gpus_per_node = 4\n instance_type = \"a3-highgpu-4g\"\n}",
            "has gpus_per_node = 4, on aws 8",
        ),
        (
            "driver_version",
            "azure",
            "gpu_operator { driver_version = \"550.127.05\" }",
            "has driver_version = \"550.127.05\", on aws \"570.124.06\"",
        ),
        (
            "cuda_version",
            "azure",
            "gpu_operator { cuda_version = \"12.4\" }",
            "has cuda_version = \"12.4\", on aws \"12.8\"",
        ),
        (
            "gpu_operator",
            "gcp",
            "gpu_operator { version = \"v24.9.2\" }",
            "has gpu_operator = \"v24.9.2\", on aws \"v25.3.1\"",
        ),
        (
            "labels",
            "azure",
            "node_pool \"h100\" { labels = { workload = \"inference\" } }",
            // With the runtime, every pool's nodes carry strata's own label.
            "has labels = {\"strata.dev/pool\":\"h100\",\"workload\":\"inference\"}, on aws {\"strata.dev/pool\":\"h100\",\"workload\":\"training\"}",
        ),
        (
            "taints",
            "gcp",
            "node_pool \"h100\" { taints = [] }",
            "has taints = [], on aws [{\"effect\":\"NoSchedule\",",
        ),
    ];
    for (field, cloud, extra, shown) in cases {
        let dir = example("multi-cloud", &format!("rule-{field}"), &|t| {
            in_cloud(t, cloud, extra)
        });
        let (code, out) = offline(&dir, &["validate"]);
        assert_eq!(code, 1, "{field}: {out}");
        let title = format!(
            "cluster \"train\" is not portable: node pool \"h100\" differs in {field} on {cloud}"
        );
        assert!(out.contains(&title), "{field}: {out}");
        assert!(out.contains(shown), "{field}: {out}");
        assert!(
            out.contains(&format!("cloud \"{cloud}\" overrides it here")),
            "{field}: the override is pointed at: {out}"
        );
        assert!(
            out.contains(&format!("allow_divergence = [\"{field}\"]")),
            "{field}: {out}"
        );
        // Said to be intended, the same spec is valid.
        std::fs::write(
            dir.join("cluster.hcl"),
            std::fs::read_to_string(dir.join("cluster.hcl"))
                .expect("read")
                .replacen(
                    "clouds             = var.clouds",
                    &format!("clouds = var.clouds\n  allow_divergence = [\"{field}\"]"),
                    1,
                ),
        )
        .expect("write");
        let (code, out) = offline(&dir, &["validate"]);
        assert_eq!(code, 0, "{field} allowed to diverge: {out}");
    }
}

/// Copies the named modules into the example's ./modules, as a user who
/// edits them would, with one text replaced in every file.
fn copy_modules_edited(dir: &Path, modules: &[&str], from: &str, to: &str) {
    for m in modules {
        let into = dir.join("modules").join(m);
        std::fs::create_dir_all(&into).expect("mkdir");
        for f in std::fs::read_dir(root().join("modules").join(m)).expect("modules") {
            let f = f.expect("entry").path();
            // A module's own tests (`tests/`) are not the user's copy.
            if !f.is_file() {
                continue;
            }
            let text = std::fs::read_to_string(&f).expect("read").replace(from, to);
            std::fs::write(into.join(f.file_name().expect("name")), text).expect("write");
        }
    }
}

#[test]
fn an_edited_module_that_diverges_is_caught_and_blamed() {
    // The user's copy of modules/gcp, whose pools run NoExecute taints.
    let dir = example("multi-cloud", "module-edit", &|t| {
        in_cloud(t, "gcp", "module = \"./modules/gcp\"")
    });
    copy_modules_edited(
        &dir,
        &["gcp", "gpu-operator", "runtime"],
        "effect = local.gke_effect[taint.value.effect]",
        "effect = \"NO_EXECUTE\"",
    );
    for args in [&["validate"][..], &["plan", "--state", "s.tfstate"][..]] {
        let (code, out) = offline(&dir, args);
        assert_eq!(code, 1, "{args:?}: {out}");
        assert!(
            out.contains("node pool \"h100\" differs in taints on gcp"),
            "{args:?}: {out}"
        );
        assert!(
            out.contains("the gcp module (./modules/gcp) makes it so"),
            "{args:?}: {out}"
        );
        assert!(out.contains("\"effect\":\"NoExecute\""), "{args:?}: {out}");
    }
}

/// A user's copy of the runtime module (behind their copy of the GCP
/// module) that names a checkpoint Secret key otherwise: a job moved to
/// GCP would not find `BUCKET`, so validate names the cloud and the field.
#[test]
fn an_edited_runtime_whose_checkpoint_secret_diverges_is_caught() {
    let dir = example("multi-cloud", "checkpoint-edit", &|t| {
        let t = t
            .replace(
                "default = [\"aws\", \"gcp\", \"azure\"]",
                "default = [\"aws\", \"gcp\"]",
            )
            .replace(
                EXAMPLE_CHECKPOINTS,
                "    checkpoints {\n      bucket = \"acme-train-ckpt\"\n    }",
            );
        in_cloud(t, "gcp", "module = \"./modules/gcp\"")
    });
    copy_modules_edited(
        &dir,
        &["gcp", "gpu-operator", "runtime"],
        "\"BUCKET\",",
        "\"S3_BUCKET\",",
    );
    let (code, out) = offline(&dir, &["validate"]);
    assert_eq!(code, 1, "{out}");
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        "the runtime differs in checkpoints on gcp",
        "\"S3_BUCKET\"],",
        "the gcp module (./modules/gcp) makes it so",
        "would not find the same checkpoint Secret",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
}

/// A bucket name known only once planned (a random suffix, the usual way
/// to a globally unique name) is no mistake: the spec takes it and the
/// modules plan the bucket with it.
#[test]
fn a_checkpoint_bucket_named_at_apply_plans() {
    let dir = example("multi-cloud", "checkpoint-random", &|t| {
        t.replace(
            "default = [\"aws\", \"gcp\", \"azure\"]",
            "default = [\"aws\", \"gcp\"]",
        )
        .replace(
            EXAMPLE_CHECKPOINTS,
            "    checkpoints {\n      bucket = \"ckpt-${random_id.suffix.hex}\"\n    }",
        )
    });
    let suffix = "resource \"random_id\" \"suffix\" {\n  byte_length = 4\n}\n";
    std::fs::write(dir.join("suffix.tf"), suffix).expect("write");
    let (code, out) = offline(&dir, &["validate"]);
    assert_eq!(code, 0, "{out}");
}

/// Azure's long form of a region (`East US`) names the same container
/// and S3 region as its short form: a container name takes neither
/// capitals nor spaces.
#[test]
fn an_azure_location_in_its_long_form_names_the_same_bucket() {
    let dir = example("multi-cloud", "checkpoint-east-us", &|t| {
        t.replace(
            "location        = \"eastus\"",
            "location        = \"East US\"",
        )
    });
    let (code, out) = offline(&dir, &["plan", "--var", "clouds=[\"azure\"]"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("name = \"acme-train-ckpt-eastus\""), "{out}");
}

#[test]
fn spec_mistakes_are_errors_at_their_place() {
    type Edit<'a> = &'a dyn Fn(String) -> String;
    let placed = |extra: &'static str| {
        move |t: String| {
            t.replace(
                "capacity      = \"on_demand\"",
                &format!("capacity      = \"on_demand\"\n    nodes = 2\n    placement {{\n{extra}\n    }}"),
            )
        }
    };
    let nodes_over_max = placed("");
    let unknown_capacity = placed("capacity = [\"spot\", \"reserved\"]");
    let bad_wait = placed("wait_for_gpus = \"soon\"");
    let bad_score = placed("min_score = 11");
    let unknown_cloud = placed("order = [\"aws\", \"oci\"]");
    let nowhere = placed("max_price_per_gpu_hour = 1");
    let negative_cap = placed("max_price_per_gpu_hour = -1");
    let typo = placed("cooldown = \"1h\"");
    let reserved_oci = placed("reserved \"oci\" {\n  id = \"h100-reservation\"\n}");
    let reserved_no_id = placed("reserved \"aws\" {\n  region = \"us-east-1\"\n}");
    let reserved_elsewhere =
        placed("reserved \"aws\" {\n  id = \"cr-0123456789abcdef0\"\n  region = \"eu-west-1\"\n}");
    let reserved_typo =
        placed("reserved \"aws\" {\n  id = \"cr-0123456789abcdef0\"\n  zone = \"a\"\n}");
    let block_gcp = placed("capacity_block \"gcp\" {\n  hours = 24\n}");
    let block_hours = placed("capacity_block \"aws\" {\n  hours = 30\n}");
    let block_no_hours = placed("capacity_block \"aws\" {\n  max_price = 10\n}");
    let block_date = placed("capacity_block \"aws\" {\n  hours = 24\n  starts = \"tomorrow\"\n}");
    let block_price = placed("capacity_block \"aws\" {\n  hours = 24\n  max_price = -5\n}");
    let block_unpriced = placed("capacity_block \"aws\" {\n  hours = 24\n  purchase = true\n}");
    let block_flag = placed("capacity_block \"aws\" {\n  hours = 24\n  purchase = \"yes\"\n}");
    let block_typo = placed("capacity_block \"aws\" {\n  hours = 24\n  days = 1\n}");
    let block_twice = placed(
        "capacity_block \"aws\" {\n  hours = 24\n}\ncapacity_block \"aws\" {\n  hours = 48\n}",
    );
    let regions = |list: &'static str| {
        move |t: String| t.replace("region = \"us-east-1\"", &format!("regions = {list}"))
    };
    let regions_empty = regions("[]");
    let regions_twice = regions("[\"us-east-1\", \"us-east-1\"]");
    let regions_long = move |t: String| {
        regions("[\"us-east-1\", \"ap-southeast-2\"]")(t).replace(
            "cluster \"train\"",
            "cluster \"a-training-cluster-with-a-long-name\"",
        )
    };
    let region_and_regions = |t: String| {
        t.replace(
            "region = \"us-east-1\"",
            "region = \"us-east-1\"\n    regions = [\"us-east-1\", \"us-west-2\"]",
        )
    };
    let further_region_without_gpu = regions("[\"us-east-1\", \"eu-west-3\"]");
    let order_over_two_regions =
        move |t: String| regions("[\"us-east-1\", \"us-west-2\"]")(unknown_cloud(t));
    let manager = |with: &'static str| {
        move |t: String| {
            t.replace(
                "      manager {\n        cloud  = \"aws\"\n        region = \"us-east-1\"\n      }\n",
                with,
            )
        }
    };
    let no_manager = manager("");
    let bad_rotation = manager("      manager {\n        cloud  = \"aws\"\n        region = \"us-east-1\"\n      }\n      rotate_after = \"soon\"\n");
    let manager_nowhere = manager("      manager {\n        cloud  = \"oci\"\n      }\n");
    let manager_no_region = manager("      manager {\n        cloud  = \"gcp\"\n      }\n");
    let manager_typo = manager(
        "      manager {\n        cloud  = \"aws\"\n        regoin = \"us-east-1\"\n      }\n",
    );
    // The example's runtime with checkpoints on AWS alone (`fields` in the
    // block; `cloud` in the aws block's runtime).
    let checkpoints = |fields: &'static str, cloud: &'static str| {
        move |t: String| {
            let t = t
                .replace(
                    "default = [\"aws\", \"gcp\", \"azure\"]",
                    "default = [\"aws\"]",
                )
                .replace(
                    EXAMPLE_CHECKPOINTS,
                    &format!("    checkpoints {{\n{fields}\n    }}"),
                );
            t.replace(
                "region = \"us-east-1\"\n  }",
                &format!("region = \"us-east-1\"\n{cloud}\n  }}"),
            )
        }
    };
    let no_bucket = checkpoints("versioning = true", "");
    let bad_bucket = checkpoints("bucket = \"Acme_Checkpoints\"", "");
    let long_bucket = checkpoints("bucket = \"acme-training-checkpoints-for-every-cloud\"", "");
    let bad_days = checkpoints("bucket = \"acme\"\n      expire_after_days = 0", "");
    let bad_flag = checkpoints("bucket = \"acme\"\n      force_destroy = \"yes\"", "");
    let checkpoint_typo = checkpoints("bucket = \"acme\"\n      versoning = true", "");
    let cloud_typo = checkpoints(
        "bucket = \"acme\"",
        "    runtime {\n      checkpoints {\n        endpiont = \"https://s3-fips.us-east-1.amazonaws.com\"\n      }\n    }",
    );
    let cases: [(&str, Edit, &str); 54] = [
        (
            "region",
            &|t| t.replace("region = \"us-east-1\"", "region = \"eu-west-3\""),
            "node_pool \"h100\" on aws: AWS offers 8 × H100 in ap-northeast-1,",
        ),
        (
            "shape",
            &|t| t.replace("gpu           = \"H100\"", "gpu           = \"L40S\""),
            "GCP has no instance type with 8 × L40S; its GPU shapes are",
        ),
        (
            "cloud",
            &|t| {
                t.replace(
                    "default = [\"aws\", \"gcp\", \"azure\"]",
                    "default = [\"aws\", \"oci\"]",
                )
            },
            "\"oci\" is not a cloud strata builds clusters on",
        ),
        (
            "block",
            &|t| t.replace("  cloud \"azure\" {", "  cloud \"azure_old\" {"),
            "cluster \"train\" runs on azure but has no cloud \"azure\" block",
        ),
        (
            "divergence",
            &|t| {
                t.replace(
                    "clouds             = var.clouds",
                    "clouds = var.clouds\n  allow_divergence = [\"colour\"]",
                )
            },
            "\"colour\" is not a field the portability check compares",
        ),
        (
            "capacity",
            &|t| {
                t.replace(
                    "capacity      = \"on_demand\"",
                    "capacity      = \"reserved\"",
                )
            },
            "capacity is \"reserved\"; it must be one of on_demand, spot",
        ),
        (
            "min-negative",
            &|t| t.replace("min_nodes     = 0", "min_nodes     = -3"),
            "min_nodes is -3; it must be a whole number of at least 0",
        ),
        (
            "min-above-max",
            &|t| t.replace("min_nodes     = 0", "min_nodes     = 9"),
            "max_nodes is 4, below min_nodes (9)",
        ),
        (
            "mig",
            &|t| t.replace("mig_strategy   = \"single\"", "mig_strategy   = \"singel\""),
            "mig_strategy is \"singel\"; the GPU Operator accepts none, single, mixed",
        ),
        (
            "clouds-twice",
            &|t| {
                t.replace(
                    "default = [\"aws\", \"gcp\", \"azure\"]",
                    "default = [\"aws\", \"aws\"]",
                )
            },
            "\"aws\" is listed twice in `clouds`",
        ),
        (
            "name",
            &|t| t.replace("cluster \"train\" {", "cluster \"Train_1\" {"),
            "\"Train_1\" cannot name a cluster on every cloud",
        ),
        (
            "cidr",
            &|t| t.replace("cidr = \"10.40.0.0/16\"", "cidr = \"10.40.0.0/33\""),
            "cidr is \"10.40.0.0/33\"; it must be an IPv4 range from /8 to /24",
        ),
        (
            "inside-module",
            &|t| {
                t.replace(
                    "region = \"us-east-1\"",
                    "region = \"us-east-1\"\n    zones = [\"us-east-1a\", \"us-east-1b\", \"us-east-1c\", \"us-east-1d\"]",
                )
            },
            "This is inside the module cluster \"train\" expands into for aws",
        ),
        (
            "region-place",
            &|t| t.replace("region = \"us-east-1\"", "region = \"eu-west-3\""),
            "eu-west-3 has no H100 × 8",
        ),
        (
            "nodes-over-max",
            &|t| nodes_over_max(t).replace("nodes = 2", "nodes = 9"),
            "nodes is 9, more than max_nodes (4)",
        ),
        (
            "placement-without-nodes",
            &|t| nodes_over_max(t).replace("nodes = 2", ""),
            "A placement block places the pool's `nodes`",
        ),
        (
            "placement-capacity",
            &unknown_capacity,
            "\"reserved\" is not a capacity type",
        ),
        ("placement-wait", &bad_wait, "wait_for_gpus is a duration"),
        ("placement-score", &bad_score, "min_score is a whole number from 0 to 10"),
        (
            "placement-order",
            &unknown_cloud,
            "\"oci\" is not one of the clouds this cluster runs on",
        ),
        (
            "placement-cap",
            &nowhere,
            "node_pool \"h100\" has nowhere to go: aws us-east-1 on-demand ($6.88 per GPU-hour, over the cap of $1.00)",
        ),
        (
            "placement-order-regions",
            &order_over_two_regions,
            "\"oci\" is not one of the clouds this cluster runs on with GPU catalogs (aws, azure, gcp).",
        ),
        (
            "placement-cap-negative",
            &negative_cap,
            "max_price_per_gpu_hour cannot be negative",
        ),
        (
            "placement-typo",
            &typo,
            "An argument named \"cooldown\" is not expected in placement",
        ),
        (
            "reserved-cloud",
            &reserved_oci,
            "strata places pools on reserved capacity on aws, azure, gcp (AWS: a Capacity Reservation or Capacity Block, by its cr- id; Azure: a capacity reservation group, by its resource id; GCP: a reservation, by its path); \"oci\" is not one of them.",
        ),
        (
            "reserved-id",
            &reserved_no_id,
            "A reserved block names the capacity by its id",
        ),
        (
            "reserved-region",
            &reserved_elsewhere,
            "cr-0123456789abcdef0 is in eu-west-1, where the cluster does not run; its aws regions are us-east-1.",
        ),
        (
            "reserved-typo",
            &reserved_typo,
            "An argument named \"zone\" is not expected in a reserved block",
        ),
        (
            "block-cloud",
            &block_gcp,
            "strata buys Capacity Blocks on aws; \"gcp\" sells none.",
        ),
        (
            "block-hours",
            &block_hours,
            "EC2 sells Capacity Blocks of whole days up to 14 days",
        ),
        (
            "block-no-hours",
            &block_no_hours,
            "A capacity_block says how long the block lasts, in hours",
        ),
        ("block-date", &block_date, "starts is an RFC 3339 time"),
        (
            "block-price",
            &block_price,
            "max_price is the most paid for the whole block, in USD",
        ),
        (
            "block-unpriced",
            &block_unpriced,
            "A purchase is final: a capacity_block that buys (purchase = true) says the most it pays",
        ),
        ("block-flag", &block_flag, "purchase is true or false"),
        (
            "block-typo",
            &block_typo,
            "An argument named \"days\" is not expected in a capacity_block block",
        ),
        (
            "block-twice",
            &block_twice,
            "A pool's placement finds at most one Capacity Block at a time",
        ),
        (
            "regions-empty",
            &regions_empty,
            "regions is a list of at least one region",
        ),
        (
            "regions-twice",
            &regions_twice,
            "\"us-east-1\" is not a region to add",
        ),
        (
            "regions-long-name",
            &regions_long,
            "The cluster in ap-southeast-2 is named \"a-training-cluster-with-a-long-name-ap-southeast-2\"",
        ),
        (
            "region-and-regions",
            &region_and_regions,
            "cloud \"aws\" says region and regions",
        ),
        (
            "regions-without-gpu",
            &further_region_without_gpu,
            "eu-west-3 has no H100 × 8",
        ),
        ("no-manager", &no_manager, "MultiKueue needs a manager"),
        (
            "rotate-after",
            &bad_rotation,
            "rotate_after is how old a worker's token may grow",
        ),
        (
            "manager-cloud",
            &manager_nowhere,
            "\"oci\" is not a cloud strata runs a MultiKueue manager on",
        ),
        (
            "manager-region",
            &manager_no_region,
            "The manager is a cluster strata makes on gcp: say where with region",
        ),
        (
            "manager-typo",
            &manager_typo,
            "An argument named \"regoin\" is not expected in the MultiKueue manager",
        ),
        ("checkpoints-bucket", &no_bucket, "checkpoints needs a bucket"),
        (
            "checkpoints-name",
            &bad_bucket,
            "\"Acme_Checkpoints\" cannot name a checkpoint bucket on every cloud",
        ),
        (
            "checkpoints-long",
            &long_bucket,
            "use 3 to 39 lowercase letters, digits and hyphens",
        ),
        (
            "checkpoints-days",
            &bad_days,
            "expire_after_days is a whole number of days, 1 or more",
        ),
        ("checkpoints-flag", &bad_flag, "force_destroy is true or false"),
        (
            "checkpoints-typo",
            &checkpoint_typo,
            "An argument named \"versoning\" is not expected in runtime checkpoints",
        ),
        (
            "checkpoints-cloud-typo",
            &cloud_typo,
            "An argument named \"endpiont\" is not expected in cloud \"aws\" runtime checkpoints",
        ),
    ];
    for (tag, edit, want) in cases {
        let dir = example("multi-cloud", &format!("mistake-{tag}"), edit);
        let (code, out) = offline(&dir, &["validate"]);
        assert_eq!(code, 1, "{tag}: {out}");
        assert!(out.contains(want), "{tag}: {out}");
        assert!(
            out.contains("cluster.hcl:"),
            "{tag}: the place is named: {out}"
        );
    }
    // A cluster strata does not make has no bucket of strata's making.
    let existing = example("existing-kubernetes", "mistake-checkpoints", &|t| {
        t.replace(
            "  node_pool \"h100\" {",
            "  runtime {\n    checkpoints {\n      bucket = \"acme\"\n    }\n  }\n\n  node_pool \"h100\" {",
        )
    });
    let (code, out) = offline(&existing, &["validate"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("strata makes checkpoint buckets on aws, gcp, azure")
            && out.contains("cluster.hcl:"),
        "{out}"
    );
}

/// The plan a user reads first: examples/multi-cloud on empty state,
/// offline, as README's main command prints it; and the same spec on AWS
/// only, which must be the AWS third of it.
#[test]
fn the_multi_cloud_plan_reads_as_recorded() {
    let run = |tag: &str, args: &[&str]| {
        let dir = common::scratch("cluster", tag);
        let mut c = common::run::strata(&dir);
        c.arg("plan")
            .arg(root().join("examples/multi-cloud"))
            .args(["--state", "s.tfstate"])
            .args(args);
        let (code, out) = common::output(c);
        assert_eq!(code, 0, "{out}");
        out
    };
    let all = run("snap-all", &[]);
    assert!(
        all.contains("Plan: 166 to add, 0 to change, 0 to destroy."),
        "{all}"
    );
    insta::assert_snapshot!("multi_cloud_plan", all);
    let aws = run("snap-aws", &["--var", "clouds=[\"aws\"]"]);
    assert!(aws.contains("Plan: 92 to add"), "{aws}");
    for line in aws.lines().filter(|l| l.starts_with("  # module.")) {
        assert!(all.contains(line), "{line} is in the three-cloud plan too");
    }
    assert!(!aws.contains("module.train_gcp") && !aws.contains("module.train_azure"));
}

/// `examples/existing-kubernetes` in a scratch folder `tag`, edited by
/// `edit`, pointed at `kube`'s cluster `gpu-lab` and its nodes.
fn on_existing(kube: &Kube, tag: &str, edit: &dyn Fn(String) -> String) -> PathBuf {
    let dir = example("existing-kubernetes", tag, &|t| {
        edit(
            t.replace(
                "default = \"~/.kube/config\"",
                "default = \"kubeconfig.json\"",
            )
            .replace(
                "[\"gpu-node-1\", \"gpu-node-2\"]",
                "[\"gpu-node-0\", \"gpu-node-1\"]",
            ),
        )
    });
    let kubeconfig = kube.kubeconfig("gpu-lab").to_string();
    std::fs::write(dir.join("kubeconfig.json"), kubeconfig).expect("kubeconfig");
    dir
}

/// strata in `dir` with the stand-in helm first on PATH, logging to
/// `dir/helm.log`.
fn in_lab(dir: &Path, args: &[&str]) -> (i32, String) {
    let mut c = common::run::strata(dir);
    let path = std::env::var("PATH").unwrap_or_default();
    let helm = root().join("testing/standin/helm");
    c.args(args)
        .env("STRATA_CHECK_SETTLE", "10")
        .env("STANDIN_HELM_LOG", dir.join("helm.log"))
        .env("PATH", format!("{}:{path}", helm.display()));
    common::output(c)
}

/// `examples/existing-kubernetes` on the Kubernetes stand-in: the pool's
/// nodes labelled, the operator installed with the spec's driver, a second
/// plan empty; and beside AWS in one spec, the two agree.
#[test]
fn an_existing_cluster_gets_the_same_pools_and_operator() {
    let kube: Kube = kubernetes::start().expect("the Kubernetes stand-in starts");
    let dir = on_existing(&kube, "existing", &|t| t);
    let run = |args: &[&str]| in_lab(&dir, args);
    let (code, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Resources: 4 added"), "{out}");
    for node in ["gpu-node-0", "gpu-node-1"] {
        let n = kube
            .get(&format!("/api/v1/nodes/{node}"))
            .expect("the node");
        assert_eq!(n["metadata"]["labels"]["workload"], "training", "{n}");
    }
    let policy = kube
        .get("/apis/nvidia.com/v1/clusterpolicies/cluster-policy")
        .expect("the operator's ClusterPolicy");
    assert_eq!(
        policy["spec"]["driver"]["version"], "570.124.06",
        "{policy}"
    );
    assert_eq!(policy["spec"]["driver"]["enabled"], true, "{policy}");
    let (code, out) = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");

    // The same pools on EKS beside it: one spec, and they agree.
    let text = std::fs::read_to_string(dir.join("cluster.hcl")).expect("read");
    let text = text.replace(
        "clouds = [\"kubernetes\"]",
        "clouds = [\"kubernetes\", \"aws\"]",
    );
    let text = text.replacen(
        "  cloud \"kubernetes\" {",
        "  cloud \"aws\" {\n    region = \"us-east-1\"\n  }\n\n  cloud \"kubernetes\" {",
        1,
    );
    std::fs::write(dir.join("cluster.hcl"), &text).expect("write");
    let (code, out) = offline(&dir, &["validate"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("cluster \"lab\" runs on aws, where strata makes the cluster's network"),
        "{out}"
    );
    let text = text.replacen(
        "  gpu_operator {",
        "  network {\n    cidr = \"10.50.0.0/16\"\n  }\n\n  gpu_operator {",
        1,
    );
    std::fs::write(dir.join("cluster.hcl"), text).expect("write");
    let (code, out) = offline(&dir, &["validate"]);
    assert_eq!(code, 0, "{out}");
}

/// The runtime block on an existing cluster (the Kubernetes and Helm
/// stand-ins): Kueue's chart at its pinned version with its CRDs, one
/// flavour per pool selecting the pool's nodes by `strata.dev/pool` and
/// tolerating its taints, a ClusterQueue whose quota is the pool's GPUs,
/// a LocalQueue in each namespace named, KubeRay's operator, the DCGM
/// exporter's ServiceMonitor; a second plan empty. Each custom resource
/// is held to Kueue's published CRD schema, so an edited module that
/// misspells a field is refused as the API server refuses it.
#[test]
fn the_runtime_brings_kueue_queues_and_kuberay_to_every_pool() {
    let kube: Kube = kubernetes::start().expect("the Kubernetes stand-in starts");
    let runtime = r#"
  runtime {
    queue "training" {
      namespaces = ["ml", "research"]
    }
    metrics {
      service_monitor = true
    }
  }

  node_pool "h100" {"#;
    let dir = on_existing(&kube, "runtime", &|t| {
        t.replacen("\n  node_pool \"h100\" {", runtime, 1)
    });
    let run = |args: &[&str]| in_lab(&dir, args);
    let (code, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let helm = std::fs::read_to_string(dir.join("helm.log")).expect("the helm log");
    for chart in [
        "oci://registry.k8s.io/kueue/charts/kueue",
        "kuberay-operator",
    ] {
        assert!(helm.contains(chart), "{chart} installed:\n{helm}");
    }
    let flavor = kube
        .get("/apis/kueue.x-k8s.io/v1beta2/resourceflavors/h100")
        .expect("the pool's flavour");
    assert_eq!(
        flavor["spec"]["nodeLabels"],
        serde_json::json!({"strata.dev/pool": "h100", "workload": "training"}),
        "{flavor}"
    );
    assert_eq!(
        flavor["spec"]["tolerations"][0]["key"], "nvidia.com/gpu",
        "{flavor}"
    );
    let node = kube.get("/api/v1/nodes/gpu-node-0").expect("the node");
    assert_eq!(
        node["metadata"]["labels"]["strata.dev/pool"], "h100",
        "{node}"
    );
    let queue = kube
        .get("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/training")
        .expect("the ClusterQueue");
    let quota = &queue["spec"]["resourceGroups"][0]["flavors"][0];
    assert_eq!(quota["name"], "h100", "{queue}");
    assert_eq!(
        quota["resources"][0],
        serde_json::json!({"name": "nvidia.com/gpu", "nominalQuota": 16}),
        "two nodes of eight GPUs: {queue}"
    );
    for ns in ["ml", "research"] {
        let local = kube
            .get(&format!(
                "/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/localqueues/training"
            ))
            .expect("a LocalQueue in each namespace");
        assert_eq!(local["spec"]["clusterQueue"], "training", "{local}");
    }
    let policy = kube
        .get("/apis/nvidia.com/v1/clusterpolicies/cluster-policy")
        .expect("the operator's ClusterPolicy");
    assert_eq!(
        policy["spec"]["dcgmExporter"]["serviceMonitor"]["enabled"], true,
        "{policy}"
    );
    let (code, out) = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan is empty:\n{out}");

    // A user's copy of the modules whose flavour misspells a field: the
    // API server refuses it by Kueue's own schema, at the field.
    copy_modules_edited(
        &dir,
        &["kubernetes", "gpu-operator", "runtime"],
        "nodeLabels = each.value.labels",
        "nodeLabel  = each.value.labels",
    );
    let text = std::fs::read_to_string(dir.join("cluster.hcl")).expect("read");
    let text = text.replace(
        "  cloud \"kubernetes\" {",
        "  cloud \"kubernetes\" {\n    module = \"./modules/kubernetes\"",
    );
    std::fs::write(dir.join("cluster.hcl"), text).expect("write");
    let (code, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(".spec.nodeLabel: field not declared in schema"),
        "the API server's schema check, at the field:\n{out}"
    );
}

/// The runtime must be the same on every cloud: a cloud block's Kueue
/// version fails `validate` at the override, naming the cloud and the
/// field, unless `allow_divergence` says it is intended; a pool's labels
/// overridden are one error (its flavour differing too says nothing more).
#[test]
fn the_runtime_is_the_same_on_every_cloud_or_an_error_at_the_override() {
    let dir = example("multi-cloud", "runtime-version", &|t| {
        in_cloud(t, "gcp", "runtime { kueue_version = \"0.19.1\" }")
    });
    let (code, out) = offline(&dir, &["validate"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "cluster \"train\" is not portable: the runtime differs in kueue_version on gcp"
        ),
        "{out}"
    );
    assert!(
        out.contains("has kueue_version = \"0.19.1\", on aws \"0.19.2\""),
        "{out}"
    );
    assert!(out.contains("cloud \"gcp\" overrides it here"), "{out}");
    let text = std::fs::read_to_string(dir.join("cluster.hcl")).expect("read");
    let allowed = text.replacen(
        "clouds             = var.clouds",
        "clouds = var.clouds\n  allow_divergence = [\"kueue_version\"]",
        1,
    );
    std::fs::write(dir.join("cluster.hcl"), allowed).expect("write");
    let (code, out) = offline(&dir, &["validate"]);
    assert_eq!(code, 0, "allowed to diverge: {out}");

    let dir = example("multi-cloud", "runtime-labels", &|t| {
        in_cloud(
            t,
            "azure",
            "node_pool \"h100\" { labels = { workload = \"inference\" } }",
        )
    });
    let (code, out) = offline(&dir, &["validate"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("differs in labels on azure"), "{out}");
    assert!(
        !out.contains("differs in flavors"),
        "one error for one override: {out}"
    );
}

/// The MultiKueue manager tries the workers cheapest first, by the same
/// prices as the cost table (a price file reorders them); a placed pool's
/// order wins, and a worker over its price cap is left out, the plan
/// saying why.
#[test]
fn the_manager_tries_the_workers_in_price_or_placement_order() {
    let order_of = |out: &str| -> Vec<String> {
        let from = out
            .find("MultiKueue of train:")
            .unwrap_or_else(|| panic!("the plan shows the dispatch:\n{out}"));
        out[from..]
            .lines()
            .skip(1)
            .map_while(|l| l.trim().split_once(". ").map(|(_, rest)| rest))
            .map(|rest| {
                rest.split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    let plan = |tag: &str, edit: &dyn Fn(String) -> String| {
        let dir = example("multi-cloud", tag, edit);
        std::fs::write(
            dir.join("prices.csv"),
            "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\np5.48xlarge,H100,8,us-east-1,20,\n",
        )
        .expect("prices");
        let mut c = common::run::strata(&dir);
        c.args(["plan", "--state", "s.tfstate"])
            .env("AWS_EC2_METADATA_DISABLED", "true");
        let (code, out) = common::output(c);
        assert_eq!(code, 0, "{tag}: {out}");
        out
    };
    let out = plan("dispatch-price", &|t| t);
    assert_eq!(
        order_of(&out),
        [
            "train-gcp-us-central1",
            "train-aws-us-east-1",
            "train-azure-eastus"
        ],
        "{out}"
    );
    assert!(
        out.contains("1. train-gcp-us-central1") && out.contains("$5.38/GPU-h"),
        "{out}"
    );
    // The MultiKueueConfig lists them so.
    let config = out
        .split("kubernetes_manifest.dispatch[0] will be created")
        .nth(1)
        .expect("the MultiKueueConfig");
    let gcp = config
        .find("\"train-gcp-us-central1\"")
        .expect("gcp listed");
    let aws = config.find("\"train-aws-us-east-1\"").expect("aws listed");
    assert!(gcp < aws, "{config}");
    let cheaper_aws = |t: String| {
        t.replace(
            "clouds             = var.clouds",
            "clouds             = var.clouds\n  prices             = \"prices.csv\"",
        )
    };
    let out = plan("dispatch-prices", &cheaper_aws);
    assert_eq!(
        order_of(&out),
        [
            "train-aws-us-east-1",
            "train-gcp-us-central1",
            "train-azure-eastus"
        ],
        "a price file reorders them:\n{out}"
    );
    let placed = |t: String| {
        t.replace(
            "capacity      = \"on_demand\"",
            "capacity      = \"on_demand\"\n    nodes         = 1\n    placement {\n      order                  = [\"azure\", \"aws\", \"gcp\"]\n      capacity               = [\"on_demand\"]\n      max_price_per_gpu_hour = 7\n    }",
        )
    };
    let out = plan("dispatch-placed", &placed);
    assert_eq!(
        order_of(&out),
        ["train-aws-us-east-1", "train-gcp-us-central1"],
        "the placement's order, Azure over the cap:\n{out}"
    );
    assert!(
        out.contains("left out train-azure-eastus: $12.29 per GPU-hour, over the cap of"),
        "{out}"
    );
}

/// An existing cluster as a MultiKueue worker of a manager one runs too
/// (another context of the kubeconfig): the manager reaches the worker at
/// the server of the worker's context, with a kubeconfig Kueue accepts;
/// the manager's objects are on the manager. The manager may not be the
/// worker itself.
#[test]
fn an_existing_cluster_is_a_worker_of_a_manager_one_runs() {
    use common::multikueue::{as_dispatcher, dynamic, instance, kubeconfig_of, kueue_refuses};
    let kube: Kube = kubernetes::start().expect("the Kubernetes stand-in starts");
    let runtime = r#"
  runtime {
    queue "training" {
      namespaces = ["ml"]
    }
    multikueue {
      manager {
        cloud          = "kubernetes"
        config_path    = "kubeconfig.json"
        config_context = "manager"
      }
    }
  }

  node_pool "h100" {"#;
    let dir = on_existing(&kube, "multikueue", &|t| {
        t.replacen("\n  node_pool \"h100\" {", runtime, 1)
    });
    // The manager: a cluster of its own on the stand-in, another context.
    let mut config = kube.kubeconfig("gpu-lab");
    let manager_server = format!("{}/clusters/manager", kube.server.url);
    let mut cluster = config["clusters"][0].clone();
    cluster["name"] = "manager".into();
    cluster["cluster"]["server"] = manager_server.into();
    let mut context = config["contexts"][0].clone();
    context["name"] = "manager".into();
    context["context"]["cluster"] = "manager".into();
    config["clusters"]
        .as_array_mut()
        .expect("clusters")
        .push(cluster);
    config["contexts"]
        .as_array_mut()
        .expect("contexts")
        .push(context);
    std::fs::write(dir.join("kubeconfig.json"), config.to_string()).expect("kubeconfig");
    let (code, out) = in_lab(&dir, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let text = std::fs::read_to_string(dir.join("terraform.tfstate")).expect("state");
    let state: Json = serde_json::from_str(&text).expect("state JSON");
    let (k, sensitive) = kubeconfig_of(&state, "lab", "lab-kubernetes");
    assert!(sensitive, "kept as sensitive");
    assert_eq!(kueue_refuses(&k), None, "{k}");
    assert!(
        k.contains(&format!("\"server\": \"{}\"", kube.server.url)),
        "the worker's server: {k}"
    );
    let (status, body) = as_dispatcher(&k, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/training");
    assert_eq!(status, 200, "the worker answers the manager: {body}");
    let config = instance(
        &state,
        "module.lab_manager.module.runtime[0]",
        "kubernetes_manifest.dispatch",
        &Json::from(0),
    );
    assert_eq!(
        dynamic(config, "manifest")["spec"]["clusters"],
        serde_json::json!(["lab-kubernetes"])
    );
    assert!(
        kube.get("/apis/kueue.x-k8s.io/v1beta2/multikueueconfigs/strata")
            .is_none(),
        "the manager's objects are not on the worker"
    );
    let (code, out) = in_lab(&dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan is empty:\n{out}");
    jobs_are_accepted_by_the_manager(&kube);
    the_manager_goes_only_through_its_block(&dir);
    let spec = std::fs::read_to_string(dir.join("cluster.hcl")).expect("spec");
    let same = spec.replace(
        "config_context = \"manager\"",
        "config_context = var.context",
    );
    std::fs::write(dir.join("cluster.hcl"), same).expect("spec");
    let (code, out) = offline(&dir, &["validate"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("MultiKueue's manager cannot dispatch to itself"),
        "{out}"
    );
}

/// The multikueue block removed while state holds the manager: refused at
/// the runtime block (nothing could reach the manager's cluster to delete
/// what is there), with the way out, which then works: the block back,
/// the manager destroyed by target, the block removed, the workers'
/// dispatcher objects planned away and applied; then the block again.
fn the_manager_goes_only_through_its_block(dir: &Path) {
    let spec = std::fs::read_to_string(dir.join("cluster.hcl")).expect("spec");
    // Moved from the cluster one runs to a cloud: refused as well.
    let to_aws = spec
        .replace(
            "cloud          = \"kubernetes\"\n        config_path    = \"kubeconfig.json\"\n        config_context = \"manager\"",
            "cloud  = \"aws\"\n        region = \"us-east-1\"",
        )
        .replace(
            "  clouds = [\"kubernetes\"]\n",
            "  clouds = [\"kubernetes\"]\n  network {\n    cidr = \"10.40.0.0/16\"\n  }\n",
        );
    assert_ne!(to_aws, spec);
    std::fs::write(dir.join("cluster.hcl"), &to_aws).expect("spec");
    let (code, out) = in_lab(dir, &["plan"]);
    assert_eq!(code, 1, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("manager in kubernetes; the manager block now puts it in aws us-east-1"),
        "{out}"
    );
    let start = spec.find("    multikueue {").expect("the block");
    let end = start + spec[start..].find("\n    }\n").expect("its end") + 7;
    let without = format!("{}{}", &spec[..start], &spec[end..]);
    std::fs::write(dir.join("cluster.hcl"), &without).expect("spec");
    let (code, out) = in_lab(dir, &["plan"]);
    assert_eq!(code, 1, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("MultiKueue manager still in state")
            && flat.contains("strata destroy -target=module.lab_manager"),
        "{out}"
    );
    std::fs::write(dir.join("cluster.hcl"), &spec).expect("spec");
    let target = ["destroy", "--auto-approve", "-target=module.lab_manager"];
    let (code, out) = in_lab(dir, &target);
    assert_eq!(code, 0, "{out}");
    std::fs::write(dir.join("cluster.hcl"), &without).expect("spec");
    let (code, out) = in_lab(dir, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 added, 0 changed,"), "{out}");
    let (code, out) = in_lab(dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
    std::fs::write(dir.join("cluster.hcl"), &spec).expect("spec");
}

/// README's two jobs, applied to the manager as `kubectl apply` would
/// (server-side apply): accepted under Kueue's and KubeRay's schemas; a
/// RayJob with a misspelled field is refused at the field.
fn jobs_are_accepted_by_the_manager(kube: &Kube) {
    let manager = format!("{}/clusters/manager", kube.server.url);
    let apply = |path: &str, doc: &Json| {
        let url = format!("{manager}{path}?fieldManager=kubectl&force=true");
        let auth = format!("Bearer {}", kubernetes::TOKEN);
        common::sandbox::https(
            kube.ca_pem.as_bytes(),
            ("PATCH", &url),
            &auth,
            "application/apply-patch+yaml",
            &doc.to_string(),
        )
    };
    let read = |file: &str| -> Json {
        let text = std::fs::read_to_string(root().join("examples/multi-cloud/jobs").join(file))
            .expect("the example job");
        serde_yaml::from_str(&text).expect("YAML")
    };
    let job = read("train-job.yaml");
    let (status, body) = apply("/apis/batch/v1/namespaces/ml/jobs/train-resnet", &job);
    assert!(status == 200 || status == 201, "the Job: {body}");
    let mut ray = read("rayjob.yaml");
    let (status, body) = apply("/apis/ray.io/v1/namespaces/ml/rayjobs/finetune", &ray);
    assert!(status == 200 || status == 201, "the RayJob: {body}");
    ray["spec"]["rayClusterSpecs"] = ray["spec"]["rayClusterSpec"].clone();
    let (status, body) = apply("/apis/ray.io/v1/namespaces/ml/rayjobs/finetune", &ray);
    assert_eq!(status, 422, "{body}");
    assert!(
        body.contains(".spec.rayClusterSpecs: field not declared in schema"),
        "{body}"
    );
}
