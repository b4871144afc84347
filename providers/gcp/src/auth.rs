//! Where the GCP driver's tokens come from: an access token given outright
//! (`access_token` in the provider block, else `GOOGLE_OAUTH_ACCESS_TOKEN`,
//! as the Terraform provider takes it), or Application Default Credentials
//! as Google's own `google-cloud-auth` resolves them
//! (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's user credentials, workload
//! identity federation, the metadata server). strata never runs a token
//! flow itself.

use async_trait::async_trait;
use google_cloud_auth::credentials::{AccessTokenCredentials, Builder};
use tokio::sync::OnceCell;

const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

pub enum GoogleAuth {
    /// A token given outright; `source` says where it came from.
    Static { token: String, source: &'static str },
    /// Application Default Credentials, built on first use.
    Adc(OnceCell<Result<AccessTokenCredentials, String>>),
}

impl GoogleAuth {
    pub fn from_settings(access_token: Option<String>) -> GoogleAuth {
        if let Some(token) = access_token {
            return GoogleAuth::Static {
                token,
                source: "the provider block's access_token",
            };
        }
        match std::env::var("GOOGLE_OAUTH_ACCESS_TOKEN") {
            Ok(token) if !token.is_empty() => GoogleAuth::Static {
                token,
                source: "GOOGLE_OAUTH_ACCESS_TOKEN",
            },
            _ => GoogleAuth::Adc(OnceCell::new()),
        }
    }

    /// Which credential source ADC looks at first, for messages.
    fn adc_source() -> String {
        match std::env::var("GOOGLE_APPLICATION_CREDENTIALS") {
            Ok(p) => format!("Application Default Credentials from GOOGLE_APPLICATION_CREDENTIALS={p}"),
            Err(_) => "Application Default Credentials (gcloud's application_default_credentials.json, else the metadata server)".to_string(),
        }
    }
}

#[async_trait]
impl strata_rest::Auth for GoogleAuth {
    async fn token(&self) -> Result<String, String> {
        match self {
            GoogleAuth::Static { token, .. } => Ok(token.clone()),
            GoogleAuth::Adc(cell) => {
                let creds = cell
                    .get_or_init(|| async {
                        Builder::default()
                            .with_scopes([SCOPE])
                            .build_access_token_credentials()
                            .map_err(|e| format!("{}: {e}", GoogleAuth::adc_source()))
                    })
                    .await
                    .as_ref()
                    .map_err(Clone::clone)?;
                creds
                    .access_token()
                    .await
                    .map(|t| t.token)
                    .map_err(|e| format!("{}: {e}", GoogleAuth::adc_source()))
            }
        }
    }

    fn source(&self) -> String {
        match self {
            GoogleAuth::Static { source, .. } => source.to_string(),
            GoogleAuth::Adc(_) => GoogleAuth::adc_source(),
        }
    }
}

/// Cloud KMS's scope.
const KMS_SCOPE: &str = "https://www.googleapis.com/auth/cloudkms";

/// A token for Cloud KMS (state encryption's `gcp_kms` key provider): from
/// a service account key's JSON, else Application Default Credentials.
pub async fn kms_token(credentials: Option<&str>) -> Result<String, String> {
    use google_cloud_auth::credentials::service_account;
    let creds = match credentials {
        Some(json) => {
            let key: serde_json::Value = serde_json::from_str(json)
                .map_err(|e| format!("the credentials are not a service account key: {e}"))?;
            let scopes = service_account::AccessSpecifier::from_scopes([KMS_SCOPE]);
            service_account::Builder::new(key)
                .with_access_specifier(scopes)
                .build_access_token_credentials()
                .map_err(|e| format!("the credentials given: {e}"))?
        }
        None => Builder::default()
            .with_scopes([KMS_SCOPE])
            .build_access_token_credentials()
            .map_err(|e| format!("{}: {e}", GoogleAuth::adc_source()))?,
    };
    creds
        .access_token()
        .await
        .map(|t| t.token)
        .map_err(|e| e.to_string())
}
