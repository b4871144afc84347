//! Capacity reservation groups (`Microsoft.Compute/capacityReservationGroups`
//! and their `capacityReservations`), which the tests make as a user does,
//! and what AKS does with a pool that names one in
//! `capacityReservationGroupID` ("Assign capacity reservation groups to
//! AKS node pools"): the cluster's user-assigned identity must hold a role
//! on the group's resource group (ARM's `LinkedAuthorizationFailed`
//! otherwise), and a group with no reservation in it is *not* associated —
//! the pool is made without it, with only a warning, which is why strata
//! refuses such a group before AKS is asked.

use super::{error, type_key, Body, Json, Response, World};
use serde_json::{json, Map};

const GROUPS: &str = "microsoft.compute/capacityreservationgroups";
const RESERVATIONS: &str = "microsoft.compute/capacityreservationgroups/capacityreservations";

/// The roles that let an identity deploy into a group: Owner and
/// Contributor (the documentation asks for Contributor).
const DEPLOYING_ROLES: &[&str] = &[
    "b24988ac-6180-42a0-ab88-20f7382dd24c",
    "8e3af657-a8ff-443c-a75c-2fe8c4bcb635",
];

impl World {
    /// A group as ARM answers it: the reservations in it listed by id (a
    /// property only the service sets).
    pub(super) fn viewed(&self, key: &str, mut obj: Json) -> Json {
        if key == GROUPS {
            let group = obj["id"].as_str().unwrap_or("").to_ascii_lowercase();
            obj["properties"]["capacityReservations"] = json!(self.reservations_in(&group));
        }
        obj
    }

    /// The ids of the reservations in group `group` (lower case).
    fn reservations_in(&self, group: &str) -> Vec<Json> {
        let prefix = format!("{group}/capacityreservations/");
        self.objects
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix) && type_key(k) == RESERVATIONS)
            .map(|(_, o)| json!({ "id": o["id"] }))
            .collect()
    }

    /// What the service sets on a reservation it makes.
    pub(super) fn fill_reservation(
        &mut self,
        props: &mut Map<String, Json>,
        kept: &Map<String, Json>,
    ) {
        let id = match kept.get("reservationId") {
            Some(v) => v.clone(),
            None => json!(self.uuid()),
        };
        props.insert("reservationId".into(), id);
        let created = kept.get("timeCreated").cloned().unwrap_or_else(|| {
            let now = time::OffsetDateTime::now_utc();
            json!(now
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default())
        });
        props.insert("timeCreated".into(), created);
    }

    /// A pool PUT naming a group: refused when the cluster's identity
    /// may not deploy into it, as ARM refuses a linked resource.
    pub(super) fn group_refusal(&self, cluster: &str, props: &Json) -> Option<Response<Body>> {
        let group = props["capacityReservationGroupID"]
            .as_str()?
            .to_ascii_lowercase();
        if !self.objects.contains_key(&group) {
            return Some(error(
                400,
                "InvalidParameter",
                &format!("Capacity reservation group '{group}' was not found."),
            ));
        }
        let principals = self.cluster_principals(cluster);
        let allowed = self.objects.iter().any(|(k, o)| {
            let p = &o["properties"];
            type_key(k) == "microsoft.authorization/roleassignments"
                && p["principalId"]
                    .as_str()
                    .is_some_and(|id| principals.iter().any(|c| c == id))
                && p["roleDefinitionId"]
                    .as_str()
                    .and_then(|r| r.rsplit('/').next())
                    .is_some_and(|r| DEPLOYING_ROLES.contains(&r))
                && p["scope"]
                    .as_str()
                    .is_some_and(|s| group.starts_with(&s.to_ascii_lowercase()))
        });
        (!allowed).then(|| {
            error(
                403,
                "LinkedAuthorizationFailed",
                &format!("The client '{}' has permission to perform action 'Microsoft.ContainerService/managedClusters/agentPools/write', however, it does not have permission to perform action(s) 'Microsoft.Compute/capacityReservationGroups/deploy/action' on the linked scope(s) '{group}'.", principals.first().map_or("", String::as_str)),
            )
        })
    }

    /// The principals of the cluster's user-assigned identities (a
    /// system-assigned identity cannot use a group, the documentation
    /// says, so it counts for nothing here).
    fn cluster_principals(&self, cluster: &str) -> Vec<String> {
        let Some(c) = self.objects.get(cluster) else {
            return Vec::new();
        };
        c["identity"]["userAssignedIdentities"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(_, v)| v["principalId"].as_str().map(str::to_string))
            .collect()
    }

    /// A pool naming a group with no reservation in it is made without
    /// the group (AKS: "the node pool is added to the cluster with a
    /// warning and no capacity reservation group gets associated").
    pub(super) fn drop_empty_group(&self, props: &mut Map<String, Json>) {
        let group = props
            .get("capacityReservationGroupID")
            .and_then(Json::as_str)
            .map(str::to_ascii_lowercase);
        if group.is_some_and(|g| self.reservations_in(&g).is_empty()) {
            props.remove("capacityReservationGroupID");
        }
    }
}
