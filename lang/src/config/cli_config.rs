//! Terraform's CLI configuration, the part module installation needs:
//! `host` blocks (a registry's services given instead of discovered) and
//! registry credentials. It is read from `TF_CLI_CONFIG_FILE`, else
//! `~/.terraformrc` with the tokens `terraform login` keeps in
//! `~/.terraform.d/credentials.tfrc.json` (as Terraform, that directory is
//! not read when `TF_CLI_CONFIG_FILE` names the file), and those in
//! `TF_TOKEN_<host>` variables, so a machine set up for Terraform works
//! for strata.

use crate::diag::{Diag, Diags, Sources};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct CliConfig {
    /// Host → service id (`modules.v1`) → URL.
    pub hosts: BTreeMap<String, BTreeMap<String, String>>,
    /// Host → API token.
    credentials: BTreeMap<String, String>,
    /// Hosts whose token a `credentials` block of the CLI file gives (not
    /// `login`'s file, which `logout` may change).
    configured: std::collections::BTreeSet<String>,
    /// Hosts whose token `login`'s file holds.
    saved: std::collections::BTreeSet<String>,
    /// The `provider_installation` block's methods, in order; `None`
    /// without one (Terraform's implied methods then apply).
    pub provider_installation: Option<Vec<InstallMethod>>,
    /// `plugin_cache_dir` (or `TF_PLUGIN_CACHE_DIR`, which wins).
    pub plugin_cache_dir: Option<PathBuf>,
}

/// Where `init` may take a provider from, and for which providers.
#[derive(Debug, Clone, PartialEq)]
pub struct InstallMethod {
    pub kind: MethodKind,
    /// Provider address patterns (`registry.terraform.io/hashicorp/*`);
    /// empty means every provider.
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum MethodKind {
    /// A local directory in the mirror layout.
    FilesystemMirror(PathBuf),
    /// The provider's own registry.
    Direct,
    /// A network mirror at a URL.
    NetworkMirror(String),
}

impl InstallMethod {
    /// Whether `address` (`host/namespace/type`) is this method's to
    /// install: matched by `include` (all when empty), not by `exclude`.
    pub fn serves(&self, address: &str) -> bool {
        let matches = |pattern: &String| address_matches(pattern, address);
        (self.include.is_empty() || self.include.iter().any(matches))
            && !self.exclude.iter().any(matches)
    }
}

/// A provider address pattern: each of host, namespace and type either
/// as written (case-insensitive) or `*`; a pattern without a host is
/// registry.terraform.io's.
fn address_matches(pattern: &str, address: &str) -> bool {
    let full = strata_state::provider_source(pattern);
    let parts: Vec<&str> = full.split('/').collect();
    let have: Vec<&str> = address.split('/').collect();
    parts.len() == have.len()
        && parts
            .iter()
            .zip(&have)
            .all(|(p, h)| *p == "*" || p.eq_ignore_ascii_case(h))
}

impl CliConfig {
    /// The CLI configuration of this process: empty when there is none.
    pub fn read(sources: &mut Sources) -> Result<CliConfig, Diags> {
        let mut out = CliConfig::default();
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let file = match std::env::var_os("TF_CLI_CONFIG_FILE").filter(|f| !f.is_empty()) {
            Some(f) => Some(PathBuf::from(f)),
            None => home.as_ref().map(|h| h.join(".terraformrc")),
        };
        if let Some(file) = file.filter(|f| f.is_file()) {
            out.read_file(&file, sources)?;
        }
        if let Some(saved) = saved_credentials_file() {
            out.read_saved_tokens(&saved)?;
        }
        if let Some(dir) = std::env::var_os("TF_PLUGIN_CACHE_DIR").filter(|d| !d.is_empty()) {
            out.plugin_cache_dir = Some(PathBuf::from(dir));
        }
        Ok(out)
    }

    /// Whether a `credentials` block of the CLI file gives `host`'s token
    /// and the saved file does not (Terraform's "manually configured").
    pub fn configured_in_file(&self, host: &str) -> bool {
        self.configured.contains(host) && !self.saved.contains(host)
    }

    /// The token for `host`: a `TF_TOKEN_` variable first, as Terraform.
    pub fn token(&self, host: &str) -> Option<String> {
        // Dots become underscores and hyphens double underscores.
        let name = host.replace('-', "__").replace('.', "_");
        std::env::var(format!("TF_TOKEN_{name}"))
            .ok()
            .filter(|t| !t.is_empty())
            .or_else(|| self.credentials.get(host).cloned())
    }

    fn read_file(&mut self, path: &Path, sources: &mut Sources) -> Result<(), Diags> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Diags::from(Diag::new(
                "strata::config::cli_config",
                "Cannot read the CLI configuration",
                format!("{}: {e}", path.display()),
            ))
        })?;
        let id = sources.add(path.display().to_string(), text);
        let body = crate::syntax::parse_body(id, sources.text(id)).map_err(Diags::from)?;
        let mut ev = crate::eval::Evaluator::new(&crate::eval::EmptyScope, PathBuf::new());
        if let Some(attr) = body.attr("plugin_cache_dir") {
            let value = ev.eval(&attr.expr).map_err(Diags::from)?;
            self.plugin_cache_dir = value.as_str().map(PathBuf::from);
        }
        for block in &body.blocks {
            if block.kind == "provider_installation" {
                self.provider_installation = Some(installation(&block.body, &mut ev)?);
                continue;
            }
            let Some((label, _)) = block.labels.first() else {
                continue;
            };
            let host = label.to_ascii_lowercase();
            // Other settings (provider_installation, plugin_cache_dir, …)
            // are read where they are used.
            let field = match block.kind.as_str() {
                "host" => "services",
                "credentials" => "token",
                _ => continue,
            };
            let Some(attr) = block.body.attr(field) else {
                continue;
            };
            let value = ev.eval(&attr.expr).map_err(Diags::from)?;
            let json = crate::lang::json::plain_json(&value);
            let wrong = || {
                Diags::from(
                    Diag::new(
                        "strata::config::cli_config",
                        format!("Invalid {field} in the CLI configuration"),
                        match field {
                            "services" => "A host's services are a map of service ids to URLs, such as { \"modules.v1\" = \"https://example.com/v1/modules/\" }.",
                            _ => "A token is a string.",
                        },
                    )
                    .at(attr.expr.span),
                )
            };
            match (field, json) {
                ("token", serde_json::Value::String(t)) => {
                    self.configured.insert(host.clone());
                    self.credentials.insert(host, t);
                }
                ("services", serde_json::Value::Object(map)) => {
                    let mut services = BTreeMap::new();
                    for (id, url) in map {
                        let url = url.as_str().ok_or_else(wrong)?.to_string();
                        services.insert(id, url);
                    }
                    self.hosts.insert(host, services);
                }
                _ => return Err(wrong()),
            }
        }
        Ok(())
    }

    /// What `terraform login` kept; a token in the CLI file comes first.
    fn read_saved_tokens(&mut self, path: &Path) -> Result<(), Diags> {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Ok(());
        };
        let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            Diags::from(Diag::new(
                "strata::config::cli_config",
                "Cannot read saved credentials",
                format!("{}: {e}", path.display()),
            ))
        })?;
        let saved = doc["credentials"].as_object().into_iter().flatten();
        for (host, entry) in saved {
            if let Some(token) = entry["token"].as_str() {
                self.saved.insert(host.to_ascii_lowercase());
                self.credentials
                    .entry(host.to_ascii_lowercase())
                    .or_insert_with(|| token.to_string());
            }
        }
        Ok(())
    }
}

/// Where `terraform login` keeps tokens: `~/.terraform.d/credentials.tfrc.json`.
/// Terraform reads that directory only when `TF_CLI_CONFIG_FILE` does not
/// name the configuration, and neither does strata.
pub fn saved_credentials_file() -> Option<PathBuf> {
    if std::env::var_os("TF_CLI_CONFIG_FILE").is_some_and(|f| !f.is_empty()) {
        return None;
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(
        PathBuf::from(home)
            .join(".terraform.d")
            .join("credentials.tfrc.json"),
    )
}

/// Removes `host`'s token from the saved credentials file (written whole
/// again through a temporary file, the other hosts' kept); whether it
/// had one.
pub fn forget_saved_token(path: &Path, host: &str) -> Result<bool, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let Some(saved) = doc["credentials"].as_object_mut() else {
        return Ok(false);
    };
    let Some(key) = saved.keys().find(|k| k.eq_ignore_ascii_case(host)).cloned() else {
        return Ok(false);
    };
    saved.remove(&key);
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    let staging = path.with_extension("json.new");
    std::fs::write(&staging, text)
        .and_then(|()| std::fs::rename(&staging, path))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(true)
}

/// The methods of a `provider_installation` block, in order.
fn installation(
    body: &crate::syntax::Body,
    ev: &mut crate::eval::Evaluator<'_>,
) -> Result<Vec<InstallMethod>, Diags> {
    let mut methods = Vec::new();
    for block in &body.blocks {
        let mut text = |name: &str| -> Result<Option<serde_json::Value>, Diags> {
            match block.body.attr(name) {
                None => Ok(None),
                Some(a) => {
                    let v = ev.eval(&a.expr).map_err(Diags::from)?;
                    Ok(Some(crate::lang::json::plain_json(&v)))
                }
            }
        };
        let patterns = |v: Option<serde_json::Value>| -> Vec<String> {
            v.and_then(|v| v.as_array().cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect()
        };
        let wrong = |why: &str| {
            Diags::from(
                Diag::new(
                    "strata::config::cli_config",
                    "Invalid provider_installation method",
                    why.to_string(),
                )
                .at(block.span),
            )
        };
        let kind = match block.kind.as_str() {
            "filesystem_mirror" => match text("path")? {
                Some(serde_json::Value::String(p)) => MethodKind::FilesystemMirror(PathBuf::from(p)),
                _ => return Err(wrong("A filesystem_mirror needs path, the directory of the mirror.")),
            },
            "network_mirror" => match text("url")? {
                Some(serde_json::Value::String(u)) if is_https(&u) => MethodKind::NetworkMirror(u),
                Some(serde_json::Value::String(u)) => return Err(wrong(&format!("Cannot use {u:?} as a URL for a network provider mirror: the mirror must be at an https: URL."))),
                _ => return Err(wrong("A network_mirror needs url.")),
            },
            "direct" => MethodKind::Direct,
            // Development overrides are for provider authors' builds.
            "dev_overrides" => continue,
            other => return Err(wrong(&format!("{other:?} is not an installation method: use filesystem_mirror, network_mirror or direct."))),
        };
        methods.push(InstallMethod {
            kind,
            include: patterns(text("include")?),
            exclude: patterns(text("exclude")?),
        });
    }
    Ok(methods)
}

/// An `https:` URL with a host: the only place Terraform takes a network
/// mirror from.
fn is_https(address: &str) -> bool {
    url::Url::parse(address).is_ok_and(|u| u.scheme() == "https" && u.host_str().is_some())
}
