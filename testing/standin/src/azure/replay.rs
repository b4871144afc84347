//! Azure's own request examples (`testing/definitions/azure/examples.json`,
//! the bodies Microsoft's REST API specifications give for each resource
//! type the driver writes) replayed against the stand-in: each is taken
//! (200, 201 or 202, its operation ending Succeeded), and read back its
//! answer fits Azure's definition (the stand-in's own check turns a misfit
//! into a 500) and holds every `properties` field the example set, as
//! given. Then Microsoft's example answers (`responses.json`): the same
//! kind of request is answered with a status the operation documents,
//! and read back it holds what the example's answer holds where the
//! driver reads it.

use super::*;

const EXAMPLES: &str = include_str!("../../../definitions/azure/examples.json");
const RESPONSES: &str = include_str!("../../../definitions/azure/responses.json");

fn send(w: &mut World, method: Method, path: &str, body: &Json) -> (u16, Json, Vec<String>) {
    w.tokens.push("t".to_string());
    let r = w.handle(&Req::with_bearer(method, path, "t", body), BASE);
    let code = r.status().as_u16();
    let follow: Vec<String> = ["azure-asyncoperation", "location"]
        .iter()
        .filter_map(|h| r.headers().get(*h)?.to_str().ok())
        .map(|u| u.trim_start_matches(BASE).to_string())
        .collect();
    let body = serde_json::from_slice(&crate::ready_bytes(r.into_body())).unwrap_or_default();
    (code, body, follow)
}

const BASE: &str = "https://x";

/// Where each type's examples are put, under a resource group whose
/// parents the replay makes first.
fn place(resource: &str, i: usize) -> String {
    let rg = format!("/subscriptions/{SUBSCRIPTION}/resourceGroups/rg");
    let p = format!("{rg}/providers");
    match resource.split('@').next().unwrap_or_default() {
        "Microsoft.Resources/resourceGroups" => {
            format!("/subscriptions/{SUBSCRIPTION}/resourceGroups/example{i}")
        }
        "Microsoft.Network/virtualNetworks" => format!("{p}/Microsoft.Network/virtualNetworks/example{i}"),
        "Microsoft.Network/virtualNetworks/subnets" => {
            format!("{p}/Microsoft.Network/virtualNetworks/vnet/subnets/example{i}")
        }
        "Microsoft.Network/networkSecurityGroups" => {
            format!("{p}/Microsoft.Network/networkSecurityGroups/example{i}")
        }
        "Microsoft.ManagedIdentity/userAssignedIdentities" => {
            format!("{p}/Microsoft.ManagedIdentity/userAssignedIdentities/example{i}")
        }
        "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials" => format!(
            "{p}/Microsoft.ManagedIdentity/userAssignedIdentities/identity/federatedIdentityCredentials/example{i}"
        ),
        // The examples assign one role at three scopes: a resource, a
        // group, the subscription (one role twice at a scope is refused).
        "Microsoft.Authorization/roleAssignments" => {
            let scope = match i {
                0 => format!("{p}/Microsoft.Network/virtualNetworks/vnet"),
                1 => rg,
                _ => format!("/subscriptions/{SUBSCRIPTION}"),
            };
            format!("{scope}/providers/Microsoft.Authorization/roleAssignments/00000000-0000-0000-0000-{i:012}")
        }
        // A lock on a group of its own: a ReadOnly one refuses writes below.
        "Microsoft.Authorization/locks" => format!(
            "/subscriptions/{SUBSCRIPTION}/resourceGroups/locked/providers/Microsoft.Authorization/locks/example{i}"
        ),
        "Microsoft.Storage/storageAccounts" => format!("{p}/Microsoft.Storage/storageAccounts/example{i}"),
        "Microsoft.Storage/storageAccounts/blobServices" => {
            format!("{p}/Microsoft.Storage/storageAccounts/account/blobServices/default")
        }
        "Microsoft.Storage/storageAccounts/blobServices/containers" => format!(
            "{p}/Microsoft.Storage/storageAccounts/account/blobServices/default/containers/example{i}"
        ),
        "Microsoft.Storage/storageAccounts/managementPolicies" => {
            format!("{p}/Microsoft.Storage/storageAccounts/account/managementPolicies/default")
        }
        "Microsoft.ContainerService/managedClusters" => {
            format!("{p}/Microsoft.ContainerService/managedClusters/example{i}")
        }
        "Microsoft.ContainerService/managedClusters/agentPools" => {
            format!("{p}/Microsoft.ContainerService/managedClusters/cluster/agentPools/pool{i}")
        }
        "Microsoft.Compute/capacityReservationGroups" => {
            format!("{p}/Microsoft.Compute/capacityReservationGroups/example{i}")
        }
        "Microsoft.Compute/capacityReservationGroups/capacityReservations" => format!(
            "{p}/Microsoft.Compute/capacityReservationGroups/group/capacityReservations/example{i}"
        ),
        other => panic!("no place for {other}"),
    }
}

/// The parents the examples are put under.
fn parents(w: &mut World) {
    let rg = format!("/subscriptions/{SUBSCRIPTION}/resourceGroups");
    let p = format!("{rg}/rg/providers");
    let made = [
        (format!("{rg}/rg?api-version=2022-09-01"), json!({"location": "eastus"})),
        (format!("{rg}/locked?api-version=2022-09-01"), json!({"location": "eastus"})),
        (
            format!("{p}/Microsoft.Network/virtualNetworks/vnet?api-version=2024-05-01"),
            json!({"location": "eastus", "properties": {"addressSpace": {"addressPrefixes": ["10.0.0.0/16"]}}}),
        ),
        (
            format!("{p}/Microsoft.ManagedIdentity/userAssignedIdentities/identity?api-version=2023-01-31"),
            json!({"location": "eastus"}),
        ),
        (
            format!("{p}/Microsoft.Compute/capacityReservationGroups/group?api-version=2024-11-01"),
            json!({"location": "eastus", "zones": ["1"]}),
        ),
        (format!("{rg}/rg1?api-version=2022-09-01"), json!({"location": "eastus"})),
        (
            format!("{rg}/rg1/providers/Microsoft.Compute/capacityReservationGroups/crg1?api-version=2024-11-01"),
            json!({"location": "eastus"}),
        ),
        // Not empty, or AKS would leave the group out of the pool.
        (
            format!("{rg}/rg1/providers/Microsoft.Compute/capacityReservationGroups/crg1/capacityReservations/ds2?api-version=2024-11-01"),
            json!({"location": "eastus", "sku": {"name": "Standard_DS2_v2", "capacity": 3}}),
        ),
        (
            format!("{p}/Microsoft.Storage/storageAccounts/account?api-version=2023-05-01"),
            json!({"location": "eastus", "sku": {"name": "Standard_LRS"}, "kind": "StorageV2"}),
        ),
        (
            format!("{p}/Microsoft.ContainerService/managedClusters/cluster?api-version=2025-01-01"),
            // A user-assigned identity: AKS takes capacity reservation
            // groups (one example names rg1's crg1) only with one.
            json!({"location": "eastus", "identity": {"type": "UserAssigned", "userAssignedIdentities": {
                format!("{p}/Microsoft.ManagedIdentity/userAssignedIdentities/identity"): {}}}, "properties": {
                "dnsPrefix": "cluster", "agentPoolProfiles": [{"name": "system", "count": 1,
                "vmSize": "Standard_D4s_v5", "mode": "System"}]}}),
        ),
    ];
    for (path, body) in made {
        let (code, answer, follow) = send(w, Method::PUT, &path, &body);
        assert!((200..300).contains(&code), "{path}: {code} {answer}");
        finish(w, &follow);
    }
    // The cluster's identity may deploy into rg1's groups (the first try
    // meets the directory's delay for a new principal).
    let identity = format!("{p}/Microsoft.ManagedIdentity/userAssignedIdentities/identity");
    let principal = w.objects[&identity.to_ascii_lowercase()]["properties"]["principalId"].clone();
    let path = format!("{rg}/rg1/providers/Microsoft.Authorization/roleAssignments/11111111-0000-0000-0000-000000000001?api-version=2022-04-01");
    let body = json!({"properties": {"principalId": principal,
        "roleDefinitionId": format!("/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Authorization/roleDefinitions/b24988ac-6180-42a0-ab88-20f7382dd24c")}});
    let (code, _, _) = send(w, Method::PUT, &path, &body);
    if code != 200 && code != 201 {
        let (code, answer, _) = send(w, Method::PUT, &path, &body);
        assert!((200..300).contains(&code), "{path}: {code} {answer}");
    }
}

/// Looks at an operation until it ends; its status.
fn finish(w: &mut World, follow: &[String]) -> String {
    let Some(url) = follow.first() else {
        return "Succeeded".into();
    };
    let mut status = String::new();
    for _ in 0..10 {
        let (code, answer, _) = send(w, Method::GET, url, &Json::Null);
        status = answer["status"].as_str().unwrap_or_default().to_string();
        if code == 200 && (status.is_empty() || status != "InProgress") {
            break;
        }
    }
    if status.is_empty() {
        "Succeeded".into()
    } else {
        status
    }
}

/// Whether `got` holds all of `given`: each field, each list item in
/// some item (the service adds ids, states, its own taints).
fn holds(got: &Json, given: &Json) -> bool {
    match (given, got) {
        (Json::Object(fields), Json::Object(_)) => {
            fields.iter().all(|(k, v)| holds(&got[k.as_str()], v))
        }
        (Json::Array(items), Json::Array(read)) => {
            items.iter().all(|v| read.iter().any(|r| holds(r, v)))
        }
        (v, r) => v == r,
    }
}

/// The fields of `given` (an example's `properties`) that `got` does not
/// hold, by path. An empty string asks for the service's choice (the
/// examples send `kubernetesVersion: ""` and are answered with a version).
fn missing(given: &Json, got: &Json, at: &str, out: &mut Vec<String>) {
    for (k, v) in given.as_object().into_iter().flatten() {
        if v != "" && !holds(&got[k.as_str()], v) {
            out.push(format!("{at}.{k}: gave {v}, read {}", got[k.as_str()]));
        }
    }
}

#[test]
fn azures_own_examples_are_taken() {
    let doc: Json = serde_json::from_str(EXAMPLES).expect("examples.json");
    let mut w = World::default();
    parents(&mut w);
    let mut failed = Vec::new();
    let mut replayed = 0;
    for (resource, examples) in doc["examples"].as_object().into_iter().flatten() {
        let version = resource.rsplit('@').next().unwrap_or_default();
        for (i, ex) in examples.as_array().into_iter().flatten().enumerate() {
            let title = ex["title"].as_str().unwrap_or_default();
            let path = format!("{}?api-version={version}", place(resource, i));
            let mut body = ex["body"].clone();
            if let Some(o) = body.as_object_mut() {
                o.remove("name");
            }
            let (code, answer, follow) = send(&mut w, Method::PUT, &path, &body);
            replayed += 1;
            if !(200..300).contains(&code) {
                failed.push(format!("{resource} {title:?}: {code} {answer}"));
                continue;
            }
            let status = finish(&mut w, &follow);
            let (code, read, _) = send(&mut w, Method::GET, &path, &Json::Null);
            let mut differs = Vec::new();
            missing(
                &body["properties"],
                &read["properties"],
                "properties",
                &mut differs,
            );
            if status != "Succeeded" || code != 200 || !differs.is_empty() {
                failed.push(format!(
                    "{resource} {title:?}: {status}, read {code}: {differs:?} {read}"
                ));
            }
        }
    }
    assert!(replayed >= 90, "{replayed} examples");
    assert!(
        failed.is_empty(),
        "{} of {replayed}:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// Where `read` differs from the example's `answer`, by path: a value
/// the service makes up (`generated`) need only be of the same JSON type;
/// any other must be held as the example has it.
fn differs(
    answer: &Json,
    read: &Json,
    at: &mut Vec<String>,
    generated: &[Vec<String>],
    out: &mut Vec<String>,
) {
    if generated.contains(at) {
        let kind = |j: &Json| std::mem::discriminant(j);
        if kind(answer) != kind(read) {
            out.push(format!("{}: a {answer} was read as {read}", at.join(".")));
        }
        return;
    }
    match answer.as_object() {
        Some(fields) => {
            for (k, v) in fields {
                at.push(k.clone());
                differs(v, &read[k.as_str()], at, generated, out);
                at.pop();
            }
        }
        None if !holds(read, answer) => {
            out.push(format!(
                "{}: the example has {answer}, read {read}",
                at.join(".")
            ));
        }
        None => {}
    }
}

#[test]
fn azure_answers_as_its_examples_do() {
    let doc: Json = serde_json::from_str(RESPONSES).expect("responses.json");
    let mut w = World::default();
    parents(&mut w);
    // The identity the cluster examples name, made first (AKS reads its
    // principal from it).
    let rg = format!("/subscriptions/{SUBSCRIPTION}/resourceGroups/rgName1");
    let identity =
        format!("{rg}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/identity1");
    for (path, body) in [
        (
            format!("{rg}?api-version=2022-09-01"),
            json!({"location": "eastus"}),
        ),
        (
            format!("{identity}?api-version=2023-01-31"),
            json!({"location": "eastus"}),
        ),
    ] {
        let (code, answer, _) = send(&mut w, Method::PUT, &path, &body);
        assert!((200..300).contains(&code), "{path}: {code} {answer}");
    }
    let mut failed = Vec::new();
    let examples = doc["examples"].as_array().expect("examples");
    for (i, ex) in examples.iter().enumerate() {
        let resource = ex["resource"].as_str().unwrap_or_default();
        let version = resource.rsplit('@').next().unwrap_or_default();
        let file = ex["file"].as_str().unwrap_or_default();
        let name = file.rsplit('/').next().unwrap_or_default();
        // Past the indices the request examples use, so nothing is taken twice.
        let path = format!("{}?api-version={version}", place(resource, 10 + i));
        let (code, answer, follow) = send(&mut w, Method::PUT, &path, &ex["request"]);
        let statuses: Vec<u64> = ex["statuses"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_u64)
            .collect();
        if !statuses.contains(&u64::from(code)) {
            failed.push(format!(
                "{name}: PUT answered {code} (documented: {statuses:?}) {answer}"
            ));
            continue;
        }
        let status = finish(&mut w, &follow);
        let (code, read, _) = send(&mut w, Method::GET, &path, &Json::Null);
        let generated: Vec<Vec<String>> =
            serde_json::from_value(ex["generated"].clone()).unwrap_or_default();
        let mut out = Vec::new();
        differs(&ex["answer"], &read, &mut Vec::new(), &generated, &mut out);
        if status != "Succeeded" || code != 200 || !out.is_empty() {
            failed.push(format!("{name}: {status}, read {code}: {out:#?}"));
        }
    }
    assert!(examples.len() >= 17, "{} examples", examples.len());
    assert!(
        failed.is_empty(),
        "{} of {}:\n{}",
        failed.len(),
        examples.len(),
        failed.join("\n")
    );
}
