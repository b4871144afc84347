//! The provider plugins a command runs with: every provider the lock file
//! selects that strata does not serve itself, or serves only in part (see
//! `serving`), started from the package `init` installed (held to the
//! lock file's checksum first), its resource types served beside the
//! native drivers' or, where `serving` says, in their place.

use super::serving::Serving;
use crate::builtin::{Drivers, Route};
use crate::config::digests::Digests;
use crate::config::lockfile::{self as lock, LockFile};
use crate::diag::{Diag, Diags, Sources};
use crate::install::providers::package_dir;
use crate::plan::provider_schemas;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use strata_plugin::{Known, Launch, PluginDriver, SchemaCache};
use strata_provider::UsedSchemas;

fn refused(summary: &str, detail: String) -> Diags {
    Diags::from(Diag::new("strata::plugin::start", summary, detail))
}

/// What a command's plugins serve: a configuration, or a configuration
/// and the modules its test runs plan (`strata test`).
pub enum PluginsFor {
    Config(PathBuf),
    Tests {
        dir: PathBuf,
        test_directory: PathBuf,
    },
    /// A saved plan (`show FILE`, `apply FILE`), made in `dir`: the
    /// schemas it carries stand in for a package's kept ones.
    SavedPlan {
        dir: PathBuf,
        file: PathBuf,
    },
}

/// `drivers` and the plugins of the configuration `of` names.
pub fn with_plugins(
    of: &PluginsFor,
    drivers: &Drivers,
    sources: &mut Sources,
) -> Result<Drivers, Diags> {
    let dir = match of {
        PluginsFor::Config(dir)
        | PluginsFor::Tests { dir, .. }
        | PluginsFor::SavedPlan { dir, .. } => dir.as_path(),
    };
    let mut carried = Carried::new(of);
    let lock = LockFile::read(dir, sources)?;
    let is_native = |source: &str| {
        drivers
            .all()
            .any(|d| d.provider_address() == format!("provider[\"{source}\"]"))
    };
    // Which types plugins serve over native drivers, decided only when
    // the lock file selects a plugin for a provider strata has (loading
    // the configuration twice costs a large one's parse); one that does
    // not load is the command's to report, and leaves the natives.
    let serving = match lock.providers.keys().any(|s| is_native(s)) {
        true => decide(of, dir, drivers),
        false => Serving::default(),
    };
    let mut out = drivers.clone();
    let data = crate::config::installed::data_dir(dir);
    let mut digests = Digests::at(&crate::config::digests::location(&data));
    for (source, locked) in &lock.providers {
        let native = is_native(source);
        if native && !serving.needs(source) {
            continue;
        }
        let package = package_dir(dir, source, &locked.version);
        let program = executable(&package, source).ok_or_else(|| {
            refused("Required plugins are not installed", format!(
                "The installed provider plugins are not consistent with the packages selected in the dependency lock file:\n  - {source}: there is no package for {source} {} cached in .terraform/providers\n\nTo install the plugins this configuration needs, run:\n  strata init",
                locked.version
            ))
        })?;
        let hash = lock::h1_with(&package, &mut digests).map_err(|e| {
            refused(
                "Cannot read an installed provider",
                format!("{}: {e}", package.display()),
            )
        })?;
        crate::timings::stage("plugin hashed");
        let h1s: Vec<&String> = locked
            .hashes
            .iter()
            .filter(|h| h.starts_with("h1:"))
            .collect();
        if !h1s.is_empty() && !h1s.contains(&&hash) {
            return Err(refused("Required plugins are not installed", format!(
                "The installed provider plugins are not consistent with the packages selected in the dependency lock file:\n  - {source}: the cached package for {source} {} (in .terraform/providers) does not match any of the checksums recorded in the dependency lock file\n\nTo install the plugins this configuration needs, run:\n  strata init",
                locked.version
            )));
        }
        let name = source.rsplit('/').next().unwrap_or(source);
        // Its schemas kept by the package's checksum: a later run starts
        // the process only when a call needs it.
        let cache = SchemaCache::at(&data.join("strata-schemas"), &hash);
        let known = Known {
            saved: match cache.exists() {
                true => None,
                false => carried.schemas(source, &hash, sources),
            },
            cache: Some(&cache),
        };
        let driver =
            PluginDriver::start(name, source, Launch::provider(&program), known).map_err(|e| {
                refused(
                    "Failed to load plugin schemas",
                    format!("Could not load the schema for provider {source}: {e}."),
                )
            })?;
        crate::timings::stage("plugin schemas");
        let driver: Arc<dyn strata_provider::Driver> = Arc::new(driver);
        out = match (native, serving.types_of(source)) {
            (false, _) => out.with(driver),
            (true, None) => out.with_plugin(driver, Route::Whole),
            (true, Some(types)) => {
                out.with_plugin(driver, Route::Types(types.into_iter().collect()))
            }
        };
    }
    digests.keep();
    Ok(out)
}

/// The schemas a saved plan carries, read from its file when a package
/// has none kept (a plan made in one checkout, shown or applied in a new
/// one): read once, and never when every package's are kept.
enum Carried<'f> {
    None,
    Unread(&'f Path),
    Read(BTreeMap<String, UsedSchemas>),
}

impl<'f> Carried<'f> {
    fn new(of: &'f PluginsFor) -> Carried<'f> {
        match of {
            PluginsFor::SavedPlan { file, .. } => Carried::Unread(file),
            _ => Carried::None,
        }
    }

    /// The packed schemas the plan carries of `source`'s package `hash`.
    fn schemas(&mut self, source: &str, hash: &str, sources: &mut Sources) -> Option<Vec<u8>> {
        if let Carried::Unread(file) = self {
            let text = std::fs::read_to_string(*file).ok();
            // A sealed plan that does not open here is the command's to
            // report; its provider is asked meanwhile.
            let text = text.and_then(|t| super::sealing::open_plan(t, sources).ok());
            *self = Carried::Read(text.map(|t| provider_schemas(&t)).unwrap_or_default());
        }
        match self {
            Carried::Read(all) => all
                .get(source)
                .filter(|u| u.package == hash)
                .map(|u| u.packed.clone()),
            _ => None,
        }
    }
}

/// Which types plugins serve for the configuration in `dir` and, for a
/// test, every run's module (a run planning a module whose blocks set what
/// a native schema lacks needs the plugin as much as the configuration).
fn decide(of: &PluginsFor, dir: &Path, drivers: &Drivers) -> Serving {
    let mut quiet = Sources::default();
    let Ok(root) = crate::config::load(dir, &mut quiet) else {
        return Serving::default();
    };
    let runs = match of {
        PluginsFor::Config(_) | PluginsFor::SavedPlan { .. } => Vec::new(),
        PluginsFor::Tests { test_directory, .. } => {
            super::test::run_module_configs(dir, test_directory, &mut quiet)
        }
    };
    let roots: Vec<&crate::config::Module> = std::iter::once(&root).chain(&runs).collect();
    Serving::decide(&roots, drivers)
}

/// The provider's program in its package: `terraform-provider-TYPE…`.
fn executable(package: &Path, source: &str) -> Option<PathBuf> {
    let kind = source.rsplit('/').next()?;
    let prefix = format!("terraform-provider-{kind}");
    std::fs::read_dir(package)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.is_file()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
}
