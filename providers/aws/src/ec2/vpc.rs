//! `aws_vpc`, `aws_subnet`, `aws_internet_gateway`.

use super::{arn, created, described, schema, tag_spec, Created, Ec2Type, Select};
use crate::error::{api, code, deleted};
use crate::values::{bool_value, boolean, required, str_value, string};
use crate::Clients;
use async_trait::async_trait;
use aws_sdk_ec2::types::{
    AttributeBooleanValue, Filter, ResourceType, Subnet as AwsSubnet, Tenancy, VpcAttributeName,
};
use std::collections::HashMap;
use strata_provider::{
    AttributeSchema as A, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

pub struct Vpc;

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
impl Ec2Type for Vpc {
    const TYPE: &'static str = "aws_vpc";
    const VERSION: u64 = 1;

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
            (
                "main_route_table_id",
                A::computed(Type::String, "The route table AWS made with the VPC."),
            ),
            (
                "default_security_group_id",
                A::computed(Type::String, "The security group AWS made with the VPC."),
            ),
        ])
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        crate::tags::plan_taggable(
            schema,
            req,
            &[
                ("enable_dns_support", Value::Bool(true)),
                ("enable_dns_hostnames", Value::Bool(false)),
            ],
        )
    }

    async fn describe(
        &self,
        c: &Clients,
        select: Select<'_>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let out = c
            .ec2
            .describe_vpcs()
            .set_filters(Some(select.filters("vpc-id")))
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(|e| api("DescribeVpcs", e))?;
        let ids: Vec<String> = out
            .iter()
            .filter_map(|v| v.vpc_id().map(str::to_string))
            .collect();
        let kept = select.keep(&out, |v| v.vpc_id(), |v| v.tags());
        let kept_ids: Vec<&str> = kept.iter().map(|(id, _)| *id).collect();
        // The defaults and every VPC's DNS settings are asked side by
        // side: the read takes two round trips, not two per VPC.
        let (mut defaults, mut dns) =
            futures::future::try_join(Vpc::defaults(c, &ids), Vpc::dns(c, &kept_ids)).await?;
        let mut found = HashMap::new();
        for (id, v) in kept {
            let [support, hostnames] = dns.remove(id).unwrap_or_default();
            let (main_rt, default_sg) = defaults.remove(id).unwrap_or_default();
            found.insert(
                id.to_string(),
                described(
                    id,
                    arn(c, v.owner_id(), "vpc", id).await?,
                    v.owner_id(),
                    v.tags(),
                    vec![
                        ("cidr_block", str_value(v.cidr_block())),
                        (
                            "instance_tenancy",
                            str_value(v.instance_tenancy().map(Tenancy::as_str)),
                        ),
                        ("enable_dns_support", bool_value(support)),
                        ("enable_dns_hostnames", bool_value(hostnames)),
                        ("main_route_table_id", str_value(main_rt.as_deref())),
                        (
                            "default_security_group_id",
                            str_value(default_sg.as_deref()),
                        ),
                    ],
                ),
            );
        }
        Ok(found)
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<String, DriverError> {
        let out = c
            .ec2
            .create_vpc()
            .cidr_block(required(planned, Self::TYPE, "cidr_block")?)
            .set_instance_tenancy(
                string(planned, "instance_tenancy").map(|s| Tenancy::from(s.as_str())),
            )
            .tag_specifications(tag_spec(ResourceType::Vpc, planned, t))
            .send()
            .await
            .map_err(|e| api("CreateVpc", e))?;
        let id = created("CreateVpc", out.vpc().and_then(|v| v.vpc_id()))?;
        self.set_dns(c, &id, planned).await?;
        Ok(id)
    }

    async fn update(
        &self,
        c: &Clients,
        id: &str,
        _prior: &Value,
        planned: &Value,
    ) -> Result<Option<String>, DriverError> {
        self.set_dns(c, id, planned).await?;
        Ok(None)
    }

    async fn delete(&self, c: &Clients, id: &str, _prior: &Value) -> Result<(), DriverError> {
        deleted("DeleteVpc", c.ec2.delete_vpc().vpc_id(id).send().await).map(|_| ())
    }
}

impl Vpc {
    /// `enableDnsSupport` and `enableDnsHostnames` of each VPC of `ids`:
    /// per-VPC attributes, one call each (AWS has no list of them), a few
    /// VPCs at once.
    async fn dns(
        c: &Clients,
        ids: &[&str],
    ) -> Result<HashMap<String, [Option<bool>; 2]>, DriverError> {
        use futures::{StreamExt, TryStreamExt};
        // Made first: a closure mapped inside the stream would not be
        // `Send` for every lifetime, as the driver's futures must be.
        let asks: Vec<_> = ids
            .iter()
            .map(|id| Vpc::dns_of(c, id.to_string()))
            .collect();
        futures::stream::iter(asks)
            .buffer_unordered(VPCS_AT_ONCE)
            .try_collect()
            .await
    }

    /// Both DNS settings of one VPC, asked side by side.
    async fn dns_of(c: &Clients, id: String) -> Result<(String, [Option<bool>; 2]), DriverError> {
        let ask = |attr: VpcAttributeName| {
            c.ec2
                .describe_vpc_attribute()
                .vpc_id(&id)
                .attribute(attr)
                .send()
        };
        let (support, hostnames) = futures::future::try_join(
            ask(VpcAttributeName::EnableDnsSupport),
            ask(VpcAttributeName::EnableDnsHostnames),
        )
        .await
        .map_err(|e| api("DescribeVpcAttribute", e))?;
        let on = |b: Option<&AttributeBooleanValue>| b.and_then(|b| b.value());
        let read = [
            on(support.enable_dns_support()),
            on(hostnames.enable_dns_hostnames()),
        ];
        Ok((id, read))
    }

    /// The main route table and default security group AWS makes with
    /// every VPC (which routes for subnets without an association, and
    /// which Terraform exposes so they can be adopted): one call each for
    /// all of `vpcs`.
    async fn defaults(
        c: &Clients,
        vpcs: &[String],
    ) -> Result<HashMap<String, (Option<String>, Option<String>)>, DriverError> {
        let mut out: HashMap<String, (Option<String>, Option<String>)> = HashMap::new();
        if vpcs.is_empty() {
            return Ok(out);
        }
        let by = |name: &str, values: &[String]| {
            Filter::builder()
                .name(name)
                .set_values(Some(values.to_vec()))
                .build()
        };
        let rts = c
            .ec2
            .describe_route_tables()
            .filters(by("vpc-id", vpcs))
            .filters(by("association.main", &["true".into()]))
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>();
        let sgs = c
            .ec2
            .describe_security_groups()
            .filters(by("vpc-id", vpcs))
            .filters(by("group-name", &["default".into()]))
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>();
        let (rts, sgs) = futures::future::join(rts, sgs).await;
        let rts = rts.map_err(|e| api("DescribeRouteTables", e))?;
        let sgs = sgs.map_err(|e| api("DescribeSecurityGroups", e))?;
        for r in &rts {
            if let (Some(vpc), Some(id)) = (r.vpc_id(), r.route_table_id()) {
                out.entry(vpc.to_string()).or_default().0 = Some(id.to_string());
            }
        }
        for g in &sgs {
            if let (Some(vpc), Some(id)) = (g.vpc_id(), g.group_id()) {
                out.entry(vpc.to_string()).or_default().1 = Some(id.to_string());
            }
        }
        Ok(out)
    }
}

/// VPCs whose attributes are asked at once: enough to hide the round
/// trips of a few, few enough to stay inside EC2's request budget burst.
const VPCS_AT_ONCE: usize = 8;

pub struct Subnet;

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
impl Ec2Type for Subnet {
    const TYPE: &'static str = "aws_subnet";
    const VERSION: u64 = 1;

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
        crate::tags::plan_taggable(
            schema,
            req,
            &[("map_public_ip_on_launch", Value::Bool(false))],
        )
    }

    async fn describe(
        &self,
        c: &Clients,
        select: Select<'_>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let out = c
            .ec2
            .describe_subnets()
            .set_filters(Some(select.filters("subnet-id")))
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(|e| api("DescribeSubnets", e))?;
        let mut found = HashMap::new();
        for (id, s) in select.keep(&out, |s| s.subnet_id(), |s| s.tags()) {
            found.insert(id.to_string(), subnet_value(c, id, s).await?);
        }
        Ok(found)
    }

    /// CreateSubnet answers with the whole subnet: nothing to read back.
    async fn create_object(
        &self,
        c: &Clients,
        planned: &Value,
        t: &Tags,
    ) -> Result<Created, DriverError> {
        let out = c
            .ec2
            .create_subnet()
            .vpc_id(required(planned, Self::TYPE, "vpc_id")?)
            .cidr_block(required(planned, Self::TYPE, "cidr_block")?)
            .set_availability_zone(string(planned, "availability_zone"))
            .tag_specifications(tag_spec(ResourceType::Subnet, planned, t))
            .send()
            .await
            .map_err(|e| api("CreateSubnet", e))?;
        let id = created("CreateSubnet", out.subnet().and_then(|s| s.subnet_id()))?;
        let public = boolean(planned, "map_public_ip_on_launch") == Some(true);
        if public {
            self.set_public_ip(c, &id, true).await?;
        }
        let object = match out.subnet() {
            Some(s) => {
                let mut v = subnet_value(c, &id, s).await?;
                if let Value::Object(m) = &mut v {
                    m.insert("map_public_ip_on_launch".into(), Value::Bool(public));
                }
                Some(v)
            }
            None => None,
        };
        Ok(Created { id, object })
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<String, DriverError> {
        Ok(self.create_object(c, planned, t).await?.id)
    }

    async fn update(
        &self,
        c: &Clients,
        id: &str,
        prior: &Value,
        planned: &Value,
    ) -> Result<Option<String>, DriverError> {
        let want = boolean(planned, "map_public_ip_on_launch").unwrap_or(false);
        if boolean(prior, "map_public_ip_on_launch") != Some(want) {
            self.set_public_ip(c, id, want).await?;
        }
        Ok(None)
    }

    async fn delete(&self, c: &Clients, id: &str, _prior: &Value) -> Result<(), DriverError> {
        deleted(
            "DeleteSubnet",
            c.ec2.delete_subnet().subnet_id(id).send().await,
        )
        .map(|_| ())
    }
}

/// A described subnet as the schema has it.
async fn subnet_value(c: &Clients, id: &str, s: &AwsSubnet) -> Result<Value, DriverError> {
    let arn = match s.subnet_arn() {
        Some(a) => Value::string(a),
        None => arn(c, s.owner_id(), "subnet", id).await?,
    };
    Ok(described(
        id,
        arn,
        s.owner_id(),
        s.tags(),
        vec![
            ("vpc_id", str_value(s.vpc_id())),
            ("cidr_block", str_value(s.cidr_block())),
            ("availability_zone", str_value(s.availability_zone())),
            (
                "map_public_ip_on_launch",
                bool_value(s.map_public_ip_on_launch()),
            ),
        ],
    ))
}

pub struct InternetGateway;

impl InternetGateway {
    async fn attach(&self, c: &Clients, id: &str, vpc: &str) -> Result<(), DriverError> {
        let r = c
            .ec2
            .attach_internet_gateway()
            .internet_gateway_id(id)
            .vpc_id(vpc)
            .send()
            .await;
        match r {
            Ok(_) => Ok(()),
            // The SDK's retry of a call whose answer was lost after EC2
            // attached the gateway: done, if it is attached where asked.
            Err(e) if code(&e) == Some("Resource.AlreadyAssociated") => {
                let out = c
                    .ec2
                    .describe_internet_gateways()
                    .internet_gateway_ids(id)
                    .send()
                    .await
                    .map_err(|e| api("DescribeInternetGateways", e))?;
                let attached = out
                    .internet_gateways()
                    .iter()
                    .flat_map(|g| g.attachments())
                    .any(|a| a.vpc_id() == Some(vpc));
                if attached {
                    Ok(())
                } else {
                    Err(api("AttachInternetGateway", e))
                }
            }
            Err(e) => Err(api("AttachInternetGateway", e)),
        }
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
impl Ec2Type for InternetGateway {
    const TYPE: &'static str = "aws_internet_gateway";

    fn schema(&self) -> ResourceSchema {
        schema(vec![(
            "vpc_id",
            A::optional(Type::String, "The VPC to attach to."),
        )])
    }

    async fn describe(
        &self,
        c: &Clients,
        select: Select<'_>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let out = c
            .ec2
            .describe_internet_gateways()
            .set_filters(Some(select.filters("internet-gateway-id")))
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(|e| api("DescribeInternetGateways", e))?;
        let mut found = HashMap::new();
        for (id, g) in select.keep(&out, |g| g.internet_gateway_id(), |g| g.tags()) {
            let vpc = g.attachments().first().and_then(|a| a.vpc_id());
            found.insert(
                id.to_string(),
                described(
                    id,
                    arn(c, g.owner_id(), "internet-gateway", id).await?,
                    g.owner_id(),
                    g.tags(),
                    vec![("vpc_id", str_value(vpc))],
                ),
            );
        }
        Ok(found)
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<String, DriverError> {
        let out = c
            .ec2
            .create_internet_gateway()
            .tag_specifications(tag_spec(ResourceType::InternetGateway, planned, t))
            .send()
            .await
            .map_err(|e| api("CreateInternetGateway", e))?;
        let id = created(
            "CreateInternetGateway",
            out.internet_gateway().and_then(|g| g.internet_gateway_id()),
        )?;
        if let Some(vpc) = string(planned, "vpc_id") {
            self.attach(c, &id, &vpc).await?;
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
        let (had, want) = (string(prior, "vpc_id"), string(planned, "vpc_id"));
        if had != want {
            if let Some(v) = &had {
                self.detach(c, id, v).await?;
            }
            if let Some(v) = &want {
                self.attach(c, id, v).await?;
            }
        }
        Ok(None)
    }

    async fn delete(&self, c: &Clients, id: &str, prior: &Value) -> Result<(), DriverError> {
        if let Some(v) = string(prior, "vpc_id") {
            self.detach(c, id, &v).await?;
        }
        deleted(
            "DeleteInternetGateway",
            c.ec2
                .delete_internet_gateway()
                .internet_gateway_id(id)
                .send()
                .await,
        )
        .map(|_| ())
    }
}
