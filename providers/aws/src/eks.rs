//! EKS: `aws_eks_cluster` and `aws_eks_node_group`. Both are asynchronous:
//! create, update and delete wait (see [`crate::wait`]) for ACTIVE or gone,
//! within the resource's `timeouts` (Terraform's defaults).

use crate::error::{api, deleted, is_not_found};
use crate::tags::{self, with_ownership};
use crate::values::{
    block, boolean, get, id_pair, list_block_max1, map_value, number, object, required, str_value,
    string, string_map, string_set, strings, timeouts_block,
};
use crate::wait::{gone, ready, timeout, Poll};
use crate::{Clients, Kind};
use async_trait::async_trait;
use aws_sdk_eks::types::{
    AmiTypes, AuthenticationMode, CapacityTypes, CreateAccessConfigRequest,
    LaunchTemplateSpecification, NodegroupScalingConfig, NodegroupUpdateConfig, Taint, TaintEffect,
    UpdateLabelsPayload, UpdateTaintsPayload, VpcConfigRequest,
};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;
use strata_provider::{
    AttributeSchema as A, BlockNesting, BlockSchema, DriverError, PlanRequest, Planned,
    ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

fn tag_pair(aws: Option<&HashMap<String, String>>) -> (Value, Value) {
    tags::values(aws.cloned().unwrap_or_default())
}

/// Sets `name` inside the single block `block` when the plan leaves it null.
fn default_in(planned: &mut Value, block: &str, name: &str, v: Value) {
    if let Value::Object(m) = planned {
        if let Some(Value::Object(b)) = m.get_mut(block) {
            if b.get(name).is_none_or(Value::is_null) {
                b.insert(name.to_string(), v);
            }
        }
    }
}

async fn retag(c: &Clients, arn: &str, prior: &Value, planned: &Value) -> Result<(), DriverError> {
    let (remove, set) = tags::changes(&string_map(prior, "tags"), &string_map(planned, "tags"));
    if !remove.is_empty() {
        c.eks
            .untag_resource()
            .resource_arn(arn)
            .set_tag_keys(Some(remove))
            .send()
            .await
            .map_err(|e| api("UntagResource", e))?;
    }
    if !set.is_empty() {
        c.eks
            .tag_resource()
            .resource_arn(arn)
            .set_tags(Some(set.into_iter().collect()))
            .send()
            .await
            .map_err(|e| api("TagResource", e))?;
    }
    Ok(())
}

fn has_ownership(aws: Option<&HashMap<String, String>>, t: &Tags) -> bool {
    tags::owned_by(
        aws.into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str())),
        t,
    )
}

pub struct Cluster;

impl Cluster {
    /// The cluster as state records it. `kept` is the object (prior or
    /// planned) whose configuration-only parts are carried over: its
    /// timeouts, and its access configuration when DescribeCluster leaves
    /// that out (moto does; the bootstrap flag is create-only anyway).
    fn value(cl: &aws_sdk_eks::types::Cluster, kept: Option<&Value>) -> Value {
        let timeouts = kept.and_then(|k| get(k, "timeouts"));
        let vpc = cl.resources_vpc_config();
        let (tags, tags_all) = tag_pair(cl.tags());
        let name = cl.name().unwrap_or_default();
        object(vec![
            ("id", Value::string(name)),
            ("name", Value::string(name)),
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
                object(vec![
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
                ]),
            ),
            (
                "access_config",
                match cl.access_config() {
                    Some(a) => object(vec![
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
                    ]),
                    None => kept
                        .and_then(|k| get(k, "access_config"))
                        .cloned()
                        .unwrap_or_else(|| {
                            Value::Null(
                                Cluster.schema().blocks["access_config"]
                                    .schema
                                    .object_type(),
                            )
                        }),
                },
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
        s.blocks.insert(
            "vpc_config".into(),
            block(
                BlockNesting::Single,
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
            ),
        );
        s.blocks.insert(
            "access_config".into(),
            block(
                BlockNesting::Single,
                0,
                vec![
                    (
                        "authentication_mode",
                        A::optional(Type::String, "CONFIG_MAP, API or API_AND_CONFIG_MAP.")
                            .and_computed(),
                    ),
                    (
                        "bootstrap_cluster_creator_admin_permissions",
                        A::optional(Type::Bool, "Make the creator an administrator.").force_new(),
                    ),
                ],
            ),
        );
        s.blocks.insert("timeouts".into(), timeouts_block());
        s
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = tags::plan_taggable(schema, req, &[]);
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
        let vpc = get(planned, "vpc_config")
            .cloned()
            .unwrap_or_else(Value::null);
        let vpc_req = VpcConfigRequest::builder()
            .set_subnet_ids(Some(strings(&vpc, "subnet_ids")))
            .set_security_group_ids(Some(strings(&vpc, "security_group_ids")))
            .set_endpoint_private_access(boolean(&vpc, "endpoint_private_access"))
            .set_endpoint_public_access(boolean(&vpc, "endpoint_public_access"))
            .build();
        let access = get(planned, "access_config").map(|a| {
            CreateAccessConfigRequest::builder()
                .set_authentication_mode(
                    string(a, "authentication_mode").map(|m| AuthenticationMode::from(m.as_str())),
                )
                .set_bootstrap_cluster_creator_admin_permissions(boolean(
                    a,
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
        let access = |v: &Value, k: &str| get(v, "vpc_config").and_then(|b| boolean(b, k));
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

pub struct NodeGroup;

/// `launch_template { id | name, version }`: which template the nodes
/// boot from; a new version rolls them (UpdateNodegroupVersion).
fn launch_template_block() -> BlockSchema {
    list_block_max1(vec![
        (
            "id",
            A::optional(Type::String, "The template's id.")
                .and_computed()
                .force_new(),
        ),
        (
            "name",
            A::optional(Type::String, "The template's name.")
                .and_computed()
                .force_new(),
        ),
        (
            "version",
            A::required(Type::String, "The template version."),
        ),
    ])
}

/// `update_config { max_unavailable | max_unavailable_percentage }`.
fn update_config_block() -> BlockSchema {
    list_block_max1(vec![
        (
            "max_unavailable",
            A::optional(Type::Number, "Nodes replaced at once."),
        ),
        (
            "max_unavailable_percentage",
            A::optional(Type::Number, "Percent of nodes replaced at once."),
        ),
    ])
}

fn first_block(v: &Value, name: &str) -> Option<Value> {
    get(v, name).and_then(|l| l.unmarked().elements().and_then(|e| e.first().cloned()))
}

fn launch_template_of(v: &Value) -> Option<LaunchTemplateSpecification> {
    let l = first_block(v, "launch_template")?;
    Some(
        LaunchTemplateSpecification::builder()
            .set_id(string(&l, "id"))
            .set_name(string(&l, "name").filter(|_| string(&l, "id").is_none()))
            .set_version(string(&l, "version"))
            .build(),
    )
}

fn update_config_of(v: &Value) -> Option<NodegroupUpdateConfig> {
    let u = first_block(v, "update_config")?;
    Some(
        NodegroupUpdateConfig::builder()
            .set_max_unavailable(number(&u, "max_unavailable").map(|n| n as i32))
            .set_max_unavailable_percentage(
                number(&u, "max_unavailable_percentage").map(|n| n as i32),
            )
            .build(),
    )
}

fn taint_type() -> Type {
    NodeGroup.schema().blocks["taint"].schema.object_type()
}

fn taints_of(v: &Value) -> Vec<(String, Option<String>, String)> {
    get(v, "taint")
        .and_then(|t| t.unmarked().elements().map(<[Value]>::to_vec))
        .unwrap_or_default()
        .iter()
        .filter_map(|t| Some((string(t, "key")?, string(t, "value"), string(t, "effect")?)))
        .collect()
}

fn eks_taint((key, value, effect): &(String, Option<String>, String)) -> Taint {
    Taint::builder()
        .key(key)
        .set_value(value.clone())
        .effect(TaintEffect::from(effect.as_str()))
        .build()
}

fn scaling(v: &Value) -> NodegroupScalingConfig {
    let s = get(v, "scaling_config")
        .cloned()
        .unwrap_or_else(Value::null);
    NodegroupScalingConfig::builder()
        .set_desired_size(number(&s, "desired_size").map(|n| n as i32))
        .set_min_size(number(&s, "min_size").map(|n| n as i32))
        .set_max_size(number(&s, "max_size").map(|n| n as i32))
        .build()
}

impl NodeGroup {
    fn value(ng: &aws_sdk_eks::types::Nodegroup, timeouts: Option<&Value>) -> Value {
        let (tags, tags_all) = tag_pair(ng.tags());
        let cluster = ng.cluster_name().unwrap_or_default();
        let name = ng.nodegroup_name().unwrap_or_default();
        let sc = ng.scaling_config();
        let int = |n: Option<i32>| {
            n.map(|n| Value::int(n as i64))
                .unwrap_or(Value::Null(Type::Number))
        };
        let labels = ng
            .labels()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<BTreeMap<_, _>>()
            })
            .unwrap_or_default();
        let taints: Vec<Value> = ng
            .taints()
            .iter()
            .map(|t| {
                object(vec![
                    ("key", str_value(t.key())),
                    ("value", str_value(t.value())),
                    ("effect", str_value(t.effect().map(|e| e.as_str()))),
                ])
            })
            .collect();
        object(vec![
            ("id", Value::string(format!("{cluster}:{name}"))),
            ("cluster_name", Value::string(cluster)),
            ("node_group_name", Value::string(name)),
            ("arn", str_value(ng.nodegroup_arn())),
            ("node_role_arn", str_value(ng.node_role())),
            ("subnet_ids", string_set(ng.subnets())),
            (
                "instance_types",
                Value::List(
                    Type::String,
                    ng.instance_types().iter().map(Value::string).collect(),
                ),
            ),
            ("ami_type", str_value(ng.ami_type().map(|a| a.as_str()))),
            (
                "capacity_type",
                str_value(ng.capacity_type().map(|c| c.as_str())),
            ),
            ("disk_size", int(ng.disk_size())),
            (
                "labels",
                if labels.is_empty() {
                    Value::Null(Type::map(Type::String))
                } else {
                    map_value(&labels)
                },
            ),
            ("version", str_value(ng.version())),
            ("release_version", str_value(ng.release_version())),
            ("status", str_value(ng.status().map(|s| s.as_str()))),
            (
                "scaling_config",
                object(vec![
                    ("desired_size", int(sc.and_then(|s| s.desired_size()))),
                    ("min_size", int(sc.and_then(|s| s.min_size()))),
                    ("max_size", int(sc.and_then(|s| s.max_size()))),
                ]),
            ),
            ("taint", Value::new_set(taint_type(), taints)),
            (
                "launch_template",
                Value::List(
                    launch_template_block().schema.object_type(),
                    ng.launch_template()
                        .map(|l| {
                            object(vec![
                                ("id", str_value(l.id())),
                                ("name", str_value(l.name())),
                                ("version", str_value(l.version())),
                            ])
                        })
                        .into_iter()
                        .collect(),
                ),
            ),
            (
                "update_config",
                Value::List(
                    update_config_block().schema.object_type(),
                    ng.update_config()
                        .map(|u| {
                            object(vec![
                                ("max_unavailable", int(u.max_unavailable())),
                                (
                                    "max_unavailable_percentage",
                                    int(u.max_unavailable_percentage()),
                                ),
                            ])
                        })
                        .into_iter()
                        .collect(),
                ),
            ),
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
        cluster: &str,
        name: &str,
        timeouts: Option<&Value>,
    ) -> Result<Poll, DriverError> {
        match c
            .eks
            .describe_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(name)
            .send()
            .await
        {
            Ok(out) => {
                let Some(ng) = out.nodegroup() else {
                    return Ok(Poll::Gone);
                };
                let status = ng
                    .status()
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_default();
                Ok(match status.as_str() {
                    "ACTIVE" => Poll::Ready(NodeGroup::value(ng, timeouts)),
                    "CREATE_FAILED" | "DELETE_FAILED" | "DEGRADED" => {
                        Poll::Failed(crate::error::classify(
                            "EKS node group",
                            format!(
                                "node group {name} is {status}: {}",
                                issues_text(
                                    ng.health()
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
            Err(e) if is_not_found(&e) => Ok(Poll::Gone),
            Err(e) => Err(api("DescribeNodegroup", e)),
        }
    }

    async fn wait_active(
        &self,
        c: &Clients,
        v: &Value,
        cluster: &str,
        name: &str,
        op: &str,
    ) -> Result<Value, DriverError> {
        let t = timeout(v, op, Duration::from_secs(60 * 60));
        let timeouts = get(v, "timeouts");
        ready(&format!("waiting for EKS node group {name}"), t, || {
            self.look(c, cluster, name, timeouts)
        })
        .await
    }
}

#[async_trait]
impl Kind<Clients> for NodeGroup {
    fn schema(&self) -> ResourceSchema {
        let mut s = tags::taggable_schema(vec![
            (
                "cluster_name",
                A::required(Type::String, "The cluster.").force_new(),
            ),
            (
                "node_group_name",
                A::optional(Type::String, "The node group's name.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "node_role_arn",
                A::required(Type::String, "The nodes' IAM role.").force_new(),
            ),
            (
                "subnet_ids",
                A::required(Type::set(Type::String), "Subnets for the nodes.").force_new(),
            ),
            (
                "instance_types",
                A::optional(Type::list(Type::String), "Instance types.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "ami_type",
                A::optional(Type::String, "AMI type, e.g. AL2023_x86_64_NVIDIA.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "capacity_type",
                A::optional(Type::String, "ON_DEMAND, SPOT or CAPACITY_BLOCK.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "disk_size",
                A::optional(Type::Number, "Root disk size in GiB.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "labels",
                A::optional(Type::map(Type::String), "Kubernetes labels on the nodes."),
            ),
            (
                "version",
                A::optional(Type::String, "The Kubernetes version.").and_computed(),
            ),
            (
                "release_version",
                A::optional(Type::String, "The AMI release.").and_computed(),
            ),
            (
                "status",
                A::computed(Type::String, "The node group's status."),
            ),
        ]);
        s.blocks.insert(
            "scaling_config".into(),
            block(
                BlockNesting::Single,
                1,
                vec![
                    ("desired_size", A::required(Type::Number, "Nodes wanted.")),
                    ("min_size", A::required(Type::Number, "Fewest nodes.")),
                    ("max_size", A::required(Type::Number, "Most nodes.")),
                ],
            ),
        );
        s.blocks.insert(
            "taint".into(),
            block(
                BlockNesting::Set,
                0,
                vec![
                    ("key", A::required(Type::String, "The taint's key.")),
                    ("value", A::optional(Type::String, "The taint's value.")),
                    (
                        "effect",
                        A::required(
                            Type::String,
                            "NO_SCHEDULE, NO_EXECUTE or PREFER_NO_SCHEDULE.",
                        ),
                    ),
                ],
            ),
        );
        s.blocks
            .insert("launch_template".into(), launch_template_block());
        s.blocks
            .insert("update_config".into(), update_config_block());
        s.blocks.insert("timeouts".into(), timeouts_block());
        s
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = tags::plan_taggable(schema, req, &[]);
        // EKS sets an update policy of its own (one node at a time) when
        // none is given: an absent block keeps what it has.
        if let Value::Object(m) = &mut p.planned {
            let absent = m
                .get("update_config")
                .is_some_and(|v| v.is_known() && v.elements().is_none_or(<[Value]>::is_empty));
            if absent {
                let ty = Type::list(update_config_block().schema.object_type());
                let keep = req
                    .prior
                    .and_then(|pr| get(pr, "update_config"))
                    .cloned()
                    .unwrap_or(Value::Unknown(ty));
                m.insert("update_config".into(), keep);
            }
        }
        p
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let (Some(cluster), Some(name)) =
                (string(o, "cluster_name"), string(o, "node_group_name"))
            else {
                out.push(None);
                continue;
            };
            out.push(
                match c
                    .eks
                    .describe_nodegroup()
                    .cluster_name(&cluster)
                    .nodegroup_name(&name)
                    .send()
                    .await
                {
                    Ok(r) => r
                        .nodegroup()
                        .map(|ng| NodeGroup::value(ng, get(o, "timeouts"))),
                    Err(e) if is_not_found(&e) => None,
                    Err(e) => return Err(api("DescribeNodegroup", e)),
                },
            );
        }
        Ok(out)
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<Value, DriverError> {
        let cluster = required(planned, "aws_eks_node_group", "cluster_name")?;
        // Terraform generates a name when none is given; so does strata,
        // from the address, which is stable across retries.
        let name = string(planned, "node_group_name").unwrap_or_else(|| {
            t.address
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '-'
                    }
                })
                .collect()
        });
        c.eks
            .create_nodegroup()
            .cluster_name(&cluster)
            .nodegroup_name(&name)
            .node_role(required(planned, "aws_eks_node_group", "node_role_arn")?)
            .set_subnets(Some(strings(planned, "subnet_ids")))
            .set_instance_types(Some(strings(planned, "instance_types")).filter(|v| !v.is_empty()))
            .set_ami_type(string(planned, "ami_type").map(|a| AmiTypes::from(a.as_str())))
            .set_capacity_type(
                string(planned, "capacity_type").map(|c| CapacityTypes::from(c.as_str())),
            )
            .set_disk_size(number(planned, "disk_size").map(|n| n as i32))
            .set_labels(
                Some(string_map(planned, "labels").into_iter().collect())
                    .filter(|m: &HashMap<_, _>| !m.is_empty()),
            )
            .set_taints(
                Some(taints_of(planned).iter().map(eks_taint).collect())
                    .filter(|v: &Vec<Taint>| !v.is_empty()),
            )
            .scaling_config(scaling(planned))
            .set_launch_template(launch_template_of(planned))
            .set_update_config(update_config_of(planned))
            .set_version(string(planned, "version"))
            .set_release_version(string(planned, "release_version"))
            .set_tags(Some(
                with_ownership(&string_map(planned, "tags"), t)
                    .into_iter()
                    .collect(),
            ))
            .send()
            .await
            .map_err(|e| api("CreateNodegroup", e))?;
        self.wait_active(c, planned, &cluster, &name, "create")
            .await
    }

    /// Labels, taints and scaling change in place through one
    /// UpdateNodegroupConfig; tags through TagResource.
    async fn update(
        &self,
        c: &Clients,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let cluster = required(prior, "aws_eks_node_group", "cluster_name")?;
        let name = required(prior, "aws_eks_node_group", "node_group_name")?;
        let (had, want) = (string_map(prior, "labels"), string_map(planned, "labels"));
        let (remove, set) = tags::changes(&had, &want);
        let labels = (!remove.is_empty() || !set.is_empty()).then(|| {
            UpdateLabelsPayload::builder()
                .set_add_or_update_labels(
                    Some(set.into_iter().collect()).filter(|m: &HashMap<_, _>| !m.is_empty()),
                )
                .set_remove_labels(Some(remove).filter(|r| !r.is_empty()))
                .build()
        });
        let (t_had, t_want) = (taints_of(prior), taints_of(planned));
        let add: Vec<Taint> = t_want
            .iter()
            .filter(|t| !t_had.contains(t))
            .map(eks_taint)
            .collect();
        let drop: Vec<Taint> = t_had
            .iter()
            .filter(|t| !t_want.iter().any(|w| w.0 == t.0))
            .map(eks_taint)
            .collect();
        let taints = (!add.is_empty() || !drop.is_empty()).then(|| {
            UpdateTaintsPayload::builder()
                .set_add_or_update_taints(Some(add).filter(|a| !a.is_empty()))
                .set_remove_taints(Some(drop).filter(|d| !d.is_empty()))
                .build()
        });
        let scale_changed = get(prior, "scaling_config")
            .map(|v| v.clone().unmark_deep().0.to_json().ok())
            != get(planned, "scaling_config").map(|v| v.clone().unmark_deep().0.to_json().ok());
        let policy_changed =
            !crate::values::same(get(prior, "update_config"), get(planned, "update_config"));
        if labels.is_some() || taints.is_some() || scale_changed || policy_changed {
            c.eks
                .update_nodegroup_config()
                .cluster_name(&cluster)
                .nodegroup_name(&name)
                .set_labels(labels)
                .set_taints(taints)
                .set_scaling_config(scale_changed.then(|| scaling(planned)))
                .set_update_config(update_config_of(planned).filter(|_| policy_changed))
                .send()
                .await
                .map_err(|e| api("UpdateNodegroupConfig", e))?;
            self.wait_active(c, planned, &cluster, &name, "update")
                .await?;
        }
        // A new launch template version rolls the nodes.
        let template_version = |v: &Value| {
            get(v, "launch_template")
                .and_then(|l| l.unmarked().elements().and_then(|e| e.first().cloned()))
                .and_then(|l| string(&l, "version"))
        };
        if template_version(prior) != template_version(planned) {
            if let Some(lt) = launch_template_of(planned) {
                c.eks
                    .update_nodegroup_version()
                    .cluster_name(&cluster)
                    .nodegroup_name(&name)
                    .launch_template(lt)
                    .send()
                    .await
                    .map_err(|e| api("UpdateNodegroupVersion", e))?;
                self.wait_active(c, planned, &cluster, &name, "update")
                    .await?;
            }
        }
        if let Some(arn) = string(prior, "arn") {
            retag(c, &arn, prior, planned).await?;
        }
        self.wait_active(c, planned, &cluster, &name, "update")
            .await
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let cluster = required(prior, "aws_eks_node_group", "cluster_name")?;
        let name = required(prior, "aws_eks_node_group", "node_group_name")?;
        if !deleted(
            "DeleteNodegroup",
            c.eks
                .delete_nodegroup()
                .cluster_name(&cluster)
                .nodegroup_name(&name)
                .send()
                .await,
        )? {
            return Ok(());
        }
        let t = timeout(prior, "delete", Duration::from_secs(60 * 60));
        gone(&format!("deleting EKS node group {name}"), t, || {
            self.look(c, &cluster, &name, None)
        })
        .await
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        in_every_cluster(c, |cl| async move {
            let groups = c
                .eks
                .list_nodegroups()
                .cluster_name(&cl)
                .into_paginator()
                .items()
                .send()
                .collect::<Result<Vec<_>, _>>()
                .await
                .map_err(|e| api("ListNodegroups", e))?;
            let cl = &cl;
            owned(groups, |g| async move {
                let out = c
                    .eks
                    .describe_nodegroup()
                    .cluster_name(cl)
                    .nodegroup_name(g)
                    .send()
                    .await
                    .map_err(|e| api("DescribeNodegroup", e))?;
                Ok(out
                    .nodegroup()
                    .filter(|ng| has_ownership(ng.tags(), t))
                    .map(|ng| NodeGroup::value(ng, None)))
            })
            .await
        })
        .await
    }

    /// Imported as `cluster:node_group`.
    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        let (cluster, name) = id_pair(id, ':', "aws_eks_node_group", "CLUSTER:NODE_GROUP")?;
        let probe = object(vec![
            ("cluster_name", Value::string(cluster)),
            ("node_group_name", Value::string(name)),
        ]);
        Ok(self.read(c, &[probe]).await?.pop().flatten())
    }
}

/// Crash recovery for the objects inside clusters: `find` looks in one
/// cluster, for every cluster the account has.
async fn in_every_cluster<F, Fut>(c: &Clients, find: F) -> Result<Vec<Value>, DriverError>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<Value>, DriverError>>,
{
    let mut found = Vec::new();
    for cl in cluster_names(c).await? {
        found.extend(find(cl).await?);
    }
    Ok(found)
}

/// Every cluster the account has, across all of ListClusters' pages.
async fn cluster_names(c: &Clients) -> Result<Vec<String>, DriverError> {
    c.eks
        .list_clusters()
        .into_paginator()
        .items()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .map_err(|e| api("ListClusters", e))
}

/// What crash recovery keeps of a listing: each name described in turn
/// (`describe` answers `None` for an object without our ownership tags).
async fn owned<F, Fut>(names: Vec<String>, describe: F) -> Result<Vec<Value>, DriverError>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Result<Option<Value>, DriverError>>,
{
    let mut found = Vec::new();
    for n in names {
        found.extend(describe(n).await?);
    }
    Ok(found)
}

/// An object's health issues as one line: `code: message; …`.
fn issues_text<'a>(issues: impl IntoIterator<Item = (Option<&'a str>, Option<&'a str>)>) -> String {
    issues
        .into_iter()
        .map(|(c, m)| format!("{}: {}", c.unwrap_or("?"), m.unwrap_or("")))
        .collect::<Vec<_>>()
        .join("; ")
}

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
