//! The driver read against Microsoft's own example answers
//! (`testing/definitions/azure/responses.json`, taken from the REST API
//! specifications of the versions the driver calls): each reads into its
//! type's schema, every attribute the configuration must give is known
//! after it, and every field the driver maps that the answer holds comes
//! through. A driver that reads a field Azure does not answer the way it
//! thinks fails here, not on the first real apply.

use super::*;
use strata_value::json::value_to_json;

const RESPONSES: &str = include_str!("../../../../testing/definitions/azure/responses.json");

fn spec(resource: &str) -> Option<&'static Spec> {
    let kind = resource.split('@').next()?;
    Some(match kind {
        "Microsoft.Resources/resourceGroups" => &RESOURCE_GROUP,
        "Microsoft.Network/virtualNetworks" => &VIRTUAL_NETWORK,
        "Microsoft.Network/virtualNetworks/subnets" => &SUBNET,
        "Microsoft.Network/networkSecurityGroups" => &NETWORK_SECURITY_GROUP,
        "Microsoft.ManagedIdentity/userAssignedIdentities" => &USER_ASSIGNED_IDENTITY,
        "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials" => {
            &FEDERATED_IDENTITY_CREDENTIAL
        }
        "Microsoft.Authorization/locks" => &MANAGEMENT_LOCK,
        "Microsoft.ContainerService/managedClusters" => &KUBERNETES_CLUSTER,
        "Microsoft.ContainerService/managedClusters/agentPools" => &NODE_POOL,
        "Microsoft.Storage/storageAccounts" => &STORAGE_ACCOUNT,
        "Microsoft.Storage/storageAccounts/blobServices/containers" => &STORAGE_CONTAINER,
        "Microsoft.Storage/storageAccounts/managementPolicies" => &STORAGE_MANAGEMENT_POLICY,
        // A storage account's settings child and role assignments are
        // read elsewhere (`settings_shown`, `special`).
        _ => return None,
    })
}

/// What is wrong with reading `answer` as `spec`'s type.
fn misread(spec: &'static Spec, answer: &Json) -> Vec<String> {
    let schema = (spec.schema)();
    let value = match Resource(spec).value(answer, None) {
        Ok(v) => v,
        Err(e) => return vec![format!("{e}")],
    };
    let read = value_to_json(&value, &schema.object_type()).unwrap_or_default();
    let mut wrong = Vec::new();
    for (name, a) in &schema.attributes {
        if a.required && read[name.as_str()].is_null() {
            wrong.push(format!("{name} (required) was not read"));
        }
    }
    for fd in spec.fields {
        let answered = strata_rest::fields::get(answer, fd.api).is_some_and(|v| !v.is_null());
        if answered && read[fd.attr].is_null() {
            wrong.push(format!(
                "{} is answered at {} but was not read",
                fd.attr, fd.api
            ));
        }
    }
    wrong
}

/// A blob service's answer read as the storage account's block.
fn blob_settings_misread(answer: &Json) -> Option<String> {
    let settings = STORAGE_ACCOUNT.settings?;
    let mut j = json!({});
    settings_shown(settings, answer, None, &mut j);
    let want = &answer["properties"]["isVersioningEnabled"];
    let got = &j["blob_properties"][0]["versioning_enabled"];
    (got != want).then(|| format!("versioning {want} was read as {got}"))
}

#[test]
fn microsofts_example_answers_read_into_the_schema() {
    let doc: Json = serde_json::from_str(RESPONSES).expect("responses.json");
    let mut failed = Vec::new();
    let mut read = 0;
    for ex in doc["examples"].as_array().into_iter().flatten() {
        let resource = ex["resource"].as_str().unwrap_or_default();
        let file = ex["file"].as_str().unwrap_or_default();
        if resource.starts_with("Microsoft.Storage/storageAccounts/blobServices@") {
            read += 1;
            failed.extend(blob_settings_misread(&ex["answer"]).map(|w| format!("{file}: {w}")));
            continue;
        }
        let Some(spec) = spec(resource) else { continue };
        let version = resource.rsplit('@').next().unwrap_or_default();
        if spec.api_version != version {
            failed.push(format!("{file}: the driver calls {}", spec.api_version));
        }
        read += 1;
        for w in misread(spec, &ex["answer"]) {
            failed.push(format!("{file}: {w}"));
        }
    }
    assert!(read >= 15, "{read} examples read");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
