//! The two azurerm types that are not whole ARM resources of their own:
//! a subnet's network security group (a property of the subnet), and role
//! assignments (at any scope, named by a GUID).

use crate::api_json;
use crate::arm::{required, SUBNET};
use crate::Ctx;
use async_trait::async_trait;
use serde_json::{json, Map, Value as Json};
use std::time::Duration;
use strata_provider::values::each;
use strata_provider::{AttributeSchema as A, DriverError, Kind, ResourceSchema, Tags};
use strata_rest::Method;
use strata_value::types::Type;
use strata_value::value::Value;

/// `azurerm_subnet_network_security_group_association`: the subnet's
/// `networkSecurityGroup`, set and cleared by PUTting the subnet back.
/// Setting it again is no change, so a crashed create is simply redone.
pub struct SubnetNsgAssociation;

/// The subnet properties a PUT may carry back.
const SUBNET_WRITABLE: &[&str] = &[
    "addressPrefix",
    "addressPrefixes",
    "defaultOutboundAccess",
    "serviceEndpoints",
    "privateEndpointNetworkPolicies",
];

impl SubnetNsgAssociation {
    const TYPE: &'static str = "azurerm_subnet_network_security_group_association";

    async fn subnet(c: &Ctx, id: &str) -> Result<Option<Json>, DriverError> {
        c.rest
            .get("GET subnet", &c.url(id, SUBNET.api_version))
            .await
    }

    /// Sets (`Some`) or clears the subnet's security group.
    async fn set(c: &Ctx, subnet_id: &str, nsg: Option<&str>) -> Result<(), DriverError> {
        let Some(current) = Self::subnet(c, subnet_id).await? else {
            return Err(DriverError::Api {
                operation: format!("associate {}", Self::TYPE),
                detail: format!("subnet {subnet_id} does not exist"),
                retryable: false,
            });
        };
        let mut props: Map<String, Json> = SUBNET_WRITABLE
            .iter()
            .filter_map(|k| Some((k.to_string(), current["properties"].get(*k)?.clone())))
            .collect();
        if let Some(n) = nsg {
            props.insert("networkSecurityGroup".into(), json!({ "id": n }));
        }
        let what = format!("update subnet for {}", Self::TYPE);
        let url = c.url(subnet_id, SUBNET.api_version);
        let r = c
            .rest
            .call(
                &what,
                Method::PUT,
                &url,
                Some(&json!({ "properties": props })),
            )
            .await?;
        crate::api::finish(c, &what, &r, Duration::from_secs(30 * 60))
            .await
            .map(|_| ())
    }

    fn value(subnet_id: &str, nsg: &str) -> Result<Value, DriverError> {
        let j = json!({"subnet_id": subnet_id, "network_security_group_id": nsg, "id": subnet_id});
        strata_value::json::value_from_json(&j, &SubnetNsgAssociation.schema().object_type())
            .map_err(|e| DriverError::Api {
                operation: format!("reading {}", Self::TYPE),
                detail: e,
                retryable: false,
            })
    }
}

#[async_trait]
impl Kind<Ctx> for SubnetNsgAssociation {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            (
                "subnet_id",
                A::required(Type::String, "The subnet.").force_new(),
            ),
            (
                "network_security_group_id",
                A::required(Type::String, "The security group.").force_new(),
            ),
            ("id", A::computed(Type::String, "The subnet's id.")),
        ])
    }

    async fn read(&self, c: &Ctx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        each(
            objs,
            |o| {
                let j = api_json(o);
                Some((
                    j["subnet_id"].as_str()?.to_string(),
                    j["network_security_group_id"].as_str()?.to_string(),
                ))
            },
            |(subnet, nsg)| async move {
                let attached = Self::subnet(c, &subnet).await?.and_then(|s| {
                    s["properties"]["networkSecurityGroup"]["id"]
                        .as_str()
                        .map(str::to_string)
                });
                match attached {
                    Some(a) if a.eq_ignore_ascii_case(&nsg) => {
                        Ok(Some(Self::value(&subnet, &nsg)?))
                    }
                    _ => Ok(None),
                }
            },
        )
        .await
    }

    async fn create(&self, c: &Ctx, planned: &Value, _tags: &Tags) -> Result<Value, DriverError> {
        let j = api_json(planned);
        let subnet = required(&j, Self::TYPE, "subnet_id")?;
        let nsg = required(&j, Self::TYPE, "network_security_group_id")?;
        Self::set(c, &subnet, Some(&nsg)).await?;
        Self::value(&subnet, &nsg)
    }

    async fn update(&self, c: &Ctx, _prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        self.create(
            c,
            planned,
            &Tags {
                address: String::new(),
                lineage: String::new(),
            },
        )
        .await
    }

    async fn delete(&self, c: &Ctx, prior: &Value) -> Result<(), DriverError> {
        let j = api_json(prior);
        let subnet = required(&j, Self::TYPE, "subnet_id")?;
        if Self::subnet(c, &subnet).await?.is_none() {
            return Ok(());
        }
        Self::set(c, &subnet, None).await
    }

    async fn find_tagged(&self, _c: &Ctx, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }

    /// Imported by the subnet's id.
    async fn import(&self, c: &Ctx, id: &str) -> Result<Option<Value>, DriverError> {
        let nsg = Self::subnet(c, id).await?.and_then(|s| {
            s["properties"]["networkSecurityGroup"]["id"]
                .as_str()
                .map(str::to_string)
        });
        nsg.map(|n| Self::value(id, &n)).transpose()
    }
}

/// `azurerm_role_assignment`. Unnamed assignments get a GUID made from
/// the state lineage and the address, so a create repeated after a crash
/// PUTs the same assignment again instead of a second one.
pub struct RoleAssignment;

const ROLES_API: &str = "2022-04-01";

/// Whether two role definition ids name one role: the same definition
/// GUID, whatever scope the id was written at.
fn same_role(a: &str, b: &str) -> bool {
    let guid = |id: &str| {
        let lower = id.to_ascii_lowercase();
        lower
            .rsplit_once("/roledefinitions/")
            .map(|(_, g)| g.to_string())
    };
    guid(a).is_some() && guid(a) == guid(b)
}

impl RoleAssignment {
    const TYPE: &'static str = "azurerm_role_assignment";

    fn id(scope: &str, name: &str) -> String {
        format!("{scope}/providers/Microsoft.Authorization/roleAssignments/{name}")
    }

    fn value(o: &Json, like: &Json) -> Result<Value, DriverError> {
        let p = &o["properties"];
        let mut j = json!({
            "name": o["name"],
            "id": o["id"],
            "scope": p["scope"],
            "role_definition_id": p["roleDefinitionId"],
            "principal_id": p["principalId"],
            "principal_type": p["principalType"],
            "description": p["description"],
            "role_definition_name": like["role_definition_name"],
        });
        if let (Some(had), Some(now)) = (like["scope"].as_str(), j["scope"].as_str()) {
            if had.eq_ignore_ascii_case(now) {
                j["scope"] = json!(had);
            }
        }
        // A role's id comes back at the subscription or, as Microsoft's
        // RoleAssignments_CreateForResourceGroup example answers, at the
        // tenant (`/providers/…/roleDefinitions/G`): the same role.
        if let (Some(had), Some(now)) = (
            like["role_definition_id"].as_str(),
            j["role_definition_id"].as_str(),
        ) {
            if same_role(had, now) {
                j["role_definition_id"] = json!(had);
            }
        }
        strata_value::json::value_from_json(&j, &RoleAssignment.schema().object_type()).map_err(
            |e| DriverError::Api {
                operation: format!("reading {}", Self::TYPE),
                detail: e,
                retryable: false,
            },
        )
    }

    async fn get(c: &Ctx, id: &str) -> Result<Option<Json>, DriverError> {
        c.rest
            .get("GET role assignment", &c.url(id, ROLES_API))
            .await
    }

    /// A role's id from its name, as the scope sees it.
    async fn role_id(c: &Ctx, scope: &str, name: &str) -> Result<String, DriverError> {
        let filter = strata_rest::encode(&format!("roleName eq '{name}'"));
        let url = format!(
            "{}{scope}/providers/Microsoft.Authorization/roleDefinitions?api-version={ROLES_API}&$filter={filter}",
            c.base
        );
        let found = c.rest.list("find role definition", &url, "value").await?;
        found
            .first()
            .and_then(|r| r["id"].as_str())
            .map(str::to_string)
            .ok_or_else(|| DriverError::InvalidConfig {
                type_name: Self::TYPE.into(),
                detail: format!("no role named {name:?} at {scope}"),
            })
    }
}

#[async_trait]
impl Kind<Ctx> for RoleAssignment {
    fn schema(&self) -> ResourceSchema {
        let s = || Type::String;
        ResourceSchema::of_attributes(vec![
            (
                "name",
                A::optional(s(), "A GUID (else one is made).")
                    .and_computed()
                    .force_new(),
            ),
            (
                "scope",
                A::required(s(), "What the role is granted on (an id).").force_new(),
            ),
            (
                "role_definition_id",
                A::optional(s(), "The role's id.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "role_definition_name",
                A::optional(s(), "The role's name (Network Contributor).")
                    .and_computed()
                    .force_new(),
            ),
            (
                "principal_id",
                A::required(s(), "Who gets the role (an object id).").force_new(),
            ),
            (
                "principal_type",
                A::optional(s(), "ServicePrincipal, User or Group.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "description",
                A::optional(s(), "A description.").force_new(),
            ),
            ("id", A::computed(s(), "The assignment's id.")),
        ])
    }

    /// One list of the subscription's assignments, however many.
    async fn read(&self, c: &Ctx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        if objs.is_empty() {
            return Ok(Vec::new());
        }
        let sub = c.subscription(Self::TYPE)?;
        let url = format!(
            "{}/subscriptions/{sub}/providers/Microsoft.Authorization/roleAssignments?api-version={ROLES_API}",
            c.base
        );
        let all: std::collections::BTreeMap<String, Json> = c
            .rest
            .list("list role assignments", &url, "value")
            .await?
            .into_iter()
            .filter_map(|a| Some((a["id"].as_str()?.to_ascii_lowercase(), a)))
            .collect();
        objs.iter()
            .map(|o| {
                let j = api_json(o);
                let id = j["id"].as_str().unwrap_or_default().to_ascii_lowercase();
                all.get(&id).map(|a| Self::value(a, &j)).transpose()
            })
            .collect()
    }

    async fn create(&self, c: &Ctx, planned: &Value, tags: &Tags) -> Result<Value, DriverError> {
        let j = api_json(planned);
        let scope = required(&j, Self::TYPE, "scope")?;
        let name = j["name"].as_str().map(str::to_string).unwrap_or_else(|| {
            let seed = format!("{}/{}", tags.lineage, tags.address);
            uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, seed.as_bytes()).to_string()
        });
        let role = match (
            j["role_definition_id"].as_str(),
            j["role_definition_name"].as_str(),
        ) {
            (Some(id), _) => id.to_string(),
            (None, Some(n)) => Self::role_id(c, &scope, n).await?,
            (None, None) => {
                return Err(DriverError::InvalidConfig {
                    type_name: Self::TYPE.into(),
                    detail: "set role_definition_id or role_definition_name".into(),
                })
            }
        };
        let mut props = json!({"roleDefinitionId": role, "principalId": j["principal_id"]});
        for (tf, api) in [
            ("principal_type", "principalType"),
            ("description", "description"),
        ] {
            if let Some(v) = j[tf].as_str() {
                props[api] = json!(v);
            }
        }
        let id = Self::id(&scope, &name);
        let o = c
            .rest
            .call(
                &format!("create {}", Self::TYPE),
                Method::PUT,
                &c.url(&id, ROLES_API),
                Some(&json!({ "properties": props })),
            )
            .await?
            .body;
        Self::value(&o, &j)
    }

    async fn update(&self, c: &Ctx, _prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        let j = api_json(planned);
        let id = required(&j, Self::TYPE, "id")?;
        let o = Self::get(c, &id).await?.unwrap_or_default();
        Self::value(&o, &j)
    }

    async fn delete(&self, c: &Ctx, prior: &Value) -> Result<(), DriverError> {
        let id = required(&api_json(prior), Self::TYPE, "id")?;
        match c
            .rest
            .send(Method::DELETE, &c.url(&id, ROLES_API), None)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.status == 404 => Ok(()),
            Err(e) if e.code == "ScopeLocked" => {
                Err(crate::arm::locked(c, &format!("delete {}", Self::TYPE), &e).await)
            }
            Err(e) => Err(c.rest.driver_error(&format!("delete {}", Self::TYPE), &e)),
        }
    }

    async fn find_tagged(&self, _c: &Ctx, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }

    async fn import(&self, c: &Ctx, id: &str) -> Result<Option<Value>, DriverError> {
        match Self::get(c, id).await? {
            Some(o) => Ok(Some(Self::value(&o, &json!({}))?)),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESPONSES: &str = include_str!("../../../testing/definitions/azure/responses.json");

    /// Microsoft's example answers a role assignment with the role's id at
    /// the tenant; the configuration wrote it at the subscription. Read
    /// back, it is the configuration's, or every plan would replace it.
    #[test]
    fn a_role_id_answered_at_another_scope_is_the_same_role() {
        let doc: Json = serde_json::from_str(RESPONSES).expect("responses.json");
        let ex = doc["examples"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["resource"] == "Microsoft.Authorization/roleAssignments@2022-04-01")
            .expect("a role assignment example");
        let asked = ex["request"]["properties"]["roleDefinitionId"].clone();
        let answered = &ex["answer"]["properties"]["roleDefinitionId"];
        assert_ne!(&asked, answered, "the example answers another form");
        let like =
            json!({"role_definition_id": asked, "scope": ex["answer"]["properties"]["scope"]});
        let v = RoleAssignment::value(&ex["answer"], &like).expect("reads");
        let read = strata_value::json::plain_json(&v);
        assert_eq!(read["role_definition_id"], like["role_definition_id"]);
        assert_eq!(read["principal_type"], "User");
        assert!(!same_role(
            "/providers/Microsoft.Authorization/roleDefinitions/a",
            "/providers/Microsoft.Authorization/roleDefinitions/b"
        ));
    }
}
