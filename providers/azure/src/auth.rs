//! Where the Azure driver's tokens come from, tried in the Terraform
//! azurerm provider's order and always through Microsoft's own
//! `azure_identity`: a client secret (`client_secret` in the provider
//! block, else `ARM_CLIENT_SECRET` / `AZURE_CLIENT_SECRET`), workload
//! identity federation (a token file: `AZURE_FEDERATED_TOKEN_FILE` or
//! `ARM_OIDC_TOKEN_FILE_PATH`, as GitHub Actions OIDC provides), else the
//! Azure CLI's signed-in account. strata never runs a token flow itself.

use async_trait::async_trait;
use azure_core::credentials::{Secret, TokenCredential};
use azure_identity::{
    AzureCliCredential, ClientAssertionCredentialOptions, ClientSecretCredential,
    WorkloadIdentityCredential, WorkloadIdentityCredentialOptions,
};
use std::sync::Arc;
use tokio::sync::Mutex;

const SCOPE: &str = "https://management.azure.com/.default";

/// What the provider block and the environment say about credentials.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    pub tenant_id: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub token_file: Option<String>,
    pub use_cli: bool,
}

pub struct AzureAuth {
    credential: Result<Arc<dyn TokenCredential>, String>,
    /// What the tokens are for: Resource Manager, or Key Vault.
    scope: &'static str,
    source: String,
    /// The last token and when it expires (the CLI's is not cached by
    /// `azure_identity`, and each `az` run takes a second).
    cached: Mutex<Option<(String, time::OffsetDateTime)>>,
}

impl AzureAuth {
    pub fn new(id: &Identity) -> AzureAuth {
        AzureAuth::for_scope(id, SCOPE)
    }

    fn for_scope(id: &Identity, scope: &'static str) -> AzureAuth {
        let (credential, source) = Self::credential(id);
        AzureAuth {
            credential,
            scope,
            source,
            cached: Mutex::new(None),
        }
    }

    #[allow(clippy::type_complexity)]
    fn credential(id: &Identity) -> (Result<Arc<dyn TokenCredential>, String>, String) {
        let err = |e: azure_core::Error| e.to_string();
        if let (Some(tenant), Some(client), Some(secret)) =
            (&id.tenant_id, &id.client_id, &id.client_secret)
        {
            let source = format!("a client secret for client {client} in tenant {tenant}");
            let c = ClientSecretCredential::new(
                tenant,
                client.clone(),
                Secret::new(secret.clone()),
                None,
            )
            .map(|c| c as Arc<dyn TokenCredential>)
            .map_err(err);
            return (c, source);
        }
        if let (Some(tenant), Some(client), Some(file)) =
            (&id.tenant_id, &id.client_id, &id.token_file)
        {
            let source = format!("workload identity federation for client {client} in tenant {tenant} (token file {file})");
            let options = WorkloadIdentityCredentialOptions {
                credential_options: ClientAssertionCredentialOptions::default(),
                client_id: Some(client.clone()),
                tenant_id: Some(tenant.clone()),
                token_file_path: Some(file.into()),
            };
            let c = WorkloadIdentityCredential::new(Some(options))
                .map(|c| c as Arc<dyn TokenCredential>)
                .map_err(err);
            return (c, source);
        }
        if id.use_cli {
            let c = AzureCliCredential::new(None)
                .map(|c| c as Arc<dyn TokenCredential>)
                .map_err(err);
            return (
                c,
                "the Azure CLI's signed-in account (az account get-access-token)".into(),
            );
        }
        (
            Err("set client_id, tenant_id and client_secret (or ARM_*/AZURE_* variables), a federated token file, or allow the Azure CLI (use_cli)".into()),
            "no credential source".into(),
        )
    }
}

#[async_trait]
impl strata_rest::Auth for AzureAuth {
    async fn token(&self) -> Result<String, String> {
        let mut cached = self.cached.lock().await;
        let soon = time::OffsetDateTime::now_utc() + time::Duration::minutes(5);
        if let Some((t, until)) = cached.as_ref() {
            if *until > soon {
                return Ok(t.clone());
            }
        }
        let credential = self
            .credential
            .as_ref()
            .map_err(|e| format!("{}: {e}", self.source))?;
        let token = credential
            .get_token(&[self.scope], None)
            .await
            .map_err(|e| format!("{}: {e}", self.source))?;
        let t = token.token.secret().to_string();
        *cached = Some((t.clone(), token.expires_on));
        Ok(t)
    }

    fn source(&self) -> String {
        self.source.clone()
    }
}

/// A token for Key Vault (state encryption's `azure_vault` key provider),
/// from the same sources as the driver's.
pub async fn vault_token(id: &Identity) -> Result<String, String> {
    use strata_rest::Auth;
    AzureAuth::for_scope(id, "https://vault.azure.net/.default")
        .token()
        .await
}
