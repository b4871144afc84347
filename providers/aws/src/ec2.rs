//! EC2 networking: `aws_vpc`, `aws_subnet`, `aws_internet_gateway`.
//!
//! Refresh is one Describe call per type (per page of ids) with an id
//! *filter*: unlike the `VpcIds`-style parameters, which fail the whole call
//! on one missing id, a filter leaves missing objects out, which is exactly
//! "deleted outside strata".

use crate::error::{api, deleted};
use crate::tags::{self, with_ownership};
use crate::values::{bool_value, boolean, object, required, str_value, string, string_map};
use crate::{Clients, Kind};
use async_trait::async_trait;
use aws_sdk_ec2::types::{
    AttributeBooleanValue, Filter, ResourceType, Tag, TagSpecification, Tenancy,
};
use std::collections::{BTreeMap, HashMap};
use strata_provider::{
    AttributeSchema as A, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

/// Ids per Describe call; EC2 accepts up to 200 filter values.
const PAGE: usize = 200;

/// EC2 objects also say which account owns them.
fn schema(attributes: Vec<(&str, A)>) -> ResourceSchema {
    let mut s = tags::taggable_schema(attributes);
    s.attributes.insert(
        "owner_id".into(),
        A::computed(Type::String, "The owning account."),
    );
    s
}

fn ec2_tags(m: &BTreeMap<String, String>) -> Vec<Tag> {
    m.iter()
        .map(|(k, v)| Tag::builder().key(k).value(v).build())
        .collect()
}

fn tag_spec(kind: ResourceType, planned: &Value, t: &Tags) -> TagSpecification {
    let all = with_ownership(&string_map(planned, "tags"), t);
    TagSpecification::builder()
        .resource_type(kind)
        .set_tags(Some(ec2_tags(&all)))
        .build()
}

fn tag_values(aws: &[Tag]) -> (Value, Value) {
    tags::values(
        aws.iter()
            .filter_map(|t| Some((t.key()?.to_string(), t.value().unwrap_or("").to_string()))),
    )
}

fn ownership_filters(t: &Tags) -> Vec<Filter> {
    vec![
        Filter::builder()
            .name(format!("tag:{}", tags::ADDRESS))
            .values(&t.address)
            .build(),
        Filter::builder()
            .name(format!("tag:{}", tags::LINEAGE))
            .values(&t.lineage)
            .build(),
    ]
}

fn id_filter(name: &str, ids: &[String]) -> Filter {
    Filter::builder()
        .name(name)
        .set_values(Some(ids.to_vec()))
        .build()
}

/// The objects found, in the order asked for.
fn in_order(objs: &[Value], mut found: HashMap<String, Value>) -> Vec<Option<Value>> {
    objs.iter()
        .map(|o| string(o, "id").and_then(|id| found.remove(&id)))
        .collect()
}

fn ids(objs: &[Value]) -> Vec<String> {
    objs.iter().filter_map(|o| string(o, "id")).collect()
}

/// Brings the user's tags on `id` from `prior`'s to `planned`'s.
async fn retag(c: &Clients, id: &str, prior: &Value, planned: &Value) -> Result<(), DriverError> {
    let (remove, set) = tags::changes(&string_map(prior, "tags"), &string_map(planned, "tags"));
    if !remove.is_empty() {
        let keys = remove
            .iter()
            .map(|k| Tag::builder().key(k).build())
            .collect();
        c.ec2
            .delete_tags()
            .resources(id)
            .set_tags(Some(keys))
            .send()
            .await
            .map_err(|e| api("DeleteTags", e))?;
    }
    if !set.is_empty() {
        c.ec2
            .create_tags()
            .resources(id)
            .set_tags(Some(ec2_tags(&set)))
            .send()
            .await
            .map_err(|e| api("CreateTags", e))?;
    }
    Ok(())
}

fn arn(c: &Clients, owner: Option<&str>, what: &str, id: &str) -> Value {
    let region = c
        .ec2
        .config()
        .region()
        .map(|r| r.to_string())
        .unwrap_or_default();
    Value::string(format!(
        "arn:aws:ec2:{region}:{}:{what}/{id}",
        owner.unwrap_or_default()
    ))
}

/// Reads one object back after a change, which must find it.
async fn reread(kind: &dyn Kind, c: &Clients, id: &str, what: &str) -> Result<Value, DriverError> {
    let probe = object(vec![("id", Value::string(id))]);
    kind.read(c, &[probe])
        .await?
        .pop()
        .flatten()
        .ok_or_else(|| DriverError::Api {
            operation: format!("reading {what} {id}"),
            detail: "it is not there right after being written".into(),
            retryable: true,
        })
}

/// EC2 types read with one Describe call and filters: refresh, crash
/// recovery and import are the same call with different filters.
#[async_trait]
trait Describe: Kind {
    /// The filter naming this type's id (`vpc-id`).
    const ID_FILTER: &'static str;

    async fn describe(
        &self,
        c: &Clients,
        filters: Vec<Filter>,
    ) -> Result<HashMap<String, Value>, DriverError>;

    async fn read_ids(
        &self,
        c: &Clients,
        objs: &[Value],
    ) -> Result<Vec<Option<Value>>, DriverError> {
        let mut found = HashMap::new();
        for page in ids(objs).chunks(PAGE) {
            found.extend(
                self.describe(c, vec![id_filter(Self::ID_FILTER, page)])
                    .await?,
            );
        }
        Ok(in_order(objs, found))
    }

    async fn tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(self
            .describe(c, ownership_filters(t))
            .await?
            .into_values()
            .collect())
    }

    async fn by_id(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        let filter = id_filter(Self::ID_FILTER, &[id.to_string()]);
        Ok(self.describe(c, vec![filter]).await?.remove(id))
    }
}

pub struct Vpc;

#[async_trait]
impl Describe for Vpc {
    const ID_FILTER: &'static str = "vpc-id";

    async fn describe(
        &self,
        c: &Clients,
        filters: Vec<Filter>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let out = c
            .ec2
            .describe_vpcs()
            .set_filters(Some(filters))
            .send()
            .await
            .map_err(|e| api("DescribeVpcs", e))?;
        let mut found = HashMap::new();
        for v in out.vpcs() {
            let Some(id) = v.vpc_id() else { continue };
            // DNS settings are per-VPC attributes, one call each.
            let mut dns = [None, None];
            for (i, attr) in ["enableDnsSupport", "enableDnsHostnames"]
                .into_iter()
                .enumerate()
            {
                let a = c
                    .ec2
                    .describe_vpc_attribute()
                    .vpc_id(id)
                    .attribute(attr.into())
                    .send()
                    .await
                    .map_err(|e| api("DescribeVpcAttribute", e))?;
                dns[i] = if i == 0 {
                    a.enable_dns_support().and_then(|b| b.value())
                } else {
                    a.enable_dns_hostnames().and_then(|b| b.value())
                };
            }
            let (tags, tags_all) = tag_values(v.tags());
            found.insert(
                id.to_string(),
                object(vec![
                    ("id", Value::string(id)),
                    ("arn", arn(c, v.owner_id(), "vpc", id)),
                    ("owner_id", str_value(v.owner_id())),
                    ("cidr_block", str_value(v.cidr_block())),
                    (
                        "instance_tenancy",
                        str_value(v.instance_tenancy().map(Tenancy::as_str)),
                    ),
                    ("enable_dns_support", bool_value(dns[0])),
                    ("enable_dns_hostnames", bool_value(dns[1])),
                    ("tags", tags),
                    ("tags_all", tags_all),
                ]),
            );
        }
        Ok(found)
    }
}

impl Vpc {
    async fn set_dns(&self, c: &Clients, id: &str, v: &Value) -> Result<(), DriverError> {
        for (name, on) in [
            ("enable_dns_support", boolean(v, "enable_dns_support")),
            ("enable_dns_hostnames", boolean(v, "enable_dns_hostnames")),
        ] {
            let Some(on) = on else { continue };
            let flag = AttributeBooleanValue::builder().value(on).build();
            let req = c.ec2.modify_vpc_attribute().vpc_id(id);
            let req = if name == "enable_dns_support" {
                req.enable_dns_support(flag)
            } else {
                req.enable_dns_hostnames(flag)
            };
            req.send().await.map_err(|e| api("ModifyVpcAttribute", e))?;
        }
        Ok(())
    }
}

#[async_trait]
impl Kind for Vpc {
    fn schema(&self) -> ResourceSchema {
        schema(vec![
            (
                "cidr_block",
                A::required(Type::String, "The IPv4 CIDR block.").force_new(),
            ),
            (
                "instance_tenancy",
                A::optional(Type::String, "default or dedicated.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "enable_dns_support",
                A::optional(Type::Bool, "DNS resolution in the VPC."),
            ),
            (
                "enable_dns_hostnames",
                A::optional(Type::Bool, "DNS hostnames for instances."),
            ),
        ])
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        tags::plan_taggable(
            schema,
            req,
            &[
                ("enable_dns_support", Value::Bool(true)),
                ("enable_dns_hostnames", Value::Bool(false)),
            ],
        )
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        self.read_ids(c, objs).await
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<Value, DriverError> {
        let out = c
            .ec2
            .create_vpc()
            .cidr_block(required(planned, "aws_vpc", "cidr_block")?)
            .set_instance_tenancy(
                string(planned, "instance_tenancy").map(|s| Tenancy::from(s.as_str())),
            )
            .tag_specifications(tag_spec(ResourceType::Vpc, planned, t))
            .send()
            .await
            .map_err(|e| api("CreateVpc", e))?;
        let id = out
            .vpc()
            .and_then(|v| v.vpc_id())
            .ok_or_else(|| DriverError::Api {
                operation: "CreateVpc".into(),
                detail: "the response has no VPC id".into(),
                retryable: false,
            })?
            .to_string();
        self.set_dns(c, &id, planned).await?;
        reread(self, c, &id, "VPC").await
    }

    async fn update(
        &self,
        c: &Clients,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let id = required(prior, "aws_vpc", "id")?;
        self.set_dns(c, &id, planned).await?;
        retag(c, &id, prior, planned).await?;
        reread(self, c, &id, "VPC").await
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let id = required(prior, "aws_vpc", "id")?;
        deleted("DeleteVpc", c.ec2.delete_vpc().vpc_id(&id).send().await).map(|_| ())
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        self.tagged(c, t).await
    }

    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        self.by_id(c, id).await
    }
}

pub struct Subnet;

#[async_trait]
impl Describe for Subnet {
    const ID_FILTER: &'static str = "subnet-id";

    async fn describe(
        &self,
        c: &Clients,
        filters: Vec<Filter>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let out = c
            .ec2
            .describe_subnets()
            .set_filters(Some(filters))
            .send()
            .await
            .map_err(|e| api("DescribeSubnets", e))?;
        let mut found = HashMap::new();
        for s in out.subnets() {
            let Some(id) = s.subnet_id() else { continue };
            let (tags, tags_all) = tag_values(s.tags());
            let arn = match s.subnet_arn() {
                Some(a) => Value::string(a),
                None => arn(c, s.owner_id(), "subnet", id),
            };
            found.insert(
                id.to_string(),
                object(vec![
                    ("id", Value::string(id)),
                    ("arn", arn),
                    ("owner_id", str_value(s.owner_id())),
                    ("vpc_id", str_value(s.vpc_id())),
                    ("cidr_block", str_value(s.cidr_block())),
                    ("availability_zone", str_value(s.availability_zone())),
                    (
                        "map_public_ip_on_launch",
                        bool_value(s.map_public_ip_on_launch()),
                    ),
                    ("tags", tags),
                    ("tags_all", tags_all),
                ]),
            );
        }
        Ok(found)
    }
}

impl Subnet {
    async fn set_public_ip(&self, c: &Clients, id: &str, on: bool) -> Result<(), DriverError> {
        c.ec2
            .modify_subnet_attribute()
            .subnet_id(id)
            .map_public_ip_on_launch(AttributeBooleanValue::builder().value(on).build())
            .send()
            .await
            .map_err(|e| api("ModifySubnetAttribute", e))?;
        Ok(())
    }
}

#[async_trait]
impl Kind for Subnet {
    fn schema(&self) -> ResourceSchema {
        schema(vec![
            ("vpc_id", A::required(Type::String, "The VPC.").force_new()),
            (
                "cidr_block",
                A::required(Type::String, "The IPv4 CIDR block.").force_new(),
            ),
            (
                "availability_zone",
                A::optional(Type::String, "The zone.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "map_public_ip_on_launch",
                A::optional(Type::Bool, "Public IPs for instances launched here."),
            ),
        ])
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        tags::plan_taggable(
            schema,
            req,
            &[("map_public_ip_on_launch", Value::Bool(false))],
        )
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        self.read_ids(c, objs).await
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<Value, DriverError> {
        let out = c
            .ec2
            .create_subnet()
            .vpc_id(required(planned, "aws_subnet", "vpc_id")?)
            .cidr_block(required(planned, "aws_subnet", "cidr_block")?)
            .set_availability_zone(string(planned, "availability_zone"))
            .tag_specifications(tag_spec(ResourceType::Subnet, planned, t))
            .send()
            .await
            .map_err(|e| api("CreateSubnet", e))?;
        let id = out
            .subnet()
            .and_then(|s| s.subnet_id())
            .ok_or_else(|| DriverError::Api {
                operation: "CreateSubnet".into(),
                detail: "the response has no subnet id".into(),
                retryable: false,
            })?
            .to_string();
        if boolean(planned, "map_public_ip_on_launch") == Some(true) {
            self.set_public_ip(c, &id, true).await?;
        }
        reread(self, c, &id, "subnet").await
    }

    async fn update(
        &self,
        c: &Clients,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let id = required(prior, "aws_subnet", "id")?;
        let want = boolean(planned, "map_public_ip_on_launch").unwrap_or(false);
        if boolean(prior, "map_public_ip_on_launch") != Some(want) {
            self.set_public_ip(c, &id, want).await?;
        }
        retag(c, &id, prior, planned).await?;
        reread(self, c, &id, "subnet").await
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let id = required(prior, "aws_subnet", "id")?;
        deleted(
            "DeleteSubnet",
            c.ec2.delete_subnet().subnet_id(&id).send().await,
        )
        .map(|_| ())
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        self.tagged(c, t).await
    }

    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        self.by_id(c, id).await
    }
}

pub struct InternetGateway;

#[async_trait]
impl Describe for InternetGateway {
    const ID_FILTER: &'static str = "internet-gateway-id";

    async fn describe(
        &self,
        c: &Clients,
        filters: Vec<Filter>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let out = c
            .ec2
            .describe_internet_gateways()
            .set_filters(Some(filters))
            .send()
            .await
            .map_err(|e| api("DescribeInternetGateways", e))?;
        let mut found = HashMap::new();
        for g in out.internet_gateways() {
            let Some(id) = g.internet_gateway_id() else {
                continue;
            };
            let (tags, tags_all) = tag_values(g.tags());
            let vpc = g.attachments().first().and_then(|a| a.vpc_id());
            found.insert(
                id.to_string(),
                object(vec![
                    ("id", Value::string(id)),
                    ("arn", arn(c, g.owner_id(), "internet-gateway", id)),
                    ("owner_id", str_value(g.owner_id())),
                    ("vpc_id", str_value(vpc)),
                    ("tags", tags),
                    ("tags_all", tags_all),
                ]),
            );
        }
        Ok(found)
    }
}

impl InternetGateway {
    async fn attach(&self, c: &Clients, id: &str, vpc: &str) -> Result<(), DriverError> {
        c.ec2
            .attach_internet_gateway()
            .internet_gateway_id(id)
            .vpc_id(vpc)
            .send()
            .await
            .map_err(|e| api("AttachInternetGateway", e))?;
        Ok(())
    }

    async fn detach(&self, c: &Clients, id: &str, vpc: &str) -> Result<(), DriverError> {
        deleted(
            "DetachInternetGateway",
            c.ec2
                .detach_internet_gateway()
                .internet_gateway_id(id)
                .vpc_id(vpc)
                .send()
                .await,
        )
        .map(|_| ())
    }
}

#[async_trait]
impl Kind for InternetGateway {
    fn schema(&self) -> ResourceSchema {
        schema(vec![(
            "vpc_id",
            A::optional(Type::String, "The VPC to attach to."),
        )])
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        tags::plan_taggable(schema, req, &[])
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        self.read_ids(c, objs).await
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<Value, DriverError> {
        let out = c
            .ec2
            .create_internet_gateway()
            .tag_specifications(tag_spec(ResourceType::InternetGateway, planned, t))
            .send()
            .await
            .map_err(|e| api("CreateInternetGateway", e))?;
        let id = out
            .internet_gateway()
            .and_then(|g| g.internet_gateway_id())
            .ok_or_else(|| DriverError::Api {
                operation: "CreateInternetGateway".into(),
                detail: "the response has no gateway id".into(),
                retryable: false,
            })?
            .to_string();
        if let Some(vpc) = string(planned, "vpc_id") {
            self.attach(c, &id, &vpc).await?;
        }
        reread(self, c, &id, "internet gateway").await
    }

    async fn update(
        &self,
        c: &Clients,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let id = required(prior, "aws_internet_gateway", "id")?;
        let (had, want) = (string(prior, "vpc_id"), string(planned, "vpc_id"));
        if had != want {
            if let Some(v) = &had {
                self.detach(c, &id, v).await?;
            }
            if let Some(v) = &want {
                self.attach(c, &id, v).await?;
            }
        }
        retag(c, &id, prior, planned).await?;
        reread(self, c, &id, "internet gateway").await
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let id = required(prior, "aws_internet_gateway", "id")?;
        if let Some(v) = string(prior, "vpc_id") {
            self.detach(c, &id, &v).await?;
        }
        deleted(
            "DeleteInternetGateway",
            c.ec2
                .delete_internet_gateway()
                .internet_gateway_id(&id)
                .send()
                .await,
        )
        .map(|_| ())
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        self.tagged(c, t).await
    }

    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        self.by_id(c, id).await
    }
}
