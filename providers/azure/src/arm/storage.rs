//! Storage accounts, their blob containers, blob versioning (the
//! account's blob service settings) and lifecycle management policies.

use super::{common, s, Scope, Settings, Spec};
use serde_json::json;
use strata_provider::values::list_block_max1;
use strata_provider::AttributeSchema as A;
use strata_provider::BlockNesting;
use strata_rest::fields::{array, f, object, out, Field};
use strata_value::types::Type;

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
        let mut schema = common(
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
        );
        schema.blocks.insert(
            "blob_properties".into(),
            list_block_max1(vec![(
                "versioning_enabled",
                A::optional(Type::Bool, "Keep every version of a blob.").and_computed(),
            )]),
        );
        schema
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
    settings: Some(&BLOB_SERVICE),
    queues: &[],
};

/// The account's blob service (`blobServices/default`), which azurerm
/// shows as the account's `blob_properties` block.
static BLOB_SERVICE: Settings = Settings {
    path: "blobServices/default",
    fields: &[object(
        "blob_properties",
        "properties",
        &[f("versioning_enabled", "isVersioningEnabled")],
    )],
    defaults: || json!({ "blob_properties": [{ "versioning_enabled": false }] }),
};

/// `container_access_type` ↔ the API's `publicAccess`.
const ACCESS: [(&str, &str); 3] = [
    ("private", "None"),
    ("blob", "Blob"),
    ("container", "Container"),
];

/// `azurerm_storage_container`, by the account's id as azurerm 4 has it.
pub static STORAGE_CONTAINER: Spec = Spec {
    type_name: "azurerm_storage_container",
    provider: "Microsoft.Storage/storageAccounts",
    api_version: "2023-05-01",
    scope: Scope::UnderId {
        parent: "storage_account_id",
        segment: "blobServices/default/containers",
    },
    located: false,
    tags: None,
    fields: &[f("metadata", "properties.metadata")],
    schema: || {
        common(
            false,
            false,
            false,
            vec![
                (
                    "storage_account_id",
                    A::required(s(), "The storage account that holds it.").force_new(),
                ),
                (
                    "container_access_type",
                    A::optional(s(), "private (the default), blob or container.").and_computed(),
                ),
                (
                    "metadata",
                    A::optional(Type::map(s()), "Metadata.").and_computed(),
                ),
            ],
        )
    },
    nested_force_new: &[],
    keep: &[],
    to_api: Some(|tf, api| {
        let want = tf["container_access_type"].as_str().unwrap_or("private");
        if let Some((_, a)) = ACCESS.iter().find(|(t, _)| *t == want) {
            api["properties"]["publicAccess"] = json!(a);
        }
    }),
    from_api: Some(|api, tf| {
        let have = api["properties"]["publicAccess"].as_str().unwrap_or("None");
        if let Some((t, _)) = ACCESS.iter().find(|(_, a)| a.eq_ignore_ascii_case(have)) {
            tf["container_access_type"] = json!(t);
        }
    }),
    credentials: None,
    settings: None,
    queues: &[],
};

const RULE: &[Field] = &[
    f("name", "name"),
    f("enabled", "enabled"),
    object(
        "filters",
        "definition.filters",
        &[
            f("blob_types", "blobTypes"),
            f("prefix_match", "prefixMatch"),
        ],
    ),
    object(
        "actions",
        "definition.actions",
        &[
            object(
                "base_blob",
                "baseBlob",
                &[f(
                    "delete_after_days_since_modification_greater_than",
                    "delete.daysAfterModificationGreaterThan",
                )],
            ),
            object(
                "version",
                "version",
                &[f(
                    "delete_after_days_since_creation",
                    "delete.daysAfterCreationGreaterThan",
                )],
            ),
        ],
    ),
];

/// `azurerm_storage_management_policy`: the account's one lifecycle
/// policy (`managementPolicies/default`).
pub static STORAGE_MANAGEMENT_POLICY: Spec = Spec {
    type_name: "azurerm_storage_management_policy",
    provider: "Microsoft.Storage/storageAccounts",
    api_version: "2023-05-01",
    scope: Scope::Singleton {
        parent: "storage_account_id",
        path: "managementPolicies/default",
    },
    located: false,
    tags: None,
    fields: &[array("rule", "properties.policy.rules", RULE)],
    schema: management_policy_schema,
    nested_force_new: &[],
    keep: &[],
    // Every rule of the API's is a lifecycle rule, and says so.
    to_api: Some(|_, api| {
        if let Some(rules) = api["properties"]["policy"]["rules"].as_array_mut() {
            for r in rules {
                r["type"] = json!("Lifecycle");
            }
        }
    }),
    from_api: None,
    credentials: None,
    settings: None,
    queues: &[],
};

fn management_policy_schema() -> strata_provider::ResourceSchema {
    let n = || A::optional(Type::Number, "Days.");
    let mut actions = list_block_max1(vec![]);
    actions.schema.blocks.insert(
        "base_blob".into(),
        list_block_max1(vec![(
            "delete_after_days_since_modification_greater_than",
            n(),
        )]),
    );
    actions.schema.blocks.insert(
        "version".into(),
        list_block_max1(vec![("delete_after_days_since_creation", n())]),
    );
    let mut rule = strata_provider::values::block(
        BlockNesting::List,
        0,
        vec![
            ("name", A::required(s(), "The rule's name.")),
            ("enabled", A::required(Type::Bool, "Whether it runs.")),
        ],
    );
    rule.schema.blocks.insert(
        "filters".into(),
        list_block_max1(vec![
            (
                "blob_types",
                A::required(Type::list(s()), "blockBlob, appendBlob."),
            ),
            (
                "prefix_match",
                A::optional(Type::list(s()), "Blob name prefixes (CONTAINER/PATH)."),
            ),
        ]),
    );
    rule.schema.blocks.insert("actions".into(), actions);
    let mut schema = strata_provider::ResourceSchema::of_attributes(vec![
        (
            "storage_account_id",
            A::required(s(), "The storage account it governs.").force_new(),
        ),
        ("id", A::computed(s(), "The policy's Resource Manager id.")),
    ]);
    schema.blocks.insert("rule".into(), rule);
    schema
        .blocks
        .insert("timeouts".into(), strata_provider::values::timeouts_block());
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value as Json;
    use strata_rest::fields::{from_api, to_api};

    /// The policy's rule goes to the API's shape and comes back the same.
    #[test]
    fn a_lifecycle_rule_round_trips() {
        let tf = json!({"rule": [{"name": "expire", "enabled": true,
            "filters": [{"blob_types": ["blockBlob"], "prefix_match": ["c/"]}],
            "actions": [{"base_blob": [{"delete_after_days_since_modification_greater_than": 30}],
                         "version": [{"delete_after_days_since_creation": 30}]}]}]});
        let mut api = to_api(STORAGE_MANAGEMENT_POLICY.fields, &tf);
        (STORAGE_MANAGEMENT_POLICY.to_api.expect("hook"))(&tf, &mut api);
        let rule = &api["properties"]["policy"]["rules"][0];
        assert_eq!(rule["type"], "Lifecycle");
        assert_eq!(
            rule["definition"]["actions"]["baseBlob"]["delete"]["daysAfterModificationGreaterThan"],
            30
        );
        assert_eq!(
            rule["definition"]["actions"]["version"]["delete"]["daysAfterCreationGreaterThan"],
            30
        );
        assert_eq!(from_api(STORAGE_MANAGEMENT_POLICY.fields, &api), tf);
    }

    #[test]
    fn access_types_map_both_ways() {
        let mut api = Json::Null;
        (STORAGE_CONTAINER.to_api.expect("hook"))(&json!({}), &mut api);
        assert_eq!(api["properties"]["publicAccess"], "None");
        let mut tf = json!({});
        (STORAGE_CONTAINER.from_api.expect("hook"))(
            &json!({"properties": {"publicAccess": "Blob"}}),
            &mut tf,
        );
        assert_eq!(tf["container_access_type"], "blob");
    }
}
