//! `strata-sandbox`, as README says to try strata with it: started with
//! `--dir`, its `DIR/env` read as a shell would, `examples/multi-cloud`
//! applied unchanged on all three clouds (Canonical's Ubuntu EKS images
//! registered in moto; each cloud's cluster answering as a Kubernetes
//! stand-in of its own, reached through the cloud's credential plugin; the
//! GPU Operator installed by the helm stand-in) with its MultiKueue
//! manager, whose kubeconfigs pass Kueue's checks and reach each worker;
//! its tokens rotated once due, a second plan empty, the cost of what was
//! made, and a destroy that leaves the state empty.

mod common;

use common::multikueue::{as_dispatcher, dynamic, instance, kubeconfig_of, kueue_refuses, token};
use common::sandbox::{https, start, Sandbox};
use serde_json::Value as Json;
use std::path::Path;

/// The workers of examples/multi-cloud, cheapest H100 first.
const WORKERS: [(&str, &str); 3] = [
    ("train-gcp-us-central1", "train_gcp"),
    ("train-aws-us-east-1", "train_aws"),
    ("train-azure-eastus", "train_azure"),
];

/// What a worker's dispatcher may read: its queue.
const QUEUE: &str = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/training";

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
    assert!(
        out.contains("Apply complete! Resources: 166 added"),
        "{out}"
    );
    let helm = std::fs::read_to_string(&sb.env["STANDIN_HELM_LOG"]).expect("the helm log");
    // Kueue and KubeRay on each cloud's cluster and the manager; the GPU
    // Operator on the three GPU clusters, not on the CPU-only manager.
    for (release, clusters) in [
        ("\"gpu-operator\"", 3),
        ("\"kueue\"", 4),
        ("\"kuberay-operator\"", 4),
    ] {
        let installs = helm
            .lines()
            .filter(|l| l.contains("\"upgrade\"") && l.contains(release))
            .count();
        assert_eq!(installs, clusters, "{release} on each cluster:\n{helm}");
    }
    let before = dispatch_works(&sb, &work);
    rotation(&sb, &work, &before);
    prices_reorder_the_workers_and_nothing_else(&sb, &work);
    let (code, out) = strata(&["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan is empty:\n{out}");
    let (code, out) = strata(&["cost"]);
    assert_eq!(code, 0, "{out}");
    for pool in ["p5.48xlarge", "a3-highgpu-8g", "Standard_ND96isr_H100_v5"] {
        assert!(out.contains(pool), "{out}");
    }
    the_manager_moves_in_two_steps(&sb, &work);
    checkpoints_outlive_a_destroy_until_let_go(&sb, &work);
}

/// A destroy keeps the checkpoints: the empty S3 and GCS buckets go with
/// the rest, but on Azure, which deletes a storage account with its
/// blobs, the lock on the checkpoints' resource group refuses the delete
/// and says how to let them go; with `force_destroy = true` applied to
/// the lock, the next destroy takes what is left and the state is empty.
fn checkpoints_outlive_a_destroy_until_let_go(sb: &Sandbox, work: &Path) {
    let (code, out) = sb.strata(work, &["destroy", "--auto-approve"]);
    assert_eq!(code, 1, "the lock keeps Azure's checkpoints:\n{out}");
    assert!(
        out.contains("ScopeLocked") && out.contains("force_destroy = true"),
        "{out}"
    );
    let (code, left) = sb.strata(work, &["state", "list"]);
    assert_eq!(code, 0, "{left}");
    assert!(
        left.contains("module.train_azure.azurerm_storage_container.checkpoints[0]")
            && left
                .lines()
                .all(|a| a.starts_with("module.train_azure.azurerm_")),
        "only Azure's checkpoints and what reaches them are left:\n{left}"
    );
    let spec = std::fs::read_to_string(work.join("cluster.hcl")).expect("spec");
    let spec = spec.replace(
        "expire_after_days = 30",
        "expire_after_days = 30\n      force_destroy     = true",
    );
    std::fs::write(work.join("cluster.hcl"), spec).expect("spec");
    let target = "-target=module.train_azure.azurerm_management_lock.checkpoints";
    let (code, out) = sb.strata(work, &["apply", "--auto-approve", target]);
    assert_eq!(code, 0, "the lock lifted:\n{out}");
    let (code, out) = sb.strata(work, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "destroy:\n{out}");
    let (code, out) = sb.strata(work, &["state", "list"]);
    assert_eq!((code, out.trim()), (0, ""), "nothing left in state");
}

/// A manager block that names another region: refused at the region,
/// naming where the manager is and where it would go (the call keeps its
/// name, so the old cluster would be left running out of reach); the
/// spec as it was plans nothing.
fn the_manager_moves_in_two_steps(sb: &Sandbox, work: &Path) {
    let spec = std::fs::read_to_string(work.join("cluster.hcl")).expect("spec");
    let manager = "        cloud  = \"aws\"\n        region = \"us-east-1\"";
    assert!(spec.contains(manager), "{spec}");
    let moved = spec.replace(
        manager,
        "        cloud  = \"aws\"\n        region = \"us-west-2\"",
    );
    std::fs::write(work.join("cluster.hcl"), moved).expect("spec");
    let (code, out) = sb.strata(work, &["plan"]);
    assert_eq!(code, 1, "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        "MultiKueue manager moves",
        "in aws us-east-1; the manager block now puts it in aws us-west-2",
        "strata destroy -target=module.train_manager",
    ] {
        assert!(flat.contains(want), "{want}: {out}");
    }
    std::fs::write(work.join("cluster.hcl"), spec).expect("spec");
    let (code, out) = sb.strata(work, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
}

/// The manager lists the workers cheapest first, and its kubeconfig for
/// each passes Kueue's checks and reads that worker's queue with the
/// dispatcher's token: the kubeconfigs, by worker.
fn dispatch_works(sb: &Sandbox, work: &Path) -> Vec<String> {
    let state = state(work);
    let module = "module.train_manager.module.runtime[0]";
    let config = instance(
        &state,
        module,
        "kubernetes_manifest.dispatch",
        &Json::from(0),
    );
    let order: Vec<&str> = WORKERS.iter().map(|(w, _)| *w).collect();
    assert_eq!(
        dynamic(config, "manifest")["spec"]["clusters"],
        serde_json::json!(order),
        "cheapest first: {config}"
    );
    WORKERS
        .iter()
        .map(|(worker, call)| {
            let (k, sensitive) = kubeconfig_of(&state, "train", worker);
            assert!(
                sensitive,
                "the state keeps {worker}'s kubeconfig as sensitive"
            );
            assert_eq!(kueue_refuses(&k), None, "{worker}:\n{k}");
            refused_when_tampered(&k);
            // Neither the Secret nor the worker's token Secret shows it.
            let token_secret =
                format!("module.{call}.module.runtime[0].kubernetes_manifest.dispatcher_token[0]");
            let secret = format!("{module}.kubernetes_manifest.worker_kubeconfig[\"{worker}\"]");
            for address in [&secret, &token_secret] {
                let (code, out) = sb.strata(work, &["state", "show", address]);
                assert_eq!(code, 0, "{out}");
                assert!(
                    !out.contains(&token(&k)),
                    "{address} shows no token:\n{out}"
                );
            }
            let (status, body) = as_dispatcher(&k, QUEUE);
            assert_eq!(status, 200, "{worker} answers the manager: {body}");
            k
        })
        .collect()
}

/// An apply a month on rotates every worker's token: the new token first,
/// then the manager's Secret moves to it, then the old one goes, so the
/// manager never holds a token the worker refuses; the old token no
/// longer works, and a plan at that time is empty.
fn rotation(sb: &Sandbox, work: &Path, before: &[String]) {
    use time::format_description::well_known::Rfc3339;
    let later = (time::OffsetDateTime::now_utc() + time::Duration::days(31))
        .format(&Rfc3339)
        .expect("a time");
    let at_later = |args: &[&str]| {
        let mut c = sb.command(work, args);
        c.env("STRATA_NOW", &later);
        common::output(c)
    };
    let (code, out) = at_later(&["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    for (worker, call) in WORKERS {
        let token =
            format!("module.{call}.module.runtime[0].kubernetes_manifest.dispatcher_token[0]");
        let secret = format!(
            "module.train_manager.module.runtime[0].kubernetes_manifest.worker_kubeconfig[\"{worker}\"]"
        );
        let at = |what: &str| {
            out.lines()
                .position(|l| l.starts_with(&format!("{token}")) && l.contains(what))
        };
        let made =
            at("Creation complete").unwrap_or_else(|| panic!("a new token for {worker}:\n{out}"));
        let moved = out
            .lines()
            .position(|l| l.starts_with(&secret) && l.contains("Modifications complete"))
            .unwrap_or_else(|| panic!("the manager's Secret for {worker} moves:\n{out}"));
        let gone = at("Destruction complete")
            .unwrap_or_else(|| panic!("the old token of {worker} goes:\n{out}"));
        assert!(
            made < moved && moved < gone,
            "{worker}: new token, then the manager, then the old token gone:\n{out}"
        );
    }
    let state = state(work);
    for ((worker, _), old) in WORKERS.iter().zip(before) {
        let (k, _) = kubeconfig_of(&state, "train", worker);
        assert_ne!(token(&k), token(old), "{worker} has a new token");
        assert_eq!(
            as_dispatcher(&k, QUEUE).0,
            200,
            "{worker} takes the new token"
        );
        assert_eq!(
            as_dispatcher(old, QUEUE).0,
            401,
            "{worker} refuses the old token"
        );
    }
    let (code, out) = at_later(&["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "nothing more to rotate:\n{out}");
}

/// A price file making AWS the cheapest: the plan updates the manager's
/// MultiKueueConfig, and nothing else.
fn prices_reorder_the_workers_and_nothing_else(sb: &Sandbox, work: &Path) {
    std::fs::write(
        work.join("cheap-aws.csv"),
        "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\np5.48xlarge,H100,8,us-east-1,20,\n",
    )
    .expect("prices");
    let (code, out) = sb.strata(
        work,
        &["plan", "--prices", "cheap-aws.csv", "--detailed-exitcode"],
    );
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{out}"
    );
    assert!(
        out.contains("module.train_manager.module.runtime[0].kubernetes_manifest.dispatch[0] will be updated in-place"),
        "{out}"
    );
    assert!(out.contains("1. train-aws-us-east-1"), "{out}");
}

/// The check itself bites: the same kubeconfig with what Kueue refuses
/// (a cloud's exec plugin, a token file, a CA path, TLS checks skipped)
/// is refused.
fn refused_when_tampered(kubeconfig: &str) {
    let base: serde_yaml::Value = serde_yaml::from_str(kubeconfig).expect("YAML");
    let tamper = |(list, entry): (&str, &str), field: &str, value: serde_yaml::Value| {
        let mut k = base.clone();
        k[list][0][entry]
            .as_mapping_mut()
            .expect("a mapping")
            .insert(field.into(), value);
        serde_yaml::to_string(&k).expect("YAML")
    };
    let (user, cluster) = (("users", "user"), ("clusters", "cluster"));
    let exec = serde_yaml::from_str("{command: aws, args: [eks, get-token]}").expect("exec");
    let cases = [
        (tamper(user, "exec", exec), "exec plugins"),
        (tamper(user, "tokenFile", "/run/token".into()), "tokenFile"),
        (
            tamper(cluster, "insecure-skip-tls-verify", true.into()),
            "insecure TLS",
        ),
        (
            tamper(cluster, "certificate-authority", "/ca.pem".into()),
            "certificate-authority",
        ),
    ];
    for (k, why) in cases {
        let refused = kueue_refuses(&k).unwrap_or_else(|| panic!("not refused:\n{k}"));
        assert!(refused.contains(why), "{refused} for {k}");
    }
}

fn state(work: &Path) -> Json {
    let text = std::fs::read_to_string(work.join("terraform.tfstate")).expect("the state");
    serde_json::from_str(&text).expect("state JSON")
}

/// `kill -9` during the apply that makes the runtime, and during the one
/// that rotates its tokens, then applied again: the apply converges, the
/// next plan is empty, each worker holds exactly one dispatcher token
/// Secret (the one the state records: none orphaned) and the manager's
/// kubeconfig for it works.
#[test]
fn killed_mid_apply_the_dispatch_converges_without_orphaned_tokens() {
    use std::time::Duration;
    let dir = common::scratch("sandbox", "multi-crash");
    let sb = start(&dir.join("sandbox"));
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/multi-cloud/cluster.hcl");
    std::fs::copy(example, work.join("cluster.hcl")).expect("the example");
    let killed = |after: Duration, now: Option<&str>| {
        let mut c = sb.quiet(&work, &["apply", "--auto-approve"]);
        if let Some(t) = now {
            c.env("STRATA_NOW", t);
        }
        let mut child = c.spawn().expect("apply starts");
        std::thread::sleep(after);
        let _ = child.kill();
        let _ = child.wait();
    };
    let objects = || {
        let text = std::fs::read_to_string(work.join("terraform.tfstate")).unwrap_or_default();
        serde_json::from_str::<Json>(&text).map_or(0, |s| {
            s["resources"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|r| r["mode"] == "managed")
                .map(|r| r["instances"].as_array().map_or(0, Vec::len))
                .sum::<usize>()
        })
    };
    // Killed once the apply has journaled something of its own (a fixed
    // moment missed the whole apply on a slower machine under the suite's
    // load: three kills before the first object), then a little later.
    let journal = work.join("terraform.tfstate.journal");
    let stamp = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .map(|m| (m.len(), m.modified().ok()))
    };
    let killed_mid = |after: Duration| {
        let before = stamp(&journal);
        let mut child = sb
            .quiet(&work, &["apply", "--auto-approve"])
            .spawn()
            .expect("apply starts");
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while std::time::Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
            let now = stamp(&journal);
            if now.is_some() && now != before {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(after);
        let _ = child.kill();
        let _ = child.wait();
    };
    let mut partial = Vec::new();
    for ms in [0, 1500, 300] {
        killed_mid(Duration::from_millis(ms));
        partial.push(objects());
    }
    eprintln!("objects in state after each kill: {partial:?}");
    assert!(
        partial.iter().any(|n| (1..166).contains(n)),
        "a kill lands mid-apply: {partial:?}"
    );
    interrupted(&sb, &work);
    let (code, out) = sb.strata(&work, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "resumed:\n{out}");
    one_token_each(&work);
    let later = {
        use time::format_description::well_known::Rfc3339;
        (time::OffsetDateTime::now_utc() + time::Duration::days(31))
            .format(&Rfc3339)
            .expect("a time")
    };
    for ms in [700, 1500] {
        killed(Duration::from_millis(ms), Some(&later));
    }
    let mut c = sb.command(&work, &["apply", "--auto-approve"]);
    c.env("STRATA_NOW", &later);
    let (code, out) = common::output(c);
    assert_eq!(code, 0, "the rotation resumed:\n{out}");
    one_token_each(&work);
    let mut c = sb.command(&work, &["plan", "--detailed-exitcode"]);
    c.env("STRATA_NOW", &later);
    let (code, out) = common::output(c);
    assert_eq!(code, 0, "converged:\n{out}");
}

/// Ctrl-C during an apply of the runtime: strata stops starting
/// operations, lets those in flight finish, writes the state and lets go
/// of the lock (exit 1, "Interrupt received."), as Terraform does; or the
/// apply was already done (exit 0). Either way no lock and no journal is
/// left.
fn interrupted(sb: &Sandbox, work: &Path) {
    use std::process::Stdio;
    let child = sb
        .command(work, &["apply", "--auto-approve"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("apply starts");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: a signal to our own child, which is still ours to wait for.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().expect("the apply ends");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    match out.status.code() {
        Some(0) => {}
        Some(1) => assert!(said.contains("Interrupt received."), "{said}"),
        other => panic!("Ctrl-C ended the apply with {other:?}:\n{said}"),
    }
    for left in [".terraform.tfstate.lock.info", "terraform.tfstate.journal"] {
        assert!(!work.join(left).exists(), "{left} is left:\n{said}");
    }
}

/// Each worker's `kueue-system` holds one service account token Secret,
/// the state's, and the manager's kubeconfig reaches the worker with it.
fn one_token_each(work: &Path) {
    let state = state(work);
    for (worker, call) in WORKERS {
        let (k, _) = kubeconfig_of(&state, "train", worker);
        assert_eq!(
            as_dispatcher(&k, QUEUE).0,
            200,
            "{worker} takes the manager's token"
        );
        let module = format!("module.{call}.module.runtime[0]");
        let recorded = instance(
            &state,
            &module,
            "kubernetes_manifest.dispatcher_token",
            &Json::from(0),
        );
        let name = dynamic(recorded, "manifest")["metadata"]["name"].clone();
        let (status, body) = as_admin(&k, "/api/v1/namespaces/kueue-system/secrets");
        assert_eq!(status, 200, "{body}");
        let list: Json = serde_json::from_str(&body).expect("JSON");
        let tokens: Vec<&Json> = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["type"] == "kubernetes.io/service-account-token")
            .map(|s| &s["metadata"]["name"])
            .collect();
        assert_eq!(tokens, [&name], "{worker}: one token Secret, the state's");
    }
}

/// `GET path` on the worker the kubeconfig names, as its administrator.
fn as_admin(kubeconfig: &str, path: &str) -> (u16, String) {
    let admin = kubeconfig.replace(&token(kubeconfig), strata_standin::kubernetes::TOKEN);
    as_dispatcher(&admin, path)
}

/// The stand-ins as anyone would call them by hand: with the bearer
/// tokens the sandbox's env exports, a listing answers; without one, or
/// with another, each refuses in its cloud's words (401).
#[test]
fn the_stand_ins_answer_the_exported_tokens_and_refuse_others() {
    let dir = common::scratch("sandbox", "tokens");
    let sb = start(&dir.join("sandbox"));
    let ca = std::fs::read(&sb.env["SSL_CERT_FILE"]).expect("the CA");
    let groups = format!(
        "{}/subscriptions/{}/resourcegroups?api-version=2022-09-01",
        sb.env["ARM_RESOURCE_MANAGER_ENDPOINT"].trim_end_matches('/'),
        strata_standin::azure::SUBSCRIPTION
    );
    let arm = |auth: &str| https(&ca, ("GET", &groups), auth, "application/json", "");
    let token = format!("Bearer {}", sb.env["STRATA_SANDBOX_ARM_TOKEN"]);
    assert_eq!(arm(&token).0, 200, "{:?}", arm(&token));
    let (status, body) = arm("Bearer not-a-token");
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("InvalidAuthenticationToken"), "{body}");
    let networks = format!(
        "{}projects/acme-ml/global/networks",
        sb.env["GOOGLE_COMPUTE_CUSTOM_ENDPOINT"]
    );
    let token = format!("Bearer {}", sb.env["GOOGLE_OAUTH_ACCESS_TOKEN"]);
    let (status, body) = sb.http("GET", &networks, &token, "");
    assert_eq!(status, 200, "{body}");
    let (status, body) = sb.http("GET", &networks, "Bearer not-a-token", "");
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("UNAUTHENTICATED"), "{body}");
}
