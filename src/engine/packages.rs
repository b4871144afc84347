//! `strata providers lock` and `providers mirror`: the lock file's
//! checksums for the platforms a team runs on (see `install::lock`), and
//! a mirror of the providers' packages for them (`install::mirror`), with
//! Terraform's checks of what they are given and its words for what they
//! did.

use super::view::{Notice, View};
use crate::builtin::Drivers;
use crate::config;
use crate::config::lockfile::LockFile;
use crate::diag::{Diag, Diags, Sources};
use crate::install::lock::{LockFrom, LockRequest, Locking};
use crate::install::mirror::MirrorRequest;
use crate::install::providers::Wanted;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `providers lock` was given.
pub struct ProvidersLock {
    /// Providers to lock (all the configuration needs when empty).
    pub providers: Vec<String>,
    /// `-platform`, repeated (this machine's when none).
    pub platforms: Vec<String>,
    pub fs_mirror: Option<PathBuf>,
    pub net_mirror: Option<String>,
    pub plugin_cache: bool,
}

fn error(summary: &str, detail: String) -> Diag {
    Diag::new("strata::providers::lock", summary, detail)
}

/// Updates the lock file of the configuration in `path`; what it did, in
/// Terraform's words (said through `view` too when it then fails).
pub fn providers_lock(
    path: &Path,
    req: &ProvidersLock,
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<String, Diags> {
    let from = source(req)?;
    let platforms = platforms(&req.platforms)?;
    let wanted = chosen(needed(path, sources, drivers)?, &req.providers)?;
    let lock = LockRequest {
        root_dir: path,
        wanted,
        platforms,
        from,
        plugin_cache: req.plugin_cache,
    };
    let mut said = String::new();
    match crate::install::lock::lock(&lock, sources, &mut said) {
        Ok(Locking::Updated) => Ok(said + "\nSuccess! strata has updated the lock file.\n\nReview the changes in .terraform.lock.hcl and then commit to your\nversion control system to retain the new checksums.\n\n"),
        Ok(Locking::Unchanged) => Ok(said + "\nSuccess! strata has validated the lock file and found no need for changes.\n"),
        Err(d) => {
            view.notice(Notice::Steps(said));
            Err(d)
        }
    }
}

/// What `providers mirror` was given.
pub struct ProvidersMirror {
    pub dir: PathBuf,
    pub platforms: Vec<String>,
    /// `-lock-file` (true unless `=false`): the lock file's versions.
    pub lock_file: bool,
}

/// Mirrors the providers the configuration in `path` needs into
/// `req.dir`; what it did, in Terraform's words (said through `view` too
/// when it then fails).
pub fn providers_mirror(
    path: &Path,
    req: &ProvidersMirror,
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<String, Diags> {
    let platforms = platforms(&req.platforms)?;
    let needed = needed(path, sources, drivers)?;
    let lock = LockFile::read(path, sources)?;
    let follow = req.lock_file && !lock.providers.is_empty();
    if follow {
        consistent(&needed, &lock)?;
    }
    let wanted = needed
        .into_values()
        .map(|w| {
            let locked = lock.providers.get(&w.source).filter(|_| follow);
            let version = locked.map(|l| l.version.clone());
            (w, version)
        })
        .collect();
    let mirror = MirrorRequest {
        dir: &req.dir,
        wanted,
        platforms,
    };
    let mut said = String::new();
    match crate::install::mirror::mirror(&mirror, sources, &mut said) {
        Ok(()) => Ok(said),
        Err(d) => {
            view.notice(Notice::Steps(said));
            Err(d)
        }
    }
}

/// The providers the configuration needs that have packages (the
/// builtin `terraform` provider has none).
fn needed(
    path: &Path,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<BTreeMap<String, Wanted>, Diags> {
    let module = config::load(path, sources)?;
    let mut needed: BTreeMap<String, Wanted> = BTreeMap::new();
    super::init::needed(&module, drivers, &mut needed);
    needed.retain(|source, _| !source.starts_with("terraform.io/builtin/"));
    Ok(needed)
}

/// A lock file that selects a version of every provider needed, each
/// within the configuration's constraints (Terraform's check before it
/// mirrors what the lock file selects).
fn consistent(needed: &BTreeMap<String, Wanted>, lock: &LockFile) -> Result<(), Diags> {
    let mut wrong = Vec::new();
    for (source, w) in needed {
        let Some(locked) = lock.providers.get(source) else {
            wrong.push(format!(
                "provider {source}: required by this configuration but no version is selected"
            ));
            continue;
        };
        let Some(text) = w.constraint_text() else {
            continue;
        };
        let allowed =
            config::VersionConstraint::parse(&text).is_ok_and(|c| c.allows(&locked.version));
        if !allowed {
            wrong.push(format!("provider {source}: locked version selection {} doesn't match the updated version constraints \"{text}\"", locked.version));
        }
    }
    match wrong.is_empty() {
        true => Ok(()),
        false => Err(error(
            "Inconsistent dependency lock file",
            format!("To update the locked dependency selections to match a changed configuration, run:\n  strata init -upgrade\n\n{}", wrong.join("\n")),
        )
        .into()),
    }
}

/// Where packages come from: a mirror named, else the registries.
fn source(req: &ProvidersLock) -> Result<LockFrom, Diags> {
    match (&req.fs_mirror, &req.net_mirror) {
        (Some(_), Some(_)) => Err(error(
            "Invalid installation method options",
            "The -fs-mirror and -net-mirror command line options are mutually-exclusive.".into(),
        )
        .into()),
        (Some(dir), None) => Ok(LockFrom::FsMirror(dir.clone())),
        (None, Some(url)) if url.starts_with("https://") => Ok(LockFrom::NetMirror(url.clone())),
        (None, Some(_)) => Err(error(
            "Invalid network mirror URL",
            "The -net-mirror option requires a valid https: URL as the mirror base URL.".into(),
        )
        .into()),
        (None, None) => Ok(LockFrom::Registry),
    }
}

fn platforms(given: &[String]) -> Result<Vec<String>, Diags> {
    if given.is_empty() {
        return Ok(vec![crate::install::providers::platform()]);
    }
    let mut diags = Diags::default();
    for p in given
        .iter()
        .filter(|p| !crate::install::lock::valid_platform(p))
    {
        diags.push(error(
            "Invalid target platform",
            format!("The string {p:?} given in the -platform option is not a valid target platform: must be two words separated by an underscore."),
        ));
    }
    diags.into_result(given.to_vec())
}

/// The providers named on the command line (each one the configuration
/// needs), or all it needs.
fn chosen(mut needed: BTreeMap<String, Wanted>, named: &[String]) -> Result<Vec<Wanted>, Diags> {
    if named.is_empty() {
        return Ok(needed.into_values().collect());
    }
    let mut diags = Diags::default();
    let mut out = Vec::new();
    for raw in named {
        // Terraform's reading: `aws` is `hashicorp/aws` on its registry.
        let source = match raw.contains('/') {
            true => strata_state::provider_source(raw),
            false => format!(
                "registry.terraform.io/hashicorp/{}",
                raw.to_ascii_lowercase()
            ),
        };
        match needed.remove(&source) {
            Some(w) => out.push(w),
            None => diags.push(error(
                "Invalid provider argument",
                format!("The provider {source} is not required by the current configuration."),
            )),
        }
    }
    diags.into_result(out)
}
