//! Unit tables for the spec's rules (`rules.rs`): each rule's accepted and
//! refused values, and the words it refuses them with.

use super::rules::{allowed, divergence, part_rules, pool_rules, single, valid_cluster_name};
use super::runtime;
use crate::config::{self, ConfigScope, Run};
use crate::diag::{Diags, Sources};
use std::path::PathBuf;

/// The first `cluster` block of `text` and the module holding it.
fn cluster(text: &str) -> config::Module {
    let mut sources = Sources::default();
    let module = config::load_text("t.tf", text, &mut sources).expect("a configuration");
    assert!(!module.clusters.is_empty(), "no cluster block in {text}");
    module
}

/// What `check` says of the cluster block in `text`: each problem's summary.
fn said(text: &str, check: impl Fn(&config::Module, &ConfigScope, &mut Diags)) -> Vec<String> {
    let module = cluster(text);
    let scope = ConfigScope::new(
        &module,
        Default::default(),
        Run::new(PathBuf::from("."), "default"),
    );
    let mut diags = Diags::default();
    check(&module, &scope, &mut diags);
    diags.0.iter().map(|d| d.summary.clone()).collect()
}

fn pool(fields: &str) -> Vec<String> {
    let text = format!("cluster \"c\" {{\n  node_pool \"p\" {{\n{fields}\n  }}\n}}\n");
    said(&text, |m, scope, diags| {
        for p in m.clusters[0]
            .body
            .blocks
            .iter()
            .filter(|b| b.kind == "node_pool")
        {
            pool_rules(p, scope, diags);
        }
    })
}

#[test]
fn a_cluster_name_fits_every_cloud() {
    let long = "a".repeat(41);
    let cases = [
        ("train", true),
        ("a", true),
        ("gpu-2", true),
        ("Train", false),
        ("1train", false),
        ("train-", false),
        ("tr_ain", false),
        ("", false),
        (long.as_str(), false),
        (&long[..40], true),
    ];
    for (name, ok) in cases {
        assert_eq!(valid_cluster_name(name), ok, "{name:?}");
    }
}

#[test]
fn a_pool_is_held_to_its_sizes_capacity_and_taints() {
    let cases: &[(&str, &[&str])] = &[
        (
            "gpus_per_node = 8\nmin_nodes = 0\nmax_nodes = 4\ncapacity = \"spot\"",
            &[],
        ),
        ("gpus_per_node = 0", &["Invalid gpus_per_node"]),
        ("gpus_per_node = 1.5", &["Invalid gpus_per_node"]),
        ("min_nodes = -1", &["Invalid min_nodes"]),
        ("max_nodes = 0", &["Invalid max_nodes"]),
        ("min_nodes = 3\nmax_nodes = 2", &["Invalid node pool size"]),
        ("capacity = \"cheap\"", &["Invalid capacity"]),
        ("capacity = \"on_demand\"", &[]),
        (
            "taints = [{ key = \"k\", value = \"v\", effect = \"Never\" }]",
            &["Invalid taint effect"],
        ),
        (
            "taints = [{ key = \"k\", value = \"v\", effect = \"NoExecute\" }]",
            &[],
        ),
    ];
    for (fields, want) in cases {
        assert_eq!(pool(fields), *want, "{fields}");
    }
}

#[test]
fn the_network_and_the_operator_are_held_to_what_the_modules_need() {
    let cases: &[(&str, &[&str])] = &[
        ("network { cidr = \"10.40.0.0/16\" }", &[]),
        (
            "network { cidr = \"10.40.0.0/28\" }",
            &["Invalid network cidr"],
        ),
        (
            "network { cidr = \"10.0.0.0/7\" }",
            &["Invalid network cidr"],
        ),
        ("network { cidr = \"ten\" }", &["Invalid network cidr"]),
        ("gpu_operator { mig_strategy = \"mixed\" }", &[]),
        (
            "gpu_operator { mig_strategy = \"dual\" }",
            &["Invalid mig_strategy"],
        ),
    ];
    for (part, want) in cases {
        let text = format!("cluster \"c\" {{\n  {part}\n}}\n");
        let got = said(&text, |m, scope, diags| {
            let body = &m.clusters[0].body;
            let network = body
                .blocks
                .iter()
                .find(|b| b.kind == "network")
                .map(|b| &b.body);
            let operator = body
                .blocks
                .iter()
                .find(|b| b.kind == "gpu_operator")
                .map(|b| &b.body);
            part_rules(network, operator, scope, diags);
        });
        assert_eq!(got, *want, "{part}");
    }
}

#[test]
fn allow_divergence_names_fields_the_check_compares() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("[\"labels\"]", &["labels"], &[]),
        ("\"labels\"", &[], &["Invalid allow_divergence"]),
        ("[\"colour\"]", &[], &["Unknown field in allow_divergence"]),
        ("[var.x]", &[], &["Invalid allow_divergence"]),
    ];
    for (value, fields, want) in cases {
        let text = format!("cluster \"c\" {{\n  allow_divergence = {value}\n}}\n");
        let module = cluster(&text);
        let mut diags = Diags::default();
        let got = divergence(&module.clusters[0], &mut diags);
        let summaries: Vec<&str> = diags.0.iter().map(|d| d.summary.as_str()).collect();
        assert_eq!(summaries, *want, "{value}");
        assert_eq!(
            got.iter().map(String::as_str).collect::<Vec<_>>(),
            *fields,
            "{value}"
        );
    }
}

#[test]
fn a_part_takes_its_own_arguments_and_one_block_of_a_kind() {
    let module =
        cluster("cluster \"c\" {\n  colour = 1\n  network {}\n  network {}\n  extra {}\n}\n");
    let body = &module.clusters[0].body;
    let mut diags = Diags::default();
    allowed(
        body,
        "a cluster block",
        &["clouds"],
        &["network"],
        &mut diags,
    );
    assert!(single(body, "network", &mut diags).is_some());
    assert!(single(body, "gpu_operator", &mut diags).is_none());
    let summaries: Vec<&str> = diags.0.iter().map(|d| d.summary.as_str()).collect();
    assert_eq!(
        summaries,
        [
            "Unsupported argument",
            "Unsupported block type",
            "Duplicate block"
        ]
    );
}

#[test]
fn a_runtime_is_held_to_its_queues_and_fields() {
    let cases: &[(&str, &[&str])] = &[
        (
            "kueue_version = \"0.19.2\"\nqueue \"training\" { namespaces = [\"ml\"] }\nmetrics { service_monitor = true }",
            &[],
        ),
        ("queue \"training\" {}", &["Missing required argument"]),
        ("queue { namespaces = [\"ml\"] }", &["Missing queue name"]),
        ("queue \"Training\" { namespaces = [\"ml\"] }", &["Invalid queue name"]),
        ("queue \"t-\" { namespaces = [\"ml\"] }", &["Invalid queue name"]),
        (
            "queue \"a\" { namespaces = [\"ml\"] }\nqueue \"a\" { namespaces = [\"x\"] }",
            &["Duplicate queue"],
        ),
        (
            "queue \"a\" {\n namespaces = [\"ml\"]\n quota = 3\n}",
            &["Unsupported argument"],
        ),
        ("kueue = \"0.19.2\"", &["Unsupported argument"]),
        ("metrics { prometheus = true }", &["Unsupported argument"]),
        ("metrics {}\nmetrics {}", &["Duplicate block"]),
    ];
    for (fields, want) in cases {
        let text = format!("cluster \"c\" {{\n  runtime {{\n{fields}\n  }}\n}}\n");
        let got = said(&text, |m, _, diags| {
            assert!(runtime::read(&m.clusters[0].body, "c", diags).is_some());
        });
        assert_eq!(got, *want, "{fields}");
    }
}

#[test]
fn with_a_runtime_a_pool_fits_a_kueue_flavour() {
    let seven: Vec<String> = (1..=7).map(|i| format!("l{i} = \"x\"")).collect();
    let eight: Vec<String> = (1..=8).map(|i| format!("l{i} = \"x\"")).collect();
    let taint = "{ key = \"k\", value = \"v\", effect = \"NoSchedule\" }";
    let nine_taints = vec![taint; 9].join(", ");
    let cases: Vec<(String, &[&str])> = vec![
        (format!("labels = {{ {} }}", seven.join(", ")), &[]),
        (
            format!("labels = {{ {} }}", eight.join(", ")),
            &["Too many labels for a Kueue flavour"],
        ),
        (
            "labels = { \"strata.dev/pool\" = \"a\" }".to_string(),
            &["Reserved label"],
        ),
        (format!("taints = [{taint}]"), &[]),
        (
            format!("taints = [{nine_taints}]"),
            &["Too many taints for a Kueue flavour"],
        ),
    ];
    for (fields, want) in cases {
        let text = format!("cluster \"c\" {{\n  node_pool \"p\" {{\n{fields}\n  }}\n}}\n");
        let got = said(&text, |m, scope, diags| {
            for p in m.clusters[0]
                .body
                .blocks
                .iter()
                .filter(|b| b.kind == "node_pool")
            {
                runtime::pool_limits(p, scope, diags);
            }
        });
        assert_eq!(got, want, "{fields}");
    }
}
