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
//! It is a provider registry too (`providers.v1`): `GET
//! <base>/:namespace/:type/versions`, `GET
//! <base>/:ns/:type/:version/download/:os/:arch` naming the zip, its
//! `SHA256SUMS` and that file's detached OpenPGP signature, made with a key
//! generated at start and returned in `signing_keys`.
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

/// One published provider release for one platform: its zip.
pub struct ProviderRelease {
    /// `namespace/type`.
    pub provider: String,
    pub version: String,
    /// `linux_amd64`.
    pub platform: String,
    /// The protocol versions it speaks (`6.0`).
    pub protocols: Vec<String>,
    pub zip: Vec<u8>,
}

#[derive(Default)]
struct Content {
    /// `namespace/type` → releases.
    providers: BTreeMap<String, Vec<ProviderRelease>>,
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
    signer: Arc<Signer>,
}

/// The key the registry signs checksum files with.
struct Signer {
    secret: pgp::composed::SignedSecretKey,
    armored: String,
    key_id: String,
}

impl Signer {
    fn new() -> Result<Signer, String> {
        use pgp::composed::{KeyType, SecretKeyParamsBuilder, SignedPublicKey};
        use pgp::types::KeyDetails;
        let mut params = SecretKeyParamsBuilder::default();
        params
            .key_type(KeyType::Ed25519Legacy)
            .can_certify(true)
            .can_sign(true)
            .primary_user_id("strata stand-in registry <registry@strata.test>".into());
        let secret = params
            .build()
            .map_err(|e| e.to_string())?
            .generate(rand::thread_rng())
            .map_err(|e| e.to_string())?;
        let public = SignedPublicKey::from(secret.clone());
        let armored = public
            .to_armored_string(Default::default())
            .map_err(|e| e.to_string())?;
        let key_id = public
            .legacy_key_id()
            .as_ref()
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        Ok(Signer {
            secret,
            armored,
            key_id,
        })
    }

    /// A detached binary signature of `data`.
    fn sign(&self, data: &[u8]) -> Option<Vec<u8>> {
        use pgp::composed::DetachedSignature;
        let sig = DetachedSignature::sign_binary_data(
            rand::thread_rng(),
            &self.secret.primary_key,
            &pgp::types::Password::empty(),
            pgp::crypto::hash::HashAlgorithm::Sha256,
            data,
        )
        .ok()?;
        let mut out = Vec::new();
        pgp::ser::Serialize::to_writer(&sig, &mut out).ok()?;
        Some(out)
    }
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

    /// The base URL of the provider registry API, for a `host` block's
    /// `"providers.v1"`.
    pub fn providers_url(&self) -> String {
        format!("{}/v1/providers/", self.server.url)
    }

    /// The signing key's id, as Terraform prints it.
    pub fn key_id(&self) -> String {
        self.signer.key_id.clone()
    }

    pub fn publish_provider(&self, r: ProviderRelease) {
        if let Ok(mut c) = self.content.lock() {
            c.providers.entry(r.provider.clone()).or_default().push(r);
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
    let signer = Arc::new(Signer::new().map_err(std::io::Error::other)?);
    let (shared, signing) = (content.clone(), signer.clone());
    let token = token.map(str::to_string);
    let server = serve(move |req: Req| {
        let answer = answer(&shared, &signing, token.as_deref(), &req);
        async move { answer }
    })?;
    Ok(Registry {
        server,
        content,
        signer,
    })
}

fn answer(
    content: &Mutex<Content>,
    signer: &Signer,
    token: Option<&str>,
    req: &Req,
) -> Response<Body> {
    let Ok(mut c) = content.lock() else {
        return json(500, json!({"errors": ["poisoned"]}));
    };
    *c.hits.entry(req.path.clone()).or_default() += 1;
    if req.path == "/.well-known/terraform.json" {
        return json(
            200,
            json!({"modules.v1": "/v1/modules/", "providers.v1": "/v1/providers/"}),
        );
    }
    if let Some(api) = req.path.strip_prefix("/v1/providers/") {
        if token.is_some_and(|t| req.bearer() != Some(t)) {
            return json(401, json!({"errors": ["not authorized"]}));
        }
        return providers_api(&c, signer, api);
    }
    if let Some(file) = req.path.strip_prefix("/provider-files/") {
        return download(provider_file(&c, signer, file));
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
    download(bytes)
}

/// A file's bytes, or 404.
fn download(bytes: Option<Vec<u8>>) -> Response<Body> {
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

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

fn zip_name(kind: &str, r: &ProviderRelease) -> String {
    format!("terraform-provider-{kind}_{}_{}.zip", r.version, r.platform)
}

/// The release's `SHA256SUMS`: every platform's zip of that version.
fn sums(releases: &[ProviderRelease], kind: &str, version: &str) -> String {
    releases
        .iter()
        .filter(|r| r.version == version)
        .map(|r| format!("{}  {}\n", sha256(&r.zip), zip_name(kind, r)))
        .collect()
}

/// `:ns/:type/versions` and `:ns/:type/:version/download/:os/:arch`.
fn providers_api(c: &Content, signer: &Signer, api: &str) -> Response<Body> {
    let parts: Vec<&str> = api.split('/').collect();
    let provider = parts.iter().take(2).copied().collect::<Vec<_>>().join("/");
    let kind = parts.get(1).copied().unwrap_or_default();
    let Some(releases) = c.providers.get(&provider) else {
        return json(404, json!({"errors": ["Not Found"]}));
    };
    match parts.as_slice() {
        [_, _, "versions"] => {
            let mut versions: BTreeMap<&str, Vec<serde_json::Value>> = BTreeMap::new();
            let mut protocols: BTreeMap<&str, &Vec<String>> = BTreeMap::new();
            for r in releases {
                let (os, arch) = r.platform.split_once('_').unwrap_or((&r.platform, ""));
                versions
                    .entry(&r.version)
                    .or_default()
                    .push(json!({"os": os, "arch": arch}));
                protocols.insert(&r.version, &r.protocols);
            }
            let listed: Vec<_> = versions
                .into_iter()
                .map(|(v, platforms)| json!({"version": v, "protocols": protocols.get(v), "platforms": platforms}))
                .collect();
            json(200, json!({"versions": listed}))
        }
        [ns, _, version, "download", os, arch] => {
            let platform = format!("{os}_{arch}");
            let Some(r) = releases
                .iter()
                .find(|r| r.version == *version && r.platform == platform)
            else {
                return json(404, json!({"errors": ["Not Found"]}));
            };
            let files = format!("/provider-files/{ns}/{kind}/{version}");
            let sums_name = format!("terraform-provider-{kind}_{version}_SHA256SUMS");
            json(
                200,
                json!({
                    "protocols": r.protocols,
                    "os": os,
                    "arch": arch,
                    "filename": zip_name(kind, r),
                    "download_url": format!("{files}/{}", zip_name(kind, r)),
                    "shasums_url": format!("{files}/{sums_name}"),
                    "shasums_signature_url": format!("{files}/{sums_name}.sig"),
                    "shasum": sha256(&r.zip),
                    "signing_keys": {"gpg_public_keys": [{
                        "key_id": signer.key_id,
                        "ascii_armor": signer.armored,
                        "trust_signature": "",
                        "source": "strata",
                        "source_url": null,
                    }]},
                }),
            )
        }
        _ => json(404, json!({"errors": ["Not Found"]})),
    }
}

/// `:ns/:type/:version/<file>`: a zip, the checksums, their signature.
fn provider_file(c: &Content, signer: &Signer, file: &str) -> Option<Vec<u8>> {
    let parts: Vec<&str> = file.split('/').collect();
    let [ns, kind, version, name] = parts.as_slice() else {
        return None;
    };
    let releases = c.providers.get(&format!("{ns}/{kind}"))?;
    let sums_name = format!("terraform-provider-{kind}_{version}_SHA256SUMS");
    let sums_text = sums(releases, kind, version);
    if *name == sums_name {
        return Some(sums_text.into_bytes());
    }
    if name.strip_suffix(".sig") == Some(sums_name.as_str()) {
        return signer.sign(sums_text.as_bytes());
    }
    releases
        .iter()
        .find(|r| r.version == *version && zip_name(kind, r) == *name)
        .map(|r| r.zip.clone())
}
