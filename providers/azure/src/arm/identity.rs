//! Managed identities.

use super::{common, s, Scope, Spec};
use strata_provider::AttributeSchema as A;
use strata_rest::fields::{f, out};
use strata_value::types::Type;

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
    settings: None,
    queues: &[],
};

/// `azurerm_federated_identity_credential`: lets a Kubernetes service
/// account's tokens, issued by a cluster's OIDC issuer, stand for the
/// identity (AKS workload identity).
pub static FEDERATED_IDENTITY_CREDENTIAL: Spec = Spec {
    type_name: "azurerm_federated_identity_credential",
    provider: "Microsoft.ManagedIdentity/userAssignedIdentities",
    api_version: "2023-01-31",
    scope: Scope::UnderId {
        parent: "parent_id",
        segment: "federatedIdentityCredentials",
    },
    located: false,
    tags: None,
    fields: &[
        f("audience", "properties.audiences"),
        f("issuer", "properties.issuer"),
        f("subject", "properties.subject"),
    ],
    schema: || {
        common(
            false,
            true,
            false,
            vec![
                (
                    "parent_id",
                    A::required(s(), "The user-assigned identity it is a credential of.")
                        .force_new(),
                ),
                (
                    "audience",
                    A::required(
                        Type::list(s()),
                        "Audiences of the tokens (api://AzureADTokenExchange).",
                    ),
                ),
                (
                    "issuer",
                    A::required(s(), "The tokens' issuer (the cluster's OIDC issuer URL)."),
                ),
                (
                    "subject",
                    A::required(
                        s(),
                        "The tokens' subject (system:serviceaccount:NAMESPACE:NAME).",
                    ),
                ),
            ],
        )
    },
    nested_force_new: &[],
    keep: &[],
    to_api: None,
    from_api: None,
    credentials: None,
    settings: None,
    queues: &[],
};

/// The management locks API's version.
pub const LOCKS_API: &str = "2020-05-01";

/// `azurerm_management_lock`: a lock on a scope (a resource group, a
/// resource) that refuses deletes (`CanNotDelete`) or all writes
/// (`ReadOnly`) of it and everything under it until it is removed.
pub static MANAGEMENT_LOCK: Spec = Spec {
    type_name: "azurerm_management_lock",
    provider: "Microsoft.Authorization/locks",
    api_version: LOCKS_API,
    scope: Scope::UnderId {
        parent: "scope",
        segment: "providers/Microsoft.Authorization/locks",
    },
    located: false,
    tags: None,
    fields: &[
        f("lock_level", "properties.level"),
        f("notes", "properties.notes"),
    ],
    schema: || {
        common(
            false,
            false,
            false,
            vec![
                (
                    "scope",
                    A::required(s(), "The id of what it locks.").force_new(),
                ),
                (
                    "lock_level",
                    A::required(s(), "CanNotDelete or ReadOnly.").force_new(),
                ),
                ("notes", A::optional(s(), "Why it is there.").force_new()),
            ],
        )
    },
    nested_force_new: &[],
    keep: &[],
    to_api: None,
    from_api: None,
    credentials: None,
    settings: None,
    queues: &[],
};
