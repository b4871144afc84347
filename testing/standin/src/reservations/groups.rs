//! Capacity Reservation groups: AWS Resource Groups configured as a pool
//! of Capacity Reservations (`AWS::EC2::CapacityReservationPool`). moto
//! makes the group (`CreateGroup`) but cannot fill it, so the proxy notes
//! the groups moto makes and answers `GroupResources`, `UngroupResources`
//! and `ListGroupResources` (Resource Groups' REST-JSON protocol), which
//! the API reference allows only on groups of such a type; and a node
//! group whose launch template targets a group launches as EC2's guide
//! says (Launch instances into Capacity Reservations in a group): into any
//! of its reservations with matching attributes and room, the rest
//! On-Demand.

use super::*;
use serde_json::{json, Value as Json};

const POOL: &str = "AWS::EC2::CapacityReservationPool";

/// What GroupResources works on (its API reference).
const FILLABLE: [&str; 3] = [
    "AWS::EC2::HostManagement",
    POOL,
    "AWS::ResourceGroups::ApplicationGroup",
];

#[derive(Default)]
struct Group {
    /// Its configuration's types.
    types: Vec<String>,
    /// The ARNs of the reservations in it.
    members: Vec<String>,
}

/// The groups moto made, by name.
#[derive(Default)]
pub(super) struct Groups(Mutex<BTreeMap<String, Group>>);

/// A group as a request names it: its name or its ARN.
fn name_of(group: &str) -> &str {
    group.rsplit_once(":group/").map_or(group, |(_, n)| n)
}

fn reservation_arn(r: &Reservation) -> String {
    format!(
        "arn:aws:ec2:{}:123456789012:capacity-reservation/{}",
        r.region, r.id
    )
}

impl Reservations {
    fn with_groups<T>(&self, f: impl FnOnce(&mut BTreeMap<String, Group>) -> T) -> T {
        let mut g = self.groups.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g)
    }

    /// Notes a group moto made (`CreateGroup`'s answer) or one a request
    /// deletes, from a request moto answered with success.
    pub fn note_group(&self, path: &str, request: &[u8], answer: &[u8]) {
        let asked: Json = serde_json::from_slice(request).unwrap_or_default();
        match path {
            "/groups" => {
                let made: Json = serde_json::from_slice(answer).unwrap_or_default();
                let Some(name) = made["Group"]["Name"].as_str() else {
                    return;
                };
                let types = made["GroupConfiguration"]["Configuration"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["Type"].as_str().map(str::to_string))
                    .collect();
                let group = Group {
                    types,
                    members: Vec::new(),
                };
                self.with_groups(|g| g.insert(name.to_string(), group));
            }
            "/delete-group" => {
                let named = asked["Group"].as_str().or(asked["GroupName"].as_str());
                if let Some(group) = named {
                    self.with_groups(|g| g.remove(name_of(group)));
                }
            }
            _ => {}
        }
    }

    /// The answer to `req` when it fills, empties or lists a group.
    pub fn answer_group(&self, req: &Req, region: &str) -> Option<Response<Body>> {
        let call = match req.path.as_str() {
            "/group-resources" => Call::Group,
            "/ungroup-resources" => Call::Ungroup,
            "/list-group-resources" => Call::List,
            _ => return None,
        };
        let asked: Json = serde_json::from_slice(&req.body).unwrap_or_default();
        let Some(group) = asked["Group"].as_str().map(name_of) else {
            return Some(crate::aws_error(
                400,
                "BadRequestException",
                "Group is required.",
            ));
        };
        let known: BTreeMap<String, String> = {
            let held = self.held.lock().ok()?;
            let mine = held.iter().filter(|r| r.region == region);
            mine.map(|r| (reservation_arn(r), r.id.clone())).collect()
        };
        Some(self.with_groups(|groups| {
            let Some(g) = groups.get_mut(group) else {
                return crate::aws_error(
                    404,
                    "NotFoundException",
                    &format!("Cannot find group {group}."),
                );
            };
            match call {
                Call::List => listed(g),
                Call::Group | Call::Ungroup => changed(g, group, &call, &asked, &known),
            }
        }))
    }

    /// Launches `launch`'s nodes into the reservations of group `arn`
    /// that match them and have room, the rest On-Demand; `Err` is the
    /// launch failure as EC2 words it.
    pub fn launch_group(&self, arn: &str, launch: &Launch<'_>) -> Result<(), String> {
        let members = self.with_groups(|g| {
            g.get(name_of(arn))
                .map(|g| (g.types.clone(), g.members.clone()))
        });
        let Some((types, members)) = members else {
            return Err(format!(
                "InvalidParameterValue - The Capacity Reservation group {arn} does not exist."
            ));
        };
        if !types.iter().any(|t| t == POOL) {
            return Err(format!("InvalidParameterValue - The resource group {arn} is not configured as {POOL}: instances cannot target it."));
        }
        let now = self.clock.now();
        let held = self.held.lock().map_err(|_| "poisoned".to_string())?;
        let mut used = self.used.lock().map_err(|_| "poisoned".to_string())?;
        let mut left = launch.nodes;
        let mut runs = Vec::new();
        let matching = held.iter().filter(|r| {
            members.contains(&reservation_arn(r))
                && r.region == launch.region
                && r.state(now) == "active"
                && !r.block
                && r.instance_type == launch.instance_type
                && launch.zones.contains(&r.zone)
        });
        for r in matching {
            let free = r
                .count
                .saturating_sub(in_use_by_others(&used, &r.id, &launch.group));
            let take = free.min(left);
            if take > 0 {
                runs.push((r.id.clone(), take));
                left -= take;
            }
        }
        // What no reservation of the group has room for runs On-Demand.
        used.insert(launch.group.clone(), runs);
        Ok(())
    }
}

enum Call {
    Group,
    Ungroup,
    List,
}

fn listed(g: &Group) -> Response<Body> {
    let ids: Vec<Json> = g
        .members
        .iter()
        .map(|arn| json!({"ResourceArn": arn, "ResourceType": "AWS::EC2::CapacityReservation"}))
        .collect();
    let items: Vec<Json> = ids.iter().map(|i| json!({"Identifier": i})).collect();
    crate::json(
        200,
        json!({"Resources": items, "ResourceIdentifiers": ids, "QueryErrors": []}),
    )
}

fn changed(
    g: &mut Group,
    group: &str,
    call: &Call,
    asked: &Json,
    known: &BTreeMap<String, String>,
) -> Response<Body> {
    if !g.types.iter().any(|t| FILLABLE.contains(&t.as_str())) {
        return crate::aws_error(400, "BadRequestException", &format!("Group {group} is not configured as one of {}: resources are added to it by its query.", FILLABLE.join(", ")));
    }
    let arns = asked["ResourceArns"].as_array().into_iter().flatten();
    let (mut succeeded, mut failed) = (Vec::new(), Vec::new());
    for arn in arns.filter_map(Json::as_str) {
        if !known.contains_key(arn) {
            failed.push(json!({"ResourceArn": arn, "ErrorCode": "NotFound", "ErrorMessage": format!("{arn} is not a Capacity Reservation in this Region.")}));
            continue;
        }
        g.members.retain(|m| m != arn);
        if matches!(call, Call::Group) {
            g.members.push(arn.to_string());
        }
        succeeded.push(json!(arn));
    }
    crate::json(
        200,
        json!({"Succeeded": succeeded, "Failed": failed, "Pending": []}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(path: &str, body: Json) -> Req {
        Req {
            method: hyper::Method::POST,
            path: path.into(),
            query: String::new(),
            headers: Default::default(),
            body: body.to_string().into(),
        }
    }

    /// Node group `c/h100` launching `nodes` H100 instances in `zones`.
    fn h100s(zones: &[String], nodes: u64) -> Launch<'_> {
        Launch {
            group: "c/h100".into(),
            region: "us-east-1",
            instance_type: "p5.48xlarge",
            zones,
            nodes,
        }
    }

    /// The JSON `r` answers a call with.
    fn answered(r: &Reservations, path: &str, body: Json) -> Json {
        let answer = r.answer_group(&req(path, body), "us-east-1");
        let bytes = crate::ready_bytes(answer.expect("answered").into_body());
        serde_json::from_slice(&bytes).expect("JSON")
    }

    fn made(r: &Reservations, types: &[&str]) {
        let config: Vec<Json> = types.iter().map(|t| json!({"Type": t})).collect();
        let answer =
            json!({"Group": {"Name": "gpus"}, "GroupConfiguration": {"Configuration": config}});
        r.note_group("/groups", b"{}", answer.to_string().as_bytes());
    }

    fn reserve(r: &Reservations, zone: &str, count: u64) -> String {
        let id = format!("cr-{zone}-{count}");
        let now = r.clock.now();
        r.held.lock().expect("held").push(Reservation {
            id: id.clone(),
            region: "us-east-1".into(),
            instance_type: "p5.48xlarge".into(),
            zone: zone.into(),
            count,
            block: false,
            start: now,
            end: None,
            created: now,
            cancelled: false,
            match_criteria: "targeted".into(),
            tags: BTreeMap::new(),
        });
        format!("arn:aws:ec2:us-east-1:123456789012:capacity-reservation/{id}")
    }

    #[test]
    fn a_pool_group_takes_reservations_and_launches_into_them_then_on_demand() {
        let r = Reservations::new(Clock::default());
        made(&r, &[POOL, "AWS::ResourceGroups::Generic"]);
        let (a, b) = (reserve(&r, "us-east-1b", 1), reserve(&r, "us-east-1b", 2));
        let arn = "arn:aws:resource-groups:us-east-1:123456789012:group/gpus";
        let none = "arn:aws:ec2:us-east-1:123456789012:capacity-reservation/cr-none";
        let added = answered(
            &r,
            "/group-resources",
            json!({"Group": arn, "ResourceArns": [a, b, none]}),
        );
        assert_eq!(
            added["Succeeded"].as_array().map(Vec::len),
            Some(2),
            "{added}"
        );
        assert_eq!(added["Failed"].as_array().map(Vec::len), Some(1), "{added}");
        let listed = answered(&r, "/list-group-resources", json!({"Group": "gpus"}));
        assert_eq!(
            listed["Resources"].as_array().map(Vec::len),
            Some(2),
            "{listed}"
        );
        let zones = ["us-east-1b".to_string()];
        assert!(
            r.launch_group(arn, &h100s(&zones, 4)).is_ok(),
            "the rest run On-Demand"
        );
        assert_eq!(r.in_use("cr-us-east-1b-1") + r.in_use("cr-us-east-1b-2"), 3);
    }

    #[test]
    fn only_a_pool_group_is_filled_and_targeted() {
        let r = Reservations::new(Clock::default());
        made(&r, &["AWS::ResourceGroups::Generic"]);
        let a = reserve(&r, "us-east-1b", 1);
        let added = r.answer_group(
            &req(
                "/group-resources",
                json!({"Group": "gpus", "ResourceArns": [a]}),
            ),
            "us-east-1",
        );
        assert_eq!(added.expect("answered").status(), 400);
        let missing = r.answer_group(
            &req("/list-group-resources", json!({"Group": "other"})),
            "us-east-1",
        );
        assert_eq!(missing.expect("answered").status(), 404);
        let zones = ["us-east-1b".to_string()];
        assert!(r.launch_group("gpus", &h100s(&zones, 1)).is_err());
    }
}
