//! The AWS driver's request budget (`strata_provider::budget`): every
//! request an SDK client sends waits for a token of its bucket first.
//! EC2 throttles each API apart (per account and region) and documents the
//! bucket of its non-mutating (`Describe*`) calls: 100 at once, 20 more a
//! second. For its mutating calls, IAM and EKS, which publish no numbers,
//! strata's own conservative rates stand until changed
//! (`STRATA_BUDGET_AWS_EC2_DESCRIBE`, `STRATA_BUDGET_AWS_EC2`,
//! `STRATA_BUDGET_AWS_IAM`, `STRATA_BUDGET_AWS_EKS`: `BURST/PER_SECOND`
//! or `off`).

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use std::sync::Arc;
use strata_provider::budget::{Budget, Rate};

/// The rate of the calls a bucket is named for (see [`bucket_of`]).
fn rate_of(name: &str) -> Option<Rate> {
    match name.split_once(':') {
        Some(("ec2", action)) if action.starts_with("Describe") => {
            Rate::adjusted("AWS_EC2_DESCRIBE", Rate::new(100.0, 20.0))
        }
        Some(("ec2", _)) => Rate::adjusted("AWS_EC2", Rate::new(50.0, 5.0)),
        _ => match name {
            "iam" => Rate::adjusted("AWS_IAM", Rate::new(20.0, 10.0)),
            "eks" => Rate::adjusted("AWS_EKS", Rate::new(20.0, 10.0)),
            _ => None,
        },
    }
}

/// The bucket a request takes its token from: EC2's per API
/// (`ec2:DescribeVpcs`), the other services' one per service; the service
/// read from the request's signature (its credential scope), the action
/// from its query body.
fn bucket_of(request: &HttpRequest) -> String {
    let service = request
        .headers()
        .get("authorization")
        .and_then(|a| a.split("Credential=").nth(1))
        .and_then(|c| c.split('/').nth(3))
        .unwrap_or_default()
        .to_string();
    if service != "ec2" {
        return service;
    }
    let action = request
        .body()
        .bytes()
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|body| body.split('&').find_map(|p| p.strip_prefix("Action=")))
        .unwrap_or_default();
    format!("ec2:{action}")
}

/// An SDK HTTP client whose requests wait for their budget.
#[derive(Debug, Clone)]
pub(crate) struct Budgeted {
    inner: SharedHttpClient,
    budget: Arc<Budget>,
}

impl Budgeted {
    /// The SDK's default HTTPS client (rustls on aws-lc, proxies from the
    /// environment), budgeted: the SDK makes that client itself only when
    /// none is given, so it is made here as the SDK makes it.
    pub(crate) fn new() -> Budgeted {
        use aws_smithy_http_client::proxy::ProxyConfig;
        use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
        use aws_smithy_http_client::{Builder, ConnectorBuilder};
        let inner = Builder::new().build_with_connector_fn(|settings, components| {
            let mut b =
                ConnectorBuilder::default().tls_provider(Provider::Rustls(CryptoMode::AwsLc));
            b.set_connector_settings(settings.cloned());
            if let Some(c) = components {
                b.set_sleep_impl(c.sleep_impl());
            }
            b.set_proxy_config(Some(ProxyConfig::from_env()));
            b.build()
        });
        Budgeted {
            inner,
            budget: Arc::new(Budget::new(rate_of)),
        }
    }
}

impl HttpClient for Budgeted {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(Connector {
            inner: self.inner.http_connector(settings, components),
            budget: self.budget.clone(),
        })
    }
}

#[derive(Debug)]
struct Connector {
    inner: SharedHttpConnector,
    budget: Arc<Budget>,
}

impl HttpConnector for Connector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let (inner, budget) = (self.inner.clone(), self.budget.clone());
        HttpConnectorFuture::new(async move {
            budget.take(&bucket_of(&request)).await;
            inner.call(request).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(service: &str, body: &str) -> HttpRequest {
        let auth = format!(
            "AWS4-HMAC-SHA256 Credential=AKID/20261206/eu-west-1/{service}/aws4_request, SignedHeaders=host, Signature=0"
        );
        let mut r = HttpRequest::new(aws_smithy_types::body::SdkBody::from(body.to_string()));
        r.headers_mut().insert("authorization", auth);
        r
    }

    #[test]
    fn ec2_is_budgeted_per_api_and_the_rest_per_service() {
        let describe = request("ec2", "Action=DescribeVpcs&Version=2016-11-15");
        assert_eq!(bucket_of(&describe), "ec2:DescribeVpcs");
        let create = request(
            "ec2",
            "Version=2016-11-15&Action=CreateVpc&CidrBlock=10.0.0.0%2F16",
        );
        assert_eq!(bucket_of(&create), "ec2:CreateVpc");
        assert_eq!(bucket_of(&request("iam", "Action=GetRole")), "iam");
        assert_eq!(rate_of("ec2:DescribeVpcs"), Some(Rate::new(100.0, 20.0)));
        assert_eq!(rate_of("ec2:CreateVpc"), Some(Rate::new(50.0, 5.0)));
        assert_eq!(rate_of("s3"), None);
    }
}
