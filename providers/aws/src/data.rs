//! Data sources: `aws_availability_zones`, `aws_caller_identity` and
//! `aws_ami`, what a cluster spec needs to place subnets, name its account
//! and find its nodes' image.

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

/// `aws_ami`: an image found by owner and filters, the newest when
/// `most_recent` (how a node group finds Canonical's Ubuntu EKS image).
pub struct Ami;

#[async_trait]
impl DataKind for Ami {
    fn schema(&self) -> ResourceSchema {
        let s = || Type::String;
        let mut schema = ResourceSchema::of_attributes(vec![
            (
                "owners",
                A::optional(
                    Type::list(s()),
                    "Account ids (or self, amazon) whose images are searched.",
                ),
            ),
            (
                "most_recent",
                A::optional(Type::Bool, "The newest of several matches."),
            ),
            (
                "name_regex",
                A::optional(s(), "A regular expression the name must match."),
            ),
            ("id", A::computed(s(), "The image id.")),
            ("image_id", A::computed(s(), "The image id.")),
            ("name", A::computed(s(), "The image's name.")),
            ("owner_id", A::computed(s(), "The account that owns it.")),
            ("creation_date", A::computed(s(), "When it was made.")),
            ("architecture", A::computed(s(), "x86_64 or arm64.")),
        ]);
        schema.blocks.insert(
            "filter".into(),
            strata_provider::values::block(
                strata_provider::BlockNesting::Set,
                0,
                vec![
                    ("name", A::required(s(), "The DescribeImages filter.")),
                    ("values", A::required(Type::set(s()), "Its values.")),
                ],
            ),
        );
        schema
    }

    async fn read(&self, c: &Clients, config: &Value) -> Result<Value, DriverError> {
        let invalid = |detail: &str| DriverError::InvalidConfig {
            type_name: "aws_ami".into(),
            detail: detail.into(),
        };
        let mut req = c.ec2.describe_images().set_owners(
            Some(strata_provider::values::strings(config, "owners")).filter(|o| !o.is_empty()),
        );
        for f in strata_provider::values::blocks(config, "filter") {
            req = req.filters(
                Filter::builder()
                    .set_name(string(&f, "name"))
                    .set_values(Some(strata_provider::values::strings(&f, "values")))
                    .build(),
            );
        }
        let out = req.send().await.map_err(|e| api("DescribeImages", e))?;
        let pattern =
            match string(config, "name_regex") {
                Some(r) => Some(regex::Regex::new(&r).map_err(|e| {
                    invalid(&format!("name_regex is not a regular expression: {e}"))
                })?),
                None => None,
            };
        let mut found: Vec<_> = out
            .images()
            .iter()
            .filter(|i| {
                pattern
                    .as_ref()
                    .is_none_or(|p| p.is_match(i.name().unwrap_or("")))
            })
            .collect();
        if found.is_empty() {
            return Err(invalid(
                "no image matches: change the owners or filters (for Ubuntu EKS nodes, Canonical's images are named ubuntu-eks/k8s_VERSION/images/…)",
            ));
        }
        if found.len() > 1 && strata_provider::values::boolean(config, "most_recent") != Some(true)
        {
            return Err(invalid(&format!(
                "{} images match: narrow the filters, or set most_recent = true",
                found.len()
            )));
        }
        // ISO 8601 dates sort as strings.
        found.sort_by(|a, b| a.creation_date().cmp(&b.creation_date()));
        let Some(image) = found.last() else {
            return Err(invalid("no image matches"));
        };
        let mut v = config.clone();
        if let Value::Object(m) = &mut v {
            for (k, x) in [
                ("id", image.image_id()),
                ("image_id", image.image_id()),
                ("name", image.name()),
                ("owner_id", image.owner_id()),
                ("creation_date", image.creation_date()),
                ("architecture", image.architecture().map(|a| a.as_str())),
            ] {
                m.insert(k.to_string(), str_value(x));
            }
        }
        Ok(v)
    }
}
