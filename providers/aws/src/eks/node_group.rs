//! `aws_eks_node_group`: managed node groups, their scaling, labels, taints and launch template.

use super::member::{self, Member};
use super::{issues_text, retag, tag_pair};
use crate::error::{api, deleted, is_not_found};
use crate::tags::{self, with_ownership};
use crate::values::{
    block, get, list_block_max1, list_block_one, list_of_one, map_value, number, object, one_block,
    required, str_value, string, string_map, string_set, strings, timeouts_block,
};
use crate::{Clients, Kind};
use async_trait::async_trait;
use aws_sdk_eks::types::{
    AmiTypes, CapacityTypes, LaunchTemplateSpecification, Nodegroup, NodegroupScalingConfig,
    NodegroupUpdateConfig, Taint, TaintEffect, UpdateLabelsPayload, UpdateTaintsPayload,
};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;
use strata_provider::{
    AttributeSchema as A, BlockNesting, BlockSchema, DriverError, PlanRequest, Planned,
    ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

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

/// `scaling_config { desired_size, min_size, max_size }`, required.
fn scaling_block() -> BlockSchema {
    list_block_one(
        1,
        vec![
            ("desired_size", A::required(Type::Number, "Nodes wanted.")),
            ("min_size", A::required(Type::Number, "Fewest nodes.")),
            ("max_size", A::required(Type::Number, "Most nodes.")),
        ],
    )
}

fn launch_template_of(v: &Value) -> Option<LaunchTemplateSpecification> {
    let l = one_block(v, "launch_template")?;
    Some(
        LaunchTemplateSpecification::builder()
            .set_id(string(&l, "id"))
            .set_name(string(&l, "name").filter(|_| string(&l, "id").is_none()))
            .set_version(string(&l, "version"))
            .build(),
    )
}

fn update_config_of(v: &Value) -> Option<NodegroupUpdateConfig> {
    let u = one_block(v, "update_config")?;
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
    let s = one_block(v, "scaling_config").unwrap_or_else(Value::null);
    NodegroupScalingConfig::builder()
        .set_desired_size(number(&s, "desired_size").map(|n| n as i32))
        .set_min_size(number(&s, "min_size").map(|n| n as i32))
        .set_max_size(number(&s, "max_size").map(|n| n as i32))
        .build()
}

/// Whether the group's nodes are a Capacity Block's: EKS changes such a
/// group's version only at zero nodes ("Create a managed node group with
/// Capacity Blocks for ML": set the desired size to 0 before an upgrade).
fn on_a_block(v: &Value) -> bool {
    string(v, "capacity_type").as_deref() == Some("CAPACITY_BLOCK")
}

fn desired(v: &Value) -> i64 {
    one_block(v, "scaling_config")
        .and_then(|s| number(&s, "desired_size"))
        .unwrap_or(0)
}

/// The group's scaling with no nodes (its most kept: EKS needs one).
fn zero(v: &Value) -> NodegroupScalingConfig {
    let max = one_block(v, "scaling_config").and_then(|s| number(&s, "max_size"));
    NodegroupScalingConfig::builder()
        .desired_size(0)
        .min_size(0)
        .set_max_size(max.map(|n| n as i32))
        .build()
}

impl NodeGroup {
    /// Sets the group's scaling and waits for it.
    async fn rescale(
        &self,
        c: &Clients,
        planned: &Value,
        to: NodegroupScalingConfig,
    ) -> Result<(), DriverError> {
        let cluster = required(planned, "aws_eks_node_group", "cluster_name")?;
        let name = required(planned, "aws_eks_node_group", "node_group_name")?;
        c.eks
            .update_nodegroup_config()
            .cluster_name(&cluster)
            .nodegroup_name(&name)
            .scaling_config(to)
            .send()
            .await
            .map_err(|e| api("UpdateNodegroupConfig", e))?;
        member::wait_active(self, c, planned, &name, "update").await?;
        Ok(())
    }

    fn value(ng: &Nodegroup, timeouts: Option<&Value>) -> Value {
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
                list_of_one(
                    &scaling_block(),
                    Some(object(vec![
                        ("desired_size", int(sc.and_then(|s| s.desired_size()))),
                        ("min_size", int(sc.and_then(|s| s.min_size()))),
                        ("max_size", int(sc.and_then(|s| s.max_size()))),
                    ])),
                ),
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
}

#[async_trait]
impl Member for NodeGroup {
    const TYPE: &'static str = "aws_eks_node_group";
    const NAME: &'static str = "node_group_name";
    const NOUN: &'static str = "node group";
    const ID_NAME: &'static str = "NODE_GROUP";
    const WAIT: Duration = Duration::from_secs(60 * 60);
    const DELETE_WAIT: Duration = Duration::from_secs(60 * 60);

    type Object = Nodegroup;

    async fn describe(
        &self,
        c: &Clients,
        cluster: &str,
        name: &str,
    ) -> Result<Option<Nodegroup>, DriverError> {
        let asked = c
            .eks
            .describe_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(name)
            .send()
            .await;
        match asked {
            Ok(out) => Ok(out.nodegroup().cloned()),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(api("DescribeNodegroup", e)),
        }
    }

    async fn names(&self, c: &Clients, cluster: &str) -> Result<Vec<String>, DriverError> {
        c.eks
            .list_nodegroups()
            .cluster_name(cluster)
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(|e| api("ListNodegroups", e))
    }

    async fn request_delete(
        &self,
        c: &Clients,
        cluster: &str,
        name: &str,
        _prior: &Value,
    ) -> Result<bool, DriverError> {
        let asked = c
            .eks
            .delete_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(name)
            .send()
            .await;
        deleted("DeleteNodegroup", asked)
    }

    fn status(ng: &Nodegroup) -> &str {
        ng.status().map_or("", |s| s.as_str())
    }

    fn tags(ng: &Nodegroup) -> Option<&HashMap<String, String>> {
        ng.tags()
    }

    fn health(ng: &Nodegroup) -> String {
        let issues = ng.health().map_or(&[][..], |h| h.issues());
        issues_text(
            issues
                .iter()
                .map(|i| (i.code().map(|c| c.as_str()), i.message())),
        )
    }

    fn value(ng: &Nodegroup, from: Option<&Value>) -> Value {
        NodeGroup::value(ng, from.and_then(|f| get(f, "timeouts")))
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
        s.blocks.insert("scaling_config".into(), scaling_block());
        s.blocks.insert(
            "taint".into(),
            BlockSchema {
                // EKS's limit on a node group's taints.
                max_items: Some(50),
                ..block(
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
                )
            },
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
            // A group whose create failed (no capacity, a bad launch
            // template) takes no updates; Terraform taints it when its
            // create fails, and one adopted after a crash mid-create is
            // planned the same: replaced.
            let failed = req
                .prior
                .and_then(|pr| string(pr, "status"))
                .is_some_and(|s| s == "CREATE_FAILED");
            if failed {
                m.insert("status".into(), Value::Unknown(Type::String));
                p.requires_replace.push(vec!["status".to_string()]);
            }
        }
        p
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        member::read(self, c, objs).await
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
        member::wait_active(self, c, planned, &name, "create").await
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
            member::wait_active(self, c, planned, &name, "update").await?;
        }
        // A new launch template version rolls the nodes.
        let template_version = |v: &Value| {
            get(v, "launch_template")
                .and_then(|l| l.unmarked().elements().and_then(|e| e.first().cloned()))
                .and_then(|l| string(&l, "version"))
        };
        if template_version(prior) != template_version(planned) {
            if let Some(lt) = launch_template_of(planned) {
                let at_zero = on_a_block(planned) && desired(planned) > 0;
                if at_zero {
                    self.rescale(c, planned, zero(planned)).await?;
                }
                c.eks
                    .update_nodegroup_version()
                    .cluster_name(&cluster)
                    .nodegroup_name(&name)
                    .launch_template(lt)
                    .send()
                    .await
                    .map_err(|e| api("UpdateNodegroupVersion", e))?;
                member::wait_active(self, c, planned, &name, "update").await?;
                if at_zero {
                    self.rescale(c, planned, scaling(planned)).await?;
                }
            }
        }
        if let Some(arn) = string(prior, "arn") {
            retag(c, &arn, prior, planned).await?;
        }
        member::wait_active(self, c, planned, &name, "update").await
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        member::delete(self, c, prior).await
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        member::find_tagged(self, c, t).await
    }

    /// Imported as `CLUSTER:NODE_GROUP`.
    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        member::import(self, c, id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node group whose create failed is replaced, not updated; one
    /// that is running or degraded (a resize that failed) is kept.
    #[test]
    fn only_a_group_whose_create_failed_is_replaced() {
        let schema = NodeGroup.schema();
        let fields = |status: &str| {
            object(vec![
                ("cluster_name", Value::string("train")),
                ("node_group_name", Value::string("h100")),
                ("status", Value::string(status)),
            ])
        };
        let config = object(vec![
            ("cluster_name", Value::string("train")),
            ("node_group_name", Value::string("h100")),
        ]);
        for (status, replaced) in [
            ("CREATE_FAILED", true),
            ("ACTIVE", false),
            ("DEGRADED", false),
        ] {
            let prior = fields(status);
            let p = NodeGroup.plan(
                &schema,
                &PlanRequest {
                    type_name: "aws_eks_node_group",
                    prior: Some(&prior),
                    config: &config,
                    prior_kept: &Default::default(),
                },
            );
            assert_eq!(
                p.requires_replace.contains(&vec!["status".to_string()]),
                replaced,
                "{status}"
            );
        }
    }
}
