//! The `http` provider (hashicorp/http): the `http` data source, one
//! request with the provider's retries (connection failures, 429 and 5xx
//! but 501, with a doubling wait between `min_delay_ms` and
//! `max_delay_ms`), TLS settings, and the response as the provider stores
//! it (headers in Go's canonical spelling, repeated ones joined by ", ").

use crate::common::{boolean, failed, get, invalid, number, string, with};
use crate::provider::{DataSource, Provider};
use async_trait::async_trait;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use std::collections::BTreeMap;
use std::time::Duration;
use strata_provider::values::{block, map_value, string_map};
use strata_provider::{AttributeSchema, BlockNesting, DriverError, Problem, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;

pub(crate) fn provider() -> Provider {
    Provider::new("http", "hashicorp/http").data_source("http", Http)
}

struct Http;

fn request_failed(detail: String) -> DriverError {
    failed("http", "read", detail)
}

/// `content-type` as Go's `net/http` spells it: `Content-Type`.
fn canonical(name: &str) -> String {
    name.split('-')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + &c.as_str().to_ascii_lowercase(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// The client the configuration's TLS and timeout settings ask for.
fn client(config: &Value) -> Result<reqwest::Client, DriverError> {
    let mut b = reqwest::Client::builder();
    if let Some(ms) = number(config, "request_timeout_ms").filter(|ms| *ms > 0) {
        b = b.timeout(Duration::from_millis(ms as u64));
    }
    if boolean(config, "insecure") == Some(true) {
        b = b.danger_accept_invalid_certs(true);
    }
    if let Some(pem) = string(config, "ca_cert_pem") {
        let certs = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
            .ok()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| request_failed("Error tls: Can't add the CA certificate to certificate pool. Only PEM encoded certificates are supported.".to_string()))?;
        for c in certs {
            b = b.add_root_certificate(c);
        }
    }
    if let (Some(cert), Some(key)) = (
        string(config, "client_cert_pem"),
        string(config, "client_key_pem"),
    ) {
        let identity =
            reqwest::Identity::from_pem(format!("{cert}\n{key}").as_bytes()).map_err(|e| {
                request_failed(format!(
                    "error creating x509 key pair from provided pem blocks: {e}"
                ))
            })?;
        b = b.identity(identity);
    }
    b.build()
        .map_err(|e| request_failed(format!("Error configuring http transport: {e}")))
}

/// How often and how long to try again.
struct Retry {
    attempts: u32,
    min: Duration,
    max: Duration,
}

impl Retry {
    fn of(config: &Value) -> Retry {
        let r = get(config, "retry").cloned().unwrap_or_else(Value::null);
        let ms = |name: &str, default: u64| {
            Duration::from_millis(number(&r, name).map_or(default, |n| n.max(0) as u64))
        };
        Retry {
            attempts: number(&r, "attempts").map_or(0, |n| n.clamp(0, 100) as u32),
            min: ms("min_delay_ms", 1000),
            max: ms("max_delay_ms", 30_000),
        }
    }

    fn wait(&self, attempt: u32) -> Duration {
        self.min
            .checked_mul(2u32.saturating_pow(attempt))
            .map_or(self.max, |w| w.min(self.max))
    }
}

fn retryable(status: reqwest::StatusCode) -> bool {
    status.as_u16() == 429 || (status.is_server_error() && status.as_u16() != 501)
}

#[async_trait]
impl DataSource for Http {
    fn schema(&self) -> ResourceSchema {
        let text = |d| AttributeSchema::optional(Type::String, d);
        let out = |ty, d| AttributeSchema::computed(ty, d);
        let mut schema = ResourceSchema::of_attributes(vec![
            (
                "url",
                AttributeSchema::required(Type::String, "The URL to request."),
            ),
            ("method", text("GET (default), POST or HEAD.")),
            (
                "request_headers",
                AttributeSchema::optional(Type::map(Type::String), "Headers to send."),
            ),
            ("request_body", text("A body to send.")),
            (
                "request_timeout_ms",
                AttributeSchema::optional(Type::Number, "How long the request may take."),
            ),
            ("ca_cert_pem", text("Certificates to trust, PEM.")),
            ("client_cert_pem", text("A client certificate, PEM.")),
            ("client_key_pem", text("The client certificate's key, PEM.")),
            (
                "insecure",
                AttributeSchema::optional(Type::Bool, "Accept any server certificate."),
            ),
            ("response_body", out(Type::String, "The body received.")),
            ("body", out(Type::String, "Deprecated: response_body.")),
            (
                "response_body_base64",
                out(Type::String, "The body received, base64."),
            ),
            (
                "response_headers",
                out(Type::map(Type::String), "The headers received."),
            ),
            ("status_code", out(Type::Number, "The HTTP status.")),
            ("id", out(Type::String, "The URL.")),
        ]);
        let delay = |d| AttributeSchema::optional(Type::Number, d);
        schema.blocks.insert(
            "retry".to_string(),
            block(
                BlockNesting::Single,
                0,
                vec![
                    ("attempts", delay("Retries after the first attempt.")),
                    ("min_delay_ms", delay("The first wait (default 1000).")),
                    ("max_delay_ms", delay("The longest wait (default 30000).")),
                ],
            ),
        );
        schema
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        let mut out = Vec::new();
        if let Some(m) =
            string(config, "method").filter(|m| !["GET", "POST", "HEAD"].contains(&m.as_str()))
        {
            out.push(invalid("method", format!("Attribute method value must be one of: [\"GET\" \"POST\" \"HEAD\"], got: {m:?}")));
        }
        if number(config, "request_timeout_ms").is_some_and(|n| n < 1) {
            out.push(invalid(
                "request_timeout_ms",
                "Attribute request_timeout_ms value must be at least 1".to_string(),
            ));
        }
        let set = |n: &str| get(config, n).is_some_and(|v| !v.is_null());
        if set("ca_cert_pem") && set("insecure") {
            out.push(invalid(
                "ca_cert_pem",
                "Attribute \"insecure\" cannot be specified when \"ca_cert_pem\" is specified"
                    .to_string(),
            ));
        }
        for (a, b) in [
            ("client_cert_pem", "client_key_pem"),
            ("client_key_pem", "client_cert_pem"),
        ] {
            if set(a) && !set(b) {
                out.push(invalid(
                    a,
                    format!("Attribute \"{b}\" must be specified when \"{a}\" is specified"),
                ));
            }
        }
        out
    }

    async fn read(&self, config: &Value) -> Result<Value, DriverError> {
        let url = string(config, "url").unwrap_or_default();
        let method = string(config, "method")
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "GET".to_string());
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|e| request_failed(format!("Error creating request: {e}")))?;
        let client = client(config)?;
        let retry = Retry::of(config);
        let mut attempt = 0;
        let response = loop {
            let mut req = client.request(method.clone(), &url);
            for (k, v) in string_map(config, "request_headers") {
                req = req.header(k, v);
            }
            if let Some(body) = string(config, "request_body") {
                req = req.body(body);
            }
            let answer = req.send().await;
            let again = match &answer {
                Ok(r) => retryable(r.status()),
                Err(e) => !e.is_builder(),
            };
            if !again {
                break answer.map_err(|e| request_failed(format!("Error making request: {e}")))?;
            }
            if attempt >= retry.attempts {
                let why = match answer {
                    Ok(r) => format!("status {}", r.status()),
                    Err(e) => e.to_string(),
                };
                return Err(request_failed(format!(
                    "Error making request: {method} {url} giving up after {} attempt(s): {why}",
                    attempt + 1
                )));
            }
            tokio::time::sleep(retry.wait(attempt)).await;
            attempt += 1;
        };
        let status = response.status().as_u16();
        let mut headers: BTreeMap<String, String> = BTreeMap::new();
        for (name, value) in response.headers() {
            let v = String::from_utf8_lossy(value.as_bytes()).into_owned();
            headers
                .entry(canonical(name.as_str()))
                .and_modify(|all| {
                    all.push_str(", ");
                    all.push_str(&v);
                })
                .or_insert(v);
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| request_failed(format!("Error reading response body: {e}")))?;
        let body = String::from_utf8_lossy(&bytes).into_owned();
        Ok(with(
            config,
            vec![
                ("response_body", Value::string(body.clone())),
                ("body", Value::string(body)),
                (
                    "response_body_base64",
                    Value::string(STANDARD.encode(&bytes)),
                ),
                ("response_headers", map_value(&headers)),
                ("status_code", Value::int(i64::from(status))),
                ("id", Value::string(url)),
            ],
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_are_spelled_as_go_spells_them() {
        assert_eq!(canonical("content-type"), "Content-Type");
        assert_eq!(canonical("x-amz-REQUEST-id"), "X-Amz-Request-Id");
    }

    #[test]
    fn waits_double_up_to_the_longest() {
        let r = Retry {
            attempts: 5,
            min: Duration::from_millis(100),
            max: Duration::from_millis(350),
        };
        let waits: Vec<u128> = (0..4).map(|i| r.wait(i).as_millis()).collect();
        assert_eq!(waits, vec![100, 200, 350, 350]);
        assert!(retryable(reqwest::StatusCode::SERVICE_UNAVAILABLE));
        assert!(!retryable(reqwest::StatusCode::NOT_IMPLEMENTED));
        assert!(!retryable(reqwest::StatusCode::NOT_FOUND));
    }
}
