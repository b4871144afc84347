//! The stand-in is not stricter than Google: every request body the GCP
//! driver sends, with every field of its method's request schema set
//! besides (`definitions::Api::filled`), is answered as Google documents
//! (2xx, an operation that ends DONE without error), and every answer fits
//! its response schema (the definitions' check on each answer turns a
//! misfit into a 500, which fails here too).

use super::*;
use crate::definitions;

const P: &str = "acme";

/// One request of the replay: the method's id in Google's definitions,
/// the HTTP method, path, and the body a driver sends (the base that every
/// other field is added to).
struct Step {
    api: &'static str,
    id: &'static str,
    method: Method,
    path: String,
    base: Json,
    fill: Fill,
}

/// Whether the replay adds every field to the step's body.
#[derive(PartialEq)]
enum Fill {
    Every,
    /// The body is complete as it is (one field of a one-field update).
    AsGiven,
}

fn step(api: &'static str, id: &'static str, method: Method, path: &str, base: Json) -> Step {
    Step {
        api,
        id,
        method,
        path: path.to_string(),
        base,
        fill: Fill::Every,
    }
}

/// Sends the step's body with every field set; its answer's status and
/// body, an operation looked at until DONE.
fn replay(w: &mut World, s: &Step) -> (u16, Json) {
    let def = definitions::api(s.api).expect("the API's definitions");
    let service = format!(
        "/{}/v1/",
        if s.api == "cloudresourcemanager" {
            "crm"
        } else {
            s.api
        }
    );
    let rest = s.path.trim_start_matches(&service);
    let rest = rest.split('?').next().unwrap_or(rest);
    let m = def
        .method(s.method.as_str(), rest)
        .unwrap_or_else(|| panic!("{}: no method at {}", s.id, s.path));
    assert_eq!(m.id, s.id, "{} found as {}", s.path, m.id);
    let body = match (&m.request, &s.fill) {
        (Some(schema), Fill::Every) => def.filled(schema, &s.base),
        _ => s.base.clone(),
    };
    let r = w.handle(&Req::with_bearer(
        s.method.clone(),
        &s.path,
        STATIC_TOKEN,
        &body,
    ));
    let code = r.status().as_u16();
    let answer: Json =
        serde_json::from_slice(&crate::ready_bytes(r.into_body())).unwrap_or_default();
    let done = match answer["name"].as_str() {
        Some(op) if w.ops.contains_key(op) => {
            let mut last = Json::Null;
            for _ in 0..3 {
                last = w.look(op).unwrap_or_default();
            }
            last
        }
        _ => answer,
    };
    (code, done)
}

/// What the driver sends, in the order it sends it.
fn steps() -> Vec<Step> {
    let compute = format!("/compute/v1/projects/{P}");
    let region = format!("{compute}/regions/us-central1");
    let gke = format!("/container/v1/projects/{P}/locations/us-central1/clusters");
    let pool = format!("{gke}/gke/nodePools/h100");
    let net = format!("https://www.googleapis.com/compute/v1/projects/{P}/global/networks/vpc");
    let sa = format!("gpu-nodes@{P}.iam.gserviceaccount.com");
    let mut steps = vec![
        step(
            "compute",
            "compute.networks.insert",
            Method::POST,
            &format!("{compute}/global/networks"),
            json!({"name": "vpc", "autoCreateSubnetworks": false, "routingConfig": {"routingMode": "REGIONAL"}}),
        ),
        step(
            "compute",
            "compute.subnetworks.insert",
            Method::POST,
            &format!("{region}/subnetworks"),
            json!({"name": "nodes", "network": net, "ipCidrRange": "10.0.0.0/20", "region": "us-central1",
                   "secondaryIpRanges": [{"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"},
                                         {"rangeName": "services", "ipCidrRange": "10.8.0.0/20"}],
                   "privateIpGoogleAccess": true}),
        ),
        step(
            "compute",
            "compute.subnetworks.setPrivateIpGoogleAccess",
            Method::POST,
            &format!("{region}/subnetworks/nodes/setPrivateIpGoogleAccess"),
            json!({"privateIpGoogleAccess": false}),
        ),
        step(
            "compute",
            "compute.subnetworks.expandIpCidrRange",
            Method::POST,
            &format!("{region}/subnetworks/nodes/expandIpCidrRange"),
            json!({"ipCidrRange": "10.0.0.0/19"}),
        ),
        step(
            "compute",
            "compute.routers.insert",
            Method::POST,
            &format!("{region}/routers"),
            json!({"name": "nat", "network": net,
                   "nats": [{"name": "nat", "natIpAllocateOption": "AUTO_ONLY",
                             "sourceSubnetworkIpRangesToNat": "ALL_SUBNETWORKS_ALL_IP_RANGES"}]}),
        ),
        step(
            "compute",
            "compute.routers.patch",
            Method::PATCH,
            &format!("{region}/routers/nat"),
            json!({"name": "nat", "network": net, "nats": [{"name": "nat", "natIpAllocateOption": "AUTO_ONLY",
                             "sourceSubnetworkIpRangesToNat": "ALL_SUBNETWORKS_ALL_IP_RANGES",
                             "minPortsPerVm": 128}]}),
        ),
        step(
            "compute",
            "compute.firewalls.insert",
            Method::POST,
            &format!("{compute}/global/firewalls"),
            json!({"name": "internal", "network": net, "direction": "INGRESS", "priority": 1000,
                   "sourceRanges": ["10.0.0.0/8"], "allowed": [{"IPProtocol": "tcp", "ports": ["0-65535"]}]}),
        ),
        step(
            "compute",
            "compute.firewalls.patch",
            Method::PATCH,
            &format!("{compute}/global/firewalls/internal"),
            json!({"name": "internal", "network": net, "priority": 900}),
        ),
        step(
            "iam",
            "iam.projects.serviceAccounts.create",
            Method::POST,
            &format!("/iam/v1/projects/{P}/serviceAccounts"),
            json!({"accountId": "gpu-nodes", "serviceAccount": {"displayName": "GPU nodes"}}),
        ),
        step(
            "iam",
            "iam.projects.serviceAccounts.patch",
            Method::PATCH,
            &format!("/iam/v1/projects/{P}/serviceAccounts/{sa}"),
            json!({"serviceAccount": {"displayName": "GPU nodes, renamed"}, "updateMask": "displayName"}),
        ),
        step(
            "cloudresourcemanager",
            "cloudresourcemanager.projects.getIamPolicy",
            Method::POST,
            &format!("/crm/v1/projects/{P}:getIamPolicy"),
            json!({}),
        ),
        step(
            "container",
            "container.projects.locations.clusters.create",
            Method::POST,
            &gke,
            json!({"cluster": {"name": "gke", "network": "vpc", "subnetwork": "nodes",
                               "initialNodeCount": 1, "ipAllocationPolicy": {"useIpAliases": true,
                               "clusterSecondaryRangeName": "pods", "servicesSecondaryRangeName": "services"},
                               "workloadIdentityConfig": {"workloadPool": format!("{P}.svc.id.goog")}},
                   "parent": format!("projects/{P}/locations/us-central1")}),
        ),
    ];
    // GKE takes one update of a cluster per request (ClusterUpdate says
    // "exactly one"): each field of it alone, filled.
    let container = definitions::api("container").expect("container's definitions");
    for field in container.fields("ClusterUpdate") {
        let update = json!({"update": {&field: container.filled_field("ClusterUpdate", &field)}});
        steps.push(Step {
            fill: Fill::AsGiven,
            ..step(
                "container",
                "container.projects.locations.clusters.update",
                Method::PUT,
                &format!("{gke}/gke"),
                update,
            )
        });
    }
    steps.extend([
        step("container", "container.projects.locations.clusters.nodePools.create", Method::POST,
            &format!("{gke}/gke/nodePools"),
            // Every field filled makes a Spot pool flex-start and queued,
            // which GKE refuses (`flex.rs`): those two are given, off.
            json!({"nodePool": {"name": "h100", "initialNodeCount": 1,
                                "queuedProvisioning": {"enabled": false},
                                "config": {"machineType": "a3-highgpu-8g", "serviceAccount": sa,
                                           "flexStart": false,
                                           "accelerators": [{"acceleratorCount": "8",
                                                             "acceleratorType": "nvidia-h100-80gb"}]}}})),
        step("container", "container.projects.locations.clusters.nodePools.setSize", Method::POST,
            &format!("{pool}:setSize"), json!({"nodeCount": 2})),
        step("container", "container.projects.locations.clusters.nodePools.setAutoscaling", Method::POST,
            &format!("{pool}:setAutoscaling"),
            json!({"autoscaling": {"enabled": true, "minNodeCount": 0, "maxNodeCount": 4}})),
        step("container", "container.projects.locations.clusters.nodePools.setManagement", Method::POST,
            &format!("{pool}:setManagement"), json!({"management": {"autoRepair": true}})),
        step("container", "container.projects.locations.clusters.nodePools.update", Method::PUT, &pool,
            json!({"labels": {"labels": {"gpu": "h100"}}})),
        step("storage", "storage.buckets.insert", Method::POST, &format!("/storage/v1/b?project={P}"),
            json!({"name": "acme-ckpt", "location": "US-CENTRAL1", "versioning": {"enabled": true},
                   "lifecycle": {"rule": [{"action": {"type": "Delete"}, "condition": {"age": 30}}]}})),
        step("storage", "storage.buckets.patch", Method::PATCH, "/storage/v1/b/acme-ckpt",
            json!({"location": "US-CENTRAL1", "labels": {"team": "ml"},
                   "lifecycle": {"rule": [{"action": {"type": "Delete"}, "condition": {"age": 7}}]}})),
        step("storage", "storage.projects.hmacKeys.create", Method::POST,
            &format!("/storage/v1/projects/{P}/hmacKeys?serviceAccountEmail={sa}"), Json::Null),
    ]);
    steps
}

#[test]
fn every_field_google_documents_is_accepted() {
    let mut w = World::default();
    let mut refused = Vec::new();
    let steps = steps();
    // Each of ClusterUpdate's fields is a request of its own.
    assert!(steps.len() > 60, "{} requests", steps.len());
    for s in steps {
        let (code, answer) = replay(&mut w, &s);
        let failed = !(200..300).contains(&code) || !answer["error"].is_null();
        if failed {
            refused.push(format!("{} ({code}): {answer}", s.id));
        }
    }
    assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));
}
