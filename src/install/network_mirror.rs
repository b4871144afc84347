//! Terraform's provider network mirror protocol: `GET
//! <base>HOST/NAMESPACE/TYPE/index.json` lists the versions a mirror has,
//! `GET <base>HOST/NAMESPACE/TYPE/VERSION.json` each platform's archive
//! (its URL relative to that document) and the checksums it must match
//! (`h1:` of its contents, `zh:` of the zip). Paths are resolved against
//! the configured URL as Terraform resolves them, so a base without a
//! trailing slash loses its last segment there too.

use super::http::{resolve, Http};
use crate::config::lockfile as lock;

/// One version's archive for this platform, downloaded.
pub struct Fetched {
    pub zip: Vec<u8>,
    /// The checksums the mirror gave; the package must match one.
    pub hashes: Vec<String>,
}

/// GET `url` as JSON; `None` for 404.
fn json(http: &Http<'_>, url: &str) -> Result<Option<serde_json::Value>, String> {
    let reply = http.get(url)?;
    match reply.status {
        200 => serde_json::from_slice(&reply.body)
            .map(Some)
            .map_err(|e| format!("invalid response content from mirror server: {e}")),
        404 => Ok(None),
        401 | 403 => Err(format!(
            "the mirror refused the request ({}); set a token for its host in the CLI configuration's credentials block or a TF_TOKEN_ variable",
            reply.status
        )),
        s => Err(format!("server returned unsuccessful status {s} for {url}")),
    }
}

/// The versions of `source` the mirror at `base` has; none when it does
/// not know the provider.
pub fn versions(http: &Http<'_>, base: &str, source: &str) -> Result<Vec<String>, String> {
    let url = resolve(base, &format!("{source}/index.json"))?;
    let Some(doc) = json(http, &url)? else {
        return Ok(Vec::new());
    };
    let listed = doc["versions"].as_object().ok_or_else(|| {
        format!("invalid response content from mirror server: {url} has no \"versions\" object")
    })?;
    Ok(listed.keys().cloned().collect())
}

/// `version` of `source` for `platform` from the mirror at `base`.
pub fn fetch(
    http: &Http<'_>,
    base: &str,
    source: &str,
    version: &str,
    platform: &str,
) -> Result<Fetched, String> {
    let index = resolve(base, &format!("{source}/{version}.json"))?;
    let doc = json(http, &index)?.ok_or_else(|| {
        format!("provider mirror does not have archive index for previously-reported {source} version {version}")
    })?;
    let archive = &doc["archives"][platform];
    let relative = archive["url"].as_str().ok_or_else(|| {
        format!("the provider mirror has no package of {source} v{version} for {platform}")
    })?;
    let hashes = archive["hashes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h.as_str().map(str::to_string))
        .collect();
    let url = resolve(&index, relative)?;
    let reply = http.get(&url)?;
    if reply.status != 200 {
        return Err(format!("{url} answered {}", reply.status));
    }
    Ok(Fetched {
        zip: reply.body,
        hashes,
    })
}

/// The zip's `h1:` checksum (of the files it holds, as unpacked) and its
/// `zh:` checksum (of the zip itself).
pub fn checksums(zip: &[u8]) -> Result<(String, String), String> {
    let bad = |e: &dyn std::fmt::Display| format!("cannot read the provider's zip archive: {e}");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip)).map_err(|e| bad(&e))?;
    let mut files = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).map_err(|e| bad(&e))?;
        if file.is_dir() {
            continue;
        }
        let name = file.name().to_string();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| bad(&e))?;
        files.push((name, lock::sha256_hex(&bytes)));
    }
    Ok((lock::h1_of(files), format!("zh:{}", lock::sha256_hex(zip))))
}

/// Refuses `zip` unless it matches one of the checksums the mirror gave
/// (`wanted`; Terraform takes either kind); no checksums, no check.
/// Checksums of kinds neither tool knows are passed over.
pub fn check(zip: &[u8], wanted: &[String]) -> Result<(), String> {
    if wanted.is_empty() {
        return Ok(());
    }
    let (h1, zh) = checksums(zip)?;
    matches(wanted, &h1, &zh)
}

fn matches(wanted: &[String], h1: &str, zh: &str) -> Result<(), String> {
    let known: Vec<&String> = wanted
        .iter()
        .filter(|h| h.starts_with("h1:") || h.starts_with("zh:"))
        .collect();
    if known.is_empty() {
        return Err(
            "the mirror gives no checksum of a kind strata knows (h1: or zh:) for this provider"
                .into(),
        );
    }
    if known.iter().any(|h| *h == h1 || *h == zh) {
        return Ok(());
    }
    Err(match known.as_slice() {
        [one] => format!("provider package doesn't match the expected checksum {one:?}"),
        _ => "provider package doesn't match any of the expected checksums".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_must_match_one_of_the_mirrors_checksums() {
        let (h1, zh) = ("h1:abc=", "zh:0011");
        assert!(matches(&["h1:abc=".into()], h1, zh).is_ok());
        assert!(matches(&["h1:other=".into(), "zh:0011".into()], h1, zh).is_ok());
        let wrong = matches(&["h1:other=".into()], h1, zh).unwrap_err();
        assert!(wrong.contains("\"h1:other=\""), "{wrong}");
        assert!(matches(&["h1:x=".into(), "zh:y".into()], h1, zh).is_err());
        // Only checksums of unknown kinds: nothing to check against.
        assert!(matches(&["h9:abc".into()], h1, zh).is_err());
    }

    #[test]
    fn a_zips_checksums_are_of_its_files_and_of_itself() {
        use std::io::Write;
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default();
        zip.start_file("b", options).unwrap();
        zip.write_all(b"two").unwrap();
        zip.add_directory("sub/", options).unwrap();
        zip.start_file("sub/a", options).unwrap();
        zip.write_all(b"one").unwrap();
        let bytes = zip.finish().unwrap().into_inner();
        let dir = std::env::temp_dir().join(format!("strata-mirror-h1-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("b"), "two").unwrap();
        std::fs::write(dir.join("sub/a"), "one").unwrap();
        let (h1, zh) = checksums(&bytes).unwrap();
        assert_eq!(h1, lock::h1(&dir).unwrap());
        assert_eq!(zh, format!("zh:{}", lock::sha256_hex(&bytes)));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(check(&bytes, &[h1]).is_ok());
        assert!(check(&bytes, &[]).is_ok());
        assert!(check(&bytes, &["zh:00".into()]).is_err());
    }
}
