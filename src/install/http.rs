//! The one HTTP client of installation: blocking calls over reqwest, on a
//! runtime of its own (init runs outside the engine's), with a bearer
//! token where the CLI configuration has one for the URL's host.

use crate::config::cli_config::CliConfig;

/// A response read in full.
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

pub struct Http<'c> {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    cli: &'c CliConfig,
}

impl<'c> Http<'c> {
    pub fn new(cli: &'c CliConfig) -> Result<Http<'c>, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
        let client = reqwest::Client::builder()
            .user_agent(concat!("strata/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(std::time::Duration::from_secs(30))
            .timeout(std::time::Duration::from_secs(600))
            .build()
            .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
        Ok(Http {
            runtime,
            client,
            cli,
        })
    }

    /// GET `url` with the token the CLI configuration has for its host.
    pub fn get(&self, url: &str) -> Result<Reply, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
        let host = parsed.host_str().unwrap_or_default().to_string();
        self.get_for(url, &host)
    }

    /// GET `url`, following redirects, with the token of `host` (a
    /// registry's, whose API may be served from another host); an error
    /// only when no answer came.
    pub fn get_for(&self, url: &str, host: &str) -> Result<Reply, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
        let mut request = self.client.get(parsed);
        if let Some(token) = self.cli.token(host) {
            request = request.bearer_auth(token);
        }
        self.runtime.block_on(async {
            let response = request
                .send()
                .await
                .map_err(|e| strata_provider::error_chain(&e))?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = response
                .bytes()
                .await
                .map_err(|e| strata_provider::error_chain(&e))?;
            Ok(Reply {
                status,
                headers,
                body: body.to_vec(),
            })
        })
    }
}

/// `reference` resolved against `base` (a relative URL from a registry).
pub fn resolve(base: &str, reference: &str) -> Result<String, String> {
    let base = reqwest::Url::parse(base).map_err(|e| format!("{base:?} is not a URL: {e}"))?;
    base.join(reference)
        .map(|u| u.to_string())
        .map_err(|e| format!("{reference:?} is not a URL relative to {base}: {e}"))
}
