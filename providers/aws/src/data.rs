//! Data sources: `aws_availability_zones` and `aws_caller_identity`, what
//! a cluster spec needs to place subnets and name its account.

use crate::error::api;
use crate::values::{object, str_value, string, string_list};
use crate::Clients;
use async_trait::async_trait;
use aws_sdk_ec2::types::Filter;
use strata_provider::{AttributeSchema as A, DriverError, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;

#[async_trait]
pub(crate) trait DataKind: Send + Sync {
    fn schema(&self) -> ResourceSchema;
    /// The configuration with its computed attributes filled in.
    async fn read(&self, c: &Clients, config: &Value) -> Result<Value, DriverError>;
}

pub struct AvailabilityZones;

#[async_trait]
impl DataKind for AvailabilityZones {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            (
                "state",
                A::optional(Type::String, "Only zones in this state (available, …)."),
            ),
            ("id", A::computed(Type::String, "The region.")),
            (
                "names",
                A::computed(Type::list(Type::String), "Zone names, sorted."),
            ),
            (
                "zone_ids",
                A::computed(Type::list(Type::String), "Zone ids, in the order of names."),
            ),
        ])
    }

    async fn read(&self, c: &Clients, config: &Value) -> Result<Value, DriverError> {
        let mut req = c.ec2.describe_availability_zones();
        if let Some(state) = string(config, "state") {
            req = req.filters(Filter::builder().name("state").values(state).build());
        }
        let out = req
            .send()
            .await
            .map_err(|e| api("DescribeAvailabilityZones", e))?;
        let mut zones: Vec<(String, String)> = out
            .availability_zones()
            .iter()
            .filter_map(|z| {
                Some((
                    z.zone_name()?.to_string(),
                    z.zone_id().unwrap_or("").to_string(),
                ))
            })
            .collect();
        zones.sort();
        let region = c.ec2.config().region().map(|r| r.to_string());
        let (names, ids): (Vec<String>, Vec<String>) = zones.into_iter().unzip();
        Ok(object(vec![
            ("state", str_value(string(config, "state").as_deref())),
            ("id", str_value(region.as_deref())),
            ("names", string_list(&names)),
            ("zone_ids", string_list(&ids)),
        ]))
    }
}

pub struct CallerIdentity;

#[async_trait]
impl DataKind for CallerIdentity {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            ("id", A::computed(Type::String, "The account id.")),
            ("account_id", A::computed(Type::String, "The account id.")),
            ("arn", A::computed(Type::String, "The caller's ARN.")),
            (
                "user_id",
                A::computed(Type::String, "The caller's unique id."),
            ),
        ])
    }

    async fn read(&self, c: &Clients, _config: &Value) -> Result<Value, DriverError> {
        let out = c
            .sts
            .get_caller_identity()
            .send()
            .await
            .map_err(|e| api("GetCallerIdentity", e))?;
        Ok(object(vec![
            ("id", str_value(out.account())),
            ("account_id", str_value(out.account())),
            ("arn", str_value(out.arn())),
            ("user_id", str_value(out.user_id())),
        ]))
    }
}
