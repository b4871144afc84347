//! strata's GCP driver: Google's documented REST APIs (Compute Engine,
//! Kubernetes Engine, IAM, Resource Manager, Cloud Storage) through the
//! shared REST client of `strata-rest`, with credentials from Google's own
//! `google-cloud-auth` ([`auth`]).
//!
//! Resource types follow the Terraform Google provider's names and
//! attributes (`google_compute_subnetwork.secondary_ip_range`), and each is
//! a [`Kind`] given the [`Ctx`]. Objects that take labels carry strata's
//! ownership labels; those that take none (networks, firewalls, service
//! accounts) carry the same facts in their description when the
//! configuration sets none, so a crashed run's objects are found again.

mod api;
mod auth;
pub use auth::kms_token;
mod billing;
mod compute;
mod container;
mod iam;
mod iam_member;
mod records;
mod reservations;
mod scores;
mod storage;

use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Arc;
use strata_provider::billing::Billed;
use strata_provider::values::{self, string};
use strata_provider::{AttributeSchema as A, Cloud, DriverError, Kind, Kinds, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;
use tokio::sync::OnceCell;

/// Base URLs of the APIs, each ending in `/`, in the form of the Terraform
/// provider's `*_custom_endpoint` settings.
#[derive(Debug, Clone)]
pub struct Endpoints {
    pub compute: String,
    pub container: String,
    pub iam: String,
    pub resource_manager: String,
    pub storage: String,
    pub monitoring: String,
}

/// The settings (`name`, environment variables, Google's default URL).
const ENDPOINTS: [(&str, &str, &str); 6] = [
    (
        "compute_custom_endpoint",
        "GOOGLE_COMPUTE_CUSTOM_ENDPOINT",
        "https://compute.googleapis.com/compute/v1/",
    ),
    (
        "container_custom_endpoint",
        "GOOGLE_CONTAINER_CUSTOM_ENDPOINT",
        "https://container.googleapis.com/v1/",
    ),
    (
        "iam_custom_endpoint",
        "GOOGLE_IAM_CUSTOM_ENDPOINT",
        "https://iam.googleapis.com/v1/",
    ),
    (
        "resource_manager_custom_endpoint",
        "GOOGLE_RESOURCE_MANAGER_CUSTOM_ENDPOINT",
        "https://cloudresourcemanager.googleapis.com/v1/",
    ),
    (
        "storage_custom_endpoint",
        "GOOGLE_STORAGE_CUSTOM_ENDPOINT",
        "https://storage.googleapis.com/storage/v1/",
    ),
    // Cloud Monitoring's paths carry their version (`v3/…`).
    (
        "monitoring_custom_endpoint",
        "GOOGLE_MONITORING_CUSTOM_ENDPOINT",
        "https://monitoring.googleapis.com/",
    ),
];

/// What every resource type is given: the REST client and the defaults.
pub struct Ctx {
    pub rest: strata_rest::Client,
    pub endpoints: Endpoints,
    project: Option<String>,
    region: Option<String>,
    /// Operations on one GKE cluster, and writes of one project's IAM
    /// policy, are made one at a time (GKE refuses concurrent cluster
    /// operations; policy writes race on the etag).
    locks: std::sync::Mutex<BTreeMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Ctx {
    /// The object's `project`, else the provider's.
    pub fn project(&self, tf: &serde_json::Value, type_name: &str) -> Result<String, DriverError> {
        tf["project"]
            .as_str()
            .map(str::to_string)
            .or_else(|| self.project.clone())
            .ok_or_else(|| {
                api::invalid(
                    type_name,
                    "no project: set `project` on the resource or the provider, or GOOGLE_PROJECT",
                )
            })
    }

    /// The object's `region`, else the provider's.
    pub fn region(&self, tf: &serde_json::Value, type_name: &str) -> Result<String, DriverError> {
        tf["region"]
            .as_str()
            .map(str::to_string)
            .or_else(|| self.region.clone())
            .ok_or_else(|| {
                api::invalid(
                    type_name,
                    "no region: set `region` on the resource or the provider, or GOOGLE_REGION",
                )
            })
    }

    /// The lock for `key` (a cluster or a project policy).
    pub fn lock(&self, key: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut all = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        all.entry(key.to_string()).or_default().clone()
    }
}

#[derive(Debug, Clone, Default)]
struct Settings {
    project: Option<String>,
    region: Option<String>,
    access_token: Option<String>,
    endpoints: BTreeMap<String, String>,
}

pub struct Gcp {
    settings: std::sync::Mutex<Settings>,
    kinds: Kinds<Ctx>,
    ctx: OnceCell<Ctx>,
}

impl Default for Gcp {
    fn default() -> Self {
        Gcp::new()
    }
}

fn first_env(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
}

impl Gcp {
    pub fn new() -> Gcp {
        let kinds = Kinds::new(
            "google",
            vec![
                (
                    "google_compute_network",
                    Arc::new(compute::Compute(&compute::NETWORK)) as Arc<dyn Kind<Ctx>>,
                ),
                (
                    "google_compute_subnetwork",
                    Arc::new(compute::Compute(&compute::SUBNETWORK)),
                ),
                (
                    "google_compute_router",
                    Arc::new(compute::Compute(&compute::ROUTER)),
                ),
                (
                    "google_compute_firewall",
                    Arc::new(compute::Compute(&compute::FIREWALL)),
                ),
                ("google_compute_router_nat", Arc::new(compute::RouterNat)),
                ("google_service_account", Arc::new(iam::ServiceAccount)),
                (
                    "google_project_iam_member",
                    Arc::new(iam_member::IamMember::<iam_member::Project>::new()),
                ),
                (
                    "google_storage_bucket_iam_member",
                    Arc::new(iam_member::IamMember::<iam_member::Bucket>::new()),
                ),
                ("google_container_cluster", Arc::new(container::Cluster)),
                ("google_container_node_pool", Arc::new(container::NodePool)),
                ("google_storage_bucket", Arc::new(storage::Bucket)),
                ("google_storage_hmac_key", Arc::new(storage::HmacKey)),
            ],
        );
        Gcp {
            settings: std::sync::Mutex::new(Settings::default()),
            kinds,
            ctx: OnceCell::new(),
        }
    }

    fn make_ctx(&self) -> Ctx {
        let s = self.settings.lock().map(|s| s.clone()).unwrap_or_default();
        let endpoint = |(name, env, default): (&str, &str, &str)| {
            let mut url = s
                .endpoints
                .get(name)
                .cloned()
                .or_else(|| first_env(&[env]))
                .unwrap_or_else(|| default.to_string());
            if !url.ends_with('/') {
                url.push('/');
            }
            url
        };
        let [compute, container, iam, resource_manager, storage, monitoring] =
            ENDPOINTS.map(endpoint);
        Ctx {
            rest: strata_rest::Client::new(
                Arc::new(auth::GoogleAuth::from_settings(s.access_token.clone())),
                Arc::new(api::Google),
                strata_rest::Retry::default(),
            ),
            endpoints: Endpoints {
                compute,
                container,
                iam,
                resource_manager,
                storage,
                monitoring,
            },
            project: s.project.clone().or_else(|| {
                first_env(&[
                    "GOOGLE_PROJECT",
                    "GOOGLE_CLOUD_PROJECT",
                    "GCLOUD_PROJECT",
                    "CLOUDSDK_CORE_PROJECT",
                ])
            }),
            region: s.region.clone().or_else(|| {
                first_env(&["GOOGLE_REGION", "GCLOUD_REGION", "CLOUDSDK_COMPUTE_REGION"])
            }),
            locks: Default::default(),
        }
    }
}

#[async_trait]
impl Cloud for Gcp {
    type Ctx = Ctx;

    fn another(&self) -> Gcp {
        Gcp::new()
    }
    fn gpu_catalog(&self) -> Option<&strata_provider::catalog::Catalog> {
        catalog()
    }

    async fn placement_scores(
        &self,
        asks: &[strata_provider::score::ScoreAsk],
    ) -> Result<Vec<Option<u8>>, DriverError> {
        scores::placement_scores(self.ctx().await, asks).await
    }

    async fn reservation(
        &self,
        ask: &strata_provider::reservation::HeldAsk,
    ) -> Result<strata_provider::reservation::Held, DriverError> {
        reservations::reservation(self.ctx().await, ask).await
    }

    async fn pool_records(
        &self,
        ask: &strata_provider::records::RecordsAsk,
    ) -> Result<Option<strata_provider::records::Records>, DriverError> {
        records::pool_records(self.ctx().await, ask).await
    }

    fn billing(&self, type_name: &str, object: &Value, _today: &str) -> Vec<Billed> {
        let region = self
            .settings
            .lock()
            .ok()
            .and_then(|s| s.region.clone())
            .or_else(|| first_env(&["GOOGLE_REGION", "GCLOUD_REGION", "CLOUDSDK_COMPUTE_REGION"]));
        billing::billing(type_name, object, region)
    }

    fn name(&self) -> &str {
        "google"
    }

    fn provider_address(&self) -> String {
        "provider[\"registry.terraform.io/hashicorp/google\"]".to_string()
    }

    fn kinds(&self) -> &Kinds<Ctx> {
        &self.kinds
    }

    async fn ctx(&self) -> &Ctx {
        self.ctx.get_or_init(|| async { self.make_ctx() }).await
    }

    fn provider_schema(&self) -> ResourceSchema {
        let mut attrs = vec![
            (
                "project",
                A::optional(Type::String, "The default project (else GOOGLE_PROJECT)."),
            ),
            (
                "region",
                A::optional(Type::String, "The default region (else GOOGLE_REGION)."),
            ),
            (
                "zone",
                A::optional(Type::String, "The default zone (else GOOGLE_ZONE)."),
            ),
            (
                "access_token",
                A::optional(
                    Type::String,
                    "An OAuth access token used instead of Application Default Credentials (else GOOGLE_OAUTH_ACCESS_TOKEN).",
                )
                .sensitive(),
            ),
        ];
        for (name, _, _) in ENDPOINTS {
            attrs.push((name, A::optional(Type::String, "The API's base URL.")));
        }
        ResourceSchema::of_attributes(attrs)
    }

    fn configure(&self, config: &Value) -> Result<(), DriverError> {
        let settings = Settings {
            project: string(config, "project"),
            region: string(config, "region"),
            access_token: string(config, "access_token"),
            endpoints: ENDPOINTS
                .iter()
                .filter_map(|(n, _, _)| Some((n.to_string(), string(config, n)?)))
                .collect(),
        };
        if let Ok(mut s) = self.settings.lock() {
            *s = settings;
        }
        Ok(())
    }
}

/// Shared schema pieces.
pub(crate) mod schema {
    use super::*;
    use strata_provider::BlockSchema;

    pub fn project() -> A {
        A::optional(Type::String, "The project (else the provider's).")
            .and_computed()
            .force_new()
    }

    pub fn timeouts() -> BlockSchema {
        values::timeouts_block()
    }
}

/// GCP's GPU offers (`providers/gcp/catalog.csv`, embedded), read once.
pub fn catalog() -> Option<&'static strata_provider::catalog::Catalog> {
    static CATALOG: std::sync::OnceLock<Option<strata_provider::catalog::Catalog>> =
        std::sync::OnceLock::new();
    strata_provider::catalog::Catalog::embedded(&CATALOG, "GCP", include_str!("../catalog.csv"))
}

#[cfg(test)]
mod catalog_tests {
    use strata_provider::catalog::Catalog;

    #[test]
    fn the_embedded_catalog_reads_and_answers() {
        let c = Catalog::parse("GCP", include_str!("../catalog.csv")).expect("the catalog parses");
        assert!(c.source.contains("skypilot-catalog") && c.taken == "2026-11-30");
        let h100 = c
            .pick("H100", 8, "us-central1")
            .expect("H100 x8 in us-central1");
        assert_eq!(h100.instance_type, "a3-highgpu-8g");
        assert!(h100
            .price
            .is_some_and(|p| p > strata_provider::money::Usd::ZERO));
        let e = c
            .pick("L40S", 8, "us-central1")
            .expect_err("GCP has no L40S");
        assert!(
            e.to_string().starts_with(
                "GCP has no instance type with 8 × L40S; its GPU shapes are A100×8, A100-80GB×8, B200×8"
            ),
            "{e}"
        );
        for (gpu, n) in [("A100", 8), ("A100-80GB", 8), ("H200", 8), ("B200", 8)] {
            assert!(
                c.offers().iter().any(|o| o.gpu == gpu && o.gpus == n),
                "{gpu}×{n}"
            );
        }
        assert!(super::catalog().is_some());
    }
}
