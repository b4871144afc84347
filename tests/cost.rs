//! GPU cost in every plan: node pools priced from their planned objects
//! (the cluster spec's and plain resources of each cloud alike) against
//! the catalogs the drivers ship, spot from the spot column, GKE's
//! per-zone counts times the zones, the change of `max_size` in all three
//! renderings, a price file over the catalog, a price cap naming cheaper
//! offers, what cannot be priced listed, and a saved plan keeping its
//! cost. Nothing here calls a cloud: plans on empty or given state, read
//! back with `--no-refresh`.

mod common;

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use strata_provider::billing::Capacity;
use strata_provider::catalog::Catalog;
use strata_provider::money::Usd;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A driver's catalog, named as the driver names it.
fn catalog(cloud: &str) -> Catalog {
    let file = root().join("providers").join(cloud).join("catalog.csv");
    let text = std::fs::read_to_string(file).expect("the catalog");
    let name = match cloud {
        "aws" => "AWS",
        "gcp" => "GCP",
        _ => "Azure",
    };
    Catalog::parse(name, &text).expect("the catalog parses")
}

/// The catalog's price of `instance_type` in `region` as `capacity`.
fn listed(cloud: &str, instance_type: &str, region: &str, capacity: Capacity) -> Option<Usd> {
    let c = catalog(cloud);
    c.offer(instance_type, region)?.price_as(capacity)
}

/// A scratch copy of `tests/cost/<fixture>` (or of an example), with
/// `edit` applied to its configuration file.
fn copy(from: &Path, tag: &str, edit: &dyn Fn(String) -> String) -> PathBuf {
    let dir = common::scratch("cost", tag);
    for e in std::fs::read_dir(from).expect("the fixture") {
        let p = e.expect("an entry").path();
        if p.is_dir() {
            continue; // an example's job manifests
        }
        let text = std::fs::read_to_string(&p).expect("read");
        let text = match p.extension().and_then(|x| x.to_str()) {
            Some("tf" | "hcl") => edit(text),
            _ => text,
        };
        std::fs::write(dir.join(p.file_name().expect("a name")), text).expect("write");
    }
    dir
}

fn fixture(name: &str, tag: &str, edit: &dyn Fn(String) -> String) -> PathBuf {
    copy(&root().join("tests/cost").join(name), tag, edit)
}

fn strata(dir: &Path, args: &[&str]) -> (i32, String) {
    let mut c = common::run::strata(dir);
    c.args(args)
        .env_remove("AWS_REGION")
        .env_remove("GOOGLE_REGION");
    common::output(c)
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let (code, out) = strata(dir, args);
    assert_eq!(code, 0, "strata {args:?}:\n{out}");
    out
}

fn cost_json(dir: &Path, args: &[&str]) -> Json {
    let mut all = vec!["cost", "--format", "json"];
    all.extend_from_slice(args);
    let out = ok(dir, &all);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("cost JSON: {e}\n{out}"))
}

fn usd(j: &Json) -> Usd {
    Usd::parse(&j.to_string()).unwrap_or_else(|| panic!("{j} is not an amount"))
}

fn pool<'a>(cost: &'a Json, address: &str) -> &'a Json {
    cost["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["address"] == address)
        .unwrap_or_else(|| panic!("{address} is not priced: {cost:#}"))
}

/// AKS's system pool (the cluster's `default_node_pool`), priced.
fn aks_system_pool(cost: &Json) -> &Json {
    cost["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["part"] == "default_node_pool")
        .unwrap_or_else(|| panic!("AKS's system pool is priced: {cost:#}"))
}

fn multi_cloud(tag: &str, edit: &dyn Fn(String) -> String) -> PathBuf {
    copy(&root().join("examples/multi-cloud"), tag, edit)
}

const AWS_POOL: &str = "module.train_aws.aws_eks_node_group.pool[\"h100\"]";
const GCP_POOL: &str = "module.train_gcp.google_container_node_pool.pool[\"h100\"]";
const AZURE_POOL: &str = "module.train_azure.azurerm_kubernetes_cluster_node_pool.pool[\"h100\"]";

#[test]
fn the_cluster_spec_s_pools_cost_their_catalog_rows() {
    let dir = multi_cloud("spec", &|t| t);
    let cost = cost_json(&dir, &["--state", "s.tfstate"]);
    let mut total_max = Usd::ZERO;
    for (address, cloud) in [(AWS_POOL, "aws"), (GCP_POOL, "gcp"), (AZURE_POOL, "azure")] {
        let p = pool(&cost, address);
        let (t, r) = (p["instance_type"].as_str(), p["region"].as_str());
        let row = listed(
            cloud,
            t.expect("a type"),
            r.expect("a region"),
            Capacity::OnDemand,
        )
        .expect("a catalog row");
        assert_eq!(usd(&p["node_hour"]), row, "{address}");
        assert_eq!(p["price_source"], catalog(cloud).citation());
        assert_eq!(
            (p["gpu"].as_str(), p["gpus_per_node"].as_u64()),
            (Some("H100"), Some(8))
        );
        assert_eq!(Some(usd(&p["gpu_hour"])), row.per(8));
        assert_eq!(
            (p["nodes"]["min"].as_u64(), p["nodes"]["max"].as_u64()),
            (Some(0), Some(4))
        );
        assert_eq!(usd(&p["hourly"]["max"]), row.times(4));
        assert_eq!(p["prior"], Json::Null, "new");
        assert_eq!(
            usd(&cost["by_cloud"][cloud]["prior_hourly"]["max"]),
            Usd::ZERO
        );
        total_max += row.times(4);
    }
    let fees: Vec<&str> = cost["fees"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["what"].as_str())
        .collect();
    assert_eq!(
        fees.len(),
        4,
        "a control plane per cloud and the MultiKueue manager's: {fees:?}"
    );
    assert!(fees.iter().any(|f| f.starts_with("EKS control plane")));
    let fees_total: Usd = cost["fees"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| usd(&f["hourly"]))
        .sum();
    // The CPU pools (the clusters' system pools, the manager's) are
    // priced from the same catalogs' CPU rows.
    assert_eq!(cost["unpriced"], serde_json::json!([]));
    let system = [
        ("module.train_aws.aws_eks_node_group.system[0]", "aws", 2),
        (
            "module.train_gcp.google_container_node_pool.system[0]",
            "gcp",
            3,
        ),
        (
            "module.train_manager.aws_eks_node_group.system[0]",
            "aws",
            2,
        ),
    ];
    for (address, cloud, nodes) in system {
        let p = pool(&cost, address);
        let (t, r) = (p["instance_type"].as_str(), p["region"].as_str());
        let row = listed(
            cloud,
            t.expect("type"),
            r.expect("region"),
            Capacity::OnDemand,
        )
        .expect("a CPU row");
        assert_eq!(usd(&p["hourly"]["max"]), row.times(nodes), "{address}");
        assert_eq!(p["gpu"], Json::Null, "{address} has no GPUs");
        total_max += row.times(nodes);
    }
    let aks = aks_system_pool(&cost);
    let row = listed("azure", "Standard_D4s_v5", "eastus", Capacity::OnDemand).expect("row");
    assert_eq!(usd(&aks["hourly"]["max"]), row.times(2));
    total_max += row.times(2);
    assert_eq!(usd(&cost["hourly"]["max"]), total_max + fees_total);
}

#[test]
fn spot_pools_cost_the_spot_column_and_a_shape_without_one_is_unpriced() {
    let dir = multi_cloud("spot", &|t| {
        t.replace("capacity      = \"on_demand\"", "capacity      = \"spot\"")
    });
    let cost = cost_json(&dir, &["--state", "s.tfstate"]);
    for (address, cloud) in [(AWS_POOL, "aws"), (GCP_POOL, "gcp")] {
        let p = pool(&cost, address);
        let row = listed(
            cloud,
            p["instance_type"].as_str().expect("type"),
            p["region"].as_str().expect("region"),
            Capacity::Spot,
        );
        assert_eq!(Some(usd(&p["node_hour"])), row, "{address}");
        assert_eq!(p["capacity"], "spot");
    }
    // Azure lists no spot price for its H100 sizes.
    let why = &cost["unpriced_why"][AZURE_POOL];
    assert!(
        why.as_str().is_some_and(|w| w.contains("no spot price")),
        "{cost:#}"
    );
}

#[test]
fn gke_per_zone_counts_are_multiplied_by_the_zones() {
    let dir = fixture("gcp", "gke", &|t| t);
    let cost = cost_json(&dir, &["--state", "s.tfstate"]);
    let p = pool(&cost, "google_container_node_pool.h100");
    let spot = listed("gcp", "a3-highgpu-8g", "us-central1", Capacity::Spot).expect("row");
    assert_eq!(
        usd(&p["node_hour"]),
        spot,
        "spot = true uses the spot column"
    );
    assert_eq!(p["zones"], 2);
    assert_eq!(
        (p["nodes"]["min"].as_u64(), p["nodes"]["max"].as_u64()),
        (Some(2), Some(6))
    );
    assert_eq!(usd(&p["hourly"]["max"]), spot.times(6));
    assert_eq!(
        cost["unpriced"],
        serde_json::json!(["google_container_node_pool.cpu"])
    );
}

#[test]
fn aks_pools_take_their_cluster_s_location_and_unknown_sizes_are_unpriced() {
    let dir = fixture("azure", "aks", &|t| t);
    let cost = cost_json(&dir, &["--state", "s.tfstate"]);
    let p = pool(&cost, "azurerm_kubernetes_cluster_node_pool.h100");
    assert_eq!(p["region"], "eastus2", "the cluster's location");
    let row = listed(
        "azure",
        "Standard_NC40ads_H100_v5",
        "eastus2",
        Capacity::OnDemand,
    )
    .expect("row");
    assert_eq!(usd(&p["hourly"]["max"]), row.times(6));
    let fee = &cost["fees"][0];
    assert_eq!(
        (fee["what"].as_str(), usd(&fee["hourly"])),
        (Some("AKS control plane, Standard tier"), Usd::cents(10))
    );
    let unpriced: Vec<&str> = cost["unpriced"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    assert_eq!(unpriced, ["azurerm_kubernetes_cluster_node_pool.odd"]);
    // The system pool's CPU VMs are the catalog's CPU rows, in the
    // cluster's location.
    let system = aks_system_pool(&cost);
    let row = listed("azure", "Standard_D4s_v5", "eastus2", Capacity::OnDemand).expect("row");
    assert_eq!(usd(&system["hourly"]["max"]), row.times(3));
    assert!(
        cost["unpriced_why"]["azurerm_kubernetes_cluster_node_pool.odd"]
            .as_str()
            .is_some_and(|w| w.contains("Standard_Made_Up_v9 is not in the Azure catalog"))
    );
}

/// `max_size` 4 → 16 on p5.48xlarge: the plan shows 12 more nodes' worth.
#[test]
fn a_larger_pool_shows_its_change_in_every_rendering() {
    let dir = fixture("aws", "delta", &|t| t);
    let args = ["--no-refresh", "--state", "prior.tfstate"];
    let node = listed("aws", "p5.48xlarge", "us-east-1", Capacity::OnDemand).expect("row");
    let delta = node.times(12).signed_dollars();
    let human = ok(&dir, &[&["plan"][..], &args].concat());
    assert!(human.contains("max_size     = 4 -> 16"), "{human}");
    assert!(human.contains(&format!("{delta}/h at max")), "{human}");
    assert!(human.contains("1–16 (was 1–4)"), "{human}");
    let md = ok(
        &dir,
        &[&["plan", "--format", "markdown"][..], &args].concat(),
    );
    let money = md
        .find(&format!("**Cost: {delta}/h at max**"))
        .expect("the change first");
    assert!(
        money
            < md.find("| action | resources |")
                .expect("the resource list"),
        "{md}"
    );
    let plan: Json = serde_json::from_str(&ok(
        &dir,
        &[&["plan", "--format", "json"][..], &args].concat(),
    ))
    .expect("plan JSON");
    let p = pool(&plan["cost"], "aws_eks_node_group.gpu");
    assert_eq!(
        usd(&p["hourly"]["max"]) - usd(&p["prior"]["hourly"]["max"]),
        node.times(12)
    );
    assert_eq!(p["prior"]["nodes"]["max"], 4);
    assert_eq!(usd(&plan["cost"]["prior_hourly"]["max"]), node.times(4));
    for (format, name) in [
        ("human", "cost_human"),
        ("markdown", "cost_markdown"),
        ("json", "cost_json"),
    ] {
        let mut out = ok(&dir, &[&["cost", "--format", format][..], &args].concat());
        if format == "json" {
            let j: Json = serde_json::from_str(&out).expect("cost JSON");
            out = serde_json::to_string_pretty(&j).expect("JSON");
        }
        insta::assert_snapshot!(name, out);
    }
}

#[test]
fn a_price_file_overrides_the_catalog() {
    let prices = "# our rate\nInstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\np5.48xlarge,,,*,40.5,\n";
    let dir = fixture("aws", "prices", &|t| t);
    std::fs::write(dir.join("prices.csv"), prices).expect("prices");
    let args = [
        "--no-refresh",
        "--state",
        "prior.tfstate",
        "--prices",
        "prices.csv",
    ];
    let cost = cost_json(&dir, &args);
    let p = pool(&cost, "aws_eks_node_group.gpu");
    assert_eq!(
        (
            p["node_hour"].to_string().as_str(),
            p["price_source"].as_str()
        ),
        ("40.50", Some("prices.csv:3"))
    );
    assert_eq!(
        p["prior"]["node_hour"].to_string(),
        "40.50",
        "the prior pool too"
    );
    // The same rows from the cluster block's `prices` attribute.
    let spec = multi_cloud("spec-prices", &|t| {
        t.replace(
            "clouds             = var.clouds",
            "clouds             = var.clouds\n  prices             = \"prices.csv\"",
        )
    });
    std::fs::write(spec.join("prices.csv"), prices).expect("prices");
    let cost = cost_json(&spec, &["--state", "s.tfstate"]);
    assert_eq!(pool(&cost, AWS_POOL)["price_source"], "prices.csv:3");
    // A row for a GPU shape prices every instance type of it.
    std::fs::write(
        dir.join("shape.csv"),
        "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\n*,H100,8,us-east-1,31.5,\n",
    )
    .expect("prices");
    let cost = cost_json(
        &dir,
        &[
            "--no-refresh",
            "--state",
            "prior.tfstate",
            "--prices",
            "shape.csv",
        ],
    );
    let p = pool(&cost, "aws_eks_node_group.gpu");
    assert_eq!(
        (
            p["node_hour"].to_string().as_str(),
            p["price_source"].as_str()
        ),
        ("31.50", Some("shape.csv:2"))
    );
    let (code, out) = strata(&dir, &["plan", "--prices", "missing.csv"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("Cannot read the prices in missing.csv"),
        "{out}"
    );
    std::fs::write(dir.join("bad.csv"), "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\np5.48xlarge,,,us-east-1,cheap,\n").expect("bad");
    let (code, out) = strata(&dir, &["plan", "--prices", "bad.csv"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("line 2") && out.contains("\"cheap\" is not a price"),
        "{out}"
    );
}

#[test]
fn a_cap_below_the_price_fails_at_its_line_naming_cheaper_offers() {
    fn capped(cap: &'static str) -> impl Fn(String) -> String {
        move |t: String| {
            t.replace(
                "capacity      = \"on_demand\"",
                &format!("capacity      = \"on_demand\"\n    max_price_per_gpu_hour = {cap}"),
            )
        }
    }
    let aws_price = listed("aws", "p5.48xlarge", "us-east-1", Capacity::OnDemand)
        .and_then(|p| p.per(8))
        .expect("row");
    let gcp_price = listed("gcp", "a3-highgpu-8g", "us-central1", Capacity::OnDemand)
        .and_then(|p| p.per(8))
        .expect("row");
    assert!(
        gcp_price < aws_price,
        "the test needs GCP cheaper than AWS here"
    );
    let dir = multi_cloud("cap", &capped("6"));
    for cmd in ["validate", "plan"] {
        let (code, out) = strata(&dir, &[cmd, "--var", "clouds=[\"aws\",\"gcp\"]"]);
        let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(code, 1, "{cmd}: {out}");
        assert!(
            out.contains("Price over the cap (at ./cluster.hcl:52:30)"),
            "{cmd}: {out}"
        );
        assert!(
            out.contains(&format!(
                "p5.48xlarge in us-east-1 costs {} per GPU-hour",
                aws_price.dollars()
            )),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "cheapest first: GCP us-central1 a3-highgpu-8g at {}",
                gcp_price.dollars()
            )),
            "{out}"
        );
    }
    // Within the cap, and an override in a cloud block, pass.
    let dir = multi_cloud("cap-ok", &|t| {
        let t = capped("7")(t);
        t.replace("location        = \"eastus\"", "location        = \"eastus\"\n    node_pool \"h100\" {\n      max_price_per_gpu_hour = 13\n    }")
    });
    ok(&dir, &["validate"]);
    // A cloud block's cap is over the pool's, for that cloud's pools.
    let dir = multi_cloud("cap-cloud", &|t| {
        let t = capped("7")(t);
        t.replace(
            "region = \"us-east-1\"",
            "region = \"us-east-1\"\n    max_price_per_gpu_hour = 5",
        )
    });
    let (code, out) = strata(&dir, &["validate", "--var", "clouds=[\"aws\"]"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Price over the cap (at ./cluster.hcl:")
            && out.contains("max_price_per_gpu_hour = 5"),
        "{out}"
    );
    let dir = multi_cloud("cap-bad", &capped("\"cheap\""));
    let (code, out) = strata(&dir, &["validate"]);
    assert_eq!(code, 1);
    assert!(out.contains("Invalid max_price_per_gpu_hour"), "{out}");
}

#[test]
fn a_saved_plan_shows_the_cost_it_was_made_with() {
    let dir = fixture("aws", "saved", &|t| t);
    let args = ["--no-refresh", "--state", "prior.tfstate"];
    let direct: Json = serde_json::from_str(&ok(
        &dir,
        &[&["plan", "--format", "json"][..], &args].concat(),
    ))
    .expect("plan JSON");
    ok(&dir, &[&["plan", "--out", "p.plan"][..], &args].concat());
    let shown: Json =
        serde_json::from_str(&ok(&dir, &["show", "--json", "p.plan"])).expect("show JSON");
    assert_eq!(shown["cost"], direct["cost"]);
    assert!(ok(&dir, &["show", "p.plan"]).contains("Cost by the hour"));
}

/// A node group without `instance_types` runs its launch template's, which
/// the plan is still creating: found through what the group depends on.
#[test]
fn a_launch_template_s_instance_type_prices_its_node_group() {
    let dir = fixture("aws", "template", &|t| {
        let t = t.replace("  instance_types  = [\"p5.48xlarge\"]\n", "");
        format!(
            "{t}\nresource \"aws_launch_template\" \"gpu\" {{\n  name          = \"gpu\"\n  instance_type = \"g6e.xlarge\"\n}}\n"
        )
        .replace(
            "  scaling_config {",
            "  launch_template {\n    id      = aws_launch_template.gpu.id\n    version = aws_launch_template.gpu.latest_version\n  }\n  scaling_config {",
        )
    });
    std::fs::remove_file(dir.join("prior.tfstate")).expect("no prior");
    let cost = cost_json(&dir, &["--state", "s.tfstate"]);
    let p = pool(&cost, "aws_eks_node_group.gpu");
    assert_eq!(p["instance_type"], "g6e.xlarge", "{cost:#}");
    let row = listed("aws", "g6e.xlarge", "us-east-1", Capacity::OnDemand).expect("row");
    assert_eq!(usd(&p["node_hour"]), row);
    assert_eq!(
        (p["gpu"].as_str(), p["gpus_per_node"].as_u64()),
        (Some("L40S"), Some(1))
    );
}

/// EKS's fee by the cluster's version on the plan's date (1.31 left
/// standard support on 2025-11-26) and its upgrade policy.
#[test]
fn an_eks_control_plane_costs_what_its_support_period_does() {
    let cluster = |policy: &str| {
        format!(
            "provider \"aws\" {{\n  region = \"eu-west-1\"\n}}\n\nresource \"aws_eks_cluster\" \"c\" {{\n  name     = \"c\"\n  role_arn = \"arn:aws:iam::123456789012:role/c\"\n  version  = \"1.31\"\n  vpc_config {{\n    subnet_ids = [\"subnet-1\"]\n  }}\n{policy}}}\n"
        )
    };
    for (policy, hourly, what) in [
        (
            "",
            "0.60",
            "EKS control plane, extended support (1.31 left standard support 2025-11-26)",
        ),
        (
            "  upgrade_policy {\n    support_type = \"STANDARD\"\n  }\n",
            "0.10",
            "EKS control plane, standard support",
        ),
    ] {
        let dir = common::scratch("cost", "eks-fee");
        std::fs::write(dir.join("main.tf"), cluster(policy)).expect("config");
        let cost = cost_json(&dir, &["--state", "s.tfstate"]);
        let fee = &cost["fees"][0];
        assert_eq!(
            (fee["what"].as_str(), fee["region"].as_str()),
            (Some(what), Some("eu-west-1"))
        );
        assert_eq!(usd(&fee["hourly"]), Usd::parse(hourly).expect("amount"));
    }
}

/// A pool the configuration no longer has: no nodes after, its prior cost
/// the saving.
#[test]
fn a_deleted_pool_shows_what_it_saves() {
    let dir = fixture("aws", "deleted", &|t| {
        t.split("resource \"aws_eks_node_group\"")
            .next()
            .unwrap_or_default()
            .to_string()
            + "resource \"terraform_data\" \"keep\" {}\n"
    });
    let args = ["--no-refresh", "--state", "prior.tfstate"];
    let cost = cost_json(&dir, &args);
    let p = pool(&cost, "aws_eks_node_group.gpu");
    let node = listed("aws", "p5.48xlarge", "us-east-1", Capacity::OnDemand).expect("row");
    assert_eq!(
        (p["nodes"]["max"].as_u64(), usd(&p["hourly"]["max"])),
        (Some(0), Usd::ZERO)
    );
    assert_eq!(usd(&p["prior"]["hourly"]["max"]), node.times(4));
    let human = ok(&dir, &[&["plan"][..], &args].concat());
    assert!(
        human.contains(&format!(
            "{}/h at max",
            (Usd::ZERO - node.times(4)).signed_dollars()
        )),
        "{human}"
    );
}

/// A count only apply can know is null with its reason, and so is every
/// total that needs it; the human form says which pool and why.
#[test]
fn an_unknown_count_is_null_and_says_why() {
    let dir = fixture("aws", "unknown", &|t| {
        t.replace(
            "max_size     = 16",
            "max_size     = terraform_data.size.output",
        ) + "\nresource \"terraform_data\" \"size\" {\n  input = 16\n}\n"
    });
    std::fs::remove_file(dir.join("prior.tfstate")).expect("no prior");
    let cost = cost_json(&dir, &["--state", "s.tfstate"]);
    let p = pool(&cost, "aws_eks_node_group.gpu");
    assert_eq!(p["nodes"]["max"], Json::Null);
    assert_eq!(
        p["nodes"]["unknown"]["max"],
        "scaling_config.max_size is known only after apply"
    );
    assert_eq!(
        (p["hourly"]["max"].clone(), p["nodes"]["min"].as_u64()),
        (Json::Null, Some(1))
    );
    assert_eq!(cost["hourly"]["max"], Json::Null, "the total needs it");
    assert!(cost["hourly"]["min"].is_number());
    let human = ok(&dir, &["cost", "--state", "s.tfstate"]);
    assert!(
        human.contains("Node counts not known until apply:\n    aws_eks_node_group.gpu: scaling_config.max_size is known only after apply"),
        "{human}"
    );
}

/// `strata cost` says where a MultiKueue manager sends jobs, in the order
/// and at the prices that decided it, beside what the clusters cost.
#[test]
fn cost_lists_the_workers_jobs_go_to_in_order() {
    let dir = multi_cloud("dispatch", &|t| t);
    let human = ok(&dir, &["cost", "--state", "s.tfstate"]);
    let at = human
        .find("MultiKueue of train:")
        .unwrap_or_else(|| panic!("{human}"));
    let order: Vec<usize> = [
        "1. train-gcp-us-central1",
        "2. train-aws-us-east-1",
        "3. train-azure-eastus",
    ]
    .iter()
    .map(|w| {
        human[at..]
            .find(w)
            .unwrap_or_else(|| panic!("{w}:\n{human}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{human}");
    let cost = cost_json(&dir, &["--state", "s.tfstate"]);
    let workers: Vec<&str> = cost["dispatch"][0]["workers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["name"].as_str())
        .collect();
    assert_eq!(
        workers,
        [
            "train-gcp-us-central1",
            "train-aws-us-east-1",
            "train-azure-eastus"
        ]
    );
    let gcp = listed("gcp", "a3-highgpu-8g", "us-central1", Capacity::OnDemand)
        .and_then(|p| p.per(8))
        .expect("row");
    // As the placements' prices: a decimal string.
    let first = cost["dispatch"][0]["workers"][0]["gpu_hour"].as_str();
    assert_eq!(first.and_then(Usd::parse), Some(gcp), "{cost:#}");
    assert_eq!(cost["dispatch"][0]["manager"], "train_manager");
}
