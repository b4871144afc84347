//! `aws_route_table` (with inline `route` blocks) and
//! `aws_route_table_association`.

use super::{
    arn, created, described, schema, tag_spec, unmanaged_when_empty, Created, Ec2Type, Select,
};
use crate::error::{api, code, deleted};
use crate::values::{get, object, required, same, str_value, string};
use crate::Clients;
use async_trait::async_trait;
use aws_sdk_ec2::types::{Filter, ResourceType, Route, RouteOrigin};
use std::collections::{BTreeMap, HashMap};
use strata_provider::{
    AttributeSchema as A, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

/// A route's destination attributes, one of which each route sets.
const DESTINATIONS: [&str; 3] = [
    "cidr_block",
    "ipv6_cidr_block",
    "destination_prefix_list_id",
];

/// A route's target attributes, one of which each route sets.
const TARGETS: [&str; 10] = [
    "carrier_gateway_id",
    "core_network_arn",
    "local_gateway_id",
    "gateway_id",
    "nat_gateway_id",
    "network_interface_id",
    "transit_gateway_id",
    "vpc_endpoint_id",
    "vpc_peering_connection_id",
    "egress_only_gateway_id",
];

fn route_value(r: &Route) -> Value {
    // An internet gateway and a VPC endpoint both come back as GatewayId.
    let gateway = r.gateway_id().filter(|g| !g.starts_with("vpce-"));
    let endpoint = r.gateway_id().filter(|g| g.starts_with("vpce-"));
    object(vec![
        ("carrier_gateway_id", str_value(r.carrier_gateway_id())),
        ("core_network_arn", str_value(r.core_network_arn())),
        ("local_gateway_id", str_value(r.local_gateway_id())),
        ("cidr_block", str_value(r.destination_cidr_block())),
        (
            "ipv6_cidr_block",
            str_value(r.destination_ipv6_cidr_block()),
        ),
        (
            "destination_prefix_list_id",
            str_value(r.destination_prefix_list_id()),
        ),
        ("gateway_id", str_value(gateway)),
        ("nat_gateway_id", str_value(r.nat_gateway_id())),
        ("network_interface_id", str_value(r.network_interface_id())),
        ("transit_gateway_id", str_value(r.transit_gateway_id())),
        ("vpc_endpoint_id", str_value(endpoint)),
        (
            "vpc_peering_connection_id",
            str_value(r.vpc_peering_connection_id()),
        ),
        (
            "egress_only_gateway_id",
            str_value(r.egress_only_internet_gateway_id()),
        ),
    ])
}

/// The routes of a plan or a state, by destination.
fn routes_of(v: &Value) -> BTreeMap<String, Value> {
    get(v, "route")
        .and_then(|s| s.unmarked().elements().map(<[Value]>::to_vec))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|r| {
            let dest = DESTINATIONS.iter().find_map(|d| string(&r, d))?;
            Some((dest, r))
        })
        .collect()
}

/// The destination and target of one route, as EC2's route calls take
/// them; `$op` is a CreateRoute or ReplaceRoute builder.
macro_rules! route_request {
    ($op:expr, $r:expr) => {{
        let r = $r;
        $op.set_destination_cidr_block(string(r, "cidr_block"))
            .set_destination_ipv6_cidr_block(string(r, "ipv6_cidr_block"))
            .set_destination_prefix_list_id(string(r, "destination_prefix_list_id"))
            .set_carrier_gateway_id(string(r, "carrier_gateway_id"))
            .set_core_network_arn(string(r, "core_network_arn"))
            .set_local_gateway_id(string(r, "local_gateway_id"))
            .set_gateway_id(string(r, "gateway_id").or_else(|| string(r, "vpc_endpoint_id")))
            .set_nat_gateway_id(string(r, "nat_gateway_id"))
            .set_network_interface_id(string(r, "network_interface_id"))
            .set_transit_gateway_id(string(r, "transit_gateway_id"))
            .set_vpc_peering_connection_id(string(r, "vpc_peering_connection_id"))
            .set_egress_only_internet_gateway_id(string(r, "egress_only_gateway_id"))
    }};
}

pub struct RouteTable;

/// One route: every destination and target, one of each set.
fn route_type() -> Type {
    Type::object(
        DESTINATIONS
            .iter()
            .chain(&TARGETS)
            .map(|k| (k.to_string(), Type::String))
            .collect(),
    )
}

impl RouteTable {
    async fn create_route(&self, c: &Clients, id: &str, r: &Value) -> Result<(), DriverError> {
        let made = route_request!(c.ec2.create_route().route_table_id(id), r)
            .send()
            .await;
        match made {
            Ok(_) => Ok(()),
            // The table is ours, so a route already there for this
            // destination is too (most often made by this call's first
            // attempt, whose answer was lost): point it where planned.
            Err(e) if code(&e) == Some("RouteAlreadyExists") => {
                route_request!(c.ec2.replace_route().route_table_id(id), r)
                    .send()
                    .await
                    .map_err(|e| api("ReplaceRoute", e))?;
                Ok(())
            }
            Err(e) => Err(api("CreateRoute", e)),
        }
    }
}

#[async_trait]
impl Ec2Type for RouteTable {
    const TYPE: &'static str = "aws_route_table";

    fn schema(&self) -> ResourceSchema {
        let mut s = schema(vec![(
            "vpc_id",
            A::required(Type::String, "The VPC.").force_new(),
        )]);
        // An attribute written as blocks, as the AWS provider declares
        // it: `route { … }` blocks, or `route = []` for no routes; left
        // out, the routes are not managed here.
        s.attributes.insert(
            "route".into(),
            A::optional(Type::set(route_type()), "The routes.").and_computed(),
        );
        s
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = crate::tags::plan_taggable(schema, req, &[]);
        unmanaged_when_empty(schema, &mut p.planned, req.prior, "route");
        p
    }

    async fn describe(
        &self,
        c: &Clients,
        select: Select<'_>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let out = c
            .ec2
            .describe_route_tables()
            .set_filters(Some(select.filters("route-table-id")))
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(|e| api("DescribeRouteTables", e))?;
        let mut found = HashMap::new();
        let route_type = route_type();
        for (id, t) in select.keep(&out, |t| t.route_table_id(), |t| t.tags()) {
            // The VPC's own "local" route and propagated routes are not
            // the configuration's to manage.
            let routes = t
                .routes()
                .iter()
                .filter(|r| {
                    r.origin() != Some(&RouteOrigin::CreateRouteTable)
                        && r.origin() != Some(&RouteOrigin::EnableVgwRoutePropagation)
                        && r.gateway_id() != Some("local")
                })
                .map(route_value)
                .collect();
            found.insert(
                id.to_string(),
                described(
                    id,
                    arn(c, t.owner_id(), "route-table", id).await?,
                    t.owner_id(),
                    t.tags(),
                    vec![
                        ("vpc_id", str_value(t.vpc_id())),
                        ("route", Value::new_set(route_type.clone(), routes)),
                    ],
                ),
            );
        }
        Ok(found)
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<String, DriverError> {
        let out = c
            .ec2
            .create_route_table()
            .vpc_id(required(planned, Self::TYPE, "vpc_id")?)
            .tag_specifications(tag_spec(ResourceType::RouteTable, planned, t))
            .send()
            .await
            .map_err(|e| api("CreateRouteTable", e))?;
        let id = created(
            "CreateRouteTable",
            out.route_table().and_then(|t| t.route_table_id()),
        )?;
        for r in routes_of(planned).values() {
            self.create_route(c, &id, r).await?;
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
        let (had, want) = (routes_of(prior), routes_of(planned));
        for (dest, r) in &had {
            if !want.contains_key(dest) {
                let req = c
                    .ec2
                    .delete_route()
                    .route_table_id(id)
                    .set_destination_cidr_block(string(r, "cidr_block"))
                    .set_destination_ipv6_cidr_block(string(r, "ipv6_cidr_block"))
                    .set_destination_prefix_list_id(string(r, "destination_prefix_list_id"));
                deleted("DeleteRoute", req.send().await)?;
            }
        }
        for (dest, r) in &want {
            match had.get(dest) {
                None => self.create_route(c, id, r).await?,
                // Same destination, new target: replaced in one call, so
                // traffic is never without a route.
                Some(old) if !same(Some(old), Some(r)) => {
                    route_request!(c.ec2.replace_route().route_table_id(id), r)
                        .send()
                        .await
                        .map_err(|e| api("ReplaceRoute", e))?;
                }
                Some(_) => {}
            }
        }
        Ok(None)
    }

    async fn delete(&self, c: &Clients, id: &str, _prior: &Value) -> Result<(), DriverError> {
        deleted(
            "DeleteRouteTable",
            c.ec2.delete_route_table().route_table_id(id).send().await,
        )
        .map(|_| ())
    }
}

/// Associations carry no tags; a create that finds its subnet already
/// associated with the same table adopts that association, which is what
/// an apply that died after associating left behind.
pub struct RouteTableAssociation;

impl RouteTableAssociation {
    /// The association of `subnet` (or gateway) with any route table.
    async fn existing(
        &self,
        c: &Clients,
        filter: &str,
        target: &str,
    ) -> Result<Option<(String, String)>, DriverError> {
        let out = c
            .ec2
            .describe_route_tables()
            .filters(Filter::builder().name(filter).values(target).build())
            .send()
            .await
            .map_err(|e| api("DescribeRouteTables", e))?;
        Ok(out.route_tables().iter().find_map(|t| {
            t.associations().iter().find_map(|a| {
                let matches = a.subnet_id() == Some(target) || a.gateway_id() == Some(target);
                Some((
                    a.route_table_association_id()
                        .filter(|_| matches)?
                        .to_string(),
                    t.route_table_id()?.to_string(),
                ))
            })
        }))
    }
}

#[async_trait]
impl Ec2Type for RouteTableAssociation {
    const TYPE: &'static str = "aws_route_table_association";

    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            ("id", A::computed(Type::String, "The association id.")),
            (
                "subnet_id",
                A::optional(Type::String, "The subnet to route.").force_new(),
            ),
            (
                "gateway_id",
                A::optional(Type::String, "The gateway to route (edge association).").force_new(),
            ),
            (
                "route_table_id",
                A::required(Type::String, "The route table."),
            ),
        ])
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        strata_provider::plan_by_schema(schema, req.prior, req.config)
    }

    async fn describe(
        &self,
        c: &Clients,
        select: Select<'_>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let Select::Ids(ids) = select else {
            return Ok(HashMap::new());
        };
        let out = c
            .ec2
            .describe_route_tables()
            .set_filters(Some(
                select.filters("association.route-table-association-id"),
            ))
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(|e| api("DescribeRouteTables", e))?;
        let mut found = HashMap::new();
        for t in &out {
            for a in t.associations() {
                let Some(id) = a.route_table_association_id() else {
                    continue;
                };
                if !ids.iter().any(|x| x == id) {
                    continue;
                }
                found.insert(
                    id.to_string(),
                    object(vec![
                        ("id", Value::string(id)),
                        ("subnet_id", str_value(a.subnet_id())),
                        ("gateway_id", str_value(a.gateway_id())),
                        ("route_table_id", str_value(t.route_table_id())),
                    ]),
                );
            }
        }
        Ok(found)
    }

    /// An association is what the plan says and its id: nothing to read.
    async fn create_object(
        &self,
        c: &Clients,
        planned: &Value,
        t: &Tags,
    ) -> Result<Created, DriverError> {
        let id = self.create(c, planned, t).await?;
        let object = object(vec![
            ("id", Value::string(&id)),
            (
                "subnet_id",
                str_value(string(planned, "subnet_id").as_deref()),
            ),
            (
                "gateway_id",
                str_value(string(planned, "gateway_id").as_deref()),
            ),
            (
                "route_table_id",
                str_value(string(planned, "route_table_id").as_deref()),
            ),
        ]);
        Ok(Created {
            id,
            object: Some(object),
        })
    }

    async fn create(&self, c: &Clients, planned: &Value, _t: &Tags) -> Result<String, DriverError> {
        let table = required(planned, Self::TYPE, "route_table_id")?;
        let (subnet, gateway) = (string(planned, "subnet_id"), string(planned, "gateway_id"));
        let r = c
            .ec2
            .associate_route_table()
            .route_table_id(&table)
            .set_subnet_id(subnet.clone())
            .set_gateway_id(gateway.clone())
            .send()
            .await;
        match r {
            Ok(out) => created("AssociateRouteTable", out.association_id()),
            Err(e) if code(&e) == Some("Resource.AlreadyAssociated") => {
                let (filter, target) = match (&subnet, &gateway) {
                    (Some(s), _) => ("association.subnet-id", s.as_str()),
                    (None, Some(g)) => ("association.gateway-id", g.as_str()),
                    (None, None) => return Err(api("AssociateRouteTable", e)),
                };
                match self.existing(c, filter, target).await? {
                    Some((assoc, t)) if t == table => Ok(assoc),
                    _ => Err(api("AssociateRouteTable", e)),
                }
            }
            Err(e) => Err(api("AssociateRouteTable", e)),
        }
    }

    async fn update(
        &self,
        c: &Clients,
        id: &str,
        prior: &Value,
        planned: &Value,
    ) -> Result<Option<String>, DriverError> {
        let table = required(planned, Self::TYPE, "route_table_id")?;
        if string(prior, "route_table_id").as_deref() == Some(table.as_str()) {
            return Ok(None);
        }
        let out = c
            .ec2
            .replace_route_table_association()
            .association_id(id)
            .route_table_id(&table)
            .send()
            .await
            .map_err(|e| api("ReplaceRouteTableAssociation", e))?;
        // Replacing an association gives it a new id.
        Ok(Some(created(
            "ReplaceRouteTableAssociation",
            out.new_association_id(),
        )?))
    }

    async fn delete(&self, c: &Clients, id: &str, _prior: &Value) -> Result<(), DriverError> {
        deleted(
            "DisassociateRouteTable",
            c.ec2
                .disassociate_route_table()
                .association_id(id)
                .send()
                .await,
        )
        .map(|_| ())
    }
}
