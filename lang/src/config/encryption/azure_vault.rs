//! OpenTofu's `azure_vault` key provider built from its evaluated
//! arguments: `vault_uri`, `vault_key_name` and `key_length` required,
//! held to Azure's naming rules as OpenTofu holds them; `symmetric` with
//! `symmetric_key_size` 128, 192 or 256 for a Managed HSM's AES-GCM keys;
//! the identity as a client secret, a federated token file or the Azure
//! CLI. The other ways OpenTofu signs in are refused by name.

use super::keys::{count, failed, missing, text, Built, Given, Setting};
use crate::diag::Diags;
use strata_state::encryption::{AzureIdentity, AzureVault, KeyKind};

const ARGS: [&str; 14] = [
    "vault_uri",
    "vault_key_name",
    "key_length",
    "symmetric",
    "symmetric_key_size",
    "tenant_id",
    "client_id",
    "client_secret",
    "use_oidc",
    "oidc_token_file_path",
    "use_cli",
    "subscription_id",
    "environment",
    "encrypted_metadata_alias",
];

/// Ways OpenTofu signs in to Azure that strata does not take yet.
const LATER: [&str; 12] = [
    "client_id_file_path",
    "client_secret_file_path",
    "client_certificate",
    "client_certificate_password",
    "client_certificate_path",
    "oidc_token",
    "oidc_request_url",
    "oidc_request_token",
    "use_msi",
    "msi_endpoint",
    "use_aks_workload_identity",
    "metadata_host",
];

fn flag(s: &Setting, diags: &mut Diags) -> Option<bool> {
    let b = s.value.as_bool();
    if b.is_none() {
        diags.push(super::keys::wrong_type(&s.name, s.span, "a bool"));
    }
    b
}

pub(super) fn build(g: &Given<'_>, diags: &mut Diags) -> Option<Built> {
    let mut v = AzureVault::default();
    let mut id = AzureIdentity {
        use_cli: true,
        ..AzureIdentity::default()
    };
    let (mut alias, mut length, mut symmetric, mut size) = (None, None, false, None);
    for s in g.settings {
        match s.name.as_str() {
            "vault_uri" => v.vault_uri = text(s, diags)?,
            "vault_key_name" => v.vault_key_name = text(s, diags)?,
            "key_length" => length = Some((count(s, diags)?, s.span)),
            "symmetric" => symmetric = flag(s, diags)?,
            "symmetric_key_size" => size = Some(count(s, diags)?),
            "tenant_id" => id.tenant_id = Some(text(s, diags)?),
            "client_id" => id.client_id = Some(text(s, diags)?),
            "client_secret" => id.client_secret = Some(text(s, diags)?),
            "oidc_token_file_path" => id.token_file = Some(text(s, diags)?),
            "use_cli" => id.use_cli = flag(s, diags)?,
            // Key Vault's own address says which cloud; a subscription
            // is not needed to reach it.
            "use_oidc" | "subscription_id" | "environment" => {}
            "encrypted_metadata_alias" => alias = Some(text(s, diags)?),
            other if LATER.contains(&other) => {
                let problem = format!("strata does not sign in to Azure by {other} yet: give a client secret, a federated token file, or use the Azure CLI");
                diags.push(failed(g, &problem, s.span));
                return None;
            }
            _ => diags.push(crate::config::blocks::unsupported_attr_named(
                &s.name,
                s.span,
                "key_provider \"azure_vault\"",
                &ARGS,
            )),
        }
    }
    v.algorithm = match (symmetric, size) {
        (false, _) => "RSA-OAEP-256".into(),
        (true, Some(n @ (128 | 192 | 256))) => format!("A{n}GCM"),
        (true, _) => {
            let problem = "when symmetric is set to true, symmetric_key_size must be given a value of 128, 192, or 256";
            diags.push(failed(g, problem, g.span));
            return None;
        }
    };
    let problem = match (v.vault_key_name.as_str(), v.vault_uri.as_str()) {
        ("", _) => Some("vault_key_name must be provided".to_string()),
        (_, "") => Some("vault_uri must be provided".to_string()),
        (key, uri) => named_badly(key, uri)
            .map(|why| format!("misconfigured key vault name or key name: {why}")),
    };
    if let Some(problem) = problem {
        diags.push(failed(g, &problem, g.span));
        return None;
    }
    let Some((length, at)) = length else {
        diags.push(missing("key_length", g.span));
        return None;
    };
    if length < 1 {
        diags.push(failed(g, "key_length must be at least 1", at));
        return None;
    }
    v.key_length = length;
    v.identity = id;
    Some(Built {
        kind: KeyKind::AzureVault(Box::new(v)),
        alias,
    })
}

/// Azure's rules for a key's name and a vault's, as OpenTofu checks them.
fn named_badly(key: &str, uri: &str) -> Option<String> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '-';
    if key.is_empty() || key.len() > 127 || !key.chars().all(word) {
        return Some("invalid key name: Azure requires a key name consists of 1-127 letters, numbers, or hyphens. See documentation here: https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/resource-name-rules#microsoftkeyvault".into());
    }
    let host = uri
        .split_once("://")
        .map_or(uri, |(_, rest)| rest)
        .split(['/', ':'])
        .next()
        .unwrap_or_default();
    let vault = host.split('.').next().unwrap_or_default();
    let chars: Vec<char> = vault.chars().collect();
    let shaped = (3..=24).contains(&chars.len())
        && chars[0].is_ascii_alphabetic()
        && chars.iter().all(|c| word(*c))
        && chars.last().is_some_and(char::is_ascii_alphanumeric);
    if !shaped {
        return Some("invalid key vault name: Azure requires a key vault name consists of 3-24 letters, numbers, and hyphens only. It must start with a letter and cannot end with a hyphen. See documentation here: https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/resource-name-rules#microsoftkeyvault".into());
    }
    if vault.contains("--") {
        return Some("invalid key vault name: Hyphens in a key vault name must be nonconsecutive. See documentation here: https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/resource-name-rules#microsoftkeyvault".into());
    }
    None
}
