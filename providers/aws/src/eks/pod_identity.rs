//! `aws_eks_pod_identity_association`: an IAM role for the pods of one
//! Kubernetes service account (EKS Pod Identity). The pod identity agent
//! on each node hands those pods the role's credentials, so they need no
//! keys. EKS names an association itself (`a-…`); Terraform's id is that
//! name and an import takes `CLUSTER,ASSOCIATION_ID`.

use super::{has_ownership, in_every_cluster, owned, retag, tag_pair};
use crate::error::{api, deleted, found};
use crate::tags::{self, with_ownership};
use crate::values::{get, object, required, str_value, string, string_map};
use crate::{Clients, Kind};
use async_trait::async_trait;
use aws_sdk_eks::types::PodIdentityAssociation as Association;
use strata_provider::{
    AttributeSchema as A, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

pub struct PodIdentity;

const TYPE: &str = "aws_eks_pod_identity_association";

fn value(a: &Association) -> Value {
    let (tags, tags_all) = tag_pair(a.tags());
    object(vec![
        ("id", str_value(a.association_id())),
        ("association_id", str_value(a.association_id())),
        ("association_arn", str_value(a.association_arn())),
        ("cluster_name", str_value(a.cluster_name())),
        ("namespace", str_value(a.namespace())),
        ("service_account", str_value(a.service_account())),
        ("role_arn", str_value(a.role_arn())),
        ("tags", tags),
        ("tags_all", tags_all),
    ])
}

impl PodIdentity {
    async fn describe(
        &self,
        c: &Clients,
        cluster: &str,
        id: &str,
    ) -> Result<Option<Association>, DriverError> {
        let asked = c
            .eks
            .describe_pod_identity_association()
            .cluster_name(cluster)
            .association_id(id)
            .send()
            .await;
        let out = found("DescribePodIdentityAssociation", asked)?;
        Ok(out.and_then(|o| o.association().cloned()))
    }

    async fn get(
        &self,
        c: &Clients,
        cluster: &str,
        id: &str,
    ) -> Result<Option<Value>, DriverError> {
        Ok(self.describe(c, cluster, id).await?.as_ref().map(value))
    }

    /// The associations in `cluster` that carry `t`'s ownership tags.
    async fn owned_in(
        &self,
        c: &Clients,
        cluster: String,
        t: &Tags,
    ) -> Result<Vec<Value>, DriverError> {
        let ids: Vec<String> = c
            .eks
            .list_pod_identity_associations()
            .cluster_name(&cluster)
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(|e| api("ListPodIdentityAssociations", e))?
            .iter()
            .filter_map(|s| s.association_id().map(str::to_string))
            .collect();
        owned(ids, |id| {
            let cluster = cluster.clone();
            async move {
                let a = self.describe(c, &cluster, &id).await?;
                Ok(a.filter(|a| has_ownership(a.tags(), t)).as_ref().map(value))
            }
        })
        .await
    }
}

#[async_trait]
impl Kind<Clients> for PodIdentity {
    fn schema(&self) -> ResourceSchema {
        let fixed = |d| A::required(Type::String, d).force_new();
        ResourceSchema::of_attributes(vec![
            ("id", A::computed(Type::String, "The association's id.")),
            (
                "association_id",
                A::computed(Type::String, "EKS's name for it: a-…."),
            ),
            ("association_arn", A::computed(Type::String, "Its ARN.")),
            ("cluster_name", fixed("The cluster.")),
            ("namespace", fixed("The service account's namespace.")),
            ("service_account", fixed("The service account.")),
            (
                "role_arn",
                A::required(Type::String, "The role its pods act as."),
            ),
            ("tags", A::optional(Type::map(Type::String), "Tags to set.")),
            (
                "tags_all",
                A::computed(Type::map(Type::String), "All tags, as AWS holds them."),
            ),
        ])
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        tags::plan_taggable(schema, req, &[])
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            out.push(
                match (string(o, "cluster_name"), string(o, "association_id")) {
                    (Some(cl), Some(id)) => self.get(c, &cl, &id).await?,
                    _ => None,
                },
            );
        }
        Ok(out)
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<Value, DriverError> {
        let out = c
            .eks
            .create_pod_identity_association()
            .cluster_name(required(planned, TYPE, "cluster_name")?)
            .namespace(required(planned, TYPE, "namespace")?)
            .service_account(required(planned, TYPE, "service_account")?)
            .role_arn(required(planned, TYPE, "role_arn")?)
            .set_tags(Some(
                with_ownership(&string_map(planned, "tags"), t)
                    .into_iter()
                    .collect(),
            ))
            .send()
            .await
            .map_err(|e| api("CreatePodIdentityAssociation", e))?;
        out.association()
            .map(value)
            .ok_or_else(|| DriverError::Api {
                operation: "CreatePodIdentityAssociation".into(),
                detail: "EKS answered without the association".into(),
                retryable: false,
            })
    }

    async fn update(
        &self,
        c: &Clients,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let cluster = required(prior, TYPE, "cluster_name")?;
        let id = required(prior, TYPE, "association_id")?;
        if !crate::values::same(get(prior, "role_arn"), get(planned, "role_arn")) {
            c.eks
                .update_pod_identity_association()
                .cluster_name(&cluster)
                .association_id(&id)
                .role_arn(required(planned, TYPE, "role_arn")?)
                .send()
                .await
                .map_err(|e| api("UpdatePodIdentityAssociation", e))?;
        }
        if let Some(arn) = string(prior, "association_arn") {
            retag(c, &arn, prior, planned).await?;
        }
        self.get(c, &cluster, &id)
            .await?
            .ok_or_else(|| DriverError::Api {
                operation: format!("DescribePodIdentityAssociation {cluster},{id}"),
                detail: "the association is gone right after being updated".into(),
                retryable: false,
            })
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let asked = c
            .eks
            .delete_pod_identity_association()
            .cluster_name(required(prior, TYPE, "cluster_name")?)
            .association_id(required(prior, TYPE, "association_id")?)
            .send()
            .await;
        deleted("DeletePodIdentityAssociation", asked).map(|_| ())
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        in_every_cluster(c, |cluster| self.owned_in(c, cluster, t)).await
    }

    /// Imported as `CLUSTER,ASSOCIATION_ID`, Terraform's form.
    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        let Some((cluster, assoc)) = id.split_once(',') else {
            return Err(DriverError::InvalidConfig {
                type_name: TYPE.into(),
                detail: format!("import id {id:?} is not CLUSTER,ASSOCIATION_ID"),
            });
        };
        self.get(c, cluster, assoc).await
    }
}
