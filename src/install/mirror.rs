//! `providers mirror DIR`: the packages of the configuration's providers
//! for each platform asked, fetched from their registries (always: a
//! mirror is made from the origin, whatever the CLI configuration says)
//! and laid out as Terraform lays out a packed mirror — usable as a
//! filesystem mirror, and with its JSON indexes (`index.json`,
//! `VERSION.json`) as a network mirror once served.

use super::providers::{shown, Wanted};
use super::registry::Registry;
use super::{network_mirror, provider_registry};
use crate::config::cli_config::CliConfig;
use crate::config::{newest_release, VersionConstraint as Constraint};
use crate::diag::{Diag, Diags, Sources};
use serde_json::{json, Map, Value as Json};
use std::path::{Path, PathBuf};

/// What `providers mirror` was asked.
pub struct MirrorRequest<'a> {
    pub dir: &'a Path,
    /// Each provider, and the version the lock file selects when it is
    /// to be followed.
    pub wanted: Vec<(Wanted, Option<String>)>,
    pub platforms: Vec<String>,
}

fn error(summary: &str, detail: String) -> Diag {
    Diag::new("strata::providers::mirror", summary, detail)
}

/// Mirrors every provider asked, saying each step in `said`; the indexes
/// are written for everything the directory holds afterwards.
pub fn mirror(
    req: &MirrorRequest<'_>,
    sources: &mut Sources,
    said: &mut String,
) -> Result<(), Diags> {
    let cli = CliConfig::read(sources)?;
    let http = super::client(&cli)?;
    let mut registry = Registry::new(&http, &cli.hosts, "providers.v1");
    let mut diags = Diags::default();
    // A Ctrl-C stops between packages; the indexes are still written for
    // what the directory then holds, so the mirror stays whole.
    let _graceful = crate::interrupt::Graceful::new();
    'providers: for (w, locked) in &req.wanted {
        let shown = shown(&w.source);
        said.push_str(&format!("- Mirroring {shown}...\n"));
        let version = match select(&mut registry, &http, w, locked.as_deref(), said) {
            Ok(v) => v,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        for platform in &req.platforms {
            if crate::interrupt::requested() {
                diags.push(error(
                    "Mirroring interrupted",
                    format!("{}: the packages not yet downloaded were left out; the indexes list those in the directory.", crate::interrupt::HALTED),
                ));
                break 'providers;
            }
            said.push_str(&format!("  - Downloading package for {platform}...\n"));
            let fetched =
                provider_registry::fetch(&mut registry, &http, &w.source, &version, platform);
            let f = match fetched {
                Ok(f) => f,
                Err(why) => {
                    diags.push(error(
                        "Provider release not available",
                        format!(
                            "Failed to download {} v{version} for {platform}: {why}.",
                            w.source
                        ),
                    ));
                    continue;
                }
            };
            said.push_str("  - Package authenticated: self-signed\n");
            if let Err(why) = place(req.dir, &w.source, (&version, platform), &f.zip) {
                diags.push(error(
                    "Cannot download provider release",
                    format!(
                        "Failed to place {} package into mirror directory: {why}.",
                        w.source
                    ),
                ));
            }
        }
    }
    for source in req.wanted.iter().map(|(w, _)| &w.source) {
        if let Err(why) = index(req.dir, source) {
            diags.push(error(
                "Failed to update indexes",
                format!("Failed to write an updated JSON index for {source}: {why}."),
            ));
        }
    }
    diags.into_result(())
}

/// The version to mirror: the lock file's, else the newest the
/// constraints allow.
fn select(
    registry: &mut Registry<'_, '_>,
    http: &super::http::Http<'_>,
    w: &Wanted,
    locked: Option<&str>,
    said: &mut String,
) -> Result<String, Diag> {
    let unavailable = |why: String| {
        error(
            "Provider not available",
            format!(
                "Failed to download {} from its origin registry: {why}.",
                w.source
            ),
        )
    };
    let constraints = w.constraint_text();
    let all = provider_registry::versions(registry, http, &w.source, None).map_err(&unavailable)?;
    let versions = all.iter().map(|r| r.version.as_str());
    let newest = match &constraints {
        Some(c) => Constraint::parse(c).map_err(&unavailable)?.newest(versions),
        None => newest_release(versions),
    };
    let Some(newest) = newest.map(str::to_string) else {
        let c = constraints.unwrap_or_default();
        return Err(unavailable(format!(
            "no releases match the given constraints {c}"
        )));
    };
    Ok(match (locked, &constraints) {
        (Some(v), _) => {
            said.push_str(&format!(
                "  - Selected v{v} to match dependency lock file\n"
            ));
            v.to_string()
        }
        (None, Some(c)) => {
            said.push_str(&format!("  - Selected v{newest} to meet constraints {c}\n"));
            newest
        }
        (None, None) => {
            said.push_str(&format!("  - Selected v{newest} with no constraints\n"));
            newest
        }
    })
}

/// Where a provider's packages and indexes go: `DIR/HOST/NAMESPACE/TYPE`.
fn provider_dir(dir: &Path, source: &str) -> PathBuf {
    dir.join(source)
}

fn archive_name(source: &str, version: &str, platform: &str) -> String {
    let kind = source.rsplit('/').next().unwrap_or_default();
    format!("terraform-provider-{kind}_{version}_{platform}.zip")
}

/// Writes `zip` under a hidden name first, then renames it: a client of a
/// live mirror never sees half a package.
fn place(
    dir: &Path,
    source: &str,
    (version, platform): (&str, &str),
    zip: &[u8],
) -> std::io::Result<()> {
    let at = provider_dir(dir, source);
    std::fs::create_dir_all(&at)?;
    let name = archive_name(source, version, platform);
    let staging = at.join(format!(".{name}"));
    std::fs::write(&staging, zip)?;
    std::fs::rename(&staging, at.join(name))
}

/// `index.json` (every version the directory holds) and `VERSION.json`
/// (each platform's archive and its `h1:` checksum), from what is there.
fn index(dir: &Path, source: &str) -> Result<(), String> {
    let at = provider_dir(dir, source);
    let kind = source.rsplit('/').next().unwrap_or_default();
    let prefix = format!("terraform-provider-{kind}_");
    let mut versions: std::collections::BTreeMap<String, Map<String, Json>> = Default::default();
    let entries = std::fs::read_dir(&at).map_err(|e| format!("{}: {e}", at.display()))?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(".zip"))
        else {
            continue;
        };
        let Some((version, platform)) = rest.split_once('_') else {
            continue;
        };
        let zip = std::fs::read(e.path()).map_err(|e| e.to_string())?;
        let (h1, _) = network_mirror::checksums(&zip)?;
        versions
            .entry(version.to_string())
            .or_default()
            .insert(platform.to_string(), json!({"hashes": [h1], "url": name}));
    }
    let listed: Map<String, Json> = versions.keys().map(|v| (v.clone(), json!({}))).collect();
    write_json(&at.join("index.json"), &json!({ "versions": listed }))?;
    for (version, archives) in versions {
        write_json(
            &at.join(format!("{version}.json")),
            &json!({ "archives": archives }),
        )?;
    }
    Ok(())
}

/// Written beside and renamed over, as the packages are: a client reading
/// the index meanwhile, or a kill, never leaves half of one.
fn write_json(path: &Path, doc: &Json) -> Result<(), String> {
    let text = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let staging = path.with_file_name(format!(".{name}"));
    std::fs::write(&staging, text)
        .and_then(|()| std::fs::rename(&staging, path))
        .map_err(|e| format!("{}: {e}", path.display()))
}
