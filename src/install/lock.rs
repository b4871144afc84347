//! `providers lock`: the lock file's checksums for every platform asked
//! (`-platform`, this one by default), as Terraform's command makes them.
//! Each provider's package for each platform is fetched into a scratch
//! directory from one place — the provider's registry, or the mirror
//! `-fs-mirror`/`-net-mirror` names, never the CLI configuration's
//! installation methods — and its `h1:` checksum (and a registry's `zh:`
//! ones) added to the lock file; a version the lock file already selects
//! is kept while the constraints allow it.

use super::providers::{shown, Installer, Wanted};
use super::registry::Registry;
use crate::config::cli_config::{CliConfig, InstallMethod, MethodKind};
use crate::config::lockfile::{LockFile, Locked};
use crate::diag::{Diag, Diags, Sources};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the packages are fetched from.
#[derive(Debug, Clone)]
pub enum LockFrom {
    /// Each provider's registry.
    Registry,
    /// `-fs-mirror=DIR`.
    FsMirror(PathBuf),
    /// `-net-mirror=URL`.
    NetMirror(String),
}

/// What `providers lock` was asked.
pub struct LockRequest<'a> {
    pub root_dir: &'a Path,
    pub wanted: Vec<Wanted>,
    pub platforms: Vec<String>,
    pub from: LockFrom,
    /// `-enable-plugin-cache`: the CLI configuration's plugin cache first.
    pub plugin_cache: bool,
}

/// Whether the lock file was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locking {
    Updated,
    Unchanged,
}

/// One provider's package for one platform, fetched.
struct Fetched {
    platform: String,
    version: String,
    constraints: Option<String>,
    hashes: Vec<String>,
}

/// Locks `req.wanted` for `req.platforms`, saying each step in `said`.
pub fn lock(
    req: &LockRequest<'_>,
    sources: &mut Sources,
    said: &mut String,
) -> Result<Locking, Diags> {
    let cli = CliConfig::read(sources)?;
    let http = super::client(&cli)?;
    let old = LockFile::read(req.root_dir, sources)?;
    // A Ctrl-C stops between packages, so the scratch directory is removed
    // and the lock file left as it was.
    let _graceful = crate::interrupt::Graceful::new();
    let scratch = Scratch::new()?;
    let mut fetched: BTreeMap<String, Vec<Fetched>> = BTreeMap::new();
    for (i, platform) in req.platforms.iter().enumerate() {
        let mut run = Installer {
            store: scratch.0.join(i.to_string()),
            platform: platform.clone(),
            methods: vec![method(&req.from)],
            http: &http,
            registry: Registry::new(&http, &cli.hosts, "providers.v1"),
            upgrade: false,
            cache: cli.plugin_cache_dir.clone().filter(|_| req.plugin_cache),
            signed: false,
            // Packages fetched into a scratch directory: nothing to keep.
            digests: crate::config::digests::Digests::none(),
        };
        for w in &req.wanted {
            if crate::interrupt::requested() {
                return Err(halted());
            }
            let f = one(&mut run, w, &old, said).map_err(|d| could_not(platform, d))?;
            let earlier = fetched.get(&w.source).and_then(|all| all.first());
            if let Some(e) = earlier.filter(|e| e.version != f.version) {
                return Err(inconsistent(&w.source, &e.version, &f.version));
            }
            fetched.entry(w.source.clone()).or_default().push(f);
        }
    }
    let mut new = old.clone();
    for (source, all) in fetched {
        let before = old.providers.get(&source);
        let mut hashes = before.map(|l| l.hashes.clone()).unwrap_or_default();
        for f in &all {
            let fresh = f.hashes.iter().any(|h| !hashes.contains(h));
            let (shown, platform) = (shown(&source), &f.platform);
            said.push_str(&match (before, fresh) {
                (None, _) => format!("- Obtained {shown} checksums for {platform}; This was a new provider and the checksums for this platform are now tracked in the lock file\n"),
                (Some(_), true) => format!("- Obtained {shown} checksums for {platform}; Additional checksums for this platform are now tracked in the lock file\n"),
                (Some(_), false) => format!("- Obtained {shown} checksums for {platform}; All checksums for this platform were already tracked in the lock file\n"),
            });
            for h in &f.hashes {
                if !hashes.contains(h) {
                    hashes.push(h.clone());
                }
            }
        }
        hashes.sort();
        let last = all.last();
        let locked = Locked {
            version: last.map(|f| f.version.clone()).unwrap_or_default(),
            constraints: last.and_then(|f| f.constraints.clone()),
            hashes,
        };
        new.providers.insert(source, locked);
    }
    if new == old {
        return Ok(Locking::Unchanged);
    }
    new.write(req.root_dir)?;
    Ok(Locking::Updated)
}

/// `w`'s package for the installer's platform: fetched, its checksums.
fn one(
    run: &mut Installer<'_, '_>,
    w: &Wanted,
    old: &LockFile,
    said: &mut String,
) -> Result<Fetched, Diag> {
    let (shown, platform) = (shown(&w.source), run.platform.clone());
    // What choosing says is init's, not this command's.
    let choice = run.choose(w, old, &mut String::new())?;
    let version = &choice.version;
    said.push_str(&format!("- Fetching {shown} {version} for {platform}...\n"));
    let dest = run.dest(&w.source, version);
    let placed = run.fetch(w, &choice, &dest)?;
    let h1 = crate::config::lockfile::h1(&dest).map_err(|e| {
        Diag::new(
            "strata::providers::lock",
            "Failed to install provider",
            format!("Cannot read the package in {}: {e}", dest.display()),
        )
    })?;
    let installed = run.installed(placed, h1);
    said.push_str(&format!(
        "- Retrieved {shown} {version} for {platform} ({})\n",
        installed.how
    ));
    Ok(Fetched {
        platform,
        version: version.clone(),
        constraints: choice.constraints,
        hashes: installed.hashes,
    })
}

fn method(from: &LockFrom) -> InstallMethod {
    let kind = match from {
        LockFrom::Registry => MethodKind::Direct,
        LockFrom::FsMirror(dir) => MethodKind::FilesystemMirror(dir.clone()),
        LockFrom::NetMirror(url) => MethodKind::NetworkMirror(url.clone()),
    };
    InstallMethod {
        kind,
        include: Vec::new(),
        exclude: Vec::new(),
    }
}

fn could_not(platform: &str, d: Diag) -> Diags {
    Diags::from(Diag::new(
        "strata::providers::lock",
        "Could not retrieve providers for locking",
        format!(
            "strata failed to fetch the requested providers for {platform} in order to calculate their checksums: {}: {}.",
            d.summary, d.detail
        ),
    ))
}

fn halted() -> Diags {
    Diags::from(Diag::new(
        "strata::providers::lock",
        "Providers not locked",
        format!("{}: interrupted before every platform's packages were fetched; the lock file was left as it was.", crate::interrupt::HALTED),
    ))
}

fn inconsistent(source: &str, one: &str, other: &str) -> Diags {
    Diags::from(Diag::new(
        "strata::providers::lock",
        "Inconsistent provider versions",
        format!("The version constraint for {source} selected inconsistent versions for different platforms ({one} and {other}), which is unexpected.\n\nThe upstream registry may have changed its available versions during strata's work. If so, re-running this command may produce a successful result."),
    ))
}

/// A scratch directory for the packages, removed when done: they are
/// fetched only to be hashed, never run.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, Diags> {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let dir = std::env::temp_dir().join(format!(
            "strata-providers-lock-{}-{stamp}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| {
            Diags::from(Diag::new(
                "strata::providers::lock",
                "Could not create temporary directory",
                format!("Failed to create a temporary directory for staging the requested provider packages: {e}."),
            ))
        })?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether `text` names a platform as Go does (`linux_amd64`): an
/// operating system and an architecture, lower case, joined by `_`.
pub fn valid_platform(text: &str) -> bool {
    let mut parts = text.split('_');
    let (Some(os), Some(arch), None) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let word = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    word(os) && word(arch)
}
