//! The Azure driver against the Azure stand-in (`testing/standin`: Azure
//! Resource Manager's documented wire format and the Microsoft identity
//! platform's token endpoint, in memory, over HTTPS with a test CA): no
//! Azure endpoint can be reached from here and no emulator of ARM exists.
//!
//! A whole GPU cluster stack is applied, planned again (empty), changed in
//! place (a node label, the node count) and by replacement (the VM size),
//! through throttling and a capacity failure, and destroyed: the stand-in
//! holds nothing afterwards. Credentials go through Microsoft's
//! `azure_identity`: a client secret, workload identity federation (a
//! token file) and the Azure CLI (a stand-in `az` on PATH).

mod common;

use std::path::Path;
use strata_standin::azure::{self, Azure};

enum Creds {
    Secret(&'static str),
    /// A federated token file (workload identity).
    TokenFile,
    /// The Azure CLI, a script in `bin/` printing this token.
    Cli(String),
}

fn strata(dir: &Path, a: &Azure, creds: &Creds, args: &[&str]) -> (i32, String) {
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, &a.ca_pem).expect("ca");
    let mut c = common::run::strata(dir);
    c.args(args)
        .env("SSL_CERT_FILE", &ca)
        .env("AZURE_AUTHORITY_HOST", &a.server.url)
        .env("ARM_RESOURCE_MANAGER_ENDPOINT", &a.server.url)
        .env("ARM_SUBSCRIPTION_ID", azure::SUBSCRIPTION)
        .env("ARM_TENANT_ID", azure::TENANT)
        .env("ARM_CLIENT_ID", azure::CLIENT_ID)
        .env("HOME", dir);
    for v in [
        "ARM_CLIENT_SECRET",
        "AZURE_CLIENT_SECRET",
        "AZURE_FEDERATED_TOKEN_FILE",
        "ARM_OIDC_TOKEN_FILE_PATH",
        "AZURE_TENANT_ID",
        "AZURE_CLIENT_ID",
    ] {
        c.env_remove(v);
    }
    match creds {
        Creds::Secret(s) => {
            c.env("ARM_CLIENT_SECRET", s);
        }
        Creds::TokenFile => {
            let f = dir.join("federated-token");
            std::fs::write(
                &f,
                "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOmFjbWUvaW5mcmEifQ.c2ln",
            )
            .expect("token file");
            c.env("AZURE_FEDERATED_TOKEN_FILE", &f);
        }
        Creds::Cli(token) => {
            let bin = dir.join("bin");
            std::fs::create_dir_all(&bin).expect("bin");
            let az = bin.join("az");
            std::fs::write(
                &az,
                format!(
                    "#!/bin/sh\necho \"$@\" >> {}\ncat <<'EOF'\n{{\"accessToken\": \"{token}\", \"expiresOn\": \"2099-01-01 00:00:00.000000\", \"expires_on\": 4070908800, \"subscription\": \"{}\", \"tenant\": \"{}\", \"tokenType\": \"Bearer\"}}\nEOF\n",
                    dir.join("az.log").display(),
                    azure::SUBSCRIPTION,
                    azure::TENANT
                ),
            )
            .expect("az");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&az, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }
            let path = format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            );
            c.env("PATH", path).env_remove("ARM_CLIENT_ID");
        }
    }
    common::output(c)
}

const STACK: &str = r#"
variable "vm_size" {
  default = "Standard_ND96isr_H100_v5"
}
variable "nodes" {
  default = 1
}
variable "workload" {
  default = "training"
}
variable "autoscale" {
  default = false
}

provider "azurerm" {
  features {}
}

resource "azurerm_resource_group" "rg" {
  name     = "gpu-train"
  location = "East US"
  tags     = { team = "ml" }
}

resource "azurerm_virtual_network" "vnet" {
  name                = "gpu-vnet"
  resource_group_name = azurerm_resource_group.rg.name
  location            = azurerm_resource_group.rg.location
  address_space       = ["10.50.0.0/16"]
}

resource "azurerm_subnet" "nodes" {
  name                 = "nodes"
  resource_group_name  = azurerm_resource_group.rg.name
  virtual_network_name = azurerm_virtual_network.vnet.name
  address_prefixes     = ["10.50.0.0/20"]
}

resource "azurerm_network_security_group" "nodes" {
  name                = "gpu-nodes"
  resource_group_name = azurerm_resource_group.rg.name
  location            = azurerm_resource_group.rg.location
  security_rule {
    name                       = "intra-vnet"
    priority                   = 100
    direction                  = "Inbound"
    access                     = "Allow"
    protocol                   = "*"
    source_port_range          = "*"
    destination_port_range     = "*"
    source_address_prefix      = "10.50.0.0/16"
    destination_address_prefix = "*"
  }
}

resource "azurerm_subnet_network_security_group_association" "nodes" {
  subnet_id                 = azurerm_subnet.nodes.id
  network_security_group_id = azurerm_network_security_group.nodes.id
}

resource "azurerm_user_assigned_identity" "cluster" {
  name                = "gpu-cluster"
  resource_group_name = azurerm_resource_group.rg.name
  location            = azurerm_resource_group.rg.location
}

resource "azurerm_role_assignment" "network" {
  scope                = azurerm_virtual_network.vnet.id
  role_definition_name = "Network Contributor"
  principal_id         = azurerm_user_assigned_identity.cluster.principal_id
}

resource "azurerm_kubernetes_cluster" "aks" {
  name                      = "train"
  location                  = azurerm_resource_group.rg.location
  resource_group_name       = azurerm_resource_group.rg.name
  dns_prefix                = "train"
  kubernetes_version        = "1.31"
  oidc_issuer_enabled       = true
  workload_identity_enabled = true
  tags                      = { team = "ml" }

  default_node_pool {
    name           = "system"
    vm_size        = "Standard_D4s_v5"
    node_count     = 1
    vnet_subnet_id = azurerm_subnet.nodes.id
  }
  identity {
    type         = "UserAssigned"
    identity_ids = [azurerm_user_assigned_identity.cluster.id]
  }
  network_profile {
    network_plugin      = "azure"
    network_plugin_mode = "overlay"
    pod_cidr            = "192.168.0.0/16"
    service_cidr        = "10.0.0.0/16"
    dns_service_ip      = "10.0.0.10"
  }
  depends_on = [azurerm_role_assignment.network]
}

resource "azurerm_kubernetes_cluster_node_pool" "h100" {
  name                  = "h100"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = var.vm_size
  node_count            = var.autoscale ? null : var.nodes
  auto_scaling_enabled  = var.autoscale
  min_count             = var.autoscale ? 0 : null
  max_count             = var.autoscale ? 4 : null
  vnet_subnet_id        = azurerm_subnet.nodes.id
  priority              = "Spot"
  eviction_policy       = "Delete"
  spot_max_price        = -1
  gpu_driver            = "None"
  node_labels = {
    workload                                = var.workload
    "kubernetes.azure.com/scalesetpriority" = "spot"
  }
  node_taints = [
    "nvidia.com/gpu=present:NoSchedule",
    "kubernetes.azure.com/scalesetpriority=spot:NoSchedule",
  ]
}

resource "azurerm_storage_account" "checkpoints" {
  name                     = "acmemlckpt"
  resource_group_name      = azurerm_resource_group.rg.name
  location                 = azurerm_resource_group.rg.location
  account_tier             = "Standard"
  account_replication_type = "LRS"
  min_tls_version          = "TLS1_2"
}

output "oidc_issuer" {
  value = azurerm_kubernetes_cluster.aks.oidc_issuer_url
}

output "api_server" {
  value = nonsensitive(azurerm_kubernetes_cluster.aks.kube_config[0].host)
}

output "ca" {
  value = base64decode(azurerm_kubernetes_cluster.aks.kube_config[0].cluster_ca_certificate)
  sensitive = true
}
"#;

fn pool_id() -> String {
    format!(
        "/subscriptions/{}/resourceGroups/gpu-train/providers/Microsoft.ContainerService/managedClusters/train/agentPools/h100",
        azure::SUBSCRIPTION
    )
}

#[test]
fn a_gpu_cluster_stack_applies_changes_survives_faults_and_destroys() {
    let a = azure::start().expect("stand-in");
    let d = common::scratch("azure", "stack");
    std::fs::write(d.join("main.tf"), STACK).expect("write");
    let creds = Creds::Secret(azure::CLIENT_SECRET);

    let (code, out) = strata(&d, &a, &creds, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Apply complete! Resources: 10 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    assert!(
        out.contains("oidc_issuer = \"https://eastus.oic.prod-aks.azure.com/"),
        "{out}"
    );
    // The cluster's credentials (listClusterUserCredential): its address
    // and CA, for the kubernetes provider; secret in every rendering.
    assert!(out.contains("api_server = \"https://"), "{out}");
    assert!(out.contains("ca = <sensitive>"), "{out}");
    // State records the schema's sensitive attributes, so no later
    // rendering shows them.
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("terraform.tfstate")).expect("state"))
            .expect("state JSON");
    let aks = state["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["type"] == "azurerm_kubernetes_cluster")
        .expect("the cluster in state");
    let marked = aks["instances"][0]["sensitive_attributes"].to_string();
    assert!(
        marked.contains("kube_config") && marked.contains("kube_config_raw"),
        "{marked}"
    );
    let (code, out) = strata(&d, &a, &creds, &["output", "--json", "ca"]);
    assert_eq!((code, out.trim()), (0, "\"stand-in CA of train\""), "{out}");
    let (code, out) = strata(&d, &a, &creds, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan must be empty:\n{out}");

    // What strata made is in Azure as configured.
    let pool = a.get(&pool_id()).expect("the node pool");
    assert_eq!(pool["properties"]["vmSize"], "Standard_ND96isr_H100_v5");
    assert_eq!(pool["properties"]["scaleSetPriority"], "Spot");
    assert_eq!(pool["properties"]["gpuProfile"]["driver"], "None");
    assert_eq!(
        pool["properties"]["tags"]["strata-lineage"]
            .as_str()
            .map(str::len),
        Some(36)
    );
    let subnet = a
        .ids()
        .into_iter()
        .find(|i| i.ends_with("/subnets/nodes"))
        .and_then(|i| a.get(&i))
        .expect("the subnet");
    assert!(
        subnet["properties"]["networkSecurityGroup"]["id"]
            .as_str()
            .is_some_and(|i| i.ends_with("/gpu-nodes")),
        "{subnet}"
    );
    let cluster = a
        .ids()
        .into_iter()
        .find(|i| i.ends_with("/managedClusters/train"))
        .and_then(|i| a.get(&i))
        .expect("cluster");
    assert_eq!(
        cluster["properties"]["securityProfile"]["workloadIdentity"]["enabled"],
        true
    );
    assert!(
        a.ids().iter().any(|i| i.contains("/roleAssignments/")),
        "the role assignment"
    );
    // Refresh lists each collection once rather than reading each object.
    let before = a.calls().len();
    let (code, out) = strata(&d, &a, &creds, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
    let calls = a.calls()[before..].to_vec();
    assert!(
        calls.len() <= 14,
        "{} calls to refresh 10 resources: {calls:#?}",
        calls.len()
    );

    // In place: a node label and the node count.
    let vars = ["--var", "workload=inference", "--var", "nodes=3"];
    let (code, out) = strata(
        &d,
        &a,
        &creds,
        &[&["apply", "--auto-approve"][..], &vars].concat(),
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 added, 1 changed, 0 destroyed"), "{out}");
    let pool = a.get(&pool_id()).expect("pool");
    assert_eq!(pool["properties"]["nodeLabels"]["workload"], "inference");
    assert_eq!(pool["properties"]["count"], 3);
    let (code, out) = strata(
        &d,
        &a,
        &creds,
        &[&["plan", "--detailed-exitcode"][..], &vars].concat(),
    );
    assert_eq!(code, 0, "{out}");

    // Throttled and failing calls are retried: two 429s with Retry-After on
    // the network list and a 503 on the cluster list.
    a.server.inject(common::fault(
        &[
            "GET /subscriptions/",
            "/providers/Microsoft.Network/virtualNetworks?",
        ],
        2,
        429,
        Some("1"),
        r#"{"error":{"code":"TooManyRequests","message":"The request is being throttled."}}"#,
    ));
    a.server.inject(common::fault(
        &["GET /subscriptions/", "/managedClusters?"],
        1,
        503,
        None,
        r#"{"error":{"code":"ServiceUnavailable","message":"The service is temporarily unavailable."}}"#,
    ));
    let (code, out) = strata(
        &d,
        &a,
        &creds,
        &[&["plan", "--detailed-exitcode"][..], &vars].concat(),
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(a.server.pending(), 0, "every injected fault was met");

    // Autoscaling switched on in place.
    let vars = [
        "--var",
        "workload=inference",
        "--var",
        "nodes=3",
        "--var",
        "autoscale=true",
    ];
    let run = |args: &[&str]| strata(&d, &a, &creds, &[args, &vars[..]].concat());
    let (code, out) = run(&["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 added, 1 changed, 0 destroyed"), "{out}");
    let pool = a.get(&pool_id()).expect("pool");
    assert_eq!(pool["properties"]["enableAutoScaling"], true, "{pool}");
    assert_eq!(pool["properties"]["maxCount"], 4, "{pool}");
    let (code, out) = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");

    // Replace: a new VM size; the first try finds no capacity.
    a.fail_next(
        "agentpools",
        "AllocationFailed",
        "Allocation failed. We do not have sufficient capacity for the requested VM size in this region.",
    );
    let vars = [
        "--var",
        "workload=inference",
        "--var",
        "nodes=3",
        "--var",
        "autoscale=true",
        "--var",
        "vm_size=Standard_ND96amsr_A100_v4",
    ];
    let run = |args: &[&str]| strata(&d, &a, &creds, &[args, &vars[..]].concat());
    common::replace_through_a_stockout(&run, "AllocationFailed", "in the region");
    let pool = a.get(&pool_id()).expect("pool");
    assert_eq!(pool["properties"]["vmSize"], "Standard_ND96amsr_A100_v4");
    assert_eq!(pool["properties"]["provisioningState"], "Succeeded");

    // Destroy: the stand-in holds nothing.
    let (code, out) = strata(
        &d,
        &a,
        &creds,
        &[&["destroy", "--auto-approve"][..], &vars].concat(),
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("10 destroyed"), "{out}");
    assert_eq!(a.ids(), Vec::<String>::new());
}

#[test]
fn credentials_come_from_azure_identity_and_refusals_name_their_source() {
    let a = azure::start().expect("stand-in");
    let d = common::scratch("azure", "creds");
    std::fs::write(
        d.join("main.tf"),
        r#"provider "azurerm" {
  features {}
}
resource "azurerm_resource_group" "rg" {
  name     = "creds-test"
  location = "eastus"
}"#,
    )
    .expect("write");

    // Workload identity federation: a token file exchanged for a token.
    let (code, out) = strata(&d, &a, &Creds::TokenFile, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(a.ids().len(), 1);

    // The Azure CLI's account when nothing else is set.
    let token = a.issue_token();
    let (code, out) = strata(&d, &a, &Creds::Cli(token), &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
    let asked = std::fs::read_to_string(d.join("az.log")).unwrap_or_default();
    assert!(asked.contains("account get-access-token"), "{asked}");

    // A refused secret: the error names the source, never the secret.
    let (code, out) = strata(&d, &a, &Creds::Secret("wrong-secret-value"), &["plan"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("client secret for client"), "{out}");
    assert!(out.contains("AADSTS7000215"), "{out}");
    assert!(
        !out.contains("wrong-secret-value"),
        "no secret in errors:\n{out}"
    );

    let (code, out) = strata(
        &d,
        &a,
        &Creds::Secret(azure::CLIENT_SECRET),
        &["destroy", "--auto-approve"],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(a.ids(), Vec::<String>::new());
}

/// A cluster and a spot pool written with the least azurerm takes (no
/// pod range, no eviction policy, no price cap): AKS answers with the ones
/// it chose (10.244.0.0/16, Delete, -1), as Microsoft's examples show, and
/// a second plan is empty rather than replacing the pool each time.
#[test]
fn what_aks_fills_in_is_no_change() {
    let a = azure::start().expect("stand-in");
    let d = common::scratch("azure", "aks-defaults");
    let least = STACK
        .replace("    pod_cidr            = \"192.168.0.0/16\"\n", "")
        .replace("  eviction_policy       = \"Delete\"\n", "")
        .replace("  spot_max_price        = -1\n", "");
    assert!(!least.contains("pod_cidr"), "{least}");
    assert_ne!(least, STACK);
    std::fs::write(d.join("main.tf"), least).expect("write");
    let creds = Creds::Secret(azure::CLIENT_SECRET);
    let (code, out) = strata(&d, &a, &creds, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let pool = a.get(&pool_id()).expect("the pool");
    assert_eq!(pool["properties"]["spotMaxPrice"], -1, "{pool}");
    let (code, out) = strata(&d, &a, &creds, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "what AKS chose is no change:\n{out}");
}

/// AKS runs one operation at a time on a cluster (`OperationNotAllowed`
/// for a second) and adds pools to a subnet one at a time. Three GPU pools
/// in one cluster and subnet: the apply begins each only when the one
/// before is done, so AKS refuses nothing and no pool waits on retries;
/// the destroy likewise.
#[test]
fn a_clusters_pools_are_written_one_at_a_time() {
    let a = azure::start().expect("stand-in");
    let d = common::scratch("azure", "pool-turns");
    let three = STACK.replace(
        "resource \"azurerm_kubernetes_cluster_node_pool\" \"h100\" {\n  name                  = \"h100\"",
        "resource \"azurerm_kubernetes_cluster_node_pool\" \"h100\" {\n  for_each              = toset([\"h100a\", \"h100b\", \"h100c\"])\n  name                  = each.key",
    );
    assert_ne!(three, STACK);
    std::fs::write(d.join("main.tf"), three).expect("write");
    let creds = Creds::Secret(azure::CLIENT_SECRET);
    let (code, out) = strata(&d, &a, &creds, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    common::one_at_a_time(
        &out,
        "azurerm_kubernetes_cluster_node_pool.h100[",
        ("Creating...", "Creation complete"),
        3,
    );
    let (code, out) = strata(&d, &a, &creds, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    common::one_at_a_time(
        &out,
        "azurerm_kubernetes_cluster_node_pool.h100[",
        ("Destroying...", "Destruction complete"),
        3,
    );
    assert_eq!(
        a.refused_while_busy(),
        0,
        "AKS refused a write to a busy cluster"
    );
}

/// The whole stack through throttling, 5xx, resets and slow answers at the
/// rates of `tests/faults.rs`: it applies, plans nothing more, and is
/// destroyed with nothing left.
#[test]
fn the_stack_converges_through_faults() {
    let a = azure::start().expect("stand-in");
    let d = common::scratch("azure", "faults");
    std::fs::write(d.join("main.tf"), STACK).expect("write");
    let creds = Creds::Secret(azure::CLIENT_SECRET);
    a.server.faults(Some(common::faults()));
    let (code, out) = strata(&d, &a, &creds, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("10 added"), "{out}");
    let (code, out) = strata(&d, &a, &creds, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = strata(&d, &a, &creds, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(a.ids(), Vec::<String>::new());
    common::assert_faults_struck(&a.server.counts);
}
