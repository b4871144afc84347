//! The resource types the stand-in serves: their API versions (those the
//! driver calls, each with Azure's definition in
//! `testing/definitions/azure`, which says what a body may hold), how
//! each answers writes, and the names ARM gives them.

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
}

pub(super) const TYPES: &[TypeInfo] = &[
    TypeInfo {
        key: "resourcegroups",
        versions: &["2022-09-01"],
        tracked: true,
        put: Mode::Sync,
        delete: Mode::Location,
    },
    TypeInfo {
        key: "microsoft.network/virtualnetworks",
        versions: &["2024-05-01"],
        tracked: true,
        put: Mode::AsyncOp,
        delete: Mode::AsyncOp,
    },
    TypeInfo {
        key: "microsoft.network/virtualnetworks/subnets",
        versions: &["2024-05-01"],
        tracked: false,
        put: Mode::AsyncOp,
        delete: Mode::AsyncOp,
    },
    TypeInfo {
        key: "microsoft.network/networksecuritygroups",
        versions: &["2024-05-01"],
        tracked: true,
        put: Mode::AsyncOp,
        delete: Mode::AsyncOp,
    },
    TypeInfo {
        key: "microsoft.managedidentity/userassignedidentities",
        versions: &["2023-01-31"],
        tracked: true,
        put: Mode::Sync,
        delete: Mode::Sync,
    },
    TypeInfo {
        key: "microsoft.authorization/roleassignments",
        versions: &["2022-04-01"],
        tracked: false,
        put: Mode::Sync,
        delete: Mode::Sync,
    },
    TypeInfo {
        key: "microsoft.containerservice/managedclusters",
        versions: &["2025-01-01"],
        tracked: true,
        put: Mode::AsyncOp,
        delete: Mode::AsyncOp,
    },
    TypeInfo {
        key: "microsoft.containerservice/managedclusters/agentpools",
        versions: &["2025-01-01"],
        tracked: false,
        put: Mode::AsyncOp,
        delete: Mode::AsyncOp,
    },
    TypeInfo {
        key: "microsoft.storage/storageaccounts",
        versions: &["2023-05-01"],
        tracked: true,
        put: Mode::Location,
        delete: Mode::Sync,
    },
    TypeInfo {
        key: "microsoft.storage/storageaccounts/blobservices",
        versions: &["2023-05-01"],
        tracked: false,
        put: Mode::Sync,
        delete: Mode::Sync,
    },
    TypeInfo {
        key: "microsoft.storage/storageaccounts/blobservices/containers",
        versions: &["2023-05-01"],
        tracked: false,
        put: Mode::Sync,
        delete: Mode::Sync,
    },
    TypeInfo {
        key: "microsoft.storage/storageaccounts/managementpolicies",
        versions: &["2023-05-01"],
        tracked: false,
        put: Mode::Sync,
        delete: Mode::Sync,
    },
    TypeInfo {
        key: "microsoft.managedidentity/userassignedidentities/federatedidentitycredentials",
        versions: &["2023-01-31"],
        tracked: false,
        put: Mode::Sync,
        delete: Mode::Sync,
    },
    TypeInfo {
        key: "microsoft.authorization/locks",
        versions: &["2020-05-01"],
        tracked: false,
        put: Mode::Sync,
        delete: Mode::Sync,
    },
    // Made by the tests as a user makes them; the driver reads them.
    TypeInfo {
        key: "microsoft.compute/capacityreservationgroups",
        versions: &["2024-11-01"],
        tracked: true,
        put: Mode::Sync,
        delete: Mode::Sync,
    },
    TypeInfo {
        key: "microsoft.compute/capacityreservationgroups/capacityreservations",
        versions: &["2024-11-01"],
        tracked: true,
        put: Mode::AsyncOp,
        delete: Mode::AsyncOp,
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
        (
            "microsoft.compute/capacityreservationgroups",
            "Microsoft.Compute/capacityReservationGroups",
        ),
        (
            "microsoft.compute/capacityreservationgroups/capacityreservations",
            "Microsoft.Compute/capacityReservationGroups/capacityReservations",
        ),
    ];
    known
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(key.to_string(), |(_, n)| n.to_string())
}
