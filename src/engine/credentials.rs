//! `strata logout`: forget the API token `terraform login` saved for a
//! host, as Terraform's command does (the token is only forgotten here,
//! not revoked). `login` itself — a browser and the host's token pages —
//! is not strata's yet: the CLI refuses it, naming the ways to give a
//! token that strata reads (Terraform's saved file among them).

use crate::config::cli_config::{self, CliConfig};
use crate::diag::{Diag, Diags, Sources};

/// HCP Terraform's host, the default of `login` and `logout`.
pub const DEFAULT_HOST: &str = "app.terraform.io";

fn error(summary: &str, detail: String) -> Diags {
    Diags::from(Diag::new("strata::logout", summary, detail))
}

/// A host name as Terraform compares them: lower case; letters, digits,
/// dots, hyphens and a port.
fn host(given: &str) -> Result<String, Diags> {
    let host = given.to_ascii_lowercase();
    let valid = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
        && !host.starts_with(['.', '-', ':']);
    match valid {
        true => Ok(host),
        false => Err(error(
            "Invalid hostname",
            format!("The given hostname {given:?} is not valid: it must be a DNS name, with a port where one is needed."),
        )),
    }
}

/// Forgets `given`'s saved token (HCP Terraform's by default); what it
/// did, in Terraform's words.
pub fn logout(given: Option<&str>, sources: &mut Sources) -> Result<String, Diags> {
    let host = host(given.unwrap_or(DEFAULT_HOST))?;
    let cli = CliConfig::read(sources)?;
    if cli.configured_in_file(&host) {
        return Err(error(
            &format!("Credentials for {host} are manually configured"),
            "The \"strata logout\" command cannot log out because credentials for this host are manually configured in a CLI configuration file.\n\nTo log out, revoke the existing credentials and remove that block from the CLI configuration.".into(),
        ));
    }
    let Some(path) = cli_config::saved_credentials_file() else {
        return Ok(format!("No credentials for {host} are stored.\n\n"));
    };
    let forgot = cli_config::forget_saved_token(&path, &host).map_err(|why| {
        error(
            "Failed to remove API token",
            format!("Unable to remove stored API token: {why}"),
        )
    })?;
    Ok(match forgot {
        true => format!(
            "Removing the stored credentials for {host} from the following file:\n    {}\n\nSuccess! strata has removed the stored API token for {host}.\n\n",
            path.display()
        ),
        false => format!("No credentials for {host} are stored.\n\n"),
    })
}
