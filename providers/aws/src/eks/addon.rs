//! `aws_eks_addon`: the add-ons AWS manages in a cluster.

use super::{has_ownership, in_every_cluster, issues_text, owned, retag, tag_pair};
use crate::error::{api, deleted, is_not_found};
use crate::tags::{self, with_ownership};
use crate::values::{
    get, id_pair, object, required, str_value, string, string_map, timeouts_block,
};
use crate::wait::{gone, ready, timeout, Poll};
use crate::{Clients, Kind};
use async_trait::async_trait;
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
    const TYPE: &'static str = "aws_eks_addon";

    /// The object for what EKS says, with `from`'s configuration-only
    /// arguments.
    fn value(a: &aws_sdk_eks::types::Addon, from: Option<&Value>) -> Value {
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

    /// The add-on as EKS holds it, `None` when there is none.
    async fn describe(
        &self,
        c: &Clients,
        cluster: &str,
        name: &str,
    ) -> Result<Option<aws_sdk_eks::types::Addon>, DriverError> {
        match c
            .eks
            .describe_addon()
            .cluster_name(cluster)
            .addon_name(name)
            .send()
            .await
        {
            Ok(out) => Ok(out.addon().cloned()),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(api("DescribeAddon", e)),
        }
    }

    async fn look(
        &self,
        c: &Clients,
        cluster: &str,
        name: &str,
        from: Option<&Value>,
    ) -> Result<Poll, DriverError> {
        let Some(a) = self.describe(c, cluster, name).await? else {
            return Ok(Poll::Gone);
        };
        let status = a.status().map(|s| s.as_str()).unwrap_or_default();
        Ok(match status {
            "ACTIVE" => Poll::Ready(Addon::value(&a, from)),
            "CREATE_FAILED" | "UPDATE_FAILED" | "DELETE_FAILED" | "DEGRADED" => {
                Poll::Failed(crate::error::classify(
                    "EKS add-on",
                    format!(
                        "add-on {name} is {status}: {}",
                        issues_text(
                            a.health()
                                .map_or(&[][..], |h| h.issues())
                                .iter()
                                .map(|i| (i.code().map(|c| c.as_str()), i.message()))
                        )
                    ),
                    false,
                ))
            }
            s => Poll::Pending(s.to_string()),
        })
    }

    async fn wait_active(&self, c: &Clients, v: &Value, op: &str) -> Result<Value, DriverError> {
        let cluster = required(v, Self::TYPE, "cluster_name")?;
        let name = required(v, Self::TYPE, "addon_name")?;
        let t = timeout(v, op, Duration::from_secs(20 * 60));
        ready(&format!("waiting for EKS add-on {name}"), t, || {
            self.look(c, &cluster, &name, Some(v))
        })
        .await
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

    /// What EKS holds, whatever the status (mid-change or unhealthy).
    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let found = match (string(o, "cluster_name"), string(o, "addon_name")) {
                (Some(cluster), Some(name)) => self.describe(c, &cluster, &name).await?,
                _ => None,
            };
            out.push(found.map(|a| Addon::value(&a, Some(o))));
        }
        Ok(out)
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
        self.wait_active(c, planned, "create").await
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
        self.wait_active(c, planned, "update").await
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let cluster = required(prior, Self::TYPE, "cluster_name")?;
        let name = required(prior, Self::TYPE, "addon_name")?;
        if !deleted(
            "DeleteAddon",
            c.eks
                .delete_addon()
                .cluster_name(&cluster)
                .addon_name(&name)
                .set_preserve(crate::values::boolean(prior, "preserve"))
                .send()
                .await,
        )? {
            return Ok(());
        }
        let t = timeout(prior, "delete", Duration::from_secs(40 * 60));
        gone(&format!("deleting EKS add-on {name}"), t, || {
            self.look(c, &cluster, &name, None)
        })
        .await
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        in_every_cluster(c, |cl| async move {
            let names = c
                .eks
                .list_addons()
                .cluster_name(&cl)
                .into_paginator()
                .items()
                .send()
                .collect::<Result<Vec<_>, _>>()
                .await
                .map_err(|e| api("ListAddons", e))?;
            let cl = &cl;
            owned(names, |n| async move {
                let out = c
                    .eks
                    .describe_addon()
                    .cluster_name(cl)
                    .addon_name(n)
                    .send()
                    .await
                    .map_err(|e| api("DescribeAddon", e))?;
                Ok(out
                    .addon()
                    .filter(|a| has_ownership(a.tags(), t))
                    .map(|a| Addon::value(a, None)))
            })
            .await
        })
        .await
    }

    /// Imported as `CLUSTER:ADDON`.
    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        let (cluster, name) = id_pair(id, ':', Self::TYPE, "CLUSTER:ADDON")?;
        let probe = object(vec![
            ("cluster_name", Value::string(cluster)),
            ("addon_name", Value::string(name)),
        ]);
        Ok(self.read(c, &[probe]).await?.pop().flatten())
    }
}
