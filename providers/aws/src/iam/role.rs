//! `aws_iam_role` and `aws_iam_role_policy_attachment`.

use super::{decode_policy, iam_tags, keep_equal_json, owned, retag, same_json, tag_values};
use crate::error::{api, deleted, is_not_found};
use crate::tags::{self, with_ownership};
use crate::values::{each, id_pair, number, object, required, str_value, string, string_map};
use crate::{Clients, Kind, RoleDetails};
use async_trait::async_trait;
use aws_sdk_iam::types::Tag;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use strata_provider::{
    AttributeSchema as A, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

pub struct Role;

impl Role {
    fn value(r: &aws_sdk_iam::types::Role, tag_list: &[Tag]) -> Value {
        let (tags, all) = tag_values(tag_list);
        object(vec![
            ("id", Value::string(r.role_name())),
            ("name", Value::string(r.role_name())),
            ("arn", Value::string(r.arn())),
            ("unique_id", Value::string(r.role_id())),
            ("path", Value::string(r.path())),
            // ListRoles gives "" where GetRole gives none; IAM keeps no
            // empty description, so both are "not set".
            (
                "description",
                str_value(r.description().filter(|d| !d.is_empty())),
            ),
            (
                "max_session_duration",
                Value::int(r.max_session_duration().unwrap_or(3600) as i64),
            ),
            (
                "assume_role_policy",
                str_value(
                    r.assume_role_policy_document()
                        .map(decode_policy)
                        .as_deref(),
                ),
            ),
            ("create_date", Value::string(r.create_date().to_string())),
            ("tags", tags),
            ("tags_all", all),
        ])
    }

    async fn get(&self, c: &Clients, name: &str) -> Result<Option<Value>, DriverError> {
        match c.iam.get_role().role_name(name).send().await {
            Ok(out) => Ok(out.role().map(|r| Role::value(r, r.tags()))),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(api("GetRole", e)),
        }
    }
}

#[async_trait]
impl Kind<Clients> for Role {
    fn schema(&self) -> ResourceSchema {
        tags::taggable_schema(vec![
            (
                "name",
                A::required(Type::String, "The role's name.").force_new(),
            ),
            (
                "assume_role_policy",
                A::required(Type::String, "Who may assume the role (a JSON policy)."),
            ),
            ("description", A::optional(Type::String, "A description.")),
            (
                "path",
                A::optional(Type::String, "The role's path.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "max_session_duration",
                A::optional(Type::Number, "Maximum session length in seconds."),
            ),
            (
                "unique_id",
                A::computed(Type::String, "AWS's stable id of the role."),
            ),
            (
                "create_date",
                A::computed(Type::String, "When the role was made."),
            ),
        ])
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = tags::plan_taggable(
            schema,
            req,
            &[
                ("path", Value::string("/")),
                ("max_session_duration", Value::int(3600)),
            ],
        );
        keep_equal_json(&mut p.planned, req.prior, "assume_role_policy");
        p
    }

    /// A few roles are read one GetRole each; more, from the account's
    /// listings (see [`listed_roles`]): two paged requests where one each
    /// would add up. A deployer refused either is read one role at a time,
    /// as a few roles are (GetRole is all the AWS provider needs).
    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let Some(all) = when_many(objs, listed_roles(c)).await else {
            let name = |o: &Value| string(o, "name");
            return each(objs, name, |n| async move { self.get(c, &n).await }).await;
        };
        Ok(objs
            .iter()
            .map(|o| all.get(&string(o, "name")?).cloned())
            .collect())
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<Value, DriverError> {
        let name = required(planned, "aws_iam_role", "name")?;
        c.iam
            .create_role()
            .role_name(&name)
            .assume_role_policy_document(required(planned, "aws_iam_role", "assume_role_policy")?)
            .set_description(string(planned, "description"))
            .set_path(string(planned, "path"))
            .set_max_session_duration(number(planned, "max_session_duration").map(|n| n as i32))
            .set_tags(Some(iam_tags(&with_ownership(
                &string_map(planned, "tags"),
                t,
            ))))
            .send()
            .await
            .map_err(|e| api("CreateRole", e))?;
        self.get(c, &name).await?.ok_or_else(|| DriverError::Api {
            operation: format!("GetRole {name}"),
            detail: "the role is not there right after being made".into(),
            retryable: true,
        })
    }

    async fn update(
        &self,
        c: &Clients,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let name = required(prior, "aws_iam_role", "name")?;
        let policy = required(planned, "aws_iam_role", "assume_role_policy")?;
        if string(prior, "assume_role_policy").is_none_or(|p| !same_json(&p, &policy)) {
            c.iam
                .update_assume_role_policy()
                .role_name(&name)
                .policy_document(policy)
                .send()
                .await
                .map_err(|e| api("UpdateAssumeRolePolicy", e))?;
        }
        c.iam
            .update_role()
            .role_name(&name)
            .description(string(planned, "description").unwrap_or_default())
            .set_max_session_duration(number(planned, "max_session_duration").map(|n| n as i32))
            .send()
            .await
            .map_err(|e| api("UpdateRole", e))?;
        retag(
            prior,
            planned,
            |keys| {
                c.iam
                    .untag_role()
                    .role_name(&name)
                    .set_tag_keys(Some(keys))
                    .send()
            },
            |set| c.iam.tag_role().role_name(&name).set_tags(Some(set)).send(),
        )
        .await?;
        self.get(c, &name).await?.ok_or_else(|| DriverError::Api {
            operation: format!("GetRole {name}"),
            detail: "the role is gone right after being updated".into(),
            retryable: true,
        })
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let name = required(prior, "aws_iam_role", "name")?;
        deleted(
            "DeleteRole",
            c.iam.delete_role().role_name(&name).send().await,
        )
        .map(|_| ())
    }

    /// IAM cannot filter roles by tag: every role's tags are read, which is
    /// slow but only happens when recovering from a crash.
    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        let roles = all_roles(c).await?;
        let mut found = Vec::new();
        for r in &roles {
            let listed = c
                .iam
                .list_role_tags()
                .role_name(r.role_name())
                .send()
                .await
                .map_err(|e| api("ListRoleTags", e))?;
            if owned(listed.tags(), t) {
                found.push(Role::value(r, listed.tags()));
            }
        }
        Ok(found)
    }

    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        self.get(c, id).await
    }
}

pub struct RolePolicyAttachment;

impl RolePolicyAttachment {
    fn value(role: &str, policy: &str) -> Value {
        object(vec![
            ("id", Value::string(format!("{role}/{policy}"))),
            ("role", Value::string(role)),
            ("policy_arn", Value::string(policy)),
        ])
    }

    async fn attached(&self, c: &Clients, role: &str) -> Result<Option<Vec<String>>, DriverError> {
        let listed = c
            .iam
            .list_attached_role_policies()
            .role_name(role)
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await;
        match listed {
            Ok(policies) => Ok(Some(
                policies
                    .iter()
                    .filter_map(|p| p.policy_arn().map(str::to_string))
                    .collect(),
            )),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(api("ListAttachedRolePolicies", e)),
        }
    }
}

#[async_trait]
impl Kind<Clients> for RolePolicyAttachment {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema {
            version: 0,
            attributes: BTreeMap::from([
                (
                    "id".to_string(),
                    A::computed(Type::String, "role/policy_arn."),
                ),
                (
                    "role".to_string(),
                    A::required(Type::String, "The role's name.").force_new(),
                ),
                (
                    "policy_arn".to_string(),
                    A::required(Type::String, "The policy to attach.").force_new(),
                ),
            ]),
            blocks: BTreeMap::new(),
        }
    }

    /// One listing per role, shared by all of that role's attachments.
    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let mut by_role: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
        for o in objs {
            if let Some(r) = string(o, "role") {
                if let std::collections::btree_map::Entry::Vacant(slot) = by_role.entry(r) {
                    let arns = self.attached(c, slot.key()).await?;
                    slot.insert(arns);
                }
            }
        }
        Ok(objs
            .iter()
            .map(|o| {
                let (role, policy) = (string(o, "role")?, string(o, "policy_arn")?);
                let arns = by_role.get(&role)?.as_ref()?;
                arns.contains(&policy)
                    .then(|| RolePolicyAttachment::value(&role, &policy))
            })
            .collect())
    }

    async fn create(&self, c: &Clients, planned: &Value, _t: &Tags) -> Result<Value, DriverError> {
        let role = required(planned, "aws_iam_role_policy_attachment", "role")?;
        let policy = required(planned, "aws_iam_role_policy_attachment", "policy_arn")?;
        c.iam
            .attach_role_policy()
            .role_name(&role)
            .policy_arn(&policy)
            .send()
            .await
            .map_err(|e| api("AttachRolePolicy", e))?;
        Ok(RolePolicyAttachment::value(&role, &policy))
    }

    async fn update(
        &self,
        _c: &Clients,
        _prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        // Both arguments force replacement: nothing changes in place.
        Ok(planned.clone())
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let role = required(prior, "aws_iam_role_policy_attachment", "role")?;
        let policy = required(prior, "aws_iam_role_policy_attachment", "policy_arn")?;
        deleted(
            "DetachRolePolicy",
            c.iam
                .detach_role_policy()
                .role_name(&role)
                .policy_arn(&policy)
                .send()
                .await,
        )
        .map(|_| ())
    }

    /// Attachments carry no tags; attaching twice is harmless, so a crashed
    /// attach is simply done again.
    async fn find_tagged(&self, _c: &Clients, _t: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }

    /// Imported as `role/policy_arn`.
    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        let (role, policy) = id_pair(id, '/', "aws_iam_role_policy_attachment", "ROLE/POLICY_ARN")?;
        let arns = self.attached(c, role).await?;
        Ok(arns
            .filter(|a| a.iter().any(|x| x == policy))
            .map(|_| RolePolicyAttachment::value(role, policy)))
    }
}

/// How many roles or inline policies a refresh reads from the account's
/// listings rather than one by one.
const READ_ALL_AT: usize = 3;

/// The account's `listing` when there are enough `objs` to be worth it
/// and the deployer may make it; `None`: read them one at a time.
async fn when_many<T>(
    objs: &[Value],
    listing: impl std::future::Future<Output = Result<T, DriverError>>,
) -> Option<T> {
    match objs.len() >= READ_ALL_AT {
        true => listing.await.ok(),
        false => None,
    }
}

/// Every role of the account by name, as GetRole would give it: ListRoles
/// has all but the tags (AWS leaves them out of it), which
/// GetAccountAuthorizationDetails has.
async fn listed_roles(c: &Clients) -> Result<HashMap<String, Value>, DriverError> {
    let (roles, details) = futures::future::try_join(all_roles(c), account_roles(c)).await?;
    let tags: HashMap<&str, &[aws_sdk_iam::types::Tag]> = details
        .iter()
        .flat_map(|p| p.role_detail_list())
        .filter_map(|r| Some((r.role_name()?, r.tags())))
        .collect();
    Ok(roles
        .iter()
        .map(|r| {
            let tagged = tags.get(r.role_name()).copied().unwrap_or_default();
            (r.role_name().to_string(), Role::value(r, tagged))
        })
        .collect())
}

/// ListRoles, every page: each role but its tags and permissions boundary.
async fn all_roles(c: &Clients) -> Result<Vec<aws_sdk_iam::types::Role>, DriverError> {
    c.iam
        .list_roles()
        .max_items(1000)
        .into_paginator()
        .items()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .map_err(|e| api("ListRoles", e))
}

/// The pages of GetAccountAuthorizationDetails for roles: each role with
/// its tags, inline policies and attachments. Shared by the role and
/// role-policy reads of one refresh ([`crate::Clients::role_details`]).
async fn account_roles(c: &Clients) -> Result<Arc<Vec<RoleDetails>>, DriverError> {
    c.role_details
        .get(&c.writes, || {
            c.iam
                .get_account_authorization_details()
                .filter(aws_sdk_iam::types::EntityType::Role)
                .max_items(1000)
                .into_paginator()
                .send()
                .collect::<Result<Vec<_>, _>>()
        })
        .await
        .map_err(|e| api("GetAccountAuthorizationDetails", e))
}

/// Every role's inline policies, by role and policy name: their documents
/// as IAM gives them (URL-encoded).
async fn inline_policies(c: &Clients) -> Result<HashMap<(String, String), String>, DriverError> {
    let pages = account_roles(c).await?;
    let mut all = HashMap::new();
    for role in pages.iter().flat_map(|p| p.role_detail_list()) {
        let Some(role_name) = role.role_name() else {
            continue;
        };
        for p in role.role_policy_list() {
            if let (Some(name), Some(document)) = (p.policy_name(), p.policy_document()) {
                all.insert(
                    (role_name.to_string(), name.to_string()),
                    document.to_string(),
                );
            }
        }
    }
    Ok(all)
}

/// `aws_iam_role_policy`: an inline policy, id `ROLE:NAME`. PutRolePolicy
/// both creates and replaces, so a crashed create is simply done again.
pub struct RolePolicy;

impl RolePolicy {
    const TYPE: &'static str = "aws_iam_role_policy";

    fn value(role: &str, name: &str, policy: &str) -> Value {
        object(vec![
            ("id", Value::string(format!("{role}:{name}"))),
            ("role", Value::string(role)),
            ("name", Value::string(name)),
            ("policy", Value::string(policy)),
        ])
    }

    async fn get(&self, c: &Clients, role: &str, name: &str) -> Result<Option<Value>, DriverError> {
        match c
            .iam
            .get_role_policy()
            .role_name(role)
            .policy_name(name)
            .send()
            .await
        {
            Ok(out) => Ok(Some(RolePolicy::value(
                role,
                name,
                &decode_policy(out.policy_document()),
            ))),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(api("GetRolePolicy", e)),
        }
    }

    async fn put(&self, c: &Clients, planned: &Value) -> Result<Value, DriverError> {
        let role = required(planned, Self::TYPE, "role")?;
        let name = required(planned, Self::TYPE, "name")?;
        let policy = required(planned, Self::TYPE, "policy")?;
        c.iam
            .put_role_policy()
            .role_name(&role)
            .policy_name(&name)
            .policy_document(&policy)
            .send()
            .await
            .map_err(|e| api("PutRolePolicy", e))?;
        Ok(RolePolicy::value(&role, &name, &policy))
    }
}

#[async_trait]
impl Kind<Clients> for RolePolicy {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            ("id", A::computed(Type::String, "ROLE:NAME.")),
            (
                "role",
                A::required(Type::String, "The role's name.").force_new(),
            ),
            (
                "name",
                A::required(Type::String, "The policy's name.").force_new(),
            ),
            (
                "policy",
                A::required(Type::String, "The policy document (JSON)."),
            ),
        ])
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = strata_provider::plan_by_schema(schema, req.prior, req.config);
        keep_equal_json(&mut p.planned, req.prior, "policy");
        p
    }

    /// A few policies are read one GetRolePolicy each; more, all at once
    /// from GetAccountAuthorizationDetails, which lists every role's inline
    /// policies (paged): one request, where one each would add up.
    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let key = |o: &Value| Some((string(o, "role")?, string(o, "name")?));
        // A deployer allowed GetRolePolicy but not the account's listing
        // (least privilege: the AWS provider needs only the former) is
        // read one policy at a time, as a few policies are.
        let Some(all) = when_many(objs, inline_policies(c)).await else {
            return each(objs, key, |(r, n)| async move { self.get(c, &r, &n).await }).await;
        };
        Ok(objs
            .iter()
            .map(|o| {
                let (role, name) = key(o)?;
                let document = all.get(&(role.clone(), name.clone()))?;
                Some(RolePolicy::value(&role, &name, &decode_policy(document)))
            })
            .collect())
    }

    async fn create(&self, c: &Clients, planned: &Value, _t: &Tags) -> Result<Value, DriverError> {
        self.put(c, planned).await
    }

    async fn update(
        &self,
        c: &Clients,
        _prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        self.put(c, planned).await
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let role = required(prior, Self::TYPE, "role")?;
        let name = required(prior, Self::TYPE, "name")?;
        deleted(
            "DeleteRolePolicy",
            c.iam
                .delete_role_policy()
                .role_name(&role)
                .policy_name(&name)
                .send()
                .await,
        )
        .map(|_| ())
    }

    async fn find_tagged(&self, _c: &Clients, _t: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }

    /// Imported as `ROLE:NAME`.
    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        let (role, name) = id_pair(id, ':', Self::TYPE, "ROLE:NAME")?;
        self.get(c, role, name).await
    }
}
