//! `ephemeral "aws_eks_cluster_auth"`: a bearer token for an EKS
//! cluster's API server, made where it is needed and kept nowhere (the
//! data source of the same name leaves it in the state). The token is the
//! one `aws eks get-token` and the AWS provider make: an STS
//! `GetCallerIdentity` request presigned (SigV4 in the query, valid 60 s,
//! the cluster's name signed in the `x-k8s-aws-id` header), base64url
//! without padding, after `k8s-aws-v1.`. The API server sends the URL on
//! to STS to learn who is calling; nothing is asked of AWS to make it.

use crate::Clients;
use aws_credential_types::provider::ProvideCredentials;
use aws_sigv4::http_request::{
    sign, SignableBody, SignableRequest, SignatureLocation, SigningSettings,
};
use aws_sigv4::sign::v4;
use base64::Engine;
use std::time::{Duration, SystemTime};
use strata_provider::{AttributeSchema as A, DriverError, ResourceSchema};
use strata_value::types::Type;

pub const TYPE: &str = "aws_eks_cluster_auth";

/// The provider's schema (5.100.0): `name` in, `token` out, sensitive.
pub fn schema() -> ResourceSchema {
    ResourceSchema::of_attributes(vec![
        ("name", A::required(Type::String, "The EKS cluster's name.")),
        (
            "token",
            A::computed(Type::String, "A bearer token for the cluster's API server.").sensitive(),
        ),
    ])
}

/// How long the presigned request is good for, as the provider signs it.
const EXPIRES: Duration = Duration::from_secs(60);

/// The token for cluster `name`.
pub async fn token(c: &Clients, name: &str) -> Result<String, DriverError> {
    let failed = |detail: String| DriverError::Api {
        operation: format!("{TYPE} (a presigned GetCallerIdentity)"),
        detail,
        retryable: false,
    };
    let config = c.sts.config();
    let region = config
        .region()
        .map(|r| r.to_string())
        .ok_or_else(|| failed("no region is configured".into()))?;
    let credentials = c
        .credentials
        .as_ref()
        .ok_or_else(|| failed("no credentials are configured".into()))?
        .provide_credentials()
        .await
        .map_err(|e| failed(format!("no credentials: {e}")))?;
    let identity = credentials.into();
    let endpoint = c
        .sts_endpoint
        .clone()
        .unwrap_or_else(|| format!("https://sts.{region}.amazonaws.com"));
    let endpoint = endpoint.trim_end_matches('/');
    let host = endpoint
        .split_once("://")
        .map_or(endpoint, |(_, h)| h)
        .to_string();
    let url = format!("{endpoint}/?Action=GetCallerIdentity&Version=2011-06-15");
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(EXPIRES);
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(&region)
        .name("sts")
        .time(SystemTime::now())
        .settings(settings)
        .build()
        .map_err(|e| failed(e.to_string()))?
        .into();
    let headers = [("host", host.as_str()), ("x-k8s-aws-id", name)];
    let request = SignableRequest::new(
        "GET",
        url.as_str(),
        headers.into_iter(),
        SignableBody::Bytes(&[]),
    )
    .map_err(|e| failed(e.to_string()))?;
    let (instructions, _) = sign(request, &params)
        .map_err(|e| failed(e.to_string()))?
        .into_parts();
    let (_, query) = instructions.into_parts();
    let mut signed = url;
    for (k, v) in query {
        let v = percent_encoding::utf8_percent_encode(&v, QUERY);
        signed.push_str(&format!("&{k}={v}"));
    }
    let encoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(signed);
    Ok(format!("k8s-aws-v1.{encoded}"))
}

/// What a query value escapes: everything but SigV4's unreserved set.
const QUERY: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');
