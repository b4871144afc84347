//! `aws_launch_template`: how GPU nodes boot (root volume, instance
//! metadata, user data). Every change to the template's data is a new
//! version; the template itself stays.

use super::{arn, created, described, schema, tag_spec, Ec2Type, Select};
use crate::error::{api, deleted, is_not_found};
use crate::values::{
    blocks, boolean, int32, int_value, list_block_max1, number, object, same, str_value, string,
    string_map, string_set, strings,
};
use crate::Clients;
use async_trait::async_trait;
use aws_sdk_ec2::types::{
    CapacityReservationPreference, CapacityReservationTarget, InstanceType,
    LaunchTemplateBlockDeviceMappingRequest, LaunchTemplateCapacityReservationSpecificationRequest,
    LaunchTemplateEbsBlockDeviceRequest, LaunchTemplateHttpTokensState,
    LaunchTemplateIamInstanceProfileSpecificationRequest,
    LaunchTemplateInstanceMarketOptionsRequest, LaunchTemplateInstanceMetadataEndpointState,
    LaunchTemplateInstanceMetadataOptionsRequest, LaunchTemplateInstanceMetadataTagsState,
    LaunchTemplateTagSpecificationRequest, LaunchTemplateVersion, MarketType,
    RequestLaunchTemplateData, ResourceType, ResponseLaunchTemplateData, Tag, VolumeType,
};
use std::collections::HashMap;
use strata_provider::{
    AttributeSchema as A, BlockNesting, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

/// Attributes that are the template's data: a change to any of them is a
/// new version.
const DATA: [&str; 12] = [
    "description",
    "image_id",
    "instance_type",
    "key_name",
    "user_data",
    "vpc_security_group_ids",
    "block_device_mappings",
    "metadata_options",
    "iam_instance_profile",
    "tag_specifications",
    "capacity_reservation_specification",
    "instance_market_options",
];

pub struct LaunchTemplate;

/// A yes-or-no the AWS provider keeps as text ("true", "false").
fn bool_text(v: &Value, name: &str) -> Option<bool> {
    string(v, name).and_then(|s| s.parse().ok())
}

fn text_of_bool(b: Option<bool>) -> Value {
    str_value(b.map(|b| b.to_string()).as_deref())
}

fn data_request(v: &Value) -> RequestLaunchTemplateData {
    let mappings = blocks(v, "block_device_mappings")
        .iter()
        .map(|m| {
            let ebs = blocks(m, "ebs").first().map(|e| {
                LaunchTemplateEbsBlockDeviceRequest::builder()
                    .set_volume_size(int32(e, "volume_size"))
                    .set_volume_type(string(e, "volume_type").map(|t| VolumeType::from(t.as_str())))
                    .set_delete_on_termination(bool_text(e, "delete_on_termination"))
                    .set_encrypted(bool_text(e, "encrypted"))
                    .set_iops(int32(e, "iops"))
                    .set_throughput(int32(e, "throughput"))
                    .set_kms_key_id(string(e, "kms_key_id"))
                    .set_snapshot_id(string(e, "snapshot_id"))
                    .build()
            });
            LaunchTemplateBlockDeviceMappingRequest::builder()
                .set_device_name(string(m, "device_name"))
                .set_ebs(ebs)
                .build()
        })
        .collect();
    let metadata = blocks(v, "metadata_options").first().map(|m| {
        LaunchTemplateInstanceMetadataOptionsRequest::builder()
            .set_http_endpoint(
                string(m, "http_endpoint")
                    .map(|s| LaunchTemplateInstanceMetadataEndpointState::from(s.as_str())),
            )
            .set_http_tokens(
                string(m, "http_tokens").map(|s| LaunchTemplateHttpTokensState::from(s.as_str())),
            )
            .set_http_put_response_hop_limit(int32(m, "http_put_response_hop_limit"))
            .set_instance_metadata_tags(
                string(m, "instance_metadata_tags")
                    .map(|s| LaunchTemplateInstanceMetadataTagsState::from(s.as_str())),
            )
            .build()
    });
    let profile = blocks(v, "iam_instance_profile").first().map(|p| {
        LaunchTemplateIamInstanceProfileSpecificationRequest::builder()
            .set_arn(string(p, "arn"))
            .set_name(string(p, "name"))
            .build()
    });
    let specs = blocks(v, "tag_specifications")
        .iter()
        .map(|s| {
            LaunchTemplateTagSpecificationRequest::builder()
                .set_resource_type(
                    string(s, "resource_type").map(|t| ResourceType::from(t.as_str())),
                )
                .set_tags(Some(
                    string_map(s, "tags")
                        .iter()
                        .map(|(k, v)| Tag::builder().key(k).value(v).build())
                        .collect(),
                ))
                .build()
        })
        .collect();
    let groups = strings(v, "vpc_security_group_ids");
    RequestLaunchTemplateData::builder()
        .set_capacity_reservation_specification(reservation_request(v))
        .set_instance_market_options(blocks(v, "instance_market_options").first().map(|m| {
            LaunchTemplateInstanceMarketOptionsRequest::builder()
                .set_market_type(string(m, "market_type").map(|t| MarketType::from(t.as_str())))
                .build()
        }))
        .set_image_id(string(v, "image_id"))
        .set_instance_type(string(v, "instance_type").map(|t| InstanceType::from(t.as_str())))
        .set_key_name(string(v, "key_name"))
        .set_user_data(string(v, "user_data"))
        .set_security_group_ids((!groups.is_empty()).then_some(groups))
        .set_block_device_mappings(Some(mappings))
        .set_metadata_options(metadata)
        .set_iam_instance_profile(profile)
        .set_tag_specifications(Some(specs))
        .build()
}

/// Which capacity reservation the instances launch into (a Capacity
/// Block's, or an On-Demand Capacity Reservation or group of them).
fn reservation_request(v: &Value) -> Option<LaunchTemplateCapacityReservationSpecificationRequest> {
    let spec = blocks(v, "capacity_reservation_specification")
        .into_iter()
        .next()?;
    let target = blocks(&spec, "capacity_reservation_target")
        .first()
        .map(|t| {
            CapacityReservationTarget::builder()
                .set_capacity_reservation_id(string(t, "capacity_reservation_id"))
                .set_capacity_reservation_resource_group_arn(string(
                    t,
                    "capacity_reservation_resource_group_arn",
                ))
                .build()
        });
    Some(
        LaunchTemplateCapacityReservationSpecificationRequest::builder()
            .set_capacity_reservation_preference(
                string(&spec, "capacity_reservation_preference")
                    .map(|p| CapacityReservationPreference::from(p.as_str())),
            )
            .set_capacity_reservation_target(target)
            .build(),
    )
}

/// The reservation and market the template launches into, as AWS holds
/// them.
fn market_values(d: &ResponseLaunchTemplateData, s: &ResourceSchema) -> Vec<(&'static str, Value)> {
    let ty = |name: &str| {
        s.blocks
            .get(name)
            .map_or(Type::Dynamic, |b| b.schema.object_type())
    };
    let target_ty = s.blocks["capacity_reservation_specification"].schema.blocks
        ["capacity_reservation_target"]
        .schema
        .object_type();
    let spec = d.capacity_reservation_specification().map(|c| {
        let target = c.capacity_reservation_target().map(|t| {
            object(vec![
                (
                    "capacity_reservation_id",
                    str_value(t.capacity_reservation_id()),
                ),
                (
                    "capacity_reservation_resource_group_arn",
                    str_value(t.capacity_reservation_resource_group_arn()),
                ),
            ])
        });
        object(vec![
            (
                "capacity_reservation_preference",
                str_value(c.capacity_reservation_preference().map(|p| p.as_str())),
            ),
            (
                "capacity_reservation_target",
                Value::List(target_ty.clone(), target.into_iter().collect()),
            ),
        ])
    });
    let market = d.instance_market_options().map(|m| {
        object(vec![(
            "market_type",
            str_value(m.market_type().map(MarketType::as_str)),
        )])
    });
    vec![
        (
            "capacity_reservation_specification",
            Value::List(
                ty("capacity_reservation_specification"),
                spec.into_iter().collect(),
            ),
        ),
        (
            "instance_market_options",
            Value::List(ty("instance_market_options"), market.into_iter().collect()),
        ),
    ]
}

/// The template data AWS holds, as the schema's attributes.
fn data_values(d: &ResponseLaunchTemplateData, s: &ResourceSchema) -> Vec<(&'static str, Value)> {
    let ty = |name: &str| {
        s.blocks
            .get(name)
            .map_or(Type::Dynamic, |b| b.schema.object_type())
    };
    let list = |name: &str, items: Vec<Value>| Value::List(ty(name), items);
    let mappings = d
        .block_device_mappings()
        .iter()
        .map(|m| {
            let ebs_ty = s.blocks["block_device_mappings"].schema.blocks["ebs"]
                .schema
                .object_type();
            let ebs = m.ebs().map(|e| {
                object(vec![
                    ("volume_size", int_value(e.volume_size())),
                    (
                        "volume_type",
                        str_value(e.volume_type().map(VolumeType::as_str)),
                    ),
                    (
                        "delete_on_termination",
                        text_of_bool(e.delete_on_termination()),
                    ),
                    ("encrypted", text_of_bool(e.encrypted())),
                    ("iops", int_value(e.iops())),
                    ("throughput", int_value(e.throughput())),
                    ("kms_key_id", str_value(e.kms_key_id())),
                    ("snapshot_id", str_value(e.snapshot_id())),
                ])
            });
            object(vec![
                ("device_name", str_value(m.device_name())),
                ("ebs", Value::List(ebs_ty, ebs.into_iter().collect())),
            ])
        })
        .collect();
    let metadata = d.metadata_options().map(|m| {
        object(vec![
            (
                "http_endpoint",
                str_value(m.http_endpoint().map(|x| x.as_str())),
            ),
            (
                "http_tokens",
                str_value(m.http_tokens().map(|x| x.as_str())),
            ),
            (
                "http_put_response_hop_limit",
                int_value(m.http_put_response_hop_limit()),
            ),
            (
                "instance_metadata_tags",
                str_value(m.instance_metadata_tags().map(|x| x.as_str())),
            ),
        ])
    });
    let profile = d.iam_instance_profile().map(|p| {
        object(vec![
            ("arn", str_value(p.arn())),
            ("name", str_value(p.name())),
        ])
    });
    // The template's own tags are not data for what it launches (some
    // endpoints echo them here).
    let specs = d
        .tag_specifications()
        .iter()
        .filter(|t| t.resource_type() != Some(&ResourceType::LaunchTemplate))
        .map(|t| {
            let tags = t
                .tags()
                .iter()
                .filter_map(|x| Some((x.key()?.to_string(), x.value().unwrap_or("").to_string())))
                .collect();
            object(vec![
                (
                    "resource_type",
                    str_value(t.resource_type().map(ResourceType::as_str)),
                ),
                ("tags", crate::values::map_value(&tags)),
            ])
        })
        .collect();
    let groups: Vec<String> = d.security_group_ids().to_vec();
    vec![
        ("image_id", str_value(d.image_id())),
        (
            "instance_type",
            str_value(d.instance_type().map(InstanceType::as_str)),
        ),
        ("key_name", str_value(d.key_name())),
        ("user_data", str_value(d.user_data())),
        (
            "vpc_security_group_ids",
            if groups.is_empty() {
                Value::Null(Type::set(Type::String))
            } else {
                string_set(&groups)
            },
        ),
        (
            "block_device_mappings",
            list("block_device_mappings", mappings),
        ),
        (
            "metadata_options",
            list("metadata_options", metadata.into_iter().collect()),
        ),
        (
            "iam_instance_profile",
            list("iam_instance_profile", profile.into_iter().collect()),
        ),
        ("tag_specifications", list("tag_specifications", specs)),
    ]
    .into_iter()
    .chain(market_values(d, s))
    .collect()
}

impl LaunchTemplate {
    /// The templates for `select`: by id, which fails the whole call on one
    /// missing id, so a page with a missing one is asked again id by id.
    async fn templates(
        &self,
        c: &Clients,
        select: &Select<'_>,
    ) -> Result<Vec<aws_sdk_ec2::types::LaunchTemplate>, DriverError> {
        let call = |ids: Option<Vec<String>>, filters| {
            c.ec2
                .describe_launch_templates()
                .set_launch_template_ids(ids)
                .set_filters(filters)
                .send()
        };
        match select {
            Select::Owned(_) => c
                .ec2
                .describe_launch_templates()
                .set_filters(Some(select.filters("")))
                .into_paginator()
                .items()
                .send()
                .collect::<Result<Vec<_>, _>>()
                .await
                .map_err(|e| api("DescribeLaunchTemplates", e)),
            Select::Ids(ids) => match call(Some(ids.to_vec()), None).await {
                Ok(out) => Ok(out.launch_templates.unwrap_or_default()),
                Err(e) if is_not_found(&e) && ids.len() > 1 => {
                    let mut all = Vec::new();
                    for id in *ids {
                        match call(Some(vec![id.clone()]), None).await {
                            Ok(out) => all.extend(out.launch_templates.unwrap_or_default()),
                            Err(e) if is_not_found(&e) => {}
                            Err(e) => return Err(api("DescribeLaunchTemplates", e)),
                        }
                    }
                    Ok(all)
                }
                Err(e) if is_not_found(&e) => Ok(Vec::new()),
                Err(e) => Err(api("DescribeLaunchTemplates", e)),
            },
        }
    }

    /// Sets the default version as the configuration asks.
    async fn set_default(&self, c: &Clients, id: &str, version: i64) -> Result<(), DriverError> {
        c.ec2
            .modify_launch_template()
            .launch_template_id(id)
            .default_version(version.to_string())
            .send()
            .await
            .map_err(|e| api("ModifyLaunchTemplate", e))?;
        Ok(())
    }
}

#[async_trait]
impl Ec2Type for LaunchTemplate {
    const TYPE: &'static str = "aws_launch_template";
    const CONFIG_ONLY: &'static [&'static str] = &["update_default_version"];

    fn schema(&self) -> ResourceSchema {
        let mut s = schema(vec![
            (
                "name",
                A::optional(Type::String, "The template's name.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "description",
                A::optional(Type::String, "The version's description."),
            ),
            ("image_id", A::optional(Type::String, "The AMI.")),
            (
                "instance_type",
                A::optional(Type::String, "The instance type."),
            ),
            ("key_name", A::optional(Type::String, "The SSH key pair.")),
            (
                "user_data",
                A::optional(Type::String, "Base64-encoded user data."),
            ),
            (
                "vpc_security_group_ids",
                A::optional(Type::set(Type::String), "Security groups."),
            ),
            (
                "update_default_version",
                A::optional(Type::Bool, "Make every new version the default."),
            ),
            (
                "default_version",
                A::optional(Type::Number, "The default version.").and_computed(),
            ),
            (
                "latest_version",
                A::computed(Type::Number, "The newest version."),
            ),
        ]);
        // The AWS provider keeps no owner for a launch template.
        s.attributes.remove("owner_id");
        let ebs = list_block_max1(vec![
            (
                "volume_size",
                A::optional(Type::Number, "Size in GiB.").and_computed(),
            ),
            (
                "volume_type",
                A::optional(Type::String, "gp3, io2, ...").and_computed(),
            ),
            // Strings, as the AWS provider keeps them ("true", "false"):
            // unset is a third answer, AWS's default.
            (
                "delete_on_termination",
                A::optional(
                    Type::String,
                    "Delete with the instance: \"true\" or \"false\".",
                ),
            ),
            (
                "encrypted",
                A::optional(Type::String, "Encrypt the volume: \"true\" or \"false\"."),
            ),
            (
                "iops",
                A::optional(Type::Number, "Provisioned IOPS.").and_computed(),
            ),
            (
                "throughput",
                A::optional(Type::Number, "Throughput in MiB/s (gp3).").and_computed(),
            ),
            ("kms_key_id", A::optional(Type::String, "The KMS key.")),
            (
                "snapshot_id",
                A::optional(Type::String, "A snapshot to start from."),
            ),
        ]);
        let mut mappings = crate::values::block(
            BlockNesting::List,
            0,
            vec![("device_name", A::optional(Type::String, "/dev/xvda, ..."))],
        );
        mappings.schema.blocks.insert("ebs".into(), ebs);
        s.blocks.insert("block_device_mappings".into(), mappings);
        s.blocks.insert(
            "metadata_options".into(),
            list_block_max1(vec![
                (
                    "http_endpoint",
                    A::optional(Type::String, "enabled or disabled.").and_computed(),
                ),
                (
                    "http_tokens",
                    A::optional(Type::String, "required (IMDSv2) or optional.").and_computed(),
                ),
                (
                    "http_put_response_hop_limit",
                    A::optional(Type::Number, "Hops (2 for pods on the node).").and_computed(),
                ),
                (
                    "instance_metadata_tags",
                    A::optional(Type::String, "Tags in instance metadata.").and_computed(),
                ),
            ]),
        );
        s.blocks.insert(
            "iam_instance_profile".into(),
            list_block_max1(vec![
                ("arn", A::optional(Type::String, "The profile's ARN.")),
                ("name", A::optional(Type::String, "The profile's name.")),
            ]),
        );
        let mut reservation = list_block_max1(vec![(
            "capacity_reservation_preference",
            A::optional(Type::String, "open or none."),
        )]);
        reservation.schema.blocks.insert(
            "capacity_reservation_target".into(),
            list_block_max1(vec![
                (
                    "capacity_reservation_id",
                    A::optional(Type::String, "The reservation or Capacity Block (cr-...)."),
                ),
                (
                    "capacity_reservation_resource_group_arn",
                    A::optional(Type::String, "A resource group of reservations."),
                ),
            ]),
        );
        s.blocks
            .insert("capacity_reservation_specification".into(), reservation);
        s.blocks.insert(
            "instance_market_options".into(),
            list_block_max1(vec![(
                "market_type",
                A::optional(Type::String, "spot or capacity-block."),
            )]),
        );
        s.blocks.insert(
            "tag_specifications".into(),
            crate::values::block(
                BlockNesting::List,
                0,
                vec![
                    (
                        "resource_type",
                        A::optional(Type::String, "instance, volume, ..."),
                    ),
                    ("tags", A::optional(Type::map(Type::String), "Tags to set.")),
                ],
            ),
        );
        s
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = crate::tags::plan_taggable(schema, req, &[]);
        // A change to the data makes a new version: the latest version
        // number, and the default one when it follows, are apply's to say.
        if let (Some(prior), Value::Object(m)) = (req.prior, &mut p.planned) {
            let changed = DATA.iter().any(|k| {
                !same(
                    crate::values::get(prior, k),
                    m.get(*k).filter(|v| !v.is_null()),
                )
            });
            if changed {
                m.insert("latest_version".into(), Value::Unknown(Type::Number));
                if m.get("update_default_version").and_then(Value::as_bool) == Some(true) {
                    m.insert("default_version".into(), Value::Unknown(Type::Number));
                }
            }
        }
        p
    }

    async fn describe(
        &self,
        c: &Clients,
        select: Select<'_>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let schema = self.schema();
        let mut found = HashMap::new();
        let templates = self.templates(c, &select).await?;
        let kept = select.keep(&templates, |t| t.launch_template_id(), |t| t.tags());
        let ids: Vec<&str> = kept.iter().map(|(id, _)| *id).collect();
        let mut latest = latest_versions(c, &ids).await?;
        for (id, t) in kept {
            let Some(version) = latest.remove(id) else {
                continue;
            };
            let mut attrs = vec![
                ("name", str_value(t.launch_template_name())),
                ("description", str_value(version.version_description())),
                (
                    "default_version",
                    Value::int(t.default_version_number().unwrap_or(1)),
                ),
                (
                    "latest_version",
                    Value::int(t.latest_version_number().unwrap_or(1)),
                ),
            ];
            if let Some(d) = version.launch_template_data() {
                attrs.extend(data_values(d, &schema));
            }
            found.insert(
                id.to_string(),
                described(
                    id,
                    arn(c, creator_account(t), "launch-template", id).await?,
                    None,
                    t.tags(),
                    attrs,
                ),
            );
        }
        Ok(found)
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<String, DriverError> {
        let name = match string(planned, "name") {
            Some(n) => n,
            None => format!("strata-{}", t.address.replace(['[', ']', '"', '.'], "-")),
        };
        let out = c
            .ec2
            .create_launch_template()
            .launch_template_name(name)
            .set_version_description(string(planned, "description"))
            .launch_template_data(data_request(planned))
            .tag_specifications(tag_spec(ResourceType::LaunchTemplate, planned, t))
            .send()
            .await
            .map_err(|e| api("CreateLaunchTemplate", e))?;
        let id = created(
            "CreateLaunchTemplate",
            out.launch_template().and_then(|t| t.launch_template_id()),
        )?;
        if let Some(v) = number(planned, "default_version").filter(|v| *v != 1) {
            self.set_default(c, &id, v).await?;
        }
        Ok(id)
    }

    async fn update(
        &self,
        c: &Clients,
        id: &str,
        prior: &Value,
        planned: &Value,
    ) -> Result<Option<String>, DriverError> {
        let changed = DATA
            .iter()
            .any(|k| !same(crate::values::get(prior, k), crate::values::get(planned, k)));
        let mut default = number(planned, "default_version");
        if changed {
            let out = c
                .ec2
                .create_launch_template_version()
                .launch_template_id(id)
                .set_version_description(string(planned, "description"))
                .launch_template_data(data_request(planned))
                .send()
                .await
                .map_err(|e| api("CreateLaunchTemplateVersion", e))?;
            if boolean(planned, "update_default_version") == Some(true) {
                default = out
                    .launch_template_version()
                    .and_then(|v| v.version_number());
            }
        }
        if let Some(v) = default.filter(|v| Some(*v) != number(prior, "default_version")) {
            self.set_default(c, id, v).await?;
        }
        Ok(None)
    }

    async fn delete(&self, c: &Clients, id: &str, _prior: &Value) -> Result<(), DriverError> {
        deleted(
            "DeleteLaunchTemplate",
            c.ec2
                .delete_launch_template()
                .launch_template_id(id)
                .send()
                .await,
        )
        .map(|_| ())
    }
}

/// The latest version of each template of `ids`, by id. One template is
/// asked by its id; more, by one listing of every template's latest
/// version (EC2 takes no list of ids here), paged and left as soon as
/// all of them are seen.
async fn latest_versions(
    c: &Clients,
    ids: &[&str],
) -> Result<HashMap<String, LaunchTemplateVersion>, DriverError> {
    let failed = |e| api("DescribeLaunchTemplateVersions", e);
    let ask = || {
        c.ec2
            .describe_launch_template_versions()
            .versions("$Latest")
    };
    let mut found = HashMap::new();
    if let [id] = ids {
        let out = ask().launch_template_id(*id).send().await.map_err(failed)?;
        found.extend(
            out.launch_template_versions
                .unwrap_or_default()
                .into_iter()
                .map(|v| (id.to_string(), v)),
        );
        return Ok(found);
    }
    let mut pages = ask().max_results(200).into_paginator().send();
    while found.len() < ids.len() {
        let Some(page) = pages.next().await else {
            break;
        };
        for v in page
            .map_err(failed)?
            .launch_template_versions
            .unwrap_or_default()
        {
            if let Some(id) = v.launch_template_id().filter(|id| ids.contains(id)) {
                found.insert(id.to_string(), v);
            }
        }
    }
    Ok(found)
}

/// The account a template belongs to, from the ARN of whoever made it
/// (`arn:aws:iam::ACCOUNT:...`): templates are not shared across
/// accounts, so a read of templates asks no GetCallerIdentity.
fn creator_account(t: &aws_sdk_ec2::types::LaunchTemplate) -> Option<&str> {
    t.created_by()?.split(':').nth(4).filter(|a| !a.is_empty())
}
