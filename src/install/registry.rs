//! The module registry protocol (`modules.v1`): service discovery, the
//! versions of a module, and where a version's package is. Discovery
//! serves the provider registry protocol too (`providers.v1`,
//! `provider_registry.rs`).

use super::http::{resolve, Http, Reply};
use crate::config::source::RegistryAddr;
use std::collections::BTreeMap;

/// A registry client for one run of init: each host discovered once.
pub struct Registry<'h, 'c> {
    http: &'h Http<'c>,
    hosts: &'c BTreeMap<String, BTreeMap<String, String>>,
    /// The service discovered: `modules.v1` or `providers.v1`.
    service: &'static str,
    bases: BTreeMap<String, String>,
}

/// Why the registry could not say, in Terraform's words.
pub struct Refusal {
    pub summary: &'static str,
    pub detail: String,
}

fn refusal(summary: &'static str, detail: String) -> Refusal {
    Refusal { summary, detail }
}

impl<'h, 'c> Registry<'h, 'c> {
    pub fn new(
        http: &'h Http<'c>,
        hosts: &'c BTreeMap<String, BTreeMap<String, String>>,
        service: &'static str,
    ) -> Self {
        Registry {
            http,
            hosts,
            service,
            bases: BTreeMap::new(),
        }
    }

    /// The base URL of `host`'s registry API for the service: the CLI
    /// configuration's `host` block, else the host's discovery document.
    pub fn base(&mut self, host: &str) -> Result<String, Refusal> {
        let service = self.service;
        if let Some(base) = self.bases.get(host) {
            return Ok(base.clone());
        }
        let unreachable = |why: String| {
            refusal(
                "Error accessing remote module registry",
                format!("Failed to retrieve available versions for modules on {host}: {why}"),
            )
        };
        let base = match self.hosts.get(host) {
            Some(services) => match services.get(service) {
                Some(url) => url.clone(),
                None => {
                    return Err(unreachable(format!(
                        "the CLI configuration's host block for {host} has no {service:?} service"
                    )))
                }
            },
            None => {
                let doc_url = format!("https://{host}/.well-known/terraform.json");
                let reply = self.http.get_for(&doc_url, host).map_err(unreachable)?;
                if reply.status != 200 {
                    return Err(unreachable(format!(
                        "service discovery at {doc_url} answered {}",
                        reply.status
                    )));
                }
                let doc: serde_json::Value = serde_json::from_slice(&reply.body).map_err(|e| {
                    unreachable(format!("{doc_url} is not a discovery document: {e}"))
                })?;
                let Some(rel) = doc[service].as_str() else {
                    return Err(unreachable(format!(
                        "host {host} does not provide the {service} service"
                    )));
                };
                resolve(&doc_url, rel).map_err(unreachable)?
            }
        };
        let base = match base.ends_with('/') {
            true => base,
            false => format!("{base}/"),
        };
        self.bases.insert(host.to_string(), base.clone());
        Ok(base)
    }

    /// GET `tail` of `addr`'s registry API (`versions`, `1.0.0/download`):
    /// the URL asked and the answer; `failed` words a failure.
    fn call(
        &mut self,
        addr: &RegistryAddr,
        tail: &str,
        failed: impl Fn(String) -> Refusal,
    ) -> Result<(String, Reply), Refusal> {
        let base = self.base(&addr.host)?;
        let url = format!(
            "{base}{}/{}/{}/{tail}",
            addr.namespace, addr.name, addr.system
        );
        let reply = self.http.get_for(&url, &addr.host).map_err(failed)?;
        Ok((url, reply))
    }

    /// Every version the registry has of `addr`.
    pub fn versions(&mut self, addr: &RegistryAddr) -> Result<Vec<String>, Refusal> {
        let failed = |why: String| {
            refusal(
                "Error accessing remote module registry",
                format!(
                    "Failed to retrieve available versions for module {:?} from {}: {why}.",
                    addr.package(),
                    addr.host
                ),
            )
        };
        let (_, reply) = self.call(addr, "versions", failed)?;
        match reply.status {
            200 => {}
            404 => {
                return Err(refusal(
                    "Module not found",
                    format!("Module {:?} could not be found in the module registry at {}.", addr.package(), addr.host),
                ))
            }
            401 | 403 => return Err(failed(format!("the registry refused the request ({}); set a token for {} in the CLI configuration's credentials block or TF_TOKEN_ variable", reply.status, addr.host))),
            s => return Err(failed(format!("the registry answered {s}"))),
        }
        let doc: serde_json::Value = serde_json::from_slice(&reply.body)
            .map_err(|e| failed(format!("the answer is not JSON: {e}")))?;
        let listed = doc["modules"][0]["versions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        Ok(listed
            .iter()
            .filter_map(|v| v["version"].as_str().map(str::to_string))
            .collect())
    }

    /// Where the package of `version` of `addr` is: a module source
    /// address (relative URLs resolved against the download endpoint).
    pub fn location(&mut self, addr: &RegistryAddr, version: &str) -> Result<String, Refusal> {
        let failed = |why: String| {
            refusal(
                "Error accessing remote module registry",
                format!(
                    "Failed to retrieve a download URL for {} {version}: {why}.",
                    addr.package()
                ),
            )
        };
        let (url, reply) = self.call(addr, &format!("{version}/download"), failed)?;
        // 204 with X-Terraform-Get, or (newer registries) 200 with the
        // location in a JSON body.
        let location = match (reply.status, reply.header("x-terraform-get")) {
            (200 | 204, Some(l)) => l.to_string(),
            (200, None) => serde_json::from_slice::<serde_json::Value>(&reply.body)
                .ok()
                .and_then(|d| d["location"].as_str().map(str::to_string))
                .ok_or_else(|| failed("the answer names no location".into()))?,
            (s, _) => return Err(failed(format!("the registry answered {s}"))),
        };
        let relative = ["/", "./", "../"].iter().any(|p| location.starts_with(p));
        match relative {
            true => resolve(&url, &location).map_err(failed),
            false => Ok(location),
        }
    }
}
