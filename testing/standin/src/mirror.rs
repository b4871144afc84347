//! A provider network mirror speaking Terraform's provider network mirror
//! protocol over HTTPS (Terraform takes mirrors only at `https:` URLs),
//! under `/mirror/`: `GET /mirror/HOST/NAMESPACE/TYPE/index.json` lists
//! the versions, `GET /mirror/HOST/NAMESPACE/TYPE/VERSION.json` each
//! platform's archive as a URL relative to that document with the
//! checksums published with it, and the archives themselves beside it.
//! Every request is counted by path.

use crate::{json, serve_tls, Body, Req, Server};
use hyper::Response;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// One provider package the mirror has.
pub struct Mirrored {
    /// `host/namespace/type`.
    pub provider: String,
    pub version: String,
    /// `linux_amd64`.
    pub platform: String,
    pub zip: Vec<u8>,
    /// The checksums the mirror gives for it (`h1:…`, `zh:…`); may be
    /// none, or wrong.
    pub hashes: Vec<String>,
}

#[derive(Default)]
struct Content {
    packages: Vec<Mirrored>,
    hits: BTreeMap<String, u32>,
}

pub struct Mirror {
    pub server: Server,
    /// The CA that signed the server's certificate, for `SSL_CERT_FILE`.
    pub ca_pem: String,
    content: Arc<Mutex<Content>>,
}

impl Mirror {
    /// The mirror's base URL, for a `network_mirror` block's `url`.
    pub fn url(&self) -> String {
        format!("{}/mirror/", self.server.url)
    }

    pub fn publish(&self, m: Mirrored) {
        if let Ok(mut c) = self.content.lock() {
            c.packages.push(m);
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

pub fn start() -> std::io::Result<Mirror> {
    let content = Arc::new(Mutex::new(Content::default()));
    let shared = content.clone();
    let (server, ca_pem) = serve_tls(move |req: Req| {
        let answer = answer(&shared, &req);
        async move { answer }
    })?;
    Ok(Mirror {
        server,
        ca_pem,
        content,
    })
}

fn zip_name(m: &Mirrored) -> String {
    let kind = m.provider.rsplit('/').next().unwrap_or_default();
    format!("terraform-provider-{kind}_{}_{}.zip", m.version, m.platform)
}

fn answer(content: &Mutex<Content>, req: &Req) -> Response<Body> {
    let Ok(mut c) = content.lock() else {
        return json(500, json!({"errors": ["poisoned"]}));
    };
    *c.hits.entry(req.path.clone()).or_default() += 1;
    let Some(rest) = req.path.strip_prefix("/mirror/") else {
        return json(404, json!({"errors": ["not found"]}));
    };
    let Some((provider, file)) = rest.rsplit_once('/') else {
        return json(404, json!({"errors": ["not found"]}));
    };
    let packages: Vec<&Mirrored> = c
        .packages
        .iter()
        .filter(|m| m.provider == provider)
        .collect();
    if packages.is_empty() {
        return json(404, json!({"errors": ["not found"]}));
    }
    if file == "index.json" {
        let versions: BTreeMap<&str, serde_json::Value> = packages
            .iter()
            .map(|m| (m.version.as_str(), json!({})))
            .collect();
        return json(200, json!({ "versions": versions }));
    }
    if let Some(version) = file.strip_suffix(".json") {
        let archives: BTreeMap<&str, serde_json::Value> = packages
            .iter()
            .filter(|m| m.version == version)
            .map(|m| {
                (
                    m.platform.as_str(),
                    json!({"url": zip_name(m), "hashes": m.hashes}),
                )
            })
            .collect();
        if archives.is_empty() {
            return json(404, json!({"errors": ["not found"]}));
        }
        return json(200, json!({ "archives": archives }));
    }
    match packages.iter().find(|m| zip_name(m) == file) {
        Some(m) => Response::builder()
            .status(200)
            .header("Content-Type", "application/zip")
            .body(Body::from(m.zip.clone()))
            .unwrap_or_default(),
        None => json(404, json!({"errors": ["not found"]})),
    }
}
