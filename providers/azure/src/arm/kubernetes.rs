//! AKS: clusters and their node pools.

use super::{common, s, Scope, Spec};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use strata_provider::values::list_block_max1;
use strata_provider::AttributeSchema as A;
use strata_rest::fields::{array, f, object, out, Field};
use strata_value::types::Type;

const SYSTEM_POOL: &[Field] = &[
    f("name", "name"),
    f("vm_size", "vmSize"),
    f("node_count", "count"),
    f("vnet_subnet_id", "vnetSubnetID"),
    f("auto_scaling_enabled", "enableAutoScaling"),
    f("min_count", "minCount"),
    f("max_count", "maxCount"),
    f("os_disk_size_gb", "osDiskSizeGB"),
    f("node_labels", "nodeLabels"),
    f("zones", "availabilityZones"),
];

pub static KUBERNETES_CLUSTER: Spec = Spec {
    type_name: "azurerm_kubernetes_cluster",
    provider: "Microsoft.ContainerService/managedClusters",
    api_version: "2025-01-01",
    scope: Scope::InGroup,
    located: true,
    tags: Some("tags"),
    fields: &[
        f("dns_prefix", "properties.dnsPrefix"),
        f("kubernetes_version", "properties.kubernetesVersion"),
        f("sku_tier", "sku.tier"),
        array(
            "default_node_pool",
            "properties.agentPoolProfiles",
            SYSTEM_POOL,
        ),
        object(
            "network_profile",
            "properties.networkProfile",
            &[
                f("network_plugin", "networkPlugin"),
                f("network_plugin_mode", "networkPluginMode"),
                f("network_policy", "networkPolicy"),
                f("service_cidr", "serviceCidr"),
                f("dns_service_ip", "dnsServiceIP"),
                f("pod_cidr", "podCidr"),
                f("outbound_type", "outboundType"),
            ],
        ),
        f(
            "oidc_issuer_enabled",
            "properties.oidcIssuerProfile.enabled",
        ),
        out("oidc_issuer_url", "properties.oidcIssuerProfile.issuerURL"),
        f(
            "workload_identity_enabled",
            "properties.securityProfile.workloadIdentity.enabled",
        ),
        f(
            "private_cluster_enabled",
            "properties.apiServerAccessProfile.enablePrivateCluster",
        ),
        out("fqdn", "properties.fqdn"),
        out("node_resource_group", "properties.nodeResourceGroup"),
        out(
            "current_kubernetes_version",
            "properties.currentKubernetesVersion",
        ),
    ],
    schema: || {
        let mut schema = common(
            true,
            true,
            true,
            vec![
                (
                    "dns_prefix",
                    A::required(s(), "The API server's DNS prefix.").force_new(),
                ),
                (
                    "kubernetes_version",
                    A::optional(s(), "The control plane's version.").and_computed(),
                ),
                (
                    "sku_tier",
                    A::optional(s(), "The control plane's pricing tier: Free, Standard or Premium.")
                        .and_computed(),
                ),
                (
                    "oidc_issuer_enabled",
                    A::optional(
                        Type::Bool,
                        "Publish an OIDC issuer (for workload identity).",
                    ),
                ),
                (
                    "workload_identity_enabled",
                    A::optional(Type::Bool, "Workload identity for pods."),
                ),
                (
                    "private_cluster_enabled",
                    A::optional(Type::Bool, "The API server has only a private address.")
                        .force_new(),
                ),
                ("oidc_issuer_url", A::computed(s(), "The OIDC issuer.")),
                ("fqdn", A::computed(s(), "The API server's name.")),
                (
                    "node_resource_group",
                    A::computed(s(), "The resource group AKS keeps the nodes in."),
                ),
                (
                    "current_kubernetes_version",
                    A::computed(s(), "The running version."),
                ),
                (
                    "kubelet_identity",
                    A::computed(
                        Type::list(Type::object(BTreeMap::from([
                            ("client_id".to_string(), s()),
                            ("object_id".to_string(), s()),
                            ("user_assigned_identity_id".to_string(), s()),
                        ]))),
                        "The nodes' identity (to grant registry pulls).",
                    ),
                ),
                (
                    "kube_config",
                    A::computed(
                        Type::list(Type::object(BTreeMap::from(
                            [
                                "host",
                                "username",
                                "password",
                                "client_certificate",
                                "client_key",
                                "cluster_ca_certificate",
                            ]
                            .map(|k| (k.to_string(), s())),
                        ))),
                        "The cluster user's credentials (listClusterUserCredential); certificates base64-encoded PEM, as azurerm gives them.",
                    )
                    .sensitive(),
                ),
                (
                    "kube_config_raw",
                    A::computed(s(), "The cluster user's kubeconfig (YAML).").sensitive(),
                ),
            ],
        );
        let mut pool = list_block_max1(vec![
            ("name", A::required(s(), "The system pool's name.")),
            ("vm_size", A::required(s(), "The system pool's VM size.")),
            (
                "node_count",
                A::optional(Type::Number, "Nodes (without autoscaling).").and_computed(),
            ),
            ("vnet_subnet_id", A::optional(s(), "The nodes' subnet.")),
            (
                "auto_scaling_enabled",
                A::optional(Type::Bool, "Autoscale the pool."),
            ),
            ("min_count", A::optional(Type::Number, "Fewest nodes.")),
            ("max_count", A::optional(Type::Number, "Most nodes.")),
            (
                "os_disk_size_gb",
                A::optional(Type::Number, "OS disk size.").and_computed(),
            ),
            (
                "node_labels",
                A::optional(Type::map(s()), "Kubernetes labels on the nodes."),
            ),
            ("zones", A::optional(Type::list(s()), "Availability zones.")),
        ]);
        pool.min_items = 1;
        schema.blocks.insert("default_node_pool".into(), pool);
        schema.blocks.insert(
            "identity".into(),
            list_block_max1(vec![
                ("type", A::required(s(), "SystemAssigned or UserAssigned.")),
                (
                    "identity_ids",
                    A::optional(Type::set(s()), "User-assigned identities."),
                ),
                (
                    "principal_id",
                    A::computed(s(), "The system-assigned identity's principal."),
                ),
            ]),
        );
        schema.blocks.insert(
            "network_profile".into(),
            list_block_max1(vec![
                (
                    "network_plugin",
                    A::required(s(), "azure, kubenet or none."),
                ),
                ("network_plugin_mode", A::optional(s(), "overlay.")),
                (
                    "network_policy",
                    A::optional(s(), "azure, calico or cilium."),
                ),
                (
                    "service_cidr",
                    A::optional(s(), "The services' range.").and_computed(),
                ),
                (
                    "dns_service_ip",
                    A::optional(s(), "The cluster DNS address.").and_computed(),
                ),
                // AKS chooses one (10.244.0.0/16) when left out.
                (
                    "pod_cidr",
                    A::optional(s(), "The pods' range (overlay, kubenet).").and_computed(),
                ),
                (
                    "outbound_type",
                    A::optional(s(), "loadBalancer, userDefinedRouting, managedNATGateway.")
                        .and_computed(),
                ),
            ]),
        );
        schema
    },
    nested_force_new: &[
        ["default_node_pool", "name"],
        ["default_node_pool", "vm_size"],
        ["default_node_pool", "vnet_subnet_id"],
        ["default_node_pool", "os_disk_size_gb"],
        ["default_node_pool", "zones"],
        ["network_profile", "network_plugin"],
        ["network_profile", "network_plugin_mode"],
        ["network_profile", "network_policy"],
        ["network_profile", "service_cidr"],
        ["network_profile", "dns_service_ip"],
        ["network_profile", "pod_cidr"],
        ["network_profile", "outbound_type"],
    ],
    keep: &[],
    to_api: Some(|tf, api| {
        if let Some(pools) = api["properties"]["agentPoolProfiles"].as_array_mut() {
            for p in pools {
                p["mode"] = json!("System");
                p["type"] = json!("VirtualMachineScaleSets");
            }
        }
        let id = &tf["identity"][0];
        if let Some(t) = id["type"].as_str() {
            api["identity"] = json!({ "type": t });
            if let Some(ids) = id["identity_ids"].as_array() {
                let map: Map<String, Json> = ids
                    .iter()
                    .filter_map(|i| Some((i.as_str()?.to_string(), json!({}))))
                    .collect();
                api["identity"]["userAssignedIdentities"] = Json::Object(map);
            }
        }
    }),
    from_api: Some(|api, tf| {
        let id = &api["identity"];
        if let Some(t) = id["type"].as_str() {
            let ids: Vec<Json> = id["userAssignedIdentities"]
                .as_object()
                .map(|m| m.keys().map(|k| json!(k)).collect())
                .unwrap_or_default();
            tf["identity"] = json!([{
                "type": t,
                "identity_ids": if ids.is_empty() { Json::Null } else { json!(ids) },
                "principal_id": id["principalId"],
            }]);
        }
        let k = &api["properties"]["identityProfile"]["kubeletidentity"];
        if k.is_object() {
            tf["kubelet_identity"] = json!([{
                "client_id": k["clientId"],
                "object_id": k["objectId"],
                "user_assigned_identity_id": k["resourceId"],
            }]);
        }
        if let Some(raw) = api["strata:kubeconfig"].as_str() {
            tf["kube_config_raw"] = json!(raw);
            tf["kube_config"] = json!([crate::kubeconfig::credentials(raw)]);
        }
    }),
    credentials: Some("listClusterUserCredential"),
    settings: None,
    queues: &[],
};

pub static NODE_POOL: Spec = Spec {
    type_name: "azurerm_kubernetes_cluster_node_pool",
    provider: "",
    api_version: "2025-01-01",
    scope: Scope::UnderId {
        parent: "kubernetes_cluster_id",
        segment: "agentPools",
    },
    located: false,
    tags: Some("properties.tags"),
    fields: &[
        f("vm_size", "properties.vmSize"),
        f("node_count", "properties.count"),
        f("auto_scaling_enabled", "properties.enableAutoScaling"),
        f("min_count", "properties.minCount"),
        f("max_count", "properties.maxCount"),
        f("node_labels", "properties.nodeLabels"),
        f("node_taints", "properties.nodeTaints"),
        f("priority", "properties.scaleSetPriority"),
        f("eviction_policy", "properties.scaleSetEvictionPolicy"),
        f("spot_max_price", "properties.spotMaxPrice"),
        f("vnet_subnet_id", "properties.vnetSubnetID"),
        f("mode", "properties.mode"),
        f("os_disk_size_gb", "properties.osDiskSizeGB"),
        f("os_type", "properties.osType"),
        f("orchestrator_version", "properties.orchestratorVersion"),
        f("zones", "properties.availabilityZones"),
        f("gpu_driver", "properties.gpuProfile.driver"),
        f(
            "capacity_reservation_group_id",
            "properties.capacityReservationGroupID",
        ),
    ],
    schema: || {
        let mut schema = common(
            false,
            false,
            true,
            vec![
                (
                    "kubernetes_cluster_id",
                    A::required(s(), "The cluster's id.").force_new(),
                ),
                (
                    "vm_size",
                    A::required(s(), "The VM size (Standard_ND96isr_H100_v5).").force_new(),
                ),
                (
                    "node_count",
                    A::optional(Type::Number, "Nodes (without autoscaling).").and_computed(),
                ),
                (
                    "auto_scaling_enabled",
                    A::optional(Type::Bool, "Autoscale the pool."),
                ),
                ("min_count", A::optional(Type::Number, "Fewest nodes.")),
                ("max_count", A::optional(Type::Number, "Most nodes.")),
                (
                    "node_labels",
                    A::optional(Type::map(s()), "Kubernetes labels on the nodes."),
                ),
                (
                    "node_taints",
                    A::optional(Type::list(s()), "Taints, key=value:NoSchedule."),
                ),
                (
                    "priority",
                    A::optional(s(), "Regular or Spot.")
                        .and_computed()
                        .force_new(),
                ),
                // AKS fills both in for a spot pool that leaves them out
                // (Delete; -1): computed, or each plan would replace it.
                (
                    "eviction_policy",
                    A::optional(s(), "Delete or Deallocate (Spot).")
                        .and_computed()
                        .force_new(),
                ),
                (
                    "spot_max_price",
                    A::optional(
                        Type::Number,
                        "The most to pay per hour (-1: on-demand price).",
                    )
                    .and_computed()
                    .force_new(),
                ),
                (
                    "vnet_subnet_id",
                    A::optional(s(), "The nodes' subnet.").force_new(),
                ),
                ("mode", A::optional(s(), "User or System.").and_computed()),
                (
                    "os_disk_size_gb",
                    A::optional(Type::Number, "OS disk size.")
                        .and_computed()
                        .force_new(),
                ),
                (
                    "os_type",
                    A::optional(s(), "Linux or Windows.")
                        .and_computed()
                        .force_new(),
                ),
                (
                    "orchestrator_version",
                    A::optional(s(), "The nodes' Kubernetes version.").and_computed(),
                ),
                (
                    "zones",
                    A::optional(Type::list(s()), "Availability zones.").force_new(),
                ),
                (
                    "gpu_driver",
                    A::optional(
                        s(),
                        "Install (AKS installs the NVIDIA driver) or None (the GPU Operator does).",
                    )
                    .force_new(),
                ),
                (
                    "capacity_reservation_group_id",
                    A::optional(s(), "The capacity reservation group its VMs are made in.")
                        .force_new(),
                ),
            ],
        );
        schema.attributes.remove("name");
        schema.attributes.insert(
            "name".into(),
            A::required(s(), "The pool's name (12 lower-case characters at most).").force_new(),
        );
        schema
    },
    nested_force_new: &[],
    keep: &[],
    to_api: None,
    from_api: None,
    credentials: None,
    settings: None,
    // AKS takes one operation at a time on a cluster (a second meets
    // `OperationNotAllowed`) and adds pools to a subnet one at a time:
    // a pool's writes queue on both.
    queues: &["kubernetes_cluster_id", "vnet_subnet_id"],
};
