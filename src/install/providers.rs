//! Provider plugins installed as `terraform init` installs them: each
//! provider the configuration needs and strata does not serve itself is
//! found through the CLI configuration's installation methods (a
//! filesystem mirror, in either of Terraform's layouts; the provider's
//! registry, over the provider registry protocol; the plugin cache),
//! the newest version its constraints allow is placed under
//! `.terraform/providers/HOST/NAMESPACE/TYPE/VERSION/PLATFORM`, and the
//! choice and its checksum go to `.terraform.lock.hcl`, which later inits
//! and every run hold the package to.

use super::http::Http;
use super::registry::Registry;
use super::{network_mirror, provider_registry};
use crate::config::cli_config::{CliConfig, InstallMethod, MethodKind};
use crate::config::digests::{self, Digests};
use crate::config::installed::data_dir;
use crate::config::lockfile::{self as lock, LockFile, Locked};
use crate::config::{newest_release, VersionConstraint as Constraint};
use crate::diag::{Diag, Diags, Sources, Span};
use std::path::{Path, PathBuf};

/// A provider the configuration needs from a plugin.
#[derive(Debug, Clone)]
pub struct Wanted {
    /// `host/namespace/type`.
    pub source: String,
    /// Every version constraint written for it, in every module.
    pub constraints: Vec<String>,
    pub span: Option<Span>,
}

impl Wanted {
    /// Every constraint at once, in Terraform's normal form (which its
    /// lock file insists on) when they all read as constraints.
    pub fn constraint_text(&self) -> Option<String> {
        let mut all: Vec<&str> = Vec::new();
        for c in &self.constraints {
            if !all.contains(&c.as_str()) {
                all.push(c);
            }
        }
        if all.is_empty() {
            return None;
        }
        let joined = all.join(", ");
        Some(match Constraint::parse(&joined) {
            Ok(c) => c.normalized(),
            Err(_) => joined,
        })
    }
}

/// Go's name for this machine, as provider packages are named.
pub fn platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    format!("{}_{arch}", std::env::consts::OS)
}

/// A provider address as Terraform shows it: without the default
/// registry's host (`hashicorp/aws`).
pub fn shown(source: &str) -> &str {
    source
        .strip_prefix("registry.terraform.io/")
        .unwrap_or(source)
}

/// Where `source` at `version` is installed under the data directory.
pub fn package_dir(root_dir: &Path, source: &str, version: &str) -> PathBuf {
    data_dir(root_dir)
        .join("providers")
        .join(source)
        .join(version)
        .join(platform())
}

/// A package a method offers.
#[derive(Debug, Clone)]
enum Package {
    /// The unpacked layout: the package's directory.
    Dir(PathBuf),
    /// The packed layout: `terraform-provider-TYPE_VERSION_PLATFORM.zip`.
    Zip(PathBuf),
    /// The provider's registry has it (fetched when placed).
    Registry,
    /// The network mirror at this base URL has it (fetched when placed).
    NetworkMirror(String),
}

/// The versions of `source` for `platform` a mirror directory holds, in
/// both layouts.
fn in_mirror(root: &Path, source: &str, platform: &str) -> Vec<(String, Package)> {
    let dir = root.join(source);
    let kind = source.rsplit('/').next().unwrap_or_default();
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        if path.join(platform).is_dir() {
            out.push((name, Package::Dir(path.join(platform))));
        } else if let Some(version) = name
            .strip_prefix(&format!("terraform-provider-{kind}_"))
            .and_then(|rest| rest.strip_suffix(&format!("_{platform}.zip")))
        {
            out.push((version.to_string(), Package::Zip(path)));
        }
    }
    out
}

/// The installation methods in force: the CLI configuration's, or
/// Terraform's implied ones (the local plugin directories that exist, then
/// the registry).
fn methods(cli: &CliConfig, root_dir: &Path) -> Vec<InstallMethod> {
    if let Some(m) = &cli.provider_installation {
        return m.clone();
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".local/share")));
    let implied = [
        Some(root_dir.join("terraform.d/plugins")),
        home.map(|h| h.join(".terraform.d/plugins")),
        data_home.map(|d| d.join("terraform/plugins")),
        Some(PathBuf::from("/usr/local/share/terraform/plugins")),
        Some(PathBuf::from("/usr/share/terraform/plugins")),
    ];
    let every = |kind| InstallMethod {
        kind,
        include: Vec::new(),
        exclude: Vec::new(),
    };
    implied
        .into_iter()
        .flatten()
        .filter(|d| d.is_dir())
        .map(|d| every(MethodKind::FilesystemMirror(d)))
        .chain([every(MethodKind::Direct)])
        .collect()
}

fn failed(w: &Wanted, summary: &str, detail: String) -> Diag {
    let d = Diag::new("strata::init::provider", summary, detail);
    match w.span {
        Some(span) => d.at(span),
        None => d,
    }
}

/// Installs every provider in `wanted`, keeps the lock file, and says
/// what it did in Terraform's words, in `said` as it goes (so what was
/// done is there when something fails).
pub fn install(
    root_dir: &Path,
    wanted: &[Wanted],
    built_in: &[String],
    upgrade: bool,
    sources: &mut Sources,
    said: &mut String,
) -> Result<(), Diags> {
    let cli = CliConfig::read(sources)?;
    let http = super::client(&cli)?;
    let mut run = Installer {
        store: data_dir(root_dir).join("providers"),
        platform: platform(),
        methods: methods(&cli, root_dir),
        registry: Registry::new(&http, &cli.hosts, "providers.v1"),
        http: &http,
        upgrade,
        cache: cli.plugin_cache_dir.clone(),
        signed: false,
        digests: Digests::at(&digests::location(&data_dir(root_dir))),
    };
    let mut lock = LockFile::read(root_dir, sources)?;
    let before = lock.clone();
    let mut diags = Diags::default();
    for w in wanted {
        if let Err(d) = run.one(w, &mut lock, said) {
            diags.push(d);
        }
    }
    run.digests.keep();
    if !diags.is_empty() {
        return Err(diags);
    }
    if run.signed {
        said.push_str(SIGNED);
    }
    // As Terraform's init: a provider the configuration no longer needs
    // leaves the lock file. One strata serves itself is left as it is (a
    // lock file Terraform wrote keeps its entry for Terraform).
    lock.providers.retain(|source, _| {
        wanted.iter().any(|w| w.source == *source) || built_in.contains(source)
    });
    if lock != before {
        let created = before.providers.is_empty() && !lock::path(root_dir).exists();
        lock.write(root_dir)?;
        said.push_str(if created { CREATED } else { "" });
    }
    Ok(())
}

const CREATED: &str = "strata has created a lock file .terraform.lock.hcl to record the provider
selections it made above. Include this file in your version control repository
so that strata (and Terraform) can guarantee to make the same selections by
default when you run \"strata init\" in the future.
";

const SIGNED: &str = "
Partner and community providers are signed by their developers.
If you'd like to know more about provider signing, you can read about it here:
https://www.terraform.io/docs/cli/plugins/signing.html
";

/// One installation: where packages come from and go, for which
/// platform, and what is said.
pub(super) struct Installer<'a, 'h> {
    /// Where packages are placed, `SOURCE/VERSION/PLATFORM` under it.
    pub store: PathBuf,
    /// Go's name of the platform packages are for (`linux_amd64`).
    pub platform: String,
    pub methods: Vec<InstallMethod>,
    pub http: &'h Http<'a>,
    pub registry: Registry<'h, 'a>,
    pub upgrade: bool,
    /// The plugin cache, when one is used.
    pub cache: Option<PathBuf>,
    /// A package came signed from a registry (Terraform says so after).
    pub signed: bool,
    /// The packages' files' digests, kept by their identity (`digests.rs`).
    pub digests: Digests,
}

/// Which version of a provider to install, and why.
pub(super) struct Choice {
    pub version: String,
    /// The lock file's entry, when it decided.
    locked: Option<Locked>,
    /// What the methods offer, when they were asked.
    offered: Option<Vec<(String, Package)>>,
    /// The configuration's constraints, as the lock file records them.
    pub constraints: Option<String>,
}

/// A package installed: how it was authenticated, and its hashes.
pub(super) struct Installed {
    pub how: String,
    pub hashes: Vec<String>,
}

/// No version offered for `w` within its constraints, in Terraform's words.
fn none_offered(w: &Wanted, all: &[(String, Package)], constraints: Option<&str>) -> Diag {
    let have: Vec<&str> = all.iter().map(|(v, _)| v.as_str()).collect();
    let source = &w.source;
    let why = match have.is_empty() {
        true => format!("provider {source} was not found in any of the search locations"),
        false => format!(
            "no available releases match the given constraints {} (found {})",
            constraints.unwrap_or("(none)"),
            have.join(", ")
        ),
    };
    failed(
        w,
        "Failed to query available provider packages",
        format!(
            "Could not retrieve the list of available versions for provider {}: {why}",
            shown(source)
        ),
    )
}

/// What placing a package learnt: the `zh:` checksums a registry listed
/// and the key that signed them, or that it matched a checksum a network
/// mirror gave.
#[derive(Default)]
pub(super) struct Placed {
    zh: Vec<String>,
    key_id: Option<String>,
    verified: bool,
}

impl Installer<'_, '_> {
    fn one(&mut self, w: &Wanted, lock: &mut LockFile, said: &mut String) -> Result<(), Diag> {
        let (source, shown) = (&w.source, shown(&w.source));
        let choice = self.choose(w, lock, said)?;
        let version = &choice.version;
        let dest = self.dest(source, version);
        if choice.locked.is_some() && dest.is_dir() {
            check(w, &dest, choice.locked.as_ref(), &mut self.digests)?;
            said.push_str(&format!(
                "- Using previously-installed {shown} v{version}\n"
            ));
            return Ok(());
        }
        // A package the plugin cache holds and the lock file vouches for
        // is linked from there, nothing fetched, as Terraform links it.
        if let Some(cached) = self.vouched_in_cache(source, version, choice.locked.as_ref()) {
            self.place(&Package::Dir(cached), &dest, source, version)
                .map_err(|why| failed(w, "Failed to install provider", why))?;
            said.push_str(&format!(
                "- Using {shown} v{version} from the shared cache directory\n"
            ));
            return Ok(());
        }
        said.push_str(&format!("- Installing {shown} v{version}...\n"));
        let installed = self.install(w, &choice, &dest)?;
        said.push_str(&format!(
            "- Installed {shown} v{version} ({})\n",
            installed.how
        ));
        let mut hashes = choice.locked.map(|l| l.hashes).unwrap_or_default();
        for h in installed.hashes {
            if !hashes.contains(&h) {
                hashes.push(h);
            }
        }
        hashes.sort();
        let locked = Locked {
            version: choice.version,
            constraints: choice.constraints,
            hashes,
        };
        lock.providers.insert(source.clone(), locked);
        Ok(())
    }

    /// Where `version` of `source` is placed.
    pub(super) fn dest(&self, source: &str, version: &str) -> PathBuf {
        self.store.join(source).join(version).join(&self.platform)
    }

    /// The version of `w` to install: the lock file's while it still
    /// meets the constraints (and no upgrade is asked), else the newest
    /// the methods offer within them.
    pub(super) fn choose(
        &mut self,
        w: &Wanted,
        lock: &LockFile,
        said: &mut String,
    ) -> Result<Choice, Diag> {
        let shown = shown(&w.source);
        let constraints = w.constraint_text();
        let allowed = match &constraints {
            Some(text) => Some(
                Constraint::parse(text)
                    .map_err(|why| failed(w, "Invalid provider version constraint", why))?,
            ),
            None => None,
        };
        let upgrade = self.upgrade;
        let locked = lock
            .providers
            .get(&w.source)
            .cloned()
            .filter(|l| !upgrade && allowed.as_ref().is_none_or(|c| c.allows(&l.version)));
        if let Some(l) = locked {
            said.push_str(&format!(
                "- Reusing previous version of {shown} from the dependency lock file\n"
            ));
            let version = l.version.clone();
            return Ok(Choice {
                version,
                locked: Some(l),
                offered: None,
                constraints,
            });
        }
        said.push_str(&match &constraints {
            Some(c) => format!("- Finding {shown} versions matching {c:?}...\n"),
            None => format!("- Finding latest version of {shown}...\n"),
        });
        let all = self.offered(w)?;
        let versions = all.iter().map(|(v, _)| v.as_str());
        let newest = match &allowed {
            Some(c) => c.newest(versions),
            None => newest_release(versions),
        };
        let Some(version) = newest.map(str::to_string) else {
            return Err(none_offered(w, &all, constraints.as_deref()));
        };
        Ok(Choice {
            version,
            locked: None,
            offered: Some(all),
            constraints,
        })
    }

    /// The chosen package fetched and placed at `dest`, checked against
    /// the lock file; how it was authenticated and its hashes.
    fn install(&mut self, w: &Wanted, choice: &Choice, dest: &Path) -> Result<Installed, Diag> {
        let placed = self.fetch(w, choice, dest)?;
        let hash = check(w, dest, choice.locked.as_ref(), &mut self.digests)?;
        Ok(self.installed(placed, hash))
    }

    /// How a placed package was authenticated, and its hashes: `h1` its
    /// own, the registry's `zh:` for every platform.
    pub(super) fn installed(&mut self, placed: Placed, h1: String) -> Installed {
        let how = match &placed.key_id {
            Some(key) => {
                self.signed = true;
                format!("self-signed, key ID {key}")
            }
            None if placed.verified => "verified checksum".to_string(),
            None => "unauthenticated".to_string(),
        };
        let hashes = std::iter::once(h1).chain(placed.zh).collect();
        Installed { how, hashes }
    }

    /// The chosen package fetched and placed at `dest`, unchecked.
    pub(super) fn fetch(
        &mut self,
        w: &Wanted,
        choice: &Choice,
        dest: &Path,
    ) -> Result<Placed, Diag> {
        let (source, shown, version) = (&w.source, shown(&w.source), &choice.version);
        let offered = match &choice.offered {
            Some(o) => o.clone(),
            None => self.offered(w)?,
        };
        let Some((_, package)) = offered.iter().find(|(v, _)| v == version) else {
            return Err(failed(w, "Failed to install provider", format!(
                "The dependency lock file selects {shown} v{version}, and no installation method offers that version. Run \"strata init -upgrade\" to choose another."
            )));
        };
        self.place(package, dest, source, version).map_err(|why| {
            let detail = format!("Error while installing {shown} v{version}: {why}");
            failed(w, "Failed to install provider", detail)
        })
    }

    /// Every version the methods (and the plugin cache) offer for `w`,
    /// the first method's package for each.
    fn offered(&mut self, w: &Wanted) -> Result<Vec<(String, Package)>, Diag> {
        let mut out: Vec<(String, Package)> = Vec::new();
        let methods: Vec<InstallMethod> = self
            .methods
            .iter()
            .filter(|m| m.serves(&w.source))
            .cloned()
            .collect();
        for m in methods {
            let found = match &m.kind {
                MethodKind::FilesystemMirror(root) => in_mirror(root, &w.source, &self.platform),
                MethodKind::Direct => {
                    let releases = provider_registry::versions(&mut self.registry, self.http, &w.source, Some(&self.platform))
                        .map_err(|why| failed(w, "Failed to query available provider packages", format!(
                            "Could not retrieve the list of available versions for provider {}: {why}",
                            w.source
                        )))?;
                    releases
                        .into_iter()
                        .map(|r| (r.version, Package::Registry))
                        .collect()
                }
                MethodKind::NetworkMirror(url) => {
                    let versions = network_mirror::versions(self.http, url, &w.source)
                        .map_err(|why| failed(w, "Failed to query available provider packages", format!(
                            "Could not retrieve the list of available versions for provider {} from the provider mirror at {url}: {why}",
                            w.source
                        )))?;
                    versions
                        .into_iter()
                        .map(|v| (v, Package::NetworkMirror(url.clone())))
                        .collect()
                }
            };
            for (v, p) in found {
                if !out.iter().any(|(have, _)| *have == v) {
                    out.push((v, p));
                }
            }
        }
        if out.is_empty() {
            if let Some(cache) = &self.cache {
                out = in_mirror(cache, &w.source, &self.platform);
            }
        }
        Ok(out)
    }

    /// Puts `package` at `dest`: an unpacked one linked to where it is (as
    /// Terraform links a mirror's), a zip unpacked (into the plugin cache
    /// first, when there is one, and linked from there); a registry's
    /// downloaded and checked first.
    fn place(
        &mut self,
        package: &Package,
        dest: &Path,
        source: &str,
        version: &str,
    ) -> Result<Placed, String> {
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let _ = std::fs::remove_file(dest);
        let _ = std::fs::remove_dir_all(dest);
        let (zip, placed) = match package {
            Package::Dir(dir) => return link(dir, dest).map(|()| Placed::default()),
            Package::Zip(zip) => (
                std::fs::read(zip).map_err(|e| format!("{}: {e}", zip.display()))?,
                Placed::default(),
            ),
            Package::Registry => {
                let f = provider_registry::fetch(
                    &mut self.registry,
                    self.http,
                    source,
                    version,
                    &self.platform,
                )?;
                (
                    f.zip,
                    Placed {
                        zh: f.zh,
                        key_id: Some(f.key_id),
                        verified: false,
                    },
                )
            }
            Package::NetworkMirror(base) => {
                let f = network_mirror::fetch(self.http, base, source, version, &self.platform)?;
                network_mirror::check(&f.zip, &f.hashes)?;
                let verified = !f.hashes.is_empty();
                (
                    f.zip,
                    Placed {
                        verified,
                        ..Placed::default()
                    },
                )
            }
        };
        self.unpack(&zip, dest, source, version)?;
        Ok(placed)
    }

    /// Where the plugin cache keeps `version` of `source`, unpacked.
    fn in_cache(&self, source: &str, version: &str) -> Option<PathBuf> {
        let cache = self.cache.as_ref()?;
        Some(cache.join(source).join(version).join(&self.platform))
    }

    /// The cache's package of `version`, when the lock file's `h1:`
    /// checksums include its own (Terraform's rule since 1.4).
    fn vouched_in_cache(
        &mut self,
        source: &str,
        version: &str,
        locked: Option<&Locked>,
    ) -> Option<PathBuf> {
        let cached = self.in_cache(source, version)?;
        let hash = lock::h1_with(&cached, &mut self.digests).ok()?;
        locked?.hashes.contains(&hash).then_some(cached)
    }

    /// Unpacks `zip` at `dest`: into the plugin cache first, when there is
    /// one, and linked from there.
    fn unpack(&self, zip: &[u8], dest: &Path, source: &str, version: &str) -> Result<(), String> {
        match self.in_cache(source, version) {
            Some(cached) => {
                if !cached.is_dir() {
                    super::fetch::unzip(zip, &cached, super::fetch::PROVIDER)?;
                }
                link(&cached, dest)
            }
            None => super::fetch::unzip(zip, dest, super::fetch::PROVIDER),
        }
    }
}

/// The package's `h1:` checksum, refused when the lock file records
/// others for this version.
fn check(
    w: &Wanted,
    dir: &Path,
    locked: Option<&Locked>,
    digests: &mut Digests,
) -> Result<String, Diag> {
    let hash = lock::h1_with(dir, digests).map_err(|e| {
        failed(
            w,
            "Failed to install provider",
            format!("Cannot read the package in {}: {e}", dir.display()),
        )
    })?;
    if let Some(l) = locked {
        let h1s: Vec<&String> = l.hashes.iter().filter(|h| h.starts_with("h1:")).collect();
        if !h1s.is_empty() && !h1s.contains(&&hash) {
            return Err(failed(w, "Failed to install provider", format!(
                "The local package for {} v{} doesn't match any of the checksums previously recorded in the dependency lock file (its checksum is {hash}). If the package was changed on purpose, run \"strata init -upgrade\"; otherwise someone may have tampered with it.",
                w.source, l.version
            )));
        }
    }
    Ok(hash)
}

fn link(target: &Path, dest: &Path) -> Result<(), String> {
    let target = std::fs::canonicalize(target).map_err(|e| format!("{}: {e}", target.display()))?;
    #[cfg(unix)]
    return std::os::unix::fs::symlink(&target, dest).map_err(|e| e.to_string());
    #[cfg(not(unix))]
    return super::fetch::copy_dir(&target, dest).map_err(|e| e.to_string());
}
