//! `aws_eip` and `aws_nat_gateway`: the way out to the internet for
//! private subnets, where GPU nodes live.

use super::{arn, created, described, schema, tag_spec, Ec2Type, Select};
use crate::error::{api, deleted};
use crate::values::{required, str_value, string, timeouts_block};
use crate::wait::{gone, ready, timeout, Poll};
use crate::Clients;
use async_trait::async_trait;
use aws_sdk_ec2::types::{ConnectivityType, DomainType, NatGatewayState, ResourceType};
use std::collections::HashMap;
use std::time::Duration;
use strata_provider::{
    AttributeSchema as A, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

pub struct Eip;

#[async_trait]
impl Ec2Type for Eip {
    const TYPE: &'static str = "aws_eip";

    fn schema(&self) -> ResourceSchema {
        let mut s = schema(vec![
            (
                "domain",
                A::optional(Type::String, "vpc (the only kind today).")
                    .and_computed()
                    .force_new(),
            ),
            (
                "public_ipv4_pool",
                A::optional(Type::String, "The pool to allocate from.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "allocation_id",
                A::computed(Type::String, "The allocation id (also the id)."),
            ),
            (
                "association_id",
                A::computed(Type::String, "What the address is associated with."),
            ),
            ("public_ip", A::computed(Type::String, "The address.")),
            (
                "private_ip",
                A::computed(Type::String, "The private address it maps to."),
            ),
            (
                "network_interface",
                A::computed(Type::String, "The network interface it is on."),
            ),
        ]);
        // The AWS provider keeps no owner for an Elastic IP.
        s.attributes.remove("owner_id");
        s
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        crate::tags::plan_taggable(schema, req, &[("domain", Value::string("vpc"))])
    }

    async fn describe(
        &self,
        c: &Clients,
        select: Select<'_>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let out = c
            .ec2
            .describe_addresses()
            .set_filters(Some(select.filters("allocation-id")))
            .send()
            .await
            .map_err(|e| api("DescribeAddresses", e))?;
        let mut found = HashMap::new();
        for (id, a) in select.keep(out.addresses(), |a| a.allocation_id(), |a| a.tags()) {
            found.insert(
                id.to_string(),
                described(
                    id,
                    arn(c, None, "elastic-ip", id).await?,
                    None,
                    a.tags(),
                    vec![
                        ("domain", str_value(a.domain().map(DomainType::as_str))),
                        ("public_ipv4_pool", str_value(a.public_ipv4_pool())),
                        ("allocation_id", Value::string(id)),
                        ("association_id", str_value(a.association_id())),
                        ("public_ip", str_value(a.public_ip())),
                        ("private_ip", str_value(a.private_ip_address())),
                        ("network_interface", str_value(a.network_interface_id())),
                    ],
                ),
            );
        }
        Ok(found)
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<String, DriverError> {
        let out = c
            .ec2
            .allocate_address()
            .domain(DomainType::Vpc)
            .set_public_ipv4_pool(string(planned, "public_ipv4_pool"))
            .tag_specifications(tag_spec(ResourceType::ElasticIp, planned, t))
            .send()
            .await
            .map_err(|e| api("AllocateAddress", e))?;
        created("AllocateAddress", out.allocation_id())
    }

    async fn delete(&self, c: &Clients, id: &str, _prior: &Value) -> Result<(), DriverError> {
        deleted(
            "ReleaseAddress",
            c.ec2.release_address().allocation_id(id).send().await,
        )
        .map(|_| ())
    }
}

pub struct NatGateway;

impl NatGateway {
    /// One look at the gateway for a waiter.
    async fn look(&self, c: &Clients, id: &str) -> Result<Poll, DriverError> {
        let out = c
            .ec2
            .describe_nat_gateways()
            .filter(
                aws_sdk_ec2::types::Filter::builder()
                    .name("nat-gateway-id")
                    .values(id)
                    .build(),
            )
            .send()
            .await
            .map_err(|e| api("DescribeNatGateways", e))?;
        let Some(g) = out.nat_gateways().first() else {
            return Ok(Poll::Gone);
        };
        Ok(match g.state() {
            Some(NatGatewayState::Available) => Poll::Ready(Value::string(id)),
            Some(NatGatewayState::Deleted) => Poll::Gone,
            Some(NatGatewayState::Failed) => Poll::Failed(crate::error::classify(
                "NAT gateway",
                format!(
                    "{}: {}",
                    g.failure_code().unwrap_or("Failed"),
                    g.failure_message().unwrap_or("the NAT gateway failed")
                ),
                false,
            )),
            s => Poll::Pending(s.map_or("pending", NatGatewayState::as_str).to_string()),
        })
    }
}

#[async_trait]
impl Ec2Type for NatGateway {
    const TYPE: &'static str = "aws_nat_gateway";

    fn schema(&self) -> ResourceSchema {
        let mut s = schema(vec![
            (
                "subnet_id",
                A::required(Type::String, "The (public) subnet it sits in.").force_new(),
            ),
            (
                "allocation_id",
                A::optional(Type::String, "The Elastic IP it uses (public gateways).").force_new(),
            ),
            (
                "connectivity_type",
                A::optional(Type::String, "public or private.").force_new(),
            ),
            (
                "private_ip",
                A::optional(Type::String, "Its private address.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "public_ip",
                A::computed(Type::String, "Its public address."),
            ),
            (
                "network_interface_id",
                A::computed(Type::String, "Its network interface."),
            ),
            (
                "association_id",
                A::computed(Type::String, "The Elastic IP association."),
            ),
        ]);
        // The AWS provider keeps neither for a NAT gateway.
        s.attributes.remove("owner_id");
        s.attributes.remove("arn");
        s.blocks.insert("timeouts".into(), timeouts_block());
        s
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        crate::tags::plan_taggable(
            schema,
            req,
            &[("connectivity_type", Value::string("public"))],
        )
    }

    async fn describe(
        &self,
        c: &Clients,
        select: Select<'_>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let out = c
            .ec2
            .describe_nat_gateways()
            .set_filter(Some(select.filters("nat-gateway-id")))
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(|e| api("DescribeNatGateways", e))?;
        let mut found = HashMap::new();
        for (id, g) in select.keep(&out, |g| g.nat_gateway_id(), |g| g.tags()) {
            // A deleted gateway stays listed for an hour; it is gone.
            if g.state() == Some(&NatGatewayState::Deleted) {
                continue;
            }
            let addr = g.nat_gateway_addresses().first();
            found.insert(
                id.to_string(),
                described(
                    id,
                    arn(c, None, "natgateway", id).await?,
                    None,
                    g.tags(),
                    vec![
                        ("subnet_id", str_value(g.subnet_id())),
                        (
                            "allocation_id",
                            str_value(addr.and_then(|a| a.allocation_id())),
                        ),
                        (
                            "connectivity_type",
                            str_value(g.connectivity_type().map(ConnectivityType::as_str)),
                        ),
                        ("private_ip", str_value(addr.and_then(|a| a.private_ip()))),
                        ("public_ip", str_value(addr.and_then(|a| a.public_ip()))),
                        (
                            "network_interface_id",
                            str_value(addr.and_then(|a| a.network_interface_id())),
                        ),
                        (
                            "association_id",
                            str_value(addr.and_then(|a| a.association_id())),
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
            .create_nat_gateway()
            .subnet_id(required(planned, Self::TYPE, "subnet_id")?)
            .set_allocation_id(string(planned, "allocation_id"))
            .set_connectivity_type(
                string(planned, "connectivity_type").map(|s| ConnectivityType::from(s.as_str())),
            )
            .set_private_ip_address(string(planned, "private_ip"))
            .tag_specifications(tag_spec(ResourceType::Natgateway, planned, t))
            .send()
            .await
            .map_err(|e| api("CreateNatGateway", e))?;
        let id = created(
            "CreateNatGateway",
            out.nat_gateway().and_then(|g| g.nat_gateway_id()),
        )?;
        let limit = timeout(planned, "create", Duration::from_secs(10 * 60));
        ready(&format!("waiting for NAT gateway {id}"), limit, || {
            self.look(c, &id)
        })
        .await?;
        Ok(id)
    }

    async fn delete(&self, c: &Clients, id: &str, prior: &Value) -> Result<(), DriverError> {
        if !deleted(
            "DeleteNatGateway",
            c.ec2.delete_nat_gateway().nat_gateway_id(id).send().await,
        )? {
            return Ok(());
        }
        let limit = timeout(prior, "delete", Duration::from_secs(30 * 60));
        gone(&format!("deleting NAT gateway {id}"), limit, || {
            self.look(c, id)
        })
        .await
    }
}
