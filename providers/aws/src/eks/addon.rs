//! `aws_eks_addon`: the add-ons AWS manages in a cluster.

use super::member::{self, Member};
use super::{issues_text, retag, tag_pair};
use crate::error::{api, deleted, found};
use crate::tags::{self, with_ownership};
use crate::values::{get, object, required, str_value, string, string_map, timeouts_block};
use crate::{Clients, Kind};
use async_trait::async_trait;
use aws_sdk_eks::types::Addon as EksAddon;
use std::collections::HashMap;
use std::time::Duration;
use strata_provider::{
    AttributeSchema as A, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

/// `aws_eks_addon`: the cluster add-ons AWS manages (vpc-cni, coredns,
/// kube-proxy, the EBS CSI driver, …), id `CLUSTER:ADDON`.
pub struct Addon;

/// Arguments that say how strata acts, not what EKS holds.
const ADDON_CONFIG_ONLY: [&str; 3] = [
    "resolve_conflicts_on_create",
    "resolve_conflicts_on_update",
    "preserve",
];

impl Addon {
    /// The object for what EKS says, with `from`'s configuration-only
    /// arguments.
    fn value(a: &EksAddon, from: Option<&Value>) -> Value {
        let (tags, tags_all) = tag_pair(a.tags());
        let cluster = a.cluster_name().unwrap_or_default();
        let name = a.addon_name().unwrap_or_default();
        let mut pairs = vec![
            ("id", Value::string(format!("{cluster}:{name}"))),
            ("cluster_name", Value::string(cluster)),
            ("addon_name", Value::string(name)),
            ("arn", str_value(a.addon_arn())),
            ("addon_version", str_value(a.addon_version())),
            ("configuration_values", str_value(a.configuration_values())),
            (
                "service_account_role_arn",
                str_value(a.service_account_role_arn()),
            ),
            (
                "created_at",
                str_value(a.created_at().map(|t| t.to_string()).as_deref()),
            ),
            (
                "modified_at",
                str_value(a.modified_at().map(|t| t.to_string()).as_deref()),
            ),
            ("tags", tags),
            ("tags_all", tags_all),
        ];
        let kept = |k: &str, ty: Type| {
            from.and_then(|f| get(f, k))
                .cloned()
                .unwrap_or(Value::Null(ty))
        };
        for k in ADDON_CONFIG_ONLY {
            let ty = if k == "preserve" {
                Type::Bool
            } else {
                Type::String
            };
            pairs.push((k, kept(k, ty)));
        }
        pairs.push((
            "timeouts",
            kept("timeouts", timeouts_block().schema.object_type()),
        ));
        object(pairs)
    }
}

#[async_trait]
impl Member for Addon {
    const TYPE: &'static str = "aws_eks_addon";
    const NAME: &'static str = "addon_name";
    const NOUN: &'static str = "add-on";
    const ID_NAME: &'static str = "ADDON";
    const WAIT: Duration = Duration::from_secs(20 * 60);
    const DELETE_WAIT: Duration = Duration::from_secs(40 * 60);

    type Object = EksAddon;

    async fn describe(
        &self,
        c: &Clients,
        cluster: &str,
        name: &str,
    ) -> Result<Option<EksAddon>, DriverError> {
        let asked = c
            .eks
            .describe_addon()
            .cluster_name(cluster)
            .addon_name(name)
            .send()
            .await;
        let out = found("DescribeAddon", asked)?;
        Ok(out.and_then(|o| o.addon().cloned()))
    }

    async fn names(&self, c: &Clients, cluster: &str) -> Result<Vec<String>, DriverError> {
        c.eks
            .list_addons()
            .cluster_name(cluster)
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(|e| api("ListAddons", e))
    }

    async fn request_delete(
        &self,
        c: &Clients,
        cluster: &str,
        name: &str,
        prior: &Value,
    ) -> Result<bool, DriverError> {
        let asked = c
            .eks
            .delete_addon()
            .cluster_name(cluster)
            .addon_name(name)
            .set_preserve(crate::values::boolean(prior, "preserve"))
            .send()
            .await;
        deleted("DeleteAddon", asked)
    }

    fn status(a: &EksAddon) -> &str {
        a.status().map_or("", |s| s.as_str())
    }

    fn tags(a: &EksAddon) -> Option<&HashMap<String, String>> {
        a.tags()
    }

    fn health(a: &EksAddon) -> String {
        let issues = a.health().map_or(&[][..], |h| h.issues());
        issues_text(
            issues
                .iter()
                .map(|i| (i.code().map(|c| c.as_str()), i.message())),
        )
    }

    fn value(a: &EksAddon, from: Option<&Value>) -> Value {
        Addon::value(a, from)
    }
}

#[async_trait]
impl Kind<Clients> for Addon {
    fn schema(&self) -> ResourceSchema {
        let mut s = tags::taggable_schema(vec![
            (
                "cluster_name",
                A::required(Type::String, "The cluster.").force_new(),
            ),
            (
                "addon_name",
                A::required(Type::String, "vpc-cni, coredns, aws-ebs-csi-driver, ...").force_new(),
            ),
            (
                "addon_version",
                A::optional(Type::String, "The version (EKS's default when left out).")
                    .and_computed(),
            ),
            (
                "configuration_values",
                A::optional(Type::String, "The add-on's settings, as JSON.").and_computed(),
            ),
            (
                "service_account_role_arn",
                A::optional(Type::String, "The IAM role for its service account (IRSA)."),
            ),
            (
                "resolve_conflicts_on_create",
                A::optional(Type::String, "NONE or OVERWRITE."),
            ),
            (
                "resolve_conflicts_on_update",
                A::optional(Type::String, "NONE, OVERWRITE or PRESERVE."),
            ),
            (
                "preserve",
                A::optional(Type::Bool, "Leave its Kubernetes objects when deleting."),
            ),
            ("created_at", A::computed(Type::String, "When it was made.")),
            (
                "modified_at",
                A::computed(Type::String, "When it last changed."),
            ),
        ]);
        s.blocks.insert("timeouts".into(), timeouts_block());
        s
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = tags::plan_taggable(schema, req, &[]);
        // A change EKS makes happen also moves modified_at.
        if let (Some(prior), Value::Object(m)) = (req.prior, &mut p.planned) {
            let changed = [
                "addon_version",
                "configuration_values",
                "service_account_role_arn",
            ]
            .iter()
            .any(|k| !crate::values::same(get(prior, k), m.get(*k).filter(|v| !v.is_null())));
            if changed {
                m.insert("modified_at".into(), Value::Unknown(Type::String));
            }
        }
        p
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        member::read(self, c, objs).await
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<Value, DriverError> {
        let cluster = required(planned, Self::TYPE, "cluster_name")?;
        let name = required(planned, Self::TYPE, "addon_name")?;
        c.eks
            .create_addon()
            .cluster_name(&cluster)
            .addon_name(&name)
            .set_addon_version(string(planned, "addon_version"))
            .set_configuration_values(string(planned, "configuration_values"))
            .set_service_account_role_arn(string(planned, "service_account_role_arn"))
            .set_resolve_conflicts(
                string(planned, "resolve_conflicts_on_create")
                    .map(|s| aws_sdk_eks::types::ResolveConflicts::from(s.as_str())),
            )
            .set_tags(Some(
                with_ownership(&string_map(planned, "tags"), t)
                    .into_iter()
                    .collect(),
            ))
            .send()
            .await
            .map_err(|e| api("CreateAddon", e))?;
        member::wait_active(self, c, planned, &name, "create").await
    }

    async fn update(
        &self,
        c: &Clients,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let cluster = required(prior, Self::TYPE, "cluster_name")?;
        let name = required(prior, Self::TYPE, "addon_name")?;
        let differs = |k: &str| !crate::values::same(get(prior, k), get(planned, k));
        if [
            "addon_version",
            "configuration_values",
            "service_account_role_arn",
        ]
        .iter()
        .any(|k| differs(k))
        {
            c.eks
                .update_addon()
                .cluster_name(&cluster)
                .addon_name(&name)
                .set_addon_version(string(planned, "addon_version"))
                .set_configuration_values(string(planned, "configuration_values"))
                .set_service_account_role_arn(string(planned, "service_account_role_arn"))
                .set_resolve_conflicts(
                    string(planned, "resolve_conflicts_on_update")
                        .map(|s| aws_sdk_eks::types::ResolveConflicts::from(s.as_str())),
                )
                .send()
                .await
                .map_err(|e| api("UpdateAddon", e))?;
        }
        if let Some(arn) = string(prior, "arn") {
            retag(c, &arn, prior, planned).await?;
        }
        let name = required(planned, Self::TYPE, "addon_name")?;
        member::wait_active(self, c, planned, &name, "update").await
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        member::delete(self, c, prior).await
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        member::find_tagged(self, c, t).await
    }

    /// Imported as `CLUSTER:ADDON`.
    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        member::import(self, c, id).await
    }
}
