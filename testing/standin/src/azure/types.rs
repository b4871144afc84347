//! The resource types the stand-in serves: their API versions, how each
//! answers writes, the fields each takes, and the names ARM gives them.

use serde_json::{json, Value as Json};

/// How a type answers writes.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Mode {
    /// Done in the response.
    Sync,
    /// 201/202 with `Azure-AsyncOperation` (and `Location` on delete).
    AsyncOp,
    /// 202 with `Location`, polled until it answers 200 (Storage).
    Location,
}

pub(super) struct TypeInfo {
    /// `microsoft.network/virtualnetworks` (lower case; children add
    /// their segment: `.../virtualnetworks/subnets`).
    pub(super) key: &'static str,
    pub(super) versions: &'static [&'static str],
    /// Has `location` and `tags`.
    pub(super) tracked: bool,
    pub(super) put: Mode,
    pub(super) delete: Mode,
    /// Allowed fields of `properties` (see [`check`]).
    pub(super) properties: fn() -> Json,
}

fn rule() -> Json {
    json!({
        "priority": "number", "direction": "string", "access": "string", "protocol": "string",
        "sourcePortRange": "string", "destinationPortRange": "string",
        "sourcePortRanges": "strings", "destinationPortRanges": "strings",
        "sourceAddressPrefix": "string", "destinationAddressPrefix": "string",
        "sourceAddressPrefixes": "strings", "destinationAddressPrefixes": "strings",
        "description": "string",
    })
}

fn pool() -> Json {
    json!({
        "count": "number", "vmSize": "string", "mode": "string", "vnetSubnetID": "string",
        "type": "string", "osType": "string", "osDiskSizeGB": "number", "maxPods": "number",
        "nodeLabels": "map", "nodeTaints": "strings", "scaleSetPriority": "string",
        "scaleSetEvictionPolicy": "string", "spotMaxPrice": "number",
        "enableAutoScaling": "bool", "minCount": "number", "maxCount": "number",
        "orchestratorVersion": "string", "availabilityZones": "strings",
        "gpuProfile": {"driver": "string"}, "tags": "map",
    })
}

pub(super) const TYPES: &[TypeInfo] = &[
    TypeInfo {
        key: "resourcegroups",
        versions: &["2021-04-01", "2022-09-01"],
        tracked: true,
        put: Mode::Sync,
        delete: Mode::Location,
        properties: || json!({}),
    },
    TypeInfo {
        key: "microsoft.network/virtualnetworks",
        versions: &["2024-05-01", "2023-09-01"],
        tracked: true,
        put: Mode::AsyncOp,
        delete: Mode::AsyncOp,
        properties: || json!({"addressSpace": {"addressPrefixes": "strings"}, "subnets": [{"name": "string", "id": "string", "etag": "string", "type": "string", "properties": true}], "dhcpOptions": {"dnsServers": "strings"}}),
    },
    TypeInfo {
        key: "microsoft.network/virtualnetworks/subnets",
        versions: &["2024-05-01", "2023-09-01"],
        tracked: false,
        put: Mode::AsyncOp,
        delete: Mode::AsyncOp,
        properties: || json!({"addressPrefix": "string", "addressPrefixes": "strings", "networkSecurityGroup": {"id": "string"}, "serviceEndpoints": [{"service": "string"}], "privateEndpointNetworkPolicies": "string", "defaultOutboundAccess": "bool"}),
    },
    TypeInfo {
        key: "microsoft.network/networksecuritygroups",
        versions: &["2024-05-01", "2023-09-01"],
        tracked: true,
        put: Mode::AsyncOp,
        delete: Mode::AsyncOp,
        properties: || json!({"securityRules": [{"name": "string", "properties": rule()}]}),
    },
    TypeInfo {
        key: "microsoft.managedidentity/userassignedidentities",
        versions: &["2023-01-31", "2024-11-30"],
        tracked: true,
        put: Mode::Sync,
        delete: Mode::Sync,
        properties: || json!({}),
    },
    TypeInfo {
        key: "microsoft.authorization/roleassignments",
        versions: &["2022-04-01"],
        tracked: false,
        put: Mode::Sync,
        delete: Mode::Sync,
        properties: || json!({"roleDefinitionId": "string", "principalId": "string", "principalType": "string", "description": "string"}),
    },
    TypeInfo {
        key: "microsoft.containerservice/managedclusters",
        versions: &["2024-09-01", "2025-01-01"],
        tracked: true,
        put: Mode::AsyncOp,
        delete: Mode::AsyncOp,
        properties: || {
            let mut p = pool();
            p["name"] = json!("string");
            json!({
                "kubernetesVersion": "string", "dnsPrefix": "string", "agentPoolProfiles": [p],
                "networkProfile": {"networkPlugin": "string", "networkPolicy": "string", "networkPluginMode": "string", "serviceCidr": "string", "dnsServiceIP": "string", "podCidr": "string", "outboundType": "string"},
                "oidcIssuerProfile": {"enabled": "bool"},
                "securityProfile": {"workloadIdentity": {"enabled": "bool"}},
                "apiServerAccessProfile": {"enablePrivateCluster": "bool"},
                "nodeResourceGroup": "string",
            })
        },
    },
    TypeInfo {
        key: "microsoft.containerservice/managedclusters/agentpools",
        versions: &["2024-09-01", "2025-01-01"],
        tracked: false,
        put: Mode::AsyncOp,
        delete: Mode::AsyncOp,
        properties: pool,
    },
    TypeInfo {
        key: "microsoft.storage/storageaccounts",
        versions: &["2023-05-01", "2023-01-01"],
        tracked: true,
        put: Mode::Location,
        delete: Mode::Sync,
        properties: || json!({"minimumTlsVersion": "string", "allowBlobPublicAccess": "bool", "supportsHttpsTrafficOnly": "bool", "isHnsEnabled": "bool", "accessTier": "string"}),
    },
    TypeInfo {
        key: "microsoft.storage/storageaccounts/blobservices",
        versions: &["2023-05-01", "2023-01-01"],
        tracked: false,
        put: Mode::Sync,
        delete: Mode::Sync,
        properties: || {
            let retention = json!({"enabled": "bool", "days": "number"});
            json!({"isVersioningEnabled": "bool", "deleteRetentionPolicy": retention,
                "containerDeleteRetentionPolicy": retention, "changeFeed": {"enabled": "bool"},
                "lastAccessTimeTrackingPolicy": true, "cors": true})
        },
    },
    TypeInfo {
        key: "microsoft.storage/storageaccounts/blobservices/containers",
        versions: &["2023-05-01", "2023-01-01"],
        tracked: false,
        put: Mode::Sync,
        delete: Mode::Sync,
        properties: || json!({"publicAccess": "string", "metadata": "map", "defaultEncryptionScope": "string", "denyEncryptionScopeOverride": "bool"}),
    },
    TypeInfo {
        key: "microsoft.storage/storageaccounts/managementpolicies",
        versions: &["2023-05-01", "2023-01-01"],
        tracked: false,
        put: Mode::Sync,
        delete: Mode::Sync,
        properties: || {
            let definition = json!({
                "filters": {"blobTypes": "strings", "prefixMatch": "strings"},
                "actions": {
                    "baseBlob": {"delete": {"daysAfterModificationGreaterThan": "number"}, "tierToCool": true, "tierToArchive": true},
                    "version": {"delete": {"daysAfterCreationGreaterThan": "number"}},
                    "snapshot": true,
                },
            });
            json!({"policy": {"rules": [{"name": "string", "enabled": "bool", "type": "string", "definition": definition}]}})
        },
    },
    TypeInfo {
        key: "microsoft.managedidentity/userassignedidentities/federatedidentitycredentials",
        versions: &["2023-01-31", "2024-11-30"],
        tracked: false,
        put: Mode::Sync,
        delete: Mode::Sync,
        properties: || json!({"issuer": "string", "subject": "string", "audiences": "strings"}),
    },
    TypeInfo {
        key: "microsoft.authorization/locks",
        versions: &["2020-05-01", "2016-09-01"],
        tracked: false,
        put: Mode::Sync,
        delete: Mode::Sync,
        properties: || json!({"level": "string", "notes": "string", "owners": true}),
    },
];

/// Role definitions every subscription has (id's last segment, name).
pub(super) const ROLES: &[(&str, &str)] = &[
    ("b24988ac-6180-42a0-ab88-20f7382dd24c", "Contributor"),
    (
        "4d97b98b-1d4f-4787-a291-c67834d212e7",
        "Network Contributor",
    ),
    ("acdd72a7-3385-48ef-bd42-f606fba81ae7", "Reader"),
    ("7f951dda-4ed3-4680-a7ca-43fe172d538d", "AcrPull"),
    (
        "f1a07417-d97a-45cb-824c-7a7467783830",
        "Managed Identity Operator",
    ),
    (
        "ba92f5b4-2d11-453d-a403-e96b0029c9fe",
        "Storage Blob Data Contributor",
    ),
];

/// The type key of a stored (lower-case) id.
pub(super) fn type_key(id: &str) -> String {
    let segs: Vec<&str> = id.trim_start_matches('/').split('/').collect();
    for scoped in ["roleassignments", "locks"] {
        if id.contains(&format!("/providers/microsoft.authorization/{scoped}/")) {
            return format!("microsoft.authorization/{scoped}");
        }
    }
    match segs.len() {
        4 => "resourcegroups".into(),
        8 => format!("{}/{}", segs[5], segs[6]),
        10 => format!("{}/{}/{}", segs[5], segs[6], segs[8]),
        12 => format!("{}/{}/{}/{}", segs[5], segs[6], segs[8], segs[10]),
        _ => String::new(),
    }
}

/// The `type` ARM reports.
pub(super) fn type_name(key: &str) -> String {
    let known = [
        ("resourcegroups", "Microsoft.Resources/resourceGroups"),
        (
            "microsoft.network/virtualnetworks",
            "Microsoft.Network/virtualNetworks",
        ),
        (
            "microsoft.network/virtualnetworks/subnets",
            "Microsoft.Network/virtualNetworks/subnets",
        ),
        (
            "microsoft.network/networksecuritygroups",
            "Microsoft.Network/networkSecurityGroups",
        ),
        (
            "microsoft.managedidentity/userassignedidentities",
            "Microsoft.ManagedIdentity/userAssignedIdentities",
        ),
        (
            "microsoft.authorization/roleassignments",
            "Microsoft.Authorization/roleAssignments",
        ),
        (
            "microsoft.containerservice/managedclusters",
            "Microsoft.ContainerService/managedClusters",
        ),
        (
            "microsoft.containerservice/managedclusters/agentpools",
            "Microsoft.ContainerService/managedClusters/agentPools",
        ),
        (
            "microsoft.storage/storageaccounts",
            "Microsoft.Storage/storageAccounts",
        ),
        (
            "microsoft.storage/storageaccounts/blobservices",
            "Microsoft.Storage/storageAccounts/blobServices",
        ),
        (
            "microsoft.storage/storageaccounts/blobservices/containers",
            "Microsoft.Storage/storageAccounts/blobServices/containers",
        ),
        (
            "microsoft.storage/storageaccounts/managementpolicies",
            "Microsoft.Storage/storageAccounts/managementPolicies",
        ),
        (
            "microsoft.managedidentity/userassignedidentities/federatedidentitycredentials",
            "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials",
        ),
        (
            "microsoft.authorization/locks",
            "Microsoft.Authorization/locks",
        ),
    ];
    known
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(key.to_string(), |(_, n)| n.to_string())
}
