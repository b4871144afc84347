//! strata's AWS driver, on the official AWS SDK for Rust.
//!
//! Resource types follow the Terraform AWS provider's names and attributes
//! (`aws_vpc.cidr_block`), so a Terraform user reads the plan at once. Each
//! type is a [`Kind`]; the driver finds it by name and shares what every
//! type needs: the clients, built once from `aws-config`'s standard chain
//! (environment, shared files and profiles, SSO, web identity, IMDS;
//! `AWS_ENDPOINT_URL` and `AWS_ENDPOINT_URL_<SERVICE>` for endpoints), error
//! mapping ([`error`]) and ownership tags ([`tags`]).

mod billing;
mod budget;
mod data;
mod ec2;
mod eks;
mod error;
mod iam;
mod layout;
mod records;
mod resends;
mod reservations;
mod s3;
mod scores;
mod tags;

use async_trait::async_trait;
use aws_sdk_ec2::config::retry::{RetryPartition, TokenBucket};
use ec2::Ec2;
use resends::Resends;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use strata_provider::billing::Billed;
pub(crate) use strata_provider::catalog::Catalog;
use strata_provider::listing::{Listing, Writes};
use strata_provider::reservation::{Held, HeldAsk, Offer, OfferAsk};
use strata_provider::score::ScoreAsk;
use strata_provider::Kind;
use strata_provider::{values, wait};
use strata_provider::{
    AttributeSchema as A, BlockNesting, Cloud, DriverError, Kinds, ResourceSchema,
};
use strata_value::types::Type;
use strata_value::value::Value;
use tokio::sync::OnceCell;

/// The SDK clients, made on first use (so a plan with nothing of AWS's
/// never looks for credentials).
pub struct Clients {
    pub ec2: aws_sdk_ec2::Client,
    pub iam: aws_sdk_iam::Client,
    pub eks: aws_sdk_eks::Client,
    pub sts: aws_sdk_sts::Client,
    pub s3: aws_sdk_s3::Client,
    pub cloudwatch: aws_sdk_cloudwatch::Client,
    pub resource_groups: aws_sdk_resourcegroups::Client,
    /// Where STS is reached when not at its regional address (an
    /// `endpoints` entry, `AWS_ENDPOINT_URL_STS` or `AWS_ENDPOINT_URL`):
    /// the host an EKS token's presigned request names.
    pub sts_endpoint: Option<String>,
    /// The credentials the clients sign with, for what is signed here (an
    /// EKS token).
    pub credentials: Option<aws_credential_types::provider::SharedCredentialsProvider>,
    account: OnceCell<String>,
    /// The writes made through these clients: a listing taken before one
    /// is asked again.
    pub writes: Writes,
    /// GetAccountAuthorizationDetails for roles, every page: the roles'
    /// tags for `aws_iam_role`, their inline policies for
    /// `aws_iam_role_policy`, asked once for both.
    pub role_details: Listing<Vec<RoleDetails>>,
}

/// One page of GetAccountAuthorizationDetails.
pub type RoleDetails =
    aws_sdk_iam::operation::get_account_authorization_details::GetAccountAuthorizationDetailsOutput;

impl Clients {
    /// The account the credentials belong to, asked once: ARNs of objects
    /// whose API does not say their owner are built with it.
    pub async fn account(&self) -> Result<&str, DriverError> {
        self.account
            .get_or_try_init(|| async {
                let out = self
                    .sts
                    .get_caller_identity()
                    .send()
                    .await
                    .map_err(|e| error::api("GetCallerIdentity", e))?;
                Ok(out.account().unwrap_or_default().to_string())
            })
            .await
            .map(String::as_str)
    }
}

/// What the `provider "aws"` block says; the SDK's standard chain fills
/// in the rest.
#[derive(Debug, Clone, Default)]
struct Settings {
    region: Option<String>,
    profile: Option<String>,
    max_retries: Option<u32>,
    /// Service (`cloudwatch`, `ec2`, `eks`, `iam`, `resourcegroups`, `s3`,
    /// `sts`) → endpoint URL.
    endpoints: BTreeMap<String, String>,
}

/// The services an `endpoints` block may name.
const SERVICES: [&str; 7] = [
    "cloudwatch",
    "ec2",
    "eks",
    "iam",
    "resourcegroups",
    "s3",
    "sts",
];

pub struct Aws {
    settings: std::sync::Mutex<Settings>,
    kinds: Kinds<Clients>,
    data: BTreeMap<String, Arc<dyn data::DataKind>>,
    /// Built on first use, as the resource types' are ([`Kinds`]).
    data_schemas: OnceLock<BTreeMap<String, ResourceSchema>>,
    ephemeral_schemas: OnceLock<BTreeMap<String, ResourceSchema>>,
    clients: OnceCell<Clients>,
}

impl Default for Aws {
    fn default() -> Self {
        Aws::new()
    }
}

impl Aws {
    pub fn new() -> Aws {
        let kinds = Kinds::new(
            "aws",
            vec![
                (
                    "aws_vpc",
                    Arc::new(Ec2::new(ec2::Vpc)) as Arc<dyn Kind<Clients>>,
                ),
                ("aws_subnet", Arc::new(Ec2::new(ec2::Subnet))),
                (
                    "aws_internet_gateway",
                    Arc::new(Ec2::new(ec2::InternetGateway)),
                ),
                ("aws_eip", Arc::new(Ec2::new(ec2::Eip))),
                ("aws_nat_gateway", Arc::new(Ec2::new(ec2::NatGateway))),
                ("aws_route_table", Arc::new(Ec2::new(ec2::RouteTable))),
                (
                    "aws_route_table_association",
                    Arc::new(Ec2::new(ec2::RouteTableAssociation)),
                ),
                ("aws_security_group", Arc::new(Ec2::new(ec2::SecurityGroup))),
                (
                    "aws_vpc_security_group_ingress_rule",
                    Arc::new(Ec2::new(ec2::SecurityGroupRule::<false>)),
                ),
                (
                    "aws_vpc_security_group_egress_rule",
                    Arc::new(Ec2::new(ec2::SecurityGroupRule::<true>)),
                ),
                (
                    "aws_launch_template",
                    Arc::new(Ec2::new(ec2::LaunchTemplate)),
                ),
                (
                    "aws_ec2_capacity_block_reservation",
                    Arc::new(Ec2::new(ec2::CapacityBlockReservation)),
                ),
                ("aws_s3_bucket", Arc::new(s3::Bucket)),
                (
                    "aws_s3_bucket_versioning",
                    Arc::new(s3::PerBucket(s3::BucketVersioning)),
                ),
                (
                    "aws_s3_bucket_lifecycle_configuration",
                    Arc::new(s3::PerBucket(s3::BucketLifecycle)),
                ),
                ("aws_iam_role", Arc::new(iam::Role)),
                ("aws_iam_role_policy", Arc::new(iam::RolePolicy)),
                ("aws_iam_instance_profile", Arc::new(iam::InstanceProfile)),
                (
                    "aws_iam_openid_connect_provider",
                    Arc::new(iam::OpenIdConnectProvider),
                ),
                ("aws_eks_cluster", Arc::new(eks::Cluster)),
                ("aws_eks_node_group", Arc::new(eks::NodeGroup)),
                ("aws_eks_addon", Arc::new(eks::Addon)),
                (
                    "aws_eks_pod_identity_association",
                    Arc::new(eks::PodIdentity),
                ),
                (
                    "aws_iam_role_policy_attachment",
                    Arc::new(iam::RolePolicyAttachment),
                ),
            ],
        );
        let data: BTreeMap<String, Arc<dyn data::DataKind>> = BTreeMap::from([
            (
                "aws_availability_zones".to_string(),
                Arc::new(data::AvailabilityZones) as Arc<dyn data::DataKind>,
            ),
            (
                "aws_caller_identity".to_string(),
                Arc::new(data::CallerIdentity),
            ),
            ("aws_ami".to_string(), Arc::new(data::Ami)),
            (
                "aws_ec2_capacity_block_offering".to_string(),
                Arc::new(ec2::CapacityBlockOffering),
            ),
            (
                "aws_iam_policy_document".to_string(),
                Arc::new(iam::PolicyDocument),
            ),
        ]);
        Aws {
            settings: std::sync::Mutex::new(Settings::default()),
            kinds,
            data,
            data_schemas: OnceLock::new(),
            ephemeral_schemas: OnceLock::new(),
            clients: OnceCell::new(),
        }
    }

    async fn clients(&self) -> &Clients {
        self.clients
            .get_or_init(|| async {
                let s = self.settings.lock().map(|s| s.clone()).unwrap_or_default();
                // Throttling and 5xx are retried by the SDK, as often as
                // Terraform's AWS provider retries them.
                let retry = aws_config::retry::RetryConfig::standard()
                    .with_max_attempts(attempts(s.max_retries, std::env::var("AWS_MAX_ATTEMPTS")));
                let mut loader =
                    aws_config::defaults(aws_config::BehaviorVersion::latest()).retry_config(retry);
                if let Some(r) = s.region {
                    loader = loader.region(aws_config::Region::new(r));
                }
                if let Some(p) = s.profile {
                    loader = loader.profile_name(p);
                }
                let conf = loader.load().await;
                // One budget for every client: requests wait for their
                // bucket's token rather than meet throttling.
                let http = budget::Budgeted::new();
                // Without the SDK's retry quota (500 tokens a service,
                // spent by retries, after which it stops retrying): the
                // budget above spaces the requests, and a long apply under
                // throttling would otherwise fail part way, as Terraform's
                // AWS provider did before it dropped the quota too.
                let retries = RetryPartition::custom("strata")
                    .token_bucket(TokenBucket::unlimited())
                    .build();
                // An `endpoints` entry overrides the standard variables
                // (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>) for its service.
                // Every client notes its resends, so the apply looks for a
                // duplicate only after a create that was sent twice.
                macro_rules! client {
                    ($sdk:ident, $service:literal) => {{
                        let b = $sdk::config::Builder::from(&conf)
                            .interceptor(Resends)
                            .retry_partition(retries.clone())
                            .http_client(http.clone());
                        $sdk::Client::from_conf(match s.endpoints.get($service) {
                            Some(url) => b.endpoint_url(url).build(),
                            None => b.build(),
                        })
                    }};
                }
                Clients {
                    ec2: client!(aws_sdk_ec2, "ec2"),
                    iam: client!(aws_sdk_iam, "iam"),
                    eks: client!(aws_sdk_eks, "eks"),
                    sts: client!(aws_sdk_sts, "sts"),
                    s3: client!(aws_sdk_s3, "s3"),
                    cloudwatch: client!(aws_sdk_cloudwatch, "cloudwatch"),
                    resource_groups: client!(aws_sdk_resourcegroups, "resourcegroups"),
                    sts_endpoint: s
                        .endpoints
                        .get("sts")
                        .cloned()
                        .or_else(|| std::env::var("AWS_ENDPOINT_URL_STS").ok())
                        .or_else(|| conf.endpoint_url().map(str::to_string)),
                    credentials: conf.credentials_provider(),
                    account: OnceCell::new(),
                    writes: Writes::default(),
                    role_details: Listing::default(),
                }
            })
            .await
    }
}

#[async_trait]
impl Cloud for Aws {
    type Ctx = Clients;

    fn another(&self) -> Aws {
        Aws::new()
    }

    fn name(&self) -> &str {
        "aws"
    }

    fn wrote(&self, c: &Clients) {
        c.writes.note();
    }

    fn gpu_catalog(&self) -> Option<&Catalog> {
        catalog()
    }

    async fn placement_scores(&self, asks: &[ScoreAsk]) -> Result<Vec<Option<u8>>, DriverError> {
        scores::placement_scores(&self.clients().await.ec2, asks).await
    }

    async fn reservation(&self, ask: &HeldAsk) -> Result<Held, DriverError> {
        reservations::reservation(self.clients().await, ask).await
    }

    async fn block_offers(&self, ask: &OfferAsk) -> Result<Vec<Offer>, DriverError> {
        reservations::block_offers(&self.clients().await.ec2, ask).await
    }

    async fn pool_records(
        &self,
        ask: &strata_provider::records::RecordsAsk,
    ) -> Result<Option<strata_provider::records::Records>, DriverError> {
        records::pool_records(self.clients().await, ask).await
    }

    /// Every stored object passes here, whatever its version: strata's
    /// older layouts had version 0 where the provider's has 1 and the same
    /// numbers where the provider's is 0.
    fn upgrade(
        &self,
        type_name: &str,
        version: u64,
        attributes: &str,
    ) -> Option<Result<Value, DriverError>> {
        let schema = self.kinds().schemas().get(type_name)?;
        layout::upgrade(type_name, schema, version, attributes)
    }

    fn billing(&self, type_name: &str, object: &Value, today: &str) -> Vec<Billed> {
        let region = self
            .settings
            .lock()
            .ok()
            .and_then(|s| s.region.clone())
            .or_else(|| std::env::var("AWS_REGION").ok())
            .or_else(|| std::env::var("AWS_DEFAULT_REGION").ok());
        billing::billing(type_name, object, today, region)
    }

    fn provider_address(&self) -> String {
        "provider[\"registry.terraform.io/hashicorp/aws\"]".to_string()
    }

    fn kinds(&self) -> &Kinds<Clients> {
        &self.kinds
    }

    async fn ctx(&self) -> &Clients {
        self.clients().await
    }

    /// EC2 says why it refused a call only in an encoded message; STS
    /// decodes it for a caller allowed `sts:DecodeAuthorizationMessage`,
    /// and the decoded policy evaluation goes into the error. Without
    /// that permission the error stays as AWS gave it.
    async fn explain(&self, e: DriverError) -> DriverError {
        let DriverError::Api {
            operation,
            detail,
            retryable,
        } = &e
        else {
            return e;
        };
        let Some(blob) = error::encoded_message(detail) else {
            return e;
        };
        let c = self.clients().await;
        match c
            .sts
            .decode_authorization_message()
            .encoded_message(blob)
            .send()
            .await
        {
            Ok(out) => DriverError::Api {
                operation: operation.clone(),
                detail: format!(
                    "{detail}\nDecoded: {}",
                    out.decoded_message().unwrap_or_default()
                ),
                retryable: *retryable,
            },
            Err(_) => e,
        }
    }

    fn provider_schema(&self) -> ResourceSchema {
        let mut s = ResourceSchema::of_attributes(vec![
            (
                "region",
                A::optional(
                    Type::String,
                    "The region (else AWS_REGION or the profile's).",
                ),
            ),
            (
                "profile",
                A::optional(Type::String, "A shared-config profile (else AWS_PROFILE)."),
            ),
            (
                "max_retries",
                A::optional(
                    Type::Number,
                    "Retries of throttled and failed calls (else AWS_MAX_ATTEMPTS less one, else 25).",
                ),
            ),
        ]);
        s.blocks.insert(
            "endpoints".into(),
            values::block(
                BlockNesting::Single,
                0,
                SERVICES
                    .iter()
                    .map(|k| (*k, A::optional(Type::String, "The service's endpoint URL.")))
                    .collect(),
            ),
        );
        s
    }

    fn configure(&self, config: &Value) -> Result<(), DriverError> {
        let invalid = |detail: String| DriverError::InvalidConfig {
            type_name: "provider \"aws\"".into(),
            detail,
        };
        let max_retries = match values::number(config, "max_retries") {
            None => None,
            Some(n) => Some(
                u32::try_from(n)
                    .map_err(|_| invalid(format!("max_retries must be 0 or more, not {n}")))?,
            ),
        };
        let endpoints = values::get(config, "endpoints")
            .map(|e| {
                SERVICES
                    .iter()
                    .filter_map(|k| Some((k.to_string(), values::string(e, k)?)))
                    .collect()
            })
            .unwrap_or_default();
        let settings = Settings {
            region: values::string(config, "region"),
            profile: values::string(config, "profile"),
            max_retries,
            endpoints,
        };
        if let Ok(mut s) = self.settings.lock() {
            *s = settings;
        }
        Ok(())
    }

    fn data_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        self.data_schemas.get_or_init(|| {
            let data = self.data.iter();
            data.map(|(k, v)| (k.clone(), v.schema())).collect()
        })
    }

    fn ephemeral_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        self.ephemeral_schemas
            .get_or_init(|| BTreeMap::from([(eks::auth::TYPE.to_string(), eks::auth::schema())]))
    }

    async fn open_ephemeral(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<strata_provider::Opened, DriverError> {
        if type_name != eks::auth::TYPE {
            return Err(DriverError::UnknownType {
                driver: "aws".into(),
                type_name: type_name.into(),
            });
        }
        let name = values::required(config, type_name, "name")?;
        let token = eks::auth::token(self.clients().await, &name).await?;
        Ok(strata_provider::Opened {
            result: Value::Object(
                [
                    ("name".to_string(), Value::string(name)),
                    ("token".to_string(), Value::string(token)),
                ]
                .into(),
            ),
            private: None,
            renew_at: None,
        })
    }

    async fn read_data(&self, type_name: &str, config: &Value) -> Result<Value, DriverError> {
        let kind = self
            .data
            .get(type_name)
            .ok_or_else(|| DriverError::UnknownType {
                driver: "aws".into(),
                type_name: type_name.into(),
            })?;
        kind.read(self.clients().await, config).await
    }
}

/// How many times a call is tried: the provider block's `max_retries` plus
/// the first try, else `AWS_MAX_ATTEMPTS` (attempts, as the SDKs read it),
/// else the AWS provider's default of 25 retries. A long apply that meets
/// throttling then gives up no sooner than Terraform's would.
fn attempts(max_retries: Option<u32>, env: Result<String, std::env::VarError>) -> u32 {
    const PROVIDER_DEFAULT_RETRIES: u32 = 25;
    let from_env = env.ok().and_then(|v| v.trim().parse::<u32>().ok());
    match (max_retries, from_env) {
        (Some(n), _) => n.saturating_add(1),
        (None, Some(n)) if n > 0 => n,
        _ => PROVIDER_DEFAULT_RETRIES + 1,
    }
}

/// AWS's GPU offers (`providers/aws/catalog.csv`, embedded), read once.
pub fn catalog() -> Option<&'static Catalog> {
    static CATALOG: std::sync::OnceLock<Option<Catalog>> = std::sync::OnceLock::new();
    Catalog::embedded(&CATALOG, "AWS", include_str!("../catalog.csv"))
}

#[cfg(test)]
mod catalog_tests {
    use super::*;

    #[test]
    fn the_embedded_catalog_reads_and_answers() {
        let c = Catalog::parse("AWS", include_str!("../catalog.csv")).expect("the catalog parses");
        assert!(c.source.contains("skypilot-catalog") && c.taken == "2026-11-30");
        let h100 = c.pick("H100", 8, "us-east-1").expect("p5 in us-east-1");
        assert_eq!(h100.instance_type, "p5.48xlarge");
        assert!(h100
            .price
            .is_some_and(|p| p > strata_provider::money::Usd::ZERO));
        let e = c
            .pick("B200", 8, "eu-west-1")
            .expect_err("no B200 in Ireland");
        assert_eq!(
            e.to_string(),
            "AWS offers 8 × B200 in us-east-1, us-east-2, us-west-2, not in eu-west-1"
        );
        for (gpu, n) in [
            ("A100", 8),
            ("A100-80GB", 8),
            ("H200", 8),
            ("L4", 8),
            ("L4", 1),
            ("L40S", 8),
            ("L40S", 1),
        ] {
            assert!(c.pick(gpu, n, "us-east-1").is_ok(), "{gpu}×{n}");
        }
        assert!(catalog().is_some());
    }
}

#[cfg(test)]
mod retry_tests {
    use super::attempts;
    use std::env::VarError;

    #[test]
    fn calls_are_tried_as_often_as_the_aws_provider_tries_them() {
        // Nothing said: the provider's 25 retries.
        assert_eq!(attempts(None, Err(VarError::NotPresent)), 26);
        // The block's retries win over the environment's attempts.
        assert_eq!(attempts(Some(0), Ok("5".into())), 1);
        assert_eq!(attempts(Some(3), Err(VarError::NotPresent)), 4);
        assert_eq!(
            attempts(Some(u32::MAX), Err(VarError::NotPresent)),
            u32::MAX
        );
        // AWS_MAX_ATTEMPTS counts attempts; one that is not a count is not read.
        assert_eq!(attempts(None, Ok(" 5 ".into())), 5);
        assert_eq!(attempts(None, Ok("0".into())), 26);
        assert_eq!(attempts(None, Ok("many".into())), 26);
    }
}
