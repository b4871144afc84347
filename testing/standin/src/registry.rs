//! A module registry speaking Terraform's module registry protocol
//! (`modules.v1`), for the `init` tests: service discovery at
//! `/.well-known/terraform.json`, `GET <base>/:namespace/:name/:system/versions`
//! (404 for an unknown module), `GET <base>/:ns/:name/:system/:version/download`
//! answered `204 No Content` with a relative `X-Terraform-Get`, and the
//! packages themselves under `/archives/`. Files published with
//! [`Registry::file`] are served as they are (archive URLs for HTTP module
//! sources), and pages with [`Registry::page`] answer with an
//! `X-Terraform-Get` header naming another source. When started with a
//! token, the registry API refuses requests without it (401), as a private
//! registry does; packages and files need none.
//!
//! Every request is counted by path, so tests can tell whether a package
//! was fetched again.

use crate::{json, serve, Body, Req, Server};
use hyper::Response;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// One published version of a module: its package as a `.tar.gz`.
pub struct Published {
    /// `namespace/name/system`.
    pub module: String,
    pub version: String,
    pub package: Vec<u8>,
}

#[derive(Default)]
struct Content {
    /// `namespace/name/system` → version → package.
    modules: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
    /// Path → bytes.
    files: BTreeMap<String, Vec<u8>>,
    /// Path → the source its `X-Terraform-Get` names.
    pages: BTreeMap<String, String>,
    /// Path → how many requests it had.
    hits: BTreeMap<String, u32>,
}

pub struct Registry {
    pub server: Server,
    content: Arc<Mutex<Content>>,
}

impl Registry {
    /// The base URL of the registry API, for a CLI configuration's
    /// `host` block (`services = { "modules.v1" = … }`).
    pub fn modules_url(&self) -> String {
        format!("{}/v1/modules/", self.server.url)
    }

    pub fn publish(&self, p: Published) {
        if let Ok(mut c) = self.content.lock() {
            c.modules
                .entry(p.module)
                .or_default()
                .insert(p.version, p.package);
        }
    }

    /// Serves `bytes` at `path` (`/files/net.zip`).
    pub fn file(&self, path: &str, bytes: Vec<u8>) {
        if let Ok(mut c) = self.content.lock() {
            c.files.insert(path.to_string(), bytes);
        }
    }

    /// Answers `path` with `X-Terraform-Get: source`.
    pub fn page(&self, path: &str, source: &str) {
        if let Ok(mut c) = self.content.lock() {
            c.pages.insert(path.to_string(), source.to_string());
        }
    }

    /// How many requests `path` had.
    pub fn hits(&self, path: &str) -> u32 {
        self.content
            .lock()
            .map(|c| c.hits.get(path).copied().unwrap_or(0))
            .unwrap_or(0)
    }
}

/// Starts a registry; with `token`, its API needs `Authorization: Bearer`.
pub fn start(token: Option<&str>) -> std::io::Result<Registry> {
    let content = Arc::new(Mutex::new(Content::default()));
    let shared = content.clone();
    let token = token.map(str::to_string);
    let server = serve(move |req: Req| {
        let answer = answer(&shared, token.as_deref(), &req);
        async move { answer }
    })?;
    Ok(Registry { server, content })
}

fn answer(content: &Mutex<Content>, token: Option<&str>, req: &Req) -> Response<Body> {
    let Ok(mut c) = content.lock() else {
        return json(500, json!({"errors": ["poisoned"]}));
    };
    *c.hits.entry(req.path.clone()).or_default() += 1;
    if req.path == "/.well-known/terraform.json" {
        return json(200, json!({"modules.v1": "/v1/modules/"}));
    }
    if let Some(api) = req.path.strip_prefix("/v1/modules/") {
        if token.is_some_and(|t| req.bearer() != Some(t)) {
            return json(401, json!({"errors": ["not authorized"]}));
        }
        return registry_api(&c, api);
    }
    if let Some(source) = c.pages.get(&req.path) {
        return Response::builder()
            .status(200)
            .header("X-Terraform-Get", source.as_str())
            .body(Body::from("<html><body>see the header</body></html>"))
            .unwrap_or_default();
    }
    let bytes = match req.path.strip_prefix("/archives/") {
        Some(rest) => package(&c, rest),
        None => c.files.get(&req.path).cloned(),
    };
    match bytes {
        Some(b) => Response::builder()
            .status(200)
            .header("Content-Type", "application/octet-stream")
            .body(Body::from(b))
            .unwrap_or_default(),
        None => json(404, json!({"errors": ["not found"]})),
    }
}

/// `:ns/:name/:system/versions` and `:ns/:name/:system/:version/download`.
fn registry_api(c: &Content, api: &str) -> Response<Body> {
    let parts: Vec<&str> = api.split('/').collect();
    let module = parts.iter().take(3).copied().collect::<Vec<_>>().join("/");
    let Some(versions) = c.modules.get(&module) else {
        return json(404, json!({"errors": ["Not Found"]}));
    };
    match parts.as_slice() {
        [_, _, _, "versions"] => {
            let listed: Vec<_> = versions.keys().map(|v| json!({"version": v})).collect();
            json(200, json!({"modules": [{"versions": listed}]}))
        }
        [_, _, _, version, "download"] if versions.contains_key(*version) => Response::builder()
            .status(204)
            .header(
                "X-Terraform-Get",
                format!("/archives/{module}/{version}.tar.gz"),
            )
            .body(Body::default())
            .unwrap_or_default(),
        _ => json(404, json!({"errors": ["Not Found"]})),
    }
}

/// `ns/name/system/version.tar.gz` → the package.
fn package(c: &Content, rest: &str) -> Option<Vec<u8>> {
    let rest = rest.strip_suffix(".tar.gz")?;
    let (module, version) = rest.rsplit_once('/')?;
    c.modules.get(module)?.get(version).cloned()
}
