//! `aws_iam_instance_profile`: how EC2 instances (self-managed GPU nodes)
//! take a role.

use super::{iam_tags, owned, retag, tag_values};
use crate::error::{api, deleted, is_not_found};
use crate::tags::{self, with_ownership};
use crate::values::{each, generated_name, object, required, str_value, string, string_map};
use crate::{Clients, Kind};
use async_trait::async_trait;
use strata_provider::{
    AttributeSchema as A, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

pub struct InstanceProfile;

/// `name_prefix` is the configuration's, not IAM's: kept as it was.
fn with_prefix(mut v: Value, prefix: Option<String>) -> Value {
    if let Value::Object(m) = &mut v {
        let p = prefix.map_or(Value::Null(Type::String), Value::string);
        m.insert("name_prefix".into(), p);
    }
    v
}

impl InstanceProfile {
    const TYPE: &'static str = "aws_iam_instance_profile";

    fn value(p: &aws_sdk_iam::types::InstanceProfile) -> Value {
        let (tags, all) = tag_values(p.tags());
        object(vec![
            ("id", Value::string(p.instance_profile_name())),
            ("name", Value::string(p.instance_profile_name())),
            ("name_prefix", Value::Null(Type::String)),
            ("arn", Value::string(p.arn())),
            ("path", Value::string(p.path())),
            ("unique_id", Value::string(p.instance_profile_id())),
            ("create_date", Value::string(p.create_date().to_string())),
            ("role", str_value(p.roles().first().map(|r| r.role_name()))),
            ("tags", tags),
            ("tags_all", all),
        ])
    }

    async fn get(&self, c: &Clients, name: &str) -> Result<Option<Value>, DriverError> {
        match c
            .iam
            .get_instance_profile()
            .instance_profile_name(name)
            .send()
            .await
        {
            Ok(out) => Ok(out.instance_profile().map(InstanceProfile::value)),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(api("GetInstanceProfile", e)),
        }
    }

    async fn reread(&self, c: &Clients, name: &str) -> Result<Value, DriverError> {
        self.get(c, name).await?.ok_or_else(|| DriverError::Api {
            operation: format!("GetInstanceProfile {name}"),
            detail: "the profile is not there right after being written".into(),
            retryable: true,
        })
    }

    async fn set_role(
        &self,
        c: &Clients,
        name: &str,
        had: Option<String>,
        want: Option<String>,
    ) -> Result<(), DriverError> {
        if had == want {
            return Ok(());
        }
        if let Some(r) = had {
            deleted(
                "RemoveRoleFromInstanceProfile",
                c.iam
                    .remove_role_from_instance_profile()
                    .instance_profile_name(name)
                    .role_name(r)
                    .send()
                    .await,
            )?;
        }
        if let Some(r) = want {
            c.iam
                .add_role_to_instance_profile()
                .instance_profile_name(name)
                .role_name(r)
                .send()
                .await
                .map_err(|e| api("AddRoleToInstanceProfile", e))?;
        }
        Ok(())
    }
}

#[async_trait]
impl Kind<Clients> for InstanceProfile {
    fn schema(&self) -> ResourceSchema {
        tags::taggable_schema(vec![
            (
                "name",
                A::optional(
                    Type::String,
                    "The profile's name (generated when left out).",
                )
                .and_computed()
                .force_new(),
            ),
            (
                "name_prefix",
                A::optional(Type::String, "A prefix for a generated name.").force_new(),
            ),
            (
                "path",
                A::optional(Type::String, "The profile's path.")
                    .and_computed()
                    .force_new(),
            ),
            ("role", A::optional(Type::String, "The role's name.")),
            (
                "unique_id",
                A::computed(Type::String, "AWS's stable id of the profile."),
            ),
            (
                "create_date",
                A::computed(Type::String, "When the profile was made."),
            ),
        ])
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        tags::plan_taggable(schema, req, &[("path", Value::string("/"))])
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        each(
            objs,
            |o| Some((string(o, "name")?, string(o, "name_prefix"))),
            |(n, prefix)| async move { Ok(self.get(c, &n).await?.map(|v| with_prefix(v, prefix))) },
        )
        .await
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<Value, DriverError> {
        let name = match (string(planned, "name"), string(planned, "name_prefix")) {
            (Some(n), _) => n,
            (None, Some(p)) => generated_name(&p),
            (None, None) => generated_name("strata-"),
        };
        c.iam
            .create_instance_profile()
            .instance_profile_name(&name)
            .set_path(string(planned, "path"))
            .set_tags(Some(iam_tags(&with_ownership(
                &string_map(planned, "tags"),
                t,
            ))))
            .send()
            .await
            .map_err(|e| api("CreateInstanceProfile", e))?;
        self.set_role(c, &name, None, string(planned, "role"))
            .await?;
        Ok(with_prefix(
            self.reread(c, &name).await?,
            string(planned, "name_prefix"),
        ))
    }

    async fn update(
        &self,
        c: &Clients,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let name = required(prior, Self::TYPE, "name")?;
        self.set_role(c, &name, string(prior, "role"), string(planned, "role"))
            .await?;
        retag(
            prior,
            planned,
            |keys| {
                c.iam
                    .untag_instance_profile()
                    .instance_profile_name(&name)
                    .set_tag_keys(Some(keys))
                    .send()
            },
            |set| {
                c.iam
                    .tag_instance_profile()
                    .instance_profile_name(&name)
                    .set_tags(Some(set))
                    .send()
            },
        )
        .await?;
        Ok(with_prefix(
            self.reread(c, &name).await?,
            string(planned, "name_prefix"),
        ))
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let name = required(prior, Self::TYPE, "name")?;
        // A profile with a role cannot be deleted.
        self.set_role(c, &name, string(prior, "role"), None).await?;
        deleted(
            "DeleteInstanceProfile",
            c.iam
                .delete_instance_profile()
                .instance_profile_name(&name)
                .send()
                .await,
        )
        .map(|_| ())
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        let listed = c
            .iam
            .list_instance_profiles()
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(|e| api("ListInstanceProfiles", e))?;
        let mut found = Vec::new();
        for p in &listed {
            // Listings leave tags out; Get has them.
            let out = c
                .iam
                .get_instance_profile()
                .instance_profile_name(p.instance_profile_name())
                .send()
                .await
                .map_err(|e| api("GetInstanceProfile", e))?;
            if let Some(full) = out.instance_profile().filter(|f| owned(f.tags(), t)) {
                found.push(InstanceProfile::value(full));
            }
        }
        Ok(found)
    }

    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        self.get(c, id).await
    }
}
