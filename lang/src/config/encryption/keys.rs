//! Key providers built from their evaluated arguments, with OpenTofu's
//! defaults and its words for what it refuses: `pbkdf2` (a passphrase),
//! `aws_kms` (a data key from AWS KMS), `gcp_kms` (a key Cloud KMS
//! encrypts), `azure_vault` (one a Key Vault key encrypts), `openbao`
//! (one from OpenBao's transit engine) and `external` (one a program
//! gives).

use crate::config::blocks::{err, unsupported_attr_named};
use crate::diag::{Diag, Diags, Span};
use crate::lang::value::Value;
use strata_state::encryption::{
    AwsKms, ExternalKeys, GcpKms, Hash, KeyKind, KeyProvider, KeySpec, OpenBao, Pbkdf2,
};

const CODE: &str = "strata::config::encryption";

/// One argument of a key provider, evaluated.
pub struct Setting {
    pub name: String,
    pub value: Value,
    pub span: Span,
}

/// A key provider block as evaluated.
pub struct Given<'a> {
    pub kind: &'a str,
    /// `key_provider.TYPE.NAME`, for its errors.
    pub addr: &'a str,
    pub settings: &'a [Setting],
    /// `aws_kms`'s `endpoints { … }`.
    pub endpoints: &'a [Setting],
    /// `pbkdf2`'s `chain`: the key provider whose key is its passphrase.
    pub chain: Option<KeyProvider>,
    pub span: Span,
}

pub struct Built {
    pub kind: KeyKind,
    /// `encrypted_metadata_alias`: the name its metadata is kept under.
    pub alias: Option<String>,
}

pub fn build(g: &Given<'_>, diags: &mut Diags) -> Option<Built> {
    match g.kind {
        "pbkdf2" => pbkdf2(g, diags),
        "openbao" => openbao(g, diags),
        "gcp_kms" => gcp_kms(g, diags),
        "external" => external(g, diags),
        _ => aws_kms(g, diags),
    }
}

pub(super) fn failed(g: &Given<'_>, problem: &str, span: Span) -> Diag {
    err(
        CODE,
        "Unable to build encryption key data",
        format!("{} failed with error: {problem}", g.addr),
        span,
    )
}

fn pbkdf2(g: &Given<'_>, diags: &mut Diags) -> Option<Built> {
    const ARGS: [&str; 6] = [
        "passphrase",
        "key_length",
        "iterations",
        "hash_function",
        "salt_length",
        "encrypted_metadata_alias",
    ];
    let mut p = Pbkdf2::new(String::new());
    let mut alias = None;
    let mut given_passphrase = false;
    for s in g.settings {
        match s.name.as_str() {
            "passphrase" => {
                p.passphrase = text(s, diags)?;
                given_passphrase = true;
            }
            "hash_function" => {
                let name = text(s, diags)?;
                let Some(h) = Hash::from_name(&name) else {
                    let problem = format!("invalid hash function name: {name}");
                    diags.push(failed(g, &problem, s.span));
                    return None;
                };
                p.hash = h;
            }
            "key_length" => p.key_length = count(s, diags)?,
            "salt_length" => p.salt_length = count(s, diags)?,
            "iterations" => p.iterations = u32::try_from(count(s, diags)?).unwrap_or(u32::MAX),
            "encrypted_metadata_alias" => alias = Some(text(s, diags)?),
            _ => diags.push(unsupported_attr_named(
                &s.name,
                s.span,
                "key_provider \"pbkdf2\"",
                &ARGS,
            )),
        }
    }
    p.chain = g.chain.clone().map(Box::new);
    if !given_passphrase && p.chain.is_none() {
        diags.push(missing("passphrase", g.span));
        return None;
    }
    if let Some(problem) = p.problem() {
        diags.push(failed(g, &problem, g.span));
        return None;
    }
    Some(Built {
        kind: KeyKind::Pbkdf2(p),
        alias,
    })
}

/// OpenTofu's `aws_kms`: `kms_key_id` and `key_spec` required, the
/// connection as the `s3` backend takes it (region, profile, static keys,
/// `endpoints { kms }`); the SDK's chain finds what is left out.
fn aws_kms(g: &Given<'_>, diags: &mut Diags) -> Option<Built> {
    const ARGS: [&str; 9] = [
        "kms_key_id",
        "key_spec",
        "region",
        "profile",
        "access_key",
        "secret_key",
        "token",
        "skip_credentials_validation",
        "encrypted_metadata_alias",
    ];
    let mut k = AwsKms {
        kms_key_id: String::new(),
        key_spec: KeySpec::Aes256,
        region: None,
        endpoint: None,
        profile: None,
        access_key: None,
        secret_key: None,
        token: None,
    };
    let (mut alias, mut spec) = (None, None);
    for s in g.settings {
        match s.name.as_str() {
            "kms_key_id" => k.kms_key_id = text(s, diags)?,
            "key_spec" => spec = Some((text(s, diags)?, s.span)),
            "region" => k.region = Some(text(s, diags)?),
            "profile" => k.profile = Some(text(s, diags)?),
            "access_key" => k.access_key = Some(text(s, diags)?),
            "secret_key" => k.secret_key = Some(text(s, diags)?),
            "token" => k.token = Some(text(s, diags)?),
            "encrypted_metadata_alias" => alias = Some(text(s, diags)?),
            // The SDK asks nothing before the first call: nothing to skip.
            "skip_credentials_validation" => {}
            _ => diags.push(unsupported_attr_named(
                &s.name,
                s.span,
                "key_provider \"aws_kms\"",
                &ARGS,
            )),
        }
    }
    for s in g.endpoints {
        match s.name.as_str() {
            "kms" => k.endpoint = Some(text(s, diags)?),
            "iam" | "sts" => {}
            _ => diags.push(unsupported_attr_named(
                &s.name,
                s.span,
                "endpoints",
                &["kms", "iam", "sts"],
            )),
        }
    }
    if k.kms_key_id.is_empty() {
        diags.push(failed(g, "no kms_key_id provided", g.span));
        return None;
    }
    let Some((spec, span)) = spec else {
        diags.push(failed(g, "no key_spec provided", g.span));
        return None;
    };
    let Some(spec) = KeySpec::from_name(&spec) else {
        let problem = format!("invalid key_spec {spec}, expected one of [AES_256 AES_128]");
        diags.push(failed(g, &problem, span));
        return None;
    };
    k.key_spec = spec;
    Some(Built {
        kind: KeyKind::AwsKms(Box::new(k)),
        alias,
    })
}

/// OpenTofu's `openbao`: `key_name` required; `address` and `token` (else
/// `BAO_ADDR`, `BAO_TOKEN`), `key_length` 16, 32 or 64 (32),
/// `transit_engine_path` (`/transit`).
fn openbao(g: &Given<'_>, diags: &mut Diags) -> Option<Built> {
    const ARGS: [&str; 6] = [
        "key_name",
        "address",
        "token",
        "key_length",
        "transit_engine_path",
        "encrypted_metadata_alias",
    ];
    let mut b = OpenBao::new(String::new());
    let mut alias = None;
    for s in g.settings {
        match s.name.as_str() {
            "key_name" => b.key_name = text(s, diags)?,
            "address" => b.address = Some(text(s, diags)?),
            "token" => b.token = Some(text(s, diags)?),
            "transit_engine_path" => b.transit_engine_path = text(s, diags)?,
            "key_length" => {
                b.key_length = count(s, diags)?;
                if !matches!(b.key_length, 16 | 32 | 64) {
                    let problem = format!(
                        "data key length should one of 16, 32 or 64 bytes: got {}",
                        b.key_length
                    );
                    diags.push(failed(g, &problem, s.span));
                    return None;
                }
            }
            "encrypted_metadata_alias" => alias = Some(text(s, diags)?),
            _ => diags.push(unsupported_attr_named(
                &s.name,
                s.span,
                "key_provider \"openbao\"",
                &ARGS,
            )),
        }
    }
    if b.key_name.is_empty() {
        diags.push(failed(g, "no key name found", g.span));
        return None;
    }
    Some(Built {
        kind: KeyKind::OpenBao(Box::new(b)),
        alias,
    })
}

/// OpenTofu's `gcp_kms`: `kms_encryption_key` and `key_length` (1 to
/// 1024) required; `credentials` (a path or the JSON) and `access_token`
/// (else `GOOGLE_CREDENTIALS`, `GOOGLE_OAUTH_ACCESS_TOKEN`),
/// `additional_authenticated_data` (standard base64, at most 64 KiB).
fn gcp_kms(g: &Given<'_>, diags: &mut Diags) -> Option<Built> {
    const ARGS: [&str; 8] = [
        "kms_encryption_key",
        "key_length",
        "credentials",
        "access_token",
        "additional_authenticated_data",
        "impersonate_service_account",
        "impersonate_service_account_delegates",
        "encrypted_metadata_alias",
    ];
    let mut k = GcpKms::default();
    let (mut alias, mut length) = (None, None);
    for s in g.settings {
        match s.name.as_str() {
            "kms_encryption_key" => k.kms_encryption_key = text(s, diags)?,
            "key_length" => length = Some((count(s, diags)?, s.span)),
            "credentials" => k.credentials = Some(text(s, diags)?),
            "access_token" => k.access_token = Some(text(s, diags)?),
            "additional_authenticated_data" => {
                k.additional_authenticated_data = aad(g, s, diags)?;
            }
            "impersonate_service_account" | "impersonate_service_account_delegates" => {
                let problem = "strata does not impersonate service accounts yet: give the account's own credentials or an access token";
                diags.push(failed(g, problem, s.span));
                return None;
            }
            "encrypted_metadata_alias" => alias = Some(text(s, diags)?),
            _ => diags.push(unsupported_attr_named(
                &s.name,
                s.span,
                "key_provider \"gcp_kms\"",
                &ARGS,
            )),
        }
    }
    let Some((length, at)) = length else {
        diags.push(missing("key_length", g.span));
        return None;
    };
    let problem = match length {
        0 => Some("key_length must be at least 1"),
        n if n > 1024 => Some("key_length must be less than the GCP limit of 1024"),
        _ => None,
    };
    if let Some(problem) = problem {
        diags.push(failed(g, problem, at));
        return None;
    }
    k.key_length = length;
    if k.kms_encryption_key.is_empty() {
        diags.push(failed(g, "kms_key_name must be provided", g.span));
        return None;
    }
    Some(Built {
        kind: KeyKind::GcpKms(Box::new(k)),
        alias,
    })
}

/// `additional_authenticated_data`: standard base64 of at most 64 KiB.
fn aad(g: &Given<'_>, s: &Setting, diags: &mut Diags) -> Option<Vec<u8>> {
    use base64::Engine;
    let given = text(s, diags)?;
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(&given) else {
        diags.push(failed(
            g,
            "additional_authenticated_data must be valid standard base64",
            s.span,
        ));
        return None;
    };
    if bytes.len() > 64 * 1024 {
        let problem = "additional_authenticated_data must be less than the GCP limit of 64 KiB";
        diags.push(failed(g, problem, s.span));
        return None;
    }
    Some(bytes)
}

pub(super) fn missing(name: &str, span: Span) -> Diag {
    err(
        CODE,
        "Missing required argument",
        format!("The argument {name:?} is required, but no definition was found."),
        span,
    )
}

pub(super) fn text(s: &Setting, diags: &mut Diags) -> Option<String> {
    match s.value.as_str() {
        Some(t) => Some(t.to_string()),
        None => {
            diags.push(wrong_type(&s.name, s.span, "a string"));
            None
        }
    }
}

pub(super) fn count(s: &Setting, diags: &mut Diags) -> Option<usize> {
    let n = s
        .value
        .as_number()
        .and_then(|n| n.to_i64())
        .and_then(|n| usize::try_from(n).ok());
    if n.is_none() {
        diags.push(wrong_type(&s.name, s.span, "a whole number, zero or more"));
    }
    n
}

pub fn wrong_type(name: &str, span: Span, want: &str) -> Diag {
    err(
        CODE,
        "Incorrect attribute value type",
        format!("Inappropriate value for attribute {name:?}: {want} is required."),
        span,
    )
}

/// OpenTofu's `external`: `command`, the program and its arguments.
fn external(g: &Given<'_>, diags: &mut Diags) -> Option<Built> {
    let mut command = Vec::new();
    for s in g.settings {
        match s.name.as_str() {
            "command" => command = strings(s, diags)?,
            _ => diags.push(unsupported_attr_named(
                &s.name,
                s.span,
                "key_provider \"external\"",
                &["command"],
            )),
        }
    }
    if command.is_empty() {
        diags.push(failed(g, "the command option is required", g.span));
        return None;
    }
    Some(Built {
        kind: KeyKind::External(ExternalKeys { command }),
        alias: None,
    })
}

/// A list of strings (a command and its arguments).
pub(super) fn strings(s: &Setting, diags: &mut Diags) -> Option<Vec<String>> {
    let items = s.value.elements();
    let texts: Option<Vec<String>> = items
        .as_ref()
        .map(|items| {
            items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or(None);
    if texts.is_none() {
        diags.push(wrong_type(&s.name, s.span, "a list of strings"));
    }
    texts
}
