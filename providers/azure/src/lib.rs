//! strata's Azure driver: Azure Resource Manager's REST API through the
//! shared REST client of `strata-rest`, with credentials from Microsoft's
//! own `azure_identity` ([`auth`]).
//!
//! Resource types follow the Terraform azurerm provider's names and
//! attributes. Most are one [`arm::Resource`] from a [`arm::Spec`] table
//! (PUT to create or update, the long-running operation followed, GET,
//! DELETE, one list call per resource group for a refresh); the subnet's
//! NSG association and role assignments have their own. Everything that
//! takes tags carries strata's ownership tags.

mod api;
mod arm;
mod auth;
pub use auth::{vault_token, Identity};
mod billing;
mod kubeconfig;
mod records;
mod reservations;
mod scores;
mod special;

use async_trait::async_trait;
use std::sync::Arc;
use strata_provider::values::{boolean, string};
use strata_provider::{
    AttributeSchema as A, BlockNesting, Cloud, DriverError, Kind, Kinds, ResourceSchema,
};
use strata_value::types::Type;
use strata_value::value::Value;
use tokio::sync::OnceCell;

/// A strata value as the JSON Terraform's attributes would be.
pub(crate) fn api_json(v: &Value) -> serde_json::Value {
    strata_value::json::plain_json(v)
}

/// What every resource type is given.
pub struct Ctx {
    pub rest: strata_rest::Client,
    /// Resource Manager's base URL, without a trailing `/` (ids begin with one).
    pub base: String,
    subscription: Option<String>,
}

impl Ctx {
    pub fn subscription(&self, type_name: &str) -> Result<&str, DriverError> {
        self.subscription.as_deref().ok_or_else(|| DriverError::InvalidConfig {
            type_name: type_name.into(),
            detail: "no subscription: set subscription_id in the provider block, or ARM_SUBSCRIPTION_ID / AZURE_SUBSCRIPTION_ID".into(),
        })
    }

    /// The URL of a resource id, with the API version.
    pub fn url(&self, id: &str, api_version: &str) -> String {
        let sep = if id.contains('?') { '&' } else { '?' };
        format!("{}{id}{sep}api-version={api_version}", self.base)
    }
}

#[derive(Debug, Clone, Default)]
struct Settings {
    subscription: Option<String>,
    endpoint: Option<String>,
    identity: auth::Identity,
}

pub struct Azure {
    settings: std::sync::Mutex<Settings>,
    kinds: Kinds<Ctx>,
    ctx: OnceCell<Ctx>,
}

impl Default for Azure {
    fn default() -> Self {
        Azure::new()
    }
}

fn first_env(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
}

impl Azure {
    pub fn new() -> Azure {
        let arm_kinds = arm::ALL.iter().map(|spec| {
            (
                spec.type_name,
                Arc::new(arm::Resource(spec)) as Arc<dyn Kind<Ctx>>,
            )
        });
        let special: [(&str, Arc<dyn Kind<Ctx>>); 2] = [
            (
                "azurerm_subnet_network_security_group_association",
                Arc::new(special::SubnetNsgAssociation),
            ),
            ("azurerm_role_assignment", Arc::new(special::RoleAssignment)),
        ];
        let kinds = Kinds::new("azurerm", arm_kinds.chain(special).collect());
        Azure {
            settings: std::sync::Mutex::new(Settings::default()),
            kinds,
            ctx: OnceCell::new(),
        }
    }

    fn make_ctx(&self) -> Ctx {
        let s = self.settings.lock().map(|s| s.clone()).unwrap_or_default();
        let base = s
            .endpoint
            .or_else(|| first_env(&["ARM_RESOURCE_MANAGER_ENDPOINT"]))
            .unwrap_or_else(|| "https://management.azure.com".to_string());
        Ctx {
            rest: strata_rest::Client::new(
                Arc::new(auth::AzureAuth::new(&s.identity)),
                Arc::new(api::Arm),
                strata_rest::Retry::default(),
            ),
            base: base.trim_end_matches('/').to_string(),
            subscription: s.subscription,
        }
    }
}

#[async_trait]
impl Cloud for Azure {
    type Ctx = Ctx;

    fn another(&self) -> Azure {
        Azure::new()
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

    fn billing(
        &self,
        type_name: &str,
        object: &Value,
        _today: &str,
    ) -> Vec<strata_provider::billing::Billed> {
        billing::billing(type_name, object)
    }

    fn name(&self) -> &str {
        "azurerm"
    }

    fn provider_address(&self) -> String {
        "provider[\"registry.terraform.io/hashicorp/azurerm\"]".to_string()
    }

    fn kinds(&self) -> &Kinds<Ctx> {
        &self.kinds
    }

    async fn ctx(&self) -> &Ctx {
        self.ctx.get_or_init(|| async { self.make_ctx() }).await
    }

    fn provider_schema(&self) -> ResourceSchema {
        let s = || Type::String;
        let mut schema = ResourceSchema::of_attributes(vec![
            ("subscription_id", A::optional(s(), "The subscription (else ARM_SUBSCRIPTION_ID).")),
            ("tenant_id", A::optional(s(), "The tenant (else ARM_TENANT_ID / AZURE_TENANT_ID).")),
            ("client_id", A::optional(s(), "The service principal or workload identity's client id (else ARM_CLIENT_ID / AZURE_CLIENT_ID).")),
            ("client_secret", A::optional(s(), "The service principal's secret (else ARM_CLIENT_SECRET / AZURE_CLIENT_SECRET).").sensitive()),
            ("use_oidc", A::optional(Type::Bool, "Use workload identity federation (a token file).")),
            ("oidc_token_file_path", A::optional(s(), "The federated token file (else ARM_OIDC_TOKEN_FILE_PATH / AZURE_FEDERATED_TOKEN_FILE).")),
            ("use_cli", A::optional(Type::Bool, "Fall back to the Azure CLI's account (true).")),
            ("resource_manager_endpoint", A::optional(s(), "Resource Manager's URL (else ARM_RESOURCE_MANAGER_ENDPOINT, else https://management.azure.com).")),
        ]);
        // azurerm requires `features {}`; its settings are not used here.
        schema.blocks.insert(
            "features".into(),
            strata_provider::values::block(BlockNesting::Single, 0, Vec::new()),
        );
        schema
    }

    fn configure(&self, config: &Value) -> Result<(), DriverError> {
        let or_env = |attr: &str, names: &[&str]| string(config, attr).or_else(|| first_env(names));
        let oidc = boolean(config, "use_oidc")
            .unwrap_or_else(|| first_env(&["ARM_USE_OIDC"]).is_some_and(|v| v == "true"));
        let token_file = or_env(
            "oidc_token_file_path",
            &["ARM_OIDC_TOKEN_FILE_PATH", "AZURE_FEDERATED_TOKEN_FILE"],
        );
        let settings = Settings {
            subscription: or_env(
                "subscription_id",
                &["ARM_SUBSCRIPTION_ID", "AZURE_SUBSCRIPTION_ID"],
            ),
            endpoint: string(config, "resource_manager_endpoint"),
            identity: auth::Identity {
                tenant_id: or_env("tenant_id", &["ARM_TENANT_ID", "AZURE_TENANT_ID"]),
                client_id: or_env("client_id", &["ARM_CLIENT_ID", "AZURE_CLIENT_ID"]),
                client_secret: or_env(
                    "client_secret",
                    &["ARM_CLIENT_SECRET", "AZURE_CLIENT_SECRET"],
                ),
                token_file: if oidc || token_file.is_some() {
                    token_file
                } else {
                    None
                },
                use_cli: boolean(config, "use_cli").unwrap_or(true),
            },
        };
        if let Ok(mut s) = self.settings.lock() {
            *s = settings;
        }
        Ok(())
    }
}

/// Azure's GPU offers (`providers/azure/catalog.csv`, embedded), read once.
pub fn catalog() -> Option<&'static strata_provider::catalog::Catalog> {
    static CATALOG: std::sync::OnceLock<Option<strata_provider::catalog::Catalog>> =
        std::sync::OnceLock::new();
    strata_provider::catalog::Catalog::embedded(&CATALOG, "Azure", include_str!("../catalog.csv"))
}

#[cfg(test)]
mod catalog_tests {
    use strata_provider::catalog::Catalog;

    #[test]
    fn the_embedded_catalog_reads_and_answers() {
        let c =
            Catalog::parse("Azure", include_str!("../catalog.csv")).expect("the catalog parses");
        assert!(c.source.contains("skypilot-catalog") && c.taken == "2026-11-30");
        let h100 = c.pick("H100", 8, "eastus").expect("H100 x8 in eastus");
        assert_eq!(h100.instance_type, "Standard_ND96isr_H100_v5");
        assert!(h100
            .price
            .is_some_and(|p| p > strata_provider::money::Usd::ZERO));
        let e = c
            .pick("H100", 8, "westus2")
            .expect_err("no ND H100 v5 in westus2");
        assert_eq!(
            e.to_string(),
            "Azure offers 8 × H100 in eastus, eastus2, westus, not in westus2"
        );
        for (gpu, n) in [("A100", 8), ("A100-80GB", 8), ("H100", 1), ("A100-80GB", 1)] {
            assert!(
                c.offers().iter().any(|o| o.gpu == gpu && o.gpus == n),
                "{gpu}×{n}"
            );
        }
        assert!(super::catalog().is_some());
    }
}
