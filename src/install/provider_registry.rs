//! The provider registry protocol (`providers.v1`): the versions a
//! registry has of a provider, and one version's package for this
//! platform, accepted only when it checks out as Terraform checks it: the
//! zip's SHA-256 is the one the registry gave, `SHA256SUMS` lists it, and
//! that file carries a valid OpenPGP signature by one of the registry's
//! signing keys.

use super::http::{resolve, Http};
use super::registry::Registry;
use pgp::composed::{Deserializable, DetachedSignature, SignedPublicKey};
use pgp::types::KeyDetails;
use sha2::{Digest, Sha256};

/// A version the registry offers for this platform.
pub struct Release {
    pub version: String,
}

/// A package downloaded and checked.
pub struct Fetched {
    pub zip: Vec<u8>,
    /// `zh:` checksums: every package of the release `SHA256SUMS` lists.
    pub zh: Vec<String>,
    /// The signing key's id, as Terraform prints it.
    pub key_id: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// GET `url` as JSON from the registry of `host`.
fn json(http: &Http<'_>, url: &str, host: &str) -> Result<serde_json::Value, String> {
    let reply = http.get_for(url, host)?;
    match reply.status {
        200 => serde_json::from_slice(&reply.body).map_err(|e| format!("{url} did not answer JSON: {e}")),
        401 | 403 => Err(format!("the registry refused the request ({}); set a token for {host} in the CLI configuration's credentials block or a TF_TOKEN_ variable", reply.status)),
        404 => Err(format!("the registry has no such provider ({url} answered 404)")),
        s => Err(format!("{url} answered {s}")),
    }
}

fn bytes(http: &Http<'_>, url: &str, host: &str) -> Result<Vec<u8>, String> {
    let reply = http.get_for(url, host)?;
    match reply.status {
        200 => Ok(reply.body),
        s => Err(format!("{url} answered {s}")),
    }
}

/// `source` as host and `namespace/type`.
fn split(source: &str) -> Result<(&str, &str), String> {
    source
        .split_once('/')
        .ok_or_else(|| format!("{source:?} is not a provider address"))
}

/// The versions of `source` its registry lists that speak a protocol
/// strata does (5 or 6), those with a package for `platform` when one is
/// given.
pub fn versions(
    registry: &mut Registry<'_, '_>,
    http: &Http<'_>,
    source: &str,
    platform: Option<&str>,
) -> Result<Vec<Release>, String> {
    let (host, provider) = split(source)?;
    let base = registry.base(host).map_err(|r| r.detail)?;
    let doc = json(http, &format!("{base}{provider}/versions"), host)?;
    let spoken = |v: &serde_json::Value| {
        let listed = v["protocols"].as_array();
        // A registry that lists none is taken at its word that any works.
        listed.is_none_or(|ps| {
            ps.iter()
                .filter_map(|p| p.as_str())
                .any(|p| p.starts_with("5.") || p.starts_with("6.") || p == "5" || p == "6")
        })
    };
    let on_platform = |v: &serde_json::Value| {
        let Some(platform) = platform else {
            return true;
        };
        let (os, arch) = platform.split_once('_').unwrap_or((platform, ""));
        v["platforms"]
            .as_array()
            .is_some_and(|ps| ps.iter().any(|p| p["os"] == os && p["arch"] == arch))
    };
    Ok(doc["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| spoken(v) && on_platform(v))
        .filter_map(|v| v["version"].as_str())
        .map(|v| Release {
            version: v.to_string(),
        })
        .collect())
}

/// `version` of `source` for `platform`, downloaded and checked.
pub fn fetch(
    registry: &mut Registry<'_, '_>,
    http: &Http<'_>,
    source: &str,
    version: &str,
    platform: &str,
) -> Result<Fetched, String> {
    let (host, provider) = split(source)?;
    let base = registry.base(host).map_err(|r| r.detail)?;
    let (os, arch) = platform.split_once('_').unwrap_or((platform, ""));
    let meta_url = format!("{base}{provider}/{version}/download/{os}/{arch}");
    let meta = json(http, &meta_url, host)?;
    let field = |k: &str| {
        meta[k]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("the registry's download answer has no {k}"))
    };
    let url = |k: &str| field(k).and_then(|u| resolve(&meta_url, &u));
    let (filename, shasum) = (field("filename")?, field("shasum")?.to_ascii_lowercase());
    let zip = bytes(http, &url("download_url")?, host)?;
    let actual = hex(&Sha256::digest(&zip));
    if actual != shasum {
        return Err(format!(
            "the downloaded package's checksum is {actual}, where the registry said {shasum}"
        ));
    }
    let sums = bytes(http, &url("shasums_url")?, host)?;
    let sums_text = String::from_utf8_lossy(&sums).into_owned();
    let listed: Vec<(&str, &str)> = sums_text
        .lines()
        .filter_map(|l| l.split_once("  "))
        .collect();
    if !listed
        .iter()
        .any(|(h, f)| h.eq_ignore_ascii_case(&shasum) && *f == filename)
    {
        return Err(format!(
            "the release's SHA256SUMS does not list {filename} with checksum {shasum}"
        ));
    }
    let signature = bytes(http, &url("shasums_signature_url")?, host)?;
    let keys: Vec<String> = meta["signing_keys"]["gpg_public_keys"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| k["ascii_armor"].as_str().map(str::to_string))
        .collect();
    let key_id = signed_by(&sums, &signature, &keys)?;
    Ok(Fetched {
        zip,
        zh: listed
            .iter()
            .map(|(h, _)| format!("zh:{}", h.to_ascii_lowercase()))
            .collect(),
        key_id,
    })
}

/// The id of the key (of `keys`, ASCII-armored) whose signature over
/// `data` `signature` is; an error when none verifies.
fn signed_by(data: &[u8], signature: &[u8], keys: &[String]) -> Result<String, String> {
    let sig = DetachedSignature::from_bytes(signature)
        .or_else(|_| DetachedSignature::from_armor_single(signature).map(|(s, _)| s))
        .map_err(|e| format!("the checksums' signature cannot be read: {e}"))?;
    if keys.is_empty() {
        return Err("the registry gave no signing key for the package".into());
    }
    for armored in keys {
        let Ok((key, _)) = SignedPublicKey::from_string(armored) else {
            continue;
        };
        let by_primary = sig.verify(&key, data).is_ok();
        let by_subkey = key
            .public_subkeys
            .iter()
            .any(|s| sig.verify(&s.key, data).is_ok());
        if by_primary || by_subkey {
            let id = key.legacy_key_id();
            return Ok(id.as_ref().iter().map(|b| format!("{b:02X}")).collect());
        }
    }
    Err("the checksums are not signed by any of the registry's signing keys".into())
}

#[cfg(test)]
mod tests {
    use super::signed_by;
    use pgp::composed::{
        DetachedSignature, KeyType, SecretKeyParamsBuilder, SignedPublicKey, SignedSecretKey,
    };
    use pgp::types::Password;

    fn key(name: &str) -> (SignedSecretKey, String) {
        let mut params = SecretKeyParamsBuilder::default();
        params
            .key_type(KeyType::Ed25519Legacy)
            .can_certify(true)
            .can_sign(true)
            .primary_user_id(format!("{name} <{name}@strata.test>"));
        let secret = params
            .build()
            .unwrap()
            .generate(rand::thread_rng())
            .unwrap();
        let armored = SignedPublicKey::from(secret.clone())
            .to_armored_string(Default::default())
            .unwrap();
        (secret, armored)
    }

    fn sign(secret: &SignedSecretKey, data: &[u8]) -> Vec<u8> {
        let sig = DetachedSignature::sign_binary_data(
            rand::thread_rng(),
            &secret.primary_key,
            &Password::empty(),
            pgp::crypto::hash::HashAlgorithm::Sha256,
            data,
        )
        .unwrap();
        let mut out = Vec::new();
        pgp::ser::Serialize::to_writer(&sig, &mut out).unwrap();
        out
    }

    #[test]
    fn only_a_registry_key_signing_these_checksums_is_accepted() {
        let sums = b"abc  terraform-provider-x_1.0.0_linux_amd64.zip\n";
        let (signer, signer_public) = key("signer");
        let (_, stranger_public) = key("stranger");
        let sig = sign(&signer, sums);
        let id = signed_by(sums, &sig, std::slice::from_ref(&signer_public)).unwrap();
        assert_eq!(id.len(), 16, "{id}");
        // Among several keys, the one that signed is found.
        let both = [stranger_public.clone(), signer_public];
        assert_eq!(signed_by(sums, &sig, &both).unwrap(), id);
        // Another key's, changed checksums, no keys, and no signature fail.
        assert!(signed_by(sums, &sig, &[stranger_public]).is_err());
        assert!(signed_by(b"abd  other.zip\n", &sig, &both).is_err());
        assert!(signed_by(sums, &sig, &[]).is_err());
        assert!(signed_by(sums, b"not a signature", &both).is_err());
    }
}
