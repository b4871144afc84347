//! One kind for every Resource Manager type that lives the ARM way:
//! PUT creates or updates (a long-running operation), GET reads, DELETE
//! deletes, a list call per parent reads many at once. A [`Spec`] says
//! where the type lives, its API version, its fields and what only
//! replacing can change.

use crate::api::finish;
use crate::Ctx;
use async_trait::async_trait;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::time::Duration;
use strata_provider::values::{block, list_block_max1};
use strata_provider::wait::timeout;
use strata_provider::{
    AttributeSchema as A, BlockNesting, DriverError, Kind, PlanRequest, Planned, ResourceSchema,
    Tags,
};
use strata_rest::fields::{array, f, from_api, object, out, to_api, Field};
use strata_rest::labels;
use strata_rest::Method;
use strata_value::types::Type;
use strata_value::value::Value;

const TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// Where a type's resources live.
pub enum Scope {
    /// `/subscriptions/S/resourceGroups/NAME`.
    Group,
    /// `/subscriptions/S/resourceGroups/RG/providers/PROVIDER/NAME`.
    InGroup,
    /// `…/providers/PROVIDER/PARENT/SEGMENT/NAME`, the parent named by an
    /// attribute (`virtual_network_name`).
    UnderName {
        parent: &'static str,
        segment: &'static str,
    },
    /// `PARENT_ID/SEGMENT/NAME`, the parent's id an attribute
    /// (`kubernetes_cluster_id`).
    UnderId {
        parent: &'static str,
        segment: &'static str,
    },
}

pub struct Spec {
    pub type_name: &'static str,
    /// `Microsoft.Network/virtualNetworks` (the parent's, for children).
    pub provider: &'static str,
    pub api_version: &'static str,
    pub scope: Scope,
    /// Has a `location`.
    pub located: bool,
    /// Where its tags are in the API object (`tags`, `properties.tags`).
    pub tags: Option<&'static str>,
    pub fields: &'static [Field],
    pub schema: fn() -> ResourceSchema,
    /// Nested attributes only replacing can change: `[block, attribute]`.
    pub nested_force_new: &'static [[&'static str; 2]],
    /// Properties the service or another resource manages, carried from
    /// the current object into an update's PUT (a PUT replaces all):
    /// a network's subnets, a subnet's security group.
    pub keep: &'static [&'static str],
    /// Conversions the field table cannot say: Terraform → API, API → Terraform.
    pub to_api: Option<fn(&Json, &mut Json)>,
    pub from_api: Option<fn(&Json, &mut Json)>,
    /// A POST action whose answer holds the object's kubeconfigs
    /// (`listClusterUserCredential`), asked after every read: its
    /// `kubeconfigs[0]` reaches `from_api` as `api["strata:kubeconfig"]`.
    pub credentials: Option<&'static str>,
}

pub struct Resource(pub &'static Spec);

fn s() -> Type {
    Type::String
}

/// `name`, `resource_group_name`, `location`, `tags` and `id` as azurerm
/// declares them, then the type's own.
fn common(
    located: bool,
    in_group: bool,
    tags: bool,
    own: Vec<(&'static str, A)>,
) -> ResourceSchema {
    let mut attrs = vec![
        ("name", A::required(s(), "The name.").force_new()),
        ("id", A::computed(s(), "The Resource Manager id.")),
    ];
    if in_group {
        attrs.push((
            "resource_group_name",
            A::required(s(), "The resource group.").force_new(),
        ));
    }
    if located {
        attrs.push((
            "location",
            A::required(s(), "The Azure region (eastus).").force_new(),
        ));
    }
    if tags {
        attrs.push(("tags", A::optional(Type::map(s()), "Tags.")));
    }
    attrs.extend(own);
    let mut schema = ResourceSchema::of_attributes(attrs);
    schema
        .blocks
        .insert("timeouts".into(), strata_provider::values::timeouts_block());
    schema
}

pub static RESOURCE_GROUP: Spec = Spec {
    type_name: "azurerm_resource_group",
    provider: "",
    api_version: "2022-09-01",
    scope: Scope::Group,
    located: true,
    tags: Some("tags"),
    fields: &[],
    schema: || common(true, false, true, vec![]),
    nested_force_new: &[],
    keep: &[],
    to_api: None,
    from_api: None,
    credentials: None,
};

pub static VIRTUAL_NETWORK: Spec = Spec {
    type_name: "azurerm_virtual_network",
    provider: "Microsoft.Network/virtualNetworks",
    api_version: "2024-05-01",
    scope: Scope::InGroup,
    located: true,
    tags: Some("tags"),
    fields: &[
        f("address_space", "properties.addressSpace.addressPrefixes"),
        f("dns_servers", "properties.dhcpOptions.dnsServers"),
        out("guid", "properties.resourceGuid"),
    ],
    schema: || {
        common(
            true,
            true,
            true,
            vec![
                (
                    "address_space",
                    A::required(Type::list(s()), "The network's address ranges."),
                ),
                (
                    "dns_servers",
                    A::optional(Type::list(s()), "DNS servers.").and_computed(),
                ),
                ("guid", A::computed(s(), "The network's GUID.")),
            ],
        )
    },
    nested_force_new: &[],
    keep: &["properties.subnets"],
    to_api: None,
    from_api: None,
    credentials: None,
};

pub static SUBNET: Spec = Spec {
    type_name: "azurerm_subnet",
    provider: "Microsoft.Network/virtualNetworks",
    api_version: "2024-05-01",
    scope: Scope::UnderName {
        parent: "virtual_network_name",
        segment: "subnets",
    },
    located: false,
    tags: None,
    fields: &[
        f("address_prefixes", "properties.addressPrefixes"),
        f(
            "default_outbound_access_enabled",
            "properties.defaultOutboundAccess",
        ),
    ],
    schema: || {
        common(
            false,
            true,
            false,
            vec![
                (
                    "virtual_network_name",
                    A::required(s(), "The network it divides.").force_new(),
                ),
                (
                    "address_prefixes",
                    A::required(Type::list(s()), "Its address ranges."),
                ),
                (
                    "default_outbound_access_enabled",
                    A::optional(Type::Bool, "Default outbound internet access.").and_computed(),
                ),
            ],
        )
    },
    nested_force_new: &[],
    keep: &["properties.networkSecurityGroup"],
    to_api: None,
    from_api: None,
    credentials: None,
};

const RULE: &[Field] = &[
    f("name", "name"),
    f("priority", "properties.priority"),
    f("direction", "properties.direction"),
    f("access", "properties.access"),
    f("protocol", "properties.protocol"),
    f("source_port_range", "properties.sourcePortRange"),
    f("destination_port_range", "properties.destinationPortRange"),
    f("source_address_prefix", "properties.sourceAddressPrefix"),
    f(
        "destination_address_prefix",
        "properties.destinationAddressPrefix",
    ),
    f("description", "properties.description"),
];

pub static NETWORK_SECURITY_GROUP: Spec = Spec {
    type_name: "azurerm_network_security_group",
    provider: "Microsoft.Network/networkSecurityGroups",
    api_version: "2024-05-01",
    scope: Scope::InGroup,
    located: true,
    tags: Some("tags"),
    fields: &[array("security_rule", "properties.securityRules", RULE)],
    schema: || {
        let mut schema = common(true, true, true, vec![]);
        schema.blocks.insert(
            "security_rule".into(),
            block(
                BlockNesting::Set,
                0,
                vec![
                    ("name", A::required(s(), "The rule's name.")),
                    (
                        "priority",
                        A::required(Type::Number, "100-4096, lower first."),
                    ),
                    ("direction", A::required(s(), "Inbound or Outbound.")),
                    ("access", A::required(s(), "Allow or Deny.")),
                    ("protocol", A::required(s(), "Tcp, Udp, Icmp or *.")),
                    (
                        "source_port_range",
                        A::optional(s(), "A port, a range or *."),
                    ),
                    (
                        "destination_port_range",
                        A::optional(s(), "A port, a range or *."),
                    ),
                    (
                        "source_address_prefix",
                        A::optional(s(), "A CIDR, a service tag or *."),
                    ),
                    (
                        "destination_address_prefix",
                        A::optional(s(), "A CIDR, a service tag or *."),
                    ),
                    ("description", A::optional(s(), "A description.")),
                ],
            ),
        );
        schema
    },
    nested_force_new: &[],
    keep: &["properties.subnets"],
    to_api: None,
    from_api: None,
    credentials: None,
};

pub static USER_ASSIGNED_IDENTITY: Spec = Spec {
    type_name: "azurerm_user_assigned_identity",
    provider: "Microsoft.ManagedIdentity/userAssignedIdentities",
    api_version: "2023-01-31",
    scope: Scope::InGroup,
    located: true,
    tags: Some("tags"),
    fields: &[
        out("principal_id", "properties.principalId"),
        out("client_id", "properties.clientId"),
        out("tenant_id", "properties.tenantId"),
    ],
    schema: || {
        common(
            true,
            true,
            true,
            vec![
                (
                    "principal_id",
                    A::computed(
                        s(),
                        "The identity's service principal (for role assignments).",
                    ),
                ),
                (
                    "client_id",
                    A::computed(s(), "The identity's client id (for workload identity)."),
                ),
                ("tenant_id", A::computed(s(), "The identity's tenant.")),
            ],
        )
    },
    nested_force_new: &[],
    keep: &[],
    to_api: None,
    from_api: None,
    credentials: None,
};

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
    api_version: "2024-09-01",
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
                (
                    "pod_cidr",
                    A::optional(s(), "The pods' range (overlay, kubenet)."),
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
};

pub static NODE_POOL: Spec = Spec {
    type_name: "azurerm_kubernetes_cluster_node_pool",
    provider: "",
    api_version: "2024-09-01",
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
                (
                    "eviction_policy",
                    A::optional(s(), "Delete or Deallocate (Spot).").force_new(),
                ),
                (
                    "spot_max_price",
                    A::optional(
                        Type::Number,
                        "The most to pay per hour (-1: on-demand price).",
                    )
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
};

pub static STORAGE_ACCOUNT: Spec = Spec {
    type_name: "azurerm_storage_account",
    provider: "Microsoft.Storage/storageAccounts",
    api_version: "2023-05-01",
    scope: Scope::InGroup,
    located: true,
    tags: Some("tags"),
    fields: &[
        f("account_kind", "kind"),
        f("min_tls_version", "properties.minimumTlsVersion"),
        f(
            "allow_nested_items_to_be_public",
            "properties.allowBlobPublicAccess",
        ),
        f(
            "https_traffic_only_enabled",
            "properties.supportsHttpsTrafficOnly",
        ),
        f("access_tier", "properties.accessTier"),
        out("primary_blob_endpoint", "properties.primaryEndpoints.blob"),
    ],
    schema: || {
        common(
            true,
            true,
            true,
            vec![
                (
                    "account_tier",
                    A::required(s(), "Standard or Premium.").force_new(),
                ),
                (
                    "account_replication_type",
                    A::required(s(), "LRS, ZRS, GRS, RAGRS, GZRS, RAGZRS."),
                ),
                (
                    "account_kind",
                    A::optional(s(), "StorageV2 (the default), BlobStorage, ...").and_computed(),
                ),
                (
                    "min_tls_version",
                    A::optional(s(), "TLS1_2.").and_computed(),
                ),
                (
                    "allow_nested_items_to_be_public",
                    A::optional(Type::Bool, "Allow public blobs.").and_computed(),
                ),
                (
                    "https_traffic_only_enabled",
                    A::optional(Type::Bool, "HTTPS only.").and_computed(),
                ),
                (
                    "access_tier",
                    A::optional(s(), "Hot or Cool.").and_computed(),
                ),
                (
                    "primary_blob_endpoint",
                    A::computed(s(), "The blob service's URL."),
                ),
            ],
        )
    },
    nested_force_new: &[],
    keep: &[],
    to_api: Some(|tf, api| {
        if let (Some(t), Some(r)) = (
            tf["account_tier"].as_str(),
            tf["account_replication_type"].as_str(),
        ) {
            api["sku"] = json!({ "name": format!("{t}_{r}") });
        }
        if api.get("kind").is_none() {
            api["kind"] = json!("StorageV2");
        }
    }),
    from_api: Some(|api, tf| {
        if let Some((t, r)) = api["sku"]["name"].as_str().and_then(|n| n.split_once('_')) {
            tf["account_tier"] = json!(t);
            tf["account_replication_type"] = json!(r);
        }
    }),
    credentials: None,
};

/// Azure's canonical form of a region: `East US` → `eastus`.
fn region(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase()
}

impl Resource {
    /// The resource's id from its Terraform attributes.
    pub fn id(&self, c: &Ctx, j: &Json) -> Result<String, DriverError> {
        let t = self.0.type_name;
        let need = |k: &str| required(j, t, k);
        let name = need("name")?;
        Ok(match &self.0.scope {
            Scope::Group => format!(
                "/subscriptions/{}/resourceGroups/{name}",
                c.subscription(t)?
            ),
            Scope::InGroup => format!(
                "/subscriptions/{}/resourceGroups/{}/providers/{}/{name}",
                c.subscription(t)?,
                need("resource_group_name")?,
                self.0.provider
            ),
            Scope::UnderName { parent, segment } => format!(
                "/subscriptions/{}/resourceGroups/{}/providers/{}/{}/{segment}/{name}",
                c.subscription(t)?,
                need("resource_group_name")?,
                self.0.provider,
                need(parent)?
            ),
            Scope::UnderId { parent, segment } => format!("{}/{segment}/{name}", need(parent)?),
        })
    }

    /// The list URL path holding the resource (its parent's collection).
    fn collection(id: &str) -> &str {
        id.rsplit_once('/').map_or(id, |(p, _)| p)
    }

    /// Attributes an id carries (`resource_group_name`, the parent).
    fn id_attrs(&self, id: &str, j: &mut Json) {
        let segs: Vec<&str> = id.split('/').collect();
        j["id"] = json!(id);
        j["name"] = json!(segs.last());
        if let Some(i) = segs
            .iter()
            .position(|s| s.eq_ignore_ascii_case("resourceGroups"))
        {
            if !matches!(self.0.scope, Scope::Group) {
                j["resource_group_name"] = json!(segs.get(i + 1));
            }
        }
        match &self.0.scope {
            Scope::UnderName { parent, .. } => {
                j[*parent] = json!(segs.get(segs.len().saturating_sub(3)))
            }
            Scope::UnderId { parent, .. } => {
                j[*parent] = json!(segs[..segs.len().saturating_sub(2)].join("/"));
            }
            _ => {}
        }
    }

    pub fn value(&self, o: &Json, like: Option<&Json>) -> Result<Value, DriverError> {
        let mut j = from_api(self.0.fields, o);
        self.id_attrs(o["id"].as_str().unwrap_or_default(), &mut j);
        if self.0.located {
            j["location"] = o["location"].clone();
        }
        if let Some(path) = self.0.tags {
            j["tags"] = user_tags(strata_rest::fields::get(o, path).unwrap_or(&Json::Null));
        }
        if let Some(hook) = self.0.from_api {
            hook(o, &mut j);
        }
        if let Some(like) = like {
            // A parent id as configured (ARM answers ids in its own case).
            for k in ["kubernetes_cluster_id", "vnet_subnet_id"] {
                if let (Some(had), Some(now)) = (like[k].as_str(), j[k].as_str()) {
                    if had.eq_ignore_ascii_case(now) {
                        j[k] = json!(had);
                    }
                }
            }
            if let (Some(had), Some(now)) = (like["location"].as_str(), j["location"].as_str()) {
                if region(had) == region(now) {
                    j["location"] = json!(had);
                }
            }
            if let Some(t) = like.get("timeouts") {
                j["timeouts"] = t.clone();
            }
        }
        let mut schema_json = j;
        let schema = (self.0.schema)();
        strata_rest::fields::empty_blocks(&schema, &mut schema_json);
        strata_value::json::value_from_json(&schema_json, &schema.object_type()).map_err(|e| {
            DriverError::Api {
                operation: format!("reading {}", self.0.type_name),
                detail: format!("the API's answer does not fit the schema: {e}"),
                retryable: false,
            }
        })
    }

    /// [`Resource::value`], after asking for the object's credentials
    /// when its type has them.
    async fn read_back(
        &self,
        c: &Ctx,
        o: &Json,
        like: Option<&Json>,
    ) -> Result<Value, DriverError> {
        let Some(action) = self.0.credentials else {
            return self.value(o, like);
        };
        let id = o["id"].as_str().unwrap_or_default();
        let what = format!("{action} for {}", self.0.type_name);
        let reply = c
            .rest
            .send(
                Method::POST,
                &c.url(&format!("{id}/{action}"), self.0.api_version),
                None,
            )
            .await
            .map_err(|e| c.rest.driver_error(&what, &e))?;
        let mut o = o.clone();
        if let Some(v) = reply.body["kubeconfigs"][0]["value"].as_str() {
            o["strata:kubeconfig"] = json!(crate::kubeconfig::decode(v));
        }
        self.value(&o, like)
    }

    async fn get(&self, c: &Ctx, id: &str) -> Result<Option<Json>, DriverError> {
        c.rest
            .get(
                &format!("GET {}", self.0.type_name),
                &c.url(id, self.0.api_version),
            )
            .await
    }

    /// The PUT body for `tf`, carrying `current`'s kept properties and
    /// the ownership tags.
    fn body(&self, tf: &Json, current: Option<&Json>, tags: Option<&Tags>) -> Json {
        let mut b = to_api(self.0.fields, tf);
        if self.0.located {
            b["location"] = tf["location"].clone();
        }
        if let Some(path) = self.0.tags {
            let mut t = match current {
                Some(cur) => ownership(strata_rest::fields::get(cur, path).unwrap_or(&Json::Null)),
                None => Json::Object(Map::new()),
            };
            if let Some(tags) = tags {
                for (k, v) in labels::labels(tags) {
                    t[k] = json!(v);
                }
            }
            if let (Some(m), Some(user)) = (t.as_object_mut(), tf["tags"].as_object()) {
                m.extend(user.clone());
            }
            strata_rest::fields::set(&mut b, path, t);
        }
        if let Some(cur) = current {
            for k in self.0.keep {
                if let Some(v) = strata_rest::fields::get(cur, k) {
                    strata_rest::fields::set(&mut b, k, v.clone());
                }
            }
        }
        if let Some(hook) = self.0.to_api {
            hook(tf, &mut b);
        }
        if b.get("properties").is_none() && !matches!(self.0.scope, Scope::Group) {
            b["properties"] = json!({});
        }
        b
    }

    /// PUTs `body` and follows the operation; then reads the result,
    /// which must have succeeded.
    async fn put(
        &self,
        c: &Ctx,
        id: &str,
        body: &Json,
        t: Duration,
        what: &str,
    ) -> Result<Json, DriverError> {
        let url = c.url(id, self.0.api_version);
        let r = c.rest.call(what, Method::PUT, &url, Some(body)).await?;
        finish(c, what, &r, t).await?;
        let o = self.get(c, id).await?.ok_or_else(|| DriverError::Api {
            operation: what.to_string(),
            detail: format!("{id} was not there after its PUT finished"),
            retryable: true,
        })?;
        match o["properties"]["provisioningState"].as_str() {
            Some("Failed") => Err(c.rest.operation_error(
                what,
                "ProvisioningFailed",
                &format!("{id} is in provisioning state Failed"),
            )),
            _ => Ok(o),
        }
    }
}

impl Resource {
    async fn find_in_clusters(
        &self,
        c: &Ctx,
        sub: &str,
        tags: &Tags,
    ) -> Result<Vec<Value>, DriverError> {
        let clusters = format!(
            "{}/subscriptions/{sub}/providers/{}?api-version={}",
            c.base, KUBERNETES_CLUSTER.provider, KUBERNETES_CLUSTER.api_version
        );
        let mut found = Vec::new();
        for cluster in c.rest.list("list clusters", &clusters, "value").await? {
            let Some(id) = cluster["id"].as_str() else {
                continue;
            };
            let pools = c.url(&format!("{id}/agentPools"), self.0.api_version);
            for p in c.rest.list("list node pools", &pools, "value").await? {
                let t = &p["properties"]["tags"];
                if labels::owned(|k| t[k].as_str(), tags) {
                    found.push(self.read_back(c, &p, None).await?);
                }
            }
        }
        Ok(found)
    }
}

/// Tags read from Azure, strata's own left out (null when none are left).
fn user_tags(t: &Json) -> Json {
    let m: Map<String, Json> = t
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !labels::is_ownership(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if m.is_empty() {
        Json::Null
    } else {
        Json::Object(m)
    }
}

/// Only strata's own tags.
fn ownership(t: &Json) -> Json {
    Json::Object(
        t.as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| labels::is_ownership(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

#[async_trait]
impl Kind<Ctx> for Resource {
    fn schema(&self) -> ResourceSchema {
        (self.0.schema)()
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = strata_provider::plan_by_schema(schema, req.prior, req.config);
        let Some(prior) = req.prior else { return p };
        let (old, new) = (crate::api_json(prior), crate::api_json(&p.planned));
        // Regions compare in Azure's canonical form.
        if let (Some(had), Some(want)) = (old["location"].as_str(), new["location"].as_str()) {
            if region(had) == region(want) && had != want {
                p.planned = with_attr(p.planned, "location", Value::string(had));
            }
        }
        for [b, a] in self.0.nested_force_new {
            let wanted = &new[*b][0][*a];
            if !wanted.is_null() && old[*b][0][*a] != *wanted {
                p.requires_replace
                    .push(vec![b.to_string(), "0".into(), a.to_string()]);
            }
        }
        p
    }

    async fn read(&self, c: &Ctx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        // One list per parent (resource group, network, cluster).
        let mut listed: BTreeMap<String, Option<BTreeMap<String, Json>>> = BTreeMap::new();
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let j = crate::api_json(o);
            let id = self.id(c, &j)?;
            let coll = Self::collection(&id).to_string();
            if !listed.contains_key(&coll) {
                let url = c.url(&coll, self.0.api_version);
                let items = c
                    .rest
                    .list_under(&format!("list {}", self.0.type_name), &url, "value")
                    .await?
                    .map(|all| {
                        all.into_iter()
                            .filter_map(|i| Some((i["id"].as_str()?.to_ascii_lowercase(), i)))
                            .collect()
                    });
                listed.insert(coll.clone(), items);
            }
            let found = listed[&coll]
                .as_ref()
                .and_then(|m| m.get(&id.to_ascii_lowercase()));
            out.push(match found {
                Some(f) => Some(self.read_back(c, f, Some(&j)).await?),
                None => None,
            });
        }
        Ok(out)
    }

    async fn create(&self, c: &Ctx, planned: &Value, tags: &Tags) -> Result<Value, DriverError> {
        let j = crate::api_json(planned);
        let id = self.id(c, &j)?;
        let what = format!("create {}", self.0.type_name);
        // As azurerm does: an object already there is not taken over,
        // unless it carries this instance's ownership tags (a crashed run's).
        let current = self.get(c, &id).await?;
        if let Some(cur) = &current {
            let ours = self
                .0
                .tags
                .and_then(|p| strata_rest::fields::get(cur, p))
                .is_some_and(|t| labels::owned(|k| t[k].as_str(), tags));
            if !ours && !matches!(self.0.scope, Scope::UnderName { .. }) {
                return Err(strata_rest::not_ours(&what, &id, &id));
            }
        }
        let body = self.body(&j, current.as_ref(), Some(tags));
        let o = self
            .put(c, &id, &body, timeout(planned, "create", TIMEOUT), &what)
            .await?;
        self.read_back(c, &o, Some(&j)).await
    }

    async fn update(&self, c: &Ctx, _prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        let j = crate::api_json(planned);
        let id = self.id(c, &j)?;
        let current = self.get(c, &id).await?;
        let body = self.body(&j, current.as_ref(), None);
        let what = format!("update {}", self.0.type_name);
        let o = self
            .put(c, &id, &body, timeout(planned, "update", TIMEOUT), &what)
            .await?;
        self.read_back(c, &o, Some(&j)).await
    }

    async fn delete(&self, c: &Ctx, prior: &Value) -> Result<(), DriverError> {
        let j = crate::api_json(prior);
        let id = self.id(c, &j)?;
        let what = format!("delete {}", self.0.type_name);
        match c
            .rest
            .send(Method::DELETE, &c.url(&id, self.0.api_version), None)
            .await
        {
            Ok(r) => finish(c, &what, &r, timeout(prior, "delete", TIMEOUT))
                .await
                .map(|_| ()),
            Err(e) if e.status == 404 => Ok(()),
            Err(e) => Err(c.rest.driver_error(&what, &e)),
        }
    }

    /// Resource Manager finds tagged resources in one call; node pools
    /// (tagged inside their properties) are looked for in every cluster.
    async fn find_tagged(&self, c: &Ctx, tags: &Tags) -> Result<Vec<Value>, DriverError> {
        let Ok(sub) = c.subscription(self.0.type_name) else {
            return Ok(Vec::new());
        };
        if self.0.tags == Some("properties.tags") {
            return self.find_in_clusters(c, sub, tags).await;
        }
        if self.0.tags.is_none() {
            return Ok(Vec::new());
        }
        let [(ak, av), (lk, lv)] = labels::labels(tags);
        let filter = strata_rest::encode(&format!("tagName eq '{ak}' and tagValue eq '{av}'"));
        let (path, version) = match self.0.scope {
            Scope::Group => (
                format!("/subscriptions/{sub}/resourcegroups"),
                self.0.api_version,
            ),
            _ => (format!("/subscriptions/{sub}/resources"), "2021-04-01"),
        };
        let url = format!(
            "{}?api-version={version}&$filter={filter}",
            c.base.clone() + &path
        );
        let mut found = Vec::new();
        for r in c.rest.list("find tagged resources", &url, "value").await? {
            let type_ok = matches!(self.0.scope, Scope::Group)
                || r["type"]
                    .as_str()
                    .is_some_and(|t| t.eq_ignore_ascii_case(self.0.provider));
            if !type_ok || r["tags"][lk.as_str()].as_str() != Some(lv.as_str()) {
                continue;
            }
            if let Some(o) = self.get(c, r["id"].as_str().unwrap_or_default()).await? {
                found.push(self.read_back(c, &o, None).await?);
            }
        }
        Ok(found)
    }

    async fn import(&self, c: &Ctx, id: &str) -> Result<Option<Value>, DriverError> {
        match self.get(c, id).await? {
            Some(o) => Ok(Some(self.read_back(c, &o, None).await?)),
            None => Ok(None),
        }
    }
}

/// An attribute's string, or the error a required one's absence is.
pub(crate) fn required(j: &Json, type_name: &str, name: &str) -> Result<String, DriverError> {
    j[name]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| DriverError::InvalidConfig {
            type_name: type_name.to_string(),
            detail: format!("{name} is required"),
        })
}

/// `v` with one attribute replaced.
fn with_attr(v: Value, name: &str, to: Value) -> Value {
    match v {
        Value::Object(mut m) => {
            m.insert(name.to_string(), to);
            Value::Object(m)
        }
        other => other,
    }
}
