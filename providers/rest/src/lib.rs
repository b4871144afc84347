//! What strata's REST drivers share, written once: a JSON client that
//! retries throttling and server errors with backoff and jitter (honouring
//! `Retry-After`), follows pages, and turns a cloud's error bodies into
//! [`DriverError`]s with capacity failures told apart; the mapping between
//! Terraform attributes and API fields ([`fields`]); and the ownership
//! labels that let a crashed run's objects be found again ([`labels`]).
//!
//! What differs between clouds (how an error body reads, which codes mean
//! "no capacity", how pages link) is a [`Dialect`]; how a token is had is
//! an [`Auth`], always backed by the vendor's own credential library.

pub mod fields;
pub mod labels;
mod retry;

pub use reqwest::Method;
pub use retry::Retry;

use async_trait::async_trait;
use serde_json::Value as Json;
use std::sync::Arc;
use strata_provider::budget::{Budget, Rate};
use strata_provider::{CapacityCodes, DriverError, Shortage};

/// A source of bearer tokens (the vendor library caches and refreshes).
#[async_trait]
pub trait Auth: Send + Sync {
    /// A token for the next request, or why none could be had: the
    /// message names the credential source tried, never a secret.
    async fn token(&self) -> Result<String, String>;

    /// The credential source, named in a refusal's message (a file path
    /// or a variable's name, never a secret).
    fn source(&self) -> String;
}

/// How one cloud's API speaks.
pub trait Dialect: Send + Sync {
    /// The cloud's name in messages: `GCP`, `Azure`.
    fn cloud(&self) -> &'static str;
    /// The code and message of an error response. By default the shape
    /// Google and Azure share, `{"error": {"code", "message"}}` (or the
    /// same at the top): the code is the first `errors[].reason` (Google's
    /// Compute and Storage), else a string `code` (Azure), else `status`
    /// (Google's `google.rpc.Status`).
    fn error(&self, status: u16, body: &Json, text: &str) -> (String, String) {
        let e = if body["error"].is_object() {
            &body["error"]
        } else {
            body
        };
        let code = e["errors"][0]["reason"]
            .as_str()
            .or_else(|| e["code"].as_str())
            .or_else(|| e["status"].as_str())
            .map_or_else(|| format!("HTTP{status}"), str::to_string);
        let message = e["message"]
            .as_str()
            .map_or_else(|| text.chars().take(500).collect(), str::to_string);
        (code, message)
    }
    /// Codes that say "no capacity for this there now", with their reach.
    fn capacity(&self) -> &'static CapacityCodes;
    /// The shortage a failure reports, if it is for lack of capacity or
    /// quota: by default, when its code or a word of its message is one of
    /// [`Dialect::capacity`].
    fn shortage(&self, code: &str, message: &str) -> Option<Shortage> {
        self.capacity().shortage(code, message)
    }
    /// Errors that say "try again" whatever the HTTP status (GCP sends
    /// `rateLimitExceeded` as a 403, and a GKE cluster busy with another
    /// operation as `FAILED_PRECONDITION`).
    fn retryable(&self, code: &str, message: &str) -> bool {
        let _ = (code, message);
        false
    }
    /// How a list response links its next page.
    fn paging(&self) -> Paging;
    /// The request budget's bucket a call of `method` takes its token
    /// from (`strata_provider::budget`).
    fn bucket(&self, method: &Method) -> &'static str {
        let _ = method;
        "all"
    }
    /// The rate of the bucket named `bucket`; none (no budget) by default.
    fn rate(&self, bucket: &str) -> Option<Rate> {
        let _ = bucket;
        None
    }
}

/// How list responses link their next page.
#[derive(Debug, Clone, Copy)]
pub enum Paging {
    /// `nextPageToken` in the body, sent back as the `pageToken` parameter (Google).
    Token,
    /// `nextLink`, the whole URL of the next page (Azure).
    Link,
}

/// A response that succeeded.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    /// The body as JSON; `null` when empty.
    pub body: Json,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A call that failed after its retries.
#[derive(Debug, Clone)]
pub struct CallError {
    /// The HTTP status; 0 when no response came (connection failed).
    pub status: u16,
    pub code: String,
    pub message: String,
    pub retryable: bool,
}

pub struct Client {
    http: reqwest::Client,
    auth: Arc<dyn Auth>,
    dialect: Arc<dyn Dialect>,
    retry: Retry,
    /// Every try, retries too, waits for its token: a retry is a request
    /// the cloud counts.
    budget: Budget,
}

impl Client {
    pub fn new(auth: Arc<dyn Auth>, dialect: Arc<dyn Dialect>, retry: Retry) -> Client {
        Client {
            http: reqwest::Client::builder()
                .user_agent(concat!("strata/", env!("CARGO_PKG_VERSION")))
                .build()
                .unwrap_or_default(),
            budget: {
                let d = dialect.clone();
                Budget::new(move |bucket| d.rate(bucket))
            },
            auth,
            dialect,
            retry,
        }
    }

    /// Sends one request, retrying what may succeed later (throttling,
    /// 5xx, lost connections, and what the dialect says is transient).
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&Json>,
    ) -> Result<Reply, CallError> {
        self.retry
            .run(
                || self.attempt(method.clone(), url, body),
                |(e, wait): &(CallError, Option<std::time::Duration>), _| {
                    e.retryable.then_some(*wait)
                },
            )
            .await
            .map_err(|(e, _)| e)
    }

    /// One try: the reply, or the failure and the `Retry-After` it gave.
    async fn attempt(
        &self,
        method: Method,
        url: &str,
        body: Option<&Json>,
    ) -> Result<Reply, (CallError, Option<std::time::Duration>)> {
        let token = self.auth.token().await.map_err(|detail| {
            (
                CallError {
                    status: 401,
                    code: "credentials".into(),
                    message: detail,
                    retryable: false,
                },
                None,
            )
        })?;
        self.budget.take(self.dialect.bucket(&method)).await;
        let mut req = self
            .http
            .request(method, url)
            .bearer_auth(token)
            .timeout(self.retry.request_timeout);
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req.send().await.map_err(|e| {
            (
                CallError {
                    status: 0,
                    code: "connection".into(),
                    message: e.to_string(),
                    retryable: true,
                },
                None,
            )
        })?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap_or_default();
        let parsed = if text.trim().is_empty() {
            Json::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Json::Null)
        };
        if (200..300).contains(&status) {
            return Ok(Reply {
                status,
                headers,
                body: parsed,
            });
        }
        let (code, message) = self.dialect.error(status, &parsed, &text);
        let retryable = status == 429 || status >= 500 || self.dialect.retryable(&code, &message);
        let wait = headers
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(retry::retry_after);
        Err((
            CallError {
                status,
                code,
                message,
                retryable,
            },
            wait,
        ))
    }

    /// [`Client::send`] with the failure as a driver error.
    pub async fn call(
        &self,
        op: &str,
        method: Method,
        url: &str,
        body: Option<&Json>,
    ) -> Result<Reply, DriverError> {
        self.send(method, url, body)
            .await
            .map_err(|e| self.driver_error(op, &e))
    }

    /// Reads one object: `None` when it is not there (404).
    pub async fn get(&self, op: &str, url: &str) -> Result<Option<Json>, DriverError> {
        match self.send(Method::GET, url, None).await {
            Ok(r) => Ok(Some(r.body)),
            Err(e) if e.status == 404 => Ok(None),
            Err(e) => Err(self.driver_error(op, &e)),
        }
    }

    /// Every item of a list, following pages; `items` names the array
    /// field (`items`, `value`, `clusters`).
    pub async fn list(&self, op: &str, url: &str, items: &str) -> Result<Vec<Json>, DriverError> {
        match self.list_under(op, url, items).await? {
            Some(all) => Ok(all),
            None => Err(self.driver_error(
                op,
                &CallError {
                    status: 404,
                    code: "NotFound".into(),
                    message: format!("{url} is not there"),
                    retryable: false,
                },
            )),
        }
    }

    /// [`Client::list`] of a collection whose parent may be gone: `None`
    /// when the first page is a 404.
    pub async fn list_under(
        &self,
        op: &str,
        url: &str,
        items: &str,
    ) -> Result<Option<Vec<Json>>, DriverError> {
        self.list_with(op, url, |page| {
            page.get(items)
                .and_then(Json::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .await
    }

    /// Every item of a list whose pages hold them in another shape than
    /// one array (Google's aggregated lists, keyed by region): `items`
    /// takes them out of a page. `None` when the first page is a 404.
    pub async fn list_with(
        &self,
        op: &str,
        url: &str,
        items: impl Fn(&Json) -> Vec<Json>,
    ) -> Result<Option<Vec<Json>>, DriverError> {
        let mut out = Vec::new();
        let mut next = url.to_string();
        let mut first = true;
        loop {
            let page = match self.send(Method::GET, &next, None).await {
                Ok(r) => r.body,
                Err(e) if e.status == 404 && first => return Ok(None),
                Err(e) => return Err(self.driver_error(op, &e)),
            };
            first = false;
            out.extend(items(&page));
            let link = match self.dialect.paging() {
                Paging::Token => page
                    .get("nextPageToken")
                    .and_then(Json::as_str)
                    .filter(|t| !t.is_empty())
                    .map(|t| with_query(url, "pageToken", t)),
                Paging::Link => page
                    .get("nextLink")
                    .and_then(Json::as_str)
                    .filter(|t| !t.is_empty())
                    .map(str::to_string),
            };
            match link {
                Some(l) => next = l,
                None => return Ok(Some(out)),
            }
        }
    }

    /// The failure as a driver error: the cloud's code and message, the
    /// HTTP status, and whether it was a capacity failure.
    pub fn driver_error(&self, op: &str, e: &CallError) -> DriverError {
        let detail = if e.status == 0 {
            format!("cannot reach {}: {}", self.dialect.cloud(), e.message)
        } else if e.code == "credentials" {
            format!("no {} credentials: {}", self.dialect.cloud(), e.message)
        } else if e.status == 401 || e.status == 403 {
            format!(
                "{}: {} (HTTP {}; credentials from {})",
                e.code,
                e.message,
                e.status,
                self.auth.source()
            )
        } else {
            format!("{}: {} (HTTP {})", e.code, e.message, e.status)
        };
        self.classified(op, detail, &e.code, &e.message, e.retryable)
    }

    fn classified(
        &self,
        op: &str,
        detail: String,
        code: &str,
        message: &str,
        retryable: bool,
    ) -> DriverError {
        match self.dialect.shortage(code, message) {
            Some(shortage) => DriverError::Capacity {
                operation: op.to_string(),
                detail,
                shortage,
            },
            None => DriverError::Api {
                operation: op.to_string(),
                detail,
                retryable,
            },
        }
    }

    /// The driver error for a failure reported inside a long-running
    /// operation (its code and message), classified like a call's.
    pub fn operation_error(&self, op: &str, code: &str, message: &str) -> DriverError {
        self.classified(op, format!("{code}: {message}"), code, message, false)
    }
}

/// The error for a create that finds its object already there without
/// this instance's ownership marks: someone else's, never taken over.
/// `what` names the object, `id` is what an `import` block would take.
pub fn not_ours(operation: &str, what: &str, id: &str) -> DriverError {
    DriverError::Api {
        operation: operation.to_string(),
        detail: format!(
            "{what} already exists and strata did not create it; import it with an `import` block (id {id}) or choose another name"
        ),
        retryable: false,
    }
}

/// `url` with one more query parameter (replacing an earlier one of the
/// same name).
pub fn with_query(url: &str, name: &str, value: &str) -> String {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut parts: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty() && p.split('=').next() != Some(name))
        .map(str::to_string)
        .collect();
    parts.push(format!("{name}={}", encode(value)));
    format!("{base}?{}", parts.join("&"))
}

/// Characters a query or path component keeps as they are: RFC 3986's
/// unreserved set.
const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encodes a query or path component.
pub fn encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, COMPONENT).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parameters_are_added_and_replaced() {
        assert_eq!(
            with_query("http://h/x", "pageToken", "a b"),
            "http://h/x?pageToken=a%20b"
        );
        assert_eq!(
            with_query("http://h/x?filter=1&pageToken=old", "pageToken", "new"),
            "http://h/x?filter=1&pageToken=new"
        );
    }
}
