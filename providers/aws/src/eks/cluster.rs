//! `aws_eks_cluster`: the control plane.

use super::{
    cluster_names, default_in, default_top, has_ownership, issues_text, owned, retag, tag_pair,
};
use crate::error::{api, deleted, is_not_found};
use crate::tags::{self, with_ownership};
use crate::values::{
    boolean, get, list_block_one, list_of_one, object, one_block, required, str_value, string,
    string_map, string_set, strings, timeouts_block,
};
use crate::wait::{gone, ready, timeout, Poll};
use crate::{Clients, Kind};
use async_trait::async_trait;
use aws_sdk_eks::types::{
    AuthenticationMode, CreateAccessConfigRequest, SupportType, UpgradePolicyRequest,
    VpcConfigRequest,
};
use std::collections::BTreeMap;
use std::time::Duration;
use strata_provider::{
    AttributeSchema as A, BlockSchema, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

pub struct Cluster;

impl Cluster {
    /// The cluster as state records it. `kept` is the object (prior or
    /// planned) whose configuration-only parts are carried over: its
    /// timeouts, and its access configuration when DescribeCluster leaves
    /// that out (moto does; the bootstrap flag is create-only anyway).
    fn value(cl: &aws_sdk_eks::types::Cluster, kept: Option<&Value>) -> Value {
        let timeouts = kept.and_then(|k| get(k, "timeouts"));
        // DescribeCluster does not say; what was asked is kept, as the
        // provider keeps it (true, its default, when nothing was).
        let bootstrap = kept
            .and_then(|k| get(k, "bootstrap_self_managed_addons"))
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or(Value::Bool(true));
        let vpc = cl.resources_vpc_config();
        let (tags, tags_all) = tag_pair(cl.tags());
        let name = cl.name().unwrap_or_default();
        object(vec![
            ("id", Value::string(name)),
            ("name", Value::string(name)),
            ("bootstrap_self_managed_addons", bootstrap),
            ("arn", str_value(cl.arn())),
            ("role_arn", str_value(cl.role_arn())),
            ("version", str_value(cl.version())),
            ("endpoint", str_value(cl.endpoint())),
            ("status", str_value(cl.status().map(|s| s.as_str()))),
            ("platform_version", str_value(cl.platform_version())),
            (
                "certificate_authority",
                Value::List(
                    Type::object(BTreeMap::from([("data".to_string(), Type::String)])),
                    vec![object(vec![(
                        "data",
                        str_value(cl.certificate_authority().and_then(|c| c.data())),
                    )])],
                ),
            ),
            (
                "vpc_config",
                list_of_one(
                    &vpc_block(),
                    Some(object(vec![
                        (
                            "subnet_ids",
                            string_set(vpc.map(|v| v.subnet_ids()).unwrap_or_default()),
                        ),
                        // None given reads back as none, not an empty set.
                        (
                            "security_group_ids",
                            match vpc.map(|v| v.security_group_ids()).unwrap_or_default() {
                                [] => Value::Null(Type::set(Type::String)),
                                ids => string_set(ids),
                            },
                        ),
                        (
                            "endpoint_private_access",
                            Value::Bool(vpc.is_some_and(|v| v.endpoint_private_access())),
                        ),
                        (
                            "endpoint_public_access",
                            Value::Bool(vpc.is_none_or(|v| v.endpoint_public_access())),
                        ),
                        (
                            "cluster_security_group_id",
                            str_value(vpc.and_then(|v| v.cluster_security_group_id())),
                        ),
                        ("vpc_id", str_value(vpc.and_then(|v| v.vpc_id()))),
                    ])),
                ),
            ),
            (
                "access_config",
                list_of_one(
                    &access_block(),
                    match cl.access_config() {
                        Some(a) => Some(object(vec![
                            (
                                "authentication_mode",
                                str_value(a.authentication_mode().map(|m| m.as_str())),
                            ),
                            (
                                "bootstrap_cluster_creator_admin_permissions",
                                Value::Bool(
                                    a.bootstrap_cluster_creator_admin_permissions()
                                        .unwrap_or(true),
                                ),
                            ),
                        ])),
                        None => kept.and_then(|k| one_block(k, "access_config")),
                    },
                ),
            ),
            (
                "upgrade_policy",
                list_of_one(
                    &upgrade_block(),
                    match cl.upgrade_policy() {
                        Some(u) => Some(object(vec![(
                            "support_type",
                            str_value(u.support_type().map(|t| t.as_str())),
                        )])),
                        None => kept.and_then(|k| one_block(k, "upgrade_policy")),
                    },
                ),
            ),
            // Timeouts are the configuration's, not AWS's: carried over.
            (
                "timeouts",
                timeouts
                    .cloned()
                    .unwrap_or_else(|| Value::Null(timeouts_block().schema.object_type())),
            ),
            ("tags", tags),
            ("tags_all", tags_all),
        ])
    }

    async fn look(
        &self,
        c: &Clients,
        name: &str,
        kept: Option<&Value>,
    ) -> Result<Poll, DriverError> {
        match c.eks.describe_cluster().name(name).send().await {
            Ok(out) => {
                let Some(cl) = out.cluster() else {
                    return Ok(Poll::Gone);
                };
                let status = cl
                    .status()
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_default();
                Ok(match status.as_str() {
                    "ACTIVE" => Poll::Ready(Cluster::value(cl, kept)),
                    "FAILED" => Poll::Failed(crate::error::classify(
                        "EKS cluster",
                        format!(
                            "cluster {name} is FAILED: {}",
                            issues_text(
                                cl.health()
                                    .map_or(&[][..], |h| h.issues())
                                    .iter()
                                    .map(|i| (i.code().map(|c| c.as_str()), i.message()))
                            )
                        ),
                        false,
                    )),
                    s => Poll::Pending(s.to_string()),
                })
            }
            Err(e) if is_not_found(&e) => Ok(Poll::Gone),
            Err(e) => Err(api("DescribeCluster", e)),
        }
    }

    async fn wait_active(
        &self,
        c: &Clients,
        name: &str,
        v: &Value,
        op: &str,
        default: Duration,
    ) -> Result<Value, DriverError> {
        let t = timeout(v, op, default);
        ready(&format!("waiting for EKS cluster {name}"), t, || {
            self.look(c, name, Some(v))
        })
        .await
    }
}

#[async_trait]
impl Kind<Clients> for Cluster {
    fn schema(&self) -> ResourceSchema {
        let mut s = tags::taggable_schema(vec![
            (
                "name",
                A::required(Type::String, "The cluster's name.").force_new(),
            ),
            (
                "role_arn",
                A::required(Type::String, "The cluster's IAM role.").force_new(),
            ),
            (
                "version",
                A::optional(Type::String, "The Kubernetes version.").and_computed(),
            ),
            (
                "bootstrap_self_managed_addons",
                A::optional(
                    Type::Bool,
                    "Whether EKS installs its default networking add-ons unmanaged (vpc-cni, kube-proxy, CoreDNS); true unless set false. Set at creation only.",
                )
                .force_new(),
            ),
            (
                "endpoint",
                A::computed(Type::String, "The API server's endpoint."),
            ),
            ("status", A::computed(Type::String, "The cluster's status.")),
            (
                "platform_version",
                A::computed(Type::String, "The EKS platform version."),
            ),
            (
                "certificate_authority",
                A::computed(
                    Type::list(Type::object(BTreeMap::from([(
                        "data".to_string(),
                        Type::String,
                    )]))),
                    "The cluster's CA certificate, base64.",
                ),
            ),
        ]);
        s.blocks.insert("vpc_config".into(), vpc_block());
        s.blocks.insert("access_config".into(), access_block());
        s.blocks.insert("upgrade_policy".into(), upgrade_block());
        s.blocks.insert("timeouts".into(), timeouts_block());
        // The AWS provider's version, so each reads the other's state as
        // its own (its layout is this one).
        s.version = 1;
        s
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = tags::plan_taggable(schema, req, &[]);
        default_top(
            &mut p.planned,
            "bootstrap_self_managed_addons",
            Value::Bool(true),
        );
        default_in(
            &mut p.planned,
            "vpc_config",
            "endpoint_private_access",
            Value::Bool(false),
        );
        default_in(
            &mut p.planned,
            "vpc_config",
            "endpoint_public_access",
            Value::Bool(true),
        );
        p
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let Some(name) = string(o, "name") else {
                out.push(None);
                continue;
            };
            out.push(match c.eks.describe_cluster().name(&name).send().await {
                Ok(r) => r.cluster().map(|cl| Cluster::value(cl, Some(o))),
                Err(e) if is_not_found(&e) => None,
                Err(e) => return Err(api("DescribeCluster", e)),
            });
        }
        Ok(out)
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<Value, DriverError> {
        let name = required(planned, "aws_eks_cluster", "name")?;
        let vpc = one_block(planned, "vpc_config").unwrap_or_else(Value::null);
        let vpc_req = VpcConfigRequest::builder()
            .set_subnet_ids(Some(strings(&vpc, "subnet_ids")))
            .set_security_group_ids(Some(strings(&vpc, "security_group_ids")))
            .set_endpoint_private_access(boolean(&vpc, "endpoint_private_access"))
            .set_endpoint_public_access(boolean(&vpc, "endpoint_public_access"))
            .build();
        let access = one_block(planned, "access_config").map(|a| {
            CreateAccessConfigRequest::builder()
                .set_authentication_mode(
                    string(&a, "authentication_mode").map(|m| AuthenticationMode::from(m.as_str())),
                )
                .set_bootstrap_cluster_creator_admin_permissions(boolean(
                    &a,
                    "bootstrap_cluster_creator_admin_permissions",
                ))
                .build()
        });
        c.eks
            .create_cluster()
            .name(&name)
            .role_arn(required(planned, "aws_eks_cluster", "role_arn")?)
            .set_version(string(planned, "version"))
            .resources_vpc_config(vpc_req)
            .set_access_config(access)
            .set_upgrade_policy(upgrade_policy(planned))
            .set_bootstrap_self_managed_addons(boolean(planned, "bootstrap_self_managed_addons"))
            .set_tags(Some(
                with_ownership(&string_map(planned, "tags"), t)
                    .into_iter()
                    .collect(),
            ))
            .send()
            .await
            .map_err(|e| api("CreateCluster", e))?;
        self.wait_active(c, &name, planned, "create", Duration::from_secs(30 * 60))
            .await
    }

    async fn update(
        &self,
        c: &Clients,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let name = required(prior, "aws_eks_cluster", "name")?;
        if let (Some(had), Some(want)) = (string(prior, "version"), string(planned, "version")) {
            if had != want {
                c.eks
                    .update_cluster_version()
                    .name(&name)
                    .version(want)
                    .send()
                    .await
                    .map_err(|e| api("UpdateClusterVersion", e))?;
                self.wait_active(c, &name, planned, "update", Duration::from_secs(60 * 60))
                    .await?;
            }
        }
        let access = |v: &Value, k: &str| one_block(v, "vpc_config").and_then(|b| boolean(&b, k));
        let endpoints = ["endpoint_private_access", "endpoint_public_access"];
        if endpoints
            .iter()
            .any(|k| access(prior, k) != access(planned, k))
        {
            c.eks
                .update_cluster_config()
                .name(&name)
                .resources_vpc_config(
                    VpcConfigRequest::builder()
                        .set_endpoint_private_access(access(planned, endpoints[0]))
                        .set_endpoint_public_access(access(planned, endpoints[1]))
                        .build(),
                )
                .send()
                .await
                .map_err(|e| api("UpdateClusterConfig", e))?;
            self.wait_active(c, &name, planned, "update", Duration::from_secs(60 * 60))
                .await?;
        }
        let support =
            |v: &Value| one_block(v, "upgrade_policy").and_then(|u| string(&u, "support_type"));
        if support(planned).is_some() && support(prior) != support(planned) {
            c.eks
                .update_cluster_config()
                .name(&name)
                .set_upgrade_policy(upgrade_policy(planned))
                .send()
                .await
                .map_err(|e| api("UpdateClusterConfig", e))?;
            self.wait_active(c, &name, planned, "update", Duration::from_secs(60 * 60))
                .await?;
        }
        if let Some(arn) = string(prior, "arn") {
            retag(c, &arn, prior, planned).await?;
        }
        self.wait_active(c, &name, planned, "update", Duration::from_secs(60 * 60))
            .await
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let name = required(prior, "aws_eks_cluster", "name")?;
        if !deleted(
            "DeleteCluster",
            c.eks.delete_cluster().name(&name).send().await,
        )? {
            return Ok(());
        }
        let t = timeout(prior, "delete", Duration::from_secs(15 * 60));
        gone(&format!("deleting EKS cluster {name}"), t, || {
            self.look(c, &name, None)
        })
        .await
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        owned(cluster_names(c).await?, |n| async move {
            let out = c
                .eks
                .describe_cluster()
                .name(n)
                .send()
                .await
                .map_err(|e| api("DescribeCluster", e))?;
            Ok(out
                .cluster()
                .filter(|cl| has_ownership(cl.tags(), t))
                .map(|cl| Cluster::value(cl, None)))
        })
        .await
    }

    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        let probe = object(vec![("name", Value::string(id))]);
        Ok(self.read(c, &[probe]).await?.pop().flatten())
    }
}

/// The `upgrade_policy` block as the API takes it.
fn upgrade_policy(planned: &Value) -> Option<UpgradePolicyRequest> {
    let support = one_block(planned, "upgrade_policy").and_then(|u| string(&u, "support_type"))?;
    Some(
        UpgradePolicyRequest::builder()
            .support_type(SupportType::from(support.as_str()))
            .build(),
    )
}

/// `vpc_config`: where the control plane's interfaces go (required).
fn vpc_block() -> BlockSchema {
    list_block_one(
        1,
        vec![
            (
                "subnet_ids",
                A::required(
                    Type::set(Type::String),
                    "Subnets for the control plane's interfaces.",
                )
                .force_new(),
            ),
            (
                "security_group_ids",
                A::optional(Type::set(Type::String), "Extra security groups.").force_new(),
            ),
            (
                "endpoint_private_access",
                A::optional(Type::Bool, "Private API endpoint."),
            ),
            (
                "endpoint_public_access",
                A::optional(Type::Bool, "Public API endpoint."),
            ),
            (
                "cluster_security_group_id",
                A::computed(Type::String, "The security group EKS made."),
            ),
            ("vpc_id", A::computed(Type::String, "The VPC.")),
        ],
    )
}

/// `access_config`: how users are authenticated.
fn access_block() -> BlockSchema {
    list_block_one(
        0,
        vec![
            (
                "authentication_mode",
                A::optional(Type::String, "CONFIG_MAP, API or API_AND_CONFIG_MAP.").and_computed(),
            ),
            (
                "bootstrap_cluster_creator_admin_permissions",
                A::optional(Type::Bool, "Make the creator an administrator.").force_new(),
            ),
        ],
    )
}

/// `upgrade_policy`: what happens at the end of standard support.
fn upgrade_block() -> BlockSchema {
    list_block_one(
        0,
        vec![(
            "support_type",
            A::optional(
                Type::String,
                "STANDARD (upgraded at the end of standard support) or EXTENDED (kept, at extended support's price).",
            )
            .and_computed(),
        )],
    )
}
